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

use std::fmt;

use ipnet::IpNet;
use regex::Regex;
use serde_json::{Map, Value};

use super::resource::Resource;
use super::spec::{
    Checker, Rule, dns_label, dns_subdomain, gcp_resource_name, quoted, service_account_email,
};
pub use super::spec::{SpecViolation, json_kind};

/// Repository of OpenShift release images; the tag is `<openshift_version>-<arch suffix>`.
pub const RELEASE_REPOSITORY: &str = "quay.io/openshift-release-dev/ocp-release";
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

/// OVN-Kubernetes default internal subnets (join and transit switch); cluster, service and machine
/// networks must not overlap them.
const OVN_RESERVED: [(&str, &str); 4] = [
    ("100.64.0.0/16", "the OVN-Kubernetes join subnet"),
    ("100.88.0.0/16", "the OVN-Kubernetes transit subnet"),
    ("fd98::/64", "the OVN-Kubernetes IPv6 join subnet"),
    ("fd97::/64", "the OVN-Kubernetes IPv6 transit subnet"),
];
/// Networks the API server fills in when the spec leaves them out (`hypershift-api.md` §1.4).
const DEFAULT_CLUSTER_NETWORK: &str = "10.132.0.0/14";
const DEFAULT_SERVICE_NETWORK: &str = "172.31.0.0/16";

pub use super::resource::InputError;

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

/// `platform.gcp.endpointAccess`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointAccess {
    Private,
    PublicAndPrivate,
}

impl EndpointAccess {
    pub fn as_str(self) -> &'static str {
        match self {
            EndpointAccess::Private => "Private",
            EndpointAccess::PublicAndPrivate => "PublicAndPrivate",
        }
    }
}

/// CPU architecture of the release payload, as named by release-image tag suffixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Architecture {
    /// `x86_64` (also accepted as `amd64`).
    X86_64,
    /// `aarch64` (also accepted as `arm64`, the NodePool spelling).
    Aarch64,
    /// The multi-architecture payload.
    Multi,
}

impl Architecture {
    /// Parses the spec value; `amd64` and `arm64` are aliases.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "x86_64" | "amd64" => Some(Architecture::X86_64),
            "aarch64" | "arm64" => Some(Architecture::Aarch64),
            "multi" => Some(Architecture::Multi),
            _ => None,
        }
    }

    /// The suffix release tags carry, e.g. `4.17.0-x86_64`.
    pub fn tag_suffix(self) -> &'static str {
        match self {
            Architecture::X86_64 => "x86_64",
            Architecture::Aarch64 => "aarch64",
            Architecture::Multi => "multi",
        }
    }

    fn from_tag_suffix(s: &str) -> Option<Self> {
        [
            Architecture::X86_64,
            Architecture::Aarch64,
            Architecture::Multi,
        ]
        .into_iter()
        .find(|a| a.tag_suffix() == s)
    }
}

/// Words that, after the last `-` of a version, mean the version already names an architecture.
const ARCH_WORDS: [&str; 7] = [
    "x86_64", "aarch64", "multi", "amd64", "arm64", "ppc64le", "s390x",
];

/// The release tag for `version`: `version` itself when it already ends with an architecture
/// suffix (`4.17.0-aarch64`, `4.17.0-multi`), else `<version>-<suffix>`.
pub fn release_tag(version: &str, architecture: Architecture) -> String {
    if tag_architecture_word(version).is_some() {
        version.to_owned()
    } else {
        format!("{version}-{}", architecture.tag_suffix())
    }
}

fn tag_architecture_word(version: &str) -> Option<&str> {
    let (_, last) = version.rsplit_once('-')?;
    ARCH_WORDS.contains(&last).then_some(last)
}

/// A CIDR as written in the spec (sent verbatim) and parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cidr {
    pub text: String,
    pub net: IpNet,
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The six Google service accounts HyperShift needs, all in the cluster's project, all distinct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceAccounts {
    pub control_plane: String,
    pub node_pool: String,
    pub cloud_controller: String,
    pub storage: String,
    pub image_registry: String,
    pub network: String,
}

/// GCP placement and identity of the hosted cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcpSpec {
    pub project_id: String,
    pub project_number: String,
    pub region: String,
    pub vpc_network_name: String,
    pub psc_subnet_name: String,
    pub wif_pool_id: String,
    pub wif_provider_id: String,
    pub service_accounts: ServiceAccounts,
    /// `None` leaves the API default (`Private`).
    pub endpoint_access: Option<EndpointAccess>,
}

/// One `networking.clusterNetwork[]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterNetwork {
    pub cidr: Cidr,
    /// `hostPrefix`: the prefix length of each node's share of the network; `None` leaves it to
    /// HyperShift.
    pub host_prefix: Option<u8>,
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

/// The two shapes of a cluster `spec` the adapter reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecShape {
    /// HyperFleet's own nested camelCase shape (`platform.gcp.projectID`, `release.image`,
    /// `networking.clusterNetwork[].cidr`, …), with the extension keys the adapter documents:
    /// the primary input.
    Nested,
    /// The seed's flat snake_case keys (`gcp_project_id`, …): an accepted alternative.
    Flat,
}

/// The HyperFleet field (`spec.…`) each value is read from, in one shape. Violations and
/// immutable changes name fields by these.
#[derive(Debug, PartialEq, Eq)]
pub struct SpecNames {
    pub shape: SpecShape,
    pub project_id: &'static str,
    pub project_number: &'static str,
    pub region: &'static str,
    pub network: &'static str,
    pub psc_subnet: &'static str,
    pub wif_pool_id: &'static str,
    pub wif_provider_id: &'static str,
    /// controlPlane, nodePool, cloudController, storage, imageRegistry, network.
    pub service_accounts: [&'static str; 6],
    pub endpoint_access: &'static str,
    pub release_image: &'static str,
    pub version: &'static str,
    /// `None`: the shape has no architecture key (the version's suffix or the image says it).
    pub architecture: Option<&'static str>,
    /// The whole list (nested) or the one key (flat).
    pub cluster_network: &'static str,
    /// One entry's CIDR.
    pub cluster_network_cidr: &'static str,
    pub host_prefix: &'static str,
    pub service_network: &'static str,
    pub service_network_cidr: &'static str,
    pub machine_network: &'static str,
    pub machine_network_cidr: &'static str,
    pub base_domain: &'static str,
    pub issuer_url: &'static str,
    pub signing_key: &'static str,
    pub pull_secret: &'static str,
    pub ssh_key: &'static str,
    pub infra_id: &'static str,
    pub external_dns_domain: &'static str,
}

/// HyperFleet's nested shape.
pub const NESTED: SpecNames = SpecNames {
    shape: SpecShape::Nested,
    project_id: "spec.platform.gcp.projectID",
    project_number: "spec.platform.gcp.workloadIdentity.projectNumber",
    region: "spec.platform.gcp.region",
    network: "spec.platform.gcp.network",
    psc_subnet: "spec.platform.gcp.privateServiceConnectSubnet",
    wif_pool_id: "spec.platform.gcp.workloadIdentity.poolID",
    wif_provider_id: "spec.platform.gcp.workloadIdentity.providerID",
    service_accounts: [
        "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.controlPlane",
        "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.nodePool",
        "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.cloudController",
        "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.storage",
        "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.imageRegistry",
        "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.network",
    ],
    endpoint_access: "spec.platform.gcp.endpointAccess",
    release_image: "spec.release.image",
    version: "spec.release.version",
    architecture: None,
    cluster_network: "spec.networking.clusterNetwork",
    cluster_network_cidr: "spec.networking.clusterNetwork[].cidr",
    host_prefix: "spec.networking.clusterNetwork[].hostPrefix",
    service_network: "spec.networking.serviceNetwork",
    service_network_cidr: "spec.networking.serviceNetwork[]",
    machine_network: "spec.networking.machineNetwork",
    machine_network_cidr: "spec.networking.machineNetwork[].cidr",
    base_domain: "spec.dns.baseDomain",
    issuer_url: "spec.issuerURL",
    signing_key: "spec.serviceAccountSigningKey.name",
    pull_secret: "spec.pullSecret.name",
    ssh_key: "spec.sshKey.name",
    infra_id: "spec.infraID",
    external_dns_domain: "spec.external_dns_domain",
};

/// The nested shape when `privateServiceConnectSubnet` is not set and `subnet` is the PSC subnet
/// (the upstream CLI's layout: one subnet for nodes and Private Service Connect).
pub const NESTED_PSC_FROM_SUBNET: SpecNames = SpecNames {
    psc_subnet: "spec.platform.gcp.subnet",
    ..NESTED
};

/// The seed's flat keys.
pub const FLAT: SpecNames = SpecNames {
    shape: SpecShape::Flat,
    project_id: "spec.gcp_project_id",
    project_number: "spec.gcp_project_number",
    region: "spec.gcp_region",
    network: "spec.vpc_network_name",
    psc_subnet: "spec.psc_subnet_name",
    wif_pool_id: "spec.wif_pool_id",
    wif_provider_id: "spec.wif_provider_id",
    service_accounts: [
        "spec.control_plane_sa_email",
        "spec.nodepool_sa_email",
        "spec.cloud_controller_sa_email",
        "spec.storage_sa_email",
        "spec.image_registry_sa_email",
        "spec.network_sa_email",
    ],
    endpoint_access: "spec.endpoint_access",
    release_image: "spec.release_image",
    version: "spec.openshift_version",
    architecture: Some("spec.architecture"),
    cluster_network: "spec.cluster_network_cidr",
    cluster_network_cidr: "spec.cluster_network_cidr",
    host_prefix: "spec.cluster_network_cidr",
    service_network: "spec.service_network_cidr",
    service_network_cidr: "spec.service_network_cidr",
    machine_network: "spec.machine_network_cidr",
    machine_network_cidr: "spec.machine_network_cidr",
    base_domain: "spec.base_domain",
    issuer_url: "spec.issuer_url",
    signing_key: "spec.service_account_signing_key_secret_name",
    pull_secret: "spec.pull_secret_name",
    ssh_key: "spec.ssh_key_secret_name",
    infra_id: "spec.infraID",
    external_dns_domain: "spec.external_dns_domain",
};

/// Every flat key (as `spec.<key>`), with where the nested shape carries the same value.
const FLAT_KEYS: [(&str, &str); 26] = [
    ("spec.gcp_project_id", "spec.platform.gcp.projectID"),
    (
        "spec.gcp_project_number",
        "spec.platform.gcp.workloadIdentity.projectNumber",
    ),
    ("spec.gcp_region", "spec.platform.gcp.region"),
    ("spec.vpc_network_name", "spec.platform.gcp.network"),
    (
        "spec.psc_subnet_name",
        "spec.platform.gcp.privateServiceConnectSubnet",
    ),
    (
        "spec.wif_pool_id",
        "spec.platform.gcp.workloadIdentity.poolID",
    ),
    (
        "spec.wif_provider_id",
        "spec.platform.gcp.workloadIdentity.providerID",
    ),
    (
        "spec.control_plane_sa_email",
        "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.controlPlane",
    ),
    (
        "spec.nodepool_sa_email",
        "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.nodePool",
    ),
    (
        "spec.cloud_controller_sa_email",
        "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.cloudController",
    ),
    (
        "spec.storage_sa_email",
        "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.storage",
    ),
    (
        "spec.image_registry_sa_email",
        "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.imageRegistry",
    ),
    (
        "spec.network_sa_email",
        "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.network",
    ),
    ("spec.endpoint_access", "spec.platform.gcp.endpointAccess"),
    ("spec.openshift_version", "spec.release.version"),
    ("spec.release_image", "spec.release.image"),
    (
        "spec.architecture",
        "the architecture suffix of spec.release.version (4.17.0-aarch64), or spec.release.image",
    ),
    (
        "spec.cluster_network_cidr",
        "spec.networking.clusterNetwork[].cidr",
    ),
    (
        "spec.service_network_cidr",
        "spec.networking.serviceNetwork[]",
    ),
    (
        "spec.machine_network_cidr",
        "spec.networking.machineNetwork[].cidr",
    ),
    ("spec.base_domain", "spec.dns.baseDomain"),
    ("spec.issuer_url", "spec.issuerURL"),
    (
        "spec.service_account_signing_key_secret_name",
        "spec.serviceAccountSigningKey.name",
    ),
    ("spec.pull_secret_name", "spec.pullSecret.name"),
    ("spec.ssh_key_secret_name", "spec.sshKey.name"),
    (
        "spec.external_dns_domain",
        "nothing: the nested shape has no such key (its services use the upstream CLI's layout without external DNS); keep the flat shape to use it",
    ),
];
/// The top-level keys of the nested shape (HyperFleet's and the adapter's extension keys).
const NESTED_KEYS: [&str; 9] = [
    "platform",
    "release",
    "networking",
    "dns",
    "infraID",
    "issuerURL",
    "pullSecret",
    "sshKey",
    "serviceAccountSigningKey",
];

fn flat_key(field: &str) -> &str {
    field.strip_prefix("spec.").unwrap_or(field)
}

/// Which shape `spec` uses: flat when it has any flat key, else nested (HyperFleet's; an empty
/// spec is read as nested, so what is missing is named as HyperFleet names it). A spec with
/// keys of both shapes is refused: one violation per flat key, naming the nested key beside it
/// and where the nested shape carries the value.
pub fn spec_shape(spec: &Map<String, Value>) -> Result<SpecShape, Vec<SpecViolation>> {
    let mut flat = FLAT_KEYS
        .iter()
        .filter(|(field, _)| spec.contains_key(flat_key(field)))
        .peekable();
    if flat.peek().is_none() {
        return Ok(SpecShape::Nested);
    }
    let Some(nested) = NESTED_KEYS.iter().find(|k| spec.contains_key(**k)) else {
        return Ok(SpecShape::Flat);
    };
    Err(flat
        .map(|(field, instead)| SpecViolation {
            field,
            problem: format!(
                "is a flat key, but the spec also has spec.{nested} of HyperFleet's nested shape; use one shape: in the nested shape this is {instead}"
            ),
        })
        .collect())
}

/// Secret names the adapter's settings give (`PULL_SECRET_NAME`, …): each, when set, replaces
/// the spec's value (in either shape).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretSettings {
    pub pull_secret_name: Option<String>,
    pub ssh_key_secret_name: Option<String>,
    pub service_account_signing_key_secret_name: Option<String>,
}

