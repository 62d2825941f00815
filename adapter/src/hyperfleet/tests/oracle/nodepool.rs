//! The NodePool spec's oracle: `fuzz/corpus/nodepool_spec/`, the fixtures, and mutations of
//! specs of both shapes, each that validates also checked against a few control planes.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::{Edit, against_base, check_snapshot, corpus, edits_of, indent, pointers, violations};
use crate::hyperfleet::nodepool::fixture::{self, CLUSTER_ID, ID, NAME};
use crate::hyperfleet::nodepool::{ControlPlane, NodePoolInput, NodePoolSpec};
use crate::hyperfleet::spec::SpecViolation;

type Outcome = Result<NodePoolSpec, Vec<SpecViolation>>;

const RELEASE: &str = "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64";

/// The HostedClusters a validated NodePool is checked against.
fn control_planes() -> Vec<ControlPlane> {
    let cp = |name: &str,
              platform: &str,
              region: Option<&str>,
              psc: Option<&str>,
              release: Option<&str>,
              version: &str| ControlPlane {
        name: name.into(),
        platform: platform.into(),
        region: region.map(Into::into),
        psc_subnet: psc.map(Into::into),
        release_image: release.map(Into::into),
        version: version.into(),
    };
    vec![
        cp(
            "prod-eu-1",
            "GCP",
            Some("europe-west2"),
            Some("hcp-psc-subnet"),
            Some(RELEASE),
            "4.17.0",
        ),
        cp("", "GCP", None, None, None, ""),
        cp("other-cluster", "None", None, None, Some(RELEASE), "4.20.1"),
        cp(
            "prod-eu-1",
            "GCP",
            Some("us-central1"),
            Some("psc"),
            Some(RELEASE),
            "4.21.0",
        ),
        cp(
            "prod-eu-1",
            "GCP",
            Some("europe-west2"),
            None,
            None,
            "4.16.2",
        ),
        cp(
            "prod-eu-1",
            "AWS",
            Some("europe-west2"),
            Some("psc"),
            Some(RELEASE),
            "5.0.0",
        ),
    ]
}

/// `check_against` every control plane.
fn against_all(spec: &NodePoolSpec) -> String {
    let mut out = String::new();
    for (i, cp) in control_planes().iter().enumerate() {
        let v = spec.check_against(cp);
        if v.is_empty() {
            let _ = writeln!(out, " against #{i}: fits");
        } else {
            let _ = write!(out, " against #{i}:\n{}", violations(&v));
        }
    }
    out
}

/// The outcome; a validated spec against `base` (its `{:#?}` and its [`against_all`]) when given.
fn render(outcome: &Outcome, base: Option<(&str, &str)>) -> String {
    match outcome {
        Ok(spec) => {
            let got = format!("{spec:#?}");
            let against = against_all(spec);
            match base {
                Some((debug, base_against)) => {
                    let against = if against == base_against {
                        " against: as the base\n".to_owned()
                    } else {
                        against
                    };
                    format!("ok\n{}{against}", against_base(&got, debug))
                }
                None => format!("ok\n{}\n{against}", indent(&got)),
            }
        }
        Err(v) => format!("refused\n{}", violations(v)),
    }
}

fn render_file(out: &mut String, name: &str, text: &str) {
    let _ = writeln!(out, "## {name}");
    let input = match NodePoolInput::from_json(text) {
        Ok(input) => input,
        Err(e) => {
            let _ = writeln!(out, "input error: {e}");
            return;
        }
    };
    let _ = writeln!(
        out,
        "input: id {:?} name {:?} generation {:?} cluster {:?} deleted_time {:?}",
        input.id, input.name, input.generation, input.cluster_id, input.deleted_time
    );
    let given = |v: &Option<String>, default: &'static str| {
        v.clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| default.to_owned())
    };
    let outcome = NodePoolSpec::validate(
        &given(&input.id, ID),
        &given(&input.cluster_id, CLUSTER_ID),
        input.name.as_deref(),
        &input.spec,
    );
    out.push_str(&render(&outcome, None));
}

