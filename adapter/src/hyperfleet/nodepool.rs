//! The NodePool input: a HyperFleet NodePool object (`{id, name, generation, owner_references,
//! spec, deleted_time}`, `hyperfleet-framework.md` §7.1) or a bare `spec`, and its validation
//! into a typed [`NodePoolSpec`] by the NodePool CRD's own rules (`hypershift-api.md` §3).
//!
//! The spec is nested as in the HyperFleet NodePool example (`fixtures/hyperfleet/
//! example-nodepool.json`): `platform.type` (`gcp` or `none`), `platform.gcp.{machine_type, zone,
//! boot_disk_size_gb, …}`, `release.image`, `replicas`. The other fields are the HyperShift
//! fields in snake_case: `autoscaling.{min, max}`, `arch`, `management.{upgrade_type,
//! auto_repair}`, `platform.gcp.{subnet, image, boot_disk_type, service_account_email,
//! provisioning_model, network_tags, resource_labels}`. What the CRD checks only against the
//! HostedCluster (zone in its region, a GCP NodePool on a GCP HostedCluster, the release not
//! newer than the control plane's) is checked by [`NodePoolSpec::check_against`] once the
//! HostedCluster is known.

use serde_json::{Map, Value};

use super::resource::Resource;
use super::spec::{
    Checker, Rule, SpecViolation, dns_label, gcp_resource_name, json_kind, quoted,
    service_account_email,
};

/// HyperFleet NodePool names: 3–15 characters of a lowercase DNS label (entity config,
/// `hyperfleet-framework.md` §7.1).
pub const MIN_NAME_LEN: usize = 3;
pub const MAX_NAME_LEN: usize = 15;
/// Most replicas a NodePool takes (`int32`).
pub const MAX_REPLICAS: i64 = i32::MAX as i64;

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

/// `platform.gcp` of a GCP NodePool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcpNodePool {
    pub machine_type: String,
    pub zone: String,
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
}

/// A validated NodePool spec: every value here is accepted by the NodePool CRD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePoolSpec {
    /// The HyperFleet NodePool id.
    pub nodepool_id: String,
    /// The owning cluster's id.
    pub cluster_id: String,
    /// The HyperFleet NodePool name.
    pub name: String,
    pub platform: PlatformType,
    /// Set for [`PlatformType::Gcp`].
    pub gcp: Option<GcpNodePool>,
    pub scaling: Scaling,
    pub release_image: String,
    /// `amd64` or `arm64`.
    pub arch: String,
    pub upgrade_type: UpgradeType,
    pub auto_repair: Option<bool>,
}

