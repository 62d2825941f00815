//! What the recordings do not show but the docs state (§7.2, §7.4) or the real server's code
//! does; the recorded behaviour is pinned by `tests/tests/hyperfleet_api_replay.rs`.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::*;

const CLUSTER_NAME: &str = "prod-europe-west2-hosted-control-plane-0123456789-abc"; // 53
const NODEPOOL_NAME: &str = "workers-a-12345"; // 15

fn at() -> Timestamp {
    "2026-11-26T14:14:42Z".parse().unwrap()
}

async fn api() -> FakeHyperfleetApi {
    FakeHyperfleetApi::start(Config::recorded(), Clock::at(at()))
        .await
        .unwrap()
}

fn report(
    adapter: &str,
    generation: i64,
    available: &str,
    finalized: &str,
    at: Timestamp,
) -> Value {
    json!({
        "adapter": adapter, "observed_generation": generation, "observed_time": at.to_string(),
        "conditions": [
            {"type": "Applied", "status": "True", "reason": "ManifestsApplied", "message": "applied"},
            {"type": "Available", "status": available, "reason": "R", "message": "m"},
            {"type": "Health", "status": "True", "reason": "Healthy", "message": "ok"},
            {"type": "Finalized", "status": finalized, "reason": "F", "message": "f"},
        ],
    })
}

fn cluster(api: &FakeHyperfleetApi) -> String {
    assert_eq!(CLUSTER_NAME.len(), 53);
    let created = api.must(
        "POST",
        &format!("{PREFIX}/clusters"),
        Some(&json!({"kind": "Cluster", "name": CLUSTER_NAME, "spec": {}})),
    );
    format!("{PREFIX}/clusters/{}", created["id"].as_str().unwrap())
}

fn put(api: &FakeHyperfleetApi, path: &str, body: &Value) -> Reply {
    api.call("PUT", &format!("{path}/statuses"), Some(&body.to_string()))
}

fn condition<'v>(resource: &'v Value, type_: &str) -> Option<&'v Value> {
    resource["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == type_)
}

#[tokio::test]
async fn rule_13_a_later_unknown_is_discarded_and_a_first_unknown_is_stored_without_a_conclusion() {
    let api = api().await;
    let path = cluster(&api);
    // First-ever report with Available=Unknown: 201, stored, but no HypershiftSuccessful.
    let first = put(
        &api,
        &path,
        &report("hypershift", 1, "Unknown", "False", at()),
    );
    assert_eq!(first.status, 201);
    let served = api.must("GET", &path, None);
    assert_eq!(condition(&served, "HypershiftSuccessful"), None);
    assert_eq!(
        api.must("GET", &format!("{path}/statuses"), None)["total"],
        1
    );
    // A True, then a later Unknown: 204, the True stays.
    api.clock().advance(SignedDuration::from_secs(1));
    let t = api.clock().now();
    assert_eq!(
        put(&api, &path, &report("hypershift", 1, "True", "False", t)).status,
        201
    );
    api.clock().advance(SignedDuration::from_secs(1));
    let t = api.clock().now();
    let later = put(&api, &path, &report("hypershift", 1, "Unknown", "False", t));
    assert_eq!((later.status, later.body), (204, Value::Null));
    let served = api.must("GET", &path, None);
    assert_eq!(
        condition(&served, "HypershiftSuccessful").unwrap()["status"],
        "True"
    );
}

#[tokio::test]
async fn rule_7_the_observed_time_window_follows_the_clock() {
    let api = api().await;
    let path = cluster(&api);
    let now = api.clock().now();
    let future = put(
        &api,
        &path,
        &report(
            "dns",
            1,
            "True",
            "False",
            now + SignedDuration::from_mins(6),
        ),
    );
    assert_eq!(future.status, 400);
    assert_eq!(
        future.body["detail"],
        "observed_time must not be more than 5m0s in the future"
    );
    let past = put(
        &api,
        &path,
        &report(
            "dns",
            1,
            "True",
            "False",
            now - SignedDuration::from_mins(31),
        ),
    );
    assert_eq!(
        past.body["detail"],
        "observed_time must not be more than 30m0s in the past"
    );
    // The same report is inside the window once the clock has moved.
    api.clock().advance(SignedDuration::from_mins(2));
    let ok = put(
        &api,
        &path,
        &report(
            "dns",
            1,
            "True",
            "False",
            now + SignedDuration::from_mins(6),
        ),
    );
    assert_eq!(ok.status, 201);
    // Rule 11: an earlier observation at the same generation is discarded.
    let earlier = put(&api, &path, &report("dns", 1, "False", "False", now));
    assert_eq!(earlier.status, 204);
}