#[test]
fn nodepool_corpus_matches_the_oracle() {
    let mut out = String::new();
    for (name, text) in corpus("fuzz/corpus/nodepool_spec") {
        render_file(
            &mut out,
            &format!("fuzz/corpus/nodepool_spec/{name}"),
            &text,
        );
    }
    for (name, text) in corpus("adapter/tests/fixtures") {
        if name.starts_with("nodepool") {
            render_file(&mut out, &format!("adapter/tests/fixtures/{name}"), &text);
        }
    }
    check_snapshot("nodepool-corpus.txt", &out);
}

const HYPERFLEET_POINTERS: &[&str] = &[
    "/clusterName",
    "/nodeCount",
    "/replicas",
    "/platform",
    "/platform/type",
    "/platform/gcp",
    "/platform/gcp/machineType",
    "/platform/gcp/instanceType",
    "/platform/gcp/diskSize",
    "/platform/gcp/diskType",
    "/platform/gcp/zones",
    "/platform/gcp/preemptible",
    "/platform/gcp/accelerators",
    "/platform/gcp/labels",
    "/platform/gcp/taints",
    "/platform/gcp/serviceAccount",
    "/platform/gcp/serviceAccount/email",
    "/platform/gcp/provisioningModel",
    "/platform/gcp/networkTags",
    "/platform/gcp/resourceLabels",
    "/platform/gcp/subnet",
    "/platform/gcp/image",
    "/autoscaling",
    "/autoscaling/enabled",
    "/autoscaling/minNodes",
    "/autoscaling/maxNodes",
    "/autoscaling/targetCPUUtilization",
    "/autoscaling/targetMemoryUtilization",
    "/autoscaling/scaleDownDelay",
    "/autoscaling/scaleUpDelay",
    "/release",
    "/release/image",
    "/arch",
    "/management",
    "/management/upgradeType",
    "/management/autoRepair",
];

const FLAT_POINTERS: &[&str] = &[
    "/replicas",
    "/platform",
    "/platform/type",
    "/platform/gcp",
    "/platform/gcp/machine_type",
    "/platform/gcp/zone",
    "/platform/gcp/boot_disk_size_gb",
    "/platform/gcp/boot_disk_type",
    "/platform/gcp/subnet",
    "/platform/gcp/image",
    "/platform/gcp/service_account_email",
    "/platform/gcp/provisioning_model",
    "/platform/gcp/network_tags",
    "/platform/gcp/resource_labels",
    "/autoscaling",
    "/autoscaling/min",
    "/autoscaling/max",
    "/management",
    "/management/upgrade_type",
    "/management/auto_repair",
    "/release",
    "/release/image",
    "/arch",
];

fn taint(key: &str, value: Option<&str>, effect: &str) -> Value {
    let mut t = json!({"key": key, "effect": effect});
    if let Some(v) = value {
        t["value"] = json!(v);
    }
    t
}

fn labels(n: usize) -> Value {
    Value::Object(
        (0..n)
            .map(|i| (format!("k{i:02}"), json!(format!("v{i}"))))
            .collect(),
    )
}

