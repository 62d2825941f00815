//! The cluster input: a HyperFleet cluster object (`{id, name, generation, spec}`) or a bare
//! `spec`, and its validation into a typed [`ClusterSpec`].
//!
//! Two shapes of `spec` are read ([`SpecShape`], docs/controlplane.md "The cluster spec"):
//! HyperFleet's own nested camelCase shape (`platform.gcp.projectID`, `release.image`,
//! `networking.clusterNetwork[].cidr`, `dns.baseDomain`, `infraID`) with the adapter's extension
//! keys at the HostedCluster's own paths (`platform.gcp.workloadIdentity.*`, `issuerURL`,
//! `pullSecret.name`, …), which is the primary input; and the seed's flat keys (`gcp_project_id`,
//! …). A spec with keys of both is refused ([`spec_shape`]).
//!
//! Validation applies the rules the HostedCluster CRD (TechPreviewNoUpgrade, `hypershift-api.md`
//! §1) enforces on the fields we fill, plus checks the API server leaves to the operator (CIDR
//! syntax and overlap, one IP family, distinct service accounts). Every violation is collected and
//! names the field by its HyperFleet path (`spec.platform.gcp.projectID`, `spec.gcp_project_id`;
//! a list entry as `spec.networking.clusterNetwork[].cidr`, the message saying which entry when
//! there are two), so one report lists everything to fix.
//!
//! Input leniency: an optional field that is absent, `null` or `""` is treated as not set (the
//! HostedCluster then omits it). Unknown spec fields are ignored, because the HyperFleet cluster
//! spec also carries fields for other adapters.
//!
//! By section: [`names`] (the two shapes), [`platform`], [`release`], [`networks`]; the identity,
//! DNS, issuer and Secrets here.

mod names;
mod networks;
mod platform;
mod release;

use serde_json::{Map, Value};

pub use self::names::{FLAT, NESTED, NESTED_PSC_FROM_SUBNET, SpecNames, SpecShape, spec_shape};
pub use self::networks::{Cidr, ClusterNetwork, parse_cidr};
pub use self::platform::{EndpointAccess, GcpSpec, ServiceAccounts};
pub use self::release::{Architecture, RELEASE_REPOSITORY, release_tag};
pub use super::resource::InputError;
use super::resource::Resource;
use super::spec::{Checker, Invalid, Read, Rule, dns_label, dns_subdomain};
pub use super::spec::{SpecViolation, json_kind};

/// Namespace on the management cluster that holds HostedClusters (seed 004 §2.2).
pub const HOSTED_CLUSTER_NAMESPACE: &str = "clusters";
/// Longest cluster id: it must fit a GCP label value with the `id-` prefix (63 characters).
pub const MAX_CLUSTER_ID_LEN: usize = 60;
/// Longest HostedCluster name: the control-plane namespace `clusters-<name>` must stay ≤ 63.
pub const MAX_HOSTED_CLUSTER_NAME_LEN: usize = 63 - HOSTED_CLUSTER_NAMESPACE.len() - 1;
/// Cluster names as the HyperFleet API accepts them: 3–53 characters of a lowercase DNS label
/// (entity config, `hyperfleet-framework.md` §7.1). Every such name also fits the HostedCluster
/// limit above, so the API's rule is the one the adapter checks.
pub const MIN_CLUSTER_NAME_LEN: usize = 3;
pub const MAX_CLUSTER_NAME_LEN: usize = 53;
const _: () = assert!(MAX_CLUSTER_NAME_LEN <= MAX_HOSTED_CLUSTER_NAME_LEN);

/// The adapter's input: the cluster's identity when the input was a full cluster object, and its
/// spec as raw JSON (validated by [`ClusterSpec::validate`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterInput {
    pub id: Option<String>,
    pub name: Option<String>,
    pub generation: Option<i64>,
    /// `deleted_time` (RFC 3339) when the cluster is being deleted (soft delete,
    /// `hyperfleet-framework.md` §6); `None` otherwise and for a bare spec.
    pub deleted_time: Option<String>,
    pub spec: Map<String, Value>,
}

impl ClusterInput {
    /// Parses a HyperFleet cluster object or a bare spec from JSON text.
    pub fn from_json(text: &str) -> Result<Self, InputError> {
        Resource::from_json(text, "cluster").map(Self::from)
    }

