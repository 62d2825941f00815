//! The cluster spec's oracle: `fuzz/corpus/cluster_spec/`, the fixtures, and mutations of the
//! flat and the nested fixture.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::{Edit, against_base, check_snapshot, corpus, edits_of, indent, pointers, violations};
use crate::hyperfleet::cluster::fixture::{NESTED, VALID};
use crate::hyperfleet::cluster::{ClusterInput, ClusterSpec, SecretSettings};
use crate::hyperfleet::spec::SpecViolation;

/// The id the fuzz target's flags give when the input names none.
const CLUSTER_ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";

type Outcome = Result<ClusterSpec, Vec<SpecViolation>>;

fn render(outcome: &Outcome, base: Option<&str>) -> String {
    match outcome {
        Ok(spec) => {
            let got = format!("{spec:#?}");
            match base {
                Some(base) => format!("ok\n{}", against_base(&got, base)),
                None => format!("ok\n{}\n", indent(&got)),
            }
        }
        Err(v) => format!("refused\n{}", violations(v)),
    }
}

fn all_settings() -> SecretSettings {
    SecretSettings {
        pull_secret_name: Some("setting-pull".into()),
        ssh_key_secret_name: Some("setting-ssh".into()),
        service_account_signing_key_secret_name: Some("setting-signing".into()),
    }
}

/// One input file, as the pulse reads it: with no settings and with every secret setting.
fn render_file(out: &mut String, name: &str, text: &str) {
    let _ = writeln!(out, "## {name}");
    let input = match ClusterInput::from_json(text) {
        Ok(input) => input,
        Err(e) => {
            let _ = writeln!(out, "input error: {e}");
            return;
        }
    };
    let _ = writeln!(
        out,
        "input: id {:?} name {:?} generation {:?} deleted_time {:?}",
        input.id, input.name, input.generation, input.deleted_time
    );
    let id = input
        .id
        .as_deref()
        .filter(|id| !id.is_empty())
        .unwrap_or(CLUSTER_ID);
    for (what, settings) in [
        ("default settings", SecretSettings::default()),
        ("every secret setting", all_settings()),
    ] {
        let outcome = ClusterSpec::validate_with(id, input.name.as_deref(), &input.spec, &settings);
        let _ = write!(out, "# {what}: {}", render(&outcome, None));
    }
}

#[test]
fn cluster_corpus_matches_the_oracle() {
    let mut out = String::new();
    for (name, text) in corpus("fuzz/corpus/cluster_spec") {
        render_file(&mut out, &format!("fuzz/corpus/cluster_spec/{name}"), &text);
    }
    for (name, text) in corpus("adapter/tests/fixtures") {
        if name.starts_with("cluster") {
            render_file(&mut out, &format!("adapter/tests/fixtures/{name}"), &text);
        }
    }
    check_snapshot("cluster-corpus.txt", &out);
}

/// The nested shape's fields (JSON pointers into `spec`).
const NESTED_POINTERS: &[&str] = &[
    "/platform",
    "/platform/type",
    "/platform/template",
    "/platform/gcp",
    "/platform/gcp/projectID",
    "/platform/gcp/region",
    "/platform/gcp/zone",
    "/platform/gcp/network",
    "/platform/gcp/subnet",
    "/platform/gcp/privateServiceConnectSubnet",
    "/platform/gcp/endpointAccess",
    "/platform/gcp/workloadIdentity",
    "/platform/gcp/workloadIdentity/projectNumber",
    "/platform/gcp/workloadIdentity/poolID",
    "/platform/gcp/workloadIdentity/providerID",
    "/platform/gcp/workloadIdentity/serviceAccountsEmails",
    "/platform/gcp/workloadIdentity/serviceAccountsEmails/controlPlane",
    "/platform/gcp/workloadIdentity/serviceAccountsEmails/nodePool",
    "/platform/gcp/workloadIdentity/serviceAccountsEmails/cloudController",
    "/platform/gcp/workloadIdentity/serviceAccountsEmails/storage",
    "/platform/gcp/workloadIdentity/serviceAccountsEmails/imageRegistry",
    "/platform/gcp/workloadIdentity/serviceAccountsEmails/network",
    "/release",
    "/release/image",
    "/release/version",
    "/release/channelGroup",
    "/networking",
    "/networking/clusterNetwork",
    "/networking/serviceNetwork",
    "/networking/machineNetwork",
    "/dns",
    "/dns/baseDomain",
    "/issuerURL",
    "/pullSecret",
    "/pullSecret/name",
    "/sshKey",
    "/sshKey/name",
    "/serviceAccountSigningKey",
    "/serviceAccountSigningKey/name",
    "/infraID",
    "/external_dns_domain",
];

