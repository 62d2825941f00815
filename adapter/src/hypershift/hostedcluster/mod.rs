//! The HostedCluster (`hypershift.openshift.io/v1beta1`) sent to the management cluster, built
//! from a validated [`ClusterSpec`] as the current HyperShift API accepts it
//! (`hypershift-api.md` §1.6 and §6).
//!
//! Choices:
//! - namespace `clusters` (seed 004), name = the cluster's name (or id), see [`ClusterSpec`];
//! - optional fields are omitted rather than sent empty (`endpointAccess`, `sshKey`,
//!   `serviceAccountSigningKey`, the cluster/service networks, which the API server defaults);
//! - `infraID` is sent only when the spec sets it (HyperFleet's `spec.infraID`, which must start
//!   with a letter); otherwise the operator generates `<name>-<random>` and owns it. The cluster
//!   id is never used for it: a UUIDv7 starts with a digit and would prefix GCP resources whose
//!   names must start with a letter (e.g. the `<infraID>-worker` network tag);
//! - `services` always holds the four required services, sorted by name, because the list is
//!   immutable and compared in order after creation.

use serde_json::{Value, json};

use super::fields::{list_of, present};
use crate::hyperfleet::CLUSTER_ID_LABEL;
use crate::hyperfleet::cluster::{Cidr, ClusterSpec, HOSTED_CLUSTER_NAMESPACE};

pub mod immutable;
pub mod status;

pub use super::{API_VERSION, GROUP};
pub const KIND: &str = "HostedCluster";
/// Plural resource, as a ManifestWork `resourceIdentifier` names it.
pub const RESOURCE: &str = "hostedclusters";
/// GCP resource label key carrying the cluster id (value from [`cluster_id_label_value`]).
pub const GCP_CLUSTER_ID_LABEL_KEY: &str = "cluster-id";
/// Pod Security Admission override upstream requires for hosted control planes on GKE.
pub const PSA_OVERRIDE_ANNOTATION: &str =
    "hypershift.openshift.io/pod-security-admission-label-override";

/// The services every HostedCluster publishes, in the order they are sent (sorted by name).
pub const SERVICES: [&str; 4] = ["APIServer", "Ignition", "Konnectivity", "OAuthServer"];

/// The HyperShift finalizers on a HostedCluster and what usually holds each
/// (`hypershift-api.md` §5).
pub const FINALIZERS: [(&str, &str); 2] = [
    (
        "hypershift.openshift.io/finalizer",
        "removed by the HyperShift operator at the end of its deletion sequence: it deletes the NodePools and waits for the CAPI Cluster <infraID> (machines), the GCPPrivateServiceConnect objects in the control-plane namespace (they hold their own finalizers until their GCP resources are removed), the HostedControlPlane (see the HostedCluster's CloudResourcesDestroyed condition) and the control-plane namespace clusters-<name>; an annotation hypershift.openshift.io/destroy-grace-period also keeps the object for that period (HostedClusterDestroyed=True, WaitingForGracePeriod). Look at the hypershift-operator logs for the step it retries and at those objects",
    ),
    (
        "hypershift.io/gcp-oidc-discovery",
        "removed once the operator has deleted the <infraID>-prefixed OIDC documents from its GCS bucket; if the operator lost its bucket configuration deletion errors until someone deletes those objects and removes the finalizer by hand",
    ),
];

/// Where the HostedCluster lives on the management cluster: `(namespace, name)`.
pub fn hosted_cluster_ref(spec: &ClusterSpec) -> (&'static str, &str) {
    (HOSTED_CLUSTER_NAMESPACE, &spec.hosted_cluster_name)
}

/// A GCP label value for the cluster id. Non-empty GCP label values must start with a lowercase
/// letter, so an id that does not is prefixed with `id-` (ids are at most 60 characters, so the
/// result fits in 63).
pub fn cluster_id_label_value(cluster_id: &str) -> String {
    if cluster_id.starts_with(|c: char| c.is_ascii_lowercase()) {
        cluster_id.to_owned()
    } else {
        format!("id-{cluster_id}")
    }
}

