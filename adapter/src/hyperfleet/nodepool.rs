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

use serde_json::{Map, Value};

use super::resource::Resource;
use super::spec::{
    Checker, Invalid, Read, Rule, SpecViolation, dns_label, dns_subdomain, gcp_resource_name,
    json_kind, quoted, service_account_email,
};

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

pub use super::resource::InputError;

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

/// Which spelling a spec is written in (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// HyperFleet's nested camelCase NodePool spec: the primary input.
    HyperFleet,
    /// The flat snake_case keys of `example-nodepool.json`.
    Flat,
}

/// The keys only the flat shape has, each with what HyperFleet's shape calls it.
pub const FLAT_ONLY: &[(&str, &str)] = &[
    ("platform.gcp.machine_type", "platform.gcp.machineType"),
    (
        "platform.gcp.zone",
        "platform.gcp.zones (a list of one zone)",
    ),
    ("platform.gcp.boot_disk_size_gb", "platform.gcp.diskSize"),
    ("platform.gcp.boot_disk_type", "platform.gcp.diskType"),
    (
        "platform.gcp.service_account_email",
        "platform.gcp.serviceAccount.email",
    ),
    (
        "platform.gcp.provisioning_model",
        "platform.gcp.provisioningModel",
    ),
    ("platform.gcp.network_tags", "platform.gcp.networkTags"),
    (
        "platform.gcp.resource_labels",
        "platform.gcp.resourceLabels",
    ),
    (
        "autoscaling.min",
        "autoscaling.minNodes (with autoscaling.enabled true)",
    ),
    ("autoscaling.max", "autoscaling.maxNodes"),
    ("management.upgrade_type", "management.upgradeType"),
    ("management.auto_repair", "management.autoRepair"),
];

/// The keys only HyperFleet's shape has.
pub const HYPERFLEET_ONLY: &[&str] = &[
    "clusterName",
    "nodeCount",
    "platform.gcp.machineType",
    "platform.gcp.instanceType",
    "platform.gcp.diskSize",
    "platform.gcp.diskType",
    "platform.gcp.zones",
    "platform.gcp.preemptible",
    "platform.gcp.accelerators",
    "platform.gcp.labels",
    "platform.gcp.taints",
    "platform.gcp.serviceAccount",
    "platform.gcp.provisioningModel",
    "platform.gcp.networkTags",
    "platform.gcp.resourceLabels",
    "autoscaling.enabled",
    "autoscaling.minNodes",
    "autoscaling.maxNodes",
    "autoscaling.targetCPUUtilization",
    "autoscaling.targetMemoryUtilization",
    "autoscaling.scaleDownDelay",
    "autoscaling.scaleUpDelay",
    "management.upgradeType",
    "management.autoRepair",
];

/// HyperFleet autoscaling settings a NodePool has no place for (its `autoScaling` is only
/// `{min, max}`, `hypershift-api.md` §3.2): refused when set rather than dropped.
const UNSUPPORTED_AUTOSCALING: &[&str] = &[
    "autoscaling.targetCPUUtilization",
    "autoscaling.targetMemoryUtilization",
    "autoscaling.scaleDownDelay",
    "autoscaling.scaleUpDelay",
];

/// The spec field names, in one shape, of the settings both shapes have under different names.
struct Keys {
    machine_type: &'static str,
    zone: &'static str,
    disk_size: &'static str,
    disk_type: &'static str,
    service_account_email: &'static str,
    provisioning_model: &'static str,
    network_tags: &'static str,
    resource_labels: &'static str,
    upgrade_type: &'static str,
    auto_repair: &'static str,
}

const FLAT_KEYS: Keys = Keys {
    machine_type: "platform.gcp.machine_type",
    zone: "platform.gcp.zone",
    disk_size: "platform.gcp.boot_disk_size_gb",
    disk_type: "platform.gcp.boot_disk_type",
    service_account_email: "platform.gcp.service_account_email",
    provisioning_model: "platform.gcp.provisioning_model",
    network_tags: "platform.gcp.network_tags",
    resource_labels: "platform.gcp.resource_labels",
    upgrade_type: "management.upgrade_type",
    auto_repair: "management.auto_repair",
};

const HYPERFLEET_KEYS: Keys = Keys {
    machine_type: "platform.gcp.machineType",
    zone: "platform.gcp.zones",
    disk_size: "platform.gcp.diskSize",
    disk_type: "platform.gcp.diskType",
    service_account_email: "platform.gcp.serviceAccount.email",
    provisioning_model: "platform.gcp.provisioningModel",
    network_tags: "platform.gcp.networkTags",
    resource_labels: "platform.gcp.resourceLabels",
    upgrade_type: "management.upgradeType",
    auto_repair: "management.autoRepair",
};

impl Shape {
    fn keys(self) -> &'static Keys {
        match self {
            Shape::HyperFleet => &HYPERFLEET_KEYS,
            Shape::Flat => &FLAT_KEYS,
        }
    }

    /// The spec field of the zone (`platform.gcp.zones` / `platform.gcp.zone`).
    pub fn zone_field(self) -> &'static str {
        self.keys().zone
    }

    /// The spec field of the upgrade type (`management.upgradeType` /
    /// `management.upgrade_type`).
    pub fn upgrade_type_field(self) -> &'static str {
        self.keys().upgrade_type
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
    pub fn as_str(self) -> &'static str {
        match self {
            UpgradeType::Replace => "Replace",
            UpgradeType::InPlace => "InPlace",
        }
    }
}

/// How many machines: fixed, or bounds for the autoscaler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scaling {
    Replicas(i64),
    Autoscaling { min: i64, max: i64 },
}

/// A NodePool taint (`spec.taints[]`), from HyperFleet's `platform.gcp.taints[]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

/// `platform.gcp` of a GCP NodePool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcpNodePool {
    /// [`DEFAULT_MACHINE_TYPE`] when the spec names none.
    pub machine_type: String,
    /// `None`: `<region>-a` of the HostedCluster (the upstream CLI's default).
    pub zone: Option<String>,
    /// `None`: the HostedCluster's Private Service Connect subnet (the upstream CLI's default).
    pub subnet: Option<String>,
    pub image: Option<String>,
    pub boot_disk_size_gb: Option<i64>,
    pub boot_disk_type: Option<String>,
    pub service_account_email: Option<String>,
    pub provisioning_model: Option<String>,
    pub network_tags: Vec<String>,
    /// Sorted by key.
    pub resource_labels: Vec<(String, String)>,
    /// Kubernetes labels of the nodes (HyperFleet's `platform.gcp.labels`), sorted by key.
    pub node_labels: Vec<(String, String)>,
    /// HyperFleet's `platform.gcp.taints`.
    pub taints: Vec<Taint>,
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

/// What the HostedCluster a NodePool joins is, as the control plane's work holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlPlane {
    /// `metadata.name`: the cluster's name (or id), what the NodePool's `clusterName` is.
    pub name: String,
    /// `spec.platform.type` (`GCP`, `None`, …).
    pub platform: String,
    /// `spec.platform.gcp.region`, for a GCP HostedCluster.
    pub region: Option<String>,
    /// `spec.platform.gcp.networkConfig.privateServiceConnectSubnet.name`: the subnet a GCP
    /// NodePool without `platform.gcp.subnet` uses (the upstream CLI's default).
    pub psc_subnet: Option<String>,
    /// `spec.release.image`: the release of a NodePool without `release.image`.
    pub release_image: Option<String>,
    /// The version it runs (newest `Completed` history entry), `""` when unknown.
    pub version: String,
}

/// A release version `x.y.z` read from a release image tag (`…:4.19.3-x86_64`); `None` for a
/// digest or a tag that does not start with a version.
pub fn release_version(image: &str) -> Option<(u64, u64, u64)> {
    let tag = image.rsplit_once(':')?.1;
    if image.contains('@') {
        return None;
    }
    parse_version(tag)
}

/// `x.y.z` at the start of `text` (anything after the patch number is ignored).
pub fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let mut parts = text.splitn(3, '.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let rest = parts.next()?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let patch = digits.parse().ok()?;
    Some((major, minor, patch))
}

