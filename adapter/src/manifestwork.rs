//! The ManifestWork (`work.open-cluster-management.io/v1`) that carries the HostedCluster to the
//! management cluster, and the check that an existing work is ours.

use serde_json::{Value, json};

use crate::cluster::ClusterSpec;
use crate::hostedcluster::{self, CLUSTER_ID_LABEL};

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

/// `hostedcluster-<clusterId>`.
pub fn work_name(cluster_id: &str) -> String {
    format!("hostedcluster-{cluster_id}")
}

/// The ManifestWork for `spec`, in the consumer's namespace, stamped with `generation` when known.
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
    json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": metadata,
        "spec": {
            "workload": {"manifests": [hostedcluster::hosted_cluster(spec)]},
            "manifestConfigs": [{
                "resourceIdentifier": {
                    "group": hostedcluster::GROUP,
                    "resource": hostedcluster::RESOURCE,
                    "namespace": hc_namespace,
                    "name": hc_name,
                },
                "feedbackRules": [{
                    "type": "JSONPaths",
                    "jsonPaths": [{"name": STATUS_FEEDBACK_NAME, "path": ".status"}],
                }],
                "updateStrategy": {"type": "ServerSideApply"},
            }],
            "deleteOption": {"propagationPolicy": "Foreground"},
        },
    })
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
