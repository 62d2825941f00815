//! Every cluster the project ships as an example input is accepted by the adapter it feeds: the
//! framework dry-run's API answers (`manifests/hyperfleet/dryrun/`), the kind demo's cluster
//! (`manifests/kind/cluster-spec.json`), any other cluster object under `manifests/`, the test
//! fixtures (`adapter/tests/fixtures/cluster-*.json`), the JSON blocks of the README and of the
//! pages under `docs/`, and the cluster `local-pulse` serves. Each is run through the real
//! validation, so a new example that the adapter would refuse fails here.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use hypershift_adapter::hyperfleet::cluster::{ClusterInput, ClusterSpec, SpecShape};
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

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

/// Every object in `value` that is a HyperFleet cluster: `kind: "Cluster"` with an object `spec`.
fn clusters<'a>(value: &'a Value, out: &mut Vec<&'a Value>) {
    match value {
        Value::Object(object) => {
            if object.get("kind").and_then(Value::as_str) == Some("Cluster")
                && object.get("spec").is_some_and(Value::is_object)
            {
                out.push(value);
            }
            object.values().for_each(|v| clusters(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| clusters(v, out)),
        _ => {}
    }
}

/// The cluster validated as the adapter validates it (id and name from the object).
fn validate(what: &str, cluster: &Value) -> ClusterSpec {
    let input = ClusterInput::from_value(cluster.clone())
        .unwrap_or_else(|e| panic!("{what}: not a cluster input: {e}"));
    let id = input
        .id
        .clone()
        .unwrap_or_else(|| panic!("{what}: a shipped cluster has an id"));
    ClusterSpec::validate(&id, input.name.as_deref(), &input.spec)
        .unwrap_or_else(|v| panic!("{what}: the adapter refuses it: {v:#?}"))
}

#[test]
fn every_cluster_under_manifests_is_accepted_in_the_nested_shape() {
    let mut files = Vec::new();
    json_files(&repo().join("manifests"), &mut files);
    files.sort();
    let mut seen = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let value: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not JSON: {e}", file.display()));
        let mut found = Vec::new();
        clusters(&value, &mut found);
        for cluster in found {
            let what = file
                .strip_prefix(repo())
                .unwrap_or(file)
                .display()
                .to_string();
            let spec = validate(&what, cluster);
            assert_eq!(
                spec.names.shape,
                SpecShape::Nested,
                "{what}: shipped examples use HyperFleet's nested shape"
            );
            seen.push(what);
        }
    }
    // The walk found the inputs the deployment and demo docs use (`docs/deploying.md`).
    for expected in [
        "manifests/hyperfleet/dryrun/api-responses.json",
        "manifests/hyperfleet/dryrun/api-responses-deleting.json",
        "manifests/hyperfleet/dryrun/api-responses-waiting.json",
        "manifests/kind/cluster-spec.json",
    ] {
        assert!(
            seen.iter().any(|s| s.ends_with(expected)),
            "{expected} holds no cluster object (kind: Cluster with a spec); found {seen:?}"
        );
    }
}

#[test]
fn every_cluster_fixture_is_accepted() {
    let dir = repo().join("adapter/tests/fixtures");
    let mut shapes = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.starts_with("cluster-") && name.ends_with(".json")) {
            continue;
        }
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        shapes.push(validate(&name, &value).names.shape);
    }
    // Both shapes have a fixture: the nested one is primary, the flat one the alternative.
    assert!(shapes.contains(&SpecShape::Nested), "{shapes:?}");
    assert!(shapes.contains(&SpecShape::Flat), "{shapes:?}");
}

#[test]
fn every_cluster_in_the_documentation_is_accepted() {
    let mut found = Vec::new();
    for page in testbed::docs::pages() {
        let text = std::fs::read_to_string(repo().join(&page)).unwrap();
        for (i, block) in text.split("```json\n").skip(1).enumerate() {
            let text = block.split("\n```").next().unwrap_or_default();
            let value: Value = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("{page} JSON block {i} is not JSON: {e}\n{text}"));
            let mut clusters_in_block = Vec::new();
            clusters(&value, &mut clusters_in_block);
            for cluster in clusters_in_block {
                validate(&format!("{page} JSON block {i}"), cluster);
                found.push(page.clone());
            }
        }
    }
    // The cluster spec's example (`docs/controlplane.md`, "The cluster spec") is one of them.
    assert!(
        found.iter().any(|p| p == "docs/controlplane.md"),
        "docs/controlplane.md shows a cluster spec (kind: Cluster): {found:?}"
    );
}

#[test]
fn the_cluster_local_pulse_serves_is_accepted() {
    let cluster = testbed::local_pulse::cluster_object();
    let spec = validate("local-pulse", &cluster);
    assert_eq!(spec.names.shape, SpecShape::Nested);
}
