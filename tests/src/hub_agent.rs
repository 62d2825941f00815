//! The work agent of a management cluster registered with an OCM hub (`WORK_BACKEND=hub`),
//! simulated by the fake Maestro's agent, so both backends see the same agent: it applies what the
//! hub's ManifestWork carries (with the fake's knobs: namespaces that exist, apply failures, a
//! HostedCluster deleted behind it, feedback), and its report is written into the hub
//! ManifestWork's `status` as the agent writes it there: the same work `conditions`, and the
//! per-manifest entries under `resourceStatus.manifests` (Maestro's bundle status has them as a
//! list `resourceStatus`).
//!
//! The feedback is the hub agent's own: the fake Maestro agent is handed the work with a
//! whole-`.status` rule and a `.metadata` rule (so its knobs find the object and its finalizers),
//! and [`HubAgent::report`] then evaluates the hub work's real feedback rules on the object that
//! gives ([`crate::ocm_feedback`], as a standard hub's agent does: scalars only), with the agent's
//! `StatusFeedbackSynced=False` when a rule fails.

use hypershift_adapter::work::WorkClient;
use hypershift_adapter::work::maestro::{MaestroConfig, MaestroWorkClient};
use serde_json::{Value, json};

use crate::kube_api::ApiServer;
use crate::maestro::{FakeMaestro, FakeOptions};

/// The hub API path of ManifestWorks.
pub const WORKS: &str = "/apis/work.open-cluster-management.io/v1";

/// The simulated agent of consumer (management cluster) `consumer`.
#[derive(Debug)]
pub struct HubAgent {
    /// The fake Maestro whose agent stands in; its knobs steer what the agent reports.
    pub maestro: FakeMaestro,
    consumer: String,
    /// The hub `metadata.generation` of each work the agent took last.
    taken: std::sync::Mutex<std::collections::HashMap<String, i64>>,
}

impl HubAgent {
    /// An agent that reports only when told (see [`FakeMaestro::apply`] and the knobs).
    pub async fn start(consumer: &str) -> anyhow::Result<HubAgent> {
        let maestro = FakeMaestro::start(FakeOptions {
            consumers: vec![consumer.to_owned()],
            ..FakeOptions::default()
        })
        .await?;
        maestro.set_agent_delay(None);
        Ok(HubAgent {
            maestro,
            consumer: consumer.to_owned(),
            taken: std::sync::Mutex::default(),
        })
    }

    /// Gives the agent the hub's ManifestWork `name` as it is now and lets it apply it: the first
    /// time, and again whenever the hub's work has a newer `metadata.generation` than the agent
    /// took last (an update). Fails if the hub has no such work.
    pub async fn receive(&self, server: &ApiServer, name: &str) -> anyhow::Result<()> {
        let mut work = server
            .object(WORKS, "manifestworks", Some(&self.consumer), name)
            .ok_or_else(|| anyhow::anyhow!("no ManifestWork {name} on the hub"))?;
        let generation = work["metadata"]["generation"].as_i64().unwrap_or(0);
        let taken = self
            .taken
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(name)
            .copied();
        if taken.is_some_and(|g| g >= generation) {
            return Ok(());
        }
        if let Some(map) = work.as_object_mut() {
            map.remove("status");
        }
        whole_object_rules(&mut work);
        let config = MaestroConfig::new(
            self.maestro.grpc_url(),
            self.maestro.rest_url(),
            hypershift_adapter::work::backend::DEFAULT_SOURCE_ID,
            self.consumer.clone(),
        );
        let client = MaestroWorkClient::new(config)?;
        match client.get(name).await? {
            Some(current) => client.update(&work, &current).await?,
            None => client.create(&work).await?,
        }
        anyhow::ensure!(
            self.maestro.apply(name),
            "the agent did not take ManifestWork {name}"
        );
        self.taken
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(name.to_owned(), generation);
        Ok(())
    }

