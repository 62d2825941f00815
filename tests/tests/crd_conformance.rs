//! CRD conformance: every HostedCluster and ManifestWork the adapter generates is checked against
//! the real CRDs (`shared/fixtures/crds/`, beside the repository) with a small OpenAPI validator
//! (`openapi/`), including the CEL rules that apply to what we send. Negative tests show the
//! validator rejects broken objects, so a passing run means something.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hypershift_adapter::hyperfleet::cluster::{ClusterInput, ClusterSpec};
use hypershift_adapter::hypershift::hostedcluster;
use hypershift_adapter::pulse::controlplane;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::LazyLock;
use testbed::openapi::{Outcome, crd_schema, validate};

/// The team's CRD fixtures (`shared/fixtures/crds` beside the repository); `None` on a clone
/// without the team folder, where every test here skips.
static CRDS: LazyLock<Option<PathBuf>> =
    LazyLock::new(|| job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/crds"));
const VALID: &str = include_str!("../../adapter/tests/fixtures/cluster-valid.json");
const NESTED: &str = include_str!("../../adapter/tests/fixtures/cluster-nested.json");
/// A HyperFleet cluster id (UUIDv7, 36 characters).
const ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
/// The longest cluster name the HyperFleet API accepts (53 characters).
const LONGEST_NAME: &str = "prod-eu-1-payments-ledger-primary-region-west-cell-07";

static HOSTED_CLUSTER_SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    crd_schema(
        &CRDS
            .as_ref()
            .expect("each test checks CRDS first")
            .join("hostedclusters.hypershift.openshift.io-TechPreviewNoUpgrade.yaml"),
        "v1beta1",
    )
});
static MANIFEST_WORK_SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    crd_schema(
        &CRDS
            .as_ref()
            .expect("each test checks CRDS first")
            .join("manifestworks.work.open-cluster-management.io.yaml"),
        "v1",
    )
});

fn spec(
    id: &str,
    name: Option<&str>,
    edit: impl FnOnce(&mut serde_json::Map<String, Value>),
) -> ClusterSpec {
    let mut input = ClusterInput::from_json(VALID).unwrap();
    edit(&mut input.spec);
    ClusterSpec::validate(id, name, &input.spec).unwrap()
}

/// A spec in HyperFleet's nested shape (the nested fixture, edited as a JSON value).
fn nested(id: &str, name: Option<&str>, edit: impl FnOnce(&mut Value)) -> ClusterSpec {
    let input = ClusterInput::from_json(NESTED).unwrap();
    let mut spec = Value::Object(input.spec);
    edit(&mut spec);
    ClusterSpec::validate(id, name, spec.as_object().unwrap()).unwrap()
}

/// The specs we generate objects from: every optional branch of the builders.
fn variants() -> Vec<(&'static str, ClusterSpec)> {
    let full = |_: &mut serde_json::Map<String, Value>| {};
    vec![
        (
            "nested shape: hostPrefix, infraID, PSC subnet",
            nested(ID, Some(LONGEST_NAME), |s| {
                s["infraID"] = json!("prod-eu-1-x7k2p");
                s["platform"]["gcp"]["privateServiceConnectSubnet"] = json!("hcp-psc");
            }),
        ),
        (
            "nested shape: two cluster networks, no optional lists",
            nested(ID, None, |s| {
                s["networking"] = json!({"clusterNetwork": [
                    {"cidr": "10.132.0.0/14", "hostPrefix": 23},
                    {"cidr": "10.136.0.0/14", "hostPrefix": 23},
                ]});
                let spec = s.as_object_mut().unwrap();
                spec.remove("sshKey");
                spec.remove("serviceAccountSigningKey");
            }),
        ),
        ("full", spec(ID, Some("prod-eu-1"), full)),
        (
            "minimal",
            spec(
                "019a6f1f-0d2e-7c3b-a4f5-6e7d8c9b0a1f",
                Some("minimal"),
                |s| {
                    for f in [
                        "endpoint_access",
                        "cluster_network_cidr",
                        "service_network_cidr",
                        "service_account_signing_key_secret_name",
                        "ssh_key_secret_name",
                    ] {
                        s.remove(f);
                    }
                },
            ),
        ),
        ("UUIDv7 id (digit first), no name", spec(ID, None, full)),
        (
            "ipv6",
            spec("019a6f20-5e1a-7f00-8123-456789abcdef", None, |s| {
                s.insert("cluster_network_cidr".into(), json!("fd01::/48"));
                s.insert("service_network_cidr".into(), json!("fd02::/112"));
                s.insert("machine_network_cidr".into(), json!("fd03::/64"));
            }),
        ),
        (
            "longest name, external dns, arm64, private",
            spec(ID, Some(LONGEST_NAME), |s| {
                s.insert("external_dns_domain".into(), json!("hcp.example.com"));
                s.insert("architecture".into(), json!("arm64"));
                s.insert("endpoint_access".into(), json!("Private"));
            }),
        ),
        (
            "release image override",
            spec("override", Some("override"), |s| {
                s.remove("openshift_version");
                s.insert(
                    "release_image".into(),
                    json!("quay.io/openshift-release-dev/ocp-release@sha256:0123456789abcdef"),
                );
            }),
        ),
    ]
}