/// The HostedCluster object.
pub fn hosted_cluster(spec: &ClusterSpec) -> Value {
    let (namespace, name) = hosted_cluster_ref(spec);
    let secret = |name: &Option<String>| name.as_ref().map(|name| json!({"name": name}));
    let hc_spec = present([
        ("release", Some(json!({"image": spec.release_image}))),
        ("pullSecret", Some(json!({"name": spec.pull_secret_name}))),
        ("issuerURL", Some(json!(spec.issuer_url))),
        ("dns", Some(json!({"baseDomain": spec.base_domain}))),
        ("networking", Some(networking(spec))),
        (
            "platform",
            Some(json!({"type": "GCP", "gcp": gcp_platform(spec)})),
        ),
        ("services", Some(json!(services(spec)))),
        ("infraID", spec.infra_id.as_deref().map(Value::from)),
        ("sshKey", secret(&spec.ssh_key_secret_name)),
        (
            "serviceAccountSigningKey",
            secret(&spec.service_account_signing_key_secret_name),
        ),
    ]);
    json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {CLUSTER_ID_LABEL: spec.cluster_id},
            "annotations": {PSA_OVERRIDE_ANNOTATION: "baseline"},
        },
        "spec": hc_spec,
    })
}

/// `spec.platform.gcp`: the project, region and network, the cluster's resource labels, the
/// workload identity with its six service accounts, and `endpointAccess` when the spec sets it.
fn gcp_platform(spec: &ClusterSpec) -> Value {
    let gcp = &spec.gcp;
    let sa = &gcp.service_accounts;
    let mut platform_gcp = json!({
        "project": gcp.project_id,
        "region": gcp.region,
        "networkConfig": {
            "network": {"name": gcp.vpc_network_name},
            "privateServiceConnectSubnet": {"name": gcp.psc_subnet_name},
        },
        "resourceLabels": [
            {"key": GCP_CLUSTER_ID_LABEL_KEY, "value": cluster_id_label_value(&spec.cluster_id)},
            {"key": "managed-by", "value": "hyperfleet"},
        ],
        "workloadIdentity": {
            "projectNumber": gcp.project_number,
            "poolID": gcp.wif_pool_id,
            "providerID": gcp.wif_provider_id,
            "serviceAccountsEmails": {
                "controlPlane": sa.control_plane,
                "nodePool": sa.node_pool,
                "cloudController": sa.cloud_controller,
                "storage": sa.storage,
                "imageRegistry": sa.image_registry,
                "network": sa.network,
            },
        },
    });
    if let (Some(access), Some(object)) = (gcp.endpoint_access, platform_gcp.as_object_mut()) {
        object.insert("endpointAccess".into(), access.as_str().into());
    }
    platform_gcp
}

/// `spec.networking`: OVN-Kubernetes, and each network the spec sets (the API server defaults
/// the others).
fn networking(spec: &ClusterSpec) -> Value {
    let cluster_network = list_of(&spec.cluster_network, |n| match n.host_prefix {
        Some(prefix) => json!({"cidr": n.cidr.text, "hostPrefix": prefix}),
        None => json!({"cidr": n.cidr.text}),
    });
    let cidrs = |list: &[Cidr]| list_of(list, |c| json!({"cidr": c.text}));
    Value::Object(present([
        ("networkType", Some(json!("OVNKubernetes"))),
        ("clusterNetwork", cluster_network),
        ("serviceNetwork", cidrs(&spec.service_network)),
        ("machineNetwork", cidrs(&spec.machine_network)),
    ]))
}