/// Most minor versions a NodePool may lag behind its control plane: the NodePool API documents
/// N-2 in the spec and "up to 3 minors" in its condition; only what both refuse is refused here,
/// HyperShift judges the rest (`SupportedVersionSkew`).
pub const MAX_MINOR_SKEW: u64 = 3;

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
        let Some(shape) = shape(&mut c) else {
            return Err(c.violations);
        };
        let keys = shape.keys();
        let name = identity(&mut c, name);
        let cluster_name = match shape {
            Shape::HyperFleet => c.optional_checked_unit(
                "clusterName",
                &Rule {
                    min: 1,
                    max: 253,
                    pattern: dns_label,
                    expected: "the name of the cluster the NodePool belongs to (omit it: the adapter uses the owning cluster's)",
                },
            ),
            Shape::Flat => Ok(None),
        };
        let platform = platform_type(&mut c);
        let gcp = match platform {
            Some(PlatformType::Gcp) => gcp(&mut c, shape),
            _ => {
                if c.get("platform.gcp").is_some_and(|v| !v.is_null()) && platform.is_some() {
                    c.violation(
                        "platform.gcp",
                        "is only for platform.type gcp; remove it or set platform.type to gcp",
                    );
                }
                None
            }
        };
        let scaling = match shape {
            Shape::HyperFleet => hyperfleet_scaling(&mut c),
            Shape::Flat => flat_scaling(&mut c),
        };
        let release_image = c.optional_checked_unit(
            "release.image",
            &Rule {
                min: 1,
                max: 253,
                pattern: || regex!(r"^[0-9A-Za-z_]+\S+$"),
                expected: "the release image pullspec of the workers, without whitespace, not newer than the cluster's (e.g. quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64); omit it for the control plane's release image",
            },
        );
        let arch = match c.optional("arch") {
            None => Some("amd64"),
            Some(a @ ("amd64" | "arm64")) => Some(a),
            Some(other) => {
                c.violation(
                    "arch",
                    format!(
                        "{} is not supported for GCP and None NodePools: expected amd64 or arm64 (omit it for amd64)",
                        quoted(other)
                    ),
                );
                None
            }
        };
        let upgrade_type = match c.optional(keys.upgrade_type) {
            None => platform.map(|p| match p {
                // The upstream GCP CLI's choice; for None the seed 002 pool that worked.
                PlatformType::Gcp => UpgradeType::Replace,
                PlatformType::None => UpgradeType::InPlace,
            }),
            Some("Replace") => Some(UpgradeType::Replace),
            Some("InPlace") => Some(UpgradeType::InPlace),
            Some(other) => {
                c.violation(
                    keys.upgrade_type,
                    format!(
                        "{} is not valid: expected Replace or InPlace (it cannot change after creation)",
                        quoted(other)
                    ),
                );
                None
            }
        };
        let auto_repair = boolean(&mut c, keys.auto_repair);
        let nodepool_id = c
            .check(
                "id",
                nodepool_id,
                &Rule {
                    min: 1,
                    max: 63,
                    pattern: dns_label,
                    expected: "the HyperFleet NodePool id: a lowercase DNS label (a UUIDv7)",
                },
            )
            .then_some(nodepool_id);
        let cluster_id = c
            .check(
                "owner_references.id",
                cluster_id,
                &Rule {
                    min: 1,
                    max: 63 - MAX_NAME_LEN - 1,
                    pattern: dns_label,
                    expected: "the owning cluster's HyperFleet id: a lowercase DNS label of at most 47 characters (a UUIDv7)",
                },
            )
            .then_some(cluster_id);

        if !c.violations.is_empty() {
            return Err(c.violations);
        }
        let (
            Some(nodepool_id),
            Some(cluster_id),
            Some(name),
            Ok(cluster_name),
            Some(platform),
            Some(scaling),
            Ok(release_image),
            Some(arch),
            Some(upgrade_type),
            Ok(auto_repair),
        ) = (
            nodepool_id,
            cluster_id,
            name,
            cluster_name,
            platform,
            scaling,
            release_image,
            arch,
            upgrade_type,
            auto_repair,
        )
        else {
            // Every `None` above comes with a violation; this is a safety net, not a path.
            return Err(vec![SpecViolation {
                field: "spec",
                problem: "could not be validated (internal error); please report this".to_owned(),
            }]);
        };
        Ok(NodePoolSpec {
            shape,
            nodepool_id: nodepool_id.to_owned(),
            cluster_id: cluster_id.to_owned(),
            name: name.to_owned(),
            cluster_name: cluster_name.map(str::to_owned),
            platform,
            gcp,
            scaling,
            release_image: release_image.map(str::to_owned),
            arch: arch.to_owned(),
            upgrade_type,
            auto_repair,
        })
    }

    /// What the NodePool CRD and operator check against the HostedCluster it joins: a GCP
    /// NodePool needs a GCP HostedCluster and a zone in its region; the release may not be newer
    /// than the control plane's, nor more than [`MAX_MINOR_SKEW`] minors older (only when both
    /// versions are known). HyperFleet's `clusterName`, when given, must be the HostedCluster's
    /// name; what defaults from the HostedCluster (zone, subnet, release) must be there.
    pub fn check_against(&self, hc: &ControlPlane) -> Vec<SpecViolation> {
        let mut violations = Vec::new();
        if let Some(given) = &self.cluster_name
            && !hc.name.is_empty()
            && *given != hc.name
        {
            violations.push(SpecViolation {
                field: "clusterName",
                problem: format!(
                    "is {} but the NodePool belongs to cluster {} (owner_references.id {}): omit clusterName or set it to {}",
                    quoted(given),
                    quoted(&hc.name),
                    self.cluster_id,
                    quoted(&hc.name)
                ),
            });
        }
        if self.platform == PlatformType::Gcp {
            if hc.platform != "GCP" {
                violations.push(SpecViolation {
                    field: "platform.type",
                    problem: format!(
                        "gcp NodePools need a GCP HostedCluster, but the cluster's HostedCluster has platform {}; use platform.type none",
                        quoted(&hc.platform)
                    ),
                });
            } else if let Some(gcp) = &self.gcp {
                let zone_field = self.shape.zone_field();
                match (&gcp.zone, &hc.region) {
                    (Some(zone), Some(region)) if !zone.starts_with(&format!("{region}-")) => {
                        violations.push(SpecViolation {
                            field: zone_field,
                            problem: format!(
                                "{} is not in the cluster's region {region}: use a zone {region}-<letter> (e.g. {region}-a)",
                                quoted(zone)
                            ),
                        });
                    }
                    (None, None) => violations.push(SpecViolation {
                        field: zone_field,
                        problem: "is required: the cluster's HostedCluster names no region to take the default zone <region>-a from; name a zone of the cluster's region".to_owned(),
                    }),
                    _ => {}
                }
                if gcp.subnet.is_none() && hc.psc_subnet.is_none() {
                    violations.push(SpecViolation {
                        field: "platform.gcp.subnet",
                        problem: "is required: the cluster's HostedCluster has no Private Service Connect subnet to default to; name a subnet of the cluster's VPC in its region".to_owned(),
                    });
                }
            }
        }
        if self.release_image.is_none() && hc.release_image.is_none() {
            violations.push(SpecViolation {
                field: "release.image",
                problem: "is required: the cluster's HostedCluster names no release image to default to; give the workers' release pullspec".to_owned(),
            });
        }
        if let (Some(np), Some(cp)) = (
            self.release_image.as_deref().and_then(release_version),
            parse_version(&hc.version),
        ) {
            let show = |(a, b, c): (u64, u64, u64)| format!("{a}.{b}.{c}");
            if np > cp {
                violations.push(SpecViolation {
                    field: "release.image",
                    problem: format!(
                        "{} is newer than the control plane, which runs {}: upgrade the cluster first, then its NodePools",
                        show(np),
                        show(cp)
                    ),
                });
            } else if np.0 == cp.0 && cp.1.saturating_sub(np.1) > MAX_MINOR_SKEW {
                violations.push(SpecViolation {
                    field: "release.image",
                    problem: format!(
                        "{} is more than {MAX_MINOR_SKEW} minor versions older than the control plane's {}: HyperShift does not support that skew; use a newer release",
                        show(np),
                        show(cp)
                    ),
                });
            } else if np.0 < cp.0 {
                violations.push(SpecViolation {
                    field: "release.image",
                    problem: format!(
                        "{} is a major version older than the control plane's {}: HyperShift does not support that skew",
                        show(np),
                        show(cp)
                    ),
                });
            }
        }
        violations
    }
}

/// Which shape the spec is written in: the flat one when it has a key only that shape has,
/// else HyperFleet's. Keys of both shapes in one spec: one violation naming them and the renames,
/// `None`.
fn shape(c: &mut Checker<'_>) -> Option<Shape> {
    let set = |c: &Checker<'_>, path: &str| c.get(path).is_some_and(|v| !v.is_null());
    let flat: Vec<&(&str, &str)> = FLAT_ONLY.iter().filter(|(k, _)| set(c, k)).collect();
    let hyperfleet: Vec<&str> = HYPERFLEET_ONLY
        .iter()
        .copied()
        .filter(|k| set(c, k))
        .collect();
    if flat.is_empty() {
        return Some(Shape::HyperFleet);
    }
    if hyperfleet.is_empty() {
        return Some(Shape::Flat);
    }
    let flat_keys: Vec<&str> = flat.iter().map(|(k, _)| *k).collect();
    let renames: Vec<String> = flat.iter().map(|(k, h)| format!("{k} → {h}")).collect();
    c.violation(
        "spec",
        format!(
            "mixes HyperFleet's NodePool keys ({}) with the flat snake_case keys ({}): write the whole spec in HyperFleet's shape ({})",
            hyperfleet.join(", "),
            flat_keys.join(", "),
            renames.join("; ")
        ),
    );
    None
}

/// The NodePool's HyperFleet name: required (the NodePool object is named after it), 3–15
/// characters of a lowercase DNS label.
fn identity<'a>(c: &mut Checker<'_>, name: Option<&'a str>) -> Option<&'a str> {
    let rule = Rule {
        min: MIN_NAME_LEN,
        max: MAX_NAME_LEN,
        pattern: dns_label,
        expected: "a HyperFleet NodePool name: a lowercase DNS label of 3 to 15 characters (letters, digits and '-', starting and ending with a letter or digit)",
    };
    match name.filter(|n| !n.is_empty()) {
        Some(name) => c.check("name", name, &rule).then_some(name),
        None => {
            c.violation(
                "name",
                "is required: give the HyperFleet NodePool object (with its name), not a bare spec",
            );
            None
        }
    }
}

