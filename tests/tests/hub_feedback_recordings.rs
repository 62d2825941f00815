//! The hub backend's scalar feedback (issue 16 item 4) against what the real HyperShift operator
//! wrote (`../shared/fixtures/hypershift-operator/`): for every recorded HostedCluster and NodePool
//! (snapshots, create/update responses, watch events), the project's own hub feedback rules are
//! evaluated the way a standard OCM hub's work agent evaluates them ([`testbed::ocm_feedback`]),
//! and
//!
//! - no rule fails (a failure would turn the manifest's `StatusFeedbackSynced` False), every value
//!   is a scalar of its declared type (no `JsonRaw`: that needs the agent's alpha gate and is capped
//!   at 1024 bytes);
//! - the ManifestWork carrying the rules and the values is admitted by the real ManifestWork CRD;
//! - the status the hub backend rebuilds from the values gives the same pulse report (conditions
//!   and `data`) as the whole recorded status, and the same deletion facts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hypershift_adapter::hypershift::nodepool::status::{Desired, MachinesClock};
use hypershift_adapter::pulse::{controlplane, nodepool};
use hypershift_adapter::work::feedback::ObjectDeletion;
use hypershift_adapter::work::hub;
use hypershift_adapter::work::manifestwork::{
    self, DELETION_TIMESTAMP_FEEDBACK_NAME, Delivery, FINALIZERS_FEEDBACK_NAME,
    GENERATION_FEEDBACK_NAME, Owner, ResourceIdentifier, STATUS_FEEDBACK_NAME, WorkManifest,
};
use hypershift_adapter::work::outcome::WorkRef;
use hypershift_adapter::work::scalar_feedback::{ScalarStatus, ValueKind};
use serde_json::{Value, json};
use testbed::ids::CLUSTER_ID;
use testbed::ocm_feedback;
use testbed::openapi::{crd_schema, validate};

const CONSUMER: &str = "mgmt-1";

