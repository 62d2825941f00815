//! The cluster input: a HyperFleet cluster object (`{id, name, generation, spec}`) or a bare
//! `spec`, and its validation into a typed [`ClusterSpec`].
//!
//! Validation applies the rules the HostedCluster CRD (TechPreviewNoUpgrade, `hypershift-api.md`
//! §1) enforces on the fields we fill, plus checks the API server leaves to the operator (CIDR
//! syntax and overlap, one IP family, distinct service accounts). Every violation is collected and
//! names the spec field by its HyperFleet spec name, so one report lists everything to fix.
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

/// A validated cluster spec: every value here is accepted by the HostedCluster CRD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSpec {
    /// The HyperFleet cluster id (lowercase DNS label, ≤ 60 characters).
    pub cluster_id: String,
    /// HostedCluster name: the cluster's name, or its id when the input had no name.
    pub hosted_cluster_name: String,
    pub gcp: GcpSpec,
    /// Full release pullspec (either `release_image` or built from `openshift_version`).
    pub release_image: String,
    pub architecture: Architecture,
    /// `None` leaves the API default (`10.132.0.0/14`).
    pub cluster_network: Option<Cidr>,
    /// `None` leaves the API default (`172.31.0.0/16`).
    pub service_network: Option<Cidr>,
    pub machine_network: Cidr,
    pub base_domain: String,
    pub issuer_url: String,
    pub service_account_signing_key_secret_name: Option<String>,
    pub pull_secret_name: String,
    pub ssh_key_secret_name: Option<String>,
    /// When set, APIServer and OAuthServer are published as Routes `api-<name>.<domain>` and
    /// `oauth-<name>.<domain>` (the upstream CLI's external-DNS layout); otherwise APIServer is a
    /// LoadBalancer and the rest are Routes without hostnames.
    pub external_dns_domain: Option<String>,
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
        let mut c = Checker::new(spec);
        let (cluster_id, hosted_cluster_name) = identity(&mut c, cluster_id, cluster_name);
        let gcp = gcp(&mut c);
        let (release_image, architecture) = release(&mut c);
        let networks = networks(&mut c);
        let base_domain = c.required_checked(
            "base_domain",
            &Rule {
                min: 1,
                max: 253,
                pattern: regex!(r"^(?:(?:[a-zA-Z0-9-]+\.)+[a-zA-Z]{2,}|[a-zA-Z0-9-]+)$"),
                expected: "a DNS domain such as example.com (letters, digits and '-' in dot-separated labels)",
            },
        );
        let issuer_url = c.required_checked(
            "issuer_url",
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
        let signing_key =
            c.optional_checked("service_account_signing_key_secret_name", &secret_rule);
        let pull_secret_name = c.required_checked("pull_secret_name", &secret_rule);
        let ssh_key = c.optional_checked("ssh_key_secret_name", &secret_rule);
        let external_dns_domain = c.optional_checked(
            "external_dns_domain",
            &Rule {
                min: 1,
                max: 253 - "oauth-".len() - MAX_HOSTED_CLUSTER_NAME_LEN - 1,
                pattern: regex!(r"^(?:[a-zA-Z0-9-]+\.)*[a-zA-Z]{2,}$"),
                expected: "a DNS domain served by external DNS (e.g. hypershift.example.com); the API and OAuth routes become api-<name>.<domain> and oauth-<name>.<domain>",
            },
        );

        if !c.violations.is_empty() {
            return Err(c.violations);
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
        })
    }
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
fn gcp(c: &mut Checker<'_>) -> Option<GcpSpec> {
    let project_id = c.required_checked(
        "gcp_project_id",
        &Rule {
            min: 6,
            max: 30,
            pattern: regex!(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$"),
            expected: "a GCP project ID: 6–30 lowercase letters, digits or hyphens, starting with a letter and ending with a letter or digit (e.g. my-project-123)",
        },
    );
    let project_number = c.required_checked(
        "gcp_project_number",
        &Rule {
            min: 1,
            max: 25,
            pattern: regex!(r"^[0-9]+$"),
            expected: "the numeric GCP project number (1–25 digits), as shown by `gcloud projects describe`",
        },
    );
    let region = c.required_checked(
        "gcp_region",
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
        "vpc_network_name",
        &resource_name("a GCP VPC network name: 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen"),
    );
    let psc_subnet_name = c.required_checked(
        "psc_subnet_name",
        &resource_name("a GCP subnet name: 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen"),
    );
    let wif_rule = Rule {
        min: 4,
        max: 32,
        pattern: wif_id(),
        expected: "a Workload Identity Federation id: 4–32 lowercase letters, digits or hyphens, starting with a letter and ending with a letter or digit",
    };
    let wif_pool_id = wif_id_field(c, "wif_pool_id", &wif_rule);
    let wif_provider_id = wif_id_field(c, "wif_provider_id", &wif_rule);

    let service_accounts = service_accounts(c, project_id);
    let endpoint_access = match c.optional("endpoint_access") {
        None => None,
        Some("Private") => Some(EndpointAccess::Private),
        Some("PublicAndPrivate") => Some(EndpointAccess::PublicAndPrivate),
        Some(other) => {
            c.violation(
                "endpoint_access",
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
fn service_accounts(c: &mut Checker<'_>, project_id: Option<&str>) -> Option<ServiceAccounts> {
    let email_rule = Rule {
        min: 37,
        max: 85,
        pattern: service_account_email(),
        expected: "a Google service account email <name>@<project>.iam.gserviceaccount.com (37–85 characters)",
    };
    let email_fields: [&'static str; 6] = [
        "control_plane_sa_email",
        "nodepool_sa_email",
        "cloud_controller_sa_email",
        "storage_sa_email",
        "image_registry_sa_email",
        "network_sa_email",
    ];
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
                        "{} is not in the cluster's project: it must end with {suffix} (gcp_project_id)",
                        quoted(email)
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

/// `release_image`, `openshift_version` and `architecture` → the release pullspec.
fn release(c: &mut Checker<'_>) -> (Option<String>, Option<Architecture>) {
    let explicit_arch = c.optional("architecture");
    let architecture = match explicit_arch {
        None => Some(Architecture::X86_64),
        Some(a) => Architecture::parse(a).or_else(|| {
            c.violation(
                "architecture",
                format!(
                    "{} is not supported for GCP hosted clusters: expected x86_64 (alias amd64), aarch64 (alias arm64) or multi",
                    quoted(a)
                ),
            );
            None
        }),
    };
    let image_rule = Rule {
        min: 1,
        max: 253,
        pattern: regex!(r"^[0-9A-Za-z_]+\S+$"),
        expected: "a release image pullspec without whitespace, starting with a letter, digit or underscore (e.g. quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64)",
    };
    let release_image = c.optional("release_image");
    let version = if release_image.is_some() {
        c.optional("openshift_version")
    } else {
        c.required(
            "openshift_version",
            "an OpenShift version such as 4.17.0 (or set release_image)",
        )
    };
    let version_ok = version.is_none_or(|v| {
        let ok = c.check(
            "openshift_version",
            v,
            &Rule {
                min: 5,
                max: 100,
                pattern: regex!(r"^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z._-]*)?$"),
                expected: "an OpenShift version x.y.z, optionally with a pre-release or architecture suffix (4.17.0, 4.18.0-rc.1, 4.17.0-multi)",
            },
        );
        ok && version_suffix_ok(c, v, explicit_arch.and(architecture))
    });
    if let Some(image) = release_image {
        let ok = c.check("release_image", image, &image_rule);
        return (ok.then(|| image.to_owned()), architecture);
    }
    let (Some(version), true, Some(arch)) = (version, version_ok, architecture) else {
        return (None, architecture);
    };
    let image = format!("{RELEASE_REPOSITORY}:{}", release_tag(version, arch));
    if image.len() > image_rule.max {
        c.violation(
            "openshift_version",
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
/// with an explicitly given `architecture`.
fn version_suffix_ok(c: &mut Checker<'_>, version: &str, explicit: Option<Architecture>) -> bool {
    let Some(word) = tag_architecture_word(version) else {
        return true;
    };
    let Some(tagged) = Architecture::from_tag_suffix(word) else {
        c.violation(
            "openshift_version",
            format!(
                "{} ends in '-{word}', which is not a release tag suffix for GCP: use -x86_64, -aarch64 or -multi, or give the bare version and set architecture",
                quoted(version)
            ),
        );
        return false;
    };
    if let Some(arch) = explicit.filter(|a| *a != tagged) {
        c.violation(
            "architecture",
            format!(
                "is {} but openshift_version {} already names {}; make them agree or drop the suffix from openshift_version",
                arch.tag_suffix(),
                quoted(version),
                tagged.tag_suffix()
            ),
        );
        return false;
    }
    true
}

type Networks = (Option<Cidr>, Option<Cidr>, Cidr);

/// The three networks: syntax per the CRD, a network address (no host bits), one IP family, no
/// overlap with each other (defaults included) or with OVN-Kubernetes internal subnets.
fn networks(c: &mut Checker<'_>) -> Option<Networks> {
    let cluster = cidr_field(c, "cluster_network_cidr", false);
    let service = cidr_field(c, "service_network_cidr", false);
    let machine = cidr_field(c, "machine_network_cidr", true);
    let (Ok(cluster), Ok(service), Ok(Some(machine))) = (cluster, service, machine) else {
        return None;
    };
    let effective = [
        (
            "cluster_network_cidr",
            cluster
                .clone()
                .map_or_else(|| default_cidr(DEFAULT_CLUSTER_NETWORK), Some),
            cluster.is_none(),
        ),
        (
            "service_network_cidr",
            service
                .clone()
                .map_or_else(|| default_cidr(DEFAULT_SERVICE_NETWORK), Some),
            service.is_none(),
        ),
        ("machine_network_cidr", Some(machine.clone()), false),
    ];
    let before = c.violations.len();
    let family = |n: &IpNet| {
        if matches!(n, IpNet::V4(_)) {
            "IPv4"
        } else {
            "IPv6"
        }
    };
    let described = |f: &str, cidr: &Cidr, defaulted: bool| {
        if defaulted {
            format!(
                "the default {f} {} (used because {f} is not set)",
                cidr.text
            )
        } else {
            format!("{f} {}", cidr.text)
        }
    };
    // One IP family (defaults included): name the explicit field of the first mismatching pair.
    'family: for (i, (f1, a, d1)) in effective.iter().enumerate() {
        for (f2, b, d2) in &effective[i + 1..] {
            let (Some(a), Some(b)) = (a, b) else { continue };
            if family(&a.net) != family(&b.net) {
                // The named field is explicit: two defaults never conflict.
                let (field, this, other) = if *d2 {
                    (*f1, a.text.clone(), described(f2, b, *d2))
                } else {
                    (*f2, b.text.clone(), described(f1, a, *d1))
                };
                c.violation(
                    field,
                    format!(
                        "{this} is {} but {other} is {}: all cluster networks must use one IP family",
                        family(if field == *f1 { &a.net } else { &b.net }),
                        family(if field == *f1 { &b.net } else { &a.net }),
                    ),
                );
                break 'family;
            }
        }
    }
    if c.violations.len() == before {
        for (i, (f1, a, d1)) in effective.iter().enumerate() {
            for (f2, b, d2) in &effective[i + 1..] {
                let (Some(a), Some(b)) = (a, b) else { continue };
                if overlaps(&a.net, &b.net) {
                    // The named field is explicit: two defaults never overlap.
                    let (field, problem) = if *d2 {
                        (
                            *f1,
                            format!(
                                "{} overlaps {}; choose non-overlapping ranges",
                                a.text,
                                described(f2, b, *d2)
                            ),
                        )
                    } else {
                        (
                            *f2,
                            format!(
                                "{} overlaps {}; choose non-overlapping ranges",
                                b.text,
                                described(f1, a, *d1)
                            ),
                        )
                    };
                    c.violation(field, problem);
                }
            }
            let Some(a) = a else { continue };
            if *d1 {
                continue;
            }
            for (reserved, what) in OVN_RESERVED {
                if let Ok(r) = reserved.parse::<IpNet>()
                    && overlaps(&a.net, &r)
                {
                    c.violation(
                        f1,
                        format!(
                            "{} overlaps {what} {reserved}; choose another range",
                            a.text
                        ),
                    );
                }
            }
        }
    }
    (c.violations.len() == before).then_some((cluster, service, machine))
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

/// The valid test cluster (`tests/fixtures/cluster-valid.json`) for other modules' tests.
#[cfg(test)]
pub(crate) mod fixture {
    #![allow(clippy::unwrap_used)]

    use super::*;

    pub const VALID: &str = include_str!("../../tests/fixtures/cluster-valid.json");

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
        assert!(!violations.is_empty());
        for v in violations {
            assert_eq!(v.field, field, "unexpected violation {v}");
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
        assert_eq!(spec.machine_network.text, "10.0.0.0/16");
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
                assert_eq!(violations[0].field, field);
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
        assert_eq!(spec.cluster_network, None);
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
                "gcp_region",
                "endpoint_access",
                "cluster_network_cidr",
                "pull_secret_name"
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
                .contains("default service_network_cidr 172.31.0.0/16"),
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
                .contains("the default cluster_network_cidr 10.132.0.0/14"),
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
        assert_eq!(spec.machine_network.text, "fd03::/64");
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
