//! The NodePool input: a HyperFleet NodePool object (`{id, name, generation, owner_references,
//! spec, deleted_time}`, `hyperfleet-framework.md` §7.1) or a bare `spec`, and its validation
//! into a typed [`NodePoolSpec`] by the NodePool CRD's own rules (`hypershift-api.md` §3).
//!
//! Two spellings of the spec are accepted ([`Shape`]); one spec uses one of them (mixing is
//! refused, naming the keys to rename):
//! - **HyperFleet's** (primary): what HyperFleet's GCP API model and its end-to-end suite send
//!   (`fixtures/hyperfleet/spec-shapes/`): `nodeCount` or `replicas`, `platform.type`,
//!   `platform.gcp.{machineType | instanceType, diskSize, diskType, zones, preemptible, labels,
//!   taints, accelerators}`, `autoscaling.{enabled, minNodes, maxNodes}`, `release.image`,
//!   `clusterName`; the NodePool settings the model lacks are spelt as the NodePool spells them:
//!   `platform.gcp.{subnet, image, serviceAccount.email, provisioningModel, networkTags,
//!   resourceLabels}`, `arch`, `management.{upgradeType, autoRepair}`;
//! - **flat** (`fixtures/hyperfleet/example-nodepool.json`): `platform.gcp.{machine_type, zone,
//!   boot_disk_size_gb, boot_disk_type, subnet, image, service_account_email,
//!   provisioning_model, network_tags, resource_labels}`, `autoscaling.{min, max}`,
//!   `management.{upgrade_type, auto_repair}`, and the shared `replicas`, `platform.type`,
//!   `release.image`, `arch`.
//!
//! A spec with none of the keys only the flat shape has is read as HyperFleet's. What the CRD
//! checks only against the HostedCluster (zone in its region, a GCP NodePool on a GCP
//! HostedCluster, the release not newer than the control plane's) and the defaults that come from
//! it (zone `<region>-a`, the control plane's release image, `clusterName` the HostedCluster's
//! name) are checked by [`NodePoolSpec::check_against`] once the HostedCluster is known.
//!
//! By section: [`names`] (the two shapes), [`scaling`], [`gcp`] and [`labels`] (the machines),
//! [`control_plane`] (what is checked against the HostedCluster).

mod control_plane;
mod gcp;
mod labels;
mod names;
mod scaling;

use serde_json::{Map, Value};

pub use self::control_plane::{ControlPlane, MAX_MINOR_SKEW, parse_version, release_version};
pub use self::gcp::GcpNodePool;
pub use self::labels::Taint;
pub use self::names::Shape;
pub use self::scaling::Scaling;
pub use super::resource::InputError;
use super::resource::Resource;
use super::spec::{Checker, Read, Rule, SpecViolation, choose, dns_label, quoted};

/// HyperFleet NodePool names: 3–15 characters of a lowercase DNS label (entity config,
/// `hyperfleet-framework.md` §7.1).
pub const MIN_NAME_LEN: usize = 3;
pub const MAX_NAME_LEN: usize = 15;
/// Most replicas a NodePool takes (`int32`).
pub const MAX_REPLICAS: i64 = i32::MAX as i64;
/// The machine type of a GCP NodePool that names none: the upstream CLI's default
/// (`hypershift-api.md` §3.4).
pub const DEFAULT_MACHINE_TYPE: &str = "n2-standard-4";
/// Most taints a NodePool takes (`hypershift-api.md` §3.2).
pub const MAX_TAINTS: usize = 50;

/// The adapter's input: the NodePool's identity when the input was a full object, and its spec as
/// raw JSON (validated by [`NodePoolSpec::validate`]).
#[derive(Debug, Clone, PartialEq)]
pub struct NodePoolInput {
    pub id: Option<String>,
    pub name: Option<String>,
    pub generation: Option<i64>,
    /// `owner_references.id`: the cluster the NodePool belongs to.
    pub cluster_id: Option<String>,
    /// `deleted_time` (RFC 3339) while the NodePool is being deleted.
    pub deleted_time: Option<String>,
    pub spec: Map<String, Value>,
}

impl NodePoolInput {
    /// Parses a HyperFleet NodePool object or a bare spec from JSON text.
    pub fn from_json(text: &str) -> Result<Self, InputError> {
        Resource::from_json(text, "NodePool").map(Self::from)
    }

    /// A JSON object with an object-valued `spec` is a NodePool object; any other object is a
    /// bare spec.
    pub fn from_value(value: Value) -> Result<Self, InputError> {
        Resource::from_value(value, "NodePool").map(Self::from)
    }
}

impl From<Resource> for NodePoolInput {
    fn from(r: Resource) -> Self {
        NodePoolInput {
            id: r.id,
            name: r.name,
            generation: r.generation,
            cluster_id: r.owner_id,
            deleted_time: r.deleted_time,
            spec: r.spec,
        }
    }
}

