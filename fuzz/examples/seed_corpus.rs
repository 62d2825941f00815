//! Builds the seed corpus of every fuzz target (`fuzz/corpus/<target>/`) from what real servers
//! answered (the team folder's `shared/fixtures`: HyperFleet API, Maestro REST and gRPC, the
//! HyperShift operator) and the repository's own examples (`adapter/tests/fixtures`,
//! `manifests/`, what the adapter itself builds and writes).
//!
//! ```sh
//! cargo run --manifest-path fuzz/Cargo.toml --example seed_corpus [-- <corpus dir>]
//! ```
//!
//! Idempotent: each seed has a stable name (`<source>.json`), so running it again rewrites the
//! same files (only the adapter's own spec events change: each is built with a new id and time);
//! compact JSON, and a value that several recordings carry is written once (under its
//! first name). See docs/fuzzing.md for minimizing the result with `cargo fuzz cmin`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use hypershift_adapter::hyperfleet::cluster::{ClusterInput, ClusterSpec};
use hypershift_adapter::pulse::controlplane;
use hypershift_adapter::work::backend::Backend;
use hypershift_adapter::work::maestro::manifestbundle::SpecEventBuilder;
use hypershift_adapter::work::maestro::proto;
use hypershift_adapter::work::maestro::proto::cloud_event_attribute_value::Attr;
use prost::Message;
use serde_json::{Value, json};

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

type Seeds = BTreeMap<(&'static str, String), Vec<u8>>;

fn main() {
    let corpus = std::env::args_os().nth(1).map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus"),
        PathBuf::from,
    );
    let fixtures = job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures")
        .unwrap_or_else(|| panic!("the team folder (shared/fixtures) is not beside the checkout"));
    let mut seeds = Seeds::new();
    hyperfleet(&fixtures, &mut seeds);
    maestro(&fixtures, &mut seeds);
    operator(&fixtures, &mut seeds);
    repository(&mut seeds);
    kubernetes(&fixtures, &mut seeds);
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut written: BTreeSet<(&str, &[u8])> = BTreeSet::new();
    for ((target, name), bytes) in &seeds {
        // Many recordings carry the same value (an unchanged status across snapshots): one seed each.
        if !written.insert((target, bytes)) {
            continue;
        }
        let dir = corpus.join(target);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        *counts.entry(target).or_default() += 1;
    }
    for (target, count) in counts {
        println!("{target}: {count} seeds");
    }
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The JSON files of `dir`, by file stem, in order.
fn recordings(dir: &Path) -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            (stem, read_json(&p))
        })
        .collect()
}

fn put(seeds: &mut Seeds, target: &'static str, name: impl Into<String>, value: &Value) {
    let bytes = serde_json::to_vec(value).unwrap_or_else(|e| panic!("{e}"));
    seeds.insert((target, format!("{}.json", name.into())), bytes);
}

