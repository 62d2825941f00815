//! `platform.gcp` of a GCP NodePool, by the CRD's `GCPNodePoolPlatform` rules
//! (`hypershift-api.md` §3.4), in either shape's spelling.

use serde_json::Value;

use super::DEFAULT_MACHINE_TYPE;
use super::labels::{self, Taint};
use super::names::{FLAT_KEYS, HYPERFLEET_KEYS, Shape};
use crate::hyperfleet::spec::{
    Checker, Invalid, Read, Rule, each, gcp_resource_name, json_kind, quoted, service_account_email,
};

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

const MACHINE_TYPE: Rule = Rule::new(1..=255, || regex!(r"^[a-z0-9]+(-[a-z0-9]+)*$"))
    .expecting("a GCE machine type such as n2-standard-4 (lowercase letters and digits in '-'-separated words); omit it for n2-standard-4");
/// A GCP zone (`hypershift-api.md` §3.4).
const ZONE: Rule = Rule::new(1..=63, || regex!(r"^[a-z]+(?:-[a-z0-9]+)*-[a-z]$"))
    .expecting("a GCP zone in the form region-zone, e.g. us-central1-a");
const SUBNET: Rule = Rule::new(1..=63, gcp_resource_name)
    .expecting("a subnet name of the cluster's VPC in its region: 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen (omit it for the cluster's Private Service Connect subnet)");
const IMAGE: Rule = Rule::new(1..=2048, || regex!(r"^\S+$"))
    .expecting("an image family path, image path or full image URL without whitespace (omit it for the RHCOS image of the release)");
const SERVICE_ACCOUNT: Rule = Rule::new(37..=85, service_account_email)
    .expecting("a Google service account email <name>@<project>.iam.gserviceaccount.com (37–85 characters); omit it for the project's default compute account");
const NETWORK_TAG: Rule = Rule::new(1..=63, gcp_resource_name)
    .expecting("network tag names of 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen");

/// `platform.gcp`, by the CRD's `GCPNodePoolPlatform` rules (`hypershift-api.md` §3.4), in
/// `shape`'s spelling.
pub(super) fn gcp(c: &mut Checker<'_>, shape: Shape) -> Read<GcpNodePool> {
    let keys = shape.keys();
    let machine = keys.machine_type.trim_start_matches("platform.gcp.");
    let expected = format!("an object {{{machine}, …}}");
    if c.object("platform.gcp", &expected)?.is_none() {
        return c.refuse(
            "platform.gcp",
            format!(
                "is required for platform.type gcp: an object with the machine settings ({{}} takes every default: machine type {DEFAULT_MACHINE_TYPE}, zone <region>-a, the cluster's Private Service Connect subnet)"
            ),
        );
    }
    let hyperfleet = shape == Shape::HyperFleet;
    let machine_type = machine_type(c, shape);
    let zone = match shape {
        Shape::Flat => c.optional_checked(keys.zone, &ZONE),
        Shape::HyperFleet => zones(c),
    };
    let subnet = c.optional_checked("platform.gcp.subnet", &SUBNET);
    let image = c.optional_checked("platform.gcp.image", &IMAGE);
    let boot_disk_size_gb = c.integer(keys.disk_size, (20, 65536), " GB");
    let boot_disk_type = c.one_of_names(
        keys.disk_type,
        &["pd-standard", "pd-ssd", "pd-balanced"],
        "is not valid: expected pd-standard, pd-ssd or pd-balanced (omit it for pd-balanced)",
    );
    if hyperfleet {
        let _ = c.object("platform.gcp.serviceAccount", "an object {email}");
    }
    let service_account_email = c.optional_checked(keys.service_account_email, &SERVICE_ACCOUNT);
    let provisioning_model = c.one_of_names(
        keys.provisioning_model,
        &["Standard", "Spot", "Preemptible"],
        "is not valid: expected Standard, Spot or Preemptible (omit it for Standard)",
    );
    let provisioning_model = match shape {
        Shape::Flat => provisioning_model,
        Shape::HyperFleet => preemptible(c, provisioning_model),
    };
    let network_tags = network_tags(c, keys.network_tags);
    let resource_labels = labels::resource_labels(c, keys.resource_labels);
    let (node_labels, taints, accelerators) = match shape {
        Shape::Flat => (Ok(Vec::new()), Ok(Vec::new()), Ok(())),
        Shape::HyperFleet => (labels::node_labels(c), labels::taints(c), accelerators(c)),
    };
    accelerators?;
    let owned = |value: Option<&str>| value.map(str::to_owned);
    Ok(GcpNodePool {
        machine_type: machine_type?.to_owned(),
        zone: owned(zone?),
        subnet: owned(subnet?),
        image: owned(image?),
        boot_disk_size_gb: boot_disk_size_gb?,
        boot_disk_type: owned(boot_disk_type?),
        service_account_email: owned(service_account_email?),
        provisioning_model: owned(provisioning_model?),
        network_tags: network_tags?,
        resource_labels: resource_labels?,
        node_labels: node_labels?,
        taints: taints?,
    })
}

