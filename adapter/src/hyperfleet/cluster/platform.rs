//! `platform`: the nested shape's objects and platform type, and the GCP project, region,
//! networks, Workload Identity, service accounts and endpoint access.

use serde_json::Value;

use super::names::{SpecNames, SpecShape};
use crate::hyperfleet::spec::{
    Checker, Read, Rule, gcp_resource_name, json_kind, quoted, service_account_email,
};

/// `platform.gcp.endpointAccess`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointAccess {
    Private,
    PublicAndPrivate,
}

impl EndpointAccess {
    /// The HostedCluster spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EndpointAccess::Private => "Private",
            EndpointAccess::PublicAndPrivate => "PublicAndPrivate",
        }
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

/// The nested shape's objects, each with what it holds.
const NESTED_OBJECTS: [(&str, &str); 10] = [
    ("spec.platform", "an object {type, gcp}"),
    (
        "spec.platform.gcp",
        "an object {projectID, region, network, subnet, …}",
    ),
    (
        "spec.platform.gcp.workloadIdentity",
        "an object {projectNumber, poolID, providerID, serviceAccountsEmails}",
    ),
    (
        "spec.platform.gcp.workloadIdentity.serviceAccountsEmails",
        "an object {controlPlane, nodePool, cloudController, storage, imageRegistry, network}",
    ),
    ("spec.release", "an object {image, version, channelGroup}"),
    (
        "spec.networking",
        "an object {clusterNetwork, serviceNetwork, machineNetwork}",
    ),
    ("spec.dns", "an object {baseDomain}"),
    ("spec.pullSecret", "an object {name}"),
    ("spec.sshKey", "an object {name}"),
    ("spec.serviceAccountSigningKey", "an object {name}"),
];