/// The HyperFleet API (`hyperfleet/real-api`, the framework examples, the spec shapes): cluster
/// and NodePool objects and specs, NodePool lists, ManagementCluster entities and lists, the
/// objects and status lists `diagnose` reads.
fn hyperfleet(fixtures: &Path, seeds: &mut Seeds) {
    let api = fixtures.join("hyperfleet/real-api");
    let mut object = None;
    let mut statuses = None;
    let mut nodepools = None;
    for (stem, rec) in recordings(&api) {
        let Some(body) = rec.pointer("/response/body").filter(|b| b.is_object()) else {
            continue;
        };
        let path = rec["request"]["path"].as_str().unwrap_or_default();
        let method = rec["request"]["method"].as_str().unwrap_or_default();
        let name = format!("real-api-{stem}");
        match body["kind"].as_str() {
            Some("Cluster") => {
                put(seeds, "cluster_spec", &name, body);
                object.get_or_insert_with(|| body.clone());
            }
            Some("NodePool") => put(seeds, "nodepool_spec", &name, body),
            Some("ManagementCluster") => {
                put(
                    seeds,
                    "management_clusters",
                    &name,
                    &json!({"items": [body]}),
                );
            }
            _ => {}
        }
        if let Some(request) = rec
            .pointer("/request/body")
            .filter(|b| b["spec"].is_object())
        {
            let target = if path.contains("/nodepools") {
                "nodepool_spec"
            } else if path.contains("/managementclusters") {
                "management_clusters"
            } else {
                "cluster_spec"
            };
            if target == "management_clusters" {
                put(seeds, target, format!("{name}-request"), &json!([request]));
            } else {
                put(seeds, target, format!("{name}-request"), request);
            }
        }
        if method == "GET" && body["items"].is_array() {
            if path.contains("/nodepools") {
                put(seeds, "hyperfleet_nodepool_list", &name, body);
                nodepools.get_or_insert_with(|| body.clone());
                for (i, item) in body["items"].as_array().into_iter().flatten().enumerate() {
                    put(seeds, "nodepool_spec", format!("{name}-item{i}"), item);
                }
            } else if path.contains("/managementclusters") {
                put(seeds, "management_clusters", &name, body);
            } else if path.ends_with("/statuses") {
                statuses.get_or_insert_with(|| body.clone());
            } else {
                for (i, item) in body["items"].as_array().into_iter().flatten().enumerate() {
                    put(seeds, "cluster_spec", format!("{name}-item{i}"), item);
                }
            }
        }
    }
    let hyperfleet = fixtures.join("hyperfleet");
    put(
        seeds,
        "cluster_spec",
        "example-cluster",
        &read_json(&hyperfleet.join("example-cluster.json")),
    );
    put(
        seeds,
        "nodepool_spec",
        "example-nodepool",
        &read_json(&hyperfleet.join("example-nodepool.json")),
    );
    for (stem, payload) in recordings(&hyperfleet.join("spec-shapes/e2e-payloads")) {
        let target = if stem.contains("nodepool") {
            "nodepool_spec"
        } else {
            "cluster_spec"
        };
        put(seeds, target, format!("e2e-{stem}"), &payload);
        if payload["spec"].is_object() {
            put(seeds, target, format!("e2e-{stem}-spec"), &payload["spec"]);
        }
    }
    // What `diagnose` reads, put together: one per shape of the object.
    let works: Vec<Value> = [
        "04-available",
        "06-apply-failure",
        "10c-delete-bundle-deleting",
    ]
    .iter()
    .map(|n| read_json(&fixtures.join(format!("maestro/real/{n}.json")))["body"].clone())
    .collect();
    let job = kubernetes_job(fixtures);
    let pod = adapter_pod(Some((1, "Error", "cannot read the cluster spec")));
    let deleting =
        read_json(&api.join("28-cluster-get-after-delete.json"))["response"]["body"].clone();
    let nodepool = read_json(&api.join("25-nodepool-get.json"))["response"]["body"].clone();
    for (name, kind, object, works) in [
        (
            "cluster-available",
            "cluster",
            object.unwrap_or_default(),
            vec![works[0].clone()],
        ),
        (
            "cluster-apply-failed",
            "cluster",
            deleting.clone(),
            vec![works[1].clone()],
        ),
        (
            "cluster-deleting",
            "cluster",
            deleting,
            vec![works[2].clone()],
        ),
        ("nodepool", "nodepool", nodepool, vec![]),
    ] {
        put(
            seeds,
            "diagnose",
            name,
            &json!({"kind": kind, "object": object, "statuses": statuses.clone().unwrap_or_default(),
                    "nodepools": nodepools.clone().unwrap_or_default(), "jobs": [job.clone()],
                    "pods": [pod.clone()], "works": works}),
        );
    }
    put(
        seeds,
        "diagnose",
        "nothing-readable",
        &json!({"kind": "cluster"}),
    );
}

