//! `KubeNodeSource` against a tiny in-test fake API server, for what the testbed's API server
//! cannot do: a plain-text error body, a 410 on a continue token only, a sub-second hang. The
//! rest (paging, 401, 403, 500, hangs, refused connections, 5 000 nodes, the written report) is
//! tested against the real binary and the testbed in `tests/tests/nodes.rs`.

#![allow(clippy::unwrap_used)]

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use clap::Parser;
use jiff::Timestamp;
use serde_json::{Value, json};

use super::*;
use crate::pulse::nodes::judge::{self, Thresholds};
use crate::pulse::nodes::testing::{self, SYNTHETIC_TAINT, SyntheticNode};
use crate::pulse::nodes::{Args, collect};

fn now() -> Timestamp {
    "2026-11-25T12:00:00Z".parse().unwrap()
}

/// How the fake answers a list.
#[derive(Clone, Debug, PartialEq)]
enum Behaviour {
    Serve,
    /// Answer with this HTTP status and body (a `Status` object or plain text).
    Fail(u16, String),
    /// Answer 410 Gone to the first request carrying a continue token, then serve.
    GoneOnceOnContinue,
    /// Never answer in time.
    Hang,
}

#[derive(Default, Debug)]
struct Seen {
    /// (path, limit, continue) of every request.
    requests: Vec<(String, Option<String>, Option<String>)>,
    gone_sent: bool,
}

struct Fake {
    nodes: Vec<Value>,
    leases: Vec<Value>,
    csrs: Vec<Value>,
    node_behaviour: Behaviour,
    lease_behaviour: Behaviour,
    csr_behaviour: Behaviour,
    seen: Mutex<Seen>,
}

fn status_body(code: u16, reason: &str, message: &str) -> String {
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "details": {"kind": "nodes"}, "code": code
    })
    .to_string()
}

async fn list(
    fake: &Fake,
    path: &str,
    items: &[Value],
    behaviour: &Behaviour,
    kind: &str,
    query: HashMap<String, String>,
) -> Response {
    let limit = query.get("limit").cloned();
    let token = query.get("continue").cloned();
    {
        let mut seen = fake.seen.lock().unwrap();
        seen.requests
            .push((path.to_owned(), limit.clone(), token.clone()));
        match behaviour {
            Behaviour::Serve => {}
            Behaviour::Fail(code, body) => {
                return (StatusCode::from_u16(*code).unwrap(), body.clone()).into_response();
            }
            Behaviour::GoneOnceOnContinue => {
                if token.is_some() && !seen.gone_sent {
                    seen.gone_sent = true;
                    let body = status_body(
                        410,
                        "Expired",
                        "The provided continue parameter is too old to display a consistent list result.",
                    );
                    return (StatusCode::GONE, body).into_response();
                }
            }
            Behaviour::Hang => {}
        }
    }
    if *behaviour == Behaviour::Hang {
        tokio::time::sleep(Duration::from_secs(30)).await;
    }
    let start: usize = token.as_deref().map_or(0, |t| t.parse().unwrap());
    let limit: usize = limit.map_or(items.len(), |l| l.parse().unwrap());
    let end = (start + limit).min(items.len());
    let page = &items[start..end];
    let mut metadata = json!({"resourceVersion": "777"});
    if end < items.len() {
        metadata["continue"] = json!(end.to_string());
        metadata["remainingItemCount"] = json!(items.len() - end);
    }
    axum::Json(json!({"kind": kind, "apiVersion": "v1", "metadata": metadata, "items": page}))
        .into_response()
}