/// The nested shape's objects: each must be an object when present, `platform.type` must be
/// `gcp`, and the keys the HostedCluster does not use (`zone`, `subnet` when
/// `privateServiceConnectSubnet` is set, `channelGroup`) must at least be strings. Returns the
/// objects found with another type.
pub(super) fn nested_structure(c: &mut Checker<'_>) -> Vec<&'static str> {
    let bad = NESTED_OBJECTS
        .iter()
        .filter(|&&(field, what)| c.object(field, what).is_err())
        .map(|&(field, _)| field)
        .collect();
    const TYPE: &str = "spec.platform.type";
    match c.set(TYPE) {
        None => c.violation(
            TYPE,
            "is required: \"gcp\" (this adapter builds GCP HostedClusters)",
        ),
        Some(Value::String(t)) if t == "gcp" => {}
        Some(Value::String(t)) if t == "template" => c.violation(
            TYPE,
            "is \"template\" (the provider-neutral shape of HyperFleet's end-to-end suite): this adapter builds GCP HostedClusters; set it to \"gcp\" and move the keys from spec.platform.template to spec.platform.gcp",
        ),
        Some(Value::String(t)) => {
            let t = quoted(t);
            let problem = format!(
                "{t} is not supported: expected \"gcp\" (this adapter builds GCP HostedClusters)"
            );
            c.violation(TYPE, problem);
        }
        Some(other) => {
            let found = json_kind(other);
            c.violation(TYPE, format!("must be the string \"gcp\", found {found}"));
        }
    }
    // Read by other adapters (the NodePools' zone and subnet), not by the HostedCluster; a value
    // of the wrong type is still refused.
    let _ = c.optional("spec.platform.gcp.zone");
    let _ = c.optional("spec.release.channelGroup");
    if c.given("spec.platform.gcp.privateServiceConnectSubnet") {
        let _ = c.optional("spec.platform.gcp.subnet");
    }
    bad
}

const PROJECT_ID: Rule = Rule::new(6..=30, || regex!(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$"))
    .expecting("a GCP project ID: 6–30 lowercase letters, digits or hyphens, starting with a letter and ending with a letter or digit (e.g. my-project-123)");
const PROJECT_NUMBER: Rule = Rule::new(1..=25, || regex!(r"^[0-9]+$"))
    .expecting("the numeric GCP project number (1–25 digits, as a string), as shown by `gcloud projects describe`");
const REGION: Rule = Rule::new(1..=63, || regex!(r"^[a-z]+-[a-z]+[0-9]+$"))
    .expecting("a GCP region such as us-central1 or europe-west2 (a region, not a zone)");
const VPC_NETWORK: Rule = Rule::new(1..=63, gcp_resource_name)
    .expecting("a GCP VPC network name: 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen");
const PSC_SUBNET: Rule = VPC_NETWORK.expecting("a GCP subnet name: 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen");
const NESTED_PSC_SUBNET: Rule = VPC_NETWORK.expecting("the GCP subnet for Private Service Connect: spec.platform.gcp.subnet (the upstream CLI uses one subnet for nodes and Private Service Connect) or spec.platform.gcp.privateServiceConnectSubnet; 1–63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen");
const WIF_ID: Rule = Rule::new(4..=32, || regex!(r"^[a-z][a-z0-9-]{2,30}[a-z0-9]$"))
    .expecting("a Workload Identity Federation id: 4–32 lowercase letters, digits or hyphens, starting with a letter and ending with a letter or digit");
const SERVICE_ACCOUNT: Rule = Rule::new(37..=85, service_account_email).expecting(
    "a Google service account email <name>@<project>.iam.gserviceaccount.com (37–85 characters)",
);

/// Project, region, networks, Workload Identity and endpoint access.
pub(super) fn gcp(c: &mut Checker<'_>, names: &SpecNames) -> Read<GcpSpec> {
    let project_id = c.required_checked(names.project_id, &PROJECT_ID);
    let project_number = c.required_checked(names.project_number, &PROJECT_NUMBER);
    let region = c.required_checked(names.region, &REGION);
    let vpc_network_name = c.required_checked(names.network, &VPC_NETWORK);
    let psc_rule = match names.shape {
        SpecShape::Nested => &NESTED_PSC_SUBNET,
        SpecShape::Flat => &PSC_SUBNET,
    };
    let psc_subnet_name = c.required_checked(names.psc_subnet, psc_rule);
    let wif_pool_id = wif_id(c, names.wif_pool_id);
    let wif_provider_id = wif_id(c, names.wif_provider_id);
    let service_accounts = service_accounts(c, names, project_id.ok());
    let endpoint_access = c.one_of(
        names.endpoint_access,
        &[
            ("Private", EndpointAccess::Private),
            ("PublicAndPrivate", EndpointAccess::PublicAndPrivate),
        ],
        "is not valid: expected Private or PublicAndPrivate (omit it for Private)",
    );
    Ok(GcpSpec {
        project_id: project_id?.to_owned(),
        project_number: project_number?.to_owned(),
        region: region?.to_owned(),
        vpc_network_name: vpc_network_name?.to_owned(),
        psc_subnet_name: psc_subnet_name?.to_owned(),
        wif_pool_id: wif_pool_id?.to_owned(),
        wif_provider_id: wif_provider_id?.to_owned(),
        service_accounts: service_accounts?,
        endpoint_access: endpoint_access?,
    })
}

/// A Workload Identity pool or provider id: the rule plus the reserved `gcp-` prefix.
fn wif_id<'a>(c: &mut Checker<'a>, field: &'static str) -> Read<&'a str> {
    let value = c.required_checked(field, &WIF_ID)?;
    if !value.starts_with("gcp-") {
        return Ok(value);
    }
    let value = quoted(value);
    c.refuse(
        field,
        format!(
            "{value} starts with the prefix 'gcp-', which Google reserves; use an id without it"
        ),
    )
}

/// The six service accounts: syntax, same project as `project_id` (when that is valid), distinct.
fn service_accounts(
    c: &mut Checker<'_>,
    names: &SpecNames,
    project_id: Option<&str>,
) -> Read<ServiceAccounts> {
    let mut accepted: Vec<(&'static str, &str)> = Vec::with_capacity(6);
    let [
        control_plane,
        node_pool,
        cloud_controller,
        storage,
        image_registry,
        network,
    ] = names.service_accounts.map(|field| {
        let email = service_account(c, field, names, project_id, &accepted)?;
        accepted.push((field, email));
        Ok(email.to_owned())
    });
    Ok(ServiceAccounts {
        control_plane: control_plane?,
        node_pool: node_pool?,
        cloud_controller: cloud_controller?,
        storage: storage?,
        image_registry: image_registry?,
        network: network?,
    })
}

/// One service account: the rule, in `project_id`, not one of those `accepted` before it.
fn service_account<'a>(
    c: &mut Checker<'a>,
    field: &'static str,
    names: &SpecNames,
    project_id: Option<&str>,
    accepted: &[(&'static str, &str)],
) -> Read<&'a str> {
    let email = c.required_checked(field, &SERVICE_ACCOUNT)?;
    let (shown, project_field) = (quoted(email), names.project_id);
    if let Some(project) = project_id {
        let suffix = format!("@{project}.iam.gserviceaccount.com");
        if !email.ends_with(&suffix) {
            return c.refuse(
                field,
                format!("{shown} is not in the cluster's project: it must end with {suffix} ({project_field})"),
            );
        }
    }
    match accepted.iter().find(|(_, other)| *other == email) {
        Some((other_field, _)) => c.refuse(
            field,
            format!("{shown} is the same account as {other_field}; HyperShift writes one credential per account, so each of the six service accounts must be distinct"),
        ),
        None => Ok(email),
    }
}
