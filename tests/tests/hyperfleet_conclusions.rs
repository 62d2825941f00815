//! What HyperFleet concludes from our reports. Each report is built exactly as the framework
//! builds it — the project's real task config run through the framework emulation
//! (`hyperfleet_support::bridge`) — and PUT to the testbed's HyperFleet API
//! (`testbed::hyperfleet::fake_api`, which the recordings of the real API hold to its rules);
//! the tests then read the cluster's and NodePool's aggregated conditions back.
//!
//! The bridge tests use pulse Jobs written by the status-reporter's own functions
//! (`testbed::hyperfleet::outcomes`); the end-to-end tests run the real binaries against the fake
//! Kubernetes API server and fake Maestro ([`World`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(
    dead_code,
    reason = "the conformance test uses the rest of the emulation"
)]
mod hyperfleet_support;

use hyperfleet_support::bridge::{Adapter, Bridge};
use jiff::Timestamp;
use serde_json::{Value, json};
use testbed::hyperfleet::fake_api::{Clock, Config, FakeHyperfleetApi, PREFIX};
use testbed::hyperfleet::outcomes;

/// The longest cluster name the recorded server allows (53).
const CLUSTER_NAME: &str = "prod-europe-west2-hosted-control-plane-0123456789-abc";
/// The longest NodePool name (15).
const NODEPOOL_NAME: &str = "workers-a-12345";
/// The other adapters HyperFleet requires for a cluster, and for a NodePool.
const OTHER_CLUSTER_ADAPTERS: [&str; 3] = ["validation", "dns", "pullsecret"];

fn start_time() -> Timestamp {
    "2026-11-26T14:14:42Z".parse().unwrap()
}

async fn fake_api() -> FakeHyperfleetApi {
    FakeHyperfleetApi::start(Config::recorded(), Clock::at(start_time()))
        .await
        .unwrap()
}

/// Creates a cluster with the longest name; returns its path.
fn create_cluster(api: &FakeHyperfleetApi, spec: &Value) -> String {
    let created = api.must(
        "POST",
        &format!("{PREFIX}/clusters"),
        Some(&json!({"kind": "Cluster", "name": CLUSTER_NAME, "labels": {"team": "platform"}, "spec": spec})),
    );
    created["href"].as_str().unwrap().to_owned()
}

/// Creates a NodePool of the cluster at `cluster`; returns its path.
fn create_nodepool(api: &FakeHyperfleetApi, cluster: &str, spec: &Value) -> String {
    let created = api.must(
        "POST",
        &format!("{cluster}/nodepools"),
        Some(&json!({"kind": "NodePool", "name": NODEPOOL_NAME, "spec": spec})),
    );
    created["href"].as_str().unwrap().to_owned()
}

/// Another adapter's report at the object's current generation, in the recordings' shape
/// (`real-api/15-17`, and `34`-`43` while deleting): `Available` as given, `Finalized=True` once
/// the object is deleted.
fn other_adapter_reports(
    api: &FakeHyperfleetApi,
    object: &str,
    adapter: &str,
    available: bool,
) -> u16 {
    let served = api.must("GET", object, None);
    let deleting = served.get("deleted_time").is_some();
    let word = |b: bool| if b { "True" } else { "False" };
    let body = json!({
        "adapter": adapter,
        "observed_generation": served["generation"],
        "observed_time": api.clock().now().to_string(),
        "conditions": [
            {"type": "Applied", "status": "True", "reason": "ManifestsApplied", "message": "resources applied"},
            {"type": "Available", "status": word(available), "reason": if available { "Ready" } else { "NotReady" }, "message": format!("available={}", word(available))},
            {"type": "Health", "status": "True", "reason": "Healthy", "message": "adapter healthy"},
            {"type": "Finalized", "status": word(deleting), "reason": if deleting { "Finalized" } else { "NotFinalizing" }, "message": format!("finalized={}", word(deleting))},
        ],
        "data": {},
    });
    api.call(
        "PUT",
        &format!("{object}/statuses"),
        Some(&body.to_string()),
    )
    .status
}