#[tokio::test]
async fn rule_8_comes_after_the_body_rules_and_checks_the_owner() {
    let api = api().await;
    let path = cluster(&api);
    let missing = format!("{PREFIX}/clusters/019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b");
    let bad = api.call("PUT", &format!("{missing}/statuses"), Some("{}"));
    assert_eq!(bad.body["detail"], "adapter is required");
    let gone = put(&api, &missing, &report("dns", 1, "True", "False", at()));
    assert_eq!(gone.status, 404);
    assert_eq!(gone.body["code"], "HYPERFLEET-NTF-001");
    assert_eq!(
        gone.body["detail"],
        "Cluster with id='019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b' not found"
    );
    // A NodePool under another cluster is not found there.
    let pool = api.must(
        "POST",
        &format!("{path}/nodepools"),
        Some(&json!({"kind": "NodePool", "name": NODEPOOL_NAME, "spec": {"replicas": 3}})),
    );
    let other = cluster_named(&api, "prod-other");
    let id = pool["id"].as_str().unwrap();
    let elsewhere = api.call("GET", &format!("{other}/nodepools/{id}"), None);
    assert_eq!(elsewhere.status, 404);
    assert_eq!(
        elsewhere.body["detail"],
        format!("NodePool with id='{id}' not found")
    );
    assert_eq!(
        api.call("GET", &format!("{path}/nodepools/{id}"), None)
            .status,
        200
    );
    assert_eq!(
        api.call("GET", &format!("{PREFIX}/nodepools/{id}"), None)
            .status,
        200
    );
}

fn cluster_named(api: &FakeHyperfleetApi, name: &str) -> String {
    let created = api.must(
        "POST",
        &format!("{PREFIX}/clusters"),
        Some(&json!({"kind": "Cluster", "name": name, "spec": {}})),
    );
    format!("{PREFIX}/clusters/{}", created["id"].as_str().unwrap())
}

#[tokio::test]
async fn a_deleted_parent_waits_for_its_children_then_is_hard_deleted() {
    let api = api().await;
    let path = cluster(&api);
    let pool = api.must(
        "POST",
        &format!("{path}/nodepools"),
        Some(&json!({"kind": "NodePool", "name": NODEPOOL_NAME, "spec": {"replicas": 3}})),
    );
    let pool_path = format!("{path}/nodepools/{}", pool["id"].as_str().unwrap());
    let deleted = api.call("DELETE", &path, None);
    assert_eq!(
        (deleted.status, &deleted.body["generation"]),
        (202, &json!(2))
    );
    // Every cluster adapter finalizes before the NodePool does: the cluster waits.
    for adapter in ["validation", "dns", "pullsecret", "hypershift"] {
        assert_eq!(
            put(&api, &path, &report(adapter, 2, "False", "True", at())).status,
            201
        );
    }
    assert_eq!(api.call("GET", &path, None).status, 200, "a child remains");
    // The NodePool finalizes at its bumped generation: it goes.
    for adapter in ["validation", "hypershift"] {
        assert_eq!(
            put(&api, &pool_path, &report(adapter, 2, "False", "True", at())).status,
            201
        );
    }
    assert_eq!(api.call("GET", &pool_path, None).status, 404);
    // The next cluster report finds no child left.
    api.clock().advance(SignedDuration::from_secs(1));
    let t = api.clock().now();
    assert_eq!(
        put(&api, &path, &report("dns", 2, "False", "True", t)).status,
        201
    );
    assert_eq!(api.call("GET", &path, None).status, 404);
}

