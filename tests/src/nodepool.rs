//! A HyperFleet NodePool as the API serves it, and the `.status` its HyperShift NodePool feeds
//! back through the work agent, production-shaped, for the NodePool's end-to-end tests,
//! `local-pulse --scenario nodepool` and `bench-nodepool`.
//!
//! The object follows `fixtures/hyperfleet/example-nodepool.json` (`hyperfleet-framework.md`
//! §7.1: `id`, `name` 3–15, `generation`, `owner_references`, `deleted_time` once deleted). No
//! NodePool status of a real management cluster is recorded: [`NodePoolStatus`] is built from
//! the facts of `hypershift-api.md` §4 (fields §4.1, condition types and the reasons named there
//! §4.2, readiness per platform §4.3); reasons §4.2 does not name are plausible words only, which
//! the adapter quotes but never matches.

use serde_json::{Value, json};

/// `created_by` / `deleted_by` of the objects built here.
pub const USER: &str = "jdoe@example.com";

/// The release image of OpenShift `version` (x86_64), as HyperFleet specs and HyperShift name it.
pub fn release_image(version: &str) -> String {
    format!("quay.io/openshift-release-dev/ocp-release:{version}-x86_64")
}

/// The spec of a GCP NodePool in `europe-west2-a` (the fixture cluster's region) running
/// `version` with `replicas` machines, in HyperFleet's shape (its GCP API model's
/// `platform.gcp.{machineType, zones, diskSize}`, its e2e suite's `replicas`). No subnet: the
/// HostedCluster's Private Service Connect subnet is its default.
pub fn gcp_spec(replicas: i64, version: &str) -> Value {
    json!({
        "platform": {
            "type": "gcp",
            "gcp": {"machineType": "n2-standard-8", "zones": ["europe-west2-a"], "diskSize": 128},
        },
        "release": {"image": release_image(version)},
        "replicas": replicas,
    })
}

/// The spec of a `platform.type: none` NodePool (HyperShift only generates the ignition payload;
/// the VMs are created outside it).
pub fn none_spec(replicas: i64, version: &str) -> Value {
    json!({
        "platform": {"type": "none"},
        "release": {"image": release_image(version)},
        "replicas": replicas,
    })
}

/// A HyperFleet NodePool object `id` named `name` of cluster `cluster_id` at `generation`, as
/// `GET /api/hyperfleet/v1/clusters/{cluster_id}/nodepools/{id}` returns it (no `status`: the
/// adapter does not read it).
pub fn nodepool_object(
    id: &str,
    name: &str,
    cluster_id: &str,
    generation: i64,
    spec: Value,
) -> Value {
    json!({
        "id": id,
        "kind": "NodePool",
        "href": format!("/api/hyperfleet/v1/clusters/{cluster_id}/nodepools/{id}"),
        "name": name,
        "generation": generation,
        "labels": {"pooltype": "worker"},
        "owner_references": {
            "id": cluster_id,
            "kind": "Cluster",
            "href": format!("/api/hyperfleet/v1/clusters/{cluster_id}"),
        },
        "spec": spec,
        "created_by": USER,
        "created_time": "2026-11-26T09:31:47.906211Z",
        "updated_by": USER,
        "updated_time": "2026-11-26T09:31:47.906211Z",
        "tenancy": {},
    })
}

/// What the API does to a NodePool on its first DELETE (or its cluster's): `deleted_time`,
/// `deleted_by` and `generation` + 1 (`hyperfleet-framework.md` §7.1). A second call changes
/// nothing.
pub fn soft_delete(object: &mut Value, deleted_time: &str) {
    if object.get("deleted_time").is_some() {
        return;
    }
    object["deleted_time"] = deleted_time.into();
    object["deleted_by"] = USER.into();
    let generation = object["generation"].as_i64().unwrap_or_default();
    object["generation"] = (generation + 1).into();
}

/// One `NodePoolCondition`; `minutes` is how long ago it last changed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Condition {
    type_: &'static str,
    status: &'static str,
    reason: String,
    message: String,
    minutes: i64,
}

