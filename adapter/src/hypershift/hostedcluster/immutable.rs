//! What a generation bump may change: the HostedCluster the adapter builds now against the one
//! the management cluster holds (the work's manifest).
//!
//! The immutable fields are the CRD's transition rules (`x-kubernetes-validations` with
//! `oldSelf`, `hypershift-api.md` §1, TechPreviewNoUpgrade CRD) on the fields the adapter sends.
//! Rules on fields the adapter never sends (`clusterID`, `infraID`, `etcd`, `fips`,
//! `controllerAvailabilityPolicy`, `capabilities`, …: the API server or the operator fills them
//! and owns them) cannot be broken by an update that sends only what the adapter owns, so they
//! are not compared. Besides the CRD rules, `metadata.name`/`metadata.namespace` are compared:
//! renaming would make the work agent delete the HostedCluster and create another one.
//!
//! A field the adapter leaves out is compared by the value the API server defaulted it to
//! (`networking.clusterNetwork` `10.132.0.0/14`, `serviceNetwork` `172.31.0.0/16`), so omitting
//! the default is no change and replacing a defaulted network is one.

use serde_json::{Value, json};

use crate::hypershift::immutable::{ImmutableChange, dotted};

/// `(spec field, HostedCluster JSON pointer, value the API server defaults it to when omitted)`.
/// Order = the order fields are reported in.
const IMMUTABLE: &[(&str, &str, Option<&str>)] = &[
    ("name", "/metadata/name", None),
    ("metadata.namespace", "/metadata/namespace", None),
    ("spec.platform.type", "/spec/platform/type", None),
    ("gcp_project_id", "/spec/platform/gcp/project", None),
    ("gcp_region", "/spec/platform/gcp/region", None),
    (
        "vpc_network_name",
        "/spec/platform/gcp/networkConfig/network",
        None,
    ),
    (
        "psc_subnet_name",
        "/spec/platform/gcp/networkConfig/privateServiceConnectSubnet",
        None,
    ),
    (
        "gcp_project_number",
        "/spec/platform/gcp/workloadIdentity/projectNumber",
        None,
    ),
    (
        "wif_pool_id",
        "/spec/platform/gcp/workloadIdentity/poolID",
        None,
    ),
    (
        "wif_provider_id",
        "/spec/platform/gcp/workloadIdentity/providerID",
        None,
    ),
    (
        "control_plane_sa_email",
        "/spec/platform/gcp/workloadIdentity/serviceAccountsEmails/controlPlane",
        None,
    ),
    (
        "nodepool_sa_email",
        "/spec/platform/gcp/workloadIdentity/serviceAccountsEmails/nodePool",
        None,
    ),
    (
        "cloud_controller_sa_email",
        "/spec/platform/gcp/workloadIdentity/serviceAccountsEmails/cloudController",
        None,
    ),
    (
        "storage_sa_email",
        "/spec/platform/gcp/workloadIdentity/serviceAccountsEmails/storage",
        None,
    ),
    (
        "image_registry_sa_email",
        "/spec/platform/gcp/workloadIdentity/serviceAccountsEmails/imageRegistry",
        None,
    ),
    (
        "network_sa_email",
        "/spec/platform/gcp/workloadIdentity/serviceAccountsEmails/network",
        None,
    ),
    (
        "cluster_network_cidr",
        "/spec/networking/clusterNetwork",
        Some("10.132.0.0/14"),
    ),
    (
        "service_network_cidr",
        "/spec/networking/serviceNetwork",
        Some("172.31.0.0/16"),
    ),
    (
        "machine_network_cidr",
        "/spec/networking/machineNetwork",
        None,
    ),
    (
        "spec.networking.networkType",
        "/spec/networking/networkType",
        None,
    ),
    ("base_domain", "/spec/dns/baseDomain", None),
    ("issuer_url", "/spec/issuerURL", None),
    // The services follow the cluster name and `external_dns_domain` (hostnames, strategies).
    ("external_dns_domain", "/spec/services", None),
];