fn hosted_cluster_outcome(object: &Value) -> Outcome {
    validate(&HOSTED_CLUSTER_SCHEMA, object)
}

#[track_caller]
fn assert_conforms(what: &str, outcome: &Outcome) {
    assert!(
        outcome.errors.is_empty(),
        "{what}: rejected by the CRD:\n{:#?}",
        outcome.errors
    );
    assert!(
        outcome.unevaluated.is_empty(),
        "{what}: CEL rules on generated fields that the test cannot evaluate; add them to openapi/cel.rs:\n{:#?}",
        outcome.unevaluated
    );
}

#[test]
fn every_generated_hosted_cluster_conforms_to_the_crd() {
    if CRDS.is_none() {
        return;
    }
    for (name, spec) in variants() {
        let hc = hostedcluster::hosted_cluster(&spec);
        assert_conforms(name, &hosted_cluster_outcome(&hc));
    }
}

#[test]
fn every_generated_manifest_work_conforms_to_the_crd() {
    if CRDS.is_none() {
        return;
    }
    for (name, spec) in variants() {
        let work = controlplane::manifest_work(&spec, "us-east-mgmt-01", Some(12));
        assert_conforms(name, &validate(&MANIFEST_WORK_SCHEMA, &work));
        // Its second manifest (after the Namespace) is the HostedCluster, which must conform too.
        let manifest = &work["spec"]["workload"]["manifests"][1];
        assert_eq!(manifest, &hostedcluster::hosted_cluster(&spec));
        assert_conforms(name, &hosted_cluster_outcome(manifest));
    }
}

/// A HostedCluster broken by `edit` (a JSON pointer and a new value, `None` removes it).
fn broken(pointer: &str, new: Option<Value>) -> Outcome {
    let mut hc = hostedcluster::hosted_cluster(&variants().remove(0).1);
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let last = last.replace("~1", "/").replace("~0", "~");
    let parent = hc.pointer_mut(parent).unwrap();
    match (parent, new) {
        (Value::Object(map), Some(v)) => {
            map.insert(last, v);
        }
        (Value::Object(map), None) => {
            map.remove(&last);
        }
        (Value::Array(items), Some(v)) => items[last.parse::<usize>().unwrap()] = v,
        (Value::Array(items), None) => {
            items.remove(last.parse::<usize>().unwrap());
        }
        _ => panic!("{pointer} is not in an object or array"),
    }
    hosted_cluster_outcome(&hc)
}

#[track_caller]
fn assert_rejected(outcome: &Outcome, path: &str, needle: &str) {
    assert!(
        outcome.has_error(path, needle),
        "expected an error at {path} containing {needle:?}, got:\n{:#?}",
        outcome.errors
    );
}