/// The flat shape's keys.
const FLAT_POINTERS: &[&str] = &[
    "/gcp_project_id",
    "/gcp_project_number",
    "/gcp_region",
    "/vpc_network_name",
    "/psc_subnet_name",
    "/wif_pool_id",
    "/wif_provider_id",
    "/control_plane_sa_email",
    "/nodepool_sa_email",
    "/cloud_controller_sa_email",
    "/storage_sa_email",
    "/image_registry_sa_email",
    "/network_sa_email",
    "/endpoint_access",
    "/openshift_version",
    "/release_image",
    "/architecture",
    "/cluster_network_cidr",
    "/service_network_cidr",
    "/machine_network_cidr",
    "/base_domain",
    "/issuer_url",
    "/service_account_signing_key_secret_name",
    "/pull_secret_name",
    "/ssh_key_secret_name",
    "/external_dns_domain",
    "/infraID",
];

const CIDRS: &[&str] = &[
    "10.0.0.0/16",
    "10.132.0.0/14",
    "172.31.0.0/16",
    "10.0.0.1/16",
    "fd01::/48",
    "fd02::/112",
    "100.64.0.0/16",
    "100.64.0.0/10",
    "100.88.0.0/24",
    "fd98::/64",
    "fd97::/80",
    "10.128.0.0/9",
    "0.0.0.0/0",
    "300.1.0.0/16",
    "10.0.0.0/33",
    "10.0.0.0",
    "fd01::/129",
    "10.0.0.0/8/1",
    "fd01:0:0:0:0:0:0:0:0/48",
    "1.2.3.4/32",
];

/// All-IPv6 networks (cluster, service, machine): the IPv6 OVN-Kubernetes subnets.
const IPV6_TRIPLES: [[&str; 3]; 4] = [
    ["fd01::/48", "fd02::/112", "fd98::/64"],
    ["fd97::/64", "fd02::/112", "fd03::/48"],
    ["fd01::/48", "fd01::/64", "fd03::/48"],
    ["fd01::/48", "fd02::/112", "fd03::/48"],
];

fn emails() -> Vec<Value> {
    [
        "hc-other@my-project-123.iam.gserviceaccount.com",
        "hc-other@other-project.iam.gserviceaccount.com",
        "hc-control-plane@my-project-123.iam.gserviceaccount.com",
        "hc-network@my-project-123.iam.gserviceaccount.com",
        "hc-storage@my-project-123.iam.gserviceaccount.com",
        "abc@my-project-123.iam.gserviceaccount.com",
        "HC-other@my-project-123.iam.gserviceaccount.com",
        "hc-other@my-project-123.iam.gserviceaccount.co",
        "hc-other-with-a-long-account-name@my-project-1234567890123456789.iam.gserviceaccount.com",
    ]
    .map(Value::from)
    .to_vec()
}