/// `(status, observed_generation, reason)` of the object's condition `type_` (`None` if absent
/// or the object is gone).
fn conclusion(api: &FakeHyperfleetApi, object: &str, type_: &str) -> Option<(String, i64, String)> {
    let reply = api.call("GET", object, None);
    if reply.status != 200 {
        return None;
    }
    reply.body["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .map(|c| {
            (
                c["status"].as_str().unwrap().to_owned(),
                c["observed_generation"].as_i64().unwrap(),
                c["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
}

fn generation(api: &FakeHyperfleetApi, object: &str) -> i64 {
    api.must("GET", object, None)["generation"]
        .as_i64()
        .unwrap()
}

/// The adapter's report when all is well: Applied, Available, Health True.
fn success_report(generation: i64) -> job_report::Report {
    use job_report::{Condition, ConditionStatus::True};
    job_report::Report {
        observed_generation: Some(generation),
        ..job_report::Report::new(vec![
            Condition::new(
                "Applied",
                True,
                "ManifestWorkApplied",
                "ManifestWork applied",
            ),
            Condition::new("Available", True, "HostedClusterAvailable", "available"),
            Condition::new("Health", True, "Healthy", "ok"),
        ])
    }
}

/// The pulse Job as discovery finds it once the status-reporter wrote `report` and the pod
/// ended.
fn reported_job(manifest: &Value, report: &job_report::Report) -> Value {
    let now = start_time();
    let job = outcomes::running(&outcomes::created(manifest, now), now);
    outcomes::finished(&outcomes::reported(&job, report, now), true, now)
}

#[tokio::test]
async fn the_bridge_puts_the_task_configs_body_and_hyperfleet_concludes_reconciled() {
    let api = fake_api().await;
    let bridge = Bridge::load(Adapter::ControlPlane, &api);
    let cluster = create_cluster(&api, &json!({}));
    // Before the other adapters report Available=True, the preconditions hold the event: no
    // Job, no PUT.
    let held = bridge.report(&api, &cluster, &|m| reported_job(m, &success_report(1)));
    assert!(held.answer.is_none(), "{:?}", held.run.sent);
    for adapter in OTHER_CLUSTER_ADAPTERS {
        assert_eq!(other_adapter_reports(&api, &cluster, adapter, true), 201);
    }
    let reported = bridge.report(&api, &cluster, &|m| reported_job(m, &success_report(1)));
    let answer = reported
        .answer
        .expect("the config PUTs the Job's conditions");
    assert_eq!(answer.status, 201, "{}", answer.body);
    // The stored report is the body the config built.
    let sent: Value = serde_json::from_str(reported.run.sent[0].body.as_deref().unwrap()).unwrap();
    assert_eq!(answer.body["adapter"], sent["adapter"]);
    assert_eq!(
        answer.body["observed_generation"],
        sent["observed_generation"]
    );
    assert_eq!(
        answer.body["conditions"].as_array().unwrap().len(),
        sent["conditions"].as_array().unwrap().len()
    );
    let at = |t| conclusion(&api, &cluster, t);
    assert_eq!(at("HypershiftSuccessful").unwrap().0, "True");
    assert_eq!(
        at("Reconciled").unwrap(),
        ("True".into(), 1, "ReconciledAll".into())
    );
    assert_eq!(
        at("LastKnownReconciled").unwrap(),
        ("True".into(), 1, "AllAdaptersReconciled".into())
    );
}

#[tokio::test]
async fn a_job_without_a_report_is_stored_once_and_then_discarded_by_rule_13() {
    let api = fake_api().await;
    let bridge = Bridge::load(Adapter::ControlPlane, &api);
    let cluster = create_cluster(&api, &json!({}));
    for adapter in OTHER_CLUSTER_ADAPTERS {
        other_adapter_reports(&api, &cluster, adapter, true);
    }
    // The Job just created: Available=Unknown (JobRunning). First-ever report: stored, no
    // conclusion drawn from it.
    let first = bridge.report(&api, &cluster, &|m| outcomes::created(m, start_time()));
    assert_eq!(first.answer.unwrap().status, 201);
    assert_eq!(conclusion(&api, &cluster, "HypershiftSuccessful"), None);
    api.clock().advance(jiff::SignedDuration::from_secs(1));
    let done = bridge.report(&api, &cluster, &|m| reported_job(m, &success_report(1)));
    assert_eq!(done.answer.unwrap().status, 201);
    api.clock().advance(jiff::SignedDuration::from_secs(1));
    let again = bridge.report(&api, &cluster, &|m| outcomes::created(m, start_time()));
    assert_eq!(
        again.answer.unwrap().status,
        204,
        "a later Unknown is discarded"
    );
    assert_eq!(
        conclusion(&api, &cluster, "HypershiftSuccessful")
            .unwrap()
            .0,
        "True"
    );
}

#[tokio::test]
async fn the_nodepool_bridge_reports_under_the_cluster() {
    let api = fake_api().await;
    let bridge = Bridge::load(Adapter::NodePool, &api);
    let cluster = create_cluster(&api, &json!({}));
    let nodepool = create_nodepool(&api, &cluster, &json!({"replicas": 3}));
    assert_eq!(
        other_adapter_reports(&api, &nodepool, "validation", true),
        201
    );
    let reported = bridge.report(&api, &nodepool, &|m| reported_job(m, &success_report(1)));
    assert_eq!(reported.answer.unwrap().status, 201);
    assert_eq!(
        conclusion(&api, &nodepool, "Reconciled").unwrap(),
        ("True".into(), 1, "ReconciledAll".into())
    );
    assert_eq!(generation(&api, &nodepool), 1);
}