/// `spec.platform.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlatformType {
    /// Machines created by HyperShift (CAPI) in the cluster's GCP project.
    Gcp,
    /// No machines: HyperShift generates the ignition payload; VMs are created outside
    /// (seed 002).
    None,
}

impl PlatformType {
    /// The HyperShift spelling (`GCP`, `None`).
    pub fn as_str(self) -> &'static str {
        match self {
            PlatformType::Gcp => "GCP",
            PlatformType::None => "None",
        }
    }
}

/// `spec.management.upgradeType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpgradeType {
    Replace,
    InPlace,
}

impl UpgradeType {
    /// The HyperShift spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            UpgradeType::Replace => "Replace",
            UpgradeType::InPlace => "InPlace",
        }
    }
}

/// A validated NodePool spec: every value here is accepted by the NodePool CRD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePoolSpec {
    /// The spelling the spec was written in: violations and immutable fields are named in it.
    pub shape: Shape,
    /// The HyperFleet NodePool id.
    pub nodepool_id: String,
    /// The owning cluster's id.
    pub cluster_id: String,
    /// The HyperFleet NodePool name.
    pub name: String,
    /// HyperFleet's `clusterName`: must be the owning cluster's HostedCluster name
    /// ([`NodePoolSpec::check_against`]); the NodePool's `clusterName` is always that name.
    pub cluster_name: Option<String>,
    pub platform: PlatformType,
    /// Set for [`PlatformType::Gcp`].
    pub gcp: Option<GcpNodePool>,
    pub scaling: Scaling,
    /// `None`: the HostedCluster's release image.
    pub release_image: Option<String>,
    /// `amd64` or `arm64`.
    pub arch: String,
    pub upgrade_type: UpgradeType,
    pub auto_repair: Option<bool>,
}

const NAME: Rule = Rule::new(MIN_NAME_LEN..=MAX_NAME_LEN, dns_label)
    .expecting("a HyperFleet NodePool name: a lowercase DNS label of 3 to 15 characters (letters, digits and '-', starting and ending with a letter or digit)");
const CLUSTER_NAME: Rule = Rule::new(1..=253, dns_label)
    .expecting("the name of the cluster the NodePool belongs to (omit it: the adapter uses the owning cluster's)");
const RELEASE_IMAGE: Rule = Rule::new(1..=253, || regex!(r"^[0-9A-Za-z_]+\S+$"))
    .expecting("the release image pullspec of the workers, without whitespace, not newer than the cluster's (e.g. quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64); omit it for the control plane's release image");
const NODEPOOL_ID: Rule = Rule::new(1..=63, dns_label)
    .expecting("the HyperFleet NodePool id: a lowercase DNS label (a UUIDv7)");
const CLUSTER_ID: Rule = Rule::new(1..=63 - MAX_NAME_LEN - 1, dns_label).expecting(
    "the owning cluster's HyperFleet id: a lowercase DNS label of at most 47 characters (a UUIDv7)",
);

impl NodePoolSpec {
    /// Validates the raw spec of NodePool `nodepool_id` named `name` of cluster `cluster_id`.
    /// Returns every violation found, not just the first.
    pub fn validate(
        nodepool_id: &str,
        cluster_id: &str,
        name: Option<&str>,
        spec: &Map<String, Value>,
    ) -> Result<NodePoolSpec, Vec<SpecViolation>> {
        let mut c = Checker::new(spec);
        let Some(shape) = names::shape(&mut c) else {
            return Err(c.violations);
        };
        let spec = read(&mut c, shape, (nodepool_id, cluster_id, name));
        c.finish(spec)
    }
}