/// Values that reach each rule of the field named `key` (its last pointer segment).
fn specific(pointer: &str) -> Vec<Value> {
    let key = last_key(pointer);
    if pointer.contains("serviceAccountsEmails/") || key.ends_with("_sa_email") {
        return emails();
    }
    let strings = |v: &[&str]| v.iter().map(|s| Value::from(*s)).collect::<Vec<_>>();
    let mut out = match key {
        "projectID" | "gcp_project_id" => strings(&[
            "my-project-123",
            "other-project",
            "abcdef",
            "abcde",
            "1abcdef",
            "abcdef-",
            "my_project",
            &format!("a{}", "b".repeat(29)),
            &format!("a{}", "b".repeat(30)),
        ]),
        "projectNumber" | "gcp_project_number" => {
            let mut v = strings(&["123", "0", "12a", &"1".repeat(25), &"1".repeat(26)]);
            v.push(json!(123456789012_u64));
            v
        }
        "region" | "gcp_region" => {
            strings(&["us-central1", "europe-west2-a", "us-central", "US-CENTRAL1"])
        }
        "network"
        | "subnet"
        | "privateServiceConnectSubnet"
        | "vpc_network_name"
        | "psc_subnet_name" => strings(&[
            "hcp-vpc",
            "other-subnet",
            "a",
            "a-",
            "1a",
            "A",
            &"a".repeat(63),
            &"a".repeat(64),
        ]),
        "poolID" | "providerID" | "wif_pool_id" | "wif_provider_id" => strings(&[
            "gcp-pool",
            "pool",
            "abc",
            "pool-",
            "Pool",
            &"p".repeat(32),
            &"p".repeat(33),
            "gcp-",
        ]),
        "endpointAccess" | "endpoint_access" => {
            strings(&["Private", "PublicAndPrivate", "public", "PRIVATE"])
        }
        "version" | "openshift_version" => strings(&[
            "4.17.0",
            "4.18.0-rc.1",
            "4.17.0-aarch64",
            "4.17.0-arm64",
            "4.17.0-multi",
            "4.17.0-x86_64",
            "4.17.0-ppc64le",
            "4.17",
            "v4.17.0",
            "4.17.0-",
            &format!("4.17.0-{}", "r".repeat(93)),
            &format!("4.17.0-{}", "r".repeat(94)),
        ]),
        "image" | "release_image" => strings(&[
            "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64",
            "quay.io/openshift-release-dev/ocp-release@sha256:abc",
            "has space:1",
            "-bad",
            &format!("q{}", "x".repeat(252)),
            &format!("q{}", "x".repeat(253)),
        ]),
        "architecture" => strings(&[
            "x86_64", "amd64", "aarch64", "arm64", "multi", "s390x", "ARM64",
        ]),
        "channelGroup" | "zone" => strings(&["stable", "europe-west2-a"]),
        "type" => strings(&["gcp", "template", "aws", "GCP"]),
        "cluster_network_cidr" | "service_network_cidr" | "machine_network_cidr" => strings(CIDRS),
        "baseDomain" | "base_domain" => strings(&[
            "example.com",
            "localhost",
            "a.b.c.example.com",
            "-x.example.com",
            "ex ample.com",
            "example.c",
            &format!("{}.com", "a".repeat(249)),
            &format!("{}.com", "a".repeat(250)),
        ]),
        "issuerURL" | "issuer_url" => strings(&[
            "https://issuer.example.com",
            "https://issuer.example.com:8443/path/x",
            "http://issuer.example.com",
            "https://issuer.example.com/?q=1",
            "https://issuer.example.com/#f",
            &format!("https://{}", "a".repeat(247)),
            &format!("https://{}", "a".repeat(248)),
        ]),
        "name"
        | "pull_secret_name"
        | "ssh_key_secret_name"
        | "service_account_signing_key_secret_name" => strings(&[
            "my-secret",
            "my.secret",
            "My-Secret",
            "-secret",
            &"s".repeat(253),
            &"s".repeat(254),
        ]),
        "infraID" => strings(&[
            "my-infra",
            "1infra",
            "Infra",
            "infra-",
            "in.fra",
            &"i".repeat(253),
            &"i".repeat(254),
        ]),
        "external_dns_domain" => strings(&[
            "hypershift.example.com",
            "localhost",
            "example.c",
            "-bad.example.com",
            &format!("{}.com", "a".repeat(181)),
            &format!("{}.com", "a".repeat(182)),
        ]),
        _ => Vec::new(),
    };
    if key.ends_with("Network") {
        out.extend(network_lists(key));
    }
    out
}