fn wif_id() -> &'static Regex {
    regex!(r"^[a-z][a-z0-9-]{2,30}[a-z0-9]$")
}
/// `networking.*Network[].cidr`, IPv4 form of the CRD rule.
fn cidr_v4_syntax() -> &'static Regex {
    regex!(r"^((\d{1,3}\.){3}\d{1,3}/\d{1,2})$")
}
/// `networking.*Network[].cidr`, IPv6 form of the CRD rule.
fn cidr_v6_syntax() -> &'static Regex {
    regex!(r"^([0-9a-fA-F]{0,4}:){2,7}([0-9a-fA-F]{0,4})?/[0-9]{1,3}$")
}
/// A Workload Identity pool or provider id: the rule plus the reserved `gcp-` prefix.
fn wif_id_field<'a>(c: &mut Checker<'a>, field: &'static str, rule: &Rule) -> Option<&'a str> {
    let value = c.required_checked(field, rule)?;
    if value.starts_with("gcp-") {
        c.violation(
            field,
            format!(
                "{} starts with the prefix 'gcp-', which Google reserves; use an id without it",
                quoted(value)
            ),
        );
        return None;
    }
    Some(value)
}

const SECRET_NAME: &str = "the name of a Secret in the HostedCluster namespace (lowercase DNS subdomain: letters, digits, '-' and '.', starting and ending with a letter or digit)";

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
        let shape = spec_shape(spec)?;
        let mut spec = spec.clone();
        let names = match shape {
            SpecShape::Flat => &FLAT,
            SpecShape::Nested => {
                let explicit_psc = spec
                    .get("platform")
                    .and_then(|p| p.get("gcp"))
                    .and_then(|g| g.get("privateServiceConnectSubnet"))
                    .is_some_and(|v| !v.is_null() && v.as_str() != Some(""));
                if explicit_psc {
                    &NESTED
                } else {
                    &NESTED_PSC_FROM_SUBNET
                }
            }
        };
        for (field, value) in [
            (names.pull_secret, &settings.pull_secret_name),
            (names.ssh_key, &settings.ssh_key_secret_name),
            (
                names.signing_key,
                &settings.service_account_signing_key_secret_name,
            ),
        ] {
            if let Some(value) = value {
                set_at(&mut spec, flat_key(field), value.as_str().into());
            }
        }
        let root = Map::from_iter([("spec".to_owned(), Value::Object(spec))]);
        let mut c = Checker::new(&root);
        let (cluster_id, hosted_cluster_name) = identity(&mut c, cluster_id, cluster_name);
        let bad_objects = if shape == SpecShape::Nested {
            nested_structure(&mut c)
        } else {
            Vec::new()
        };
        let gcp = gcp(&mut c, names);
        let (release_image, architecture) = release(&mut c, names);
        let networks = networks(&mut c, names);
        let base_domain = c.required_checked(
            names.base_domain,
            &Rule {
                min: 1,
                max: 253,
                pattern: regex!(r"^(?:(?:[a-zA-Z0-9-]+\.)+[a-zA-Z]{2,}|[a-zA-Z0-9-]+)$"),
                expected: "a DNS domain such as example.com (letters, digits and '-' in dot-separated labels)",
            },
        );
        let issuer_url = c.required_checked(
            names.issuer_url,
            &Rule {
                min: 1,
                max: 255,
                pattern: regex!(r"^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^\s?#]*)?$"),
                expected: "the public HTTPS URL of the OIDC issuer the Workload Identity provider trusts, without query or fragment (e.g. https://storage.googleapis.com/my-oidc-bucket)",
            },
        );
        let secret_rule = Rule {
            min: 1,
            max: 253,
            pattern: dns_subdomain(),
            expected: SECRET_NAME,
        };
        let signing_key = c.optional_checked(names.signing_key, &secret_rule);
        let pull_secret_name = c.required_checked(
            names.pull_secret,
            &Rule {
                expected: "the name of the pull Secret in the HostedCluster namespace (lowercase DNS subdomain: letters, digits, '-' and '.', starting and ending with a letter or digit); or set the adapter's PULL_SECRET_NAME",
                ..secret_rule
            },
        );
        let ssh_key = c.optional_checked(names.ssh_key, &secret_rule);
        let external_dns_domain = if shape == SpecShape::Flat {
            c.optional_checked(
                names.external_dns_domain,
                &Rule {
                    min: 1,
                    max: 253 - "oauth-".len() - MAX_HOSTED_CLUSTER_NAME_LEN - 1,
                    pattern: regex!(r"^(?:[a-zA-Z0-9-]+\.)*[a-zA-Z]{2,}$"),
                    expected: "a DNS domain served by external DNS (e.g. hypershift.example.com); the API and OAuth routes become api-<name>.<domain> and oauth-<name>.<domain>",
                },
            )
        } else {
            Ok(None)
        };
        let infra_id = if shape == SpecShape::Nested {
            infra_id(&mut c, names.infra_id)
        } else {
            Ok(None)
        };

        if !c.violations.is_empty() {
            // Under an object of the wrong type every key reads as missing: its own violation
            // says it all.
            let mut violations = c.violations;
            violations.retain(|v| !bad_objects.iter().any(|o| is_under(v.field, o)));
            return Err(violations);
        }
        let (
            Some(cluster_id),
            Some(hosted_cluster_name),
            Some(gcp),
            Some(release_image),
            Some(architecture),
            Some((cluster_network, service_network, machine_network)),
            Some(base_domain),
            Some(issuer_url),
            Ok(signing_key),
            Some(pull_secret_name),
            Ok(ssh_key),
            Ok(external_dns_domain),
            Ok(infra_id),
        ) = (
            cluster_id,
            hosted_cluster_name,
            gcp,
            release_image,
            architecture,
            networks,
            base_domain,
            issuer_url,
            signing_key,
            pull_secret_name,
            ssh_key,
            external_dns_domain,
            infra_id,
        )
        else {
            // Every `None`/`Err` above comes with a violation; this is a safety net, not a path.
            return Err(vec![SpecViolation {
                field: "spec",
                problem: "could not be validated (internal error); please report this".to_owned(),
            }]);
        };
        Ok(ClusterSpec {
            cluster_id: cluster_id.to_owned(),
            hosted_cluster_name: hosted_cluster_name.to_owned(),
            gcp,
            release_image,
            architecture,
            cluster_network,
            service_network,
            machine_network,
            base_domain: base_domain.to_owned(),
            issuer_url: issuer_url.to_owned(),
            service_account_signing_key_secret_name: signing_key.map(str::to_owned),
            pull_secret_name: pull_secret_name.to_owned(),
            ssh_key_secret_name: ssh_key.map(str::to_owned),
            external_dns_domain: external_dns_domain.map(str::to_owned),
            infra_id: infra_id.map(str::to_owned),
            names,
        })
    }
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