/// Values that reach each rule of the field at `pointer`.
fn specific(pointer: &str) -> Vec<Value> {
    let key = pointer.rsplit('/').next().unwrap_or(pointer);
    let strings = |v: &[&str]| v.iter().map(|s| Value::from(*s)).collect::<Vec<_>>();
    let a = |n: usize| "a".repeat(n);
    match key {
        "type" => strings(&["gcp", "none", "GCP", "None", "NONE", "aws"]),
        "machineType" | "machine_type" | "instanceType" => strings(&[
            "n2-standard-8",
            "n1-standard-4",
            "N2",
            "n2--x",
            &a(255),
            &a(256),
        ]),
        "zones" => vec![
            json!(["europe-west2-a"]),
            json!(["europe-west2-b"]),
            json!(["us-central1-a"]),
            json!(["a", "b"]),
            json!(["europe-west2-a", "europe-west2-b", "europe-west2-c"]),
            json!([1]),
            json!(["europe-west2"]),
            json!(["Europe-west2-a"]),
            json!([null]),
            json!([""]),
        ],
        "zone" => strings(&[
            "europe-west2-a",
            "us-central1-a",
            "europe-west2",
            "a-b",
            &a(64),
        ]),
        "diskSize" | "boot_disk_size_gb" => vec![
            json!(20),
            json!(19),
            json!(65536),
            json!(65537),
            json!(128.0),
            json!("128"),
            json!(1e10),
            json!(i64::MAX),
            json!(u64::MAX),
        ],
        "diskType" | "boot_disk_type" => {
            strings(&["pd-standard", "pd-ssd", "pd-balanced", "ssd", "PD-SSD"])
        }
        "subnet" => strings(&["my-subnet", "-bad", "A", &a(63), &a(64)]),
        "image" if pointer.starts_with("/platform") => strings(&[
            "projects/rhcos/global/images/family/rhcos",
            "has space",
            &"x".repeat(2048),
            &"x".repeat(2049),
        ]),
        "image" => strings(&[
            RELEASE,
            "quay.io/openshift-release-dev/ocp-release:4.21.0-x86_64",
            "quay.io/openshift-release-dev/ocp-release:4.16.0-x86_64",
            "quay.io/openshift-release-dev/ocp-release:4.13.9",
            "quay.io/openshift-release-dev/ocp-release:4.14.0",
            "quay.io/openshift-release-dev/ocp-release:5.0.0",
            "quay.io/openshift-release-dev/ocp-release:3.11.0",
            "quay.io/openshift-release-dev/ocp-release@sha256:abc",
            "quay.io/openshift-release-dev/ocp-release",
            "quay.io/x:4.17",
            "has space:1",
            &format!("q{}", "x".repeat(252)),
            &format!("q{}", "x".repeat(253)),
        ]),
        "serviceAccount" => vec![
            json!({"email": "workers@my-project-123.iam.gserviceaccount.com"}),
            json!({"email": "me@example.com"}),
            json!({"email": 1}),
            json!({"other": "x"}),
        ],
        "email" | "service_account_email" => strings(&[
            "workers@my-project-123.iam.gserviceaccount.com",
            "me@example.com",
            "Workers@my-project-123.iam.gserviceaccount.com",
        ]),
        "provisioningModel" | "provisioning_model" => {
            strings(&["Standard", "Spot", "Preemptible", "spot"])
        }
        "networkTags" | "network_tags" => vec![
            json!(["a"]),
            json!(["a", "b"]),
            json!(["a", "a"]),
            json!(["a", "Bad", "a"]),
            json!(["A"]),
            json!([1, "a"]),
            json!(["a-"]),
            json!([""]),
            json!((0..64).map(|i| format!("t{i}")).collect::<Vec<_>>()),
            json!((0..65).map(|i| format!("t{i}")).collect::<Vec<_>>()),
            json!([a(63)]),
            json!([a(64)]),
        ],
        "resourceLabels" | "resource_labels" => vec![
            json!({"k": "v"}),
            json!({"goog-x": "v"}),
            json!({"k": ""}),
            json!({"k": "V"}),
            json!({"k": 1}),
            json!({"K": "v"}),
            json!({"": "v"}),
            json!({"googkey": "v", "k": "Upper"}),
            json!({"Bad": 1, "goog": 2}),
            json!({ a(64): "v" }),
            json!({ "k": a(64) }),
            labels(60),
            labels(61),
        ],
        "labels" => vec![
            json!({"team": "x"}),
            json!({"bad key!": "v"}),
            json!({"k": "bad value!"}),
            json!({"k": 1}),
            json!({"example.com/k": "v"}),
            json!({"/k": "v"}),
            json!({"Example.com/k": "v"}),
            json!({"k": ""}),
            json!({ a(64): "v" }),
            json!({ "k": a(64) }),
            json!({ format!("{}/k", a(254)): "v" }),
            json!({"b": "2", "a": "1"}),
            json!({"bad key!": 5}),
        ],
        "taints" => vec![
            json!([taint("k", Some("v"), "NoSchedule")]),
            json!([
                taint("k", None, "NoExecute"),
                taint("example.com/k", Some(""), "PreferNoSchedule")
            ]),
            json!([{"key": "k"}]),
            json!([{"effect": "NoSchedule"}]),
            json!([taint("", None, "NoSchedule")]),
            json!([{"key": "k", "value": 1, "effect": "x"}]),
            json!([{"key": 1, "value": "Bad Value!", "effect": 2}]),
            json!([taint("Bad Key!", Some("v"), "NoSchedule")]),
            json!([taint("k", Some(&a(253)), "NoSchedule")]),
            json!([taint("k", Some(&a(254)), "NoSchedule")]),
            json!([taint(&a(254), None, "NoSchedule")]),
            json!([{"key": "k", "value": null, "effect": null}]),
            json!([1, taint("k", None, "Bad"), "x"]),
            json!(
                (0..50)
                    .map(|i| taint(&format!("k{i}"), None, "NoSchedule"))
                    .collect::<Vec<_>>()
            ),
            json!(
                (0..51)
                    .map(|i| taint(&format!("k{i}"), None, "NoSchedule"))
                    .collect::<Vec<_>>()
            ),
        ],
        "accelerators" => vec![
            json!([{"type": "nvidia-tesla-t4", "count": 1}]),
            json!([{}, {}]),
            json!("x"),
        ],
        "nodeCount" | "replicas" => vec![
            json!(0),
            json!(3),
            json!(5),
            json!(2147483647),
            json!(2147483648_i64),
            json!("3"),
            json!(1e3),
        ],
        "enabled" | "autoRepair" | "auto_repair" | "preemptible" => vec![json!("yes")],
        "minNodes" | "maxNodes" | "min" | "max" => vec![
            json!(1),
            json!(2),
            json!(5),
            json!(2147483647),
            json!(2147483648_i64),
        ],
        "targetCPUUtilization" | "targetMemoryUtilization" | "scaleDownDelay" | "scaleUpDelay" => {
            vec![json!(50), json!("1m")]
        }
        "arch" => strings(&["amd64", "arm64", "x86_64", "AMD64"]),
        "upgradeType" | "upgrade_type" => strings(&["Replace", "InPlace", "Rolling", "replace"]),
        "clusterName" => strings(&["prod-eu-1", "other-cluster", "Bad_Name", &a(253), &a(254)]),
        _ => Vec::new(),
    }
}

