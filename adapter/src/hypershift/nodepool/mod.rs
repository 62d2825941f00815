//! The NodePool (`hypershift.openshift.io/v1beta1`) sent to the management cluster, built from a
//! validated [`NodePoolSpec`] for the HostedCluster it joins (`hypershift-api.md` §3).
//!
//! Choices:
//! - namespace = the HostedCluster's (the NodePool controller looks the HostedCluster up by
//!   `spec.clusterName` in the NodePool's namespace), `spec.clusterName` = the HostedCluster's
//!   name;
//! - name `<nodepool name>-<cluster id>` ([`node_pool_name`]): unique in a namespace every
//!   HostedCluster shares, at most 15 + 1 + 36 = 52 characters, so it fits every label value
//!   HyperShift derives from it;
//! - optional fields are omitted rather than sent empty (`image`, `bootDisk`, `serviceAccount`,
//!   `networkTags`, `resourceLabels` fail `MinLength`/`MinItems` when empty);
//! - a GCP NodePool without its own `subnet` uses the HostedCluster's Private Service Connect
//!   subnet, as the upstream CLI does;
//! - `management.replace`/`inPlace` are left to the API server's defaults.

use serde_json::{Map, Value, json};

use crate::hyperfleet::nodepool::{NodePoolSpec, PlatformType, Scaling};
use crate::hyperfleet::{CLUSTER_ID_LABEL, NODEPOOL_ID_LABEL};

pub mod immutable;
pub mod status;

pub use super::{API_VERSION, GROUP};
pub const KIND: &str = "NodePool";
/// Plural resource, as a ManifestWork `resourceIdentifier` names it.
pub const RESOURCE: &str = "nodepools";

/// The HyperShift finalizer on a NodePool and what holds it (`hypershift-api.md` §5).
pub const FINALIZERS: [(&str, &str); 1] = [(
    "hypershift.openshift.io/finalizer",
    "removed by the HyperShift operator once the NodePool's machine templates, MachineDeployment or MachineSet, MachineHealthCheck and ConfigMaps are deleted, all its Machines are gone (GCP instances deleted) and its token and user-data Secrets are deleted. Look at the hypershift-operator logs and at the Machines of the NodePool in the control-plane namespace clusters-<cluster>; a Machine stuck deleting usually means its GCP instance cannot be deleted (permissions of the nodePool service account, or the instance was removed by hand)",
)];

/// `<nodepool name>-<cluster id>`.
pub fn node_pool_name(spec: &NodePoolSpec) -> String {
    format!("{}-{}", spec.name, spec.cluster_id)
}

/// Where the NodePool goes: the HostedCluster it joins.
#[derive(Debug, Clone, Copy)]
pub struct Placement<'a> {
    /// The HostedCluster's namespace.
    pub namespace: &'a str,
    /// The HostedCluster's name.
    pub cluster_name: &'a str,
    /// The HostedCluster's Private Service Connect subnet (a GCP NodePool's default subnet).
    pub default_subnet: Option<&'a str>,
}