    /// A JSON object with an object-valued `spec` is a cluster object; any other object is a
    /// bare spec.
    pub fn from_value(value: Value) -> Result<Self, InputError> {
        Resource::from_value(value, "cluster").map(Self::from)
    }
}

impl From<Resource> for ClusterInput {
    fn from(r: Resource) -> Self {
        ClusterInput {
            id: r.id,
            name: r.name,
            generation: r.generation,
            deleted_time: r.deleted_time,
            spec: r.spec,
        }
    }
}

/// A validated cluster spec: every value here is accepted by the HostedCluster CRD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSpec {
    /// The HyperFleet cluster id (lowercase DNS label, ≤ 60 characters).
    pub cluster_id: String,
    /// HostedCluster name: the cluster's name, or its id when the input had no name.
    pub hosted_cluster_name: String,
    pub gcp: GcpSpec,
    /// Full release pullspec (the spec's image, or built from its version).
    pub release_image: String,
    pub architecture: Architecture,
    /// Empty leaves the API default (`10.132.0.0/14`); else 1–2 entries of one IP family.
    pub cluster_network: Vec<ClusterNetwork>,
    /// Empty leaves the API default (`172.31.0.0/16`); else 1–2 entries.
    pub service_network: Vec<Cidr>,
    /// Empty omits `machineNetwork` (the nested shape may leave it out; the flat shape requires
    /// one).
    pub machine_network: Vec<Cidr>,
    pub base_domain: String,
    pub issuer_url: String,
    pub service_account_signing_key_secret_name: Option<String>,
    pub pull_secret_name: String,
    pub ssh_key_secret_name: Option<String>,
    /// When set, APIServer and OAuthServer are published as Routes `api-<name>.<domain>` and
    /// `oauth-<name>.<domain>` (the upstream CLI's external-DNS layout); otherwise APIServer is a
    /// LoadBalancer and the rest are Routes without hostnames.
    pub external_dns_domain: Option<String>,
    /// `infraID` when the spec sets it; `None` lets the operator generate and own it.
    pub infra_id: Option<String>,
    /// The spec fields these values came from (by shape), for naming a field in later messages
    /// (an immutable change).
    pub names: &'static SpecNames,
}

/// Secret names the adapter's settings give (`PULL_SECRET_NAME`, …): each, when set, replaces
/// the spec's value (in either shape).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretSettings {
    pub pull_secret_name: Option<String>,
    pub ssh_key_secret_name: Option<String>,
    pub service_account_signing_key_secret_name: Option<String>,
}

const CLUSTER_ID: Rule = Rule::new(1..=MAX_CLUSTER_ID_LEN, dns_label)
    .expecting("a lowercase DNS label (letters, digits and '-', starting and ending with a letter or digit) of at most 60 characters");
const CLUSTER_NAME: Rule = Rule::new(MIN_CLUSTER_NAME_LEN..=MAX_CLUSTER_NAME_LEN, dns_label)
    .expecting("a HyperFleet cluster name: a lowercase DNS label of 3 to 53 characters (letters, digits and '-', starting and ending with a letter or digit)");
const BASE_DOMAIN: Rule = Rule::new(1..=253, || {
    regex!(r"^(?:(?:[a-zA-Z0-9-]+\.)+[a-zA-Z]{2,}|[a-zA-Z0-9-]+)$")
})
.expecting("a DNS domain such as example.com (letters, digits and '-' in dot-separated labels)");
const ISSUER_URL: Rule = Rule::new(1..=255, || regex!(r"^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^\s?#]*)?$"))
    .expecting("the public HTTPS URL of the OIDC issuer the Workload Identity provider trusts, without query or fragment (e.g. https://storage.googleapis.com/my-oidc-bucket)");
const SECRET_NAME: Rule = Rule::new(1..=253, dns_subdomain)
    .expecting("the name of a Secret in the HostedCluster namespace (lowercase DNS subdomain: letters, digits, '-' and '.', starting and ending with a letter or digit)");