/// Every HostedCluster and NodePool object anywhere in `value` (a snapshot's lists, a watch
/// event's `object`, a create response).
fn collect<'a>(value: &'a Value, out: &mut Vec<&'a Value>) {
    match value {
        Value::Object(map) => {
            let hypershift = map
                .get("apiVersion")
                .and_then(Value::as_str)
                .is_some_and(|v| v.starts_with("hypershift.openshift.io/"));
            if hypershift && (value["kind"] == "HostedCluster" || value["kind"] == "NodePool") {
                out.push(value);
                return;
            }
            for v in map.values() {
                collect(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
        _ => {}
    }
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

/// The work the hub backend would ship for `object`, with the project's own rules for its kind.
fn hub_work(object: &Value, spec: &ScalarStatus) -> Value {
    let (group, resource) = match object["kind"].as_str() {
        Some("HostedCluster") => ("hypershift.openshift.io", "hostedclusters"),
        _ => ("hypershift.openshift.io", "nodepools"),
    };
    let mut shipped = object.clone();
    if let Some(map) = shipped.as_object_mut() {
        map.remove("status");
    }
    let mut work = manifestwork::manifest_work(
        &format!("hostedcluster-{CLUSTER_ID}"),
        CONSUMER,
        &Owner {
            labels: vec![("hyperfleet.io/cluster-id", CLUSTER_ID.to_owned())],
        },
        Some(3),
        vec![WorkManifest {
            object: json!({
                "apiVersion": object["apiVersion"], "kind": object["kind"],
                "metadata": {"name": object["metadata"]["name"], "namespace": object["metadata"]["namespace"]},
                "spec": object["spec"],
            }),
            identifier: ResourceIdentifier {
                group: group.into(),
                resource: resource.into(),
                namespace: object["metadata"]["namespace"].as_str().unwrap().into(),
                name: object["metadata"]["name"].as_str().unwrap().into(),
            },
            delivery: Delivery::Owned,
        }],
    );
    manifestwork::use_scalar_feedback(&mut work, spec);
    work
}

/// The declared type of each rule's value.
fn declared(spec: &ScalarStatus) -> BTreeMap<String, ValueKind> {
    let mut kinds: BTreeMap<String, ValueKind> =
        spec.all().iter().map(|v| (v.name(), v.kind())).collect();
    kinds.insert(FINALIZERS_FEEDBACK_NAME.to_owned(), ValueKind::String);
    kinds.insert(GENERATION_FEEDBACK_NAME.to_owned(), ValueKind::Integer);
    kinds.insert(
        DELETION_TIMESTAMP_FEEDBACK_NAME.to_owned(),
        ValueKind::String,
    );
    kinds
}

fn matches(kind: ValueKind, field: &Value) -> bool {
    let (type_, member, ok): (&str, &str, fn(&Value) -> bool) = match kind {
        ValueKind::String => ("String", "string", Value::is_string),
        ValueKind::Integer => ("Integer", "integer", Value::is_i64),
        ValueKind::Boolean => ("Boolean", "boolean", Value::is_boolean),
    };
    field["type"] == type_
        && field.get(member).is_some_and(ok)
        && field.as_object().is_some_and(|o| o.len() == 2)
}

struct Checked {
    objects: usize,
    with_status: usize,
    largest_value: usize,
    largest_status: usize,
}

fn check(file: &Path, object: &Value, schema: &Value, checked: &mut Checked) {
    let hosted_cluster = object["kind"] == "HostedCluster";
    let spec = if hosted_cluster {
        controlplane::SCALAR_STATUS
    } else {
        nodepool::SCALAR_STATUS
    };
    let what = format!(
        "{} {} in {}",
        object["kind"].as_str().unwrap(),
        object["metadata"]["name"].as_str().unwrap(),
        file.display()
    );
    let mut work = hub_work(object, &spec);
    let rules = work["spec"]["manifestConfigs"][0]["feedbackRules"].clone();

    // As the agent evaluates them: no failure, every value a scalar of its declared type.
    let (values, error) = ocm_feedback::evaluate(&rules, object);
    assert_eq!(error, None, "{what}: the agent would fail the sync");
    let kinds = declared(&spec);
    for v in &values {
        let name = v["name"].as_str().unwrap();
        let kind = kinds[name];
        assert!(
            matches(kind, &v["fieldValue"]),
            "{what}: {name} is {} not a {kind:?}",
            v["fieldValue"]
        );
        checked.largest_value = checked.largest_value.max(v["fieldValue"].to_string().len());
    }

    // The real CRD admits the work and its status.
    let resource_meta = json!({
        "ordinal": 0, "group": "hypershift.openshift.io", "version": "v1beta1",
        "kind": object["kind"],
        "resource": if hosted_cluster { "hostedclusters" } else { "nodepools" },
        "name": object["metadata"]["name"], "namespace": object["metadata"]["namespace"],
    });
    let condition = |t: &str, reason: &str| {
        json!({"type": t, "status": "True", "reason": reason, "message": "",
               "lastTransitionTime": "2026-11-26T14:40:00Z", "observedGeneration": 1})
    };
    work["metadata"]["generation"] = json!(1);
    work["metadata"]["resourceVersion"] = json!("812");
    work["status"] = json!({
        "conditions": [condition("Applied", "AppliedManifestWorkComplete"), condition("Available", "ResourcesAvailable")],
        "resourceStatus": {"manifests": [{
            "resourceMeta": resource_meta,
            "statusFeedback": if values.is_empty() { json!({}) } else { json!({"values": values}) },
            "conditions": [condition("Applied", "AppliedManifestComplete"), condition("Available", "ResourceAvailable"),
                           condition("StatusFeedbackSynced", "StatusFeedbackSynced")],
        }]},
    });
    checked.largest_status = checked.largest_status.max(work["status"].to_string().len());
    let outcome = validate(schema, &work);
    assert!(
        outcome.errors.is_empty() && outcome.unevaluated.is_empty(),
        "{what}: the ManifestWork CRD refuses {:?} (unevaluated {:?})",
        outcome.errors,
        outcome.unevaluated
    );

    // The hub backend reads it back: the rebuilt status maps to the same report.
    let existing = hub::existing_work(&serde_json::from_value(work).unwrap()).unwrap();
    let manifest = &existing.manifests[0];
    let rebuilt = manifest.values.get(STATUS_FEEDBACK_NAME);
    let deletion = ObjectDeletion::from_manifest(Some(manifest));
    assert_eq!(
        deletion.deletion_timestamp.as_deref(),
        object["metadata"]["deletionTimestamp"].as_str(),
        "{what}"
    );
    assert_eq!(
        deletion.finalizers.first().map(String::as_str),
        object["metadata"]["finalizers"][0].as_str(),
        "{what}: the first finalizer"
    );
    let Some(whole) = object.get("status") else {
        assert_eq!(rebuilt, None, "{what}: no status, no rebuilt status");
        checked.objects += 1;
        return;
    };
    let rebuilt = rebuilt.unwrap_or_else(|| panic!("{what}: a status was fed back"));
    let work_ref = WorkRef {
        consumer: CONSUMER,
        name: "w",
    };
    if hosted_cluster {
        let want = controlplane::report_status(
            work_ref,
            &controlplane::parse_feedback(whole).unwrap(),
            Some(3),
        );
        let got = controlplane::report_status(
            work_ref,
            &controlplane::parse_feedback(rebuilt).unwrap(),
            Some(3),
        );
        assert_eq!(got, want, "{what}");
    } else {
        let desired = Desired::of(object);
        let clock = MachinesClock {
            now: "2026-11-26T15:00:00Z".parse().unwrap(),
            stuck_after: Duration::from_secs(15 * 60),
        };
        let want = nodepool::report_status(
            work_ref,
            &nodepool::parse_feedback(whole).unwrap(),
            &desired,
            clock,
            Some(3),
        );
        let got = nodepool::report_status(
            work_ref,
            &nodepool::parse_feedback(rebuilt).unwrap(),
            &desired,
            clock,
            Some(3),
        );
        assert_eq!(got, want, "{what}");
    }
    checked.objects += 1;
    checked.with_status += 1;
}

#[test]
fn every_recorded_status_fits_the_hub_rules_the_crd_and_gives_the_same_report() {
    let Some(dir) =
        job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/hypershift-operator")
    else {
        return;
    };
    let crds = dir.parent().unwrap().join("crds");
    let schema = crd_schema(
        &crds.join("manifestworks.work.open-cluster-management.io.yaml"),
        "v1",
    );
    let mut files = Vec::new();
    json_files(&dir, &mut files);
    files.sort();
    let mut checked = Checked {
        objects: 0,
        with_status: 0,
        largest_value: 0,
        largest_status: 0,
    };
    let mut kinds = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        let mut objects = Vec::new();
        collect(&value, &mut objects);
        for object in objects {
            *kinds
                .entry(object["kind"].as_str().unwrap().to_owned())
                .or_insert(0) += 1;
            check(file, object, &schema, &mut checked);
        }
    }
    // Every recording was read: both kinds, statuses among them (watch events included).
    assert!(
        kinds.get("HostedCluster").is_some_and(|n| *n >= 40),
        "{kinds:?}"
    );
    assert!(kinds.get("NodePool").is_some_and(|n| *n >= 20), "{kinds:?}");
    assert!(
        checked.with_status >= 40,
        "{} with a status",
        checked.with_status
    );
    eprintln!(
        "{} objects ({kinds:?}), {} with a status; largest value {} bytes, largest ManifestWork status {} bytes",
        checked.objects, checked.with_status, checked.largest_value, checked.largest_status
    );
}

/// The whole-status rule the Maestro backend uses fails on a standard hub for every recorded
/// status: what the hub rules replace (and what the evaluator must be able to tell).
#[test]
fn the_whole_status_rule_fails_on_a_standard_hub() {
    let Some(dir) =
        job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/hypershift-operator")
    else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("b-gke-like").join("03-after-3min.json")).unwrap();
    let snapshot: Value = serde_json::from_str(&text).unwrap();
    let hc = &snapshot["hostedclusters"][0];
    let rules =
        json!([{"type": "JSONPaths", "jsonPaths": [{"name": "status", "path": ".status"}]}]);
    let (values, error) = ocm_feedback::evaluate(&rules, hc);
    assert!(values.is_empty());
    assert!(
        error
            .unwrap()
            .contains("the type map[string]interface {} of the value for status is not found")
    );
    assert!(
        hc["status"].to_string().len() > 1024,
        "and too long for JsonRaw even with the gate"
    );
}
