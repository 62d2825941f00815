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
//!   subnet, and one without a zone `<region>-a` of the HostedCluster's region, as the upstream
//!   CLI does; one without a release image the HostedCluster's (never newer than the control
//!   plane, whatever its version);
//! - HyperFleet's `platform.gcp.labels` and `taints` are the NodePool's `nodeLabels` and `taints`
//!   (HyperShift applies both to nodes when they are created);
//! - `management.replace`/`inPlace` are left to the API server's defaults.

use serde_json::{Value, json};

use super::fields::{list_of, nonempty, present};
use crate::hyperfleet::nodepool::{ControlPlane, GcpNodePool, NodePoolSpec, PlatformType, Scaling};
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
    /// The HostedCluster's region (a GCP NodePool's default zone is `<region>-a`).
    pub region: Option<&'a str>,
    /// The HostedCluster's release image (the default of a NodePool without one).
    pub release_image: Option<&'a str>,
}

impl<'a> Placement<'a> {
    /// Joining the HostedCluster `hc` in `namespace`.
    pub fn joining(namespace: &'a str, hc: &'a ControlPlane) -> Self {
        Placement {
            namespace,
            cluster_name: &hc.name,
            default_subnet: hc.psc_subnet.as_deref(),
            region: hc.region.as_deref(),
            release_image: hc.release_image.as_deref(),
        }
    }
}