/// The nested shape's objects: each must be an object when present, `platform.type` must be
/// `gcp`, and the keys the HostedCluster does not use (`zone`, `subnet` when
/// `privateServiceConnectSubnet` is set, `channelGroup`) must at least be strings. Returns the
/// objects found with another type.
fn nested_structure(c: &mut Checker<'_>) -> Vec<&'static str> {
    let mut bad = Vec::new();
    for (field, what) in [
        ("spec.platform", "{type, gcp}"),
        (
            "spec.platform.gcp",
            "{projectID, region, network, subnet, …}",
        ),
        (
            "spec.platform.gcp.workloadIdentity",
            "{projectNumber, poolID, providerID, serviceAccountsEmails}",
        ),
        (
            "spec.platform.gcp.workloadIdentity.serviceAccountsEmails",
            "{controlPlane, nodePool, cloudController, storage, imageRegistry, network}",
        ),
        ("spec.release", "{image, version, channelGroup}"),
        (
            "spec.networking",
            "{clusterNetwork, serviceNetwork, machineNetwork}",
        ),
        ("spec.dns", "{baseDomain}"),
        ("spec.pullSecret", "{name}"),
        ("spec.sshKey", "{name}"),
        ("spec.serviceAccountSigningKey", "{name}"),
    ] {
        if let Some(v) = c.get(field).filter(|v| !v.is_null() && !v.is_object()) {
            c.violation(
                field,
                format!("must be an object {what}, found {}", json_kind(v)),
            );
            bad.push(field);
        }
    }
    match c.get("spec.platform.type") {
        None | Some(Value::Null) => c.violation(
            "spec.platform.type",
            "is required: \"gcp\" (this adapter builds GCP HostedClusters)",
        ),
        Some(Value::String(t)) if t == "gcp" => {}
        Some(Value::String(t)) if t == "template" => c.violation(
            "spec.platform.type",
            "is \"template\" (the provider-neutral shape of HyperFleet's end-to-end suite): this adapter builds GCP HostedClusters; set it to \"gcp\" and move the keys from spec.platform.template to spec.platform.gcp",
        ),
        Some(Value::String(t)) => c.violation(
            "spec.platform.type",
            format!(
                "{} is not supported: expected \"gcp\" (this adapter builds GCP HostedClusters)",
                quoted(t)
            ),
        ),
        Some(other) => c.violation(
            "spec.platform.type",
            format!("must be the string \"gcp\", found {}", json_kind(other)),
        ),
    }
    // Read by other adapters (the NodePools' zone and subnet), not by the HostedCluster; a value
    // of the wrong type is still refused.
    let _ = c.optional("spec.platform.gcp.zone");
    let _ = c.optional("spec.release.channelGroup");
    if c.get("spec.platform.gcp.privateServiceConnectSubnet")
        .is_some_and(|v| !v.is_null() && v.as_str() != Some(""))
    {
        let _ = c.optional("spec.platform.gcp.subnet");
    }
    bad
}

/// `infraID`: the CRD's rule, plus a lowercase letter first: it prefixes GCP resource names
/// (the `<infraID>-worker` network tag, OIDC objects), which must start with a letter.
fn infra_id<'a>(c: &mut Checker<'a>, field: &'static str) -> Result<Option<&'a str>, ()> {
    let value = c.optional_checked(
        field,
        &Rule {
            min: 1,
            max: 253,
            pattern: regex!(r"^[a-z]([-a-z0-9]*[a-z0-9])?$"),
            expected: "a lowercase DNS label starting with a letter (letters, digits and '-'; it prefixes GCP resource names); leave it out to let HyperShift generate one",
        },
    )?;
    Ok(value)
}

/// The cluster id and the HostedCluster name (the cluster's name, else its id).
fn identity<'a>(
    c: &mut Checker<'_>,
    cluster_id: &'a str,
    cluster_name: Option<&'a str>,
) -> (Option<&'a str>, Option<&'a str>) {
    let id_rule = Rule {
        min: 1,
        max: MAX_CLUSTER_ID_LEN,
        pattern: dns_label(),
        expected: "a lowercase DNS label (letters, digits and '-', starting and ending with a letter or digit) of at most 60 characters",
    };
    let cluster_id = c.check("id", cluster_id, &id_rule).then_some(cluster_id);
    let name_rule = Rule {
        min: MIN_CLUSTER_NAME_LEN,
        max: MAX_CLUSTER_NAME_LEN,
        pattern: dns_label(),
        expected: "a HyperFleet cluster name: a lowercase DNS label of 3 to 53 characters (letters, digits and '-', starting and ending with a letter or digit)",
    };
    let hosted_cluster_name = match cluster_name.filter(|n| !n.is_empty()) {
        Some(name) => c.check("name", name, &name_rule).then_some(name),
        None => cluster_id.filter(|id| id.len() <= MAX_HOSTED_CLUSTER_NAME_LEN).or_else(|| {
            if cluster_id.is_some() {
                c.violation("id", "is used as the HostedCluster name when the cluster has no name, so it must be at most 54 characters; give the cluster a shorter name");
            }
            None
        }),
    };

    (cluster_id, hosted_cluster_name)
}

/// Project, region, networks, Workload Identity and endpoint access.
fn gcp(c: &mut Checker<'_>, names: &SpecNames) -> Option<GcpSpec> {
    let project_id = c.required_checked(
        names.project_id,
        &Rule {
            min: 6,
            max: 30,
            pattern: regex!(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$"),
            expected: "a GCP project ID: 6–30 lowercase letters, digits or hyphens, starting with a letter and ending with a letter or digit (e.g. my-project-123)",
        },
    );
    let project_number = c.required_checked(
        names.project_number,
        &Rule {
            min: 1,
            max: 25,
            pattern: regex!(r"^[0-9]+$"),
            expected: "the numeric GCP project number (1–25 digits, as a string), as shown by `gcloud projects describe`",
        },
    );
    let region = c.required_checked(
        names.region,
        &Rule {
            min: 1,
            max: 63,
            pattern: regex!(r"^[a-z]+-[a-z]+[0-9]+$"),
            expected: "a GCP region such as us-central1 or europe-west2 (a region, not a zone)",
        },
    );
    let resource_name = |what: &'static str| Rule {
        min: 1,
        max: 63,
        pattern: gcp_resource_name(),
        expected: what,
    };
    let vpc_network_name = c.required_checked(
        names.network,
        &resource_name("a GCP VPC network name: 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen"),
    );
    let psc_subnet_name = c.required_checked(
        names.psc_subnet,
        &resource_name(if names.shape == SpecShape::Nested {
            "the GCP subnet for Private Service Connect: spec.platform.gcp.subnet (the upstream CLI uses one subnet for nodes and Private Service Connect) or spec.platform.gcp.privateServiceConnectSubnet; 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen"
        } else {
            "a GCP subnet name: 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen"
        }),
    );
    let wif_rule = Rule {
        min: 4,
        max: 32,
        pattern: wif_id(),
        expected: "a Workload Identity Federation id: 4–32 lowercase letters, digits or hyphens, starting with a letter and ending with a letter or digit",
    };
    let wif_pool_id = wif_id_field(c, names.wif_pool_id, &wif_rule);
    let wif_provider_id = wif_id_field(c, names.wif_provider_id, &wif_rule);

    let service_accounts = service_accounts(c, names, project_id);
    let endpoint_access = match c.optional(names.endpoint_access) {
        None => None,
        Some("Private") => Some(EndpointAccess::Private),
        Some("PublicAndPrivate") => Some(EndpointAccess::PublicAndPrivate),
        Some(other) => {
            c.violation(
                names.endpoint_access,
                format!(
                    "{} is not valid: expected Private or PublicAndPrivate (omit it for Private)",
                    quoted(other)
                ),
            );
            None
        }
    };

    Some(GcpSpec {
        project_id: project_id?.to_owned(),
        project_number: project_number?.to_owned(),
        region: region?.to_owned(),
        vpc_network_name: vpc_network_name?.to_owned(),
        psc_subnet_name: psc_subnet_name?.to_owned(),
        wif_pool_id: wif_pool_id?.to_owned(),
        wif_provider_id: wif_provider_id?.to_owned(),
        service_accounts: service_accounts?,
        endpoint_access,
    })
}

/// The six service accounts: syntax, same project as `project_id` (when that is valid), distinct.
fn service_accounts(
    c: &mut Checker<'_>,
    names: &SpecNames,
    project_id: Option<&str>,
) -> Option<ServiceAccounts> {
    let email_rule = Rule {
        min: 37,
        max: 85,
        pattern: service_account_email(),
        expected: "a Google service account email <name>@<project>.iam.gserviceaccount.com (37–85 characters)",
    };
    let email_fields = names.service_accounts;
    let mut emails: Vec<Option<&str>> = Vec::with_capacity(6);
    for field in email_fields {
        let Some(email) = c.required_checked(field, &email_rule) else {
            emails.push(None);
            continue;
        };
        if let Some(project) = project_id {
            let suffix = format!("@{project}.iam.gserviceaccount.com");
            if !email.ends_with(&suffix) {
                c.violation(
                    field,
                    format!(
                        "{} is not in the cluster's project: it must end with {suffix} ({})",
                        quoted(email),
                        names.project_id
                    ),
                );
                emails.push(None);
                continue;
            }
        }
        let duplicate = email_fields
            .iter()
            .zip(&emails)
            .find(|(_, other)| **other == Some(email))
            .map(|(other_field, _)| *other_field);
        if let Some(other_field) = duplicate {
            c.violation(
                field,
                format!(
                    "{} is the same account as {other_field}; HyperShift writes one credential per account, so each of the six service accounts must be distinct",
                    quoted(email)
                ),
            );
            emails.push(None);
            continue;
        }
        emails.push(Some(email));
    }

    let [
        Some(control_plane),
        Some(node_pool),
        Some(cloud_controller),
        Some(storage),
        Some(image_registry),
        Some(network),
    ] = <[Option<&str>; 6]>::try_from(emails).ok()?
    else {
        return None;
    };
    Some(ServiceAccounts {
        control_plane: control_plane.to_owned(),
        node_pool: node_pool.to_owned(),
        cloud_controller: cloud_controller.to_owned(),
        storage: storage.to_owned(),
        image_registry: image_registry.to_owned(),
        network: network.to_owned(),
    })
}

/// The release image (given, or built from the version and architecture) → the release
/// pullspec. The nested shape has no architecture key: a version's suffix names it, else x86_64.
fn release(c: &mut Checker<'_>, names: &SpecNames) -> (Option<String>, Option<Architecture>) {
    let explicit_arch = names.architecture.and_then(|field| c.optional(field));
    let architecture = match (explicit_arch, names.architecture) {
        (Some(a), Some(field)) => Architecture::parse(a).or_else(|| {
            c.violation(
                field,
                format!(
                    "{} is not supported for GCP hosted clusters: expected x86_64 (alias amd64), aarch64 (alias arm64) or multi",
                    quoted(a)
                ),
            );
            None
        }),
        _ => Some(Architecture::X86_64),
    };
    let image_rule = Rule {
        min: 1,
        max: 253,
        pattern: regex!(r"^[0-9A-Za-z_]+\S+$"),
        expected: "a release image pullspec without whitespace, starting with a letter, digit or underscore (e.g. quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64)",
    };
    let release_image = c.optional(names.release_image);
    let version = if release_image.is_some() {
        c.optional(names.version)
    } else {
        let expected = format!(
            "an OpenShift version such as 4.17.0 (or set {})",
            names.release_image
        );
        c.required(names.version, &expected)
    };
    let version_ok = version.is_none_or(|v| {
        let ok = c.check(
            names.version,
            v,
            &Rule {
                min: 5,
                max: 100,
                pattern: regex!(r"^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z._-]*)?$"),
                expected: "an OpenShift version x.y.z, optionally with a pre-release or architecture suffix (4.17.0, 4.18.0-rc.1, 4.17.0-multi)",
            },
        );
        ok && version_suffix_ok(c, names, v, explicit_arch.and(architecture))
    });
    if let Some(image) = release_image {
        let ok = c.check(names.release_image, image, &image_rule);
        return (ok.then(|| image.to_owned()), architecture);
    }
    let (Some(version), true, Some(arch)) = (version, version_ok, architecture) else {
        return (None, architecture);
    };
    let image = format!("{RELEASE_REPOSITORY}:{}", release_tag(version, arch));
    if image.len() > image_rule.max {
        c.violation(
            names.version,
            format!(
                "makes the release image {} longer than 253 characters",
                quoted(&image)
            ),
        );
        return (None, Some(arch));
    }
    (Some(image), Some(arch))
}

