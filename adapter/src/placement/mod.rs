//! Placement across management clusters (docs/placement.md): the `ManagementCluster` entity and its
//! health ([`entity`]), where the entities come from ([`inventory`]), the pure selection with the
//! reasons candidates are passed over ([`select`]), and the report rows' texts (here).
//!
//! Modes (exactly one): `--consumer` (static, today's behaviour), `--management-clusters-file`,
//! `--management-clusters-from-api`. The placement resource id is
//! [`placement_resource_id`](crate::work::maestro::placement_resource_id).

pub mod entity;
pub mod inventory;
pub mod lease;
pub mod select;

use crate::message::{Conditions, cond};
use job_report::ConditionStatus;

/// `data` key: the Maestro consumer the work lives on (every mode).
pub const DATA_MANAGEMENT_CLUSTER: &str = "management_cluster";

/// How messages name the management cluster while the cluster's work has not been found yet
/// (the search failed); never a `data.management_cluster` value.
pub const NOT_LOCATED: &str = "(not located yet: the search for the cluster's work failed)";

/// No candidate can take a new control plane.
pub const NO_MANAGEMENT_CLUSTER_AVAILABLE: &str = "NoManagementClusterAvailable";
/// The inventory could not be read.
pub const INVENTORY_UNAVAILABLE: &str = "InventoryUnavailable";
/// The placement lease (a Kubernetes Lease) cannot be used: nothing is placed.
pub const PLACEMENT_LOCK_UNAVAILABLE: &str = "PlacementLockUnavailable";
/// A work whose agent never reported was withdrawn from an unavailable management cluster and
/// placed again.
pub const FAILED_OVER_BEFORE_APPLY: &str = "FailedOverBeforeApply";
/// The management cluster of an applied control plane is unavailable.
pub const MANAGEMENT_CLUSTER_UNAVAILABLE: &str = "ManagementClusterUnavailable";
/// More than one of the cluster's control-plane works was applied.
pub const DOUBLE_PLACEMENT: &str = "DoublePlacement";

/// Applied False, Available False, Health False `NoManagementClusterAvailable`.
pub fn no_management_cluster_conditions(applied: String) -> Conditions {
    crate::message::refusal_conditions(
        NO_MANAGEMENT_CLUSTER_AVAILABLE,
        applied,
        "Not placed: no management cluster can take this control plane (see Applied)".to_owned(),
    )
}

/// Applied False, Available Unknown, Health False `InventoryUnavailable` (shaped like
/// `MaestroUnavailable`: the adapter could not observe).
pub fn inventory_unavailable_conditions(detail: &str) -> Conditions {
    let applied = format!(
        "Cannot read the management cluster inventory to place this control plane: {}. Nothing was sent. The next pulse retries; check MANAGEMENT_CLUSTERS_FILE, or the HyperFleet API URL and token",
        crate::message::redact(detail)
    );
    crate::message::error_conditions(
        INVENTORY_UNAVAILABLE,
        applied,
        "Not checked: the management cluster inventory could not be read (see Applied)".to_owned(),
    )
}

/// Applied False, Available Unknown, Health False `PlacementLockUnavailable` (shaped like
/// `InventoryUnavailable`): the placement lease could not be used, so nothing was placed (placing
/// without it could overshoot a management cluster's capacity).
pub fn placement_lock_unavailable_conditions(detail: &str) -> Conditions {
    let applied = format!(
        "Cannot use the placement lease (a coordination.k8s.io Lease in the Job's namespace) to place this control plane: {}. Nothing was sent. The next pulse retries; check that the Job's ServiceAccount may get, create and update leases in its namespace (manifests/rbac.yaml) and that JOB_NAMESPACE names that namespace",
        crate::message::redact(detail)
    );
    crate::message::error_conditions(
        PLACEMENT_LOCK_UNAVAILABLE,
        applied,
        "Not checked: the placement lease could not be used (see Applied)".to_owned(),
    )
}

