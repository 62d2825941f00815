//! The ManifestWork (`work.open-cluster-management.io/v1`) that carries the HostedCluster to the
//! management cluster, and the check that an existing work is ours.

use serde_json::{Value, json};

use crate::hyperfleet::cluster::ClusterSpec;
use crate::hypershift::hostedcluster::{self, CLUSTER_ID_LABEL};

pub const API_VERSION: &str = "work.open-cluster-management.io/v1";
pub const KIND: &str = "ManifestWork";
/// Label naming the adapter that owns a work.
pub const ADAPTER_LABEL: &str = "hyperfleet.io/adapter";
/// This adapter's value of [`ADAPTER_LABEL`].
pub const ADAPTER_LABEL_VALUE: &str = "controlplane";
/// Annotation with the cluster generation the work was built from.
pub const GENERATION_ANNOTATION: &str = "hyperfleet.io/generation";
/// Name of the feedback value that carries the HostedCluster's `.status`.
pub const STATUS_FEEDBACK_NAME: &str = "status";
/// Names of the feedback values that carry the HostedCluster's `.metadata.finalizers` (an array,
/// raw JSON) and `.metadata.deletionTimestamp` (a string): what a deletion waits for. The agent
/// returns no value for a path that does not exist (no deletion yet).
pub use crate::pulse::controlplane::deletion::{
    DELETION_TIMESTAMP_FEEDBACK_NAME, FINALIZERS_FEEDBACK_NAME,
};

/// `hostedcluster-<clusterId>`.
pub fn work_name(cluster_id: &str) -> String {
    format!("hostedcluster-{cluster_id}")
}

/// The Namespace the HostedCluster lives in, created by the work when the management cluster
/// lacks it (`hypershift-api.md` §1.1: its Secrets must be in the same namespace).
pub fn hosted_cluster_namespace(namespace: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
}

/// The ManifestWork for `spec`, in the consumer's namespace, stamped with `generation` when known.
///
/// Manifests, in apply order: the HostedCluster's Namespace, then the HostedCluster. The
/// Namespace is shared by every HostedCluster on the management cluster (and holds their
/// Secrets, which the adapter never sends), so it is `CreateOnly` (created when missing, never
/// changed) and orphaned when the work is deleted.
pub fn manifest_work(spec: &ClusterSpec, consumer: &str, generation: Option<i64>) -> Value {
    let (hc_namespace, hc_name) = hostedcluster::hosted_cluster_ref(spec);
    let mut metadata = json!({
        "name": work_name(&spec.cluster_id),
        "namespace": consumer,
        "labels": {
            CLUSTER_ID_LABEL: spec.cluster_id,
            ADAPTER_LABEL: ADAPTER_LABEL_VALUE,
        },
    });
    if let (Some(generation), Some(object)) = (generation, metadata.as_object_mut()) {
        object.insert(
            "annotations".into(),
            json!({GENERATION_ANNOTATION: generation.to_string()}),
        );
    }
    let namespace_id = json!({"group": "", "resource": "namespaces", "name": hc_namespace});
    json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": metadata,
        "spec": {
            "workload": {"manifests": [
                hosted_cluster_namespace(hc_namespace),
                hostedcluster::hosted_cluster(spec),
            ]},
            "manifestConfigs": [
                {
                    "resourceIdentifier": namespace_id,
                    "updateStrategy": {"type": "CreateOnly"},
                },
                {
                    "resourceIdentifier": {
                        "group": hostedcluster::GROUP,
                        "resource": hostedcluster::RESOURCE,
                        "namespace": hc_namespace,
                        "name": hc_name,
                    },
                    "feedbackRules": [{
                        "type": "JSONPaths",
                        "jsonPaths": [
                            {"name": STATUS_FEEDBACK_NAME, "path": ".status"},
                            {"name": FINALIZERS_FEEDBACK_NAME, "path": ".metadata.finalizers"},
                            {"name": DELETION_TIMESTAMP_FEEDBACK_NAME, "path": ".metadata.deletionTimestamp"},
                        ],
                    }],
                    "updateStrategy": {"type": "ServerSideApply"},
                },
            ],
            "deleteOption": {
                "propagationPolicy": "SelectivelyOrphan",
                "selectivelyOrphans": {"orphaningRules": [namespace_id]},
            },
        },
    })
}

/// The generation a work was built from: its [`GENERATION_ANNOTATION`], when it is an integer
/// ≥ 1. Takes any annotation map.
pub fn work_generation<K, V>(annotations: impl IntoIterator<Item = (K, V)>) -> Option<i64>
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    annotations
        .into_iter()
        .find(|(k, _)| k.as_ref() == GENERATION_ANNOTATION)
        .and_then(|(_, v)| v.as_ref().parse::<i64>().ok())
        .filter(|g| *g >= 1)
}

/// Whether an existing work belongs to this adapter and cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ownership {
    Ours,
    /// Someone else's: what its labels say instead (`None` = label missing).
    NotOurs {
        cluster_id: Option<String>,
        adapter: Option<String>,
    },
}