/// Starts the fake on 127.0.0.1:0 and returns it with a kube client pointed at it.
async fn serve(fake: Fake) -> (Arc<Fake>, kube::Client) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let fake = Arc::new(fake);
    let app = Router::new()
        .route(
            "/api/v1/nodes",
            get(
                |State(f): State<Arc<Fake>>, Query(q): Query<HashMap<String, String>>| async move {
                    list(&f, "nodes", &f.nodes, &f.node_behaviour, "NodeList", q).await
                },
            ),
        )
        .route(
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
            get(
                |State(f): State<Arc<Fake>>, Query(q): Query<HashMap<String, String>>| async move {
                    list(&f, "leases", &f.leases, &f.lease_behaviour, "LeaseList", q).await
                },
            ),
        )
        .route(
            CSR_PATH,
            get(
                |State(f): State<Arc<Fake>>, Query(q): Query<HashMap<String, String>>| async move {
                    let kind = "CertificateSigningRequestList";
                    list(&f, "csrs", &f.csrs, &f.csr_behaviour, kind, q).await
                },
            ),
        )
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (fake, client_for(addr))
}

/// A client configured like `KubeNodeSource::connect` configures one.
fn client_for(addr: std::net::SocketAddr) -> kube::Client {
    let mut config = kube::Config::new(format!("http://{addr}").parse().unwrap());
    tune(&mut config, Duration::from_secs(10));
    kube::Client::try_from(config).unwrap()
}

fn fake(cluster: &[SyntheticNode]) -> Fake {
    Fake {
        nodes: cluster
            .iter()
            .map(|n| serde_json::to_value(testing::node_object(&n.summary)).unwrap())
            .collect(),
        leases: cluster
            .iter()
            .map(|n| serde_json::to_value(testing::lease_object(&n.lease)).unwrap())
            .collect(),
        csrs: Vec::new(),
        node_behaviour: Behaviour::Serve,
        lease_behaviour: Behaviour::Serve,
        csr_behaviour: Behaviour::Serve,
        seen: Mutex::new(Seen::default()),
    }
}

fn thresholds() -> Thresholds {
    Thresholds {
        verification_taints: vec![SYNTHETIC_TAINT.to_owned()],
        ..Thresholds::default()
    }
}

/// What the pure judge says about the cluster, without any API in between.
fn expected(cluster: &[SyntheticNode]) -> judge::Findings {
    let leases: HashMap<String, Timestamp> = cluster
        .iter()
        .filter_map(|n| Some((n.lease.node.clone(), n.lease.renewed?)))
        .collect();
    let summaries: Vec<NodeSummary> = cluster.iter().map(|n| n.summary.clone()).collect();
    testing::judge(&summaries, &leases, now(), &thresholds())
}

fn source(client: kube::Client, page_size: u32) -> KubeNodeSource {
    KubeNodeSource::new(client, page_size, Duration::from_secs(10))
}

#[tokio::test]
async fn server_errors_and_plain_text_bodies_are_unreachable() {
    let mut f = fake(&testing::synthetic_cluster(2, 1, now()));
    f.node_behaviour = Behaviour::Fail(503, "upstream connect error".to_owned());
    let (_, client) = serve(f).await;
    let err = collect(&source(client, 500), now(), &thresholds())
        .await
        .unwrap_err();
    assert_eq!(err.reason(), "ClusterUnreachable");
    assert_eq!(
        err.to_string(),
        "cannot read nodes from the API server: HTTP 503: upstream connect error"
    );

    let mut f = fake(&testing::synthetic_cluster(2, 1, now()));
    f.node_behaviour = Behaviour::Fail(
        500,
        status_body(500, "InternalError", "etcdserver: request timed out"),
    );
    let (_, client) = serve(f).await;
    let err = collect(&source(client, 500), now(), &thresholds())
        .await
        .unwrap_err();
    assert_eq!(err.reason(), "ClusterUnreachable");
    assert_eq!(
        err.to_string(),
        "cannot read nodes from the API server: HTTP 500: etcdserver: request timed out"
    );
}

#[tokio::test]
async fn a_hanging_server_times_out_per_call() {
    let mut f = fake(&testing::synthetic_cluster(2, 1, now()));
    f.node_behaviour = Behaviour::Hang;
    let (_, client) = serve(f).await;
    let source = KubeNodeSource::new(client, 500, Duration::from_millis(200));
    let started = std::time::Instant::now();
    let err = collect(&source, now(), &thresholds()).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(err.reason(), "ClusterUnreachable");
    assert_eq!(
        err.to_string(),
        "timed out after 0.2s listing nodes; the API server did not answer"
    );
}