/// The recorded bundles whose hub twin seeds `hub_manifestwork`: created without status, applied
/// without the HostedCluster's, available, degraded, failed to apply, the HostedCluster gone from
/// the cluster, being deleted, no manifests.
const HUB_STATES: [&str; 8] = ["01-", "02-", "04-", "05-", "06-", "08-", "10b-", "11p2-"];

/// Maestro (`maestro/real`): bundles, lists, error answers, CloudEvents; and every HostedCluster
/// status fed back in them.
fn maestro(fixtures: &Path, seeds: &mut Seeds) {
    for (stem, rec) in recordings(&fixtures.join("maestro/real")) {
        let name = format!("real-{stem}");
        let body = &rec["body"];
        match (rec["request"]["protocol"].as_str(), body["kind"].as_str()) {
            (Some("http"), Some("ResourceBundle")) => {
                put(seeds, "maestro_bundle", &name, body);
                feedback(body, &name, seeds);
                // A hub work repeats the scalar feedback rules (~25 KB) in every manifest config:
                // one per state the hub can be in, not one per recording.
                if HUB_STATES.iter().any(|s| stem.starts_with(s)) {
                    put(seeds, "hub_manifestwork", &name, &hub_work(body));
                }
            }
            (Some("http"), Some("ResourceBundleList")) => {
                put(seeds, "maestro_bundle_list", &name, body);
            }
            _ => {}
        }
        if let (Some("http"), Some(status)) =
            (rec["request"]["protocol"].as_str(), rec["status"].as_u64())
            && status >= 300
        {
            let mut bytes = u16::try_from(status).unwrap_or(500).to_be_bytes().to_vec();
            bytes.push(2);
            bytes.extend(serde_json::to_vec(body).unwrap_or_default());
            seeds.insert(("maestro_error", format!("{name}.bin")), bytes);
        }
        if rec["request"]["protocol"] == "grpc" {
            if let Some(code) = rec["grpc_code"].as_u64().filter(|c| *c != 0) {
                let mut bytes = 500u16.to_be_bytes().to_vec();
                bytes.push(u8::try_from(code).unwrap_or(2));
                bytes.extend(body["message"].as_str().unwrap_or_default().as_bytes());
                seeds.insert(("maestro_error", format!("{name}.bin")), bytes);
            }
            if let Some(event) = rec["request"].get("event") {
                seeds.insert(
                    ("maestro_cloudevent", format!("{name}.pb")),
                    proto_event(event),
                );
            }
            if let Some(event) = rec["request"].get("event_as_logged_by_server") {
                put(
                    seeds,
                    "maestro_cloudevent",
                    format!("{name}-structured"),
                    event,
                );
            }
        }
        if stem.starts_with("12-") {
            for (i, e) in body["events"].as_array().into_iter().flatten().enumerate() {
                seeds.insert(
                    ("maestro_cloudevent", format!("{name}-{i:02}.pb")),
                    proto_event(&e["event"]),
                );
            }
            seeds.insert(
                ("maestro_cloudevent", format!("{name}-heartbeat.pb")),
                proto_event(&body["heartbeats"]["first"]),
            );
        }
    }
    put(
        seeds,
        "hub_manifestwork",
        "manifestwork-watched",
        &read_json(&fixtures.join("maestro/manifestwork.watched.json")),
    );
    // The adapter's own spec events for the nested cluster fixture.
    let work = nested_work(Backend::Maestro);
    let events = SpecEventBuilder::new("hyperfleet-hypershift-adapter", "mgmt-euw2-01");
    for (action, event) in [
        ("create", events.create_request(&work)),
        ("update", events.update_request(&work)),
        ("delete", events.delete_request(&work)),
    ] {
        let event = event.unwrap_or_else(|e| panic!("{action}: {e}"));
        seeds.insert(
            ("maestro_cloudevent", format!("adapter-{action}-request.pb")),
            encode_sorted(event.to_proto()),
        );
    }
}