/// A labelled case: edits of a base spec, validated as NodePool `id` of cluster `cluster` named
/// `name`.
struct Case {
    label: String,
    edits: Vec<Edit>,
    id: String,
    cluster: String,
    name: Option<String>,
}

impl Case {
    fn of(edits: Vec<Edit>) -> Self {
        Case {
            label: edits.iter().map(Edit::label).collect::<Vec<_>>().join("; "),
            edits,
            id: ID.into(),
            cluster: CLUSTER_ID.into(),
            name: Some(NAME.into()),
        }
    }
}

fn set_or_remove(pointer: &str, value: Option<Value>) -> Edit {
    match value {
        Some(v) => Edit::set(pointer, v),
        None => Edit::remove(pointer),
    }
}

fn single_field_cases(base: &Map<String, Value>, own: &[&str], other: &[&str]) -> Vec<Case> {
    let mut found = Vec::new();
    pointers(&Value::Object(base.clone()), "", &mut found);
    let mut seen: Vec<&str> = Vec::new();
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
        for value in [json!(null), json!("x"), json!(1), json!({})] {
            cases.push(Case::of(vec![Edit::set(pointer, value)]));
        }
    }
    cases
}

fn identity_cases() -> Vec<Case> {
    let a = |n: usize| "a".repeat(n);
    let mut cases = Vec::new();
    for id in [ID.to_owned(), String::new(), "Bad".into(), a(63), a(64)] {
        for cluster in [
            CLUSTER_ID.to_owned(),
            String::new(),
            a(47),
            a(48),
            "Bad".into(),
        ] {
            for name in [
                None,
                Some(String::new()),
                Some("ab".into()),
                Some("abc".into()),
                Some(a(15)),
                Some(a(16)),
                Some("Bad_Name".into()),
            ] {
                let mut case = Case::of(Vec::new());
                case.label = format!("id {id:?} cluster {cluster:?} name {name:?}");
                case.id = id.clone();
                case.cluster = cluster.clone();
                case.name = name;
                cases.push(case);
            }
        }
    }
    cases
}