fn platform_type(c: &mut Checker<'_>) -> Option<PlatformType> {
    let value = c.required("platform.type", "gcp or none").ok()?;
    match value.to_ascii_lowercase().as_str() {
        "gcp" => Some(PlatformType::Gcp),
        "none" => Some(PlatformType::None),
        _ => {
            c.violation(
                "platform.type",
                format!(
                    "{} is not supported: expected gcp (machines in the cluster's GCP project) or none (ignition payload only; you create the VMs)",
                    quoted(value)
                ),
            );
            None
        }
    }
}

/// An integer field in `[min, max]`; `Ok(None)` when unset, `Err(())` after a violation.
/// An integer field in `[min, max]` (`unit` follows the bounds in the message, e.g. ` GB`);
/// `Ok(None)` when unset, `Err(())` after a violation.
fn integer(
    c: &mut Checker<'_>,
    field: &'static str,
    (min, max): (i64, i64),
    unit: &str,
) -> Result<Option<i64>, ()> {
    match c.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_i64() {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            Some(n) => {
                c.violation(
                    field,
                    format!("must be between {min} and {max}{unit} (got {n})"),
                );
                Err(())
            }
            None => {
                c.violation(
                    field,
                    format!("must be a whole number, found {}", describe(v)),
                );
                Err(())
            }
        },
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Number(n) => format!("the number {n}"),
        other => json_kind(other).to_owned(),
    }
}

/// An optional boolean field.
fn boolean(c: &mut Checker<'_>, field: &'static str) -> Result<Option<bool>, ()> {
    match c.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => {
            c.violation(
                field,
                format!("must be true or false, found {}", json_kind(other)),
            );
            Err(())
        }
    }
}

/// The flat shape's size: `replicas` xor `autoscaling.{min, max}`; autoscaling needs min ≥ 1 on
/// GCP and None. The CRD refuses both together and also accepts neither (0 machines); one is
/// required here on purpose: a forgotten size would silently mean a NodePool without workers.
fn flat_scaling(c: &mut Checker<'_>) -> Option<Scaling> {
    let replicas = integer(c, "replicas", (0, MAX_REPLICAS), "");
    let autoscaling = c.get("autoscaling").filter(|v| !v.is_null());
    if let Some(a) = autoscaling
        && !a.is_object()
    {
        c.violation(
            "autoscaling",
            format!("must be an object {{min, max}}, found {}", json_kind(a)),
        );
        return None;
    }
    match (replicas, autoscaling) {
        (Ok(Some(_)), Some(_)) => {
            c.violation(
                "autoscaling",
                "cannot be set together with replicas: set replicas for a fixed size, or autoscaling.min and autoscaling.max",
            );
            None
        }
        (Ok(Some(n)), None) => Some(Scaling::Replicas(n)),
        (Ok(None), None) => {
            c.violation(
                "replicas",
                "is required: set replicas (a fixed number of workers, 0 allowed) or autoscaling.min and autoscaling.max",
            );
            None
        }
        (Err(()), _) => None,
        (Ok(None), Some(_)) => {
            let min = integer(c, "autoscaling.min", (1, MAX_REPLICAS), "");
            let max = integer(c, "autoscaling.max", (1, MAX_REPLICAS), "");
            for (field, value) in [("autoscaling.min", &min), ("autoscaling.max", &max)] {
                if matches!(value, Ok(None)) {
                    c.violation(
                        field,
                        "is required with autoscaling (at least 1: scaling from zero is not supported for GCP and None NodePools)",
                    );
                }
            }
            match (min, max) {
                (Ok(Some(min)), Ok(Some(max))) if max < min => {
                    c.violation(
                        "autoscaling.max",
                        format!("must be at least autoscaling.min ({min}), got {max}"),
                    );
                    None
                }
                (Ok(Some(min)), Ok(Some(max))) => Some(Scaling::Autoscaling { min, max }),
                _ => None,
            }
        }
    }
}

/// HyperFleet's size: `nodeCount` or `replicas` (the same setting: its API model says
/// `nodeCount`, its e2e suite `replicas`), and `autoscaling.{enabled, minNodes, maxNodes}`.
/// Autoscaling enabled → the NodePool's `autoScaling {min, max}` (min ≥ 1 on GCP and None), a
/// count given beside it must lie within the bounds and is not sent (the CRD refuses both);
/// disabled → the count, required (0 allowed), bounds ignored; bounds without `enabled` are
/// refused as ambiguous.
fn hyperfleet_scaling(c: &mut Checker<'_>) -> Option<Scaling> {
    let node_count = integer(c, "nodeCount", (0, MAX_REPLICAS), "");
    let replicas = integer(c, "replicas", (0, MAX_REPLICAS), "");
    let count_field = if matches!(node_count, Ok(None)) && !matches!(replicas, Ok(None)) {
        "replicas"
    } else {
        "nodeCount"
    };
    let count = match (node_count, replicas) {
        (Ok(Some(a)), Ok(Some(b))) if a != b => {
            c.violation(
                "nodeCount",
                format!(
                    "is {a} but replicas is {b}: both set the number of workers (HyperFleet's API model says nodeCount, its e2e suite replicas); give one"
                ),
            );
            Err(())
        }
        (Ok(a), Ok(b)) => Ok(a.or(b)),
        _ => Err(()),
    };
    match c.get("autoscaling") {
        None | Some(Value::Null | Value::Object(_)) => {}
        Some(other) => {
            c.violation(
                "autoscaling",
                format!(
                    "must be an object {{enabled, minNodes, maxNodes}}, found {}",
                    json_kind(other)
                ),
            );
            return None;
        }
    }
    let enabled = boolean(c, "autoscaling.enabled");
    let min = integer(c, "autoscaling.minNodes", (0, MAX_REPLICAS), "");
    let max = integer(c, "autoscaling.maxNodes", (0, MAX_REPLICAS), "");
    for field in UNSUPPORTED_AUTOSCALING {
        if c.get(field).is_some_and(|v| !v.is_null()) {
            c.violation(
                field,
                "is not supported: a HyperShift NodePool's autoScaling has only a minimum and a maximum (hypershift-api.md §3.2); remove it",
            );
        }
    }
    let bounds_given = !matches!(min, Ok(None)) || !matches!(max, Ok(None));
    match enabled {
        Err(()) => None,
        Ok(Some(true)) => {
            let min = match min {
                Ok(Some(0)) => {
                    c.violation(
                        "autoscaling.minNodes",
                        "must be at least 1 (got 0): scaling from zero is not supported for GCP and None NodePools",
                    );
                    None
                }
                Ok(Some(n)) => Some(n),
                Ok(None) => {
                    c.violation(
                        "autoscaling.minNodes",
                        "is required with autoscaling.enabled true (at least 1: scaling from zero is not supported for GCP and None NodePools)",
                    );
                    None
                }
                Err(()) => None,
            };
            let max = match max {
                Ok(Some(n)) => Some(n),
                Ok(None) => {
                    c.violation(
                        "autoscaling.maxNodes",
                        "is required with autoscaling.enabled true (at least autoscaling.minNodes)",
                    );
                    None
                }
                Err(()) => None,
            };
            let (Some(min), Some(max)) = (min, max) else {
                return None;
            };
            if max < min {
                c.violation(
                    "autoscaling.maxNodes",
                    format!("must be at least autoscaling.minNodes ({min}), got {max}"),
                );
                return None;
            }
            match count {
                Ok(Some(n)) if !(min..=max).contains(&n) => {
                    c.violation(
                        count_field,
                        format!(
                            "is {n}, outside autoscaling.minNodes–maxNodes ({min}–{max}): with autoscaling enabled the autoscaler sizes the NodePool between them; give a count within them or omit it"
                        ),
                    );
                    None
                }
                Ok(_) => Some(Scaling::Autoscaling { min, max }),
                Err(()) => None,
            }
        }
        Ok(None) if bounds_given => {
            c.violation(
                "autoscaling.enabled",
                "is required with autoscaling.minNodes or maxNodes: true to autoscale between them, false for a fixed nodeCount",
            );
            None
        }
        Ok(_) => match count {
            Ok(Some(n)) => Some(Scaling::Replicas(n)),
            Ok(None) => {
                c.violation(
                    "nodeCount",
                    "is required: set nodeCount (a fixed number of workers, 0 allowed) or autoscaling.enabled true with minNodes and maxNodes",
                );
                None
            }
            Err(()) => None,
        },
    }
}

/// A GCP zone (`hypershift-api.md` §3.4).
fn zone_rule() -> Rule {
    Rule {
        min: 1,
        max: 63,
        pattern: || regex!(r"^[a-z]+(?:-[a-z0-9]+)*-[a-z]$"),
        expected: "a GCP zone in the form region-zone, e.g. us-central1-a",
    }
}