#[tokio::test]
async fn an_expired_continue_token_restarts_the_list_once() {
    let cluster = testing::synthetic_cluster(5, 3, now());
    let mut f = fake(&cluster);
    f.node_behaviour = Behaviour::GoneOnceOnContinue;
    let (fake, client) = serve(f).await;
    let findings = collect(&source(client, 2), now(), &thresholds())
        .await
        .unwrap();
    assert_eq!(
        findings,
        expected(&cluster),
        "nodes of the aborted pass are not counted twice"
    );
    let node_tokens: Vec<Option<String>> = fake
        .seen
        .lock()
        .unwrap()
        .requests
        .iter()
        .filter(|r| r.0 == "nodes")
        .map(|r| r.2.clone())
        .collect();
    assert_eq!(
        node_tokens,
        [
            None,
            Some("2".into()),
            None,
            Some("2".into()),
            Some("4".into())
        ]
    );
}

#[test]
fn wire_summary_equals_the_original() {
    let cluster = testing::synthetic_cluster(2000, 5, now());
    let mut kinds = HashSet::new();
    for n in &cluster {
        let node = testing::node_object(&n.summary);
        let wire: WireNode = serde_json::from_value(serde_json::to_value(&node).unwrap()).unwrap();
        let summary = wire.summarize();
        assert_eq!(summary, n.summary);
        kinds.insert((
            summary.deleting_since.is_some(),
            summary.taints.is_empty(),
            summary.unschedulable,
        ));
    }
    assert!(
        kinds.len() >= 4,
        "the sample covers several shapes: {kinds:?}"
    );
}

#[test]
fn nulls_and_missing_fields_are_tolerated() {
    let list: WireList<WireNode> = serde_json::from_value(json!({
        "metadata": {"continue": ""},
        "items": [
            {"metadata": {"name": "a", "finalizers": null}, "spec": null, "status": {"conditions": null}},
            {"metadata": {"name": "b"}, "spec": {"taints": null}},
            {"metadata": {"name": "c"}, "status": {"conditions": [{"type": "Ready", "status": "Maybe"}]}}
        ]
    }))
    .unwrap();
    let page = list.into_page(WireNode::summarize);
    assert_eq!(page.continue_token, None, "an empty token ends the list");
    let summaries = page.items;
    assert_eq!(summaries[0].name, "a");
    assert_eq!(summaries[0].ready, None);
    assert_eq!(
        summaries[2].ready.map(|r| r.status),
        Some(ConditionStatus::Unknown)
    );
    let empty: WireList<WireLease> = serde_json::from_value(json!({"items": null})).unwrap();
    assert!(empty.into_page(WireLease::summarize).items.is_empty());
    let leases: WireList<WireLease> = serde_json::from_value(json!({"items": [
        {"metadata": {"name": "a"}, "spec": {"renewTime": "2026-11-25T11:59:58.123456Z"}},
        {"metadata": {"name": "b"}, "spec": null}
    ]}))
    .unwrap();
    let leases = leases.into_page(WireLease::summarize).items;
    assert_eq!(
        leases[0].renewed,
        Some("2026-11-25T11:59:58.123456Z".parse().unwrap())
    );
    assert_eq!(leases[1].renewed, None);
}

// The whole `run` over the fake API: the report file is what the status-reporter will read.

#[derive(Debug, clap::Parser)]
struct Cli {
    #[command(flatten)]
    args: Args,
}

fn args(extra: &[&str]) -> Args {
    let mut argv = vec![
        "x",
        "--generation",
        "3",
        "--cluster-id",
        "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
    ];
    argv.extend_from_slice(extra);
    Cli::try_parse_from(argv).unwrap().args
}