/// Platform type against `platform.gcp`, in either shape.
fn platform_cases(gcp: &Value) -> Vec<Case> {
    let mut cases = Vec::new();
    for t in [
        None,
        Some(json!("gcp")),
        Some(json!("GCP")),
        Some(json!("none")),
        Some(json!("None")),
        Some(json!("aws")),
        Some(json!(1)),
        Some(json!("")),
    ] {
        for g in [
            None,
            Some(json!(null)),
            Some(json!({})),
            Some(json!("x")),
            Some(gcp.clone()),
        ] {
            cases.push(Case::of(vec![
                set_or_remove("/platform/type", t.clone()),
                set_or_remove("/platform/gcp", g),
            ]));
        }
    }
    for upgrade in [None, Some(json!("Replace")), Some(json!("Bad"))] {
        for t in [json!("none"), json!("bad")] {
            cases.push(Case::of(vec![
                Edit::set("/platform", json!({ "type": t })),
                set_or_remove("/management/upgradeType", upgrade.clone()),
                set_or_remove("/management/upgrade_type", upgrade.clone()),
            ]));
        }
    }
    cases
}

/// HyperFleet's size, synonyms and provisioning.
fn hyperfleet_combinations() -> Vec<Case> {
    let mut cases = Vec::new();
    let opt = |v: Option<Value>| v;
    for node_count in [
        None,
        Some(json!(0)),
        Some(json!(3)),
        Some(json!(10)),
        Some(json!(-1)),
        Some(json!("x")),
    ] {
        for replicas in [None, Some(json!(3)), Some(json!(5))] {
            for enabled in [
                None,
                Some(json!(true)),
                Some(json!(false)),
                Some(json!("x")),
            ] {
                for min in [None, Some(json!(0)), Some(json!(1)), Some(json!(4))] {
                    for max in [None, Some(json!(2)), Some(json!(5))] {
                        cases.push(Case::of(vec![
                            set_or_remove("/nodeCount", opt(node_count.clone())),
                            set_or_remove("/replicas", replicas.clone()),
                            Edit::remove("/autoscaling"),
                            set_or_remove("/autoscaling/enabled", enabled.clone()),
                            set_or_remove("/autoscaling/minNodes", min.clone()),
                            set_or_remove("/autoscaling/maxNodes", max.clone()),
                        ]));
                    }
                }
            }
        }
    }
    for autoscaling in [
        json!(null),
        json!("x"),
        json!([]),
        json!({"enabled": true, "minNodes": 1, "maxNodes": 2, "scaleUpDelay": "1m", "targetCPUUtilization": 5}),
    ] {
        cases.push(Case::of(vec![
            Edit::set("/autoscaling", autoscaling),
            Edit::set("/nodeCount", json!(-5)),
        ]));
    }
    for machine in [None, Some(json!("n2-standard-8")), Some(json!("BAD"))] {
        for instance in [
            None,
            Some(json!("n2-standard-8")),
            Some(json!("n1-standard-4")),
            Some(json!("BAD")),
        ] {
            cases.push(Case::of(vec![
                set_or_remove("/platform/gcp/machineType", machine.clone()),
                set_or_remove("/platform/gcp/instanceType", instance),
            ]));
        }
    }
    for preemptible in [
        None,
        Some(json!(true)),
        Some(json!(false)),
        Some(json!("x")),
    ] {
        for model in [
            None,
            Some(json!("Standard")),
            Some(json!("Spot")),
            Some(json!("Preemptible")),
            Some(json!("bad")),
        ] {
            cases.push(Case::of(vec![
                set_or_remove("/platform/gcp/preemptible", preemptible.clone()),
                set_or_remove("/platform/gcp/provisioningModel", model),
            ]));
        }
    }
    cases.push(Case::of(vec![
        Edit::set("/platform/gcp/serviceAccount", json!("x")),
        Edit::set("/platform/gcp/zones", json!("europe-west2-a")),
        Edit::set("/platform/gcp/labels", json!([])),
        Edit::set("/platform/gcp/taints", json!({})),
        Edit::set("/platform/gcp/accelerators", json!([1])),
        Edit::set("/platform/gcp/networkTags", json!({})),
        Edit::set("/platform/gcp/resourceLabels", json!([])),
        Edit::set("/management/autoRepair", json!(1)),
        Edit::set("/arch", json!(1)),
    ]));
    cases.extend(platform_cases(&json!({"machineType": "n2-standard-8"})));
    cases
}

