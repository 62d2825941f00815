//! The two shapes of a cluster `spec` and the name of every field in each
//! ([`crate::hyperfleet::spec::shapes`]).

use serde_json::{Map, Value};

use crate::hyperfleet::spec::shapes::{ShapeKeys, Written, spec_names};
use crate::hyperfleet::spec::{Checker, SpecViolation};

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

spec_names! {
    /// The HyperFleet field (`spec.…`) each value is read from, in one shape. Violations and
    /// immutable changes name fields by these.
    #[derive(Debug, PartialEq, Eq)]
    pub struct SpecNames {
        /// HyperFleet's nested shape.
        const NESTED;
        /// The seed's flat keys.
        const FLAT;
        pub shape: SpecShape = (SpecShape::Nested, SpecShape::Flat),
        pub project_id = ("spec.platform.gcp.projectID", "spec.gcp_project_id"),
        pub project_number = ("spec.platform.gcp.workloadIdentity.projectNumber", "spec.gcp_project_number"),
        pub region = ("spec.platform.gcp.region", "spec.gcp_region"),
        pub network = ("spec.platform.gcp.network", "spec.vpc_network_name"),
        pub psc_subnet = ("spec.platform.gcp.privateServiceConnectSubnet", "spec.psc_subnet_name"),
        pub wif_pool_id = ("spec.platform.gcp.workloadIdentity.poolID", "spec.wif_pool_id"),
        pub wif_provider_id = ("spec.platform.gcp.workloadIdentity.providerID", "spec.wif_provider_id"),
        /// controlPlane, nodePool, cloudController, storage, imageRegistry, network.
        pub service_accounts: [&'static str; 6] = (
            [
                "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.controlPlane",
                "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.nodePool",
                "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.cloudController",
                "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.storage",
                "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.imageRegistry",
                "spec.platform.gcp.workloadIdentity.serviceAccountsEmails.network",
            ],
            [
                "spec.control_plane_sa_email",
                "spec.nodepool_sa_email",
                "spec.cloud_controller_sa_email",
                "spec.storage_sa_email",
                "spec.image_registry_sa_email",
                "spec.network_sa_email",
            ],
        ),
        pub endpoint_access = ("spec.platform.gcp.endpointAccess", "spec.endpoint_access"),
        pub release_image = ("spec.release.image", "spec.release_image"),
        pub version = ("spec.release.version", "spec.openshift_version"),
        /// `None`: the shape has no architecture key (the version's suffix or the image says it).
        pub architecture: Option<&'static str> = (None, Some("spec.architecture")),
        /// The whole list (nested) or the one key (flat).
        pub cluster_network = ("spec.networking.clusterNetwork", "spec.cluster_network_cidr"),
        /// One entry's CIDR.
        pub cluster_network_cidr = ("spec.networking.clusterNetwork[].cidr", "spec.cluster_network_cidr"),
        pub host_prefix = ("spec.networking.clusterNetwork[].hostPrefix", "spec.cluster_network_cidr"),
        pub service_network = ("spec.networking.serviceNetwork", "spec.service_network_cidr"),
        pub service_network_cidr = ("spec.networking.serviceNetwork[]", "spec.service_network_cidr"),
        pub machine_network = ("spec.networking.machineNetwork", "spec.machine_network_cidr"),
        pub machine_network_cidr = ("spec.networking.machineNetwork[].cidr", "spec.machine_network_cidr"),
        pub base_domain = ("spec.dns.baseDomain", "spec.base_domain"),
        pub issuer_url = ("spec.issuerURL", "spec.issuer_url"),
        pub signing_key = ("spec.serviceAccountSigningKey.name", "spec.service_account_signing_key_secret_name"),
        pub pull_secret = ("spec.pullSecret.name", "spec.pull_secret_name"),
        pub ssh_key = ("spec.sshKey.name", "spec.ssh_key_secret_name"),
        pub infra_id = ("spec.infraID", "spec.infraID"),
        pub external_dns_domain = ("spec.external_dns_domain", "spec.external_dns_domain"),
    }
}

/// The nested shape when `privateServiceConnectSubnet` is not set and `subnet` is the PSC subnet
/// (the upstream CLI's layout: one subnet for nodes and Private Service Connect).
pub const NESTED_PSC_FROM_SUBNET: SpecNames = SpecNames {
    psc_subnet: "spec.platform.gcp.subnet",
    ..NESTED
};

