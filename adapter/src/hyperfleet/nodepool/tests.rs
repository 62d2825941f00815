//! The NodePool spec's validation, rule by rule (the oracle, `hyperfleet/tests/oracle`, pins
//! every message).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::fixture::{CLUSTER_ID, ID, NAME, raw};
use super::*;

fn violations(edit: impl FnOnce(&mut Map<String, Value>)) -> Vec<SpecViolation> {
    let mut spec = raw();
    edit(&mut spec);
    NodePoolSpec::validate(ID, CLUSTER_ID, Some(NAME), &spec).unwrap_err()
}

fn fields(v: &[SpecViolation]) -> Vec<&str> {
    v.iter().map(|v| v.field).collect()
}

fn set(spec: &mut Map<String, Value>, path: &str, value: Value) {
    let mut parts: Vec<&str> = path.split('.').collect();
    let last = parts.pop().unwrap();
    let mut object = spec;
    for part in parts {
        object = object
            .entry(part)
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .unwrap();
    }
    object.insert(last.to_owned(), value);
}

#[test]
fn the_example_shape_validates() {
    let spec = fixture::spec();
    assert_eq!(spec.platform, PlatformType::Gcp);
    assert_eq!(spec.scaling, Scaling::Replicas(3));
    assert_eq!(spec.upgrade_type, UpgradeType::Replace);
    assert_eq!(spec.arch, "amd64");
    let gcp = spec.gcp.unwrap();
    assert_eq!(gcp.machine_type, "n2-standard-8");
    assert_eq!(gcp.boot_disk_size_gb, Some(128));
    assert_eq!(gcp.subnet, None);
}

#[test]
fn the_upstream_example_nodepool_validates() {
    let Some(dir) =
        job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/hyperfleet")
    else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("example-nodepool.json")).unwrap();
    let input = NodePoolInput::from_json(&text).unwrap();
    assert_eq!(
        input.cluster_id.as_deref(),
        Some("01a01e72-f3c3-73a1-9b7c-2e9d4f6a8053")
    );
    assert_eq!(input.generation, Some(1));
    let spec = NodePoolSpec::validate(
        input.id.as_deref().unwrap(),
        input.cluster_id.as_deref().unwrap(),
        input.name.as_deref(),
        &input.spec,
    )
    .unwrap();
    assert_eq!(spec.name, "workers-a");
    assert_eq!(spec.scaling, Scaling::Replicas(3));
}

#[test]
fn none_platform_defaults_to_in_place_and_refuses_gcp_fields() {
    let mut spec = raw();
    set(&mut spec, "platform", json!({"type": "none"}));
    let ok = NodePoolSpec::validate(ID, CLUSTER_ID, Some(NAME), &spec).unwrap();
    assert_eq!(ok.platform, PlatformType::None);
    assert_eq!(ok.upgrade_type, UpgradeType::InPlace);
    assert!(ok.gcp.is_none());
    let v = violations(|s| set(s, "platform.type", json!("None")));
    assert_eq!(fields(&v), ["platform.gcp"]);
}

#[test]
fn every_bad_field_is_named_at_once() {
    let v = violations(|s| {
        set(s, "platform.gcp.machine_type", json!("N2_STANDARD"));
        set(s, "platform.gcp.zone", json!("europe-west2"));
        set(s, "platform.gcp.boot_disk_size_gb", json!(10));
        set(s, "platform.gcp.boot_disk_type", json!("ssd"));
        set(s, "platform.gcp.subnet", json!("-bad"));
        set(s, "platform.gcp.provisioning_model", json!("spot"));
        set(
            s,
            "platform.gcp.service_account_email",
            json!("me@example.com"),
        );
        set(s, "platform.gcp.network_tags", json!(["ok", "Bad", "ok"]));
        set(
            s,
            "platform.gcp.resource_labels",
            json!({"googkey": "v", "k": "Upper"}),
        );
        set(s, "release.image", json!("has space:1"));
        set(s, "arch", json!("s390x"));
        set(s, "management.upgrade_type", json!("Rolling"));
        set(s, "management.auto_repair", json!("yes"));
    });
    assert_eq!(
        fields(&v),
        [
            "platform.gcp.machine_type",
            "platform.gcp.zone",
            "platform.gcp.subnet",
            "platform.gcp.boot_disk_size_gb",
            "platform.gcp.boot_disk_type",
            "platform.gcp.service_account_email",
            "platform.gcp.provisioning_model",
            "platform.gcp.network_tags",
            "platform.gcp.network_tags",
            "platform.gcp.resource_labels",
            "platform.gcp.resource_labels",
            "release.image",
            "arch",
            "management.upgrade_type",
            "management.auto_repair",
        ]
    );
    assert!(v[1].problem.contains("region-zone"), "{}", v[1]);
}