/// The flat shape's size.
fn flat_combinations() -> Vec<Case> {
    let mut cases = Vec::new();
    for replicas in [
        None,
        Some(json!(0)),
        Some(json!(3)),
        Some(json!(-1)),
        Some(json!("3")),
    ] {
        for autoscaling in [
            None,
            Some(json!(null)),
            Some(json!("x")),
            Some(json!({})),
            Some(json!({"min": 1})),
            Some(json!({"max": 3})),
            Some(json!({"min": 1, "max": 3})),
            Some(json!({"min": 0, "max": 3})),
            Some(json!({"min": 3, "max": 1})),
            Some(json!({"min": "1", "max": 2})),
        ] {
            cases.push(Case::of(vec![
                set_or_remove("/replicas", replicas.clone()),
                set_or_remove("/autoscaling", autoscaling),
            ]));
        }
    }
    cases.extend(platform_cases(&json!({"machine_type": "n2-standard-8"})));
    cases
}

fn run_cases(out: &mut String, title: &str, base: &Map<String, Value>, cases: Vec<Case>) {
    let base_outcome = NodePoolSpec::validate(ID, CLUSTER_ID, Some(NAME), base);
    let base_debug = base_outcome
        .as_ref()
        .map(|s| (format!("{s:#?}"), against_all(s)))
        .ok();
    let _ = write!(out, "# base {title}: {}", render(&base_outcome, None));
    for case in cases {
        let mut spec = base.clone();
        for edit in &case.edits {
            edit.apply(&mut spec);
        }
        let outcome = NodePoolSpec::validate(&case.id, &case.cluster, case.name.as_deref(), &spec);
        let _ = write!(
            out,
            "## {title}: {}\n{}",
            case.label,
            render(
                &outcome,
                base_debug.as_ref().map(|(d, a)| (d.as_str(), a.as_str()))
            )
        );
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[test]
fn nodepool_mutations_match_the_oracle() {
    let mut out = String::new();

    let flat = fixture::raw();
    let mut cases = single_field_cases(&flat, FLAT_POINTERS, HYPERFLEET_POINTERS);
    cases.extend(flat_combinations());
    cases.extend(identity_cases());
    run_cases(&mut out, "flat", &flat, cases);

    let mut flat_autoscaling = fixture::raw();
    flat_autoscaling.remove("replicas");
    flat_autoscaling.insert("autoscaling".into(), json!({"min": 1, "max": 3}));
    let cases = single_field_cases(&flat_autoscaling, FLAT_POINTERS, &[]);
    run_cases(&mut out, "flat autoscaling", &flat_autoscaling, cases);

    let hyperfleet = fixture::hyperfleet_raw();
    let mut cases = single_field_cases(&hyperfleet, HYPERFLEET_POINTERS, FLAT_POINTERS);
    cases.extend(hyperfleet_combinations());
    cases.extend(identity_cases());
    run_cases(&mut out, "hyperfleet", &hyperfleet, cases);

    let mut autoscaling = fixture::hyperfleet_raw();
    autoscaling.remove("nodeCount");
    autoscaling.insert(
        "autoscaling".into(),
        json!({"enabled": true, "minNodes": 1, "maxNodes": 5}),
    );
    let cases = single_field_cases(&autoscaling, HYPERFLEET_POINTERS, &[]);
    run_cases(&mut out, "hyperfleet autoscaling", &autoscaling, cases);

    let minimal = object(json!({
        "platform": {"type": "gcp", "gcp": {}},
        "nodeCount": 1,
    }));
    let cases = single_field_cases(&minimal, HYPERFLEET_POINTERS, &[]);
    run_cases(&mut out, "minimal", &minimal, cases);

    let none = object(json!({"platform": {"type": "none"}, "replicas": 1}));
    let mut cases = single_field_cases(&none, HYPERFLEET_POINTERS, &[]);
    cases.extend(platform_cases(&json!({})));
    run_cases(&mut out, "none", &none, cases);

    let empty = Map::new();
    run_cases(&mut out, "empty", &empty, vec![Case::of(Vec::new())]);
    check_snapshot("nodepool-mutations.txt", &out);
}