const PULL_SECRET_NAME: Rule = SECRET_NAME.expecting("the name of the pull Secret in the HostedCluster namespace (lowercase DNS subdomain: letters, digits, '-' and '.', starting and ending with a letter or digit); or set the adapter's PULL_SECRET_NAME");
const EXTERNAL_DNS_DOMAIN: Rule = Rule::new(1..=253 - "oauth-".len() - MAX_HOSTED_CLUSTER_NAME_LEN - 1, || regex!(r"^(?:[a-zA-Z0-9-]+\.)*[a-zA-Z]{2,}$"))
    .expecting("a DNS domain served by external DNS (e.g. hypershift.example.com); the API and OAuth routes become api-<name>.<domain> and oauth-<name>.<domain>");
/// `infraID`: the CRD's rule, plus a lowercase letter first: it prefixes GCP resource names
/// (the `<infraID>-worker` network tag, OIDC objects), which must start with a letter.
const INFRA_ID: Rule = Rule::new(1..=253, || regex!(r"^[a-z]([-a-z0-9]*[a-z0-9])?$"))
    .expecting("a lowercase DNS label starting with a letter (letters, digits and '-'; it prefixes GCP resource names); leave it out to let HyperShift generate one");

impl ClusterSpec {
    /// Validates the raw spec for the cluster `cluster_id` named `cluster_name` (the HostedCluster
    /// name; the id is used when `None`). Returns every violation found, not just the first.
    pub fn validate(
        cluster_id: &str,
        cluster_name: Option<&str>,
        spec: &Map<String, Value>,
    ) -> Result<ClusterSpec, Vec<SpecViolation>> {
        Self::validate_with(cluster_id, cluster_name, spec, &SecretSettings::default())
    }

    /// [`ClusterSpec::validate`] with the adapter's secret-name settings, which replace the
    /// spec's values.
    pub fn validate_with(
        cluster_id: &str,
        cluster_name: Option<&str>,
        spec: &Map<String, Value>,
        settings: &SecretSettings,
    ) -> Result<ClusterSpec, Vec<SpecViolation>> {
        let names = names::names_of(spec_shape(spec)?, spec);
        let root = with_settings(spec, names, settings);
        let mut c = Checker::new(&root);
        let mut bad_objects = Vec::new();
        let spec = read(&mut c, (cluster_id, cluster_name), names, &mut bad_objects);
        // Under an object of the wrong type every key reads as missing: its own violation says
        // it all.
        c.violations
            .retain(|v| !bad_objects.iter().any(|o| is_under(v.field, o)));
        c.finish(spec)
    }
}

/// `{"spec": spec}` with the settings' secret names in place of the spec's.
fn with_settings(
    spec: &Map<String, Value>,
    names: &SpecNames,
    settings: &SecretSettings,
) -> Map<String, Value> {
    let mut spec = spec.clone();
    for (field, value) in [
        (names.pull_secret, &settings.pull_secret_name),
        (names.ssh_key, &settings.ssh_key_secret_name),
        (
            names.signing_key,
            &settings.service_account_signing_key_secret_name,
        ),
    ] {
        if let Some(value) = value {
            set_at(&mut spec, names::flat_key(field), value.as_str().into());
        }
    }
    Map::from_iter([("spec".to_owned(), Value::Object(spec))])
}

/// Every field of the spec (`{"spec": …}`) of the cluster `(id, name)`, in `names`' shape;
/// `bad_objects` gets the nested shape's objects of a wrong type.
fn read(
    c: &mut Checker<'_>,
    (cluster_id, cluster_name): (&str, Option<&str>),
    names: &'static SpecNames,
    bad_objects: &mut Vec<&'static str>,
) -> Read<ClusterSpec> {
    let nested = names.shape == SpecShape::Nested;
    let (cluster_id, hosted_cluster_name) = identity(c, cluster_id, cluster_name);
    if nested {
        *bad_objects = platform::nested_structure(c);
    }
    let gcp = platform::gcp(c, names);
    let release = release::release(c, names);
    let networks = networks::networks(c, names);
    let base_domain = c.required_checked(names.base_domain, &BASE_DOMAIN);
    let issuer_url = c.required_checked(names.issuer_url, &ISSUER_URL);
    let signing_key = c.optional_checked(names.signing_key, &SECRET_NAME);
    let pull_secret_name = c.required_checked(names.pull_secret, &PULL_SECRET_NAME);
    let ssh_key = c.optional_checked(names.ssh_key, &SECRET_NAME);
    let (external_dns_domain, infra_id) = if nested {
        (Ok(None), c.optional_checked(names.infra_id, &INFRA_ID))
    } else {
        let domain = c.optional_checked(names.external_dns_domain, &EXTERNAL_DNS_DOMAIN);
        (domain, Ok(None))
    };
    let (release_image, architecture) = release?;
    let networks = networks?;
    let owned = |value: Option<&str>| value.map(str::to_owned);
    Ok(ClusterSpec {
        cluster_id: cluster_id?.to_owned(),
        hosted_cluster_name: hosted_cluster_name?.to_owned(),
        gcp: gcp?,
        release_image,
        architecture,
        cluster_network: networks.cluster,
        service_network: networks.service,
        machine_network: networks.machine,
        base_domain: base_domain?.to_owned(),
        issuer_url: issuer_url?.to_owned(),
        service_account_signing_key_secret_name: owned(signing_key?),
        pull_secret_name: pull_secret_name?.to_owned(),
        ssh_key_secret_name: owned(ssh_key?),
        external_dns_domain: owned(external_dns_domain?),
        infra_id: owned(infra_id?),
        names,
    })
}

