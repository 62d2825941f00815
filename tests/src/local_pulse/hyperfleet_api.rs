//! A minimal HyperFleet API: `GET /api/hyperfleet/v1/clusters/{id}` answers the one simulated
//! cluster, `GET …/clusters/{id}/nodepools` its NodePools and `GET …/clusters/{id}/nodepools/{nid}`
//! one of them (bearer token required), so the adapter reads its input exactly as in the Job
//! (`HYPERFLEET_API_URL` + `HYPERFLEET_API_TOKEN_FILE`). Between pulses the runner changes what is
//! served as the real API would after a PATCH (spec changed: `generation` + 1) or a DELETE (soft
//! delete: `deleted_time` and `deleted_by` set, `generation` + 1; `hyperfleet-framework.md` §6 and
//! §7.1). A NodePool asked for under another cluster, or one that is not there, is the API's
//! problem+json 404 `HYPERFLEET-NTF-001` (§7.2: ownership is checked on nested routes; §7.4 rule 8
//! and the API spec's `NotFoundDetails` for the body).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// Who deletes the cluster (`deleted_by`).
pub const DELETED_BY: &str = "jdoe@example.com";

/// The running fake; the server task ends with the runtime.
#[derive(Debug)]
pub struct FakeHyperfleetApi {
    url: String,
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    served: Mutex<Served>,
    token: String,
}

#[derive(Debug)]
struct Served {
    cluster: Value,
    /// NodePool objects of the cluster, as `GET …/nodepools` lists them.
    nodepools: Vec<Value>,
}

impl Shared {
    fn served(&self) -> MutexGuard<'_, Served> {
        self.served.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl FakeHyperfleetApi {
    /// Serves `cluster` (a HyperFleet cluster object with `id`), without NodePools, to callers
    /// presenting `token`.
    pub async fn start(cluster: Value, token: &str) -> anyhow::Result<FakeHyperfleetApi> {
        let shared = Arc::new(Shared {
            served: Mutex::new(Served {
                cluster,
                nodepools: Vec::new(),
            }),
            token: token.to_owned(),
        });
        let app = axum::Router::new()
            .route("/api/hyperfleet/v1/clusters/{id}", get(cluster_by_id))
            .route("/api/hyperfleet/v1/clusters/{id}/nodepools", get(nodepools))
            .route(
                "/api/hyperfleet/v1/clusters/{id}/nodepools/{nodepool_id}",
                get(nodepool_by_id),
            )
            .with_state(Arc::clone(&shared));
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakeHyperfleetApi { url, shared })
    }

    /// The base URL (`HYPERFLEET_API_URL`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The cluster object as served now.
    pub fn cluster(&self) -> Value {
        self.shared.served().cluster.clone()
    }

    /// The served cluster's `generation` (0 when it has none).
    pub fn generation(&self) -> i64 {
        self.shared.served().cluster["generation"]
            .as_i64()
            .unwrap_or_default()
    }

    /// A PATCH of `spec.<key>`: a changed value bumps `generation`. Returns the generation.
    pub fn patch_spec(&self, key: &str, value: Value) -> i64 {
        let mut served = self.shared.served();
        if served.cluster["spec"][key] != value {
            served.cluster["spec"][key] = value;
            bump(&mut served.cluster);
        }
        served.cluster["generation"].as_i64().unwrap_or_default()
    }

    /// A DELETE at `deleted_time`: the first one sets `deleted_time`/`deleted_by` and bumps
    /// `generation`, on the cluster and on each of its NodePools (a cascaded soft delete); a
    /// repeated DELETE changes nothing. Returns the cluster's generation.
    pub fn delete_cluster(&self, deleted_time: &str) -> i64 {
        let mut served = self.shared.served();
        let Served { cluster, nodepools } = &mut *served;
        for object in std::iter::once(cluster).chain(nodepools.iter_mut()) {
            if object.get("deleted_time").is_none() {
                object["deleted_time"] = deleted_time.into();
                object["deleted_by"] = DELETED_BY.into();
                bump(object);
            }
        }
        served.cluster["generation"].as_i64().unwrap_or_default()
    }

    /// From now on `GET …/nodepools` lists these NodePool objects.
    pub fn set_nodepools(&self, nodepools: Vec<Value>) {
        self.shared.served().nodepools = nodepools;
    }

    /// The NodePools listed now.
    pub fn nodepools(&self) -> Vec<Value> {
        self.shared.served().nodepools.clone()
    }

    /// NodePool `id` as served now.
    pub fn nodepool(&self, id: &str) -> Option<Value> {
        self.shared
            .served()
            .nodepools
            .iter()
            .find(|n| n["id"] == id)
            .cloned()
    }