#[test]
fn replicas_xor_autoscaling_with_min_at_least_one() {
    let both = violations(|s| set(s, "autoscaling", json!({"min": 1, "max": 3})));
    assert_eq!(fields(&both), ["autoscaling"]);
    let neither = violations(|s| {
        s.remove("replicas");
    });
    assert_eq!(fields(&neither), ["replicas"]);
    let zero_min = violations(|s| {
        s.remove("replicas");
        set(s, "autoscaling", json!({"min": 0, "max": 3}));
    });
    assert_eq!(fields(&zero_min), ["autoscaling.min"]);
    let inverted = violations(|s| {
        s.remove("replicas");
        set(s, "autoscaling", json!({"min": 4, "max": 3}));
    });
    assert_eq!(fields(&inverted), ["autoscaling.max"]);
    let half = violations(|s| {
        s.remove("replicas");
        set(s, "autoscaling", json!({"min": 2}));
    });
    assert_eq!(fields(&half), ["autoscaling.max"]);
    let ok = fixture::spec_with(|s| {
        s.remove("replicas");
        set(s, "autoscaling", json!({"min": 2, "max": 5}));
    });
    assert_eq!(ok.scaling, Scaling::Autoscaling { min: 2, max: 5 });
    for bad in [json!(-1), json!(2.5), json!("3"), json!(2147483648_i64)] {
        let v = violations(|s| set(s, "replicas", bad.clone()));
        assert_eq!(fields(&v), ["replicas"], "{bad}");
    }
    assert_eq!(
        fixture::spec_with(|s| set(s, "replicas", json!(0))).scaling,
        Scaling::Replicas(0)
    );
}

#[test]
fn names_follow_the_hyperfleet_rule() {
    let spec = raw();
    for (name, ok) in [
        ("abc", true),
        ("workers-europe2", true),
        ("ab", false),
        ("workers-europe-2", false),
        ("Workers", false),
        ("-workers", false),
    ] {
        let result = NodePoolSpec::validate(ID, CLUSTER_ID, Some(name), &spec);
        assert_eq!(result.is_ok(), ok, "{name}");
    }
    let unnamed = NodePoolSpec::validate(ID, CLUSTER_ID, None, &spec).unwrap_err();
    assert_eq!(fields(&unnamed), ["name"]);
}

#[test]
fn checks_against_the_hosted_cluster() {
    let spec = fixture::spec();
    let hc = |platform: &str, region: &str, version: &str| ControlPlane {
        name: "prod-eu-1".into(),
        platform: platform.into(),
        region: Some(region.into()),
        psc_subnet: Some("hcp-psc-subnet".into()),
        release_image: Some(format!(
            "quay.io/openshift-release-dev/ocp-release:{version}-x86_64"
        )),
        version: version.into(),
    };
    assert!(
        spec.check_against(&hc("GCP", "europe-west2", "4.17.0"))
            .is_empty()
    );
    assert!(
        spec.check_against(&hc("GCP", "europe-west2", "4.18.2"))
            .is_empty()
    );
    assert!(
        spec.check_against(&hc("GCP", "europe-west2", ""))
            .is_empty()
    );
    let v = spec.check_against(&hc("GCP", "us-central1", "4.17.0"));
    assert_eq!(fields(&v), ["platform.gcp.zone"]);
    let v = spec.check_against(&hc("None", "", "4.17.0"));
    assert_eq!(fields(&v), ["platform.type"]);
    let v = spec.check_against(&hc("GCP", "europe-west2", "4.16.9"));
    assert_eq!(fields(&v), ["release.image"]);
    assert!(
        v[0].problem.contains("newer than the control plane"),
        "{}",
        v[0]
    );
    let v = spec.check_against(&hc("GCP", "europe-west2", "4.21.0"));
    assert_eq!(fields(&v), ["release.image"]);
    // Within the documented skew: HyperShift decides.
    assert!(
        spec.check_against(&hc("GCP", "europe-west2", "4.20.1"))
            .is_empty()
    );
    let no_subnet = ControlPlane {
        psc_subnet: None,
        ..hc("GCP", "europe-west2", "4.17.0")
    };
    assert_eq!(
        fields(&spec.check_against(&no_subnet)),
        ["platform.gcp.subnet"]
    );
    let own_subnet = fixture::spec_with(|s| set(s, "platform.gcp.subnet", json!("workers")));
    assert!(own_subnet.check_against(&no_subnet).is_empty());
    let none = fixture::spec_with(|s| set(s, "platform", json!({"type": "none"})));
    assert!(
        none.check_against(&hc("GCP", "europe-west2", "4.17.0"))
            .is_empty()
    );
}