/// A recorded protobuf CloudEvent (rendered as JSON by the recording) as protobuf bytes.
fn proto_event(rendered: &Value) -> Vec<u8> {
    let text = |k: &str| rendered[k].as_str().unwrap_or_default().to_owned();
    let attributes = rendered["attributes"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(key, value)| {
            let (kind, v) = value.as_object()?.iter().next()?;
            let attr = match kind.as_str() {
                "ce_string" => Attr::CeString(v.as_str()?.to_owned()),
                "ce_integer" => Attr::CeInteger(i32::try_from(v.as_i64()?).ok()?),
                "ce_boolean" => Attr::CeBoolean(v.as_bool()?),
                "ce_uri" => Attr::CeUri(v.as_str()?.to_owned()),
                "ce_uri_ref" => Attr::CeUriRef(v.as_str()?.to_owned()),
                "ce_timestamp" => {
                    let t: jiff::Timestamp = v.as_str()?.parse().ok()?;
                    Attr::CeTimestamp(prost_types::Timestamp {
                        seconds: t.as_second(),
                        nanos: t.subsec_nanosecond(),
                    })
                }
                _ => return None,
            };
            Some((
                key.clone(),
                proto::CloudEventAttributeValue { attr: Some(attr) },
            ))
        })
        .collect();
    let data = match rendered["data_field"].as_str() {
        Some("binary_data") => Some(proto::cloud_event::Data::BinaryData(
            serde_json::to_vec(&rendered["binary_data"]).unwrap_or_default(),
        )),
        Some("text_data") => Some(proto::cloud_event::Data::TextData(text("text_data"))),
        _ => None,
    };
    encode_sorted(proto::CloudEvent {
        id: text("id"),
        source: text("source"),
        spec_version: text("spec_version"),
        r#type: text("type"),
        attributes,
        data,
    })
}

/// `event` in protobuf bytes with its attributes in key order, so a rebuild writes the same seed:
/// prost encodes a map in its `HashMap`'s order, which changes from run to run. A map is a
/// repeated field on the wire, and messages concatenated merge, so the event without attributes
/// followed by one message per attribute is the same event.
fn encode_sorted(mut event: proto::CloudEvent) -> Vec<u8> {
    let attributes: BTreeMap<String, proto::CloudEventAttributeValue> =
        std::mem::take(&mut event.attributes).into_iter().collect();
    let mut bytes = event.encode_to_vec();
    for (key, value) in attributes {
        let one = proto::CloudEvent {
            attributes: [(key, value)].into(),
            ..proto::CloudEvent::default()
        };
        bytes.extend(one.encode_to_vec());
    }
    bytes
}

/// The feedback values of a recorded bundle: each manifest's `jsonRaw` values as JSON, and the
/// hub's scalar values a work agent would report for the same HostedCluster status.
fn feedback(bundle: &Value, name: &str, seeds: &mut Seeds) {
    for (m, manifest) in bundle
        .pointer("/status/resourceStatus")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        for value in manifest
            .pointer("/statusFeedback/values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(raw) = value.pointer("/fieldValue/jsonRaw").and_then(Value::as_str) else {
                continue;
            };
            let Ok(status) = serde_json::from_str::<Value>(raw) else {
                continue;
            };
            let value_name = value["name"].as_str().unwrap_or("value");
            put(
                seeds,
                "work_feedback",
                format!("{name}-{m}-{value_name}"),
                &status,
            );
            if value_name == "status" {
                let object = json!({"status": status});
                let values = scalar_values(&controlplane::SCALAR_STATUS.json_paths(), &object);
                put(
                    seeds,
                    "work_feedback",
                    format!("{name}-{m}-scalars"),
                    &values,
                );
            }
        }
    }
}