/// With cascade no active child outlives its parent's DELETE, so the reason is checked on the
/// aggregation itself.
#[test]
fn reconciled_waits_for_active_children_of_a_deleted_resource() {
    let statuses = vec![AdapterStatus {
        adapter: "hypershift".into(),
        observed_generation: 2,
        conditions: vec![
            json!({"type": "Available", "status": "False"}),
            json!({"type": "Finalized", "status": "True"}),
        ],
        data: json!({}),
        metadata: None,
        created_time: at(),
        last_report_time: at(),
    }];
    let required = vec!["hypershift".to_owned()];
    let conditions = aggregation::aggregate(&aggregation::Input {
        generation: 2,
        ref_time: at(),
        deleting: true,
        has_active_children: true,
        required: &required,
        statuses: &statuses,
        previous: &[],
    });
    assert_eq!(
        conditions[0].reason.as_deref(),
        Some("ReconciledWaitingForChildren")
    );
    assert_eq!(conditions[0].status, "False");
}

#[tokio::test]
async fn writes_on_deleted_resources_and_bad_requests_get_the_servers_problems() {
    let api = api().await;
    let path = cluster(&api);
    let dup = api.call(
        "POST",
        &format!("{PREFIX}/clusters"),
        Some(&json!({"kind": "Cluster", "name": CLUSTER_NAME, "spec": {}}).to_string()),
    );
    assert_eq!(
        (dup.status, &dup.body["code"]),
        (409, &json!("HYPERFLEET-CNF-001"))
    );
    let long = api.call(
        "POST",
        &format!("{PREFIX}/clusters"),
        Some(
            &json!({"kind": "Cluster", "name": format!("{CLUSTER_NAME}x"), "spec": {}}).to_string(),
        ),
    );
    assert_eq!(long.body["detail"], "name must be at most 53 characters");
    let flat = api.call(
        "POST",
        &format!("{PREFIX}/nodepools"),
        Some(&json!({"kind": "NodePool", "name": NODEPOOL_NAME, "spec": {}}).to_string()),
    );
    assert_eq!(flat.status, 422);
    let search = api.call(
        "GET",
        &format!("{PREFIX}/clusters?search=name%3D%27x%27%20or%20name%3D%27y%27"),
        None,
    );
    assert_eq!(
        (search.status, &search.body["code"]),
        (400, &json!("HYPERFLEET-VAL-007"))
    );
    let unknown = api.call("PATCH", &path, Some(r#"{"name": "x"}"#));
    assert_eq!(
        unknown.body["detail"],
        "Invalid request format: json: unknown field \"name\""
    );
    // Same spec: no bump; labels change: bump.
    assert_eq!(
        api.must("PATCH", &path, Some(&json!({"spec": {}})))["generation"],
        1
    );
    assert_eq!(
        api.must(
            "PATCH",
            &path,
            Some(&json!({"labels": {"team": "platform"}}))
        )["generation"],
        2
    );
    assert_eq!(api.call("DELETE", &path, None).status, 202);
    assert_eq!(
        api.must("DELETE", &path, None)["generation"],
        3,
        "one bump only"
    );
    let patch = api.call("PATCH", &path, Some(r#"{"spec": {"a": 1}}"#));
    assert_eq!(
        (patch.status, &patch.body["code"]),
        (409, &json!("HYPERFLEET-CNF-003"))
    );
    let child = api.call(
        "POST",
        &format!("{path}/nodepools"),
        Some(&json!({"kind": "NodePool", "name": NODEPOOL_NAME, "spec": {}}).to_string()),
    );
    assert_eq!(child.status, 409);
    let nowhere = api.call("GET", &format!("{PREFIX}/widgets"), None);
    assert_eq!(
        (nowhere.status, &nowhere.body["code"]),
        (404, &json!("HYPERFLEET-NTF-000"))
    );
    assert_eq!(
        api.call("POST", &format!("{path}/statuses"), Some("{}"))
            .status,
        405
    );
}

#[tokio::test]
async fn a_configured_token_is_required_over_http() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let api = FakeHyperfleetApi::start(Config::recorded().with_token("s3cr3t"), Clock::at(at()))
        .await
        .unwrap();
    let url = format!("{}{PREFIX}/clusters", api.url());
    let client = reqwest::Client::new();
    let none = client.get(&url).send().await.unwrap();
    assert_eq!(none.status().as_u16(), 401);
    let body: Value = none.json().await.unwrap();
    assert_eq!(body["code"], "HYPERFLEET-AUT-001");
    let wrong = client.get(&url).bearer_auth("other").send().await.unwrap();
    assert_eq!(wrong.status().as_u16(), 401);
    let right = client.get(&url).bearer_auth("s3cr3t").send().await.unwrap();
    assert_eq!(right.status().as_u16(), 200);
}