#[test]
fn release_versions_are_read_from_tags() {
    assert_eq!(
        release_version("quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64"),
        Some((4, 19, 3))
    );
    assert_eq!(
        release_version("registry:5000/ocp-release:4.18.0-rc.1-multi"),
        Some((4, 18, 0))
    );
    assert_eq!(release_version("quay.io/ocp-release@sha256:abc"), None);
    assert_eq!(release_version("quay.io/ocp-release:latest"), None);
    assert_eq!(parse_version("4.17.0"), Some((4, 17, 0)));
    assert_eq!(parse_version(""), None);
}

#[test]
fn objects_and_bare_specs_are_read() {
    let object = NodePoolInput::from_value(json!({
        "id": ID, "name": NAME, "generation": 4,
        "owner_references": {"id": CLUSTER_ID, "kind": "Cluster", "href": "/x"},
        "deleted_time": "2026-11-26T10:00:00Z",
        "spec": raw(),
    }))
    .unwrap();
    assert_eq!(object.cluster_id.as_deref(), Some(CLUSTER_ID));
    assert_eq!(object.deleted_time.as_deref(), Some("2026-11-26T10:00:00Z"));
    let bare = NodePoolInput::from_value(Value::Object(raw())).unwrap();
    assert_eq!(bare.id, None);
    assert!(NodePoolInput::from_value(json!([])).is_err());
    let bad = NodePoolInput::from_value(json!({"owner_references": "x", "spec": {}}));
    assert!(bad.unwrap_err().to_string().contains("owner_references"));
    let bad = NodePoolInput::from_value(json!({"generation": "1", "spec": {}}));
    assert!(bad.unwrap_err().to_string().contains("generation"));
}

// ---- HyperFleet's shape ---------------------------------------------------------------

use super::fixture::{hyperfleet_raw, hyperfleet_spec_with};

fn hyperfleet_violations(edit: impl FnOnce(&mut Map<String, Value>)) -> Vec<SpecViolation> {
    let mut spec = hyperfleet_raw();
    edit(&mut spec);
    NodePoolSpec::validate(ID, CLUSTER_ID, Some(NAME), &spec).unwrap_err()
}

#[test]
fn hyperfleet_shape_maps_every_model_key() {
    let spec = hyperfleet_spec_with(|_| {});
    assert_eq!(spec.shape, Shape::HyperFleet);
    assert_eq!(spec.cluster_name.as_deref(), Some("prod-eu-1"));
    assert_eq!(spec.scaling, Scaling::Replicas(3));
    assert_eq!(spec.upgrade_type, UpgradeType::Replace);
    let gcp = spec.gcp.unwrap();
    assert_eq!(gcp.machine_type, "n2-standard-8");
    assert_eq!(gcp.zone.as_deref(), Some("europe-west2-b"));
    assert_eq!(gcp.boot_disk_size_gb, Some(128));
    assert_eq!(gcp.boot_disk_type.as_deref(), Some("pd-ssd"));
    assert_eq!(gcp.provisioning_model.as_deref(), Some("Preemptible"));
    assert_eq!(
        gcp.node_labels,
        [
            ("node.example.com/pool".to_owned(), "workers".to_owned()),
            ("team".to_owned(), "platform".to_owned())
        ]
    );
    assert_eq!(
        gcp.taints,
        [
            Taint {
                key: "dedicated".into(),
                value: Some("gpu".into()),
                effect: "NoSchedule".into()
            },
            Taint {
                key: "example.com/batch".into(),
                value: None,
                effect: "PreferNoSchedule".into()
            }
        ]
    );
    // preemptible false is the default model, not sent.
    let standard = hyperfleet_spec_with(|s| set(s, "platform.gcp.preemptible", json!(false)));
    assert_eq!(standard.gcp.unwrap().provisioning_model, None);
}