#[test]
fn the_validator_rejects_missing_required_fields() {
    if CRDS.is_none() {
        return;
    }
    assert_rejected(
        &broken("/spec/services", None),
        ".spec.services",
        "Required value",
    );
    assert_rejected(
        &broken("/spec/pullSecret", None),
        ".spec.pullSecret",
        "Required value",
    );
    assert_rejected(
        &broken(
            "/spec/platform/gcp/workloadIdentity/serviceAccountsEmails/network",
            None,
        ),
        ".spec.platform.gcp.workloadIdentity.serviceAccountsEmails.network",
        "Required value",
    );
}

#[test]
fn the_validator_applies_schema_defaults_before_required() {
    if CRDS.is_none() {
        return;
    }
    // `etcd` is required but defaulted by the API server: omitting it is fine.
    let hc = hostedcluster::hosted_cluster(&variants().remove(0).1);
    assert!(hc["spec"].get("etcd").is_none());
    assert!(hosted_cluster_outcome(&hc).errors.is_empty());
}

#[test]
fn the_validator_rejects_bad_values() {
    if CRDS.is_none() {
        return;
    }
    // CEL rule on the spec: at least four services.
    assert_rejected(
        &broken("/spec/services/3", None),
        ".spec",
        "spec.services in body should have at least 4 items",
    );
    // GCP label values must start with a letter (a bare digit-first cluster id fails).
    assert_rejected(
        &broken(
            "/spec/platform/gcp/resourceLabels/0",
            Some(json!({"key": "cluster-id", "value": "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"})),
        ),
        ".spec.platform.gcp.resourceLabels[0].value",
        "value must be empty or start with a lowercase letter",
    );
    // An empty list fails minItems: optional lists must be omitted.
    assert_rejected(
        &broken("/spec/platform/gcp/resourceLabels", Some(json!([]))),
        ".spec.platform.gcp.resourceLabels",
        "minItems 1",
    );
    // An empty enum value fails: optional enums must be omitted.
    assert_rejected(
        &broken("/spec/platform/gcp/endpointAccess", Some(json!(""))),
        ".spec.platform.gcp.endpointAccess",
        "is not one of",
    );
    // Service account in another project.
    assert_rejected(
        &broken(
            "/spec/platform/gcp/workloadIdentity/serviceAccountsEmails/storage",
            Some(json!("hc-storage@other-project-1.iam.gserviceaccount.com")),
        ),
        ".spec.platform.gcp",
        "storage service account must belong to the same project",
    );
    // Reserved prefix, pattern, length.
    assert_rejected(
        &broken(
            "/spec/platform/gcp/workloadIdentity/poolID",
            Some(json!("gcp-pool")),
        ),
        ".spec.platform.gcp.workloadIdentity.poolID",
        "reserved prefix",
    );
    assert_rejected(
        &broken("/spec/platform/gcp/region", Some(json!("us-central1-a"))),
        ".spec.platform.gcp.region",
        "region must be a valid GCP region",
    );
    assert_rejected(
        &broken(
            "/spec/networking/machineNetwork/0",
            Some(json!({"cidr": "10.0.0.0"})),
        ),
        ".spec.networking.machineNetwork[0].cidr",
        "",
    );
    // A strategy member that does not match the type.
    assert_rejected(
        &broken(
            "/spec/services/0/servicePublishingStrategy",
            Some(json!({"type": "LoadBalancer", "route": {"hostname": "api.example.com"}})),
        ),
        ".spec.services[0].servicePublishingStrategy",
        "only loadBalancer is required when type is LoadBalancer",
    );
    // A misspelt field would be pruned silently by the API server.
    assert_rejected(
        &broken("/spec/issuerUrl", Some(json!("https://x.example.com"))),
        ".spec.issuerUrl",
        "unknown field",
    );
    // Wrong type.
    assert_rejected(
        &broken(
            "/spec/platform/gcp/workloadIdentity/projectNumber",
            Some(json!(123)),
        ),
        ".spec.platform.gcp.workloadIdentity.projectNumber",
        "must be of type",
    );
    // Invalid label value in metadata.
    assert_rejected(
        &broken(
            "/metadata/labels/hyperfleet.io~1cluster-id",
            Some(json!("-bad-")),
        ),
        ".metadata.labels.hyperfleet.io/cluster-id",
        "invalid label value",
    );
}