/// A version that already ends in an architecture word must name a tag that exists and agree
/// with an explicitly given architecture.
fn version_suffix_ok(
    c: &mut Checker<'_>,
    names: &SpecNames,
    version: &str,
    explicit: Option<Architecture>,
) -> bool {
    let Some(word) = tag_architecture_word(version) else {
        return true;
    };
    let Some(tagged) = Architecture::from_tag_suffix(word) else {
        let instead = match names.architecture {
            Some(field) => format!("give the bare version and set {field}"),
            None => format!(
                "give the bare version (x86_64) or set {}",
                names.release_image
            ),
        };
        c.violation(
            names.version,
            format!(
                "{} ends in '-{word}', which is not a release tag suffix for GCP: use -x86_64, -aarch64 or -multi, or {instead}",
                quoted(version)
            ),
        );
        return false;
    };
    if let (Some(arch), Some(field)) = (explicit.filter(|a| *a != tagged), names.architecture) {
        c.violation(
            field,
            format!(
                "is {} but {} {} already names {}; make them agree or drop the suffix from {}",
                arch.tag_suffix(),
                names.version,
                quoted(version),
                tagged.tag_suffix(),
                names.version,
            ),
        );
        return false;
    }
    true
}

type Networks = (Vec<ClusterNetwork>, Vec<Cidr>, Vec<Cidr>);

/// One network of the three lists (or the default of an unset list), for the cross checks.
struct Net {
    /// The field named when this entry is at fault.
    field: &'static str,
    /// How messages name it: `spec.networking.clusterNetwork[0].cidr 10.0.0.0/16`.
    described: String,
    /// Prefix of a violation about this entry: `""`, or `entry [1]: ` in a list of two.
    at: String,
    cidr: Cidr,
    defaulted: bool,
}

/// The three networks: syntax per the CRD (1–2 entries per list), a network address (no host
/// bits), `hostPrefix` within the network, one IP family, no overlap with each other (defaults
/// included) or with OVN-Kubernetes internal subnets.
fn networks(c: &mut Checker<'_>, names: &SpecNames) -> Option<Networks> {
    let before = c.violations.len();
    let (cluster, service, machine) = match names.shape {
        SpecShape::Flat => {
            let cluster = cidr_field(c, names.cluster_network_cidr, false);
            let service = cidr_field(c, names.service_network_cidr, false);
            let machine = cidr_field(c, names.machine_network_cidr, true);
            let (Ok(cluster), Ok(service), Ok(machine)) = (cluster, service, machine) else {
                return None;
            };
            let cluster: Vec<ClusterNetwork> = cluster
                .map(|cidr| ClusterNetwork {
                    cidr,
                    host_prefix: None,
                })
                .into_iter()
                .collect();
            (
                cluster,
                service.into_iter().collect(),
                machine.into_iter().collect(),
            )
        }
        SpecShape::Nested => {
            let cluster = cluster_network_list(c, names);
            let service = cidr_list(c, names.service_network, names.service_network_cidr, false);
            let machine = cidr_list(c, names.machine_network, names.machine_network_cidr, true);
            let (Ok(cluster), Ok(service), Ok(machine)) = (cluster, service, machine) else {
                return None;
            };
            (cluster, service, machine)
        }
    };
    if c.violations.len() != before {
        return None;
    }
    let mut nets = Vec::new();
    let cluster_cidrs: Vec<Cidr> = cluster.iter().map(|n| n.cidr.clone()).collect();
    for (list, entry, cidrs, default) in [
        (
            names.cluster_network,
            names.cluster_network_cidr,
            &cluster_cidrs,
            Some(DEFAULT_CLUSTER_NETWORK),
        ),
        (
            names.service_network,
            names.service_network_cidr,
            &service,
            Some(DEFAULT_SERVICE_NETWORK),
        ),
        (
            names.machine_network,
            names.machine_network_cidr,
            &machine,
            None,
        ),
    ] {
        if cidrs.is_empty() {
            if let Some(cidr) = default.and_then(default_cidr) {
                nets.push(Net {
                    field: list,
                    described: format!(
                        "the default {list} {} (used because {list} is not set)",
                        cidr.text
                    ),
                    at: String::new(),
                    cidr,
                    defaulted: true,
                });
            }
            continue;
        }
        for (i, cidr) in cidrs.iter().enumerate() {
            nets.push(Net {
                field: entry,
                described: format!("{} {}", indexed(entry, i, names.shape), cidr.text),
                at: at(i, cidrs.len()),
                cidr: cidr.clone(),
                defaulted: false,
            });
        }
    }
    let family = |n: &IpNet| {
        if matches!(n, IpNet::V4(_)) {
            "IPv4"
        } else {
            "IPv6"
        }
    };
    // One IP family (defaults included): name the explicit one of the first mismatching pair.
    'family: for (i, a) in nets.iter().enumerate() {
        for b in &nets[i + 1..] {
            if family(&a.cidr.net) != family(&b.cidr.net) {
                // The named entry is explicit: two defaults never conflict.
                let (this, other) = if b.defaulted { (a, b) } else { (b, a) };
                c.violation(
                    this.field,
                    format!(
                        "{}{} is {} but {} is {}: all cluster networks must use one IP family",
                        this.at,
                        this.cidr.text,
                        family(&this.cidr.net),
                        other.described,
                        family(&other.cidr.net),
                    ),
                );
                break 'family;
            }
        }
    }
    if c.violations.len() == before {
        for (i, a) in nets.iter().enumerate() {
            for b in &nets[i + 1..] {
                if overlaps(&a.cidr.net, &b.cidr.net) {
                    // The named entry is explicit: two defaults never overlap.
                    let (this, other) = if b.defaulted { (a, b) } else { (b, a) };
                    c.violation(
                        this.field,
                        format!(
                            "{}{} overlaps {}; choose non-overlapping ranges",
                            this.at, this.cidr.text, other.described
                        ),
                    );
                }
            }
            if a.defaulted {
                continue;
            }
            for (reserved, what) in OVN_RESERVED {
                if let Ok(r) = reserved.parse::<IpNet>()
                    && overlaps(&a.cidr.net, &r)
                {
                    c.violation(
                        a.field,
                        format!(
                            "{}{} overlaps {what} {reserved}; choose another range",
                            a.at, a.cidr.text
                        ),
                    );
                }
            }
        }
    }
    (c.violations.len() == before).then_some((cluster, service, machine))
}

/// `spec.networking.clusterNetwork[0].cidr` for entry 0 of `spec.networking.clusterNetwork[].cidr`
/// (a flat key stays as it is).
fn indexed(field: &str, i: usize, shape: SpecShape) -> String {
    match shape {
        SpecShape::Flat => field.to_owned(),
        SpecShape::Nested => field.replacen("[]", &format!("[{i}]"), 1),
    }
}

/// The prefix naming entry `i` in a violation, when the list has more than one.
fn at(i: usize, len: usize) -> String {
    if len > 1 {
        format!("entry [{i}]: ")
    } else {
        String::new()
    }
}

/// The entries of a nested network list: `Ok(empty)` when unset, `Err(())` after a violation
/// (not an array, empty, more than the CRD's 2 entries).
fn list_items<'a>(c: &mut Checker<'a>, list: &'static str, unset: &str) -> Result<&'a [Value], ()> {
    match c.get(list) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) if items.is_empty() => {
            c.violation(
                list,
                format!("is empty: give 1 or 2 entries, or leave it out ({unset})"),
            );
            Err(())
        }
        Some(Value::Array(items)) if items.len() > 2 => {
            c.violation(
                list,
                format!(
                    "has {} entries: the HostedCluster takes 1 or 2 (one IP family, so in practice one)",
                    items.len()
                ),
            );
            Err(())
        }
        Some(Value::Array(items)) => Ok(items.as_slice()),
        Some(other) => {
            c.violation(
                list,
                format!("must be an array, found {}", json_kind(other)),
            );
            Err(())
        }
    }
}

/// One entry's CIDR (a string), or a violation naming `field` (`at` says which entry).
fn entry_cidr(
    c: &mut Checker<'_>,
    field: &'static str,
    at: &str,
    value: Option<&Value>,
) -> Option<Cidr> {
    const EXPECTED: &str = "a network in CIDR notation, IPv4 (10.0.0.0/16) or IPv6 (fd01::/48)";
    match value {
        None | Some(Value::Null) => {
            c.violation(field, format!("{at}is required: {EXPECTED}"));
            None
        }
        Some(Value::String(s)) if s.is_empty() => {
            c.violation(field, format!("{at}is required: {EXPECTED}"));
            None
        }
        Some(Value::String(text)) => match parse_cidr(text) {
            Ok(net) => Some(Cidr {
                text: text.clone(),
                net,
            }),
            Err(problem) => {
                c.violation(field, format!("{at}{} {problem}", quoted(text)));
                None
            }
        },
        Some(other) => {
            c.violation(
                field,
                format!(
                    "{at}must be a string ({EXPECTED}), found {}",
                    json_kind(other)
                ),
            );
            None
        }
    }
}

/// `networking.clusterNetwork[{cidr, hostPrefix}]`.
fn cluster_network_list(c: &mut Checker<'_>, names: &SpecNames) -> Result<Vec<ClusterNetwork>, ()> {
    let items = list_items(
        c,
        names.cluster_network,
        &format!("the API server then uses {DEFAULT_CLUSTER_NETWORK}"),
    )?;
    let mut out = Vec::new();
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let at = at(i, items.len());
        let Some(entry) = item.as_object() else {
            c.violation(
                names.cluster_network,
                format!(
                    "{at}each entry must be an object {{cidr, hostPrefix}}, found {}",
                    json_kind(item)
                ),
            );
            ok = false;
            continue;
        };
        let cidr = entry_cidr(c, names.cluster_network_cidr, &at, entry.get("cidr"));
        let host_prefix = match entry.get("hostPrefix") {
            None | Some(Value::Null) => Ok(None),
            Some(v) => host_prefix(c, names.host_prefix, &at, v, cidr.as_ref()).map(Some),
        };
        match (cidr, host_prefix) {
            (Some(cidr), Ok(host_prefix)) => out.push(ClusterNetwork { cidr, host_prefix }),
            _ => ok = false,
        }
    }
    ok.then_some(out).ok_or(())
}