/// A HyperShift NodePool's `.status`: start from [`NodePoolStatus::gcp_ready`],
/// [`NodePoolStatus::gcp_provisioning`] or [`NodePoolStatus::none_payload`], change what the case
/// needs, then [`NodePoolStatus::to_json`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePoolStatus {
    replicas: i64,
    version: String,
    conditions: Vec<Condition>,
    /// `(ocpVersion, readyNodeCount, unreadyNodeCount)` per `nodesInfo.nodeVersions` entry.
    nodes: Vec<(String, i64, i64)>,
}

/// The kubelet of an OpenShift 4.y release (`status.nodesInfo.nodeVersions[].kubeletVersion`).
fn kubelet_of(ocp: &str) -> String {
    let minor = ocp
        .split('.')
        .nth(1)
        .and_then(|m| m.parse::<u32>().ok())
        .unwrap_or(17);
    // OpenShift 4.y ships Kubernetes 1.(y + 13).
    format!("v1.{}.5", minor + 13)
}

impl NodePoolStatus {
    /// The conditions every reconciled NodePool carries, all good: specs valid, payload
    /// generated, version skew supported, reconciling, nothing rolling out.
    fn reconciled(version: &str) -> Vec<Condition> {
        let ok = |type_: &'static str, reason: &str, message: &str| Condition {
            type_,
            status: "True",
            reason: reason.to_owned(),
            message: message.to_owned(),
            minutes: 30,
        };
        let off = |type_: &'static str| Condition {
            type_,
            status: "False",
            reason: "AsExpected".to_owned(),
            message: String::new(),
            minutes: 30,
        };
        vec![
            off("AutoscalingEnabled"),
            ok("UpdateManagementEnabled", "AsExpected", ""),
            ok(
                "ValidReleaseImage",
                "AsExpected",
                &format!("Using release image: {}", release_image(version)),
            ),
            ok("ValidArchPlatform", "AsExpected", ""),
            ok("ValidMachineConfig", "AsExpected", ""),
            ok("ValidTuningConfig", "AsExpected", ""),
            ok("ValidPlatformConfig", "AsExpected", "All is well"),
            ok(
                "ValidGeneratedPayload",
                "AsExpected",
                "Payload generated successfully",
            ),
            ok("IgnitionEndpointAvailable", "AsExpected", ""),
            ok(
                "SupportedVersionSkew",
                "AsExpected",
                "Release image version is valid",
            ),
            ok(
                "ReconciliationActive",
                "ReconciliationActive",
                "Reconciliation active on resource",
            ),
            off("UpdatingVersion"),
            off("UpdatingConfig"),
        ]
    }

    /// A GCP NodePool with `replicas` machines, all ready, at `version`.
    pub fn gcp_ready(replicas: i64, version: &str) -> NodePoolStatus {
        let mut conditions = Self::reconciled(version);
        conditions.extend([
            Condition {
                type_: "UpdatingPlatformMachineTemplate",
                status: "False",
                reason: "AsExpected".to_owned(),
                message: String::new(),
                minutes: 30,
            },
            Condition {
                type_: "ReachedIgnitionEndpoint",
                status: "True",
                reason: "AsExpected".to_owned(),
                message: String::new(),
                minutes: 25,
            },
            Condition {
                type_: "AllMachinesReady",
                status: "True",
                reason: "AsExpected".to_owned(),
                message: "All is well".to_owned(),
                minutes: 20,
            },
            Condition {
                type_: "AllNodesHealthy",
                status: "True",
                reason: "AsExpected".to_owned(),
                message: "All is well".to_owned(),
                minutes: 20,
            },
            Condition {
                type_: "Ready",
                status: "True",
                reason: "AsExpected".to_owned(),
                message: String::new(),
                minutes: 20,
            },
        ]);
        NodePoolStatus {
            replicas,
            version: version.to_owned(),
            conditions,
            nodes: vec![(version.to_owned(), replicas, 0)],
        }
        .with_available(replicas)
    }

    /// A GCP NodePool whose machines are being created: none available yet, `Ready`,
    /// `AllMachinesReady` and `AllNodesHealthy` False for a minute, no version yet.
    pub fn gcp_provisioning(version: &str) -> NodePoolStatus {
        let mut status = Self::gcp_ready(0, version)
            .set(
                "Ready",
                "False",
                "WaitingForAvailableMachines",
                "Minimum availability requires the desired replicas to be available",
            )
            .set(
                "AllMachinesReady",
                "False",
                "WaitingForInfrastructure",
                "Machines are being created",
            )
            .set(
                "AllNodesHealthy",
                "False",
                "WaitingForNodeRef",
                "Machines have no Node yet",
            )
            .set("ReachedIgnitionEndpoint", "False", "ignitionNotReached", "")
            .since("Ready", 1)
            .since("AllMachinesReady", 1)
            .since("AllNodesHealthy", 1);
        status.version = String::new();
        status.nodes.clear();
        status
    }

    /// A `platform.type: none` NodePool at `version`: the ignition payload generated, no machine
    /// has fetched it (`ReachedIgnitionEndpoint=False`). There are no machines: `replicas` 0,
    /// no `Ready`, `AllMachinesReady` and `AllNodesHealthy` say `NotFound` (§4.2).
    pub fn none_payload(version: &str) -> NodePoolStatus {
        let mut conditions = Self::reconciled(version);
        conditions.extend([
            Condition {
                type_: "ReachedIgnitionEndpoint",
                status: "False",
                reason: "ignitionNotReached".to_owned(),
                message: String::new(),
                minutes: 20,
            },
            Condition {
                type_: "AllMachinesReady",
                status: "False",
                reason: "NotFound".to_owned(),
                message: "No Machines are created".to_owned(),
                minutes: 30,
            },
            Condition {
                type_: "AllNodesHealthy",
                status: "False",
                reason: "NotFound".to_owned(),
                message: "No Machines are created".to_owned(),
                minutes: 30,
            },
        ]);
        NodePoolStatus {
            replicas: 0,
            version: version.to_owned(),
            conditions,
            nodes: Vec::new(),
        }
    }

    /// `status.replicas` (available machines) = `n`, the node counts following (all ready).
    pub fn with_available(mut self, n: i64) -> NodePoolStatus {
        self.replicas = n;
        if let Some(first) = self.nodes.first_mut() {
            first.1 = n;
        }
        self
    }

    /// `status.version`.
    pub fn with_version(mut self, version: &str) -> NodePoolStatus {
        self.version = version.to_owned();
        self
    }

    /// `nodesInfo.nodeVersions`: `(ocpVersion, ready, unready)` per version.
    pub fn with_nodes(mut self, nodes: &[(&str, i64, i64)]) -> NodePoolStatus {
        self.nodes = nodes
            .iter()
            .map(|(v, r, u)| ((*v).to_owned(), *r, *u))
            .collect();
        self
    }

    /// Condition `type_` becomes `status` `reason` `message` (added when missing), changed a
    /// minute ago unless its status stays the same.
    pub fn set(
        mut self,
        type_: &'static str,
        status: &'static str,
        reason: &str,
        message: &str,
    ) -> NodePoolStatus {
        match self.conditions.iter_mut().find(|c| c.type_ == type_) {
            Some(c) => {
                if c.status != status {
                    c.minutes = 1;
                }
                c.status = status;
                c.reason = reason.to_owned();
                c.message = message.to_owned();
            }
            None => self.conditions.push(Condition {
                type_,
                status,
                reason: reason.to_owned(),
                message: message.to_owned(),
                minutes: 1,
            }),
        }
        self
    }

    /// Condition `type_` last changed `minutes` ago.
    pub fn since(mut self, type_: &str, minutes: i64) -> NodePoolStatus {
        if let Some(c) = self.conditions.iter_mut().find(|c| c.type_ == type_) {
            c.minutes = minutes;
        }
        self
    }

    /// Drops condition `type_`.
    pub fn without(mut self, type_: &str) -> NodePoolStatus {
        self.conditions.retain(|c| c.type_ != type_);
        self
    }

    /// The `.status` JSON, `lastTransitionTime`s counted back from now; `severity` on False
    /// conditions that are not the normal `AsExpected`/`NotFound` ones (§4.1).
    pub fn to_json(&self) -> Value {
        let now = jiff::Timestamp::now();
        let conditions: Vec<Value> = self
            .conditions
            .iter()
            .map(|c| {
                let at = now - jiff::SignedDuration::from_mins(c.minutes);
                let mut v = json!({
                    "type": c.type_,
                    "status": c.status,
                    "reason": c.reason,
                    "message": c.message,
                    "lastTransitionTime": at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                    "observedGeneration": 1,
                });
                if c.status == "False"
                    && !matches!(c.reason.as_str(), "AsExpected" | "NotFound")
                    && !c.type_.starts_with("Updating")
                {
                    v["severity"] = "Error".into();
                }
                v
            })
            .collect();
        let mut status = json!({"replicas": self.replicas, "conditions": conditions});
        if !self.version.is_empty() {
            status["version"] = self.version.clone().into();
        }
        if !self.nodes.is_empty() {
            let versions: Vec<Value> = self
                .nodes
                .iter()
                .map(|(v, ready, unready)| {
                    json!({"ocpVersion": v, "kubeletVersion": kubelet_of(v),
                           "readyNodeCount": ready, "unreadyNodeCount": unready})
                })
                .collect();
            status["nodesInfo"] = json!({"nodeVersions": versions});
        }
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition<'a>(status: &'a Value, type_: &str) -> &'a Value {
        status["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
            .unwrap_or(&Value::Null)
    }

    #[test]
    fn a_ready_gcp_pool_counts_its_nodes() {
        let status = NodePoolStatus::gcp_ready(3, "4.17.0").to_json();
        assert_eq!(status["replicas"], 3);
        assert_eq!(status["version"], "4.17.0");
        assert_eq!(condition(&status, "Ready")["status"], "True");
        assert_eq!(
            status["nodesInfo"]["nodeVersions"],
            json!([{"ocpVersion": "4.17.0", "kubeletVersion": "v1.30.5", "readyNodeCount": 3, "unreadyNodeCount": 0}])
        );
    }

    #[test]
    fn a_provisioning_pool_has_no_machines_version_or_nodes() {
        let status = NodePoolStatus::gcp_provisioning("4.17.0").to_json();
        assert_eq!(status["replicas"], 0);
        assert!(status.get("version").is_none());
        assert!(status.get("nodesInfo").is_none());
        assert_eq!(condition(&status, "AllMachinesReady")["status"], "False");
        assert_eq!(condition(&status, "AllMachinesReady")["severity"], "Error");
    }

    #[test]
    fn set_moves_the_transition_time_only_on_a_change() {
        let base = NodePoolStatus::gcp_ready(3, "4.17.0");
        let same = base.clone().set("Ready", "True", "AsExpected", "");
        assert_eq!(base, same);
        let changed = base.set("Ready", "False", "X", "y").to_json();
        let at: jiff::Timestamp = condition(&changed, "Ready")["lastTransitionTime"]
            .as_str()
            .unwrap_or_default()
            .parse()
            .unwrap_or_default();
        assert!(jiff::Timestamp::now() - jiff::SignedDuration::from_mins(5) < at);
    }

    #[test]
    fn a_none_pool_has_no_machine_conditions_that_matter() {
        let status = NodePoolStatus::none_payload("4.17.0").to_json();
        assert!(condition(&status, "Ready").is_null());
        assert_eq!(
            condition(&status, "ValidGeneratedPayload")["status"],
            "True"
        );
        assert_eq!(
            condition(&status, "ReachedIgnitionEndpoint")["status"],
            "False"
        );
    }

    #[test]
    fn a_soft_delete_bumps_the_generation_once() {
        let mut np = nodepool_object("n", "workers", "c", 2, gcp_spec(3, "4.17.0"));
        soft_delete(&mut np, "2026-11-26T10:00:00Z");
        soft_delete(&mut np, "2026-11-26T11:00:00Z");
        assert_eq!(np["generation"], 3);
        assert_eq!(np["deleted_time"], "2026-11-26T10:00:00Z");
        assert_eq!(np["href"], "/api/hyperfleet/v1/clusters/c/nodepools/n");
    }
}