    /// Writes the agent's last report on `name` into the hub ManifestWork's `status`. False when
    /// the agent has not reported on it or the hub has no such work.
    pub fn report(&self, server: &ApiServer, name: &str) -> bool {
        let Some(status) = self.maestro.resource(name).and_then(|r| r.status) else {
            return false;
        };
        let Some(mut work) = server.object(WORKS, "manifestworks", Some(&self.consumer), name)
        else {
            return false;
        };
        let mut status = hub_status(&status);
        agent_feedback(&work, &mut status);
        work["status"] = status;
        server.put_object(WORKS, Some(&self.consumer), work);
        true
    }
}

/// Name of the whole-object feedback rules the fake Maestro agent is handed.
const WHOLE_STATUS: &str = "status";
const WHOLE_METADATA: &str = "metadata";

/// Replaces every JSONPaths rule of `work` by the whole `.status` and `.metadata`, what the fake
/// Maestro agent needs to find the object and report it whole.
fn whole_object_rules(work: &mut Value) {
    for config in work
        .pointer_mut("/spec/manifestConfigs")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if config.get("feedbackRules").is_some() {
            config["feedbackRules"] = json!([{"type": "JSONPaths", "jsonPaths": [
                {"name": WHOLE_STATUS, "path": ".status"},
                {"name": WHOLE_METADATA, "path": ".metadata"},
            ]}]);
        }
    }
}

/// The hub agent's feedback in `status` (a hub ManifestWork status built from the fake's): each
/// manifest's values are those of `work`'s rules for it, evaluated on the object the fake reported
/// whole; a failing rule turns `StatusFeedbackSynced` False with the agent's message.
pub fn agent_feedback(work: &Value, status: &mut Value) {
    let configs = work["spec"]["manifestConfigs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let manifests = work["spec"]["workload"]["manifests"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for entry in status
        .pointer_mut("/resourceStatus/manifests")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let meta = entry["resourceMeta"].clone();
        let Some(rules) = configs
            .iter()
            .find(|c| {
                let id = &c["resourceIdentifier"];
                id["group"] == meta["group"]
                    && id["resource"] == meta["resource"]
                    && id["name"] == meta["name"]
                    && id.get("namespace").unwrap_or(&json!("")) == &meta["namespace"]
            })
            .and_then(|c| c.get("feedbackRules"))
        else {
            continue;
        };
        let whole = |name: &str| -> Option<Value> {
            entry["statusFeedback"]["values"]
                .as_array()?
                .iter()
                .find(|v| v["name"] == name)
                .and_then(|v| v["fieldValue"]["jsonRaw"].as_str())
                .and_then(|raw| serde_json::from_str(raw).ok())
        };
        let (object_status, metadata) = (whole(WHOLE_STATUS), whole(WHOLE_METADATA));
        if object_status.is_none() && metadata.is_none() {
            // Nothing reported (the apply failed, or not this manifest): nor does the hub agent.
            entry["statusFeedback"] = json!({});
            continue;
        }
        let mut object = manifests
            .iter()
            .find(|m| {
                m["kind"] == meta["kind"]
                    && m["metadata"]["name"] == meta["name"]
                    && m["metadata"].get("namespace").unwrap_or(&json!("")) == &meta["namespace"]
            })
            .cloned()
            .unwrap_or_else(|| json!({}));
        if let Some(metadata) = metadata {
            object["metadata"] = metadata;
        }
        if let Some(object_status) = object_status {
            object["status"] = object_status;
        }
        let (values, error) = crate::ocm_feedback::evaluate(rules, &object);
        entry["statusFeedback"] = if values.is_empty() {
            json!({})
        } else {
            json!({"values": values})
        };
        if let Some(message) = error
            && let Some(synced) = entry["conditions"].as_array_mut().and_then(|list| {
                list.iter_mut()
                    .find(|c| c["type"] == "StatusFeedbackSynced")
            })
        {
            synced["status"] = json!("False");
            synced["reason"] = json!("StatusFeedbackSyncFailed");
            synced["message"] = json!(message);
        }
    }
}