/// The hub agent's scalar feedback of `object` for `json_paths`, by name, as JSON values.
fn scalar_values(json_paths: &[Value], object: &Value) -> Value {
    let rules = json!([{"type": "JSONPaths", "jsonPaths": json_paths}]);
    let (values, _) = testbed::ocm_feedback::evaluate(&rules, object);
    let map: serde_json::Map<String, Value> = values
        .iter()
        .filter_map(|v| {
            let field = &v["fieldValue"];
            let value = match field["type"].as_str()? {
                "String" => field["string"].clone(),
                "Integer" => field["integer"].clone(),
                "Boolean" => field["boolean"].clone(),
                _ => return None,
            };
            Some((v["name"].as_str()?.to_owned(), value))
        })
        .collect();
    Value::Object(map)
}

/// The ManifestWork an OCM hub would hold for a recorded bundle: the same manifests, the hub's
/// scalar feedback rules, and the agent's status with the values those rules give.
fn hub_work(bundle: &Value) -> Value {
    let configs: Vec<Value> = bundle["manifest_configs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let mut c = c.clone();
            c["feedbackRules"] = json!([{"type": "JSONPaths", "jsonPaths": controlplane::SCALAR_STATUS.json_paths()}]);
            c
        })
        .collect();
    let work = json!({
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "ManifestWork",
        "metadata": bundle["metadata"],
        "spec": {"workload": {"manifests": bundle["manifests"]}, "manifestConfigs": configs,
                 "deleteOption": bundle["delete_option"]},
    });
    let mut status = testbed::hub_agent::hub_status(&bundle["status"]);
    testbed::hub_agent::agent_feedback(&work, &mut status);
    let mut work = work;
    work["metadata"]["generation"] = bundle["version"].clone();
    work["metadata"]["resourceVersion"] = json!("4242");
    if !bundle["status"].is_null() {
        work["status"] = status;
    }
    work
}

/// The HyperShift operator's own objects (`hypershift-operator`): every HostedCluster and
/// NodePool status it wrote, as feedback.
fn operator(fixtures: &Path, seeds: &mut Seeds) {
    let dir = fixtures.join("hypershift-operator");
    for scenario in ["a-no-route-crd", "b-gke-like", "c-deletion"] {
        for (stem, snapshot) in recordings(&dir.join(scenario)) {
            let objects: Vec<&Value> = match &snapshot {
                Value::Array(events) => events.iter().map(|e| &e["object"]).collect(),
                Value::Object(o) if o.contains_key("hostedclusters") => o["hostedclusters"]
                    .as_array()
                    .into_iter()
                    .chain(o["nodepools"].as_array())
                    .flatten()
                    .collect(),
                other => vec![other],
            };
            for (i, object) in objects.iter().enumerate() {
                if object["status"].is_object() {
                    put(
                        seeds,
                        "work_feedback",
                        format!("operator-{scenario}-{stem}-{i}"),
                        &object["status"],
                    );
                }
            }
        }
    }
}

/// The cluster spec the adapter's examples validate, and the work it builds for `backend`.
fn nested_work(backend: Backend) -> Value {
    let input =
        ClusterInput::from_json(hypershift_fuzz::CLUSTER_NESTED).unwrap_or_else(|e| panic!("{e}"));
    let spec = ClusterSpec::validate(
        hypershift_fuzz::CLUSTER_ID,
        input.name.as_deref(),
        &input.spec,
    )
    .unwrap_or_else(|v| panic!("{v:?}"));
    controlplane::manifest_work_for(backend, &spec, "mgmt-euw2-01", Some(3))
}

