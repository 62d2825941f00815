//! The work agent of a management cluster registered with an OCM hub (`WORK_BACKEND=hub`),
//! simulated by the fake Maestro's agent, so both backends see the same agent: it applies what the
//! hub's ManifestWork carries (with the fake's knobs: namespaces that exist, apply failures, a
//! HostedCluster deleted behind it, feedback), and its report is written into the hub
//! ManifestWork's `status` as the agent writes it there: the same work `conditions`, and the
//! per-manifest entries under `resourceStatus.manifests` (Maestro's bundle status has them as a
//! list `resourceStatus`).

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
        })
    }

    /// Gives the agent the hub's ManifestWork `name` as it is now (once; later changes on the hub
    /// are not seen) and lets it apply it. Fails if the hub has no such work.
    pub async fn receive(&self, server: &ApiServer, name: &str) -> anyhow::Result<()> {
        if self.maestro.resource(name).is_some() {
            return Ok(());
        }
        let mut work = server
            .object(WORKS, "manifestworks", Some(&self.consumer), name)
            .ok_or_else(|| anyhow::anyhow!("no ManifestWork {name} on the hub"))?;
        if let Some(map) = work.as_object_mut() {
            map.remove("status");
        }
        let config = MaestroConfig::new(
            self.maestro.grpc_url(),
            self.maestro.rest_url(),
            hypershift_adapter::work::backend::DEFAULT_SOURCE_ID,
            self.consumer.clone(),
        );
        MaestroWorkClient::new(config)?.create(&work).await?;
        anyhow::ensure!(
            self.maestro.apply(name),
            "the agent did not take ManifestWork {name}"
        );
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
        work["status"] = hub_status(&status);
        server.put_object(WORKS, Some(&self.consumer), work);
        true
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