#[tokio::test]
async fn run_reports_a_missing_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("adapter-report.json");
    let missing = dir.path().join("no-such-kubeconfig");
    let source = KubeNodeSource::connect(Some(&missing), 500, Duration::from_secs(1)).await;
    let report = crate::pulse::nodes::run(&args(&[]), &path, source, now())
        .await
        .unwrap();
    let applied = report.condition("Applied").unwrap();
    assert_eq!(applied.reason, "InvalidKubeconfig");
    assert!(
        applied.message.contains("no-such-kubeconfig"),
        "{}",
        applied.message
    );
    assert!(path.exists());
}

#[tokio::test]
async fn an_endless_kubeconfig_is_invalid_kubeconfig_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("adapter-report.json");
    let source = KubeNodeSource::connect(
        Some(std::path::Path::new("/dev/zero")),
        500,
        Duration::from_secs(1),
    )
    .await;
    let report = crate::pulse::nodes::run(&args(&[]), &path, source, now())
        .await
        .unwrap();
    let applied = report.condition("Applied").unwrap();
    assert_eq!(applied.reason, "InvalidKubeconfig");
    assert!(
        applied
            .message
            .contains("the kubeconfig /dev/zero is larger than 1 MiB"),
        "{}",
        applied.message
    );
}

#[test]
fn synthetic_ages_straddle_thresholds() {
    // Guards the generator: the 5 000-node tests rely on problems of every kind existing and
    // on some nodes being within their grace.
    let cluster = testing::synthetic_cluster(5000, 42, now());
    let f = expected(&cluster);
    assert!(f.not_ready_within_grace > 0);
    assert!(!f.cordoned.is_empty());
}

// ---- certificate signing requests -----------------------------------------------------------------

/// The synthetic requests as an API server serves them, each with a real request for its node.
fn csr_objects(csrs: &[testing::SyntheticCsr]) -> Vec<Value> {
    csrs.iter()
        .map(|c| {
            let pem = testing::request_pem(&format!("system:node:{}", c.node));
            let object = testing::csr_object(
                &c.name,
                c.created,
                c.signer,
                &c.username,
                pem.as_bytes(),
                &c.conditions,
            );
            serde_json::to_value(object).unwrap()
        })
        .collect()
}

#[test]
fn wire_csr_summary_reads_the_node_from_the_real_request() {
    let csrs = testing::synthetic_csrs(60, 3, now());
    let mut states = HashSet::new();
    for (c, object) in csrs.iter().zip(csr_objects(&csrs)) {
        let wire: WireCsr = serde_json::from_value(object).unwrap();
        let summary = wire.summarize();
        assert_eq!(summary, c.summary(), "{}", c.name);
        states.insert((format!("{:?}", summary.state), summary.signer));
    }
    assert!(
        states.len() >= 5,
        "the sample covers several shapes: {states:?}"
    );
}

#[test]
fn csr_nulls_and_missing_fields_are_tolerated() {
    let list: WireList<WireCsr> = serde_json::from_value(json!({
        "metadata": {"resourceVersion": "9"},
        "items": [
            {"metadata": {"name": "a"}, "spec": null, "status": null},
            {"metadata": {"name": "b"}, "spec": {"signerName": "kubernetes.io/kubelet-serving", "username": null, "request": null}, "status": {"conditions": null}},
            {"metadata": {"name": "c"}, "spec": {"signerName": "kubernetes.io/kubelet-serving", "username": "system:node:worker-c", "request": "bm90IGEgcmVxdWVzdA=="}, "status": {"conditions": [{"type": null, "status": "True"}, {"type": "Approved", "status": null}]}}
        ]
    }))
    .unwrap();
    let s = list.into_page(WireCsr::summarize).items;
    assert_eq!((s[0].signer, s[0].state), (None, CsrState::Pending));
    assert_eq!(
        s[1].signer,
        Some(crate::pulse::nodes::csr::KubeletSigner::Serving)
    );
    assert_eq!((s[1].node.as_deref(), s[1].requester.as_str()), (None, ""));
    assert_eq!(
        s[2].state,
        CsrState::Approved,
        "a condition without a status counts"
    );
}