#[test]
fn hyperfleet_shape_defaults_what_the_model_leaves_optional() {
    let mut raw = Map::new();
    set(&mut raw, "platform", json!({"type": "gcp", "gcp": {}}));
    set(&mut raw, "replicas", json!(2));
    let spec = NodePoolSpec::validate(ID, CLUSTER_ID, Some(NAME), &raw).unwrap();
    assert_eq!(spec.shape, Shape::HyperFleet);
    assert_eq!(spec.release_image, None);
    assert_eq!(spec.cluster_name, None);
    let gcp = spec.gcp.unwrap();
    assert_eq!(gcp.machine_type, DEFAULT_MACHINE_TYPE);
    assert_eq!(gcp.zone, None);
    // A GCP NodePool needs platform.gcp, even empty.
    let mut bare = raw.clone();
    set(&mut bare, "platform", json!({"type": "gcp"}));
    let v = NodePoolSpec::validate(ID, CLUSTER_ID, Some(NAME), &bare).unwrap_err();
    assert_eq!(fields(&v), ["platform.gcp"]);
    assert!(v[0].problem.contains("{} takes every default"), "{}", v[0]);
}

#[test]
fn synonyms_agree_or_are_refused_naming_both() {
    let same = hyperfleet_spec_with(|s| {
        set(s, "replicas", json!(3));
        set(s, "platform.gcp.instanceType", json!("n2-standard-8"));
    });
    assert_eq!(same.scaling, Scaling::Replicas(3));
    let e2e = hyperfleet_spec_with(|s| {
        s.remove("nodeCount");
        set(s, "replicas", json!(2));
        s["platform"]["gcp"]
            .as_object_mut()
            .unwrap()
            .remove("machineType");
        set(s, "platform.gcp.instanceType", json!("n1-standard-8"));
    });
    assert_eq!(e2e.scaling, Scaling::Replicas(2));
    assert_eq!(e2e.gcp.unwrap().machine_type, "n1-standard-8");
    let v = hyperfleet_violations(|s| {
        set(s, "replicas", json!(5));
        set(s, "platform.gcp.instanceType", json!("n1-standard-8"));
    });
    assert_eq!(fields(&v), ["platform.gcp.instanceType", "nodeCount"]);
    assert!(v[0].problem.contains("\"n2-standard-8\""), "{}", v[0]);
    assert!(v[1].problem.contains("is 3 but replicas is 5"), "{}", v[1]);
}

#[test]
fn one_zone_only() {
    let none = hyperfleet_spec_with(|s| set(s, "platform.gcp.zones", json!([])));
    assert_eq!(none.gcp.unwrap().zone, None);
    for (bad, needle) in [
        (json!(["europe-west2-a", "europe-west2-b"]), "lists 2 zones"),
        (json!("europe-west2-a"), "must be a list of one zone"),
        (json!([7]), "must list zone names"),
        (json!(["europe-west2"]), "region-zone"),
    ] {
        let v = hyperfleet_violations(|s| set(s, "platform.gcp.zones", bad.clone()));
        assert_eq!(fields(&v), ["platform.gcp.zones"], "{bad}");
        assert!(v[0].problem.contains(needle), "{bad}: {}", v[0]);
    }
}

#[test]
fn hyperfleet_autoscaling() {
    let auto = |a: Value| {
        move |s: &mut Map<String, Value>| {
            s.insert("autoscaling".into(), a);
        }
    };
    let on = hyperfleet_spec_with(auto(
        json!({"enabled": true, "minNodes": 1, "maxNodes": 10}),
    ));
    assert_eq!(on.scaling, Scaling::Autoscaling { min: 1, max: 10 });
    let without_count = hyperfleet_spec_with(|s| {
        s.remove("nodeCount");
        auto(json!({"enabled": true, "minNodes": 2, "maxNodes": 2}))(s);
    });
    assert_eq!(
        without_count.scaling,
        Scaling::Autoscaling { min: 2, max: 2 }
    );
    let off = hyperfleet_spec_with(auto(
        json!({"enabled": false, "minNodes": 1, "maxNodes": 10}),
    ));
    assert_eq!(off.scaling, Scaling::Replicas(3));
    for (a, field, needle) in [
        (
            json!({"enabled": true, "minNodes": 5, "maxNodes": 4}),
            "autoscaling.maxNodes",
            "at least autoscaling.minNodes (5)",
        ),
        (
            json!({"enabled": true, "minNodes": 4, "maxNodes": 10}),
            "nodeCount",
            "outside",
        ),
        (
            json!({"enabled": true, "minNodes": 0, "maxNodes": 10}),
            "autoscaling.minNodes",
            "scaling from zero",
        ),
        (
            json!({"enabled": true, "maxNodes": 10}),
            "autoscaling.minNodes",
            "is required",
        ),
        (
            json!({"enabled": true, "minNodes": 1}),
            "autoscaling.maxNodes",
            "is required",
        ),
        (
            json!({"minNodes": 1, "maxNodes": 10}),
            "autoscaling.enabled",
            "is required",
        ),
        (
            json!({"enabled": "yes"}),
            "autoscaling.enabled",
            "true or false",
        ),
        (
            json!({"enabled": true, "minNodes": 1.5, "maxNodes": 10}),
            "autoscaling.minNodes",
            "whole number",
        ),
        (
            json!({"enabled": true, "minNodes": 1, "maxNodes": 10, "targetCPUUtilization": 80}),
            "autoscaling.targetCPUUtilization",
            "only a minimum and a maximum",
        ),
        (
            json!({"enabled": false, "scaleDownDelay": "10m"}),
            "autoscaling.scaleDownDelay",
            "remove it",
        ),
        (json!([1, 10]), "autoscaling", "must be an object"),
    ] {
        let v = hyperfleet_violations(auto(a.clone()));
        assert_eq!(fields(&v), [field], "{a}");
        assert!(v[0].problem.contains(needle), "{a}: {}", v[0]);
    }
    let no_size = hyperfleet_violations(|s| {
        s.remove("nodeCount");
    });
    assert_eq!(fields(&no_size), ["nodeCount"]);
}