/// The old seed-004 template, filled in: what this adapter must not send.
#[test]
fn the_seed_template_is_rejected_as_the_fixtures_readme_says() {
    if CRDS.is_none() {
        return;
    }
    let seed = json!({
        "apiVersion": "hypershift.openshift.io/v1beta1",
        "kind": "HostedCluster",
        "metadata": {"name": "my-cluster", "namespace": "clusters"},
        "spec": {
            "platform": {"type": "GCP", "gcp": {
                "project": "my-project-123",
                "region": "us-central1",
                "networkConfig": {"network": {"name": "vpc"}, "privateServiceConnectSubnet": {"name": "psc"}},
                "workloadIdentity": {
                    "projectNumber": "123456789012", "poolID": "pool-1", "providerID": "provider-1",
                    "serviceAccountsEmails": {
                        "controlPlane": "control-plane@my-project-123.iam.gserviceaccount.com",
                        "nodePool": "node-pool-sa@my-project-123.iam.gserviceaccount.com",
                    },
                },
                "endpointAccess": "",
                "resourceLabels": [
                    {"key": "cluster-id", "value": "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"},
                    {"key": "managed-by", "value": "hyperfleet"},
                ],
            }},
            "release": {"image": "quay.io/openshift-release-dev/ocp-release:4.17.0"},
            "networking": {
                "clusterNetwork": [{"cidr": "10.132.0.0/14"}],
                "serviceNetwork": [{"cidr": "172.31.0.0/16"}],
                "machineNetwork": [{"cidr": "10.0.0.0/16"}],
            },
            "pullSecret": {"name": "pull-secret"},
            "dns": {"baseDomain": "example.com", "publicZoneID": ""},
            "infraID": "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
        },
    });
    let outcome = hosted_cluster_outcome(&seed);
    assert_rejected(&outcome, ".spec.services", "Required value");
    assert_rejected(
        &outcome,
        ".spec.platform.gcp.workloadIdentity.serviceAccountsEmails.storage",
        "Required value",
    );
    assert_rejected(
        &outcome,
        ".spec.platform.gcp.endpointAccess",
        "is not one of",
    );
    assert_rejected(
        &outcome,
        ".spec.platform.gcp.resourceLabels[0].value",
        "start with a lowercase letter",
    );
    assert_rejected(&outcome, ".spec.dns.publicZoneID", "minLength");
}

#[test]
fn the_validator_rejects_a_broken_manifest_work() {
    if CRDS.is_none() {
        return;
    }
    let mut work = controlplane::manifest_work(&variants().remove(0).1, "mgmt-1", Some(1));
    work["spec"]["manifestConfigs"][1]["feedbackRules"][0]["type"] = json!("JsonPaths");
    work["spec"]["manifestConfigs"][1]["updateStrategy"] = json!({"type": "Patch"});
    work["spec"]["deleteOption"]["propagationPolicy"] = json!("Background");
    let outcome = validate(&MANIFEST_WORK_SCHEMA, &work);
    assert_rejected(
        &outcome,
        ".spec.manifestConfigs[1].feedbackRules[0].type",
        "is not one of",
    );
    assert_rejected(
        &outcome,
        ".spec.manifestConfigs[1].updateStrategy.type",
        "is not one of",
    );
    assert_rejected(
        &outcome,
        ".spec.deleteOption.propagationPolicy",
        "is not one of",
    );

    // The HostedCluster's feedback values (status, generation, finalizers, deletionTimestamp)
    // are a list map keyed by name: a repeated name or a path-less entry is refused.
    let mut repeated = controlplane::manifest_work(&variants().remove(0).1, "mgmt-1", Some(1));
    repeated["spec"]["manifestConfigs"][1]["feedbackRules"][0]["jsonPaths"][3]["name"] =
        json!("finalizers");
    assert_rejected(
        &validate(&MANIFEST_WORK_SCHEMA, &repeated),
        ".spec.manifestConfigs[1].feedbackRules[0].jsonPaths",
        "duplicate keys",
    );
    let mut pathless = controlplane::manifest_work(&variants().remove(0).1, "mgmt-1", Some(1));
    pathless["spec"]["manifestConfigs"][1]["feedbackRules"][0]["jsonPaths"][1]
        .as_object_mut()
        .unwrap()
        .remove("path");
    assert_rejected(
        &validate(&MANIFEST_WORK_SCHEMA, &pathless),
        ".spec.manifestConfigs[1].feedbackRules[0].jsonPaths[1].path",
        "Required value",
    );

    let mut unnamed = controlplane::manifest_work(&variants().remove(0).1, "mgmt-1", Some(1));
    unnamed["spec"]["manifestConfigs"][0]["resourceIdentifier"]
        .as_object_mut()
        .unwrap()
        .remove("name");
    assert_rejected(
        &validate(&MANIFEST_WORK_SCHEMA, &unnamed),
        ".spec.manifestConfigs[0].resourceIdentifier.name",
        "Required value",
    );
}