/// The Health condition of an applied control plane whose management cluster is unavailable.
pub fn management_cluster_unavailable(
    name: &str,
    consumer: &str,
    detail: &str,
) -> job_report::Condition {
    cond(
        "Health",
        ConditionStatus::False,
        MANAGEMENT_CLUSTER_UNAVAILABLE,
        format!(
            "Management cluster {name} (consumer {consumer}) is unavailable: {detail}. The hosted control plane stays there (HyperShift cannot move it): restore the management cluster or its work agent; the report recovers by itself; moving this cluster means deleting and recreating it"
        ),
    )
}

/// Health False `DoublePlacement`: more than one work of the cluster was applied; nothing deleted.
pub fn double_placement(works: &[(String, String)]) -> job_report::Condition {
    let list: Vec<String> = works
        .iter()
        .map(|(id, consumer)| format!("bundle {id} on management cluster {consumer}"))
        .collect();
    cond(
        "Health",
        ConditionStatus::False,
        DOUBLE_PLACEMENT,
        format!(
            "The cluster's control plane was applied on more than one management cluster: {}. Nothing was deleted: two HostedClusters on the same infrastructure is a split brain; an operator must decide which one to keep and delete the other's work",
            list.join(", ")
        ),
    )
}

/// Sets `data.management_cluster` to `consumer` (nothing when it is unknown, `""`).
pub fn set_management_cluster(report: &mut job_report::Report, consumer: &str) {
    if consumer.is_empty() || consumer == NOT_LOCATED {
        return;
    }
    report
        .data
        .get_or_insert_with(serde_json::Map::new)
        .insert(DATA_MANAGEMENT_CLUSTER.to_owned(), consumer.into());
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::hyperfleet::{ADAPTER_LABEL, CLUSTER_ID_LABEL, CONTROLPLANE_ADAPTER};
    use crate::work::WorkClient;
    use crate::work::maestro::MaestroWorkClient;
    use crate::work::maestro::fake::FakeMaestro;
    use crate::work::maestro::rest::label_search;

    const SOURCE: &str = "hyperfleet-hypershift-adapter";
    const CLUSTER: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";

    #[test]
    fn the_searches_are_the_recorded_label_fragment_shape() {
        assert_eq!(
            label_search(
                SOURCE,
                None,
                &[
                    (ADAPTER_LABEL, CONTROLPLANE_ADAPTER),
                    (CLUSTER_ID_LABEL, CLUSTER)
                ]
            )
            .unwrap(),
            format!(
                r#"source='{SOURCE}' and payload->'metadata'->'labels'@>'{{"hyperfleet.io/adapter":"controlplane","hyperfleet.io/cluster-id":"{CLUSTER}"}}'"#
            )
        );
        assert_eq!(
            label_search(
                SOURCE,
                Some("mgmt-use1-a"),
                &[(ADAPTER_LABEL, CONTROLPLANE_ADAPTER)]
            )
            .unwrap(),
            format!(
                r#"source='{SOURCE}' and consumer_name='mgmt-use1-a' and payload->'metadata'->'labels'@>'{{"hyperfleet.io/adapter":"controlplane"}}'"#
            )
        );
        assert!(label_search(SOURCE, None, &[(CLUSTER_ID_LABEL, "x'y")]).is_err());
    }

    #[tokio::test]
    async fn a_load_is_one_count_request_and_counts_only_that_consumer() {
        let maestro = FakeMaestro::with_consumers(&["mgmt-use1-a", "mgmt-use1-b"]);
        maestro.insert(
            "0d0c8c5e-2f7e-5b9a-9c1d-1f2e3d4c5b6a",
            "mgmt-use1-a",
            CLUSTER,
            None,
        );
        maestro.insert(
            "0d0c8c5e-2f7e-5b9a-9c1d-1f2e3d4c5b6b",
            "mgmt-use1-a",
            "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6c",
            None,
        );
        maestro.insert(
            "0d0c8c5e-2f7e-5b9a-9c1d-1f2e3d4c5b6c",
            "mgmt-use1-b",
            "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6d",
            None,
        );
        let client = MaestroWorkClient::over(&maestro, SOURCE, "");
        let labels = [(ADAPTER_LABEL, CONTROLPLANE_ADAPTER)];
        assert_eq!(client.count("mgmt-use1-a", &labels).await.unwrap(), 2);
        assert_eq!(client.count("mgmt-use1-b", &labels).await.unwrap(), 1);
        assert_eq!(maestro.requests().len(), 2);
    }
}