#[test]
fn counts_are_whole_numbers_in_range() {
    for bad in [
        json!(-1),
        json!(2.5),
        json!("3"),
        json!(2147483648_i64),
        json!(true),
    ] {
        let v = hyperfleet_violations(|s| set(s, "nodeCount", bad.clone()));
        assert_eq!(fields(&v), ["nodeCount"], "{bad}");
        let v = hyperfleet_violations(|s| {
            s.remove("nodeCount");
            set(s, "replicas", bad.clone());
        });
        assert_eq!(fields(&v), ["replicas"], "{bad}");
    }
    let max = hyperfleet_spec_with(|s| set(s, "nodeCount", json!(MAX_REPLICAS)));
    assert_eq!(max.scaling, Scaling::Replicas(MAX_REPLICAS));
}

#[test]
fn wrong_types_are_named_by_their_hyperfleet_path() {
    let cases: Vec<(&str, Value, &str)> = vec![
        ("clusterName", json!(5), "must be a string"),
        ("clusterName", json!("Prod_EU"), "is not valid"),
        (
            "platform.gcp",
            json!("n2"),
            "must be an object {machineType",
        ),
        (
            "platform.gcp.machineType",
            json!(["n2"]),
            "must be a string",
        ),
        (
            "platform.gcp.machineType",
            json!("N2_STANDARD"),
            "GCE machine type",
        ),
        (
            "platform.gcp.diskSize",
            json!(10),
            "between 20 and 65536 GB (got 10)",
        ),
        ("platform.gcp.diskSize", json!("100"), "whole number"),
        (
            "platform.gcp.diskType",
            json!("ssd"),
            "pd-standard, pd-ssd or pd-balanced",
        ),
        ("platform.gcp.preemptible", json!("yes"), "true or false"),
        ("platform.gcp.labels", json!(["team"]), "must be an object"),
        (
            "platform.gcp.labels",
            json!({"team": 1}),
            "must be a string",
        ),
        (
            "platform.gcp.labels",
            json!({"-team": "x"}),
            "not a Kubernetes label key",
        ),
        (
            "platform.gcp.labels",
            json!({"team": "a b"}),
            "not a Kubernetes label value",
        ),
        ("platform.gcp.taints", json!({"key": "a"}), "must be a list"),
        (
            "platform.gcp.taints",
            json!([{"key": "a", "effect": "Never"}]),
            "taint 0: effect \"Never\"",
        ),
        (
            "platform.gcp.taints",
            json!([{"effect": "NoSchedule"}]),
            "taint 0: key is required",
        ),
        (
            "platform.gcp.taints",
            json!([{"key": "a b", "effect": "NoSchedule"}]),
            "taint 0: key",
        ),
        (
            "platform.gcp.taints",
            json!(["a"]),
            "taint 0 must be an object",
        ),
        (
            "platform.gcp.accelerators",
            json!([{"type": "nvidia-tesla-t4", "count": 1}]),
            "no accelerator setting",
        ),
        ("platform.gcp.accelerators", json!("t4"), "must be a list"),
        (
            "platform.gcp.serviceAccount",
            json!("sa@x"),
            "must be an object {email}",
        ),
        (
            "platform.gcp.serviceAccount.email",
            json!("me@example.com"),
            "service account",
        ),
        (
            "platform.gcp.provisioningModel",
            json!("Spot"),
            "preemptible true means Preemptible",
        ),
        (
            "platform.gcp.networkTags",
            json!("workers"),
            "must be a list",
        ),
        (
            "platform.gcp.resourceLabels",
            json!({"googkey": "v"}),
            "reserved prefix goog",
        ),
        ("release.image", json!("has space:1"), "is not valid"),
        (
            "management.upgradeType",
            json!("Rolling"),
            "Replace or InPlace",
        ),
        ("management.autoRepair", json!("yes"), "true or false"),
    ];
    for (path, bad, needle) in cases {
        let v = hyperfleet_violations(|s| set(s, path, bad.clone()));
        // A provisioning model that contradicts preemptible is named by preemptible.
        let expected = if path == "platform.gcp.provisioningModel" {
            "platform.gcp.preemptible"
        } else {
            path
        };
        assert_eq!(fields(&v), [expected], "{path} = {bad}");
        assert!(v[0].problem.contains(needle), "{path} = {bad}: {}", v[0]);
    }
    let too_many: Vec<Value> = (0..=MAX_TAINTS)
        .map(|i| json!({"key": format!("k{i}"), "effect": "NoSchedule"}))
        .collect();
    let v = hyperfleet_violations(|s| set(s, "platform.gcp.taints", json!(too_many)));
    assert_eq!(fields(&v), ["platform.gcp.taints"]);
    assert!(v[0].problem.contains("at most 50"), "{}", v[0]);
}