mod validated_specs_always_conform {
    //! The link between the two halves: whatever `ClusterSpec::validate` accepts, the CRD
    //! accepts. Strategies produce values around the rules' edges (many invalid), and every
    //! accepted spec's HostedCluster and ManifestWork must pass the CRD.

    use super::*;
    use proptest::prelude::*;
    use proptest::sample::select;

    fn opt(s: impl Strategy<Value = String>) -> impl Strategy<Value = Option<String>> {
        prop::option::weighted(0.7, s)
    }

    /// Values matching `valid` nine times in ten, else `edge` (values the rules should reject).
    fn mostly(valid: &'static str, edge: &'static str) -> impl Strategy<Value = String> {
        prop_oneof![9 => valid, 1 => edge]
    }

    prop_compose! {
        fn raw_spec()(
            project in "[a-z][a-z0-9-]{3,29}[a-z0-9]",
            other_project in prop::bool::weighted(0.05),
            number in mostly("[0-9]{1,25}", "[0-9a]{1,4}|[0-9]{26}"),
            region in mostly("[a-z]{2,12}-[a-z]{3,10}[0-9]{1,2}", "[a-z]{2}-[a-z]{4}[0-9]-[a-z]"),
            network in mostly("[a-z]([-a-z0-9]{0,61}[a-z0-9])?", "[a-z0-9-]{1,4}|[a-z]{64}"),
            subnet in "[a-z][-a-z0-9]{0,62}",
            pool in mostly("[a-z][a-z0-9-]{2,30}[a-z0-9]", "gcp-[a-z0-9-]{0,28}|[a-z]{1,3}"),
            provider in "[a-z][a-z0-9-]{2,30}[a-z0-9]",
            sa_names in prop::collection::vec("[a-z][a-z0-9-]{3,29}[a-z0-9]", 6),
            endpoint in opt(mostly("Private|PublicAndPrivate", "Public|private")),
            version in mostly("[0-9]\\.[0-9]{1,2}\\.[0-9]{1,2}(-rc\\.[0-9]|-multi|-aarch64|-x86_64)?", "[0-9]\\.[0-9]{1,2}(\\.[0-9]-arm64)?"),
            arch in opt(mostly("x86_64|amd64|arm64|aarch64|multi", "s390x|ppc64le")),
            nets in select(vec![
                (None, None, "10.0.0.0/16"),
                (Some("10.128.0.0/14"), Some("172.30.0.0/16"), "10.0.0.0/16"),
                (Some("fd01::/48"), Some("fd02::/112"), "fd03::/64"),
                (None, None, "172.31.0.0/24"),
                (Some("10.0.0.0/8"), None, "10.1.0.0/16"),
                (None, Some("10.0.0.0/16"), "192.168.0.0/24"),
            ]),
            base_domain in "[a-z0-9-]{1,12}(\\.[a-z]{2,6}){0,2}",
            issuer in "https://[a-z0-9.-]{1,30}(/[a-z0-9-]{0,20})?",
            pull in mostly("[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?(\\.[a-z0-9]{1,10}){0,2}", "[a-z0-9.-]{1,10}"),
            ssh in opt(mostly("[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?", "[a-z0-9.-]{1,10}")),
            key in opt(mostly("[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?", "[A-Z_]{1,5}")),
            dns in opt("([a-z0-9-]{1,10}\\.){0,2}[a-z]{2,6}".prop_map(String::from)),
        ) -> serde_json::Map<String, Value> {
            let email_project = if other_project { "other-project-9".to_owned() } else { project.clone() };
            let fields = [
                "control_plane_sa_email", "nodepool_sa_email", "cloud_controller_sa_email",
                "storage_sa_email", "image_registry_sa_email", "network_sa_email",
            ];
            let mut spec = serde_json::Map::new();
            for (field, name) in fields.iter().zip(&sa_names) {
                let project = if *field == "storage_sa_email" { &email_project } else { &project };
                spec.insert((*field).into(), json!(format!("{name}@{project}.iam.gserviceaccount.com")));
            }
            let mut put = |k: &str, v: Option<String>| {
                if let Some(v) = v {
                    spec.insert(k.into(), json!(v));
                }
            };
            put("gcp_project_id", Some(project));
            put("gcp_project_number", Some(number));
            put("gcp_region", Some(region));
            put("vpc_network_name", Some(network));
            put("psc_subnet_name", Some(subnet));
            put("wif_pool_id", Some(pool));
            put("wif_provider_id", Some(provider));
            put("endpoint_access", endpoint);
            put("openshift_version", Some(version));
            put("architecture", arch);
            put("cluster_network_cidr", nets.0.map(String::from));
            put("service_network_cidr", nets.1.map(String::from));
            put("machine_network_cidr", Some(nets.2.into()));
            put("base_domain", Some(base_domain));
            put("issuer_url", Some(issuer));
            put("pull_secret_name", Some(pull));
            put("ssh_key_secret_name", ssh);
            put("service_account_signing_key_secret_name", key);
            put("external_dns_domain", dns);
            spec
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn accepted_specs_produce_objects_the_crds_accept(
            spec in raw_spec(),
            id in "[a-z0-9]([-a-z0-9]{0,58}[a-z0-9])?",
            name in opt("[a-z0-9][-a-z0-9]{1,51}[a-z0-9]".prop_map(String::from)),
        ) {
            if CRDS.is_none() {
                return Ok(());
            }
            if let Ok(valid) = ClusterSpec::validate(&id, name.as_deref(), &spec) {
                let hc = hostedcluster::hosted_cluster(&valid);
                let outcome = hosted_cluster_outcome(&hc);
                prop_assert!(outcome.errors.is_empty(), "{:#?}\n{hc:#}", outcome.errors);
                prop_assert!(outcome.unevaluated.is_empty(), "{:#?}", outcome.unevaluated);
                let work = controlplane::manifest_work(&valid, "mgmt-1", Some(1));
                let outcome = validate(&MANIFEST_WORK_SCHEMA, &work);
                prop_assert!(outcome.errors.is_empty(), "{:#?}", outcome.errors);
            }
        }
    }

    /// Guards against a vacuous property: the strategies do produce accepted specs.
    #[test]
    fn the_strategies_produce_accepted_specs() {
        use proptest::strategy::ValueTree;
        use proptest::test_runner::TestRunner;
        let mut runner = TestRunner::deterministic();
        let accepted = (0..200)
            .filter(|_| {
                let spec = raw_spec().new_tree(&mut runner).unwrap().current();
                ClusterSpec::validate(ID, None, &spec).is_ok()
            })
            .count();
        assert!(
            accepted >= 20,
            "only {accepted} of 200 generated specs were valid"
        );
    }
}

/// HyperFleet's own cluster payloads (`fixtures/hyperfleet/spec-shapes/` in the team folder).
static SPEC_SHAPES: LazyLock<Option<PathBuf>> = LazyLock::new(|| {
    job_report::team_folder::find(
        env!("CARGO_MANIFEST_DIR"),
        "fixtures/hyperfleet/spec-shapes",
    )
});

/// A TypeSpec value literal (`#{ key: "v", list: #[ … ], }`) as JSON: `#{`/`#[` open objects and
/// lists, bare keys are quoted, trailing commas dropped. Strings are copied as they are.
fn typespec_to_json(text: &str) -> Value {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push(c);
                while let Some(c) = chars.next() {
                    out.push(c);
                    if c == '\\' {
                        out.extend(chars.next());
                    } else if c == '"' {
                        break;
                    }
                }
            }
            '#' if matches!(chars.peek(), Some('{' | '[')) => {}
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut word = String::from(c);
                while let Some(&n) = chars
                    .peek()
                    .filter(|n| n.is_ascii_alphanumeric() || **n == '_')
                {
                    word.push(n);
                    chars.next();
                }
                out.push('"');
                out.push_str(&word);
                out.push('"');
            }
            c => out.push(c),
        }
    }
    let no_trailing = regex::Regex::new(r",(\s*[}\]])").unwrap();
    let json = no_trailing.replace_all(&out, "$1");
    serde_json::from_str(&json)
        .unwrap_or_else(|e| panic!("not a TypeSpec value literal: {e}\n{json}"))
}