/// What the HostedCluster a NodePool joins is, as the control plane's work holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlPlane {
    /// `spec.platform.type` (`GCP`, `None`, …).
    pub platform: String,
    /// `spec.platform.gcp.region`, for a GCP HostedCluster.
    pub region: Option<String>,
    /// `spec.platform.gcp.networkConfig.privateServiceConnectSubnet.name`: the subnet a GCP
    /// NodePool without `platform.gcp.subnet` uses (the upstream CLI's default).
    pub psc_subnet: Option<String>,
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
        let name = identity(&mut c, name);
        let platform = platform_type(&mut c);
        let gcp = match platform {
            Some(PlatformType::Gcp) => gcp(&mut c),
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
        let scaling = scaling(&mut c);
        let release_image = c.required_checked(
            "release.image",
            &Rule {
                min: 1,
                max: 253,
                pattern: regex!(r"^[0-9A-Za-z_]+\S+$"),
                expected: "the release image pullspec of the workers, without whitespace, not newer than the cluster's (e.g. quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64)",
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
        let upgrade_type = match c.optional("management.upgrade_type") {
            None => platform.map(|p| match p {
                // The upstream GCP CLI's choice; for None the seed 002 pool that worked.
                PlatformType::Gcp => UpgradeType::Replace,
                PlatformType::None => UpgradeType::InPlace,
            }),
            Some("Replace") => Some(UpgradeType::Replace),
            Some("InPlace") => Some(UpgradeType::InPlace),
            Some(other) => {
                c.violation(
                    "management.upgrade_type",
                    format!(
                        "{} is not valid: expected Replace or InPlace (it cannot change after creation)",
                        quoted(other)
                    ),
                );
                None
            }
        };
        let auto_repair = match c.get("management.auto_repair") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                c.violation(
                    "management.auto_repair",
                    format!("must be true or false, found {}", json_kind(other)),
                );
                None
            }
        };
        let nodepool_id = c
            .check(
                "id",
                nodepool_id,
                &Rule {
                    min: 1,
                    max: 63,
                    pattern: dns_label(),
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
                    pattern: dns_label(),
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
            Some(platform),
            Some(scaling),
            Some(release_image),
            Some(arch),
            Some(upgrade_type),
        ) = (
            nodepool_id,
            cluster_id,
            name,
            platform,
            scaling,
            release_image,
            arch,
            upgrade_type,
        )
        else {
            // Every `None` above comes with a violation; this is a safety net, not a path.
            return Err(vec![SpecViolation {
                field: "spec",
                problem: "could not be validated (internal error); please report this".to_owned(),
            }]);
        };
        Ok(NodePoolSpec {
            nodepool_id: nodepool_id.to_owned(),
            cluster_id: cluster_id.to_owned(),
            name: name.to_owned(),
            platform,
            gcp,
            scaling,
            release_image: release_image.to_owned(),
            arch: arch.to_owned(),
            upgrade_type,
            auto_repair,
        })
    }

    /// What the NodePool CRD and operator check against the HostedCluster it joins: a GCP
    /// NodePool needs a GCP HostedCluster and a zone in its region; the release may not be newer
    /// than the control plane's, nor more than [`MAX_MINOR_SKEW`] minors older (only when both
    /// versions are known).
    pub fn check_against(&self, hc: &ControlPlane) -> Vec<SpecViolation> {
        let mut violations = Vec::new();
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
                if let Some(region) = &hc.region
                    && !gcp.zone.starts_with(&format!("{region}-"))
                {
                    violations.push(SpecViolation {
                        field: "platform.gcp.zone",
                        problem: format!(
                            "{} is not in the cluster's region {region}: use a zone {region}-<letter> (e.g. {region}-a)",
                            quoted(&gcp.zone)
                        ),
                    });
                }
                if gcp.subnet.is_none() && hc.psc_subnet.is_none() {
                    violations.push(SpecViolation {
                        field: "platform.gcp.subnet",
                        problem: "is required: the cluster's HostedCluster has no Private Service Connect subnet to default to; name a subnet of the cluster's VPC in its region".to_owned(),
                    });
                }
            }
        }
        if let (Some(np), Some(cp)) = (
            release_version(&self.release_image),
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

/// The NodePool's HyperFleet name: required (the NodePool object is named after it), 3–15
/// characters of a lowercase DNS label.
fn identity<'a>(c: &mut Checker<'_>, name: Option<&'a str>) -> Option<&'a str> {
    let rule = Rule {
        min: MIN_NAME_LEN,
        max: MAX_NAME_LEN,
        pattern: dns_label(),
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
    let value = c.required("platform.type", "gcp or none")?;
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
fn integer(
    c: &mut Checker<'_>,
    field: &'static str,
    min: i64,
    max: i64,
) -> Result<Option<i64>, ()> {
    match c.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_i64() {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            Some(n) => {
                c.violation(field, format!("must be between {min} and {max} (got {n})"));
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

/// `replicas` xor `autoscaling.{min, max}`; autoscaling needs min ≥ 1 on GCP and None. The CRD
/// refuses both together and also accepts neither (0 machines); one is required here on purpose:
/// a forgotten size would silently mean a NodePool without workers.
fn scaling(c: &mut Checker<'_>) -> Option<Scaling> {
    let replicas = integer(c, "replicas", 0, MAX_REPLICAS);
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
            let min = integer(c, "autoscaling.min", 1, MAX_REPLICAS);
            let max = integer(c, "autoscaling.max", 1, MAX_REPLICAS);
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

/// `platform.gcp`, by the CRD's `GCPNodePoolPlatform` rules (`hypershift-api.md` §3.4).
fn gcp(c: &mut Checker<'_>) -> Option<GcpNodePool> {
    if let Some(v) = c
        .get("platform.gcp")
        .filter(|v| !v.is_null() && !v.is_object())
    {
        let found = json_kind(v);
        c.violation(
            "platform.gcp",
            format!("must be an object {{machine_type, zone, …}}, found {found}"),
        );
        return None;
    }
    let machine_type = c.required_checked(
        "platform.gcp.machine_type",
        &Rule {
            min: 1,
            max: 255,
            pattern: regex!(r"^[a-z0-9]+(-[a-z0-9]+)*$"),
            expected: "a GCE machine type such as n2-standard-4 (lowercase letters and digits in '-'-separated words)",
        },
    );
    let zone = c.required_checked(
        "platform.gcp.zone",
        &Rule {
            min: 1,
            max: 63,
            pattern: regex!(r"^[a-z]+(?:-[a-z0-9]+)*-[a-z]$"),
            expected: "a GCP zone in the form region-zone, e.g. us-central1-a",
        },
    );
    let resource = |what: &'static str| Rule {
        min: 1,
        max: 63,
        pattern: gcp_resource_name(),
        expected: what,
    };
    let subnet = c.optional_checked(
        "platform.gcp.subnet",
        &resource("a subnet name of the cluster's VPC in its region: 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen (omit it for the cluster's Private Service Connect subnet)"),
    );
    let image = c.optional_checked(
        "platform.gcp.image",
        &Rule {
            min: 1,
            max: 2048,
            pattern: regex!(r"^\S+$"),
            expected: "an image family path, image path or full image URL without whitespace (omit it for the RHCOS image of the release)",
        },
    );
    let boot_disk_size_gb = integer(c, "platform.gcp.boot_disk_size_gb", 20, 65536);
    let boot_disk_type = match c.optional("platform.gcp.boot_disk_type") {
        None => Ok(None),
        Some(t @ ("pd-standard" | "pd-ssd" | "pd-balanced")) => Ok(Some(t)),
        Some(other) => {
            c.violation(
                "platform.gcp.boot_disk_type",
                format!(
                    "{} is not valid: expected pd-standard, pd-ssd or pd-balanced (omit it for pd-balanced)",
                    quoted(other)
                ),
            );
            Err(())
        }
    };
    let service_account_email = c.optional_checked(
        "platform.gcp.service_account_email",
        &Rule {
            min: 37,
            max: 85,
            pattern: service_account_email(),
            expected: "a Google service account email <name>@<project>.iam.gserviceaccount.com (37–85 characters); omit it for the project's default compute account",
        },
    );
    let provisioning_model = match c.optional("platform.gcp.provisioning_model") {
        None => Ok(None),
        Some(m @ ("Standard" | "Spot" | "Preemptible")) => Ok(Some(m)),
        Some(other) => {
            c.violation(
                "platform.gcp.provisioning_model",
                format!(
                    "{} is not valid: expected Standard, Spot or Preemptible (omit it for Standard)",
                    quoted(other)
                ),
            );
            Err(())
        }
    };
    let network_tags = network_tags(c);
    let resource_labels = resource_labels(c);
    let (
        Some(machine_type),
        Some(zone),
        Ok(subnet),
        Ok(image),
        Ok(boot_disk_size_gb),
        Ok(boot_disk_type),
        Ok(service_account_email),
        Ok(provisioning_model),
        Some(network_tags),
        Some(resource_labels),
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
    )
    else {
        return None;
    };
    Some(GcpNodePool {
        machine_type: machine_type.to_owned(),
        zone: zone.to_owned(),
        subnet: subnet.map(str::to_owned),
        image: image.map(str::to_owned),
        boot_disk_size_gb,
        boot_disk_type: boot_disk_type.map(str::to_owned),
        service_account_email: service_account_email.map(str::to_owned),
        provisioning_model: provisioning_model.map(str::to_owned),
        network_tags,
        resource_labels,
    })
}

/// `platform.gcp.network_tags`: a list of 1–64 distinct GCP resource names (an empty list is
/// not set).
fn network_tags(c: &mut Checker<'_>) -> Option<Vec<String>> {
    const FIELD: &str = "platform.gcp.network_tags";
    let list = match c.get(FIELD) {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(other) => {
            c.violation(
                FIELD,
                format!("must be a list of tag names, found {}", json_kind(other)),
            );
            return None;
        }
    };
    if list.len() > 64 {
        c.violation(
            FIELD,
            format!("has {} tags; at most 64 are allowed", list.len()),
        );
        return None;
    }
    let mut tags = Vec::new();
    let mut ok = true;
    for tag in list {
        let Some(tag) = tag.as_str() else {
            c.violation(
                FIELD,
                format!("every tag must be a string, found {}", json_kind(tag)),
            );
            ok = false;
            continue;
        };
        let valid = c.check(
            FIELD,
            tag,
            &Rule {
                min: 1,
                max: 63,
                pattern: gcp_resource_name(),
                expected: "network tag names of 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen",
            },
        );
        if valid && tags.iter().any(|t| t == tag) {
            c.violation(FIELD, format!("lists {} twice", quoted(tag)));
            ok = false;
        }
        ok &= valid;
        tags.push(tag.to_owned());
    }
    ok.then_some(tags)
}

/// `platform.gcp.resource_labels`: an object of 1–60 GCP labels (key → value), keys not starting
/// with `goog`, values `""` or starting with a lowercase letter; sorted by key.
fn resource_labels(c: &mut Checker<'_>) -> Option<Vec<(String, String)>> {
    const FIELD: &str = "platform.gcp.resource_labels";
    let map = match c.get(FIELD) {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Object(map)) => map,
        Some(other) => {
            c.violation(
                FIELD,
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
            FIELD,
            format!("has {} labels; at most 60 are allowed", map.len()),
        );
        return None;
    }
    let mut labels = Vec::new();
    let mut ok = true;
    for (key, value) in map {
        let key_ok = c.check(
            FIELD,
            key,
            &Rule {
                min: 1,
                max: 63,
                pattern: regex!(r"^[a-z]([_a-z0-9-]{0,61}[a-z0-9])?$"),
                expected: "label keys of 1–63 lowercase letters, digits, '_' or '-', starting with a letter and ending with a letter or digit",
            },
        );
        if key_ok && key.starts_with("goog") {
            c.violation(
                FIELD,
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
                    FIELD,
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
                FIELD,
                value,
                &Rule {
                    min: 1,
                    max: 63,
                    pattern: regex!(r"^[a-z]([_a-z0-9-]{0,61}[a-z0-9])?$"),
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
            platform: platform.into(),
            region: Some(region.into()),
            psc_subnet: Some("hcp-psc-subnet".into()),
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
}