/// HyperFleet's `platform.gcp.zones`: unset or empty → `<region>-a`; one zone; more are refused
/// (a HyperShift GCP NodePool runs in one zone).
fn zones<'a>(c: &mut Checker<'a>) -> Result<Option<&'a str>, ()> {
    const FIELD: &str = "platform.gcp.zones";
    let list = match c.get(FIELD) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(list)) => list,
        Some(other) => {
            c.violation(
                FIELD,
                format!(
                    "must be a list of one zone, e.g. [\"us-central1-a\"], found {}",
                    json_kind(other)
                ),
            );
            return Err(());
        }
    };
    match list.as_slice() {
        [] => Ok(None),
        [Value::String(zone)] => {
            if c.check(FIELD, zone, &zone_rule()) {
                Ok(Some(zone.as_str()))
            } else {
                Err(())
            }
        }
        [other] => {
            c.violation(
                FIELD,
                format!("must list zone names, found {}", json_kind(other)),
            );
            Err(())
        }
        many => {
            c.violation(
                FIELD,
                format!(
                    "lists {} zones, but a HyperShift GCP NodePool runs in one zone (its platform.gcp.zone): list one zone, and create one HyperFleet NodePool per zone",
                    many.len()
                ),
            );
            Err(())
        }
    }
}

/// The machine type: the flat `machine_type`, or HyperFleet's `machineType` or `instanceType`
/// (the same setting: its API model says `machineType`, its e2e suite `instanceType`);
/// [`DEFAULT_MACHINE_TYPE`] when none is given.
fn machine_type<'a>(c: &mut Checker<'a>, shape: Shape) -> Result<&'a str, ()> {
    let rule = Rule {
        min: 1,
        max: 255,
        pattern: || regex!(r"^[a-z0-9]+(-[a-z0-9]+)*$"),
        expected: "a GCE machine type such as n2-standard-4 (lowercase letters and digits in '-'-separated words); omit it for n2-standard-4",
    };
    let given = match shape {
        Shape::Flat => c.optional_checked_unit(FLAT_KEYS.machine_type, &rule),
        Shape::HyperFleet => {
            let machine = c.optional_checked_unit(HYPERFLEET_KEYS.machine_type, &rule);
            let instance = c.optional_checked_unit("platform.gcp.instanceType", &rule);
            match (machine, instance) {
                (Ok(Some(m)), Ok(Some(i))) if m != i => {
                    c.violation(
                        "platform.gcp.instanceType",
                        format!(
                            "is {} but platform.gcp.machineType is {}: both name the GCE machine type (HyperFleet's API model says machineType, its e2e suite instanceType); give one",
                            quoted(i),
                            quoted(m)
                        ),
                    );
                    Err(())
                }
                (Ok(m), Ok(i)) => Ok(m.or(i)),
                _ => Err(()),
            }
        }
    };
    given.map(|m| m.unwrap_or(DEFAULT_MACHINE_TYPE))
}

/// `platform.gcp`, by the CRD's `GCPNodePoolPlatform` rules (`hypershift-api.md` §3.4), in
/// `shape`'s spelling.
fn gcp(c: &mut Checker<'_>, shape: Shape) -> Option<GcpNodePool> {
    let keys = shape.keys();
    match c.get("platform.gcp") {
        Some(Value::Object(_)) => {}
        None | Some(Value::Null) => {
            c.violation(
                "platform.gcp",
                format!(
                    "is required for platform.type gcp: an object with the machine settings ({{}} takes every default: machine type {DEFAULT_MACHINE_TYPE}, zone <region>-a, the cluster's Private Service Connect subnet)"
                ),
            );
            return None;
        }
        Some(v) => {
            let found = json_kind(v);
            let machine = keys.machine_type.trim_start_matches("platform.gcp.");
            c.violation(
                "platform.gcp",
                format!("must be an object {{{machine}, …}}, found {found}"),
            );
            return None;
        }
    }
    let machine_type = machine_type(c, shape);
    let zone = match shape {
        Shape::Flat => c.optional_checked_unit(FLAT_KEYS.zone, &zone_rule()),
        Shape::HyperFleet => zones(c),
    };
    let resource = |what: &'static str| Rule {
        min: 1,
        max: 63,
        pattern: gcp_resource_name,
        expected: what,
    };
    let subnet = c.optional_checked_unit(
        "platform.gcp.subnet",
        &resource("a subnet name of the cluster's VPC in its region: 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen (omit it for the cluster's Private Service Connect subnet)"),
    );
    let image = c.optional_checked_unit(
        "platform.gcp.image",
        &Rule {
            min: 1,
            max: 2048,
            pattern: || regex!(r"^\S+$"),
            expected: "an image family path, image path or full image URL without whitespace (omit it for the RHCOS image of the release)",
        },
    );
    let boot_disk_size_gb = integer(c, keys.disk_size, (20, 65536), " GB");
    let boot_disk_type = match c.optional(keys.disk_type) {
        None => Ok(None),
        Some(t @ ("pd-standard" | "pd-ssd" | "pd-balanced")) => Ok(Some(t)),
        Some(other) => {
            c.violation(
                keys.disk_type,
                format!(
                    "{} is not valid: expected pd-standard, pd-ssd or pd-balanced (omit it for pd-balanced)",
                    quoted(other)
                ),
            );
            Err(())
        }
    };
    if shape == Shape::HyperFleet
        && let Some(v) = c
            .get("platform.gcp.serviceAccount")
            .filter(|v| !v.is_null() && !v.is_object())
    {
        let found = json_kind(v);
        c.violation(
            "platform.gcp.serviceAccount",
            format!("must be an object {{email}}, found {found}"),
        );
    }
    let service_account_email = c.optional_checked_unit(
        keys.service_account_email,
        &Rule {
            min: 37,
            max: 85,
            pattern: service_account_email,
            expected: "a Google service account email <name>@<project>.iam.gserviceaccount.com (37–85 characters); omit it for the project's default compute account",
        },
    );
    let provisioning_model = match c.optional(keys.provisioning_model) {
        None => Ok(None),
        Some(m @ ("Standard" | "Spot" | "Preemptible")) => Ok(Some(m)),
        Some(other) => {
            c.violation(
                keys.provisioning_model,
                format!(
                    "{} is not valid: expected Standard, Spot or Preemptible (omit it for Standard)",
                    quoted(other)
                ),
            );
            Err(())
        }
    };
    let provisioning_model = match shape {
        Shape::Flat => provisioning_model,
        Shape::HyperFleet => preemptible(c, provisioning_model),
    };
    let network_tags = network_tags(c, keys.network_tags);
    let resource_labels = resource_labels(c, keys.resource_labels);
    let (node_labels, taints, accelerators_ok) = match shape {
        Shape::Flat => (Some(Vec::new()), Some(Vec::new()), true),
        Shape::HyperFleet => (node_labels(c), taints(c), accelerators(c)),
    };
    let (
        Ok(machine_type),
        Ok(zone),
        Ok(subnet),
        Ok(image),
        Ok(boot_disk_size_gb),
        Ok(boot_disk_type),
        Ok(service_account_email),
        Ok(provisioning_model),
        Some(network_tags),
        Some(resource_labels),
        Some(node_labels),
        Some(taints),
        true,
    ) = (
        machine_type,
        zone,
        subnet,
        image,
        boot_disk_size_gb,
        boot_disk_type,
        service_account_email,
        provisioning_model,
        network_tags,
        resource_labels,
        node_labels,
        taints,
        accelerators_ok,
    )
    else {
        return None;
    };
    Some(GcpNodePool {
        machine_type: machine_type.to_owned(),
        zone: zone.map(str::to_owned),
        subnet: subnet.map(str::to_owned),
        image: image.map(str::to_owned),
        boot_disk_size_gb,
        boot_disk_type: boot_disk_type.map(str::to_owned),
        service_account_email: service_account_email.map(str::to_owned),
        provisioning_model: provisioning_model.map(str::to_owned),
        network_tags,
        resource_labels,
        node_labels,
        taints,
    })
}

/// HyperFleet's `platform.gcp.preemptible`: `true` is provisioning model `Preemptible`, `false`
/// `Standard` (the default, not sent); a `provisioningModel` beside it must agree.
fn preemptible<'a>(
    c: &mut Checker<'_>,
    model: Result<Option<&'a str>, ()>,
) -> Result<Option<&'a str>, ()> {
    const FIELD: &str = "platform.gcp.preemptible";
    let preemptible = boolean(c, FIELD)?;
    let model = model?;
    match (preemptible, model) {
        (None, model) => Ok(model),
        (Some(true), None | Some("Preemptible")) => Ok(Some("Preemptible")),
        (Some(false), model @ (None | Some("Standard"))) => Ok(model),
        (Some(p), Some(m)) => {
            c.violation(
                FIELD,
                format!(
                    "is {p} but platform.gcp.provisioningModel is {}: preemptible true means Preemptible, false Standard; give one of them",
                    quoted(m)
                ),
            );
            Err(())
        }
    }
}