/// `hostPrefix`: an integer from the network's own prefix length to the address size (32 for
/// IPv4, 128 for IPv6): each node gets a `/hostPrefix` share of the network.
fn host_prefix(
    c: &mut Checker<'_>,
    field: &'static str,
    at: &str,
    value: &Value,
    cidr: Option<&Cidr>,
) -> Result<u8, ()> {
    let (min, max) = match cidr.map(|c| &c.net) {
        Some(net @ IpNet::V4(_)) => (net.prefix_len(), 32),
        Some(net @ IpNet::V6(_)) => (net.prefix_len(), 128),
        None => (0, 128),
    };
    let within = value
        .as_u64()
        .and_then(|n| u8::try_from(n).ok())
        .filter(|n| (min..=max).contains(n));
    if let Some(n) = within {
        return Ok(n);
    }
    let of = cidr.map_or_else(String::new, |c| format!(" for {}", c.text));
    let problem = if value.is_u64() || value.is_i64() {
        format!(
            "{at}{value} is out of range{of}: expected an integer from {min} to {max}, the prefix length of each node's share of the cluster network (e.g. 23)"
        )
    } else {
        format!(
            "{at}must be an integer from {min} to {max} (the prefix length of each node's share of the cluster network), found {}",
            json_kind(value)
        )
    };
    c.violation(field, problem);
    Err(())
}

/// `networking.serviceNetwork[]` (strings) or `networking.machineNetwork[{cidr}]` (`objects`).
fn cidr_list(
    c: &mut Checker<'_>,
    list: &'static str,
    entry: &'static str,
    objects: bool,
) -> Result<Vec<Cidr>, ()> {
    let unset = if objects {
        "the HostedCluster then has no machineNetwork".to_owned()
    } else {
        format!("the API server then uses {DEFAULT_SERVICE_NETWORK}")
    };
    let items = list_items(c, list, &unset)?;
    let mut out = Vec::new();
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let at = at(i, items.len());
        let value = if objects {
            let Some(object) = item.as_object() else {
                c.violation(
                    list,
                    format!(
                        "{at}each entry must be an object {{cidr}}, found {}",
                        json_kind(item)
                    ),
                );
                ok = false;
                continue;
            };
            object.get("cidr")
        } else {
            Some(item)
        };
        match entry_cidr(c, entry, &at, value) {
            Some(cidr) => out.push(cidr),
            None => ok = false,
        }
    }
    ok.then_some(out).ok_or(())
}

fn default_cidr(text: &str) -> Option<Cidr> {
    text.parse().ok().map(|net| Cidr {
        text: text.to_owned(),
        net,
    })
}

fn overlaps(a: &IpNet, b: &IpNet) -> bool {
    a.contains(b) || b.contains(a)
}

/// One CIDR field: `Ok(None)` when unset (and optional), `Err(())` after recording a violation.
fn cidr_field(
    c: &mut Checker<'_>,
    field: &'static str,
    required: bool,
) -> Result<Option<Cidr>, ()> {
    const EXPECTED: &str = "a network in CIDR notation, IPv4 (10.0.0.0/16) or IPv6 (fd01::/48)";
    let value = if required {
        c.required(field, EXPECTED)
    } else {
        c.optional(field)
    };
    let Some(text) = value else {
        return if required || c.get(field).is_some_and(|v| !v.is_null() && !v.is_string()) {
            Err(())
        } else {
            Ok(None)
        };
    };
    let net = parse_cidr(text)
        .map_err(|problem| c.violation(field, format!("{} {problem}", quoted(text))))?;
    Ok(Some(Cidr {
        text: text.to_owned(),
        net,
    }))
}

/// Parses a CIDR by the CRD's syntax rule (≤ 43 characters) and as an address/prefix, and refuses
/// host bits.
pub fn parse_cidr(text: &str) -> Result<IpNet, String> {
    const EXPECTED: &str = "a network in CIDR notation, IPv4 (10.0.0.0/16) or IPv6 (fd01::/48)";
    if text.len() > 43 || !(cidr_v4_syntax().is_match(text) || cidr_v6_syntax().is_match(text)) {
        return Err(format!("is not valid: expected {EXPECTED}"));
    }
    let net: IpNet = text
        .parse()
        .map_err(|_| format!("is not a valid CIDR: expected {EXPECTED} with octets ≤ 255 and prefix ≤ 32 (IPv4) or ≤ 128 (IPv6)"))?;
    if net.trunc() != net {
        return Err(format!(
            "has host bits set: the network address is {}",
            net.trunc()
        ));
    }
    Ok(net)
}

/// The valid test clusters for other modules' tests: `tests/fixtures/cluster-valid.json` (the flat
/// keys) and `cluster-nested.json` (HyperFleet's nested shape; the same cluster).
#[cfg(test)]
pub(crate) mod fixture {
    #![allow(clippy::unwrap_used)]

    use super::*;

    pub const VALID: &str = include_str!("../../tests/fixtures/cluster-valid.json");
    pub const NESTED: &str = include_str!("../../tests/fixtures/cluster-nested.json");

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
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    use super::fixture::VALID;

    fn input() -> ClusterInput {
        ClusterInput::from_json(VALID).unwrap()
    }

    fn validate_with(
        edit: impl FnOnce(&mut Map<String, Value>),
    ) -> Result<ClusterSpec, Vec<SpecViolation>> {
        let mut input = input();
        edit(&mut input.spec);
        ClusterSpec::validate(
            input.id.as_deref().unwrap(),
            input.name.as_deref(),
            &input.spec,
        )
    }

    fn violations_with(field: &str, value: Value) -> Vec<SpecViolation> {
        validate_with(|spec| {
            spec.insert(field.to_owned(), value.clone());
        })
        .expect_err(&format!("{field} = {value} must be rejected"))
    }

    /// Every violation names `field`, and there is at least one.
    #[track_caller]
    fn assert_names_only(violations: &[SpecViolation], field: &str) {
        let field = spec_field(field);
        assert!(!violations.is_empty());
        for v in violations {
            assert_eq!(v.field, field, "unexpected violation {v}");
        }
    }

    /// The violation's field for a flat key (`spec.<key>`); `id`, `name` and paths as they are.
    fn spec_field(field: &str) -> String {
        if ["id", "name"].contains(&field) || field.starts_with("spec.") {
            field.to_owned()
        } else {
            format!("spec.{field}")
        }
    }

    #[test]
    fn the_valid_fixture_is_accepted_and_typed() {
        let spec = validate_with(|_| {}).unwrap();
        assert_eq!(spec.cluster_id, "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b");
        assert_eq!(spec.hosted_cluster_name, "prod-eu-1");
        assert_eq!(
            spec.release_image,
            "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"
        );
        assert_eq!(
            spec.gcp.endpoint_access,
            Some(EndpointAccess::PublicAndPrivate)
        );
        assert_eq!(spec.machine_network[0].text, "10.0.0.0/16");
        assert_eq!(
            spec.gcp.service_accounts.network,
            "hc-network@my-project-123.iam.gserviceaccount.com"
        );
    }

    #[test]
    fn a_uuidv7_cluster_id_starting_with_a_digit_is_valid_and_names_the_cluster_without_a_name() {
        let input = input();
        let id = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
        let spec = ClusterSpec::validate(id, None, &input.spec).unwrap();
        assert_eq!(spec.cluster_id, id);
        assert_eq!(spec.hosted_cluster_name, id);
    }