/// `spec.services`, sorted by service name. Without `external_dns_domain` (the upstream GCP CLI
/// default): APIServer LoadBalancer, the others Routes without hostnames (reached through Private
/// Service Connect). With a domain `D`: APIServer and OAuthServer become Routes with hostnames
/// `api-<name>.D` and `oauth-<name>.D`.
pub fn services(spec: &ClusterSpec) -> Vec<Value> {
    let name = &spec.hosted_cluster_name;
    let route = |hostname: String| json!({"type": "Route", "route": {"hostname": hostname}});
    SERVICES
        .iter()
        .map(|service| {
            let domain = spec.external_dns_domain.as_deref();
            let strategy = match (*service, domain) {
                ("APIServer", None) => json!({"type": "LoadBalancer"}),
                ("APIServer", Some(d)) => route(format!("api-{name}.{d}")),
                ("OAuthServer", Some(d)) => route(format!("oauth-{name}.{d}")),
                _ => json!({"type": "Route"}),
            };
            json!({"service": service, "servicePublishingStrategy": strategy})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::hyperfleet::cluster::fixture;
    use serde_json::json;

    #[test]
    fn hosted_cluster_with_every_option() {
        insta::assert_json_snapshot!("hosted_cluster_full", hosted_cluster(&fixture::spec()));
    }

    #[test]
    fn hosted_cluster_minimal_omits_unset_optional_fields() {
        let spec = fixture::spec_with(|spec| {
            for field in [
                "endpoint_access",
                "cluster_network_cidr",
                "service_network_cidr",
                "service_account_signing_key_secret_name",
                "ssh_key_secret_name",
            ] {
                spec.remove(field);
            }
        });
        let hc = hosted_cluster(&spec);
        assert!(hc.pointer("/spec/platform/gcp/endpointAccess").is_none());
        assert!(hc.pointer("/spec/sshKey").is_none());
        assert!(hc.pointer("/spec/serviceAccountSigningKey").is_none());
        assert!(hc.pointer("/spec/networking/clusterNetwork").is_none());
        assert!(hc.pointer("/spec/infraID").is_none());
        insta::assert_json_snapshot!("hosted_cluster_minimal", hc);
    }

    #[test]
    fn services_are_the_four_required_in_name_order() {
        let hc = hosted_cluster(&fixture::spec());
        let names: Vec<_> = hc["spec"]["services"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["service"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["APIServer", "Ignition", "Konnectivity", "OAuthServer"]
        );
        assert_eq!(
            hc["spec"]["services"][0]["servicePublishingStrategy"],
            json!({"type": "LoadBalancer"})
        );
    }

    #[test]
    fn external_dns_publishes_api_and_oauth_as_named_routes() {
        let spec = fixture::spec_with(|spec| {
            spec.insert("external_dns_domain".into(), json!("apps.example.com"));
        });
        let services = services(&spec);
        assert_eq!(
            services[0],
            json!({"service": "APIServer", "servicePublishingStrategy": {"type": "Route", "route": {"hostname": "api-prod-eu-1.apps.example.com"}}})
        );
        assert_eq!(
            services[3],
            json!({"service": "OAuthServer", "servicePublishingStrategy": {"type": "Route", "route": {"hostname": "oauth-prod-eu-1.apps.example.com"}}})
        );
        assert_eq!(
            services[1]["servicePublishingStrategy"],
            json!({"type": "Route"})
        );
    }

    #[test]
    fn six_distinct_service_accounts_are_sent() {
        let hc = hosted_cluster(&fixture::spec());
        let emails = hc
            .pointer("/spec/platform/gcp/workloadIdentity/serviceAccountsEmails")
            .and_then(Value::as_object)
            .unwrap();
        assert_eq!(emails.len(), 6);
        let distinct: std::collections::BTreeSet<_> =
            emails.values().filter_map(Value::as_str).collect();
        assert_eq!(distinct.len(), 6);
    }

    #[test]
    fn cluster_id_label_values_start_with_a_letter() {
        // Edge case kept on purpose: ids of older deployments (32-char lowercase base32 KSUIDs)
        // may start with a letter and are used as they are.
        let legacy_ksuid = "cv4s7k3b2q1u5m0f9d8e6a4c2b1n3p5r";
        assert_eq!(cluster_id_label_value(legacy_ksuid), legacy_ksuid);
        // A UUIDv7 starts with its timestamp, hence a digit: prefixed, 39 characters (≤ 63).
        let id = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
        assert_eq!(cluster_id_label_value(id), format!("id-{id}"));
        assert_eq!(cluster_id_label_value(id).len(), 39);
        let hc = hosted_cluster(&fixture::spec());
        assert_eq!(
            hc.pointer("/spec/platform/gcp/resourceLabels/0"),
            Some(&json!({"key": "cluster-id", "value": "id-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"}))
        );
        assert_eq!(
            hc.pointer("/metadata/labels/hyperfleet.io~1cluster-id"),
            Some(&json!("019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"))
        );
    }

    #[test]
    fn release_image_has_an_architecture_suffix() {
        let hc = hosted_cluster(&fixture::spec_with(|spec| {
            spec.insert("architecture".into(), json!("arm64"));
        }));
        assert_eq!(
            hc["spec"]["release"]["image"],
            "quay.io/openshift-release-dev/ocp-release:4.17.0-aarch64"
        );
    }
}

/// Pins the HostedCluster object over specs that set, leave out and combine every optional part
/// (endpoint access, the three networks, host prefixes, infraID, SSH and signing keys, external
/// DNS): the JSON text, key order included.
#[cfg(test)]
mod pinned {
    #![allow(clippy::unwrap_used)]

    use std::fmt::Write as _;

    use super::*;
    use crate::hyperfleet::cluster::{Cidr, ClusterNetwork, EndpointAccess, fixture};

    fn cidr(text: &str) -> Cidr {
        Cidr {
            text: text.to_owned(),
            net: text.parse().unwrap(),
        }
    }

    fn bare(spec: &mut ClusterSpec) {
        spec.gcp.endpoint_access = None;
        spec.cluster_network.clear();
        spec.service_network.clear();
        spec.machine_network.clear();
        spec.service_account_signing_key_secret_name = None;
        spec.ssh_key_secret_name = None;
        spec.external_dns_domain = None;
        spec.infra_id = None;
    }

    fn variants() -> Vec<(&'static str, ClusterSpec)> {
        let with = |edit: &dyn Fn(&mut ClusterSpec)| {
            let mut spec = fixture::spec();
            edit(&mut spec);
            spec
        };
        vec![
            ("fixture", fixture::spec()),
            ("every optional part left out", with(&bare)),
            (
                "every optional part set, two of each network",
                with(&|s| {
                    s.cluster_id = "cv4s7k3b2q1u5m0f9d8e6a4c2b1n3p5r".into();
                    s.gcp.endpoint_access = Some(EndpointAccess::Private);
                    s.cluster_network = vec![
                        ClusterNetwork {
                            cidr: cidr("10.132.0.0/14"),
                            host_prefix: Some(23),
                        },
                        ClusterNetwork {
                            cidr: cidr("10.136.0.0/14"),
                            host_prefix: None,
                        },
                    ];
                    s.service_network = vec![cidr("172.31.0.0/16"), cidr("172.30.0.0/16")];
                    s.machine_network = vec![cidr("10.0.0.0/16"), cidr("10.1.0.0/16")];
                    s.service_account_signing_key_secret_name = Some("sa-key".into());
                    s.ssh_key_secret_name = Some("ssh".into());
                    s.external_dns_domain = Some("apps.example.com".into());
                    s.infra_id = Some("prod-eu-1-x7k2p".into());
                }),
            ),
            (
                "machine network and public endpoint only",
                with(&|s| {
                    bare(s);
                    s.gcp.endpoint_access = Some(EndpointAccess::PublicAndPrivate);
                    s.machine_network = vec![cidr("10.0.0.0/16")];
                }),
            ),
        ]
    }

    #[test]
    fn hosted_clusters_over_a_grid_of_specs() {
        let mut out = String::new();
        for (name, spec) in variants() {
            let hc = hosted_cluster(&spec);
            let _ = writeln!(out, "[{name}]\n{}", serde_json::to_string(&hc).unwrap());
        }
        insta::assert_snapshot!("hosted_cluster_grid", out);
    }
}

/// HostedClusters built from HyperFleet's nested shape (`tests/fixtures/cluster-nested.json`).
#[cfg(test)]
mod nested_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::hyperfleet::cluster::fixture;
    use serde_json::json;

    fn nested(edit: impl FnOnce(&mut Value)) -> ClusterSpec {
        fixture::nested_with(|spec| {
            let mut value = Value::Object(std::mem::take(spec));
            edit(&mut value);
            *spec = value.as_object().cloned().unwrap_or_default();
        })
        .unwrap()
    }

    #[test]
    fn each_nested_field_feeds_its_hosted_cluster_field() {
        let spec = nested(|s| {
            s["platform"]["gcp"]["privateServiceConnectSubnet"] = json!("hcp-psc");
            s["infraID"] = json!("prod-eu-1-x7k2p");
        });
        let hc = hosted_cluster(&spec);
        for (pointer, expected) in [
            ("/spec/platform/gcp/project", json!("my-project-123")),
            ("/spec/platform/gcp/region", json!("europe-west2")),
            (
                "/spec/platform/gcp/networkConfig/network/name",
                json!("hcp-vpc"),
            ),
            (
                "/spec/platform/gcp/networkConfig/privateServiceConnectSubnet/name",
                json!("hcp-psc"),
            ),
            (
                "/spec/platform/gcp/endpointAccess",
                json!("PublicAndPrivate"),
            ),
            (
                "/spec/platform/gcp/workloadIdentity/projectNumber",
                json!("123456789012"),
            ),
            (
                "/spec/release/image",
                json!("quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"),
            ),
            (
                "/spec/networking/clusterNetwork",
                json!([{"cidr": "10.132.0.0/14", "hostPrefix": 23}]),
            ),
            (
                "/spec/networking/serviceNetwork",
                json!([{"cidr": "172.31.0.0/16"}]),
            ),
            (
                "/spec/networking/machineNetwork",
                json!([{"cidr": "10.0.0.0/16"}]),
            ),
            ("/spec/dns/baseDomain", json!("hcp.example.com")),
            ("/spec/infraID", json!("prod-eu-1-x7k2p")),
            ("/spec/pullSecret/name", json!("prod-eu-1-pull-secret")),
            ("/spec/sshKey/name", json!("prod-eu-1-ssh-key")),
            (
                "/spec/serviceAccountSigningKey/name",
                json!("prod-eu-1-sa-signing-key"),
            ),
        ] {
            assert_eq!(hc.pointer(pointer), Some(&expected), "{pointer}");
        }
        // zone and channelGroup are read by no HostedCluster field.
        let text = hc.to_string();
        assert!(
            !text.contains("europe-west2-a") && !text.contains("stable"),
            "{text}"
        );
    }

    #[test]
    fn a_nested_spec_without_networks_sends_only_the_network_type() {
        let spec = nested(|s| {
            s.as_object_mut().unwrap().remove("networking");
        });
        let hc = hosted_cluster(&spec);
        assert_eq!(
            hc.pointer("/spec/networking"),
            Some(&json!({"networkType": "OVNKubernetes"}))
        );
        assert!(hc.pointer("/spec/infraID").is_none());
    }

    #[test]
    fn two_cluster_networks_are_sent_in_order_with_their_host_prefixes() {
        let spec = nested(|s| {
            s["networking"]["clusterNetwork"] = json!([
                {"cidr": "10.132.0.0/14", "hostPrefix": 23},
                {"cidr": "10.136.0.0/14"},
            ]);
        });
        assert_eq!(
            hosted_cluster(&spec).pointer("/spec/networking/clusterNetwork"),
            Some(&json!([
                {"cidr": "10.132.0.0/14", "hostPrefix": 23},
                {"cidr": "10.136.0.0/14"},
            ]))
        );
    }
}