/// HyperFleet's `platform.gcp.accelerators`: a HyperShift GCP NodePool has no accelerator
/// setting (`hypershift-api.md` §3.4), so a non-empty list is refused rather than dropped.
fn accelerators(c: &mut Checker<'_>) -> bool {
    const FIELD: &str = "platform.gcp.accelerators";
    match c.get(FIELD) {
        None | Some(Value::Null) => true,
        Some(Value::Array(list)) if list.is_empty() => true,
        Some(Value::Array(list)) => {
            c.violation(
                FIELD,
                format!(
                    "asks for {} accelerator type(s), but a HyperShift GCP NodePool has no accelerator setting (hypershift-api.md §3.4): remove accelerators and choose a machine type that comes with the GPUs you need",
                    list.len()
                ),
            );
            false
        }
        Some(other) => {
            c.violation(
                FIELD,
                format!(
                    "must be a list of {{type, count}}, found {}",
                    json_kind(other)
                ),
            );
            false
        }
    }
}

/// Kubernetes label keys: an optional DNS-subdomain prefix (≤ 253) and `/`, then a name of 1–63
/// alphanumerics, `-`, `_`, `.` starting and ending with an alphanumeric.
fn label_key_ok(key: &str) -> bool {
    let name_re = regex!(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$");
    match key.split_once('/') {
        Some((prefix, name)) => {
            !prefix.is_empty()
                && prefix.len() <= 253
                && dns_subdomain().is_match(prefix)
                && name_re.is_match(name)
        }
        None => name_re.is_match(key),
    }
}

/// HyperFleet's `platform.gcp.labels`: the nodes' Kubernetes labels (the NodePool's
/// `nodeLabels`), sorted by key.
fn node_labels(c: &mut Checker<'_>) -> Option<Vec<(String, String)>> {
    const FIELD: &str = "platform.gcp.labels";
    let map = match c.get(FIELD) {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Object(map)) => map,
        Some(other) => {
            c.violation(
                FIELD,
                format!(
                    "must be an object of node labels {{\"key\": \"value\"}}, found {}",
                    json_kind(other)
                ),
            );
            return None;
        }
    };
    let value_re = regex!(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$");
    let mut labels = Vec::new();
    let mut ok = true;
    for (key, value) in map {
        if !label_key_ok(key) {
            c.violation(
                FIELD,
                format!(
                    "label key {} is not a Kubernetes label key: [prefix/]name, the name 1–63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, the prefix a DNS subdomain",
                    quoted(key)
                ),
            );
            ok = false;
        }
        match value {
            Value::String(v) if v.len() <= 63 && value_re.is_match(v) => {
                labels.push((key.clone(), v.clone()));
            }
            Value::String(v) => {
                c.violation(
                    FIELD,
                    format!(
                        "the value of {} ({}) is not a Kubernetes label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, or empty",
                        quoted(key),
                        quoted(v)
                    ),
                );
                ok = false;
            }
            other => {
                c.violation(
                    FIELD,
                    format!(
                        "the value of {} must be a string, found {}",
                        quoted(key),
                        json_kind(other)
                    ),
                );
                ok = false;
            }
        }
    }
    labels.sort();
    ok.then_some(labels)
}

/// HyperFleet's `platform.gcp.taints`: the NodePool's `taints` (≤ 50; key, value and effect by
/// the CRD's rules, `hypershift-api.md` §3.2).
fn taints(c: &mut Checker<'_>) -> Option<Vec<Taint>> {
    const FIELD: &str = "platform.gcp.taints";
    let list = match c.get(FIELD) {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(other) => {
            c.violation(
                FIELD,
                format!(
                    "must be a list of {{key, value, effect}}, found {}",
                    json_kind(other)
                ),
            );
            return None;
        }
    };
    if list.len() > MAX_TAINTS {
        c.violation(
            FIELD,
            format!(
                "has {} taints; at most {MAX_TAINTS} are allowed",
                list.len()
            ),
        );
        return None;
    }
    let key_re = regex!(
        r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
    );
    let value_re = regex!(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$");
    let mut taints = Vec::new();
    let mut ok = true;
    for (i, item) in list.iter().enumerate() {
        let Value::Object(taint) = item else {
            c.violation(
                FIELD,
                format!(
                    "taint {i} must be an object {{key, value, effect}}, found {}",
                    json_kind(item)
                ),
            );
            ok = false;
            continue;
        };
        let text = |name: &str| match taint.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(other) => Err(json_kind(other)),
        };
        let key = match text("key") {
            Ok(Some(k)) if !k.is_empty() && k.len() <= 253 && key_re.is_match(k) => Some(k),
            Ok(Some(k)) => {
                c.violation(
                    FIELD,
                    format!(
                        "taint {i}: key {} is not valid: [prefix/]name of at most 253 characters, the name 1–63 letters, digits, '-', '_' or '.' starting and ending with a letter or digit",
                        quoted(k)
                    ),
                );
                None
            }
            Ok(None) => {
                c.violation(FIELD, format!("taint {i}: key is required"));
                None
            }
            Err(found) => {
                c.violation(
                    FIELD,
                    format!("taint {i}: key must be a string, found {found}"),
                );
                None
            }
        };
        let value = match text("value") {
            Ok(None) => Some(None),
            Ok(Some(v)) if v.len() <= 253 && value_re.is_match(v) => Some(Some(v)),
            Ok(Some(v)) => {
                c.violation(
                    FIELD,
                    format!(
                        "taint {i}: value {} is not valid: at most 253 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
                        quoted(v)
                    ),
                );
                None
            }
            Err(found) => {
                c.violation(
                    FIELD,
                    format!("taint {i}: value must be a string, found {found}"),
                );
                None
            }
        };
        let effect = match text("effect") {
            Ok(Some(e @ ("NoSchedule" | "PreferNoSchedule" | "NoExecute"))) => Some(e),
            Ok(Some(e)) => {
                c.violation(
                    FIELD,
                    format!(
                        "taint {i}: effect {} is not valid: expected NoSchedule, PreferNoSchedule or NoExecute",
                        quoted(e)
                    ),
                );
                None
            }
            Ok(None) => {
                c.violation(
                    FIELD,
                    format!(
                        "taint {i}: effect is required: NoSchedule, PreferNoSchedule or NoExecute"
                    ),
                );
                None
            }
            Err(found) => {
                c.violation(
                    FIELD,
                    format!("taint {i}: effect must be a string, found {found}"),
                );
                None
            }
        };
        match (key, value, effect) {
            (Some(key), Some(value), Some(effect)) => taints.push(Taint {
                key: key.to_owned(),
                value: value.filter(|v| !v.is_empty()).map(str::to_owned),
                effect: effect.to_owned(),
            }),
            _ => ok = false,
        }
    }
    ok.then_some(taints)
}

/// `platform.gcp.networkTags` / `network_tags` (`field`): a list of 1–64 distinct GCP resource
/// names (an empty list is not set).
fn network_tags(c: &mut Checker<'_>, field: &'static str) -> Option<Vec<String>> {
    let list = match c.get(field) {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(other) => {
            c.violation(
                field,
                format!("must be a list of tag names, found {}", json_kind(other)),
            );
            return None;
        }
    };
    if list.len() > 64 {
        c.violation(
            field,
            format!("has {} tags; at most 64 are allowed", list.len()),
        );
        return None;
    }
    let mut tags = Vec::new();
    let mut ok = true;
    for tag in list {
        let Some(tag) = tag.as_str() else {
            c.violation(
                field,
                format!("every tag must be a string, found {}", json_kind(tag)),
            );
            ok = false;
            continue;
        };
        let valid = c.check(
            field,
            tag,
            &Rule {
                min: 1,
                max: 63,
                pattern: gcp_resource_name,
                expected: "network tag names of 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen",
            },
        );
        if valid && tags.iter().any(|t| t == tag) {
            c.violation(field, format!("lists {} twice", quoted(tag)));
            ok = false;
        }
        ok &= valid;
        tags.push(tag.to_owned());
    }
    ok.then_some(tags)
}

/// `platform.gcp.resourceLabels` / `resource_labels` (`field`): an object of 1–60 GCP labels (key → value), keys not starting
/// with `goog`, values `""` or starting with a lowercase letter; sorted by key.
fn resource_labels(c: &mut Checker<'_>, field: &'static str) -> Option<Vec<(String, String)>> {
    let map = match c.get(field) {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Object(map)) => map,
        Some(other) => {
            c.violation(
                field,
                format!(
                    "must be an object of labels {{\"key\": \"value\"}}, found {}",
                    json_kind(other)
                ),
            );
            return None;
        }
    };
    if map.len() > 60 {
        c.violation(
            field,
            format!("has {} labels; at most 60 are allowed", map.len()),
        );
        return None;
    }
    let mut labels = Vec::new();
    let mut ok = true;
    for (key, value) in map {
        let key_ok = c.check(
            field,
            key,
            &Rule {
                min: 1,
                max: 63,
                pattern: || regex!(r"^[a-z]([_a-z0-9-]{0,61}[a-z0-9])?$"),
                expected: "label keys of 1–63 lowercase letters, digits, '_' or '-', starting with a letter and ending with a letter or digit",
            },
        );
        if key_ok && key.starts_with("goog") {
            c.violation(
                field,
                format!(
                    "label key {} starts with the reserved prefix goog",
                    quoted(key)
                ),
            );
            ok = false;
        }
        let value = match value {
            Value::String(s) => s.as_str(),
            other => {
                c.violation(
                    field,
                    format!(
                        "the value of {} must be a string, found {}",
                        quoted(key),
                        json_kind(other)
                    ),
                );
                ok = false;
                continue;
            }
        };
        let value_ok = value.is_empty()
            || c.check(
                field,
                value,
                &Rule {
                    min: 1,
                    max: 63,
                    pattern: || regex!(r"^[a-z]([_a-z0-9-]{0,61}[a-z0-9])?$"),
                    expected: "label values empty or of 1–63 lowercase letters, digits, '_' or '-', starting with a letter and ending with a letter or digit",
                },
            );
        ok &= key_ok && value_ok;
        labels.push((key.clone(), value.to_owned()));
    }
    labels.sort();
    ok.then_some(labels)
}