/// The repository's own examples: the adapter's fixtures, the inventory example, reports.
fn repository(seeds: &mut Seeds) {
    let repo = Path::new(REPO);
    let fixtures = repo.join("adapter/tests/fixtures");
    for (stem, value) in recordings(&fixtures) {
        let target = if stem.starts_with("nodepool") {
            "nodepool_spec"
        } else {
            "cluster_spec"
        };
        put(seeds, target, format!("repo-{stem}"), &value);
        put(seeds, target, format!("repo-{stem}-spec"), &value["spec"]);
    }
    put(
        seeds,
        "management_clusters",
        "repo-manifests-management-clusters",
        &read_json(&repo.join("manifests/management-clusters.json")),
    );
    put(
        seeds,
        "hyperfleet_nodepool_list",
        "empty",
        &json!({"items": [], "total": 0}),
    );
    put(
        seeds,
        "hub_manifestwork",
        "repo-hub-work",
        &nested_work(Backend::Hub),
    );

    // Reports: what the adapter writes (a row of each pulse), the reporter's own, the legacy form.
    let mut ready = controlplane::report_created(
        hypershift_adapter::work::outcome::WorkRef {
            consumer: "mgmt-euw2-01",
            name: "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
        },
        Some(3),
    );
    hypershift_adapter::placement::set_management_cluster(&mut ready, "mgmt-euw2-01");
    let invalid = controlplane::report_invalid_spec(
        &[hypershift_adapter::hyperfleet::spec::SpecViolation {
            field: "spec.dns.baseDomain",
            problem: "is required".to_owned(),
        }],
        Some(2),
    );
    for (name, report) in [
        ("adapter-created", ready),
        ("adapter-invalid-spec", invalid),
    ] {
        seeds.insert(
            ("report_file", format!("{name}.json")),
            serde_json::to_vec(&report).unwrap_or_default(),
        );
    }
    put(
        seeds,
        "report_file",
        "legacy",
        &json!({"status": "success", "reason": "ClusterReady", "message": "ok"}),
    );
    put(
        seeds,
        "report_file",
        "not-a-report",
        &json!({"conditions": {}}),
    );
}

/// The Kubernetes objects: the pulse Job (the framework example, the shipped template with a
/// reporter's status), the adapter's Pod in each way it ends, placement Leases, kubeconfigs.
fn kubernetes(fixtures: &Path, seeds: &mut Seeds) {
    put(
        seeds,
        "kube_job",
        "framework-example-job",
        &kubernetes_job(fixtures),
    );
    let mut job = shipped_job();
    job["status"] = json!({"startTime": "2026-11-26T11:59:00Z", "active": 1, "conditions": [
        {"type": "Available", "status": "True", "reason": "ControlPlaneReady", "message": "ready",
         "lastTransitionTime": "2026-11-26T11:59:30Z", "lastProbeTime": "2026-11-26T11:59:30Z"}]});
    job["metadata"]["annotations"] = json!({"hyperfleet.io/report-data": "{\"version\":\"4.17.0\"}",
        "data.hyperfleet.io/version": "4.17.0", "data.hyperfleet.io/gone": "x"});
    job["metadata"]["resourceVersion"] = json!("4242");
    put(seeds, "kube_job", "shipped-job-reported", &job);
    put(seeds, "kube_job", "shipped-job", &shipped_job());

    for (name, end) in [
        ("running", None),
        ("completed", Some((0, "Completed", ""))),
        (
            "error",
            Some((
                1,
                "Error",
                "{\"level\":\"ERROR\",\"fields\":{\"message\":\"bad configuration\"}}",
            )),
        ),
        ("oom", Some((137, "OOMKilled", ""))),
    ] {
        let pod = adapter_pod(end);
        put(
            seeds,
            "kube_pod",
            format!("{name}-event"),
            &json!({"type": "MODIFIED", "object": pod}),
        );
        put(seeds, "kube_pod", name, &pod);
    }

    let lease = |holder: &str, renewed: &str, transitions: i32| {
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
               "metadata": {"name": "hypershift-placement-6f1c8e2a-5b7d-5c3e-9a4f-2d1b0c9e8f7a",
                            "namespace": "hyperfleet-system", "resourceVersion": "812"},
               "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15,
                        "acquireTime": renewed, "renewTime": renewed, "leaseTransitions": transitions}})
    };
    put(
        seeds,
        "kube_lease",
        "held",
        &lease(
            "hostedcluster-019a6f1e-x7k2p",
            "2999-01-01T00:00:00.000000Z",
            3,
        ),
    );
    put(
        seeds,
        "kube_lease",
        "expired",
        &lease(
            "hostedcluster-019a6f1e-x7k2p",
            "2026-11-26T11:00:00.000000Z",
            3,
        ),
    );
    put(
        seeds,
        "kube_lease",
        "released",
        &lease("", "2026-11-26T11:00:00.000000Z", 0),
    );

    let base = "apiVersion: v1\nkind: Config\ncurrent-context: hub\nclusters:\n- name: hub\n  cluster:\n    server: https://hub.example.com:6443\n";
    let context = "contexts:\n- name: hub\n  context: {cluster: hub, user: adapter, namespace: hyperfleet-system}\n";
    for (name, cluster, user) in [
        (
            "files",
            "    certificate-authority: ca.crt\n",
            "  user:\n    client-certificate: client.crt\n    client-key: client.key\n",
        ),
        (
            "token-file",
            "    certificate-authority: ca.crt\n",
            "  user:\n    tokenFile: token\n",
        ),
        (
            "inline-token",
            "    insecure-skip-tls-verify: true\n",
            "  user:\n    token: eyJhbGciOiJSUzI1NiJ9.e30.c2ln\n",
        ),
        (
            "exec",
            "    certificate-authority: ca.crt\n",
            "  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ./get-token\n      interactiveMode: Never\n",
        ),
        (
            "missing-file",
            "    certificate-authority: /nonexistent/ca.crt\n",
            "  user:\n    token: t\n",
        ),
    ] {
        let text = format!("{base}{cluster}{context}users:\n- name: adapter\n{user}");
        seeds.insert(("kubeconfig", format!("{name}.yaml")), text.into_bytes());
    }
}

