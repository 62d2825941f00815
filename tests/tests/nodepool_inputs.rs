//! Every NodePool input the project ships — the dry-run and kind files, the adapter's example,
//! the testbed's and `local-pulse`'s NodePools, the example spec of `docs/nodepool.md` — is
//! written in HyperFleet's shape and accepted by the adapter's real validation, and fits the
//! HostedCluster it joins (issue 15: "test that every shipped example input is accepted by the
//! adapter it feeds").

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use hypershift_adapter::hyperfleet::nodepool::{ControlPlane, NodePoolInput, NodePoolSpec, Shape};
use serde_json::{Map, Value, json};
use testbed::ids::{CLUSTER_ID, LONGEST_NODEPOOL_NAME, NODEPOOL_ID};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Every `.json` file under `dir`, recursively.
fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            json_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

/// Every HyperFleet NodePool object (`kind: NodePool` with an object `spec`) inside `value`.
fn nodepools<'a>(value: &'a Value, out: &mut Vec<&'a Value>) {
    match value {
        Value::Object(map) => {
            if map.get("kind") == Some(&json!("NodePool"))
                && map.get("spec").is_some_and(Value::is_object)
            {
                out.push(value);
            }
            map.values().for_each(|v| nodepools(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| nodepools(v, out)),
        _ => {}
    }
}

/// The HostedCluster the shipped NodePools join: GCP in `europe-west2` with a PSC subnet and a
/// release image (the version is left unknown: each input names its own release).
fn control_plane() -> ControlPlane {
    ControlPlane {
        name: String::new(),
        platform: "GCP".into(),
        region: Some("europe-west2".into()),
        psc_subnet: Some("hcp-psc-subnet".into()),
        release_image: Some(testbed::nodepool::release_image("4.17.0")),
        version: String::new(),
    }
}

/// Validates one input as the pulse does and checks it against the HostedCluster; it must be in
/// HyperFleet's shape.
#[track_caller]
fn accepted(what: &str, id: &str, cluster_id: &str, name: &str, spec: &Map<String, Value>) {
    let spec = NodePoolSpec::validate(id, cluster_id, Some(name), spec)
        .unwrap_or_else(|v| panic!("{what}: refused: {v:#?}"));
    assert_eq!(spec.shape, Shape::HyperFleet, "{what}");
    let violations = spec.check_against(&control_plane());
    assert!(violations.is_empty(), "{what}: {violations:#?}");
}

#[test]
fn every_shipped_nodepool_object_is_in_hyperfleets_shape_and_accepted() {
    let mut files = Vec::new();
    for dir in ["manifests", "adapter/tests/fixtures"] {
        json_files(&root().join(dir), &mut files);
    }
    let mut seen = Vec::new();
    for file in &files {
        let value: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut found = Vec::new();
        nodepools(&value, &mut found);
        for object in found {
            let what = file.strip_prefix(root()).unwrap().display().to_string();
            let input = NodePoolInput::from_value(object.clone()).unwrap();
            accepted(
                &what,
                input.id.as_deref().expect("an id"),
                input.cluster_id.as_deref().expect("owner_references.id"),
                input.name.as_deref().expect("a name"),
                &input.spec,
            );
            seen.push(what);
        }
    }
    seen.sort();
    seen.dedup();
    // The walk reaches each shipped input (a new one is walked without being listed here).
    for expected in [
        "adapter/tests/fixtures/nodepool-valid.json",
        "manifests/kind/nodepool-spec.json",
        "manifests/hyperfleet/nodepool/dryrun/api-responses.json",
        "manifests/hyperfleet/nodepool/dryrun/api-responses-waiting.json",
        "manifests/hyperfleet/nodepool/dryrun/api-responses-deleting.json",
    ] {
        assert!(
            seen.iter().any(|s| s == expected),
            "{expected} not walked: {seen:?}"
        );
    }
}

#[test]
fn the_testbeds_and_local_pulses_nodepools_are_accepted() {
    let version = testbed::local_pulse::scenario::VERSION;
    let replicas = testbed::local_pulse::scenario::NODEPOOL_REPLICAS;
    let gcp = testbed::nodepool::gcp_spec(replicas, version);
    let none = testbed::nodepool::none_spec(replicas, version);
    // local-pulse's scale step PATCHes `replicas` into the created spec.
    let mut scaled = gcp.clone();
    scaled["replicas"] = json!(5);
    for (what, spec) in [("gcp_spec", gcp), ("none_spec", none), ("scaled", scaled)] {
        let object = testbed::nodepool::nodepool_object(
            NODEPOOL_ID,
            LONGEST_NODEPOOL_NAME,
            CLUSTER_ID,
            1,
            spec,
        );
        let input = NodePoolInput::from_value(object).unwrap();
        accepted(
            what,
            NODEPOOL_ID,
            CLUSTER_ID,
            LONGEST_NODEPOOL_NAME,
            &input.spec,
        );
    }
}

#[test]
fn the_documented_nodepool_spec_example_is_accepted() {
    const MARKER: &str = "<!-- nodepool-spec-example -->";
    let page = std::fs::read_to_string(root().join("docs/nodepool.md")).unwrap();
    let after = &page[page
        .find(MARKER)
        .expect("the NodePool spec example of docs/nodepool.md")..];
    let start = after
        .find("```json\n")
        .expect("a json block after the marker")
        + 8;
    let end = start + after[start..].find("```").unwrap();
    let Value::Object(spec) = serde_json::from_str(&after[start..end]).unwrap() else {
        panic!("the example of docs/nodepool.md is not a JSON object");
    };
    accepted(
        "docs/nodepool.md NodePool spec example",
        NODEPOOL_ID,
        CLUSTER_ID,
        LONGEST_NODEPOOL_NAME,
        &spec,
    );
}