/// 0–3 entries of a nested network list, good and bad.
fn network_lists(key: &str) -> Vec<Value> {
    let entry = |cidr: &str| match key {
        "serviceNetwork" => json!(cidr),
        _ => json!({ "cidr": cidr }),
    };
    let mut out = vec![
        json!([]),
        json!([entry("10.0.0.0/16")]),
        json!([entry("10.0.0.0/16"), entry("10.1.0.0/16")]),
        json!([
            entry("10.0.0.0/16"),
            entry("10.1.0.0/16"),
            entry("10.2.0.0/16")
        ]),
        json!([entry("10.0.0.0/16"), entry("fd01::/48")]),
        json!([entry("10.0.0.0/16"), entry("10.0.0.0/17")]),
        json!([entry("bad"), entry("10.0.0.1/16")]),
        json!([entry("")]),
        json!(["10.0.0.0/16"]),
        json!([{ "cidr": "10.0.0.0/16" }]),
        json!([{}]),
        json!([{ "cidr": 5 }]),
        json!([{ "cidr": null }]),
        json!([1]),
        json!([null]),
        json!([[]]),
    ];
    for cidr in CIDRS {
        out.push(json!([entry(cidr)]));
    }
    if key == "clusterNetwork" {
        for (cidr, prefix) in [
            ("10.132.0.0/14", json!(23)),
            ("10.132.0.0/14", json!(14)),
            ("10.132.0.0/14", json!(13)),
            ("10.132.0.0/14", json!(32)),
            ("10.132.0.0/14", json!(33)),
            ("10.132.0.0/14", json!(0)),
            ("10.132.0.0/14", json!(-1)),
            ("10.132.0.0/14", json!(23.5)),
            ("10.132.0.0/14", json!("23")),
            ("10.132.0.0/14", json!(null)),
            ("10.132.0.0/14", json!(256)),
            ("fd01::/48", json!(64)),
            ("fd01::/48", json!(128)),
            ("fd01::/48", json!(129)),
            ("fd01::/48", json!(47)),
            ("bad", json!(23)),
            ("bad", json!(200)),
            ("bad", json!("x")),
        ] {
            out.push(json!([{ "cidr": cidr, "hostPrefix": prefix }]));
        }
        out.push(json!([
            { "cidr": "10.132.0.0/14", "hostPrefix": 40 },
            { "cidr": "fd01::/48", "hostPrefix": 200 }
        ]));
        out.push(json!([{ "cidr": "10.132.0.0/14", "hostPrefix": 23 }, "10.0.0.0/8"]));
    }
    out
}

/// A labelled case: edits of a base spec, validated for `id`/`name` with `settings`.
struct Case {
    label: String,
    edits: Vec<Edit>,
    id: String,
    name: Option<String>,
    settings: SecretSettings,
}

impl Case {
    fn of(edits: Vec<Edit>) -> Self {
        Case {
            label: edits.iter().map(Edit::label).collect::<Vec<_>>().join("; "),
            edits,
            id: CLUSTER_ID.into(),
            name: Some("prod-eu-1".into()),
            settings: SecretSettings::default(),
        }
    }
}

fn last_key(pointer: &str) -> &str {
    pointer.rsplit('/').next().unwrap_or(pointer)
}

fn single_field_cases(base: &Map<String, Value>, own: &[&str], other: &[&str]) -> Vec<Case> {
    let mut seen = Vec::new();
    let mut found = Vec::new();
    pointers(&Value::Object(base.clone()), "", &mut found);
    let mut cases = Vec::new();
    for pointer in found.iter().map(String::as_str).chain(own.iter().copied()) {
        if seen.contains(&pointer) {
            continue;
        }
        seen.push(pointer);
        cases.extend(
            edits_of(pointer, specific(pointer))
                .into_iter()
                .map(|e| Case::of(vec![e])),
        );
    }
    for pointer in other {
        if seen.contains(pointer) {
            continue;
        }
        for value in [json!(null), json!("x"), json!({})] {
            cases.push(Case::of(vec![Edit::set(pointer, value)]));
        }
    }
    cases
}