    #[test]
    fn a_bare_spec_is_read_as_a_spec() {
        let bare = ClusterInput::from_json(r#"{"gcp_region": "us-central1"}"#).unwrap();
        assert_eq!(bare.id, None);
        assert_eq!(bare.generation, None);
        assert_eq!(bare.spec.get("gcp_region"), Some(&json!("us-central1")));
        let cluster = input();
        assert_eq!(cluster.generation, Some(3));
        assert_eq!(cluster.name.as_deref(), Some("prod-eu-1"));
    }

    #[test]
    fn deleted_time_marks_a_deleting_cluster() {
        assert_eq!(input().deleted_time, None);
        let deleting = ClusterInput::from_json(
            r#"{"id": "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b", "generation": 4, "deleted_time": "2026-11-26T10:00:00Z", "deleted_by": "jdoe@example.com", "spec": {}}"#,
        )
        .unwrap();
        assert_eq!(
            deleting.deleted_time.as_deref(),
            Some("2026-11-26T10:00:00Z")
        );
        // `null` and "" are not a deletion; a number is not a time.
        for text in [
            r#"{"deleted_time": null, "spec": {}}"#,
            r#"{"deleted_time": "", "spec": {}}"#,
        ] {
            assert_eq!(
                ClusterInput::from_json(text).unwrap().deleted_time,
                None,
                "{text}"
            );
        }
        assert!(matches!(
            ClusterInput::from_json(r#"{"deleted_time": 5, "spec": {}}"#),
            Err(InputError::Field {
                field: "deleted_time",
                ..
            })
        ));
        // A bare spec never says it is deleted, even with such a key.
        let bare = ClusterInput::from_json(r#"{"deleted_time": "2026-11-26T10:00:00Z"}"#).unwrap();
        assert_eq!(bare.deleted_time, None);
    }

    #[test]
    fn unreadable_input_is_an_input_error() {
        assert!(matches!(
            ClusterInput::from_json("[1]"),
            Err(InputError::NotAnObject { .. })
        ));
        assert!(matches!(
            ClusterInput::from_json("{"),
            Err(InputError::Json { .. })
        ));
        assert!(matches!(
            ClusterInput::from_json(r#"{"id": 7, "spec": {}}"#),
            Err(InputError::Field { field: "id", .. })
        ));
        assert!(matches!(
            ClusterInput::from_json(r#"{"generation": "3", "spec": {}}"#),
            Err(InputError::Field {
                field: "generation",
                ..
            })
        ));
    }

    #[test]
    fn bad_values_are_rejected_naming_the_field() {
        let long = |n: usize| "a".repeat(n);
        let cases: Vec<(&str, Value)> = vec![
            ("gcp_project_id", json!("My-Project")),
            ("gcp_project_id", json!("short")),
            ("gcp_project_id", json!(long(31))),
            ("gcp_project_id", json!("my-project-")),
            ("gcp_project_id", json!("1project")),
            ("gcp_project_number", json!("12ab")),
            ("gcp_project_number", json!("1".repeat(26))),
            ("gcp_project_number", json!(123456)),
            ("gcp_region", json!("us-central1-a")),
            ("gcp_region", json!("uscentral1")),
            ("gcp_region", json!("US-central1")),
            ("vpc_network_name", json!("Hcp_vpc")),
            ("vpc_network_name", json!("-vpc")),
            ("vpc_network_name", json!("vpc-")),
            ("vpc_network_name", json!(long(64))),
            ("psc_subnet_name", json!("1subnet")),
            ("wif_pool_id", json!("gcp-pool")),
            ("wif_pool_id", json!("abc")),
            ("wif_pool_id", json!("Pool-1")),
            ("wif_pool_id", json!(long(33))),
            ("wif_provider_id", json!("gcp-provider")),
            ("wif_provider_id", json!("provider-")),
            ("endpoint_access", json!("Public")),
            ("endpoint_access", json!("private")),
            ("openshift_version", json!("4.17")),
            ("openshift_version", json!("v4.17.0")),
            ("openshift_version", json!("4.17.0-arm64")),
            ("openshift_version", json!("4.17.0-s390x")),
            ("release_image", json!(" quay.io/x:1")),
            ("release_image", json!("quay.io/x :1")),
            ("architecture", json!("s390x")),
            ("architecture", json!("ppc64le")),
            ("architecture", json!("i386")),
            ("machine_network_cidr", json!("10.0.0.0")),
            ("machine_network_cidr", json!("300.0.0.0/8")),
            ("machine_network_cidr", json!("10.0.0.1/16")),
            ("machine_network_cidr", json!("10.0.0.0/33")),
            ("machine_network_cidr", json!("not-a-cidr")),
            ("machine_network_cidr", json!("10.0.0.0/016")),
            ("cluster_network_cidr", json!("10.132.0.0/99")),
            ("service_network_cidr", json!("fd00::/129")),
            ("base_domain", json!("bad_domain.com")),
            ("base_domain", json!(format!("{}.com", long(250)))),
            ("issuer_url", json!("http://insecure.example.com")),
            ("issuer_url", json!("https://example.com/?a=b")),
            ("issuer_url", json!("not a url")),
            ("pull_secret_name", json!("Pull_Secret")),
            ("pull_secret_name", json!("-x")),
            ("ssh_key_secret_name", json!("ssh key")),
            ("service_account_signing_key_secret_name", json!("Key")),
            ("external_dns_domain", json!("bad domain")),
        ];
        for (field, value) in cases {
            let violations = violations_with(field, value.clone());
            assert_names_only(&violations, field);
            assert!(
                violations[0].problem.len() > 20,
                "{field}={value}: message should say what is expected: {}",
                violations[0].problem
            );
        }
    }

    #[test]
    fn every_service_account_email_is_checked_for_syntax_and_project() {
        for field in [
            "control_plane_sa_email",
            "nodepool_sa_email",
            "cloud_controller_sa_email",
            "storage_sa_email",
            "image_registry_sa_email",
            "network_sa_email",
        ] {
            assert_names_only(&violations_with(field, json!("not-an-email")), field);
            assert_names_only(
                &violations_with(field, json!("a@b.iam.gserviceaccount.com")),
                field,
            );
            let other = violations_with(
                field,
                json!("hc-someone-else@other-project.iam.gserviceaccount.com"),
            );
            assert_names_only(&other, field);
            assert!(
                other[0]
                    .problem
                    .contains("@my-project-123.iam.gserviceaccount.com"),
                "{}",
                other[0]
            );
        }
    }

    #[test]
    fn service_accounts_must_be_distinct() {
        let violations = violations_with(
            "storage_sa_email",
            json!("hc-control-plane@my-project-123.iam.gserviceaccount.com"),
        );
        assert_names_only(&violations, "storage_sa_email");
        assert!(violations[0].problem.contains("control_plane_sa_email"));
    }

    #[test]
    fn required_fields_are_named_when_missing() {
        for field in [
            "gcp_project_id",
            "gcp_project_number",
            "gcp_region",
            "vpc_network_name",
            "psc_subnet_name",
            "wif_pool_id",
            "wif_provider_id",
            "control_plane_sa_email",
            "nodepool_sa_email",
            "cloud_controller_sa_email",
            "storage_sa_email",
            "image_registry_sa_email",
            "network_sa_email",
            "openshift_version",
            "machine_network_cidr",
            "base_domain",
            "issuer_url",
            "pull_secret_name",
        ] {
            for missing in [None, Some(Value::Null), Some(json!(""))] {
                let violations = validate_with(|spec| {
                    spec.remove(field);
                    if let Some(v) = missing.clone() {
                        spec.insert(field.to_owned(), v);
                    }
                })
                .expect_err(field);
                // Emails also fail the same-project rule only when present, so exactly one.
                assert_eq!(violations.len(), 1, "{field}: {violations:?}");
                assert_eq!(violations[0].field, spec_field(field));
                assert!(violations[0].problem.starts_with("is required"));
            }
        }
    }

    #[test]
    fn optional_fields_may_be_absent_or_empty() {
        let spec = validate_with(|spec| {
            for field in [
                "endpoint_access",
                "cluster_network_cidr",
                "service_network_cidr",
                "service_account_signing_key_secret_name",
                "ssh_key_secret_name",
                "architecture",
            ] {
                spec.insert(field.to_owned(), json!(""));
            }
        })
        .unwrap();
        assert_eq!(spec.gcp.endpoint_access, None);
        assert!(spec.cluster_network.is_empty());
        assert_eq!(spec.ssh_key_secret_name, None);
        assert_eq!(spec.architecture, Architecture::X86_64);
    }

    #[test]
    fn release_image_overrides_the_version() {
        let spec = validate_with(|spec| {
            spec.remove("openshift_version");
            spec.insert(
                "release_image".into(),
                json!("quay.io/example/release@sha256:abcd"),
            );
        })
        .unwrap();
        assert_eq!(spec.release_image, "quay.io/example/release@sha256:abcd");
    }

    #[test]
    fn every_violation_is_collected_at_once() {
        let violations = validate_with(|spec| {
            spec.insert("gcp_region".into(), json!("bad"));
            spec.insert("cluster_network_cidr".into(), json!("10.0.0.0/8x"));
            spec.insert("endpoint_access".into(), json!("Open"));
            spec.remove("pull_secret_name");
        })
        .unwrap_err();
        let fields: Vec<_> = violations.iter().map(|v| v.field).collect();
        assert_eq!(
            fields,
            [
                "spec.gcp_region",
                "spec.endpoint_access",
                "spec.cluster_network_cidr",
                "spec.pull_secret_name"
            ]
        );
    }

    #[test]
    fn cluster_id_and_name_are_validated() {
        let spec = input().spec;
        // Deliberately bad ids: not a DNS label, and longer than a GCP label value allows.
        let v = ClusterSpec::validate("Bad_ID", Some("prod-eu-1"), &spec).unwrap_err();
        assert_names_only(&v, "id");
        let v = ClusterSpec::validate(&"a".repeat(61), Some("prod-eu-1"), &spec).unwrap_err();
        assert_names_only(&v, "id");
        let id = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
        let v = ClusterSpec::validate(id, Some("My Cluster"), &spec).unwrap_err();
        assert_names_only(&v, "name");
        // The HyperFleet API's length rule for cluster names: 3–53.
        for bad in ["ab".to_owned(), "n".repeat(54), "n".repeat(55)] {
            let v = ClusterSpec::validate(id, Some(&bad), &spec).unwrap_err();
            assert_names_only(&v, "name");
            assert!(v[0].problem.contains("3–53 characters"), "{}", v[0]);
        }
        for good in ["abc".to_owned(), "n".repeat(53)] {
            let valid = ClusterSpec::validate(id, Some(&good), &spec).unwrap();
            assert_eq!(valid.hosted_cluster_name, good);
        }
        // Without a name the id becomes the HostedCluster name, so it must fit that too.
        let v = ClusterSpec::validate(&"a".repeat(55), None, &spec).unwrap_err();
        assert_names_only(&v, "id");
    }

    #[test]
    fn networks_must_not_overlap_each_other() {
        let v = violations_with("machine_network_cidr", json!("10.132.0.0/16"));
        assert_names_only(&v, "machine_network_cidr");
        assert!(
            v[0].problem.contains("cluster_network_cidr 10.132.0.0/14"),
            "{}",
            v[0]
        );

        // Two explicit networks: the later field in cluster/service/machine order is named, the
        // message names the other.
        let v = violations_with("service_network_cidr", json!("10.0.128.0/17"));
        assert_names_only(&v, "machine_network_cidr");
        assert!(
            v[0].problem.contains("service_network_cidr 10.0.128.0/17"),
            "{}",
            v[0]
        );
    }

    #[test]
    fn networks_must_not_overlap_the_defaults_of_unset_networks() {
        let v = validate_with(|spec| {
            spec.remove("service_network_cidr");
            spec.insert("machine_network_cidr".into(), json!("172.31.0.0/20"));
        })
        .unwrap_err();
        assert_names_only(&v, "machine_network_cidr");
        assert!(
            v[0].problem
                .contains("default spec.service_network_cidr 172.31.0.0/16"),
            "{}",
            v[0]
        );
    }

    #[test]
    fn networks_must_not_overlap_ovn_internal_subnets() {
        let v = violations_with("machine_network_cidr", json!("100.64.0.0/24"));
        assert_names_only(&v, "machine_network_cidr");
        assert!(v[0].problem.contains("join subnet"));
        let v = violations_with("cluster_network_cidr", json!("100.0.0.0/8"));
        assert_names_only(&v, "cluster_network_cidr");
    }

    #[test]
    fn networks_must_share_one_ip_family() {
        let v = violations_with("machine_network_cidr", json!("fd02::/48"));
        assert_names_only(&v, "machine_network_cidr");
        assert!(v[0].problem.contains("one IP family"));
    }

    #[test]
    fn an_ipv6_machine_network_conflicts_with_the_ipv4_defaults() {
        let v = validate_with(|spec| {
            spec.remove("cluster_network_cidr");
            spec.remove("service_network_cidr");
            spec.insert("machine_network_cidr".into(), json!("fd03::/64"));
        })
        .unwrap_err();
        assert_names_only(&v, "machine_network_cidr");
        assert!(
            v[0].problem
                .contains("the default spec.cluster_network_cidr 10.132.0.0/14"),
            "{}",
            v[0]
        );
    }

    #[test]
    fn ipv6_networks_are_accepted() {
        let spec = validate_with(|spec| {
            spec.insert("cluster_network_cidr".into(), json!("fd01::/48"));
            spec.insert("service_network_cidr".into(), json!("fd02::/112"));
            spec.insert("machine_network_cidr".into(), json!("fd03::/64"));
        })
        .unwrap();
        assert_eq!(spec.machine_network[0].text, "fd03::/64");
    }

    #[test]
    fn release_tags_carry_an_architecture_suffix() {
        assert_eq!(release_tag("4.17.0", Architecture::X86_64), "4.17.0-x86_64");
        assert_eq!(
            release_tag("4.17.0", Architecture::Aarch64),
            "4.17.0-aarch64"
        );
        assert_eq!(release_tag("4.17.0", Architecture::Multi), "4.17.0-multi");
        assert_eq!(
            release_tag("4.18.0-rc.1", Architecture::X86_64),
            "4.18.0-rc.1-x86_64"
        );
        assert_eq!(
            release_tag("4.17.0-multi", Architecture::X86_64),
            "4.17.0-multi"
        );
        assert_eq!(
            release_tag("4.17.0-aarch64", Architecture::X86_64),
            "4.17.0-aarch64"
        );
        assert_eq!(Architecture::parse("arm64"), Some(Architecture::Aarch64));
        assert_eq!(Architecture::parse("amd64"), Some(Architecture::X86_64));
        assert_eq!(Architecture::parse("s390x"), None);
    }

    #[test]
    fn architecture_from_the_spec_picks_the_tag_suffix() {
        let image = |arch: &str, version: &str| {
            validate_with(|spec| {
                spec.insert("architecture".into(), json!(arch));
                spec.insert("openshift_version".into(), json!(version));
            })
            .map(|s| s.release_image)
        };
        let repo = RELEASE_REPOSITORY;
        assert_eq!(
            image("arm64", "4.17.0").unwrap(),
            format!("{repo}:4.17.0-aarch64")
        );
        assert_eq!(
            image("aarch64", "4.17.0").unwrap(),
            format!("{repo}:4.17.0-aarch64")
        );
        assert_eq!(
            image("amd64", "4.17.0").unwrap(),
            format!("{repo}:4.17.0-x86_64")
        );
        assert_eq!(
            image("x86_64", "4.17.0-x86_64").unwrap(),
            format!("{repo}:4.17.0-x86_64")
        );
        assert_eq!(
            image("", "4.17.0-multi").unwrap(),
            format!("{repo}:4.17.0-multi")
        );
        let conflict = image("x86_64", "4.17.0-aarch64").unwrap_err();
        assert_names_only(&conflict, "architecture");
    }

    #[test]
    fn parse_cidr_refuses_host_bits_and_names_the_network() {
        let err = parse_cidr("10.0.0.1/16").unwrap_err();
        assert!(err.contains("10.0.0.0/16"), "{err}");
        assert!(parse_cidr("::/0").is_ok());
        assert!(parse_cidr("0.0.0.0/0").is_ok());
    }

    proptest! {
        #[test]
        fn any_ipv4_network_round_trips(addr: u32, prefix in 0u8..=32) {
            let net = ipnet::Ipv4Net::new(std::net::Ipv4Addr::from(addr), prefix).unwrap().trunc();
            let text = net.to_string();
            prop_assert_eq!(parse_cidr(&text), Ok(IpNet::V4(net)));
        }

        #[test]
        fn any_ipv6_network_round_trips(addr: u128, prefix in 0u8..=128) {
            let net = ipnet::Ipv6Net::new(std::net::Ipv6Addr::from(addr), prefix).unwrap().trunc();
            let text = net.to_string();
            // The CRD's IPv6 rule does not accept every textual form (e.g. embedded IPv4).
            if cidr_v6_syntax().is_match(&text) {
                prop_assert_eq!(parse_cidr(&text), Ok(IpNet::V6(net)));
            }
        }

        #[test]
        fn parse_cidr_never_panics(text in ".{0,50}") {
            let _ = parse_cidr(&text);
        }

        #[test]
        fn validation_never_panics_on_arbitrary_strings(field in prop::sample::select(vec![
            "gcp_project_id", "gcp_region", "wif_pool_id", "nodepool_sa_email", "openshift_version",
            "architecture", "cluster_network_cidr", "machine_network_cidr", "issuer_url", "release_image",
        ]), value in ".{0,90}") {
            let _ = validate_with(|spec| { spec.insert(field.to_owned(), json!(value)); });
        }
    }
}

/// HyperFleet's nested shape (`tests/fixtures/cluster-nested.json`), and mixing it with the flat
/// keys.
#[cfg(test)]
mod nested_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    use super::fixture::{self, NESTED as NESTED_JSON, VALID};

    const ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";

    /// The nested fixture's spec with `edit` applied to it as a JSON value, validated.
    fn nested(edit: impl FnOnce(&mut Value)) -> Result<ClusterSpec, Vec<SpecViolation>> {
        fixture::nested_with(|spec| {
            let mut value = Value::Object(std::mem::take(spec));
            edit(&mut value);
            *spec = value.as_object().cloned().unwrap_or_default();
        })
    }

    /// Sets the value at `pointer` (whose parent exists).
    fn set(spec: &mut Value, pointer: &str, value: Value) {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        let parent = spec
            .pointer_mut(parent)
            .unwrap_or_else(|| panic!("{parent}"));
        match parent {
            Value::Array(items) => items[key.parse::<usize>().unwrap()] = value,
            Value::Object(object) => {
                object.insert(key.to_owned(), value);
            }
            other => panic!("{pointer}: parent is {other}"),
        }
    }

    fn remove(spec: &mut Value, pointer: &str) {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        spec.pointer_mut(parent)
            .and_then(Value::as_object_mut)
            .unwrap()
            .remove(key);
    }

    fn fields(violations: &[SpecViolation]) -> Vec<&'static str> {
        violations.iter().map(|v| v.field).collect()
    }

    #[test]
    fn the_nested_fixture_is_the_flat_fixtures_cluster() {
        let spec = nested(|_| {}).unwrap();
        assert_eq!(spec.names, &NESTED_PSC_FROM_SUBNET);
        assert_eq!(spec.cluster_network[0].host_prefix, Some(23));
        assert_eq!(spec.infra_id, None);
        let without_host_prefix =
            nested(|s| remove(s, "/networking/clusterNetwork/0/hostPrefix")).unwrap();
        assert_eq!(
            ClusterSpec {
                names: &FLAT,
                ..without_host_prefix
            },
            fixture::spec()
        );
    }

    #[test]
    fn the_psc_subnet_defaults_to_the_subnet_and_is_named_by_it() {
        let v = nested(|s| set(s, "/platform/gcp/subnet", json!("Bad_Subnet"))).unwrap_err();
        assert_eq!(fields(&v), ["spec.platform.gcp.subnet"]);
        let v = nested(|s| remove(s, "/platform/gcp/subnet")).unwrap_err();
        assert_eq!(fields(&v), ["spec.platform.gcp.subnet"]);
        assert!(
            v[0].problem
                .contains("spec.platform.gcp.privateServiceConnectSubnet"),
            "{}",
            v[0]
        );
        let spec = nested(|s| {
            remove(s, "/platform/gcp/subnet");
            set(
                s,
                "/platform/gcp/privateServiceConnectSubnet",
                json!("hcp-psc"),
            );
        })
        .unwrap();
        assert_eq!(spec.gcp.psc_subnet_name, "hcp-psc");
    }

    #[test]
    fn an_empty_spec_names_every_required_nested_field() {
        let v = ClusterSpec::validate(ID, Some("prod-eu-1"), &Map::new()).unwrap_err();
        assert!(
            v.iter().all(|v| v.problem.starts_with("is required")),
            "{v:?}"
        );
        assert_eq!(
            fields(&v),
            [
                "spec.platform.type",
                "spec.platform.gcp.projectID",
                "spec.platform.gcp.workloadIdentity.projectNumber",
                "spec.platform.gcp.region",
                "spec.platform.gcp.network",
                "spec.platform.gcp.subnet",
                "spec.platform.gcp.workloadIdentity.poolID",
                "spec.platform.gcp.workloadIdentity.providerID",
                "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.controlPlane",
                "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.nodePool",
                "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.cloudController",
                "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.storage",
                "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.imageRegistry",
                "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.network",
                "spec.release.version",
                "spec.dns.baseDomain",
                "spec.issuerURL",
                "spec.pullSecret.name",
            ]
        );
    }

    #[test]
    fn optional_nested_fields_may_be_left_out() {
        let spec = nested(|s| {
            for pointer in [
                "/platform/gcp/zone",
                "/platform/gcp/endpointAccess",
                "/release/channelGroup",
                "/networking/clusterNetwork",
                "/networking/serviceNetwork",
                "/networking/machineNetwork",
                "/sshKey",
                "/serviceAccountSigningKey",
            ] {
                remove(s, pointer);
            }
        })
        .unwrap();
        assert!(spec.cluster_network.is_empty());
        assert!(spec.service_network.is_empty());
        assert!(spec.machine_network.is_empty());
        assert_eq!(spec.gcp.endpoint_access, None);
        assert_eq!(spec.ssh_key_secret_name, None);
        // Without a networking object at all, too.
        nested(|s| remove(s, "/networking")).unwrap();
    }

    #[test]
    fn a_wrong_type_is_named_at_its_path() {
        let cases: Vec<(&str, Value, &str)> = vec![
            ("/platform", json!("gcp"), "spec.platform"),
            ("/platform/type", json!(5), "spec.platform.type"),
            ("/platform/gcp", json!([]), "spec.platform.gcp"),
            (
                "/platform/gcp/projectID",
                json!(123),
                "spec.platform.gcp.projectID",
            ),
            (
                "/platform/gcp/region",
                json!(true),
                "spec.platform.gcp.region",
            ),
            ("/platform/gcp/zone", json!(1), "spec.platform.gcp.zone"),
            (
                "/platform/gcp/network",
                json!({"name": "hcp-vpc"}),
                "spec.platform.gcp.network",
            ),
            ("/platform/gcp/subnet", json!(7), "spec.platform.gcp.subnet"),
            (
                "/platform/gcp/endpointAccess",
                json!(1),
                "spec.platform.gcp.endpointAccess",
            ),
            (
                "/platform/gcp/workloadIdentity",
                json!("hyperfleet-pool"),
                "spec.platform.gcp.workloadIdentity",
            ),
            (
                "/platform/gcp/workloadIdentity/projectNumber",
                json!(123_456_789_012_u64),
                "spec.platform.gcp.workloadIdentity.projectNumber",
            ),
            (
                "/platform/gcp/workloadIdentity/serviceAccountsEmails",
                json!(["hc-storage@my-project-123.iam.gserviceaccount.com"]),
                "spec.platform.gcp.workloadIdentity.serviceAccountsEmails",
            ),
            ("/release", json!("4.17.0"), "spec.release"),
            ("/release/version", json!(4.17), "spec.release.version"),
            (
                "/release/image",
                json!(["quay.io/x:1"]),
                "spec.release.image",
            ),
            (
                "/release/channelGroup",
                json!(1),
                "spec.release.channelGroup",
            ),
            ("/networking", json!([]), "spec.networking"),
            (
                "/networking/clusterNetwork",
                json!({"cidr": "10.132.0.0/14"}),
                "spec.networking.clusterNetwork",
            ),
            (
                "/networking/clusterNetwork/0",
                json!("10.132.0.0/14"),
                "spec.networking.clusterNetwork",
            ),
            (
                "/networking/clusterNetwork/0/cidr",
                json!(10),
                "spec.networking.clusterNetwork[].cidr",
            ),
            (
                "/networking/clusterNetwork/0/hostPrefix",
                json!("23"),
                "spec.networking.clusterNetwork[].hostPrefix",
            ),
            (
                "/networking/serviceNetwork",
                json!("172.31.0.0/16"),
                "spec.networking.serviceNetwork",
            ),
            (
                "/networking/serviceNetwork/0",
                json!({"cidr": "172.31.0.0/16"}),
                "spec.networking.serviceNetwork[]",
            ),
            (
                "/networking/machineNetwork/0",
                json!("10.0.0.0/16"),
                "spec.networking.machineNetwork",
            ),
            ("/dns", json!("hcp.example.com"), "spec.dns"),
            ("/dns/baseDomain", json!(1), "spec.dns.baseDomain"),
            ("/infraID", json!(1), "spec.infraID"),
            ("/issuerURL", json!({}), "spec.issuerURL"),
            (
                "/pullSecret",
                json!("prod-eu-1-pull-secret"),
                "spec.pullSecret",
            ),
            ("/pullSecret/name", json!(1), "spec.pullSecret.name"),
        ];
        for (pointer, value, field) in cases {
            let v = nested(|s| set(s, pointer, value.clone()))
                .expect_err(&format!("{pointer} = {value} must be refused"));
            assert_eq!(fields(&v), [field], "{pointer} = {value}: {v:?}");
            let named = &v[0];
            assert!(
                named.problem.contains("found") || named.problem.contains("must be"),
                "{pointer} = {value}: the message says what type is expected: {named}"
            );
        }
    }

    #[test]
    fn platform_type_must_be_gcp() {
        let v = nested(|s| set(s, "/platform/type", json!("template"))).unwrap_err();
        assert_eq!(fields(&v), ["spec.platform.type"]);
        assert!(v[0].problem.contains("spec.platform.gcp"), "{}", v[0]);
        for other in ["aws", "GCP", ""] {
            let v = nested(|s| set(s, "/platform/type", json!(other))).unwrap_err();
            assert_eq!(fields(&v), ["spec.platform.type"], "{other}");
            assert!(v[0].problem.contains("\"gcp\""), "{}", v[0]);
        }
    }

    #[test]
    fn network_lists_take_one_or_two_entries() {
        for list in ["clusterNetwork", "serviceNetwork", "machineNetwork"] {
            let v = nested(|s| set(s, &format!("/networking/{list}"), json!([]))).unwrap_err();
            assert_eq!(fields(&v), [format!("spec.networking.{list}")], "{list}");
            assert!(v[0].problem.starts_with("is empty"), "{}", v[0]);
        }
        let v = nested(|s| {
            set(
                s,
                "/networking/serviceNetwork",
                json!(["172.30.0.0/16", "172.31.0.0/16", "172.29.0.0/16"]),
            );
        })
        .unwrap_err();
        assert_eq!(fields(&v), ["spec.networking.serviceNetwork"]);
    }

    #[test]
    fn two_cluster_networks_of_one_family_are_sent_and_mixed_families_refused() {
        let two = json!([
            {"cidr": "10.132.0.0/14", "hostPrefix": 23},
            {"cidr": "10.136.0.0/14", "hostPrefix": 23},
        ]);
        let spec = nested(|s| set(s, "/networking/clusterNetwork", two)).unwrap();
        assert_eq!(spec.cluster_network.len(), 2);
        assert_eq!(spec.cluster_network[1].cidr.text, "10.136.0.0/14");
        assert_eq!(spec.cluster_network[1].host_prefix, Some(23));
        let mixed = json!([
            {"cidr": "10.132.0.0/14", "hostPrefix": 23},
            {"cidr": "fd01::/48", "hostPrefix": 64},
        ]);
        let v = nested(|s| set(s, "/networking/clusterNetwork", mixed)).unwrap_err();
        assert_eq!(fields(&v), ["spec.networking.clusterNetwork[].cidr"]);
        assert_eq!(
            v[0].problem,
            "entry [1]: fd01::/48 is IPv6 but spec.networking.clusterNetwork[0].cidr 10.132.0.0/14 is IPv4: all cluster networks must use one IP family"
        );
        let overlapping = json!([{"cidr": "10.132.0.0/14"}, {"cidr": "10.134.0.0/16"}]);
        let v = nested(|s| set(s, "/networking/clusterNetwork", overlapping)).unwrap_err();
        assert_eq!(fields(&v), ["spec.networking.clusterNetwork[].cidr"]);
        assert!(v[0].problem.contains("overlaps"), "{}", v[0]);
    }

    #[test]
    fn host_prefix_must_lie_within_the_network() {
        for good in [14, 23, 32] {
            nested(|s| set(s, "/networking/clusterNetwork/0/hostPrefix", json!(good)))
                .unwrap_or_else(|v| panic!("{good}: {v:?}"));
        }
        for bad in [
            json!(13),
            json!(33),
            json!(-1),
            json!(300),
            json!(23.5),
            json!(null),
        ] {
            let result = nested(|s| set(s, "/networking/clusterNetwork/0/hostPrefix", bad.clone()));
            if bad.is_null() {
                // null is "not set", like an absent hostPrefix.
                assert_eq!(result.unwrap().cluster_network[0].host_prefix, None);
                continue;
            }
            let v = result.expect_err(&bad.to_string());
            assert_eq!(
                fields(&v),
                ["spec.networking.clusterNetwork[].hostPrefix"],
                "{bad}"
            );
            assert!(v[0].problem.contains("from 14 to 32"), "{bad}: {}", v[0]);
        }
        let v6 = json!([{"cidr": "fd01::/48", "hostPrefix": 129}]);
        let v = nested(|s| {
            set(s, "/networking/clusterNetwork", v6);
            set(s, "/networking/serviceNetwork", json!(["fd02::/112"]));
            set(
                s,
                "/networking/machineNetwork",
                json!([{"cidr": "fd03::/64"}]),
            );
        })
        .unwrap_err();
        assert!(v[0].problem.contains("from 48 to 128"), "{}", v[0]);
    }

    #[test]
    fn a_spec_mixing_both_shapes_is_refused_naming_both_fields() {
        let v = nested(|s| {
            set(s, "/gcp_project_id", json!("my-project-123"));
            set(s, "/openshift_version", json!("4.17.0"));
        })
        .unwrap_err();
        assert_eq!(
            fields(&v),
            ["spec.gcp_project_id", "spec.openshift_version"]
        );
        assert_eq!(
            v[0].problem,
            "is a flat key, but the spec also has spec.platform of HyperFleet's nested shape; use one shape: in the nested shape this is spec.platform.gcp.projectID"
        );
        // The flat fixture with one nested key, too.
        let mut flat = ClusterInput::from_json(VALID).unwrap().spec;
        flat.insert("dns".into(), json!({"baseDomain": "hcp.example.com"}));
        let v = ClusterSpec::validate(ID, None, &flat).unwrap_err();
        assert!(v.len() > 20, "{v:?}");
        assert!(v.iter().all(|v| v.problem.contains("spec.dns")), "{v:?}");
    }

    #[test]
    fn secret_settings_replace_the_spec_values_in_either_shape() {
        let settings = SecretSettings {
            pull_secret_name: Some("shared-pull-secret".into()),
            ssh_key_secret_name: None,
            service_account_signing_key_secret_name: Some("shared-signing-key".into()),
        };
        let mut spec = ClusterInput::from_json(NESTED_JSON).unwrap().spec;
        spec.remove("pullSecret");
        let valid = ClusterSpec::validate_with(ID, None, &spec, &settings).unwrap();
        assert_eq!(valid.pull_secret_name, "shared-pull-secret");
        assert_eq!(
            valid.service_account_signing_key_secret_name.as_deref(),
            Some("shared-signing-key")
        );
        assert_eq!(
            valid.ssh_key_secret_name.as_deref(),
            Some("prod-eu-1-ssh-key")
        );
        let flat = ClusterInput::from_json(VALID).unwrap().spec;
        let valid = ClusterSpec::validate_with(ID, None, &flat, &settings).unwrap();
        assert_eq!(valid.pull_secret_name, "shared-pull-secret");
        // Without the setting, the missing name says where to set it.
        let v = ClusterSpec::validate(ID, None, &spec).unwrap_err();
        assert_eq!(fields(&v), ["spec.pullSecret.name"]);
        assert!(v[0].problem.contains("PULL_SECRET_NAME"), "{}", v[0]);
    }

    #[test]
    fn infra_id_is_checked_and_sent_only_when_set() {
        let spec = nested(|s| set(s, "/infraID", json!("prod-eu-1-x7k2p"))).unwrap();
        assert_eq!(spec.infra_id.as_deref(), Some("prod-eu-1-x7k2p"));
        // A UUIDv7 starts with a digit: it would prefix GCP names that must start with a letter.
        for bad in [ID, "Prod", "prod-", "prod_1"] {
            let v = nested(|s| set(s, "/infraID", json!(bad))).unwrap_err();
            assert_eq!(fields(&v), ["spec.infraID"], "{bad}");
        }
    }

    #[test]
    fn the_release_version_builds_the_image_unless_an_image_is_given() {
        let image = |edit: fn(&mut Value)| nested(edit).map(|s| s.release_image);
        assert_eq!(
            image(|s| set(s, "/release/version", json!("4.17.0-aarch64"))).unwrap(),
            format!("{RELEASE_REPOSITORY}:4.17.0-aarch64")
        );
        assert_eq!(
            image(|s| set(
                s,
                "/release/image",
                json!("registry.redhat.io/openshift4/ose-cluster-version-operator:v4.22.0-ec.4")
            ))
            .unwrap(),
            "registry.redhat.io/openshift4/ose-cluster-version-operator:v4.22.0-ec.4"
        );
        let v = image(|s| remove(s, "/release/version")).unwrap_err();
        assert_eq!(fields(&v), ["spec.release.version"]);
        assert!(
            v[0].problem.contains("or set spec.release.image"),
            "{}",
            v[0]
        );
        let v = image(|s| set(s, "/release/version", json!("4.17.0-s390x"))).unwrap_err();
        assert_eq!(fields(&v), ["spec.release.version"]);
        assert!(v[0].problem.contains("spec.release.image"), "{}", v[0]);
    }

    #[test]
    fn a_uuidv7_id_and_the_longest_name_are_accepted() {
        let spec = ClusterInput::from_json(NESTED_JSON).unwrap().spec;
        let longest = "prod-eu-1-payments-ledger-primary-region-west-cell-07";
        assert_eq!(longest.len(), MAX_CLUSTER_NAME_LEN);
        let valid = ClusterSpec::validate(ID, Some(longest), &spec).unwrap();
        assert_eq!(valid.hosted_cluster_name, longest);
        let too_long = format!("{longest}x");
        let v = ClusterSpec::validate(ID, Some(&too_long), &spec).unwrap_err();
        assert_eq!(fields(&v), ["name"]);
    }
}