/// The value at `pointer`, or the API server's default when absent. A CIDR list is shown by its
/// CIDRs (`["10.0.0.0/16"]`), the services by `Service=Strategy[hostname]`, other values as is.
fn effective(hc: &Value, pointer: &str, default: Option<&str>) -> Value {
    let value = hc.pointer(pointer).cloned();
    let value = match (value, default) {
        (None | Some(Value::Null), Some(cidr)) => json!([{"cidr": cidr}]),
        (None, None) => Value::Null,
        (Some(v), _) => v,
    };
    if pointer.ends_with("Network")
        && pointer.starts_with("/spec/networking/")
        && let Value::Array(items) = &value
    {
        return Value::Array(
            items
                .iter()
                .map(|i| i.get("cidr").cloned().unwrap_or_else(|| i.clone()))
                .collect(),
        );
    }
    if pointer == "/spec/services"
        && let Value::Array(items) = &value
    {
        return Value::Array(
            items
                .iter()
                .map(|s| {
                    let service = s["service"].as_str().unwrap_or("?");
                    let strategy = &s["servicePublishingStrategy"];
                    let kind = strategy["type"].as_str().unwrap_or("?");
                    let host = strategy
                        .pointer("/route/hostname")
                        .or_else(|| strategy.pointer("/loadBalancer/hostname"))
                        .and_then(Value::as_str);
                    match host {
                        Some(h) => Value::String(format!("{service}={kind}({h})")),
                        None => Value::String(format!("{service}={kind}")),
                    }
                })
                .collect(),
        );
    }
    value
}