    /// A PATCH of NodePool `id`'s `spec` with `patch` (a JSON merge patch: objects merge, `null`
    /// removes): a change bumps its `generation`. Returns the generation, `None` when there is no
    /// such NodePool.
    pub fn patch_nodepool_spec(&self, id: &str, patch: &Value) -> Option<i64> {
        let mut served = self.shared.served();
        let nodepool = served.nodepools.iter_mut().find(|n| n["id"] == id)?;
        let before = nodepool["spec"].clone();
        merge_patch(&mut nodepool["spec"], patch);
        if nodepool["spec"] != before {
            bump(nodepool);
        }
        nodepool["generation"].as_i64()
    }

    /// A DELETE of NodePool `id` alone at `deleted_time`: the first sets `deleted_time` and
    /// `deleted_by` and bumps its `generation`. Returns the generation, `None` when there is no
    /// such NodePool.
    pub fn delete_nodepool(&self, id: &str, deleted_time: &str) -> Option<i64> {
        let mut served = self.shared.served();
        let nodepool = served.nodepools.iter_mut().find(|n| n["id"] == id)?;
        if nodepool.get("deleted_time").is_none() {
            nodepool["deleted_time"] = deleted_time.into();
            nodepool["deleted_by"] = DELETED_BY.into();
            bump(nodepool);
        }
        nodepool["generation"].as_i64()
    }

    /// The hard delete HyperFleet makes once a deleted NodePool's required adapters report
    /// `Finalized=True`: it is no longer served. False when it was not there.
    pub fn remove_nodepool(&self, id: &str) -> bool {
        let mut served = self.shared.served();
        let before = served.nodepools.len();
        served.nodepools.retain(|n| n["id"] != id);
        served.nodepools.len() != before
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

fn bump(object: &mut Value) {
    let generation = object["generation"].as_i64().unwrap_or_default();
    object["generation"] = (generation + 1).into();
}

fn authorized(shared: &Shared, headers: &HeaderMap) -> bool {
    let expected = format!("Bearer {}", shared.token);
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == expected)
}

async fn cluster_by_id(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if !authorized(&shared, &headers) {
        return error(StatusCode::UNAUTHORIZED, "missing or wrong bearer token");
    }
    let cluster = shared.served().cluster.clone();
    if cluster["id"] != id.as_str() {
        return error(StatusCode::NOT_FOUND, &format!("cluster {id} not found"));
    }
    Json(cluster).into_response()
}

/// A `NodePoolList` (`{items, page, size, total}`) of the cluster's NodePools, one page.
async fn nodepools(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if !authorized(&shared, &headers) {
        return error(StatusCode::UNAUTHORIZED, "missing or wrong bearer token");
    }
    let served = shared.served();
    if served.cluster["id"] != id.as_str() {
        return error(StatusCode::NOT_FOUND, &format!("cluster {id} not found"));
    }
    let items = served.nodepools.clone();
    let total = items.len();
    Json(json!({"items": items, "page": 1, "size": total, "total": total})).into_response()
}

/// One NodePool of the cluster: 404 `HYPERFLEET-NTF-001` for another cluster (the nested route
/// checks the parent first) or a NodePool that is not the cluster's.
async fn nodepool_by_id(
    State(shared): State<Arc<Shared>>,
    Path((id, nodepool_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if !authorized(&shared, &headers) {
        return error(StatusCode::UNAUTHORIZED, "missing or wrong bearer token");
    }
    let instance = format!("/api/hyperfleet/v1/clusters/{id}/nodepools/{nodepool_id}");
    let served = shared.served();
    if served.cluster["id"] != id.as_str() {
        return not_found(&format!("Cluster with id='{id}' not found"), &instance);
    }
    match served
        .nodepools
        .iter()
        .find(|n| n["id"] == nodepool_id.as_str() && n["owner_references"]["id"] == id.as_str())
    {
        Some(nodepool) => Json(nodepool.clone()).into_response(),
        None => not_found(
            &format!("NodePool with id='{nodepool_id}' not found"),
            &instance,
        ),
    }
}

/// The API's 404 (RFC 9457 problem+json, `NotFoundDetails` of the API spec).
fn not_found(detail: &str, instance: &str) -> Response {
    let body = json!({
        "type": "https://api.hyperfleet.io/errors/resource-not-found",
        "title": "Resource Not Found",
        "status": 404,
        "detail": detail,
        "instance": instance,
        "code": "HYPERFLEET-NTF-001",
        "timestamp": jiff::Timestamp::now().round(jiff::Unit::Second).unwrap_or_else(|_| jiff::Timestamp::now()).to_string(),
        "trace_id": format!("{:016x}", fastrand::u64(..)),
    });
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "application/problem+json")],
        body.to_string(),
    )
        .into_response()
}