/// The NodePool object.
pub fn node_pool(spec: &NodePoolSpec, placement: &Placement<'_>) -> Value {
    let platform = match (spec.platform, &spec.gcp) {
        (PlatformType::Gcp, Some(gcp)) => {
            let mut g = Map::new();
            g.insert("machineType".into(), gcp.machine_type.clone().into());
            g.insert("zone".into(), gcp.zone.clone().into());
            if let Some(subnet) = gcp.subnet.as_deref().or(placement.default_subnet) {
                g.insert("subnet".into(), subnet.into());
            }
            if let Some(image) = &gcp.image {
                g.insert("image".into(), image.clone().into());
            }
            let mut disk = Map::new();
            if let Some(size) = gcp.boot_disk_size_gb {
                disk.insert("diskSizeGB".into(), size.into());
            }
            if let Some(kind) = &gcp.boot_disk_type {
                disk.insert("diskType".into(), kind.clone().into());
            }
            if !disk.is_empty() {
                g.insert("bootDisk".into(), Value::Object(disk));
            }
            if let Some(email) = &gcp.service_account_email {
                g.insert("serviceAccount".into(), json!({"email": email}));
            }
            if let Some(model) = &gcp.provisioning_model {
                g.insert("provisioningModel".into(), model.clone().into());
            }
            if !gcp.network_tags.is_empty() {
                g.insert("networkTags".into(), json!(gcp.network_tags));
            }
            if !gcp.resource_labels.is_empty() {
                let labels: Vec<Value> = gcp
                    .resource_labels
                    .iter()
                    .map(|(k, v)| json!({"key": k, "value": v}))
                    .collect();
                g.insert("resourceLabels".into(), Value::Array(labels));
            }
            json!({"type": "GCP", "gcp": g})
        }
        _ => json!({"type": spec.platform.as_str()}),
    };
    let mut management = Map::new();
    management.insert("upgradeType".into(), spec.upgrade_type.as_str().into());
    if let Some(repair) = spec.auto_repair {
        management.insert("autoRepair".into(), repair.into());
    }
    let mut np_spec = json!({
        "clusterName": placement.cluster_name,
        "release": {"image": spec.release_image},
        "arch": spec.arch,
        "platform": platform,
        "management": management,
    });
    if let Some(object) = np_spec.as_object_mut() {
        match spec.scaling {
            Scaling::Replicas(n) => {
                object.insert("replicas".into(), n.into());
            }
            Scaling::Autoscaling { min, max } => {
                object.insert("autoScaling".into(), json!({"min": min, "max": max}));
            }
        }
    }
    json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": node_pool_name(spec),
            "namespace": placement.namespace,
            "labels": {
                CLUSTER_ID_LABEL: spec.cluster_id,
                NODEPOOL_ID_LABEL: spec.nodepool_id,
            },
        },
        "spec": np_spec,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::hyperfleet::nodepool::fixture;

    const PLACEMENT: Placement<'static> = Placement {
        namespace: "clusters",
        cluster_name: "prod-eu-1",
        default_subnet: Some("hcp-psc-subnet"),
    };

    #[test]
    fn gcp_node_pool() {
        insta::assert_json_snapshot!("node_pool_gcp", node_pool(&fixture::spec(), &PLACEMENT));
    }

    #[test]
    fn every_optional_gcp_field() {
        let spec = fixture::spec_with(|s| {
            let gcp = s["platform"]["gcp"].as_object_mut().unwrap();
            gcp.insert("subnet".into(), json!("workers"));
            gcp.insert(
                "image".into(),
                json!("projects/rhcos-cloud/global/images/family/rhcos-417"),
            );
            gcp.insert("boot_disk_type".into(), json!("pd-ssd"));
            gcp.insert(
                "service_account_email".into(),
                json!("hc-nodepool@my-project-123.iam.gserviceaccount.com"),
            );
            gcp.insert("provisioning_model".into(), json!("Spot"));
            gcp.insert("network_tags".into(), json!(["workers", "egress"]));
            gcp.insert(
                "resource_labels".into(),
                json!({"team": "platform", "cost": ""}),
            );
            s.remove("replicas");
            s.insert("autoscaling".into(), json!({"min": 2, "max": 6}));
            s.insert("arch".into(), json!("arm64"));
            s.insert("management".into(), json!({"auto_repair": true}));
        });
        let np = node_pool(&spec, &PLACEMENT);
        insta::assert_json_snapshot!("node_pool_gcp_full", np);
        assert_eq!(np["spec"]["platform"]["gcp"]["subnet"], "workers");
        assert!(np["spec"].get("replicas").is_none());
        assert_eq!(
            np["spec"]["platform"]["gcp"]["resourceLabels"],
            json!([{"key": "cost", "value": ""}, {"key": "team", "value": "platform"}])
        );
    }

    #[test]
    fn none_node_pool_has_only_a_type() {
        let spec = fixture::spec_with(|s| {
            s.insert("platform".into(), json!({"type": "none"}));
        });
        let np = node_pool(&spec, &PLACEMENT);
        assert_eq!(np["spec"]["platform"], json!({"type": "None"}));
        assert_eq!(np["spec"]["management"], json!({"upgradeType": "InPlace"}));
        assert_eq!(np["spec"]["replicas"], 3);
    }

    #[test]
    fn the_name_holds_the_cluster_id_and_fits_a_label() {
        let np = node_pool(&fixture::spec(), &PLACEMENT);
        let name = np["metadata"]["name"].as_str().unwrap();
        assert_eq!(name, format!("workers-europe2-{}", fixture::CLUSTER_ID));
        assert!(name.len() <= 63, "{}", name.len());
        assert_eq!(np["spec"]["clusterName"], "prod-eu-1");
        assert_eq!(np["metadata"]["namespace"], "clusters");
        assert_eq!(
            np["metadata"]["labels"]["hyperfleet.io/nodepool-id"],
            fixture::ID
        );
    }
}