/// Checks the labels of an existing work: ours when `hyperfleet.io/cluster-id` is `cluster_id`
/// and `hyperfleet.io/adapter` is `controlplane`. Takes any label map (`&BTreeMap`, `&HashMap`).
pub fn ownership<K, V>(labels: impl IntoIterator<Item = (K, V)>, cluster_id: &str) -> Ownership
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    let mut found_cluster = None;
    let mut found_adapter = None;
    for (key, value) in labels {
        match key.as_ref() {
            CLUSTER_ID_LABEL => found_cluster = Some(value.as_ref().to_owned()),
            ADAPTER_LABEL => found_adapter = Some(value.as_ref().to_owned()),
            _ => {}
        }
    }
    if found_cluster.as_deref() == Some(cluster_id)
        && found_adapter.as_deref() == Some(ADAPTER_LABEL_VALUE)
    {
        Ownership::Ours
    } else {
        Ownership::NotOurs {
            cluster_id: found_cluster,
            adapter: found_adapter,
        }
    }
}

/// Shorthand for `ownership(..) == Ownership::Ours`.
pub fn is_ours<K, V>(labels: impl IntoIterator<Item = (K, V)>, cluster_id: &str) -> bool
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    ownership(labels, cluster_id) == Ownership::Ours
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::collections::{BTreeMap, HashMap};

    use super::*;
    use crate::hyperfleet::cluster::fixture;

    #[test]
    fn manifest_work_for_the_fixture() {
        let work = manifest_work(&fixture::spec(), "us-east-mgmt-01", Some(3));
        insta::assert_json_snapshot!("manifest_work", work);
    }

    #[test]
    fn manifest_work_shape() {
        let spec = fixture::spec();
        let work = manifest_work(&spec, "mgmt-1", Some(7));
        assert_eq!(
            work["metadata"]["name"],
            "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"
        );
        assert_eq!(work["metadata"]["namespace"], "mgmt-1");
        assert_eq!(work["metadata"]["annotations"][GENERATION_ANNOTATION], "7");
        assert_eq!(work["metadata"]["labels"][ADAPTER_LABEL], "controlplane");
        assert_eq!(
            work["spec"]["workload"]["manifests"][0],
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "clusters"}})
        );
        assert_eq!(
            work["spec"]["workload"]["manifests"][1],
            hostedcluster::hosted_cluster(&spec)
        );
        let namespace = &work["spec"]["manifestConfigs"][0];
        assert_eq!(
            namespace["resourceIdentifier"],
            serde_json::json!({"group": "", "resource": "namespaces", "name": "clusters"})
        );
        assert_eq!(namespace["updateStrategy"]["type"], "CreateOnly");
        assert!(namespace.get("feedbackRules").is_none());
        let config = &work["spec"]["manifestConfigs"][1];
        assert_eq!(
            config["resourceIdentifier"],
            serde_json::json!({"group": "hypershift.openshift.io", "resource": "hostedclusters", "namespace": "clusters", "name": "prod-eu-1"})
        );
        assert_eq!(
            config["feedbackRules"][0]["jsonPaths"],
            serde_json::json!([
                {"name": "status", "path": ".status"},
                {"name": "finalizers", "path": ".metadata.finalizers"},
                {"name": "deletionTimestamp", "path": ".metadata.deletionTimestamp"},
            ])
        );
        assert_eq!(config["updateStrategy"]["type"], "ServerSideApply");
        // Deleting the work deletes the HostedCluster but never the shared namespace.
        assert_eq!(
            work["spec"]["deleteOption"],
            serde_json::json!({"propagationPolicy": "SelectivelyOrphan",
                               "selectivelyOrphans": {"orphaningRules": [{"group": "", "resource": "namespaces", "name": "clusters"}]}})
        );
    }

    #[test]
    fn without_a_generation_there_is_no_generation_annotation() {
        let work = manifest_work(&fixture::spec(), "mgmt-1", None);
        assert!(work["metadata"].get("annotations").is_none());
    }

    #[test]
    fn ownership_requires_both_labels_to_match() {
        let id = "abc";
        let ours = BTreeMap::from([
            (CLUSTER_ID_LABEL.to_owned(), id.to_owned()),
            (ADAPTER_LABEL.to_owned(), ADAPTER_LABEL_VALUE.to_owned()),
            ("other".to_owned(), "x".to_owned()),
        ]);
        assert!(is_ours(&ours, id));
        assert!(!is_ours(&ours, "abd"));

        let other_adapter = HashMap::from([(CLUSTER_ID_LABEL, id), (ADAPTER_LABEL, "nodepool")]);
        assert_eq!(
            ownership(&other_adapter, id),
            Ownership::NotOurs {
                cluster_id: Some(id.to_owned()),
                adapter: Some("nodepool".to_owned())
            }
        );
        let unlabelled: BTreeMap<String, String> = BTreeMap::new();
        assert_eq!(
            ownership(&unlabelled, id),
            Ownership::NotOurs {
                cluster_id: None,
                adapter: None
            }
        );
    }
}