/// The Job of the framework's Kubernetes example (`dryrun-discovery.json`).
fn kubernetes_job(fixtures: &Path) -> Value {
    read_json(
        &fixtures
            .join("hyperfleet/hyperfleet-adapter/charts/examples/kubernetes/dryrun-discovery.json"),
    )["hello-world-job"]
        .clone()
}

/// The shipped Job template (`manifests/job.yaml`), its placeholders filled.
fn shipped_job() -> Value {
    let path = Path::new(REPO).join("manifests/job.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut job = docs
        .into_iter()
        .find(|d| d["kind"] == "Job")
        .unwrap_or_else(|| panic!("no Job in {}", path.display()));
    job["metadata"]["name"] = json!("hypershift-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-3");
    job
}

/// The pulse Pod of the shipped Job as the kubelet reports it: every container running, or the
/// adapter container `end`ed (exit code, reason, message) while the reporter still runs.
fn adapter_pod(end: Option<(i32, &str, &str)>) -> Value {
    let job = shipped_job();
    let spec = &job["spec"]["template"]["spec"];
    let started = "2026-11-26T11:59:02Z";
    let statuses: Vec<Value> = spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let mut status = json!({"name": c["name"], "image": c["image"], "imageID": "",
                "ready": true, "restartCount": 0, "started": true,
                "state": {"running": {"startedAt": started}}});
            if let Some((code, reason, message)) = end.filter(|_| c["name"] == "adapter") {
                let mut terminated = json!({"exitCode": code, "reason": reason,
                    "startedAt": started, "finishedAt": "2026-11-26T11:59:20Z"});
                if !message.is_empty() {
                    terminated["message"] = json!(message);
                }
                status["state"] = json!({"terminated": terminated});
                status["ready"] = json!(false);
                status["started"] = json!(false);
            }
            status
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "hypershift-019a6f1e-3-x7k2p", "namespace": "hyperfleet-system",
                     "resourceVersion": "977",
                     "labels": {"batch.kubernetes.io/job-name": job["metadata"]["name"], "job-name": job["metadata"]["name"]}},
        "spec": spec,
        "status": {"phase": "Running", "startTime": "2026-11-26T11:59:00Z", "containerStatuses": statuses}})
}