/// Every flat key (as `spec.<key>`), with where the nested shape carries the same value; and the
/// top-level keys of the nested shape (HyperFleet's and the adapter's extension keys).
const SHAPE_KEYS: ShapeKeys = ShapeKeys {
    flat_only: &[
        (FLAT.project_id, NESTED.project_id),
        (FLAT.project_number, NESTED.project_number),
        (FLAT.region, NESTED.region),
        (FLAT.network, NESTED.network),
        (FLAT.psc_subnet, NESTED.psc_subnet),
        (FLAT.wif_pool_id, NESTED.wif_pool_id),
        (FLAT.wif_provider_id, NESTED.wif_provider_id),
        (FLAT.service_accounts[0], NESTED.service_accounts[0]),
        (FLAT.service_accounts[1], NESTED.service_accounts[1]),
        (FLAT.service_accounts[2], NESTED.service_accounts[2]),
        (FLAT.service_accounts[3], NESTED.service_accounts[3]),
        (FLAT.service_accounts[4], NESTED.service_accounts[4]),
        (FLAT.service_accounts[5], NESTED.service_accounts[5]),
        (FLAT.endpoint_access, NESTED.endpoint_access),
        (FLAT.version, NESTED.version),
        (FLAT.release_image, NESTED.release_image),
        (
            "spec.architecture",
            "the architecture suffix of spec.release.version (4.17.0-aarch64), or spec.release.image",
        ),
        (FLAT.cluster_network_cidr, NESTED.cluster_network_cidr),
        (FLAT.service_network_cidr, NESTED.service_network_cidr),
        (FLAT.machine_network_cidr, NESTED.machine_network_cidr),
        (FLAT.base_domain, NESTED.base_domain),
        (FLAT.issuer_url, NESTED.issuer_url),
        (FLAT.signing_key, NESTED.signing_key),
        (FLAT.pull_secret, NESTED.pull_secret),
        (FLAT.ssh_key, NESTED.ssh_key),
        (
            FLAT.external_dns_domain,
            "nothing: the nested shape has no such key (its services use the upstream CLI's layout without external DNS); keep the flat shape to use it",
        ),
    ],
    hyperfleet_only: &[
        "platform",
        "release",
        "networking",
        "dns",
        "infraID",
        "issuerURL",
        "pullSecret",
        "sshKey",
        "serviceAccountSigningKey",
    ],
};

/// `pullSecret.name` for `spec.pullSecret.name`: a field's path inside `spec`.
pub fn flat_key(field: &str) -> &str {
    field.strip_prefix("spec.").unwrap_or(field)
}

/// Which shape `spec` uses: flat when it has any flat key, else nested (HyperFleet's; an empty
/// spec is read as nested, so what is missing is named as HyperFleet names it). A spec with
/// keys of both shapes is refused: one violation per flat key, naming the nested key beside it
/// and where the nested shape carries the value.
pub fn spec_shape(spec: &Map<String, Value>) -> Result<SpecShape, Vec<SpecViolation>> {
    match SHAPE_KEYS.shape_of(|key| spec.contains_key(flat_key(key))) {
        Written::HyperFleet => Ok(SpecShape::Nested),
        Written::Flat => Ok(SpecShape::Flat),
        Written::Mixed { flat, hyperfleet } => {
            let nested = hyperfleet[0];
            let mut violations = Vec::new();
            for (field, instead) in flat {
                let problem = format!(
                    "is a flat key, but the spec also has spec.{nested} of HyperFleet's nested shape; use one shape: in the nested shape this is {instead}"
                );
                violations.push(SpecViolation { field, problem });
            }
            Err(violations)
        }
    }
}

/// The names of `spec`'s fields in `shape`: the nested shape's PSC subnet is `subnet` unless
/// `privateServiceConnectSubnet` is given.
pub fn names_of(shape: SpecShape, spec: &Map<String, Value>) -> &'static SpecNames {
    let explicit_psc = Checker::new(spec).given(flat_key(NESTED.psc_subnet));
    match shape {
        SpecShape::Flat => &FLAT,
        SpecShape::Nested if explicit_psc => &NESTED,
        SpecShape::Nested => &NESTED_PSC_FROM_SUBNET,
    }
}
