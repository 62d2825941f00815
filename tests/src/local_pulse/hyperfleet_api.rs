//! The HyperFleet API of local-pulse and the e2e tests: the testbed's one fake
//! ([`crate::hyperfleet::fake_api`], held to the real API's recordings) serving the simulated
//! cluster and its NodePools to a bearer-token holder, so the adapter reads its input exactly as
//! in the Job (`HYPERFLEET_API_URL` + `HYPERFLEET_API_TOKEN_FILE`: `GET …/clusters/{id}`,
//! `GET …/clusters/{id}/nodepools`, `GET …/clusters/{id}/nodepools/{nid}`). Between pulses the
//! runner changes what is served through the API's own routes: a PATCH (a changed spec bumps
//! `generation`), a DELETE (soft delete: `deleted_time`, `deleted_by`, `generation` + 1, cascaded
//! to the NodePools; `hyperfleet-framework.md` §6 and §7.1). A NodePool asked for under a
//! cluster that is not there, or one that is not there, is the API's problem+json 404
//! `HYPERFLEET-NTF-001`.
//! Objects given here (the cluster, NodePools) are seeded with their ids and generations
//! ([`fake_api::FakeHyperfleetApi::seed`]); the API computes their conditions.

use serde_json::Value;

use crate::hyperfleet::fake_api::{self, Clock, Config, SYSTEM_USER};

/// Who deletes the cluster (`deleted_by`): the API's identity without auth.
pub const DELETED_BY: &str = SYSTEM_USER;

/// The running fake; the server task ends with the runtime.
#[derive(Debug, Clone)]
pub struct FakeHyperfleetApi {
    api: fake_api::FakeHyperfleetApi,
    cluster_path: String,
    cluster_id: String,
}

impl FakeHyperfleetApi {
    /// Serves `cluster` (a HyperFleet cluster object with `id`, `name`, `generation`, `spec`),
    /// without NodePools, to callers presenting `token`.
    pub async fn start(cluster: Value, token: &str) -> anyhow::Result<FakeHyperfleetApi> {
        Self::start_with(cluster, Config::recorded().with_token(token)).await
    }

    /// The same with the server's `config` (e.g. a token review besides the token).
    pub async fn start_with(cluster: Value, config: Config) -> anyhow::Result<FakeHyperfleetApi> {
        let api = fake_api::FakeHyperfleetApi::start(config, Clock::wall()).await?;
        let mut cluster = cluster;
        cluster["kind"] = "Cluster".into();
        let cluster_id = cluster["id"].as_str().unwrap_or_default().to_owned();
        let cluster_path = api.seed(&cluster);
        Ok(FakeHyperfleetApi {
            api,
            cluster_path,
            cluster_id,
        })
    }

    /// The base URL (`HYPERFLEET_API_URL`).
    pub fn url(&self) -> &str {
        self.api.url()
    }

    /// The fake itself (status PUTs, aggregated conditions, its clock).
    pub fn api(&self) -> &fake_api::FakeHyperfleetApi {
        &self.api
    }

    /// The cluster object as served now (`null` once it is gone).
    pub fn cluster(&self) -> Value {
        self.get(&self.cluster_path)
    }

    /// The served cluster's `generation` (0 when it is gone).
    pub fn generation(&self) -> i64 {
        self.cluster()["generation"].as_i64().unwrap_or_default()
    }

    fn get(&self, path: &str) -> Value {
        let reply = self.api.call("GET", path, None);
        if reply.status == 200 {
            reply.body
        } else {
            Value::Null
        }
    }

    fn nodepool_path(&self, id: &str) -> String {
        format!("{}/nodepools/{id}", self.cluster_path)
    }

    /// A PATCH of `spec.<key>`: a changed value bumps `generation`. Returns the generation.
    pub fn patch_spec(&self, key: &str, value: Value) -> i64 {
        let mut spec = self.cluster()["spec"].clone();
        spec[key] = value;
        let body = serde_json::json!({"spec": spec}).to_string();
        self.api.call("PATCH", &self.cluster_path, Some(&body));
        self.generation()
    }

    /// A DELETE of the cluster: the first one sets `deleted_time`/`deleted_by` and bumps
    /// `generation`, on the cluster and on each of its NodePools (a cascaded soft delete); a
    /// repeated DELETE changes nothing. Returns the cluster's generation.
    pub fn delete_cluster(&self) -> i64 {
        self.api.call("DELETE", &self.cluster_path, None);
        self.generation()
    }