/// Every field of the NodePool `(id, cluster id, name)`'s spec, in `shape`'s spelling.
fn read(
    c: &mut Checker<'_>,
    shape: Shape,
    (nodepool_id, cluster_id, name): (&str, &str, Option<&str>),
) -> Read<NodePoolSpec> {
    let keys = shape.keys();
    let name = identity(c, name);
    let cluster_name = match shape {
        Shape::HyperFleet => c.optional_checked("clusterName", &CLUSTER_NAME),
        Shape::Flat => Ok(None),
    };
    let platform = platform_type(c);
    let gcp = match platform {
        Ok(PlatformType::Gcp) => gcp::gcp(c, shape).map(Some),
        Ok(PlatformType::None) if c.set("platform.gcp").is_some() => c.refuse(
            "platform.gcp",
            "is only for platform.type gcp; remove it or set platform.type to gcp",
        ),
        _ => Ok(None),
    };
    let scaling = match shape {
        Shape::HyperFleet => scaling::hyperfleet(c),
        Shape::Flat => scaling::flat(c),
    };
    let release_image = c.optional_checked("release.image", &RELEASE_IMAGE);
    let arch = c.one_of_names(
        "arch",
        &["amd64", "arm64"],
        "is not supported for GCP and None NodePools: expected amd64 or arm64 (omit it for amd64)",
    );
    let upgrade_type = c.one_of(
        keys.upgrade_type,
        &[
            ("Replace", UpgradeType::Replace),
            ("InPlace", UpgradeType::InPlace),
        ],
        "is not valid: expected Replace or InPlace (it cannot change after creation)",
    );
    let auto_repair = c.boolean(keys.auto_repair);
    let nodepool_id = c.checked("id", nodepool_id, &NODEPOOL_ID);
    let cluster_id = c.checked("owner_references.id", cluster_id, &CLUSTER_ID);
    let platform = platform?;
    Ok(NodePoolSpec {
        shape,
        nodepool_id: nodepool_id?.to_owned(),
        cluster_id: cluster_id?.to_owned(),
        name: name?.to_owned(),
        cluster_name: cluster_name?.map(str::to_owned),
        platform,
        gcp: gcp?,
        scaling: scaling?,
        release_image: release_image?.map(str::to_owned),
        arch: arch?.unwrap_or("amd64").to_owned(),
        // The upstream GCP CLI's choice; for None the seed 002 pool that worked.
        upgrade_type: upgrade_type?.unwrap_or(match platform {
            PlatformType::Gcp => UpgradeType::Replace,
            PlatformType::None => UpgradeType::InPlace,
        }),
        auto_repair: auto_repair?,
    })
}

/// The NodePool's HyperFleet name: required (the NodePool object is named after it), 3–15
/// characters of a lowercase DNS label.
fn identity<'a>(c: &mut Checker<'_>, name: Option<&'a str>) -> Read<&'a str> {
    match name.filter(|n| !n.is_empty()) {
        Some(name) => c.checked("name", name, &NAME),
        None => c.refuse(
            "name",
            "is required: give the HyperFleet NodePool object (with its name), not a bare spec",
        ),
    }
}

/// `platform.type`, either case.
fn platform_type(c: &mut Checker<'_>) -> Read<PlatformType> {
    let value = c.required("platform.type", "gcp or none")?;
    let platforms = [("gcp", PlatformType::Gcp), ("none", PlatformType::None)];
    if let Some(platform) = choose(&platforms, &value.to_ascii_lowercase()) {
        return Ok(platform);
    }
    let value = quoted(value);
    c.refuse("platform.type", format!("{value} is not supported: expected gcp (machines in the cluster's GCP project) or none (ignition payload only; you create the VMs)"))
}

/// A valid NodePool input for tests: `example-nodepool.json`'s shape with a UUIDv7 id, the
/// longest name the API allows (15) and a subnet.
#[cfg(test)]
pub mod fixture {
    use serde_json::{Map, Value, json};

    use super::NodePoolSpec;

    pub const ID: &str = "01a01e83-2b42-79c4-a5e8-d17b3a6f0c41";
    pub const CLUSTER_ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
    pub const NAME: &str = "workers-europe2";

    pub fn raw() -> Map<String, Value> {
        match json!({
            "platform": {
                "type": "gcp",
                "gcp": {"machine_type": "n2-standard-8", "zone": "europe-west2-a", "boot_disk_size_gb": 128},
            },
            "release": {"image": "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"},
            "replicas": 3,
        }) {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[allow(clippy::expect_used)]
    pub fn spec_with(edit: impl FnOnce(&mut Map<String, Value>)) -> NodePoolSpec {
        let mut raw = raw();
        edit(&mut raw);
        NodePoolSpec::validate(ID, CLUSTER_ID, Some(NAME), &raw).expect("valid fixture")
    }

    pub fn spec() -> NodePoolSpec {
        spec_with(|_| {})
    }

    /// A valid spec in HyperFleet's shape (its GCP API model's keys, one zone), setting every
    /// key the model has that the adapter maps.
    pub fn hyperfleet_raw() -> Map<String, Value> {
        match json!({
            "clusterName": "prod-eu-1",
            "platform": {
                "type": "gcp",
                "gcp": {
                    "machineType": "n2-standard-8",
                    "diskSize": 128,
                    "diskType": "pd-ssd",
                    "zones": ["europe-west2-b"],
                    "preemptible": true,
                    "labels": {"team": "platform", "node.example.com/pool": "workers"},
                    "taints": [
                        {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                        {"key": "example.com/batch", "effect": "PreferNoSchedule"},
                    ],
                    "accelerators": [],
                },
            },
            "nodeCount": 3,
            "autoscaling": {"enabled": false},
            "release": {"image": "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"},
        }) {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[allow(clippy::expect_used)]
    pub fn hyperfleet_spec_with(edit: impl FnOnce(&mut Map<String, Value>)) -> NodePoolSpec {
        let mut raw = hyperfleet_raw();
        edit(&mut raw);
        NodePoolSpec::validate(ID, CLUSTER_ID, Some(NAME), &raw).expect("valid fixture")
    }
}

#[cfg(test)]
mod tests;