/// A ManifestWork `status` on a hub from a Maestro bundle `status`.
pub fn hub_status(bundle_status: &Value) -> Value {
    json!({
        "conditions": bundle_status["conditions"],
        "resourceStatus": {"manifests": bundle_status["resourceStatus"]},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent_status(rules: Value) -> (Value, Value) {
        let work = json!({"spec": {
            "workload": {"manifests": [{"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
                                        "metadata": {"name": "prod-eu-1", "namespace": "clusters"}}]},
            "manifestConfigs": [{"resourceIdentifier": {"group": "hypershift.openshift.io", "resource": "hostedclusters",
                                                        "namespace": "clusters", "name": "prod-eu-1"},
                                 "feedbackRules": rules}],
        }});
        let whole = json!({"conditions": [{"type": "Available", "status": "True"}]});
        let mut status = json!({"conditions": [], "resourceStatus": {"manifests": [{
            "resourceMeta": {"group": "hypershift.openshift.io", "kind": "HostedCluster", "resource": "hostedclusters",
                             "namespace": "clusters", "name": "prod-eu-1"},
            "statusFeedback": {"values": [
                {"name": WHOLE_STATUS, "fieldValue": {"type": "JsonRaw", "jsonRaw": whole.to_string()}},
                {"name": WHOLE_METADATA, "fieldValue": {"type": "JsonRaw",
                    "jsonRaw": r#"{"name":"prod-eu-1","finalizers":["hypershift.openshift.io/finalizer"]}"#}},
            ]},
            "conditions": [{"type": "StatusFeedbackSynced", "status": "True", "reason": "StatusFeedbackSynced", "message": ""}],
        }]}});
        agent_feedback(&work, &mut status);
        let entry = status["resourceStatus"]["manifests"][0].clone();
        (
            entry["statusFeedback"].clone(),
            entry["conditions"][0].clone(),
        )
    }

    #[test]
    fn the_hub_agent_feeds_back_by_the_works_own_rules() {
        let (feedback, synced) = agent_status(json!([{"type": "JSONPaths", "jsonPaths": [
            {"name": "status.conditions[type=Available].status", "path": ".status.conditions[?(@.type==\"Available\")].status"},
            {"name": "finalizers", "path": ".metadata.finalizers[*]"},
        ]}]));
        assert_eq!(
            feedback,
            json!({"values": [
                {"name": "status.conditions[type=Available].status", "fieldValue": {"type": "String", "string": "True"}},
                {"name": "finalizers", "fieldValue": {"type": "String", "string": "hypershift.openshift.io/finalizer"}},
            ]})
        );
        assert_eq!(synced["status"], "True");
    }

    #[test]
    fn a_whole_status_rule_fails_the_sync_on_the_hub() {
        let (feedback, synced) = agent_status(json!([{"type": "JSONPaths", "jsonPaths": [
            {"name": "status", "path": ".status"},
        ]}]));
        assert_eq!(feedback, json!({}));
        assert_eq!(synced["status"], "False");
        assert_eq!(synced["reason"], "StatusFeedbackSyncFailed");
        assert!(
            synced["message"]
                .as_str()
                .unwrap()
                .contains("the type map[string]interface {} of the value for status is not found"),
            "{synced}"
        );
    }

    #[test]
    fn the_manifest_entries_move_under_resource_status_manifests() {
        let entry = json!({"resourceMeta": {"kind": "HostedCluster"}, "statusFeedback": {}, "conditions": []});
        let applied = json!([{"type": "Applied", "status": "True"}]);
        let status = hub_status(&json!({
            "ObservedVersion": 1, "SequenceID": "7",
            "conditions": applied, "resourceStatus": [entry]
        }));
        assert_eq!(
            status,
            json!({"conditions": applied, "resourceStatus": {"manifests": [entry]}})
        );
    }
}