fn error(status: StatusCode, reason: &str) -> Response {
    (
        status,
        Json(json!({"kind": "Error", "code": status.as_u16(), "reason": reason})),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

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
        json!({"id": "c1", "generation": 3, "spec": {"openshift_version": "4.17.0"}})
    }

    #[tokio::test]
    async fn a_patch_and_a_delete_bump_the_generation_once_each() {
        let api = FakeHyperfleetApi::start(cluster(), TOKEN).await.unwrap();
        assert_eq!(api.patch_spec("openshift_version", json!("4.17.0")), 3);
        assert_eq!(api.patch_spec("openshift_version", json!("4.17.1")), 4);
        api.set_nodepools(vec![
            json!({"id": "n1", "name": "workers-a", "generation": 1}),
        ]);
        assert_eq!(api.delete_cluster("2026-11-26T10:00:00Z"), 5);
        assert_eq!(api.delete_cluster("2026-11-26T11:00:00Z"), 5);
        let (status, served) = get(&api, "clusters/c1", TOKEN).await;
        assert_eq!(status, 200);
        assert_eq!(served["deleted_time"], "2026-11-26T10:00:00Z");
        assert_eq!(served["deleted_by"], DELETED_BY);
        assert_eq!(served["spec"]["openshift_version"], "4.17.1");
        let (status, list) = get(&api, "clusters/c1/nodepools", TOKEN).await;
        assert_eq!(status, 200);
        assert_eq!(list["total"], 1);
        assert_eq!(list["items"][0]["deleted_time"], "2026-11-26T10:00:00Z");
        assert_eq!(list["items"][0]["generation"], 2);
        api.set_nodepools(vec![]);
        let (_, list) = get(&api, "clusters/c1/nodepools", TOKEN).await;
        assert_eq!(list, json!({"items": [], "page": 1, "size": 0, "total": 0}));
    }

    #[tokio::test]
    async fn one_node_pool_is_served_under_its_cluster_only() {
        let api = FakeHyperfleetApi::start(cluster(), TOKEN).await.unwrap();
        let pool = json!({"id": "n1", "name": "workers-a", "generation": 1,
                          "owner_references": {"id": "c1", "kind": "Cluster"},
                          "spec": {"replicas": 3, "platform": {"type": "gcp", "gcp": {"zone": "z"}}}});
        api.set_nodepools(vec![pool.clone()]);
        let (status, served) = get(&api, "clusters/c1/nodepools/n1", TOKEN).await;
        assert_eq!((status, served), (200, pool));
        // Another parent, or no such NodePool: the API's problem+json 404.
        let (status, problem) = get(&api, "clusters/c2/nodepools/n1", TOKEN).await;
        assert_eq!(status, 404);
        assert_eq!(problem["code"], "HYPERFLEET-NTF-001");
        assert_eq!(problem["status"], 404);
        assert_eq!(problem["detail"], "Cluster with id='c2' not found");
        assert_eq!(
            problem["instance"],
            "/api/hyperfleet/v1/clusters/c2/nodepools/n1"
        );
        let (status, problem) = get(&api, "clusters/c1/nodepools/n2", TOKEN).await;
        assert_eq!(status, 404);
        assert_eq!(problem["detail"], "NodePool with id='n2' not found");
        assert_eq!(get(&api, "clusters/c1/nodepools/n1", "other").await.0, 401);

        // A PATCH that changes the spec bumps the generation once; a DELETE once; then gone.
        let patch = json!({"replicas": 5, "platform": {"gcp": {"zone": null}}});
        assert_eq!(api.patch_nodepool_spec("n1", &patch), Some(2));
        assert_eq!(api.patch_nodepool_spec("n1", &patch), Some(2));
        let (_, served) = get(&api, "clusters/c1/nodepools/n1", TOKEN).await;
        assert_eq!(
            served["spec"],
            json!({"replicas": 5, "platform": {"type": "gcp", "gcp": {}}})
        );
        assert_eq!(api.delete_nodepool("n1", "2026-11-26T10:00:00Z"), Some(3));
        assert_eq!(api.delete_nodepool("n1", "2026-11-26T11:00:00Z"), Some(3));
        assert_eq!(
            api.nodepool("n1").unwrap()["deleted_time"],
            "2026-11-26T10:00:00Z"
        );
        assert!(api.remove_nodepool("n1"));
        assert!(!api.remove_nodepool("n1"));
        assert_eq!(get(&api, "clusters/c1/nodepools/n1", TOKEN).await.0, 404);
        assert_eq!(api.patch_nodepool_spec("n1", &patch), None);
    }

    #[tokio::test]
    async fn other_clusters_and_wrong_tokens_are_refused() {
        let api = FakeHyperfleetApi::start(cluster(), TOKEN).await.unwrap();
        assert_eq!(get(&api, "clusters/c2/nodepools", TOKEN).await.0, 404);
        assert_eq!(get(&api, "clusters/c2", TOKEN).await.0, 404);
        assert_eq!(get(&api, "clusters/c1/nodepools", "other").await.0, 401);
        assert_eq!(get(&api, "clusters/c1", "other").await.0, 401);
    }
}