#[tokio::test]
async fn csrs_are_listed_page_by_page_after_the_nodes() {
    let cluster = testing::synthetic_cluster(3, 3, now());
    let csrs = testing::synthetic_csrs(7, 5, now());
    let mut f = fake(&cluster);
    f.csrs = csr_objects(&csrs);
    let (fake, client) = serve(f).await;
    let findings = collect(&source(client, 3), now(), &thresholds())
        .await
        .unwrap();
    let summaries: Vec<CsrSummary> = csrs.iter().map(testing::SyntheticCsr::summary).collect();
    assert_eq!(
        findings.certificate_requests,
        judge::CsrCheck::Checked(testing::judge_csrs(&summaries, now(), &thresholds()))
    );
    let requests = fake.seen.lock().unwrap().requests.clone();
    let csr_requests: Vec<(Option<String>, Option<String>)> = requests
        .iter()
        .filter(|r| r.0 == "csrs")
        .map(|r| (r.1.clone(), r.2.clone()))
        .collect();
    assert_eq!(
        csr_requests,
        [
            (Some("3".into()), None),
            (Some("3".into()), Some("3".into())),
            (Some("3".into()), Some("6".into())),
        ]
    );
    assert_eq!(requests.last().unwrap().0, "csrs", "read last");
}

#[tokio::test]
async fn a_forbidden_csr_list_is_not_checked_and_names_the_grant() {
    let cluster = testing::synthetic_cluster(3, 3, now());
    let mut f = fake(&cluster);
    let denial = "certificatesigningrequests.certificates.k8s.io is forbidden: User \"system:serviceaccount:hyperfleet-system:hypershift-adapter\" cannot list resource \"certificatesigningrequests\" in API group \"certificates.k8s.io\" at the cluster scope";
    f.csr_behaviour = Behaviour::Fail(403, status_body(403, "Forbidden", denial));
    let (_, client) = serve(f).await;
    let findings = collect(&source(client, 500), now(), &thresholds())
        .await
        .unwrap();
    assert_eq!(findings.total, 3, "the nodes were checked");
    assert_eq!(
        findings.certificate_requests,
        judge::CsrCheck::NotChecked {
            reason: "Forbidden",
            message: format!(
                "not allowed to list certificate signing requests: HTTP 403: {denial}. \
                 Grant get and list on certificatesigningrequests (API group certificates.k8s.io, \
                 cluster scope) as the ClusterRole in manifests/rbac-nodes.yaml does"
            ),
        }
    );
}

#[tokio::test]
async fn an_expired_csr_list_restarts_once_then_is_not_checked() {
    let cluster = testing::synthetic_cluster(2, 3, now());
    let csrs = testing::synthetic_csrs(5, 5, now());
    let mut f = fake(&cluster);
    f.csrs = csr_objects(&csrs);
    f.csr_behaviour = Behaviour::GoneOnceOnContinue;
    let (_, client) = serve(f).await;
    let findings = collect(&source(client, 2), now(), &thresholds())
        .await
        .unwrap();
    let judge::CsrCheck::Checked(c) = &findings.certificate_requests else {
        panic!("{findings:?}")
    };
    assert_eq!(
        c.total, 5,
        "requests of the aborted pass are not counted twice"
    );

    let mut f = fake(&cluster);
    f.csr_behaviour = Behaviour::Fail(410, status_body(410, "Expired", "too old resource version"));
    let (_, client) = serve(f).await;
    let findings = collect(&source(client, 2), now(), &thresholds())
        .await
        .unwrap();
    assert!(
        matches!(
            &findings.certificate_requests,
            judge::CsrCheck::NotChecked {
                reason: "ClusterUnreachable",
                ..
            }
        ),
        "{findings:?}"
    );
}

/// Characterization pins through the public seams (snapshots in `tests/snapshots/`).
mod pins;
