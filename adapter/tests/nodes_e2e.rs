//! End to end: the built `hypershift-adapter nodes` binary, a kubeconfig with a bearer token,
//! and a small fake API server; checks the report file, the exit code and that no credential
//! reaches the report or the logs.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hypershift_adapter::nodes::testing;
use jiff::Timestamp;
use serde_json::{Value, json};

const TOKEN: &str = "e2e-bearer-token-must-not-leak";

struct Api {
    nodes: Vec<Value>,
    leases: Vec<Value>,
}

fn page(items: &[Value], kind: &str, q: &HashMap<String, String>) -> Response {
    let start: usize = q.get("continue").map_or(0, |c| c.parse().unwrap());
    let limit: usize = q.get("limit").map_or(items.len(), |l| l.parse().unwrap());
    let end = (start + limit).min(items.len());
    let mut metadata = json!({});
    if end < items.len() {
        metadata["continue"] = json!(end.to_string());
    }
    axum::Json(json!({"kind": kind, "apiVersion": "v1", "metadata": metadata, "items": &items[start..end]}))
        .into_response()
}

/// The page when the bearer token is right, the API server's 401 `Status` otherwise.
fn authorized(headers: &HeaderMap, page: impl FnOnce() -> Response) -> Response {
    let ok = headers
        .get("authorization")
        .is_some_and(|v| v.as_bytes() == format!("Bearer {TOKEN}").as_bytes());
    if ok {
        return page();
    }
    let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Unauthorized", "reason": "Unauthorized", "code": 401});
    (StatusCode::UNAUTHORIZED, axum::Json(status)).into_response()
}

