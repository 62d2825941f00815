//! The cluster spec's validation, rule by rule (the oracle, `hyperfleet/tests/oracle`, pins
//! every message).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::networks::cidr_v6_syntax;
use super::*;
use ipnet::IpNet;
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

/// HyperFleet's nested shape (`tests/fixtures/cluster-nested.json`), and mixing it with the flat
/// keys.
mod nested_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::super::*;
    use serde_json::json;

    use super::super::fixture::{self, NESTED as NESTED_JSON, VALID};

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