/// The flat shape's cross-field rules: release matrix and the three networks.
fn flat_combinations() -> Vec<Case> {
    let mut cases = Vec::new();
    let opt = |v: &str| (!v.is_empty()).then(|| json!(v));
    for arch in ["", "x86_64", "amd64", "aarch64", "arm64", "multi", "s390x"] {
        for version in [
            "",
            "4.17.0",
            "4.17.0-aarch64",
            "4.17.0-multi",
            "4.17.0-x86_64",
            "4.17.0-ppc64le",
            "4.17.0-arm64",
            "4.18.0-rc.1",
            "bad",
        ] {
            for image in ["", "quay.io/x/y:1", "bad image"] {
                let mut edits = Vec::new();
                for (key, value) in [
                    ("/architecture", opt(arch)),
                    ("/openshift_version", opt(version)),
                    ("/release_image", opt(image)),
                ] {
                    edits.push(match value {
                        Some(v) => Edit::set(key, v),
                        None => Edit::remove(key),
                    });
                }
                cases.push(Case::of(edits));
            }
        }
    }
    let nets = [
        "",
        "10.132.0.0/14",
        "10.0.0.0/16",
        "172.31.0.0/16",
        "fd01::/48",
        "fd02::/112",
        "100.64.0.0/16",
        "bad",
    ];
    for cluster in nets {
        for service in nets {
            for machine in nets {
                let edits = [
                    ("/cluster_network_cidr", cluster),
                    ("/service_network_cidr", service),
                    ("/machine_network_cidr", machine),
                ]
                .into_iter()
                .map(|(k, v)| match opt(v) {
                    Some(v) => Edit::set(k, v),
                    None => Edit::remove(k),
                })
                .collect();
                cases.push(Case::of(edits));
            }
        }
    }
    for [cluster, service, machine] in IPV6_TRIPLES {
        cases.push(Case::of(vec![
            Edit::set("/cluster_network_cidr", json!(cluster)),
            Edit::set("/service_network_cidr", json!(service)),
            Edit::set("/machine_network_cidr", json!(machine)),
        ]));
    }
    for wrong in [json!(1), json!(null), json!([])] {
        for key in [
            "/cluster_network_cidr",
            "/service_network_cidr",
            "/machine_network_cidr",
        ] {
            cases.push(Case::of(vec![
                Edit::set(key, wrong.clone()),
                Edit::set("/gcp_region", json!(7)),
            ]));
        }
    }
    cases.extend(project_and_accounts(
        "/gcp_project_id",
        &[
            "/control_plane_sa_email",
            "/nodepool_sa_email",
            "/cloud_controller_sa_email",
            "/storage_sa_email",
            "/image_registry_sa_email",
            "/network_sa_email",
        ],
    ));
    cases
}

/// The service accounts against the project, and against each other.
fn project_and_accounts(project: &str, accounts: &[&str]) -> Vec<Case> {
    let mut cases = Vec::new();
    for project_value in [json!("other-project"), json!("Bad_Project"), json!(null)] {
        cases.push(Case::of(vec![Edit::set(project, project_value)]));
    }
    let same = json!("hc-same@my-project-123.iam.gserviceaccount.com");
    cases.push(Case::of(
        accounts
            .iter()
            .map(|a| Edit::set(a, same.clone()))
            .collect(),
    ));
    cases.push(Case::of(vec![
        Edit::set(accounts[5], same.clone()),
        Edit::set(accounts[1], same.clone()),
        Edit::set(
            accounts[3],
            json!("hc-x@other-project.iam.gserviceaccount.com"),
        ),
    ]));
    cases.push(Case::of(vec![
        Edit::set(project, json!("Bad_Project")),
        Edit::set(
            accounts[2],
            json!("hc-x@other-project.iam.gserviceaccount.com"),
        ),
        Edit::set(
            accounts[4],
            json!("hc-x@other-project.iam.gserviceaccount.com"),
        ),
    ]));
    cases
}