#[test]
fn mixing_the_two_shapes_is_refused_naming_the_renames() {
    let v = hyperfleet_violations(|s| {
        set(s, "platform.gcp.boot_disk_size_gb", json!(128));
        set(s, "management.upgrade_type", json!("Replace"));
    });
    assert_eq!(fields(&v), ["spec"]);
    let problem = &v[0].problem;
    for needle in [
        "clusterName",
        "nodeCount",
        "platform.gcp.machineType",
        "platform.gcp.boot_disk_size_gb → platform.gcp.diskSize",
        "management.upgrade_type → management.upgradeType",
    ] {
        assert!(problem.contains(needle), "{needle}: {problem}");
    }
    // The flat shape alone is still read as before.
    assert_eq!(fixture::spec().shape, Shape::Flat);
}

#[test]
fn platform_none_in_hyperfleet_shape() {
    let none = hyperfleet_spec_with(|s| {
        set(s, "platform", json!({"type": "none"}));
    });
    assert_eq!(none.platform, PlatformType::None);
    assert_eq!(none.upgrade_type, UpgradeType::InPlace);
    let v = hyperfleet_violations(|s| set(s, "platform.type", json!("none")));
    assert_eq!(fields(&v), ["platform.gcp"]);
}

#[test]
fn hyperfleet_checks_against_the_hosted_cluster() {
    let hc = ControlPlane {
        name: "prod-eu-1".into(),
        platform: "GCP".into(),
        region: Some("europe-west2".into()),
        psc_subnet: Some("hcp-psc-subnet".into()),
        release_image: Some("quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64".into()),
        version: "4.17.0".into(),
    };
    assert!(hyperfleet_spec_with(|_| {}).check_against(&hc).is_empty());
    let other = hyperfleet_spec_with(|s| set(s, "clusterName", json!("prod-us-1")));
    let v = other.check_against(&hc);
    assert_eq!(fields(&v), ["clusterName"]);
    assert!(v[0].problem.contains("\"prod-us-1\""), "{}", v[0]);
    assert!(v[0].problem.contains("\"prod-eu-1\""), "{}", v[0]);
    let far = hyperfleet_spec_with(|s| set(s, "platform.gcp.zones", json!(["us-central1-a"])));
    assert_eq!(fields(&far.check_against(&hc)), ["platform.gcp.zones"]);
    // Defaults need the HostedCluster's region and release.
    let defaults = hyperfleet_spec_with(|s| {
        s.remove("release");
        s["platform"]["gcp"]
            .as_object_mut()
            .unwrap()
            .remove("zones");
    });
    assert!(defaults.check_against(&hc).is_empty());
    let bare = ControlPlane {
        region: None,
        release_image: None,
        ..hc.clone()
    };
    assert_eq!(
        fields(&defaults.check_against(&bare)),
        ["platform.gcp.zones", "release.image"]
    );
}