/// The first `<name>: #{ … }` literal in a TypeSpec file, as JSON.
fn typespec_object(file: &str, name: &str) -> Value {
    let start = file
        .find(&format!("{name}: #{{"))
        .unwrap_or_else(|| panic!("no {name} literal"))
        + name.len()
        + 2;
    let mut depth = 0;
    let mut in_string = false;
    for (i, c) in file[start..].char_indices() {
        match c {
            '"' => in_string = !in_string,
            '{' | '[' if !in_string => depth += 1,
            '}' | ']' if !in_string => {
                depth -= 1;
                if depth == 0 {
                    return typespec_to_json(&file[start..=start + i]);
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced {name} literal")
}

/// What HyperFleet's model lacks and this adapter needs (docs/controlplane.md, "The cluster spec"):
/// the Workload Identity extension keys (six service accounts in the spec's project), the issuer
/// and the pull Secret. The e2e suite's provider-neutral `platform.type "template"` becomes `gcp`,
/// its keys moved under `platform.gcp`.
fn adapted_to_gcp(spec: &Value) -> Value {
    let mut spec = spec.clone();
    if spec["platform"]["type"] == "template" {
        let template = spec["platform"]
            .as_object_mut()
            .unwrap()
            .remove("template")
            .unwrap();
        spec["platform"] = json!({"type": "gcp", "gcp": template});
    }
    let project = spec["platform"]["gcp"]["projectID"]
        .as_str()
        .unwrap()
        .to_owned();
    let email = |name: &str| json!(format!("{name}@{project}.iam.gserviceaccount.com"));
    spec["platform"]["gcp"]["workloadIdentity"] = json!({
        "projectNumber": "123456789012",
        "poolID": "hyperfleet-pool",
        "providerID": "hyperfleet-oidc",
        "serviceAccountsEmails": {
            "controlPlane": email("hc-control-plane"),
            "nodePool": email("hc-nodepool"),
            "cloudController": email("hc-cloud-controller"),
            "storage": email("hc-storage"),
            "imageRegistry": email("hc-image-registry"),
            "network": email("hc-network"),
        },
    });
    spec["issuerURL"] = json!(
        "https://storage.googleapis.com/hyperfleet-oidc-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"
    );
    spec["pullSecret"] = json!({"name": "hyperfleet-pull-secret"});
    spec
}

#[test]
fn hyperfleets_own_cluster_payloads_adapted_to_gcp_are_accepted_and_admitted_by_the_crd() {
    let (Some(_), Some(shapes)) = (CRDS.as_ref(), SPEC_SHAPES.as_ref()) else {
        return;
    };
    let read = |rel: &str| std::fs::read_to_string(shapes.join(rel)).unwrap();
    let json = |rel: &str| serde_json::from_str::<Value>(&read(rel)).unwrap();
    let request = json("e2e-payloads/cluster-request.json");
    let patch = json("e2e-payloads/cluster-patch.json");
    let example = typespec_object(
        &read("api-spec-gcp-models/cluster/example_cluster.tsp"),
        "spec",
    );
    let post = typespec_object(
        &read("api-spec-gcp-models/cluster/example_post.tsp"),
        "spec",
    );
    let patch_tsp = typespec_object(
        &read("api-spec-gcp-models/cluster/example_patch.tsp"),
        "spec",
    );
    assert_eq!(example["platform"]["gcp"]["projectID"], "project-123");
    // (what, id, name, spec): the e2e suite's name template filled in; the API's example ids.
    let cases = [
        (
            "e2e cluster-request.json",
            ID,
            "hp-cluster-k3x9a",
            &request["spec"],
        ),
        (
            "e2e cluster-patch.json",
            ID,
            "hp-cluster-k3x9a",
            &patch["spec"],
        ),
        (
            "example_cluster.tsp",
            "019466a0-8f8e-7abc-9def-0123456789ab",
            "cluster-123",
            &example,
        ),
        (
            "example_post.tsp",
            "019466a0-8f8e-7abc-9def-0123456789ab",
            "cluster-123",
            &post,
        ),
        (
            "example_patch.tsp",
            "019466a0-8f8e-7abc-9def-0123456789ab",
            "cluster-123",
            &patch_tsp,
        ),
        (
            "e2e cluster-request.json, longest name",
            ID,
            LONGEST_NAME,
            &request["spec"],
        ),
    ];
    for (what, id, name, spec) in cases {
        // As HyperFleet sends it, the adapter names what it lacks and where to set it.
        let raw = ClusterSpec::validate(id, Some(name), spec.as_object().unwrap()).unwrap_err();
        assert!(
            raw.iter().all(|v| v.field.starts_with("spec.")),
            "{what}: {raw:?}"
        );
        let adapted = adapted_to_gcp(spec);
        let valid = ClusterSpec::validate(id, Some(name), adapted.as_object().unwrap())
            .unwrap_or_else(|v| panic!("{what}: refused: {v:#?}"));
        // Each HyperFleet field reached the HostedCluster.
        let hc = hostedcluster::hosted_cluster(&valid);
        let gcp = &adapted["platform"]["gcp"];
        assert_eq!(
            hc["spec"]["platform"]["gcp"]["project"], gcp["projectID"],
            "{what}"
        );
        assert_eq!(
            hc["spec"]["platform"]["gcp"]["region"], gcp["region"],
            "{what}"
        );
        assert_eq!(
            hc["spec"]["platform"]["gcp"]["networkConfig"]["network"]["name"], gcp["network"],
            "{what}"
        );
        assert_eq!(
            hc["spec"]["platform"]["gcp"]["networkConfig"]["privateServiceConnectSubnet"]["name"],
            gcp["subnet"],
            "{what}"
        );
        assert_eq!(
            hc["spec"]["release"]["image"], adapted["release"]["image"],
            "{what}"
        );
        assert_eq!(
            hc["spec"]["networking"]["clusterNetwork"], adapted["networking"]["clusterNetwork"],
            "{what}"
        );
        assert_eq!(
            hc["spec"]["networking"]["serviceNetwork"][0]["cidr"],
            adapted["networking"]["serviceNetwork"][0],
            "{what}"
        );
        assert_eq!(
            hc["spec"]["dns"]["baseDomain"], adapted["dns"]["baseDomain"],
            "{what}"
        );
        assert_conforms(what, &hosted_cluster_outcome(&hc));
        let work = controlplane::manifest_work(&valid, "us-east-mgmt-01", Some(1));
        assert_conforms(what, &validate(&MANIFEST_WORK_SCHEMA, &work));
    }
}

#[test]
fn the_typespec_reader_reads_literals_with_nesting_and_trailing_commas() {
    let v = typespec_object(
        r#"const x: T = #{ spec: #{ a: "x:y, #{z}", list: #[ #{ cidr: "10.0.0.0/16", n: 24 } ], }, };"#,
        "spec",
    );
    assert_eq!(
        v,
        json!({"a": "x:y, #{z}", "list": [{"cidr": "10.0.0.0/16", "n": 24}]})
    );
}