/// The nested shape's cross-field rules: release, networks, the PSC subnet, platform type.
fn nested_combinations() -> Vec<Case> {
    let mut cases = Vec::new();
    let edit = |key: &str, v: &str| {
        if v.is_empty() {
            Edit::remove(key)
        } else {
            Edit::set(key, json!(v))
        }
    };
    for version in [
        "",
        "4.17.0",
        "4.17.0-aarch64",
        "4.17.0-multi",
        "4.17.0-ppc64le",
        "4.17.0-arm64",
        "bad",
    ] {
        for image in ["", "quay.io/x/y:1", "bad image"] {
            cases.push(Case::of(vec![
                edit("/release/version", version),
                edit("/release/image", image),
            ]));
        }
    }
    let lists = |key: &str| {
        let entry = |cidr: &str| match key {
            "serviceNetwork" => json!(cidr),
            _ => json!({ "cidr": cidr }),
        };
        vec![
            None,
            Some(json!([entry("10.132.0.0/14")])),
            Some(json!([entry("10.0.0.0/16")])),
            Some(json!([entry("172.31.0.0/16")])),
            Some(json!([entry("fd01::/48")])),
            Some(json!([entry("10.0.0.0/16"), entry("fd02::/112")])),
            Some(json!([entry("100.88.0.0/16")])),
            Some(json!([entry("bad")])),
        ]
    };
    let set_or_remove = |key: &str, v: Option<Value>| match v {
        Some(v) => Edit::set(key, v),
        None => Edit::remove(key),
    };
    for cluster in lists("clusterNetwork") {
        for service in lists("serviceNetwork") {
            for machine in lists("machineNetwork") {
                cases.push(Case::of(vec![
                    set_or_remove("/networking/clusterNetwork", cluster.clone()),
                    set_or_remove("/networking/serviceNetwork", service.clone()),
                    set_or_remove("/networking/machineNetwork", machine.clone()),
                ]));
            }
        }
    }
    for [cluster, service, machine] in IPV6_TRIPLES {
        cases.push(Case::of(vec![
            Edit::set("/networking/clusterNetwork", json!([{ "cidr": cluster }])),
            Edit::set("/networking/serviceNetwork", json!([service])),
            Edit::set("/networking/machineNetwork", json!([{ "cidr": machine }])),
        ]));
    }
    for psc in ["", "hcp-psc", "Bad_Psc"] {
        for subnet in ["", "hcp-subnet", "Bad_Subnet"] {
            cases.push(Case::of(vec![
                edit("/platform/gcp/privateServiceConnectSubnet", psc),
                edit("/platform/gcp/subnet", subnet),
            ]));
        }
        cases.push(Case::of(vec![
            edit("/platform/gcp/privateServiceConnectSubnet", psc),
            Edit::set("/platform/gcp/subnet", json!(5)),
        ]));
    }
    cases.push(Case::of(vec![
        Edit::set("/platform/gcp/privateServiceConnectSubnet", json!(5)),
        Edit::set("/platform/gcp/subnet", json!(5)),
    ]));
    cases.push(Case::of(vec![
        Edit::set("/platform/type", json!("template")),
        Edit::set("/platform/template", json!({"projectID": "x"})),
        Edit::remove("/platform/gcp"),
    ]));
    cases.push(Case::of(vec![
        Edit::set("/platform", json!("gcp")),
        Edit::set("/release", json!(1)),
        Edit::set("/networking", json!([])),
        Edit::set("/dns", json!("x")),
    ]));
    cases.push(Case::of(vec![
        Edit::set("/platform/gcp/workloadIdentity", json!([])),
        Edit::set("/platform/gcp/zone", json!(1)),
        Edit::set("/release/channelGroup", json!(false)),
    ]));
    cases.push(Case::of(vec![
        Edit::set(
            "/platform/gcp/workloadIdentity/serviceAccountsEmails",
            json!("x"),
        ),
        Edit::set("/pullSecret", json!(1)),
        Edit::set("/sshKey", json!(1)),
        Edit::set("/serviceAccountSigningKey", json!(1)),
    ]));
    cases.extend(project_and_accounts(
        "/platform/gcp/projectID",
        &[
            "/platform/gcp/workloadIdentity/serviceAccountsEmails/controlPlane",
            "/platform/gcp/workloadIdentity/serviceAccountsEmails/nodePool",
            "/platform/gcp/workloadIdentity/serviceAccountsEmails/cloudController",
            "/platform/gcp/workloadIdentity/serviceAccountsEmails/storage",
            "/platform/gcp/workloadIdentity/serviceAccountsEmails/imageRegistry",
            "/platform/gcp/workloadIdentity/serviceAccountsEmails/network",
        ],
    ));
    cases
}