/// A valid NodePool input for tests: `example-nodepool.json`'s shape with a UUIDv7 id, the
/// longest name the API allows (15) and a subnet.
/// The readers' `Read` as this module's `Result<_, ()>` (until it reads through them too).
impl<'a> Checker<'a> {
    fn optional_checked_unit(
        &mut self,
        field: &'static str,
        rule: &Rule,
    ) -> Result<Option<&'a str>, ()> {
        let r: Read<Option<&'a str>> = self.optional_checked(field, rule);
        r.map_err(|Invalid| ())
    }
}

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
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::json;

    use super::fixture::{CLUSTER_ID, ID, NAME, raw};
    use super::*;

    fn violations(edit: impl FnOnce(&mut Map<String, Value>)) -> Vec<SpecViolation> {
        let mut spec = raw();
        edit(&mut spec);
        NodePoolSpec::validate(ID, CLUSTER_ID, Some(NAME), &spec).unwrap_err()
    }

    fn fields(v: &[SpecViolation]) -> Vec<&str> {
        v.iter().map(|v| v.field).collect()
    }

    fn set(spec: &mut Map<String, Value>, path: &str, value: Value) {
        let mut parts: Vec<&str> = path.split('.').collect();
        let last = parts.pop().unwrap();
        let mut object = spec;
        for part in parts {
            object = object
                .entry(part)
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .unwrap();
        }
        object.insert(last.to_owned(), value);
    }

    #[test]
    fn the_example_shape_validates() {
        let spec = fixture::spec();
        assert_eq!(spec.platform, PlatformType::Gcp);
        assert_eq!(spec.scaling, Scaling::Replicas(3));
        assert_eq!(spec.upgrade_type, UpgradeType::Replace);
        assert_eq!(spec.arch, "amd64");
        let gcp = spec.gcp.unwrap();
        assert_eq!(gcp.machine_type, "n2-standard-8");
        assert_eq!(gcp.boot_disk_size_gb, Some(128));
        assert_eq!(gcp.subnet, None);
    }

    #[test]
    fn the_upstream_example_nodepool_validates() {
        let Some(dir) =
            job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/hyperfleet")
        else {
            return;
        };
        let text = std::fs::read_to_string(dir.join("example-nodepool.json")).unwrap();
        let input = NodePoolInput::from_json(&text).unwrap();
        assert_eq!(
            input.cluster_id.as_deref(),
            Some("01a01e72-f3c3-73a1-9b7c-2e9d4f6a8053")
        );
        assert_eq!(input.generation, Some(1));
        let spec = NodePoolSpec::validate(
            input.id.as_deref().unwrap(),
            input.cluster_id.as_deref().unwrap(),
            input.name.as_deref(),
            &input.spec,
        )
        .unwrap();
        assert_eq!(spec.name, "workers-a");
        assert_eq!(spec.scaling, Scaling::Replicas(3));
    }

    #[test]
    fn none_platform_defaults_to_in_place_and_refuses_gcp_fields() {
        let mut spec = raw();
        set(&mut spec, "platform", json!({"type": "none"}));
        let ok = NodePoolSpec::validate(ID, CLUSTER_ID, Some(NAME), &spec).unwrap();
        assert_eq!(ok.platform, PlatformType::None);
        assert_eq!(ok.upgrade_type, UpgradeType::InPlace);
        assert!(ok.gcp.is_none());
        let v = violations(|s| set(s, "platform.type", json!("None")));
        assert_eq!(fields(&v), ["platform.gcp"]);
    }

    #[test]
    fn every_bad_field_is_named_at_once() {
        let v = violations(|s| {
            set(s, "platform.gcp.machine_type", json!("N2_STANDARD"));
            set(s, "platform.gcp.zone", json!("europe-west2"));
            set(s, "platform.gcp.boot_disk_size_gb", json!(10));
            set(s, "platform.gcp.boot_disk_type", json!("ssd"));
            set(s, "platform.gcp.subnet", json!("-bad"));
            set(s, "platform.gcp.provisioning_model", json!("spot"));
            set(
                s,
                "platform.gcp.service_account_email",
                json!("me@example.com"),
            );
            set(s, "platform.gcp.network_tags", json!(["ok", "Bad", "ok"]));
            set(
                s,
                "platform.gcp.resource_labels",
                json!({"googkey": "v", "k": "Upper"}),
            );
            set(s, "release.image", json!("has space:1"));
            set(s, "arch", json!("s390x"));
            set(s, "management.upgrade_type", json!("Rolling"));
            set(s, "management.auto_repair", json!("yes"));
        });
        assert_eq!(
            fields(&v),
            [
                "platform.gcp.machine_type",
                "platform.gcp.zone",
                "platform.gcp.subnet",
                "platform.gcp.boot_disk_size_gb",
                "platform.gcp.boot_disk_type",
                "platform.gcp.service_account_email",
                "platform.gcp.provisioning_model",
                "platform.gcp.network_tags",
                "platform.gcp.network_tags",
                "platform.gcp.resource_labels",
                "platform.gcp.resource_labels",
                "release.image",
                "arch",
                "management.upgrade_type",
                "management.auto_repair",
            ]
        );
        assert!(v[1].problem.contains("region-zone"), "{}", v[1]);
    }

    #[test]
    fn replicas_xor_autoscaling_with_min_at_least_one() {
        let both = violations(|s| set(s, "autoscaling", json!({"min": 1, "max": 3})));
        assert_eq!(fields(&both), ["autoscaling"]);
        let neither = violations(|s| {
            s.remove("replicas");
        });
        assert_eq!(fields(&neither), ["replicas"]);
        let zero_min = violations(|s| {
            s.remove("replicas");
            set(s, "autoscaling", json!({"min": 0, "max": 3}));
        });
        assert_eq!(fields(&zero_min), ["autoscaling.min"]);
        let inverted = violations(|s| {
            s.remove("replicas");
            set(s, "autoscaling", json!({"min": 4, "max": 3}));
        });
        assert_eq!(fields(&inverted), ["autoscaling.max"]);
        let half = violations(|s| {
            s.remove("replicas");
            set(s, "autoscaling", json!({"min": 2}));
        });
        assert_eq!(fields(&half), ["autoscaling.max"]);
        let ok = fixture::spec_with(|s| {
            s.remove("replicas");
            set(s, "autoscaling", json!({"min": 2, "max": 5}));
        });
        assert_eq!(ok.scaling, Scaling::Autoscaling { min: 2, max: 5 });
        for bad in [json!(-1), json!(2.5), json!("3"), json!(2147483648_i64)] {
            let v = violations(|s| set(s, "replicas", bad.clone()));
            assert_eq!(fields(&v), ["replicas"], "{bad}");
        }
        assert_eq!(
            fixture::spec_with(|s| set(s, "replicas", json!(0))).scaling,
            Scaling::Replicas(0)
        );
    }

    #[test]
    fn names_follow_the_hyperfleet_rule() {
        let spec = raw();
        for (name, ok) in [
            ("abc", true),
            ("workers-europe2", true),
            ("ab", false),
            ("workers-europe-2", false),
            ("Workers", false),
            ("-workers", false),
        ] {
            let result = NodePoolSpec::validate(ID, CLUSTER_ID, Some(name), &spec);
            assert_eq!(result.is_ok(), ok, "{name}");
        }
        let unnamed = NodePoolSpec::validate(ID, CLUSTER_ID, None, &spec).unwrap_err();
        assert_eq!(fields(&unnamed), ["name"]);
    }

    #[test]
    fn checks_against_the_hosted_cluster() {
        let spec = fixture::spec();
        let hc = |platform: &str, region: &str, version: &str| ControlPlane {
            name: "prod-eu-1".into(),
            platform: platform.into(),
            region: Some(region.into()),
            psc_subnet: Some("hcp-psc-subnet".into()),
            release_image: Some(format!(
                "quay.io/openshift-release-dev/ocp-release:{version}-x86_64"
            )),
            version: version.into(),
        };
        assert!(
            spec.check_against(&hc("GCP", "europe-west2", "4.17.0"))
                .is_empty()
        );
        assert!(
            spec.check_against(&hc("GCP", "europe-west2", "4.18.2"))
                .is_empty()
        );
        assert!(
            spec.check_against(&hc("GCP", "europe-west2", ""))
                .is_empty()
        );
        let v = spec.check_against(&hc("GCP", "us-central1", "4.17.0"));
        assert_eq!(fields(&v), ["platform.gcp.zone"]);
        let v = spec.check_against(&hc("None", "", "4.17.0"));
        assert_eq!(fields(&v), ["platform.type"]);
        let v = spec.check_against(&hc("GCP", "europe-west2", "4.16.9"));
        assert_eq!(fields(&v), ["release.image"]);
        assert!(
            v[0].problem.contains("newer than the control plane"),
            "{}",
            v[0]
        );
        let v = spec.check_against(&hc("GCP", "europe-west2", "4.21.0"));
        assert_eq!(fields(&v), ["release.image"]);
        // Within the documented skew: HyperShift decides.
        assert!(
            spec.check_against(&hc("GCP", "europe-west2", "4.20.1"))
                .is_empty()
        );
        let no_subnet = ControlPlane {
            psc_subnet: None,
            ..hc("GCP", "europe-west2", "4.17.0")
        };
        assert_eq!(
            fields(&spec.check_against(&no_subnet)),
            ["platform.gcp.subnet"]
        );
        let own_subnet = fixture::spec_with(|s| set(s, "platform.gcp.subnet", json!("workers")));
        assert!(own_subnet.check_against(&no_subnet).is_empty());
        let none = fixture::spec_with(|s| set(s, "platform", json!({"type": "none"})));
        assert!(
            none.check_against(&hc("GCP", "europe-west2", "4.17.0"))
                .is_empty()
        );
    }

    #[test]
    fn release_versions_are_read_from_tags() {
        assert_eq!(
            release_version("quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64"),
            Some((4, 19, 3))
        );
        assert_eq!(
            release_version("registry:5000/ocp-release:4.18.0-rc.1-multi"),
            Some((4, 18, 0))
        );
        assert_eq!(release_version("quay.io/ocp-release@sha256:abc"), None);
        assert_eq!(release_version("quay.io/ocp-release:latest"), None);
        assert_eq!(parse_version("4.17.0"), Some((4, 17, 0)));
        assert_eq!(parse_version(""), None);
    }

    #[test]
    fn objects_and_bare_specs_are_read() {
        let object = NodePoolInput::from_value(json!({
            "id": ID, "name": NAME, "generation": 4,
            "owner_references": {"id": CLUSTER_ID, "kind": "Cluster", "href": "/x"},
            "deleted_time": "2026-11-26T10:00:00Z",
            "spec": raw(),
        }))
        .unwrap();
        assert_eq!(object.cluster_id.as_deref(), Some(CLUSTER_ID));
        assert_eq!(object.deleted_time.as_deref(), Some("2026-11-26T10:00:00Z"));
        let bare = NodePoolInput::from_value(Value::Object(raw())).unwrap();
        assert_eq!(bare.id, None);
        assert!(NodePoolInput::from_value(json!([])).is_err());
        let bad = NodePoolInput::from_value(json!({"owner_references": "x", "spec": {}}));
        assert!(bad.unwrap_err().to_string().contains("owner_references"));
        let bad = NodePoolInput::from_value(json!({"generation": "1", "spec": {}}));
        assert!(bad.unwrap_err().to_string().contains("generation"));
    }

    // ---- HyperFleet's shape ---------------------------------------------------------------

    use super::fixture::{hyperfleet_raw, hyperfleet_spec_with};

    fn hyperfleet_violations(edit: impl FnOnce(&mut Map<String, Value>)) -> Vec<SpecViolation> {
        let mut spec = hyperfleet_raw();
        edit(&mut spec);
        NodePoolSpec::validate(ID, CLUSTER_ID, Some(NAME), &spec).unwrap_err()
    }

    #[test]
    fn hyperfleet_shape_maps_every_model_key() {
        let spec = hyperfleet_spec_with(|_| {});
        assert_eq!(spec.shape, Shape::HyperFleet);
        assert_eq!(spec.cluster_name.as_deref(), Some("prod-eu-1"));
        assert_eq!(spec.scaling, Scaling::Replicas(3));
        assert_eq!(spec.upgrade_type, UpgradeType::Replace);
        let gcp = spec.gcp.unwrap();
        assert_eq!(gcp.machine_type, "n2-standard-8");
        assert_eq!(gcp.zone.as_deref(), Some("europe-west2-b"));
        assert_eq!(gcp.boot_disk_size_gb, Some(128));
        assert_eq!(gcp.boot_disk_type.as_deref(), Some("pd-ssd"));
        assert_eq!(gcp.provisioning_model.as_deref(), Some("Preemptible"));
        assert_eq!(
            gcp.node_labels,
            [
                ("node.example.com/pool".to_owned(), "workers".to_owned()),
                ("team".to_owned(), "platform".to_owned())
            ]
        );
        assert_eq!(
            gcp.taints,
            [
                Taint {
                    key: "dedicated".into(),
                    value: Some("gpu".into()),
                    effect: "NoSchedule".into()
                },
                Taint {
                    key: "example.com/batch".into(),
                    value: None,
                    effect: "PreferNoSchedule".into()
                }
            ]
        );
        // preemptible false is the default model, not sent.
        let standard = hyperfleet_spec_with(|s| set(s, "platform.gcp.preemptible", json!(false)));
        assert_eq!(standard.gcp.unwrap().provisioning_model, None);
    }

    #[test]
    fn hyperfleet_shape_defaults_what_the_model_leaves_optional() {
        let mut raw = Map::new();
        set(&mut raw, "platform", json!({"type": "gcp", "gcp": {}}));
        set(&mut raw, "replicas", json!(2));
        let spec = NodePoolSpec::validate(ID, CLUSTER_ID, Some(NAME), &raw).unwrap();
        assert_eq!(spec.shape, Shape::HyperFleet);
        assert_eq!(spec.release_image, None);
        assert_eq!(spec.cluster_name, None);
        let gcp = spec.gcp.unwrap();
        assert_eq!(gcp.machine_type, DEFAULT_MACHINE_TYPE);
        assert_eq!(gcp.zone, None);
        // A GCP NodePool needs platform.gcp, even empty.
        let mut bare = raw.clone();
        set(&mut bare, "platform", json!({"type": "gcp"}));
        let v = NodePoolSpec::validate(ID, CLUSTER_ID, Some(NAME), &bare).unwrap_err();
        assert_eq!(fields(&v), ["platform.gcp"]);
        assert!(v[0].problem.contains("{} takes every default"), "{}", v[0]);
    }

    #[test]
    fn synonyms_agree_or_are_refused_naming_both() {
        let same = hyperfleet_spec_with(|s| {
            set(s, "replicas", json!(3));
            set(s, "platform.gcp.instanceType", json!("n2-standard-8"));
        });
        assert_eq!(same.scaling, Scaling::Replicas(3));
        let e2e = hyperfleet_spec_with(|s| {
            s.remove("nodeCount");
            set(s, "replicas", json!(2));
            s["platform"]["gcp"]
                .as_object_mut()
                .unwrap()
                .remove("machineType");
            set(s, "platform.gcp.instanceType", json!("n1-standard-8"));
        });
        assert_eq!(e2e.scaling, Scaling::Replicas(2));
        assert_eq!(e2e.gcp.unwrap().machine_type, "n1-standard-8");
        let v = hyperfleet_violations(|s| {
            set(s, "replicas", json!(5));
            set(s, "platform.gcp.instanceType", json!("n1-standard-8"));
        });
        assert_eq!(fields(&v), ["platform.gcp.instanceType", "nodeCount"]);
        assert!(v[0].problem.contains("\"n2-standard-8\""), "{}", v[0]);
        assert!(v[1].problem.contains("is 3 but replicas is 5"), "{}", v[1]);
    }

    #[test]
    fn one_zone_only() {
        let none = hyperfleet_spec_with(|s| set(s, "platform.gcp.zones", json!([])));
        assert_eq!(none.gcp.unwrap().zone, None);
        for (bad, needle) in [
            (json!(["europe-west2-a", "europe-west2-b"]), "lists 2 zones"),
            (json!("europe-west2-a"), "must be a list of one zone"),
            (json!([7]), "must list zone names"),
            (json!(["europe-west2"]), "region-zone"),
        ] {
            let v = hyperfleet_violations(|s| set(s, "platform.gcp.zones", bad.clone()));
            assert_eq!(fields(&v), ["platform.gcp.zones"], "{bad}");
            assert!(v[0].problem.contains(needle), "{bad}: {}", v[0]);
        }
    }

    #[test]
    fn hyperfleet_autoscaling() {
        let auto = |a: Value| {
            move |s: &mut Map<String, Value>| {
                s.insert("autoscaling".into(), a);
            }
        };
        let on = hyperfleet_spec_with(auto(
            json!({"enabled": true, "minNodes": 1, "maxNodes": 10}),
        ));
        assert_eq!(on.scaling, Scaling::Autoscaling { min: 1, max: 10 });
        let without_count = hyperfleet_spec_with(|s| {
            s.remove("nodeCount");
            auto(json!({"enabled": true, "minNodes": 2, "maxNodes": 2}))(s);
        });
        assert_eq!(
            without_count.scaling,
            Scaling::Autoscaling { min: 2, max: 2 }
        );
        let off = hyperfleet_spec_with(auto(
            json!({"enabled": false, "minNodes": 1, "maxNodes": 10}),
        ));
        assert_eq!(off.scaling, Scaling::Replicas(3));
        for (a, field, needle) in [
            (
                json!({"enabled": true, "minNodes": 5, "maxNodes": 4}),
                "autoscaling.maxNodes",
                "at least autoscaling.minNodes (5)",
            ),
            (
                json!({"enabled": true, "minNodes": 4, "maxNodes": 10}),
                "nodeCount",
                "outside",
            ),
            (
                json!({"enabled": true, "minNodes": 0, "maxNodes": 10}),
                "autoscaling.minNodes",
                "scaling from zero",
            ),
            (
                json!({"enabled": true, "maxNodes": 10}),
                "autoscaling.minNodes",
                "is required",
            ),
            (
                json!({"enabled": true, "minNodes": 1}),
                "autoscaling.maxNodes",
                "is required",
            ),
            (
                json!({"minNodes": 1, "maxNodes": 10}),
                "autoscaling.enabled",
                "is required",
            ),
            (
                json!({"enabled": "yes"}),
                "autoscaling.enabled",
                "true or false",
            ),
            (
                json!({"enabled": true, "minNodes": 1.5, "maxNodes": 10}),
                "autoscaling.minNodes",
                "whole number",
            ),
            (
                json!({"enabled": true, "minNodes": 1, "maxNodes": 10, "targetCPUUtilization": 80}),
                "autoscaling.targetCPUUtilization",
                "only a minimum and a maximum",
            ),
            (
                json!({"enabled": false, "scaleDownDelay": "10m"}),
                "autoscaling.scaleDownDelay",
                "remove it",
            ),
            (json!([1, 10]), "autoscaling", "must be an object"),
        ] {
            let v = hyperfleet_violations(auto(a.clone()));
            assert_eq!(fields(&v), [field], "{a}");
            assert!(v[0].problem.contains(needle), "{a}: {}", v[0]);
        }
        let no_size = hyperfleet_violations(|s| {
            s.remove("nodeCount");
        });
        assert_eq!(fields(&no_size), ["nodeCount"]);
    }

    #[test]
    fn counts_are_whole_numbers_in_range() {
        for bad in [
            json!(-1),
            json!(2.5),
            json!("3"),
            json!(2147483648_i64),
            json!(true),
        ] {
            let v = hyperfleet_violations(|s| set(s, "nodeCount", bad.clone()));
            assert_eq!(fields(&v), ["nodeCount"], "{bad}");
            let v = hyperfleet_violations(|s| {
                s.remove("nodeCount");
                set(s, "replicas", bad.clone());
            });
            assert_eq!(fields(&v), ["replicas"], "{bad}");
        }
        let max = hyperfleet_spec_with(|s| set(s, "nodeCount", json!(MAX_REPLICAS)));
        assert_eq!(max.scaling, Scaling::Replicas(MAX_REPLICAS));
    }

    #[test]
    fn wrong_types_are_named_by_their_hyperfleet_path() {
        let cases: Vec<(&str, Value, &str)> = vec![
            ("clusterName", json!(5), "must be a string"),
            ("clusterName", json!("Prod_EU"), "is not valid"),
            (
                "platform.gcp",
                json!("n2"),
                "must be an object {machineType",
            ),
            (
                "platform.gcp.machineType",
                json!(["n2"]),
                "must be a string",
            ),
            (
                "platform.gcp.machineType",
                json!("N2_STANDARD"),
                "GCE machine type",
            ),
            (
                "platform.gcp.diskSize",
                json!(10),
                "between 20 and 65536 GB (got 10)",
            ),
            ("platform.gcp.diskSize", json!("100"), "whole number"),
            (
                "platform.gcp.diskType",
                json!("ssd"),
                "pd-standard, pd-ssd or pd-balanced",
            ),
            ("platform.gcp.preemptible", json!("yes"), "true or false"),
            ("platform.gcp.labels", json!(["team"]), "must be an object"),
            (
                "platform.gcp.labels",
                json!({"team": 1}),
                "must be a string",
            ),
            (
                "platform.gcp.labels",
                json!({"-team": "x"}),
                "not a Kubernetes label key",
            ),
            (
                "platform.gcp.labels",
                json!({"team": "a b"}),
                "not a Kubernetes label value",
            ),
            ("platform.gcp.taints", json!({"key": "a"}), "must be a list"),
            (
                "platform.gcp.taints",
                json!([{"key": "a", "effect": "Never"}]),
                "taint 0: effect \"Never\"",
            ),
            (
                "platform.gcp.taints",
                json!([{"effect": "NoSchedule"}]),
                "taint 0: key is required",
            ),
            (
                "platform.gcp.taints",
                json!([{"key": "a b", "effect": "NoSchedule"}]),
                "taint 0: key",
            ),
            (
                "platform.gcp.taints",
                json!(["a"]),
                "taint 0 must be an object",
            ),
            (
                "platform.gcp.accelerators",
                json!([{"type": "nvidia-tesla-t4", "count": 1}]),
                "no accelerator setting",
            ),
            ("platform.gcp.accelerators", json!("t4"), "must be a list"),
            (
                "platform.gcp.serviceAccount",
                json!("sa@x"),
                "must be an object {email}",
            ),
            (
                "platform.gcp.serviceAccount.email",
                json!("me@example.com"),
                "service account",
            ),
            (
                "platform.gcp.provisioningModel",
                json!("Spot"),
                "preemptible true means Preemptible",
            ),
            (
                "platform.gcp.networkTags",
                json!("workers"),
                "must be a list",
            ),
            (
                "platform.gcp.resourceLabels",
                json!({"googkey": "v"}),
                "reserved prefix goog",
            ),
            ("release.image", json!("has space:1"), "is not valid"),
            (
                "management.upgradeType",
                json!("Rolling"),
                "Replace or InPlace",
            ),
            ("management.autoRepair", json!("yes"), "true or false"),
        ];
        for (path, bad, needle) in cases {
            let v = hyperfleet_violations(|s| set(s, path, bad.clone()));
            // A provisioning model that contradicts preemptible is named by preemptible.
            let expected = if path == "platform.gcp.provisioningModel" {
                "platform.gcp.preemptible"
            } else {
                path
            };
            assert_eq!(fields(&v), [expected], "{path} = {bad}");
            assert!(v[0].problem.contains(needle), "{path} = {bad}: {}", v[0]);
        }
        let too_many: Vec<Value> = (0..=MAX_TAINTS)
            .map(|i| json!({"key": format!("k{i}"), "effect": "NoSchedule"}))
            .collect();
        let v = hyperfleet_violations(|s| set(s, "platform.gcp.taints", json!(too_many)));
        assert_eq!(fields(&v), ["platform.gcp.taints"]);
        assert!(v[0].problem.contains("at most 50"), "{}", v[0]);
    }

    #[test]
    fn mixing_the_two_shapes_is_refused_naming_the_renames() {
        let v = hyperfleet_violations(|s| {
            set(s, "platform.gcp.boot_disk_size_gb", json!(128));
            set(s, "management.upgrade_type", json!("Replace"));
        });
        assert_eq!(fields(&v), ["spec"]);
        let problem = &v[0].problem;
        for needle in [
            "clusterName",
            "nodeCount",
            "platform.gcp.machineType",
            "platform.gcp.boot_disk_size_gb → platform.gcp.diskSize",
            "management.upgrade_type → management.upgradeType",
        ] {
            assert!(problem.contains(needle), "{needle}: {problem}");
        }
        // The flat shape alone is still read as before.
        assert_eq!(fixture::spec().shape, Shape::Flat);
    }

    #[test]
    fn platform_none_in_hyperfleet_shape() {
        let none = hyperfleet_spec_with(|s| {
            set(s, "platform", json!({"type": "none"}));
        });
        assert_eq!(none.platform, PlatformType::None);
        assert_eq!(none.upgrade_type, UpgradeType::InPlace);
        let v = hyperfleet_violations(|s| set(s, "platform.type", json!("none")));
        assert_eq!(fields(&v), ["platform.gcp"]);
    }

    #[test]
    fn hyperfleet_checks_against_the_hosted_cluster() {
        let hc = ControlPlane {
            name: "prod-eu-1".into(),
            platform: "GCP".into(),
            region: Some("europe-west2".into()),
            psc_subnet: Some("hcp-psc-subnet".into()),
            release_image: Some("quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64".into()),
            version: "4.17.0".into(),
        };
        assert!(hyperfleet_spec_with(|_| {}).check_against(&hc).is_empty());
        let other = hyperfleet_spec_with(|s| set(s, "clusterName", json!("prod-us-1")));
        let v = other.check_against(&hc);
        assert_eq!(fields(&v), ["clusterName"]);
        assert!(v[0].problem.contains("\"prod-us-1\""), "{}", v[0]);
        assert!(v[0].problem.contains("\"prod-eu-1\""), "{}", v[0]);
        let far = hyperfleet_spec_with(|s| set(s, "platform.gcp.zones", json!(["us-central1-a"])));
        assert_eq!(fields(&far.check_against(&hc)), ["platform.gcp.zones"]);
        // Defaults need the HostedCluster's region and release.
        let defaults = hyperfleet_spec_with(|s| {
            s.remove("release");
            s["platform"]["gcp"]
                .as_object_mut()
                .unwrap()
                .remove("zones");
        });
        assert!(defaults.check_against(&hc).is_empty());
        let bare = ControlPlane {
            region: None,
            release_image: None,
            ..hc.clone()
        };
        assert_eq!(
            fields(&defaults.check_against(&bare)),
            ["platform.gcp.zones", "release.image"]
        );
    }
}