/// Every immutable field whose value differs between the HostedCluster on the management cluster
/// (`old`) and the one built now (`new`), in a fixed order. Empty: the update may be sent.
///
/// `spec.dns.baseDomain` may go from `""` to a value (the CRD allows it); every other listed
/// field must stay equal.
pub fn immutable_changes(old: &Value, new: &Value) -> Vec<ImmutableChange> {
    IMMUTABLE
        .iter()
        .filter_map(|(field, pointer, default)| {
            let before = effective(old, pointer, *default);
            let after = effective(new, pointer, *default);
            if before == after {
                return None;
            }
            if *pointer == "/spec/dns/baseDomain" && before.as_str().is_some_and(str::is_empty) {
                return None;
            }
            Some(ImmutableChange {
                kind: super::KIND,
                field,
                path: dotted(pointer),
                old: before,
                new: after,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::hyperfleet::cluster::fixture;
    use crate::hypershift::hostedcluster::hosted_cluster;

    fn hc_with(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
        hosted_cluster(&fixture::spec_with(edit))
    }

    #[test]
    fn the_same_spec_changes_nothing() {
        let hc = hosted_cluster(&fixture::spec());
        assert!(immutable_changes(&hc, &hc).is_empty());
    }

    #[test]
    fn mutable_fields_may_change() {
        let old = hosted_cluster(&fixture::spec());
        let new = hc_with(|s| {
            s.insert("openshift_version".into(), json!("4.17.1"));
            s.insert("pull_secret_name".into(), json!("other-pull-secret"));
            s.insert("endpoint_access".into(), json!("Private"));
            s.remove("ssh_key_secret_name");
        });
        assert_ne!(old, new);
        assert_eq!(immutable_changes(&old, &new), []);
    }

    #[test]
    fn each_immutable_spec_field_is_named_with_old_and_new() {
        let cases: [(&str, Value, &str); 13] = [
            ("gcp_region", json!("us-east1"), "gcp_region"),
            ("vpc_network_name", json!("other-vpc"), "vpc_network_name"),
            ("psc_subnet_name", json!("other-psc"), "psc_subnet_name"),
            ("gcp_project_number", json!("999"), "gcp_project_number"),
            ("wif_pool_id", json!("other-pool"), "wif_pool_id"),
            (
                "wif_provider_id",
                json!("other-provider"),
                "wif_provider_id",
            ),
            (
                "storage_sa_email",
                json!("hc-storage-2@my-project-123.iam.gserviceaccount.com"),
                "storage_sa_email",
            ),
            (
                "cluster_network_cidr",
                json!("10.128.0.0/14"),
                "cluster_network_cidr",
            ),
            (
                "service_network_cidr",
                json!("172.30.0.0/16"),
                "service_network_cidr",
            ),
            (
                "machine_network_cidr",
                json!("10.1.0.0/16"),
                "machine_network_cidr",
            ),
            ("base_domain", json!("other.example.com"), "base_domain"),
            (
                "issuer_url",
                json!("https://storage.googleapis.com/other"),
                "issuer_url",
            ),
            (
                "external_dns_domain",
                json!("apps.example.com"),
                "external_dns_domain",
            ),
        ];
        let old = hosted_cluster(&fixture::spec());
        for (key, value, field) in cases {
            let new = hc_with(|s| {
                s.insert(key.into(), value.clone());
            });
            let changes = immutable_changes(&old, &new);
            assert_eq!(changes.len(), 1, "{key}: {changes:?}");
            assert_eq!(changes[0].field, field);
            assert_ne!(changes[0].old, changes[0].new);
        }
    }

    #[test]
    fn another_project_names_the_project_and_every_service_account() {
        let old = hosted_cluster(&fixture::spec());
        let new = hc_with(|s| {
            s.insert("gcp_project_id".into(), json!("other-project-9"));
            for key in [
                "control_plane_sa_email",
                "nodepool_sa_email",
                "cloud_controller_sa_email",
                "storage_sa_email",
                "image_registry_sa_email",
                "network_sa_email",
            ] {
                let email = s[key]
                    .as_str()
                    .unwrap()
                    .replace("my-project-123", "other-project-9");
                s.insert(key.into(), json!(email));
            }
        });
        let fields: Vec<_> = immutable_changes(&old, &new)
            .iter()
            .map(|c| c.field)
            .collect();
        assert_eq!(fields.len(), 7, "{fields:?}");
        assert_eq!(fields[0], "gcp_project_id");
    }

    #[test]
    fn the_message_names_field_path_old_and_new() {
        let old = hosted_cluster(&fixture::spec());
        let new = hc_with(|s| {
            s.insert("gcp_region".into(), json!("us-east1"));
        });
        let text = immutable_changes(&old, &new)[0].to_string();
        assert_eq!(
            text,
            r#"gcp_region (HostedCluster spec.platform.gcp.region): "europe-west2" → "us-east1""#
        );
    }

    #[test]
    fn an_omitted_network_is_its_default() {
        let old = hc_with(|s| {
            s.remove("cluster_network_cidr");
            s.remove("service_network_cidr");
        });
        // Spelling out the defaults changes nothing …
        let explicit = hosted_cluster(&fixture::spec());
        assert_eq!(immutable_changes(&old, &explicit), []);
        assert_eq!(immutable_changes(&explicit, &old), []);
        // … another network does.
        let other = hc_with(|s| {
            s.remove("service_network_cidr");
            s.insert("cluster_network_cidr".into(), json!("10.128.0.0/14"));
        });
        let changes = immutable_changes(&old, &other);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].old, json!(["10.132.0.0/14"]));
        assert_eq!(changes[0].new, json!(["10.128.0.0/14"]));
    }

    #[test]
    fn a_renamed_cluster_is_refused() {
        let old = hosted_cluster(&fixture::spec());
        let mut new = old.clone();
        new["metadata"]["name"] = json!("prod-eu-2");
        let changes = immutable_changes(&old, &new);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].field, "name");
    }

    #[test]
    fn base_domain_may_be_set_once_when_empty() {
        let new = hosted_cluster(&fixture::spec());
        let mut old = new.clone();
        old["spec"]["dns"]["baseDomain"] = json!("");
        assert_eq!(immutable_changes(&old, &new), []);
        assert_eq!(immutable_changes(&new, &old).len(), 1);
    }

    #[test]
    fn several_changes_are_all_reported_in_table_order() {
        let old = hosted_cluster(&fixture::spec());
        let new = hc_with(|s| {
            s.insert("machine_network_cidr".into(), json!("10.1.0.0/16"));
            s.insert("gcp_region".into(), json!("us-east1"));
        });
        let fields: Vec<_> = immutable_changes(&old, &new)
            .iter()
            .map(|c| c.field)
            .collect();
        assert_eq!(fields, ["gcp_region", "machine_network_cidr"]);
    }
}