/// The cluster id and name, and the secret settings over the spec's secret fields.
fn identity_and_settings(secret_fields: [&str; 3]) -> Vec<Case> {
    let mut cases = Vec::new();
    let a = |n: usize| "a".repeat(n);
    for id in [
        CLUSTER_ID.to_owned(),
        String::new(),
        "a".into(),
        "Bad_Id".into(),
        a(54),
        a(55),
        a(60),
        a(61),
        "-a".into(),
    ] {
        for name in [
            None,
            Some(String::new()),
            Some("ab".into()),
            Some("abc".into()),
            Some(a(53)),
            Some(a(54)),
            Some("Bad_Name".into()),
            Some("prod-eu-1".into()),
        ] {
            let mut case = Case::of(Vec::new());
            case.label = format!("id {id:?} name {name:?}");
            case.id = id.clone();
            case.name = name;
            cases.push(case);
        }
    }
    let [pull, ssh, signing] = secret_fields;
    for mask in 0..8u8 {
        let setting = |bit: u8, v: &str| (mask & bit != 0).then(|| v.to_owned());
        let settings = SecretSettings {
            pull_secret_name: setting(1, "setting-pull"),
            ssh_key_secret_name: setting(2, "Bad_Setting"),
            service_account_signing_key_secret_name: setting(4, "setting-signing"),
        };
        let spec_edits = [
            vec![],
            vec![Edit::remove(pull), Edit::remove(ssh), Edit::remove(signing)],
            vec![Edit::set(pull, json!(1)), Edit::set(ssh, json!("Bad"))],
            vec![Edit::set(signing, json!([]))],
        ];
        for edits in spec_edits {
            let mut case = Case::of(edits);
            case.label = format!("settings {settings:?}; {}", case.label);
            case.settings = settings.clone();
            cases.push(case);
        }
    }
    for object in ["/pullSecret", "/sshKey", "/serviceAccountSigningKey"] {
        let mut case = Case::of(vec![Edit::set(object, json!("not an object"))]);
        case.settings = all_settings();
        case.label = format!("every secret setting; {}", case.label);
        cases.push(case);
    }
    cases
}

fn run_cases(out: &mut String, title: &str, base: &Map<String, Value>, cases: Vec<Case>) {
    let base_outcome = ClusterSpec::validate(CLUSTER_ID, Some("prod-eu-1"), base);
    let base_debug = base_outcome.as_ref().map(|s| format!("{s:#?}")).ok();
    let _ = write!(out, "# base {title}: {}", render(&base_outcome, None));
    for case in cases {
        let mut spec = base.clone();
        for edit in &case.edits {
            edit.apply(&mut spec);
        }
        let outcome =
            ClusterSpec::validate_with(&case.id, case.name.as_deref(), &spec, &case.settings);
        let _ = write!(
            out,
            "## {title}: {}\n{}",
            case.label,
            render(&outcome, base_debug.as_deref())
        );
    }
}

fn spec_of(text: &str) -> Map<String, Value> {
    ClusterInput::from_json(text).unwrap().spec
}

#[test]
fn cluster_mutations_match_the_oracle() {
    let mut out = String::new();
    let flat = spec_of(VALID);
    let mut cases = single_field_cases(&flat, FLAT_POINTERS, NESTED_POINTERS);
    cases.extend(flat_combinations());
    cases.extend(identity_and_settings([
        "/pull_secret_name",
        "/ssh_key_secret_name",
        "/service_account_signing_key_secret_name",
    ]));
    run_cases(&mut out, "flat", &flat, cases);

    let nested = spec_of(NESTED);
    let mut cases = single_field_cases(&nested, NESTED_POINTERS, FLAT_POINTERS);
    cases.extend(nested_combinations());
    cases.extend(identity_and_settings([
        "/pullSecret/name",
        "/sshKey/name",
        "/serviceAccountSigningKey/name",
    ]));
    run_cases(&mut out, "nested", &nested, cases);

    let empty = Map::new();
    let cases = vec![
        Case::of(vec![]),
        Case::of(vec![Edit::set("/platform/type", json!("gcp"))]),
        Case::of(vec![Edit::set("/gcp_region", json!("us-central1"))]),
        Case::of(vec![
            Edit::set("/gcp_region", json!(null)),
            Edit::set("/platform", json!(null)),
        ]),
        Case::of(vec![Edit::set("/infraID", json!("x"))]),
        Case::of(vec![Edit::set(
            "/external_dns_domain",
            json!("example.com"),
        )]),
    ];
    run_cases(&mut out, "empty", &empty, cases);
    check_snapshot("cluster-mutations.txt", &out);
}