/// The machine type: the flat `machine_type`, or HyperFleet's `machineType` or `instanceType`
/// (the same setting: its API model says `machineType`, its e2e suite `instanceType`);
/// [`DEFAULT_MACHINE_TYPE`] when none is given.
fn machine_type<'a>(c: &mut Checker<'a>, shape: Shape) -> Read<&'a str> {
    let given = match shape {
        Shape::Flat => c.optional_checked(FLAT_KEYS.machine_type, &MACHINE_TYPE)?,
        Shape::HyperFleet => {
            let machine = c.optional_checked(HYPERFLEET_KEYS.machine_type, &MACHINE_TYPE);
            let instance = c.optional_checked("platform.gcp.instanceType", &MACHINE_TYPE);
            match (machine?, instance?) {
                (Some(m), Some(i)) if m != i => {
                    let (i, m) = (quoted(i), quoted(m));
                    return c.refuse("platform.gcp.instanceType", format!("is {i} but platform.gcp.machineType is {m}: both name the GCE machine type (HyperFleet's API model says machineType, its e2e suite instanceType); give one"));
                }
                (m, i) => m.or(i),
            }
        }
    };
    Ok(given.unwrap_or(DEFAULT_MACHINE_TYPE))
}

/// HyperFleet's `platform.gcp.zones`: unset or empty → `<region>-a`; one zone; more are refused
/// (a HyperShift GCP NodePool runs in one zone).
fn zones<'a>(c: &mut Checker<'a>) -> Read<Option<&'a str>> {
    const FIELD: &str = "platform.gcp.zones";
    let zones = c.list(FIELD, "a list of one zone, e.g. [\"us-central1-a\"]")?;
    let problem = match zones.unwrap_or_default() {
        [] => return Ok(None),
        [Value::String(zone)] => return c.checked(FIELD, zone, &ZONE).map(Some),
        [other] => format!("must list zone names, found {}", json_kind(other)),
        many => format!(
            "lists {} zones, but a HyperShift GCP NodePool runs in one zone (its platform.gcp.zone): list one zone, and create one HyperFleet NodePool per zone",
            many.len()
        ),
    };
    c.refuse(FIELD, problem)
}

/// HyperFleet's `platform.gcp.preemptible`: `true` is provisioning model `Preemptible`, `false`
/// `Standard` (the default, not sent); a `provisioningModel` beside it must agree.
fn preemptible(
    c: &mut Checker<'_>,
    model: Read<Option<&'static str>>,
) -> Read<Option<&'static str>> {
    const FIELD: &str = "platform.gcp.preemptible";
    let preemptible = c.boolean(FIELD)?;
    match (preemptible, model?) {
        (None, model) => Ok(model),
        (Some(true), None | Some("Preemptible")) => Ok(Some("Preemptible")),
        (Some(false), model @ (None | Some("Standard"))) => Ok(model),
        (Some(p), Some(m)) => {
            let m = quoted(m);
            c.refuse(FIELD, format!("is {p} but platform.gcp.provisioningModel is {m}: preemptible true means Preemptible, false Standard; give one of them"))
        }
    }
}

/// HyperFleet's `platform.gcp.accelerators`: a HyperShift GCP NodePool has no accelerator
/// setting (`hypershift-api.md` §3.4), so a non-empty list is refused rather than dropped.
fn accelerators(c: &mut Checker<'_>) -> Read<()> {
    const FIELD: &str = "platform.gcp.accelerators";
    match c
        .list(FIELD, "a list of {type, count}")?
        .unwrap_or_default()
    {
        [] => Ok(()),
        list => {
            let n = list.len();
            c.refuse(FIELD, format!("asks for {n} accelerator type(s), but a HyperShift GCP NodePool has no accelerator setting (hypershift-api.md §3.4): remove accelerators and choose a machine type that comes with the GPUs you need"))
        }
    }
}

/// `platform.gcp.networkTags` / `network_tags` (`field`): a list of 1–64 distinct GCP resource
/// names (an empty list is not set).
fn network_tags(c: &mut Checker<'_>, field: &'static str) -> Read<Vec<String>> {
    let tags = c.list(field, "a list of tag names")?.unwrap_or_default();
    if tags.len() > 64 {
        return c.refuse(
            field,
            format!("has {} tags; at most 64 are allowed", tags.len()),
        );
    }
    let mut seen: Vec<&str> = Vec::new();
    each(tags, |tag| {
        let Some(tag) = tag.as_str() else {
            let found = json_kind(tag);
            return c.refuse(field, format!("every tag must be a string, found {found}"));
        };
        let valid = c.check(field, tag, &NETWORK_TAG);
        let twice = valid && seen.contains(&tag);
        if twice {
            c.violation(field, format!("lists {} twice", quoted(tag)));
        }
        seen.push(tag);
        (valid && !twice).then(|| tag.to_owned()).ok_or(Invalid)
    })
}