/// Sets the dotted `path` (`pullSecret.name`) in `spec`, making objects on the way (a non-object
/// on the way is replaced: the setting wins).
fn set_at(spec: &mut Map<String, Value>, path: &str, value: Value) {
    let mut parts: Vec<&str> = path.split('.').collect();
    let Some(last) = parts.pop() else { return };
    let mut object = spec;
    for part in parts {
        let entry = object
            .entry(part.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        let Value::Object(next) = entry else { return };
        object = next;
    }
    object.insert(last.to_owned(), value);
}

/// Whether `field` is a key inside `object` (`spec.release.version` in `spec.release`).
fn is_under(field: &str, object: &str) -> bool {
    field
        .strip_prefix(object)
        .is_some_and(|rest| rest.starts_with(['.', '[']))
}

/// The cluster id and the HostedCluster name (the cluster's name, else its id).
fn identity<'a>(
    c: &mut Checker<'_>,
    cluster_id: &'a str,
    cluster_name: Option<&'a str>,
) -> (Read<&'a str>, Read<&'a str>) {
    let cluster_id = c.checked("id", cluster_id, &CLUSTER_ID);
    let hosted_cluster_name = match (cluster_name.filter(|n| !n.is_empty()), cluster_id) {
        (Some(name), _) => c.checked("name", name, &CLUSTER_NAME),
        (None, Ok(id)) if id.len() <= MAX_HOSTED_CLUSTER_NAME_LEN => Ok(id),
        (None, Ok(_)) => c.refuse(
            "id",
            "is used as the HostedCluster name when the cluster has no name, so it must be at most 54 characters; give the cluster a shorter name",
        ),
        (None, Err(Invalid)) => Err(Invalid),
    };
    (cluster_id, hosted_cluster_name)
}

/// The valid test clusters for other modules' tests: `tests/fixtures/cluster-valid.json` (the flat
/// keys) and `cluster-nested.json` (HyperFleet's nested shape; the same cluster).
#[cfg(test)]
pub(crate) mod fixture {
    #![allow(clippy::unwrap_used)]

    use super::*;

    pub const VALID: &str = include_str!("../../../tests/fixtures/cluster-valid.json");
    pub const NESTED: &str = include_str!("../../../tests/fixtures/cluster-nested.json");

    /// The nested fixture, edited, validated.
    pub fn nested_with(
        edit: impl FnOnce(&mut Map<String, Value>),
    ) -> Result<ClusterSpec, Vec<SpecViolation>> {
        let mut input = ClusterInput::from_json(NESTED).unwrap();
        edit(&mut input.spec);
        ClusterSpec::validate(
            input.id.as_deref().unwrap(),
            input.name.as_deref(),
            &input.spec,
        )
    }

    /// The fixture, edited, validated.
    pub fn spec_with(edit: impl FnOnce(&mut Map<String, Value>)) -> ClusterSpec {
        let mut input = ClusterInput::from_json(VALID).unwrap();
        edit(&mut input.spec);
        ClusterSpec::validate(
            input.id.as_deref().unwrap(),
            input.name.as_deref(),
            &input.spec,
        )
        .unwrap()
    }

    pub fn spec() -> ClusterSpec {
        spec_with(|_| {})
    }
}

#[cfg(test)]
mod tests;