/// Serves `n` synthetic nodes (and their leases) on 127.0.0.1:0; returns the URL.
async fn serve(n: usize, now: Timestamp) -> String {
    let cluster = testing::synthetic_cluster(n, 17, now);
    let api = Arc::new(Api {
        nodes: cluster
            .iter()
            .map(|c| serde_json::to_value(testing::node_object(&c.summary)).unwrap())
            .collect(),
        leases: cluster
            .iter()
            .map(|c| serde_json::to_value(testing::lease_object(&c.lease)).unwrap())
            .collect(),
    });
    let app = Router::new()
        .route(
            "/api/v1/nodes",
            get(
                |State(api): State<Arc<Api>>,
                 headers: HeaderMap,
                 Query(q): Query<HashMap<String, String>>| async move {
                    authorized(&headers, || page(&api.nodes, "NodeList", &q))
                },
            ),
        )
        .route(
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
            get(
                |State(api): State<Arc<Api>>,
                 headers: HeaderMap,
                 Query(q): Query<HashMap<String, String>>| async move {
                    authorized(&headers, || page(&api.leases, "LeaseList", &q))
                },
            ),
        )
        .with_state(api);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn kubeconfig(dir: &Path, server: &str, token: &str) -> std::path::PathBuf {
    let path = dir.join("kubeconfig");
    let text = format!(
        "apiVersion: v1
kind: Config
clusters:
- name: hosted
  cluster:
    server: {server}
users:
- name: admin
  user:
    token: {token}
contexts:
- name: hosted
  context:
    cluster: hosted
    user: admin
current-context: hosted
"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs the binary with a clean environment plus `envs`, off the runtime so the fake serves.
async fn adapter(args: Vec<String>, envs: Vec<(&'static str, String)>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_hypershift-adapter"))
            .arg("nodes")
            .args(args)
            .env_clear()
            .envs(envs)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn read_report(path: &Path) -> (String, job_report::Report) {
    let text = std::fs::read_to_string(path).unwrap();
    let report = job_report::parse(text.as_bytes(), "Available").unwrap();
    (text, report)
}

#[tokio::test]
async fn checks_a_cluster_through_a_kubeconfig_and_writes_the_report() {
    let now = Timestamp::now();
    let server = serve(1200, now).await;
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(dir.path(), &server, TOKEN);
    let extra = dir.path().join("extra-kubeconfig");
    std::fs::write(
        &extra,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: other\n  cluster:\n    server: https://other.invalid\n",
    )
    .unwrap();
    let results = dir.path().join("adapter-report.json");
    let out = adapter(
        vec!["--page-size".into(), "500".into()],
        vec![
            // A `:`-list like kubectl accepts; the missing-context file merges in harmlessly.
            (
                "KUBECONFIG",
                format!("{}:{}", config.display(), extra.display()),
            ),
            ("RESULTS_PATH", results.display().to_string()),
            ("CLUSTER_ID", "cluster-e2e".into()),
            ("GENERATION", "7".into()),
            ("VERIFICATION_TAINTS", testing::SYNTHETIC_TAINT.into()),
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let (text, report) = read_report(&results);
    assert_eq!(report.adapter.as_deref(), Some("hypershift-nodes"));
    assert_eq!(report.observed_generation, Some(7));
    let applied = report.condition("Applied").unwrap();
    assert_eq!(applied.reason, "ChecksExecuted");
    assert_eq!(applied.message, "Checked 1200 nodes and 1200 node leases");
    assert_eq!(report.data.as_ref().unwrap()["nodes_total"], 1200);
    assert!(!text.contains(TOKEN));
    assert!(!stderr.contains(TOKEN));
    // JSON logs, each decision carrying the cluster id.
    let checked = stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["message"] == "nodes checked")
        .unwrap_or_else(|| panic!("no 'nodes checked' event in {stderr}"));
    assert_eq!(checked["cluster_id"], "cluster-e2e");
    assert_eq!(checked["nodes"], 1200);
}

#[tokio::test]
async fn rejected_credentials_become_applied_false_and_exit_zero() {
    let now = Timestamp::now();
    let server = serve(3, now).await;
    let dir = tempfile::tempdir().unwrap();
    let wrong = "wrong-token-also-must-not-leak";
    let config = kubeconfig(dir.path(), &server, wrong);
    let results = dir.path().join("adapter-report.json");
    let out = adapter(
        vec![
            "--kubeconfig".into(),
            config.display().to_string(),
            "--results-path".into(),
            results.display().to_string(),
            "--log-format".into(),
            "plain".into(),
        ],
        vec![],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let (text, report) = read_report(&results);
    let applied = report.condition("Applied").unwrap();
    assert_eq!(applied.status, job_report::ConditionStatus::False);
    assert_eq!(applied.reason, "Unauthorized");
    assert!(
        applied.message.contains("HTTP 401: Unauthorized"),
        "{}",
        applied.message
    );
    assert!(!text.contains(wrong));
    assert!(!stderr.contains(wrong));
}

#[tokio::test]
async fn an_unreachable_cluster_is_reported() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(dir.path(), &server, TOKEN);
    let results = dir.path().join("adapter-report.json");
    let out = adapter(
        vec!["--request-timeout".into(), "5s".into()],
        vec![
            ("KUBECONFIG", config.display().to_string()),
            ("RESULTS_OUTPUT_PATH", results.display().to_string()),
        ],
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, report) = read_report(&results);
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "ClusterUnreachable"
    );
    assert_eq!(
        report.condition("Health").unwrap().status,
        job_report::ConditionStatus::Unknown
    );
}

#[tokio::test]
async fn exits_non_zero_only_when_no_report_can_be_written() {
    let now = Timestamp::now();
    let server = serve(3, now).await;
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(dir.path(), &server, TOKEN);
    let results = dir.path().join("no-such-dir").join("adapter-report.json");
    let out = adapter(
        vec![],
        vec![
            ("KUBECONFIG", config.display().to_string()),
            ("RESULTS_OUTPUT_PATH", results.display().to_string()),
        ],
    )
    .await;
    assert!(!out.status.success());
    assert!(!results.exists());
}