/// The NodePool object.
pub fn node_pool(spec: &NodePoolSpec, placement: &Placement<'_>) -> Value {
    let release = spec.release_image.as_deref().or(placement.release_image);
    let (replicas, autoscaling) = match spec.scaling {
        Scaling::Replicas(n) => (Some(json!(n)), None),
        Scaling::Autoscaling { min, max } => (None, Some(json!({"min": min, "max": max}))),
    };
    let gcp = spec.gcp.as_ref();
    let np_spec = present([
        ("clusterName", Some(json!(placement.cluster_name))),
        ("release", Some(json!({"image": release}))),
        ("arch", Some(json!(spec.arch))),
        ("platform", Some(platform(spec, placement))),
        ("management", Some(management(spec))),
        ("replicas", replicas),
        ("autoScaling", autoscaling),
        ("nodeLabels", gcp.and_then(node_labels)),
        ("taints", gcp.and_then(taints)),
    ]);
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

/// `spec.platform`: a GCP NodePool's machine settings ([`gcp_platform`]), else only the type.
fn platform(spec: &NodePoolSpec, placement: &Placement<'_>) -> Value {
    match (spec.platform, &spec.gcp) {
        (PlatformType::Gcp, Some(gcp)) => gcp_platform(gcp, placement),
        _ => json!({"type": spec.platform.as_str()}),
    }
}

/// `spec.platform` of a GCP NodePool: what the spec sets, the zone and subnet defaulting to the
/// HostedCluster's (`<region>-a`, its Private Service Connect subnet).
fn gcp_platform(gcp: &GcpNodePool, placement: &Placement<'_>) -> Value {
    let zone = gcp
        .zone
        .clone()
        .or_else(|| placement.region.map(|r| format!("{r}-a")));
    let subnet = gcp.subnet.as_deref().or(placement.default_subnet);
    let email = gcp.service_account_email.as_ref();
    let resource_labels = list_of(&gcp.resource_labels, |(k, v)| json!({"key": k, "value": v}));
    let g = present([
        ("machineType", Some(json!(gcp.machine_type))),
        ("zone", zone.map(Value::from)),
        ("subnet", subnet.map(Value::from)),
        ("image", gcp.image.as_deref().map(Value::from)),
        ("bootDisk", boot_disk(gcp)),
        ("serviceAccount", email.map(|email| json!({"email": email}))),
        (
            "provisioningModel",
            gcp.provisioning_model.as_deref().map(Value::from),
        ),
        ("networkTags", list_of(&gcp.network_tags, |tag| json!(tag))),
        ("resourceLabels", resource_labels),
    ]);
    json!({"type": "GCP", "gcp": g})
}

/// `platform.gcp.bootDisk`, when the spec sets its size or type.
fn boot_disk(gcp: &GcpNodePool) -> Option<Value> {
    let disk = present([
        ("diskSizeGB", gcp.boot_disk_size_gb.map(Value::from)),
        ("diskType", gcp.boot_disk_type.as_deref().map(Value::from)),
    ]);
    (!disk.is_empty()).then_some(Value::Object(disk))
}

/// `spec.management`: the upgrade type, and `autoRepair` when the spec sets it.
fn management(spec: &NodePoolSpec) -> Value {
    Value::Object(present([
        ("upgradeType", Some(json!(spec.upgrade_type.as_str()))),
        ("autoRepair", spec.auto_repair.map(Value::from)),
    ]))
}

/// `spec.nodeLabels` (HyperFleet's `platform.gcp.labels`), when there are any.
fn node_labels(gcp: &GcpNodePool) -> Option<Value> {
    nonempty(&gcp.node_labels).map(|labels| {
        Value::Object(
            labels
                .iter()
                .map(|(k, v)| (k.clone(), v.clone().into()))
                .collect(),
        )
    })
}

/// `spec.taints` (HyperFleet's `platform.gcp.taints`), when there are any.
fn taints(gcp: &GcpNodePool) -> Option<Value> {
    list_of(&gcp.taints, |t| {
        let mut taint = json!({"key": t.key, "effect": t.effect});
        if let Some(value) = &t.value {
            taint["value"] = value.clone().into();
        }
        taint
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
        region: Some("europe-west2"),
        release_image: Some("quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"),
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

    #[test]
    fn hyperfleet_shape_feeds_every_node_pool_field() {
        let np = node_pool(&fixture::hyperfleet_spec_with(|_| {}), &PLACEMENT);
        let spec = &np["spec"];
        assert_eq!(spec["replicas"], 3);
        assert_eq!(spec["clusterName"], "prod-eu-1");
        assert_eq!(
            spec["platform"]["gcp"],
            json!({
                "machineType": "n2-standard-8",
                "zone": "europe-west2-b",
                "subnet": "hcp-psc-subnet",
                "bootDisk": {"diskSizeGB": 128, "diskType": "pd-ssd"},
                "provisioningModel": "Preemptible",
            })
        );
        assert_eq!(
            spec["nodeLabels"],
            json!({"node.example.com/pool": "workers", "team": "platform"})
        );
        assert_eq!(
            spec["taints"],
            json!([
                {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                {"key": "example.com/batch", "effect": "PreferNoSchedule"},
            ])
        );
        let autoscaled = node_pool(
            &fixture::hyperfleet_spec_with(|s| {
                s.insert(
                    "autoscaling".into(),
                    json!({"enabled": true, "minNodes": 1, "maxNodes": 10}),
                );
            }),
            &PLACEMENT,
        );
        assert!(autoscaled["spec"].get("replicas").is_none());
        assert_eq!(
            autoscaled["spec"]["autoScaling"],
            json!({"min": 1, "max": 10})
        );
    }

    #[test]
    fn defaults_come_from_the_hosted_cluster() {
        let spec = fixture::hyperfleet_spec_with(|s| {
            s.remove("release");
            s.insert("platform".into(), json!({"type": "gcp", "gcp": {}}));
        });
        let np = node_pool(&spec, &PLACEMENT);
        assert_eq!(
            np["spec"]["platform"]["gcp"],
            json!({"machineType": "n2-standard-4", "zone": "europe-west2-a", "subnet": "hcp-psc-subnet"})
        );
        assert_eq!(
            np["spec"]["release"]["image"],
            PLACEMENT.release_image.unwrap()
        );
        assert!(np["spec"].get("nodeLabels").is_none());
        assert!(np["spec"].get("taints").is_none());
    }
}

/// Pins the NodePool object over specs and placements that set, leave out and combine every
/// optional part (platform, boot disk, scaling, management, release, node labels, taints): the
/// JSON text, key order included.
#[cfg(test)]
mod pinned {
    #![allow(clippy::unwrap_used)]

    use std::fmt::Write as _;

    use super::*;
    use crate::hyperfleet::nodepool::{GcpNodePool, Taint, UpgradeType, fixture};

    const FULL: Placement<'static> = Placement {
        namespace: "clusters",
        cluster_name: "prod-eu-1",
        default_subnet: Some("hcp-psc-subnet"),
        region: Some("europe-west4"),
        release_image: Some("quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"),
    };
    const BARE: Placement<'static> = Placement {
        namespace: "clusters-b",
        cluster_name: "b",
        default_subnet: None,
        region: None,
        release_image: None,
    };

    fn gcp(edit: impl FnOnce(&mut GcpNodePool)) -> Option<GcpNodePool> {
        let mut gcp = fixture::spec().gcp.unwrap();
        edit(&mut gcp);
        Some(gcp)
    }

    fn every_gcp_field(g: &mut GcpNodePool) {
        g.subnet = Some("workers".into());
        g.image = Some("projects/rhcos-cloud/global/images/family/rhcos-417".into());
        g.boot_disk_type = Some("pd-ssd".into());
        g.service_account_email = Some("np@my-project-123.iam.gserviceaccount.com".into());
        g.provisioning_model = Some("Spot".into());
        g.network_tags = vec!["workers".into(), "egress".into()];
        g.resource_labels = vec![("cost".into(), String::new()), ("team".into(), "p".into())];
        g.node_labels = vec![("a".into(), "1".into()), ("b/c".into(), String::new())];
        g.taints = vec![
            Taint {
                key: "dedicated".into(),
                value: Some("gpu".into()),
                effect: "NoSchedule".into(),
            },
            Taint {
                key: "batch".into(),
                value: None,
                effect: "NoExecute".into(),
            },
        ];
    }

    fn variants() -> Vec<(&'static str, NodePoolSpec, Placement<'static>)> {
        let base = fixture::spec();
        let with = |edit: &dyn Fn(&mut NodePoolSpec)| {
            let mut spec = base.clone();
            edit(&mut spec);
            spec
        };
        vec![
            ("fixture", base.clone(), FULL),
            ("fixture, bare placement", base.clone(), BARE),
            (
                "every field, autoscaling, InPlace, autoRepair false",
                with(&|s| {
                    s.gcp = gcp(every_gcp_field);
                    s.scaling = Scaling::Autoscaling { min: 2, max: 6 };
                    s.upgrade_type = UpgradeType::InPlace;
                    s.auto_repair = Some(false);
                    s.arch = "arm64".into();
                }),
                FULL,
            ),
            (
                "disk type only, no zone, no subnet, no release",
                with(&|s| {
                    s.gcp = gcp(|g| {
                        g.zone = None;
                        g.boot_disk_size_gb = None;
                        g.boot_disk_type = Some("pd-balanced".into());
                    });
                    s.release_image = None;
                    s.auto_repair = Some(true);
                }),
                BARE,
            ),
            (
                "no zone, defaults from the placement, no boot disk",
                with(&|s| {
                    s.gcp = gcp(|g| {
                        g.zone = None;
                        g.boot_disk_size_gb = None;
                    });
                    s.release_image = None;
                    s.scaling = Scaling::Replicas(0);
                }),
                FULL,
            ),
            ("GCP without its gcp part", with(&|s| s.gcp = None), FULL),
            (
                "None with node labels and taints",
                with(&|s| {
                    s.platform = PlatformType::None;
                    s.gcp = gcp(every_gcp_field);
                }),
                FULL,
            ),
            (
                "None",
                with(&|s| {
                    s.platform = PlatformType::None;
                    s.gcp = None;
                    s.scaling = Scaling::Autoscaling { min: 0, max: 3 };
                }),
                BARE,
            ),
        ]
    }

    #[test]
    fn node_pools_over_a_grid_of_specs() {
        let mut out = String::new();
        for (name, spec, placement) in variants() {
            let np = node_pool(&spec, &placement);
            let _ = writeln!(out, "[{name}]\n{}", serde_json::to_string(&np).unwrap());
        }
        insta::assert_snapshot!("node_pool_grid", out);
    }
}