    /// From now on `GET …/nodepools` lists these NodePool objects (seeded as given; the
    /// cluster's other NodePools are removed).
    pub fn set_nodepools(&self, nodepools: Vec<Value>) {
        for old in self.nodepools() {
            let id = old["id"].as_str().unwrap_or_default();
            if !nodepools.iter().any(|n| n["id"] == id) {
                self.api.remove(id);
            }
        }
        for mut nodepool in nodepools {
            nodepool["kind"] = "NodePool".into();
            nodepool["owner_references"]["id"] = self.cluster_id.clone().into();
            self.api.seed(&nodepool);
        }
    }

    /// The NodePools listed now.
    pub fn nodepools(&self) -> Vec<Value> {
        self.get(&format!("{}/nodepools", self.cluster_path))["items"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// NodePool `id` as served now.
    pub fn nodepool(&self, id: &str) -> Option<Value> {
        Some(self.get(&self.nodepool_path(id))).filter(|v| !v.is_null())
    }

    /// A PATCH of NodePool `id`'s `spec` with `patch` (a JSON merge patch: objects merge, `null`
    /// removes): a change bumps its `generation`. Returns the generation, `None` when there is no
    /// such NodePool.
    pub fn patch_nodepool_spec(&self, id: &str, patch: &Value) -> Option<i64> {
        let mut spec = self.nodepool(id)?["spec"].clone();
        merge_patch(&mut spec, patch);
        let body = serde_json::json!({"spec": spec}).to_string();
        self.api.call("PATCH", &self.nodepool_path(id), Some(&body));
        self.nodepool(id)?["generation"].as_i64()
    }

    /// A DELETE of NodePool `id` alone: the first sets `deleted_time` and `deleted_by` and bumps
    /// its `generation`. Returns the generation, `None` when there is no such NodePool.
    pub fn delete_nodepool(&self, id: &str) -> Option<i64> {
        self.api.call("DELETE", &self.nodepool_path(id), None);
        self.nodepool(id)?["generation"].as_i64()
    }

    /// The hard delete HyperFleet makes once a deleted NodePool's required adapters report
    /// `Finalized=True`: it is no longer served. False when it was not there.
    pub fn remove_nodepool(&self, id: &str) -> bool {
        self.nodepool(id).is_some() && self.api.remove(id)
    }
}

/// RFC 7386 merge patch of `target` with `patch`.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(map) = target {
        for (key, value) in patch {
            if value.is_null() {
                map.remove(key);
            } else {
                merge_patch(map.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::json;

    use super::*;
    use crate::ids::{CLUSTER_ID, LONGEST_CLUSTER_NAME, LONGEST_NODEPOOL_NAME, NODEPOOL_ID};

    const TOKEN: &str = "t";

    async fn get(api: &FakeHyperfleetApi, path: &str, token: &str) -> (u16, Value) {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let response = reqwest::Client::new()
            .get(format!("{}/api/hyperfleet/v1/{path}", api.url()))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (
            status,
            serde_json::from_str(&response.text().await.unwrap()).unwrap(),
        )
    }

    fn cluster() -> Value {
        json!({"id": CLUSTER_ID, "name": LONGEST_CLUSTER_NAME, "generation": 3,
               "spec": {"openshift_version": "4.17.0"}})
    }

    fn pool() -> Value {
        json!({"id": NODEPOOL_ID, "name": LONGEST_NODEPOOL_NAME, "generation": 1,
               "owner_references": {"id": CLUSTER_ID, "kind": "Cluster"},
               "spec": {"replicas": 3, "platform": {"type": "gcp", "gcp": {"zone": "z"}}}})
    }

    #[tokio::test]
    async fn a_patch_and_a_delete_bump_the_generation_once_each() {
        let api = FakeHyperfleetApi::start(cluster(), TOKEN).await.unwrap();
        assert_eq!(api.patch_spec("openshift_version", json!("4.17.0")), 3);
        assert_eq!(api.patch_spec("openshift_version", json!("4.17.1")), 4);
        api.set_nodepools(vec![pool()]);
        assert_eq!(api.delete_cluster(), 5);
        assert_eq!(api.delete_cluster(), 5);
        let (status, served) = get(&api, &format!("clusters/{CLUSTER_ID}"), TOKEN).await;
        assert_eq!(status, 200);
        assert!(served["deleted_time"].is_string());
        assert_eq!(served["deleted_by"], DELETED_BY);
        assert_eq!(served["spec"]["openshift_version"], "4.17.1");
        let (status, list) = get(&api, &format!("clusters/{CLUSTER_ID}/nodepools"), TOKEN).await;
        assert_eq!(status, 200);
        assert_eq!(list["total"], 1);
        assert_eq!(list["items"][0]["deleted_time"], served["deleted_time"]);
        assert_eq!(list["items"][0]["generation"], 2);
        api.set_nodepools(vec![]);
        let (_, list) = get(&api, &format!("clusters/{CLUSTER_ID}/nodepools"), TOKEN).await;
        assert_eq!(list, json!({"items": [], "page": 1, "size": 0, "total": 0}));
    }

    #[tokio::test]
    async fn one_node_pool_is_served_under_its_cluster_only() {
        let api = FakeHyperfleetApi::start(cluster(), TOKEN).await.unwrap();
        api.set_nodepools(vec![pool()]);
        let at = |cluster: &str, pool: &str| format!("clusters/{cluster}/nodepools/{pool}");
        let (status, served) = get(&api, &at(CLUSTER_ID, NODEPOOL_ID), TOKEN).await;
        assert_eq!(status, 200);
        assert_eq!(served["spec"], pool()["spec"]);
        assert_eq!(served["kind"], "NodePool");
        // A parent that does not exist, or no such NodePool: the API's problem+json 404, naming
        // the parent when it is the parent that is missing (as the real API does).
        let other = crate::ids::cluster_id(7);
        let (status, problem) = get(&api, &at(&other, NODEPOOL_ID), TOKEN).await;
        assert_eq!(status, 404);
        assert_eq!(problem["code"], "HYPERFLEET-NTF-001");
        assert_eq!(problem["status"], 404);
        assert_eq!(
            problem["detail"],
            format!("Cluster with id='{other}' not found")
        );
        assert_eq!(
            problem["instance"],
            format!("/api/hyperfleet/v1/{}", at(&other, NODEPOOL_ID))
        );
        let missing = crate::ids::cluster_id(8);
        let (status, problem) = get(&api, &at(CLUSTER_ID, &missing), TOKEN).await;
        assert_eq!(status, 404);
        assert_eq!(
            problem["detail"],
            format!("NodePool with id='{missing}' not found")
        );
        assert_eq!(
            get(&api, &at(CLUSTER_ID, NODEPOOL_ID), "other").await.0,
            401
        );

        // A PATCH that changes the spec bumps the generation once; a DELETE once; then gone.
        let patch = json!({"replicas": 5, "platform": {"gcp": {"zone": null}}});
        assert_eq!(api.patch_nodepool_spec(NODEPOOL_ID, &patch), Some(2));
        assert_eq!(api.patch_nodepool_spec(NODEPOOL_ID, &patch), Some(2));
        let (_, served) = get(&api, &at(CLUSTER_ID, NODEPOOL_ID), TOKEN).await;
        assert_eq!(
            served["spec"],
            json!({"replicas": 5, "platform": {"type": "gcp", "gcp": {}}})
        );
        assert_eq!(api.delete_nodepool(NODEPOOL_ID), Some(3));
        assert_eq!(api.delete_nodepool(NODEPOOL_ID), Some(3));
        assert!(api.nodepool(NODEPOOL_ID).unwrap()["deleted_time"].is_string());
        assert!(api.remove_nodepool(NODEPOOL_ID));
        assert!(!api.remove_nodepool(NODEPOOL_ID));
        assert_eq!(get(&api, &at(CLUSTER_ID, NODEPOOL_ID), TOKEN).await.0, 404);
        assert_eq!(api.patch_nodepool_spec(NODEPOOL_ID, &patch), None);
    }

    #[tokio::test]
    async fn other_clusters_and_wrong_tokens_are_refused() {
        let api = FakeHyperfleetApi::start(cluster(), TOKEN).await.unwrap();
        let other = crate::ids::cluster_id(7);
        assert_eq!(
            get(&api, &format!("clusters/{other}/nodepools"), TOKEN)
                .await
                .0,
            404
        );
        assert_eq!(get(&api, &format!("clusters/{other}"), TOKEN).await.0, 404);
        assert_eq!(
            get(&api, &format!("clusters/{CLUSTER_ID}/nodepools"), "other")
                .await
                .0,
            401
        );
        assert_eq!(
            get(&api, &format!("clusters/{CLUSTER_ID}"), "other")
                .await
                .0,
            401
        );
        assert_eq!(
            get(&api, &format!("clusters/{CLUSTER_ID}"), TOKEN).await.0,
            200
        );
    }
}
