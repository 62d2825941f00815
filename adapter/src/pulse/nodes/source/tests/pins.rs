//! Characterization pins of the `nodes` check through its public seams (a fake API server on
//! loopback, `KubeNodeSource`, `collect`, `run`), written before the module was trimmed so that
//! the trim can be shown to change nothing: what each wire shape becomes (summaries, or the exact
//! error), how each server failure is worded, the exact requests (paths, `limit`, `continue`, in
//! order), and the report and log events `run` writes. Every pin is an insta snapshot in
//! `snapshots/`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::pulse::nodes::source::{CSR_PATH, KubeNodeSource, NodeSource, SourceError, tune};
use crate::pulse::nodes::testing::{self, BOOTSTRAPPER, SYNTHETIC_TAINT};
use crate::pulse::nodes::{Args, Thresholds, collect, failure_report, run};

const NODES: &str = "/api/v1/nodes";
const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";

fn now() -> Timestamp {
    "2026-11-25T12:00:00Z".parse().unwrap()
}

/// What the fake does with one request.
#[derive(Clone, Debug)]
enum Answer {
    /// Serve the next page of the list.
    Page,
    /// This status and body (a `Status` object, plain text, or anything).
    Status(u16, String),
    /// A 200 with this body, whatever it is.
    Raw(String),
    /// No answer for 30 s.
    Hang,
}

/// A fake API server: per path a list of items served in pages of `limit` (the continue token
/// is the offset), and per path the answers to give to its n-th request (0-based) instead of a
/// page. Records every request as `path?query`.
#[derive(Default)]
struct Api {
    items: HashMap<&'static str, Vec<Value>>,
    answers: HashMap<(&'static str, usize), Answer>,
    /// Send `"continue": ""` on the last page instead of leaving the field out.
    empty_last_token: bool,
    seen: Mutex<Vec<String>>,
}

impl Api {
    fn with(mut self, path: &'static str, items: Vec<Value>) -> Self {
        self.items.insert(path, items);
        self
    }

    fn answer(mut self, path: &'static str, nth: usize, answer: Answer) -> Self {
        self.answers.insert((path, nth), answer);
        self
    }

    fn requests(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

async fn answer(State(api): State<Arc<Api>>, uri: Uri) -> Response {
    let path = uri.path().to_owned();
    let query: HashMap<String, String> = uri
        .query()
        .map(|q| {
            q.split('&')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        })
        .unwrap_or_default();
    let nth = {
        let mut seen = api.seen.lock().unwrap();
        let nth = seen
            .iter()
            .filter(|r| r.split('?').next() == Some(path.as_str()))
            .count();
        seen.push(uri.to_string());
        nth
    };
    let key = api.answers.keys().find(|(p, n)| *p == path && *n == nth);
    match key.map(|k| api.answers[k].clone()).unwrap_or(Answer::Page) {
        Answer::Status(code, body) => {
            return (StatusCode::from_u16(code).unwrap(), body).into_response();
        }
        Answer::Raw(body) => return (StatusCode::OK, body).into_response(),
        Answer::Hang => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            return StatusCode::OK.into_response();
        }
        Answer::Page => {}
    }
    let Some(items) = api.items.get(path.as_str()) else {
        return (StatusCode::NOT_FOUND, "404 page not found").into_response();
    };
    let start: usize = query.get("continue").map_or(0, |t| t.parse().unwrap());
    let limit: usize = query
        .get("limit")
        .map_or(items.len(), |l| l.parse().unwrap());
    let end = (start + limit).min(items.len());
    let mut metadata = json!({"resourceVersion": "777"});
    if end < items.len() {
        metadata["continue"] = json!(end.to_string());
        metadata["remainingItemCount"] = json!(items.len() - end);
    } else if api.empty_last_token {
        metadata["continue"] = json!("");
    }
    axum::Json(json!({"kind": "List", "apiVersion": "v1", "metadata": metadata, "items": &items[start..end]}))
        .into_response()
}

/// Starts `api` on 127.0.0.1:0; a source on it with `page_size` and `timeout` per call.
async fn start(api: Api, page_size: u32, timeout: Duration) -> (Arc<Api>, KubeNodeSource) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let api = Arc::new(api);
    let app = Router::new().fallback(answer).with_state(api.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let mut config = kube::Config::new(format!("http://{addr}").parse().unwrap());
    // The client's own read timeout is left longer than the source's, so that a hang is always
    // the source's timeout (with both equal, either may fire first).
    tune(&mut config, Duration::from_secs(10));
    let client = kube::Client::try_from(config).unwrap();
    (api, KubeNodeSource::new(client, page_size, timeout))
}

fn status(code: u16, reason: &str, message: &str) -> String {
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code
    })
    .to_string()
}

fn node(summary: &crate::pulse::nodes::NodeSummary) -> Value {
    serde_json::to_value(testing::node_object_with_images(summary, 2)).unwrap()
}

fn lease(node: &str, renewed: Option<Timestamp>) -> Value {
    let lease = crate::pulse::nodes::LeaseRenewal {
        node: node.to_owned(),
        renewed,
    };
    serde_json::to_value(testing::lease_object(&lease)).unwrap()
}

fn csr(name: &str, signer: &str, username: &str, cn: &str, conditions: &[&str]) -> Value {
    let pem = testing::request_pem(cn);
    let created = now() - SignedDuration::from_mins(30);
    let object = testing::csr_object(name, created, signer, username, pem.as_bytes(), conditions);
    serde_json::to_value(object).unwrap()
}

/// Node items in every shape the wire parser meets: full objects, nulls, missing parts, odd
/// condition statuses, repeated conditions and taints.
fn node_corpus() -> Vec<Value> {
    let synthetic = testing::synthetic_cluster(60, 11, now());
    let mut items: Vec<Value> = synthetic.iter().map(|n| node(&n.summary)).collect();
    items.extend([
        json!({}),
        json!({"metadata": null, "spec": null, "status": null}),
        json!({"metadata": {"name": "a", "finalizers": null}, "spec": null, "status": {"conditions": null}}),
        json!({"metadata": {"name": "b", "creationTimestamp": null, "deletionTimestamp": null}, "spec": {"taints": null, "unschedulable": null}}),
        json!({"metadata": {"name": "c"}, "status": {"conditions": [
            {"type": "Ready", "status": "Maybe"},
            {"type": "MemoryPressure", "status": "Unknown"},
            {"type": "DiskPressure", "status": "true"},
            {"type": "PIDPressure", "status": "True", "lastTransitionTime": null},
            {"type": "NetworkUnavailable", "status": "True"},
            {"type": "Something", "status": "True"}
        ]}}),
        json!({"metadata": {"name": "d", "creationTimestamp": "2026-11-25T13:00:00+02:00"}, "status": {"conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-20T00:00:00Z", "lastHeartbeatTime": "2026-11-25T11:59:00.123456Z"},
            {"type": "Ready", "status": "False", "lastTransitionTime": "2026-11-25T11:00:00Z"},
            {"type": "MemoryPressure", "status": "True"},
            {"type": "MemoryPressure", "status": "False"}
        ]}}),
        json!({"metadata": {"name": "e", "deletionTimestamp": "2026-11-25T10:00:00Z", "finalizers": ["z.example.com/b", "a.example.com/a", "z.example.com/b"]},
               "spec": {"unschedulable": true, "taints": [
                   {"key": SYNTHETIC_TAINT, "effect": "NoSchedule"},
                   {"key": SYNTHETIC_TAINT, "effect": "NoExecute", "timeAdded": "2026-11-25T11:00:00Z"},
                   {"effect": "NoSchedule", "timeAdded": null},
                   {"key": "other", "value": "x", "effect": "NoSchedule"}
               ]}}),
        json!({"metadata": {"name": "f", "labels": {"a": "b"}, "managedFields": [{"manager": "kubelet"}]},
               "spec": {"unschedulable": false, "providerID": "aws:///x"},
               "status": {"conditions": [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}], "images": [{"names": ["x"], "sizeBytes": 1}]}}),
        // Serde reads a struct from an array too (fields in order); no server sends one.
        json!([]),
        json!([{"name": "seq", "finalizers": ["f"]}, [true, [["k"]]], [[["Ready", "False"]]]]),
    ]);
    items
}

/// Items the parser refuses, each alone in a list: the whole list fails with these words.
fn refused_nodes() -> Vec<(&'static str, Value)> {
    vec![
        ("name null", json!({"metadata": {"name": null}})),
        (
            "condition type null",
            json!({"status": {"conditions": [{"type": null, "status": "True"}]}}),
        ),
        (
            "condition status null",
            json!({"status": {"conditions": [{"type": "Ready", "status": null}]}}),
        ),
        ("condition null", json!({"status": {"conditions": [null]}})),
        (
            "taint key null",
            json!({"spec": {"taints": [{"key": null}]}}),
        ),
        ("taint null", json!({"spec": {"taints": [null]}})),
        (
            "finalizer null",
            json!({"metadata": {"name": "x", "finalizers": [null]}}),
        ),
        (
            "bad timestamp",
            json!({"metadata": {"name": "x", "creationTimestamp": "yesterday"}}),
        ),
        (
            "unschedulable a string",
            json!({"spec": {"unschedulable": "yes"}}),
        ),
        (
            "conditions an object",
            json!({"status": {"conditions": {}}}),
        ),
        ("metadata a string", json!({"metadata": "x"})),
        ("item null", Value::Null),
        ("item a number", json!(5)),
        ("spec a string", json!({"spec": "x"})),
        ("status a number", json!({"status": 1})),
    ]
}

async fn page_of<T: std::fmt::Debug>(
    items: Vec<Value>,
    path: &'static str,
    page: impl AsyncFnOnce(&KubeNodeSource) -> Result<crate::pulse::nodes::Page<T>, SourceError>,
) -> String {
    let (_, source) = start(
        Api::default().with(path, items),
        5000,
        Duration::from_secs(10),
    )
    .await;
    match page(&source).await {
        Ok(page) => {
            let mut out = format!("continue: {:?}\n", page.continue_token);
            for item in page.items {
                let _ = writeln!(out, "{item:?}");
            }
            out
        }
        Err(err) => format!("{}: {err}", err.reason()),
    }
}

#[tokio::test]
async fn pin_node_summaries_of_every_wire_shape() {
    let out = page_of(node_corpus(), NODES, async |s| s.node_page(None).await).await;
    insta::assert_snapshot!("node_summaries", out);
}

#[tokio::test]
async fn pin_node_items_the_parser_refuses() {
    let mut out = String::new();
    for (what, item) in refused_nodes() {
        let got = page_of(vec![item], NODES, async |s| s.node_page(None).await).await;
        let _ = writeln!(out, "[{what}] {got}");
    }
    insta::assert_snapshot!("refused_nodes", out);
}

#[tokio::test]
async fn pin_lease_renewals_of_every_wire_shape() {
    let items = vec![
        lease("a", Some(now())),
        lease("b", None),
        json!({"metadata": {"name": "c"}, "spec": {"renewTime": "2026-11-25T11:59:58.123456Z", "holderIdentity": "c"}}),
        json!({"metadata": {"name": "d"}, "spec": null}),
        json!({"metadata": {"name": "e"}}),
        json!({"metadata": null}),
        json!({}),
        json!({"metadata": {"name": "f"}, "spec": {"renewTime": null}}),
        json!([{"name": "g"}, ["2026-11-25T11:00:00Z"]]),
    ];
    let mut out = page_of(items, LEASES, async |s| s.lease_page(None).await).await;
    for (what, item) in [
        ("name null", json!({"metadata": {"name": null}})),
        ("renewTime a number", json!({"spec": {"renewTime": 5}})),
        ("spec a list", json!({"spec": []})),
        ("item null", Value::Null),
        ("spec a string", json!({"spec": "x"})),
    ] {
        let got = page_of(vec![item], LEASES, async |s| s.lease_page(None).await).await;
        let _ = writeln!(out, "[{what}] {got}");
    }
    insta::assert_snapshot!("lease_renewals", out);
}

#[tokio::test]
async fn pin_csr_summaries_of_every_wire_shape() {
    use crate::pulse::nodes::csr::{
        KUBELET_CLIENT_SIGNER as CLIENT, KUBELET_SERVING_SIGNER as SERVING,
    };
    let node_user = "system:node:worker-1";
    let mut items = vec![
        csr("a", CLIENT, BOOTSTRAPPER, "system:node:worker-1", &[]),
        csr("b", SERVING, node_user, "system:node:worker-1", &[]),
        csr("c", SERVING, node_user, "system:node:worker-2", &[]),
        csr(
            "d",
            CLIENT,
            node_user,
            "system:node:worker-1",
            &["Approved"],
        ),
        csr("e", CLIENT, node_user, "system:node:worker-1", &["Denied"]),
        csr(
            "f",
            CLIENT,
            node_user,
            "system:node:worker-1",
            &["Approved", "Failed"],
        ),
        csr("g", CLIENT, BOOTSTRAPPER, "worker-1", &[]),
        csr("h", CLIENT, BOOTSTRAPPER, "system:node:Not_A_Name", &[]),
        csr(
            "i",
            "example.com/other",
            node_user,
            "system:node:worker-1",
            &[],
        ),
        csr("j", CLIENT, &"u".repeat(300), "nothing", &[]),
        csr("k", SERVING, "system:node:worker-9", "x", &[]),
    ];
    let mut garbled = csr("l", SERVING, node_user, "system:node:worker-1", &[]);
    garbled["spec"]["request"] = json!("bm90IGEgcmVxdWVzdA==");
    let mut spaced = csr("m", CLIENT, BOOTSTRAPPER, "system:node:worker-3", &[]);
    let request = spaced["spec"]["request"].as_str().unwrap().to_owned();
    spaced["spec"]["request"] = json!(format!("\n {request} \n"));
    let mut statuses = csr("n", CLIENT, BOOTSTRAPPER, "system:node:worker-4", &[]);
    statuses["status"] = json!({"conditions": [
        {"type": "Approved", "status": "False"},
        {"type": "Denied", "status": "Unknown"},
        {"type": "Failed"}
    ]});
    items.extend([
        garbled,
        spaced,
        statuses,
        json!({"metadata": {"name": "o"}, "spec": null, "status": null}),
        json!({"metadata": {"name": "p"}, "spec": {"signerName": SERVING, "username": null, "request": null}, "status": {"conditions": null}}),
        json!({"metadata": {"name": "q"}, "spec": {"signerName": null}, "status": {"conditions": [{"type": null, "status": "True"}, {"type": "Approved", "status": null}]}}),
        json!({}),
        json!([{"name": "r"}, [SERVING, "system:node:worker-5", "eA=="], [[[null, null]]]]),
    ]);
    let mut out = page_of(items, CSR_PATH, async |s| s.csr_page(None).await).await;
    for (what, item) in [
        ("name null", json!({"metadata": {"name": null}})),
        ("signerName a number", json!({"spec": {"signerName": 5}})),
        ("condition null", json!({"status": {"conditions": [null]}})),
        (
            "created garbage",
            json!({"metadata": {"name": "x", "creationTimestamp": "soon"}}),
        ),
        ("item null", Value::Null),
        ("spec a number", json!({"spec": 1})),
        ("status a string", json!({"status": "x"})),
    ] {
        let got = page_of(vec![item], CSR_PATH, async |s| s.csr_page(None).await).await;
        let _ = writeln!(out, "[{what}] {got}");
    }
    insta::assert_snapshot!("csr_summaries", out);
}

#[tokio::test]
async fn pin_list_envelopes() {
    let mut out = String::new();
    for (what, body) in [
        (
            "items null",
            r#"{"metadata": {"continue": "x"}, "items": null}"#,
        ),
        ("no items", r#"{"metadata": {"continue": ""}}"#),
        ("metadata null", r#"{"metadata": null, "items": []}"#),
        (
            "continue null",
            r#"{"metadata": {"continue": null}, "items": []}"#,
        ),
        ("empty object", "{}"),
        (
            "continue a number",
            r#"{"metadata": {"continue": 5}, "items": []}"#,
        ),
        ("items an object", r#"{"items": {}}"#),
        ("an array", "[]"),
        (
            "an array of metadata and items",
            r#"[{"continue": "t"}, [[], {}]]"#,
        ),
        ("not JSON", "<html>proxy</html>"),
        ("empty body", ""),
    ] {
        let api = Api::default().answer(NODES, 0, Answer::Raw(body.to_owned()));
        let (_, source) = start(api, 100, Duration::from_secs(10)).await;
        let got = match source.node_page(None).await {
            Ok(page) => format!(
                "{} items, continue {:?}",
                page.items.len(),
                page.continue_token
            ),
            Err(err) => format!("{}: {err}", err.reason()),
        };
        let _ = writeln!(out, "[{what}] {got}");
    }
    insta::assert_snapshot!("list_envelopes", out);
}

/// Server answers on each list: the reason and words of the error, or what `collect` made of a
/// failed request list.
#[tokio::test]
async fn pin_server_failures_on_each_list() {
    let answers = [
        (
            "401 Status",
            Answer::Status(401, status(401, "Unauthorized", "Unauthorized")),
        ),
        (
            "401 empty message",
            Answer::Status(401, status(401, "Unauthorized", "")),
        ),
        (
            "401 plain text",
            Answer::Status(401, "Unauthorized".to_owned()),
        ),
        (
            "403 Status",
            Answer::Status(
                403,
                status(
                    403,
                    "Forbidden",
                    "nodes is forbidden: User \"x\" cannot list",
                ),
            ),
        ),
        (
            "404 plain text",
            Answer::Status(404, "404 page not found".to_owned()),
        ),
        (
            "410 Status twice",
            Answer::Status(410, status(410, "Expired", "too old resource version")),
        ),
        (
            "429 Status",
            Answer::Status(
                429,
                status(429, "TooManyRequests", "storage is (re)initializing"),
            ),
        ),
        (
            "500 empty message",
            Answer::Status(500, status(500, "InternalError", "")),
        ),
        (
            "502 html",
            Answer::Status(
                502,
                "<html><body>Bad Gateway token=abc</body></html>".to_owned(),
            ),
        ),
        ("503 empty body", Answer::Status(503, String::new())),
        ("hang", Answer::Hang),
    ];
    let cluster = testing::synthetic_cluster(3, 2, now());
    let mut out = String::new();
    for path in [LEASES, NODES, CSR_PATH] {
        for (what, answer) in &answers {
            let api = Api::default()
                .with(NODES, cluster.iter().map(|n| node(&n.summary)).collect())
                .with(
                    LEASES,
                    cluster
                        .iter()
                        .map(|n| lease(&n.lease.node, n.lease.renewed))
                        .collect(),
                )
                .with(CSR_PATH, Vec::new())
                .answer(path, 0, answer.clone())
                .answer(path, 1, answer.clone());
            let (api, source) = start(api, 100, Duration::from_millis(300)).await;
            let got = match collect(&source, now(), &Thresholds::default()).await {
                Ok(f) => format!(
                    "checked {} nodes; requests {:?}",
                    f.total, f.certificate_requests
                ),
                Err(err) => format!("{}: {err}", err.reason()),
            };
            let _ = writeln!(out, "[{path} {what}] {got}\n  {:?}", api.requests());
        }
    }
    insta::assert_snapshot!("server_failures", out);
}

/// The requests `collect` makes, in order, with paging and restarts.
#[tokio::test]
async fn pin_the_requests_of_a_check() {
    let cluster = testing::synthetic_cluster(5, 4, now());
    let nodes: Vec<Value> = cluster.iter().map(|n| node(&n.summary)).collect();
    let leases: Vec<Value> = cluster
        .iter()
        .map(|n| lease(&n.lease.node, n.lease.renewed))
        .collect();
    let csrs: Vec<Value> = testing::synthetic_csrs(3, 4, now())
        .iter()
        .map(|c| {
            let cn = format!("system:node:{}", c.node);
            csr(&c.name, c.signer, &c.username, &cn, &c.conditions)
        })
        .collect();
    let api = || {
        Api::default()
            .with(NODES, nodes.clone())
            .with(LEASES, leases.clone())
            .with(CSR_PATH, csrs.clone())
    };
    let gone = || Answer::Status(410, status(410, "Expired", "too old"));
    let cases: Vec<(&str, u32, Api)> = vec![
        ("page size 2", 2, api()),
        ("page size 1", 1, api()),
        ("page size 5000", 5000, api()),
        (
            "empty last token",
            2,
            Api {
                empty_last_token: true,
                ..api()
            },
        ),
        (
            "410 on the second node page",
            2,
            api().answer(NODES, 1, gone()),
        ),
        (
            "410 on the first lease page",
            2,
            api().answer(LEASES, 0, gone()),
        ),
        (
            "410 on the third lease page, then on the restart's second",
            2,
            api().answer(LEASES, 2, gone()).answer(LEASES, 4, gone()),
        ),
        (
            "410 on both passes of the requests",
            2,
            api()
                .answer(CSR_PATH, 1, gone())
                .answer(CSR_PATH, 3, gone()),
        ),
        (
            "403 on the second request page",
            2,
            api().answer(
                CSR_PATH,
                1,
                Answer::Status(403, status(403, "Forbidden", "no")),
            ),
        ),
        (
            "500 on the third node page",
            2,
            api().answer(NODES, 2, Answer::Status(500, "boom".to_owned())),
        ),
        (
            "no request list",
            2,
            Api::default()
                .with(NODES, nodes.clone())
                .with(LEASES, leases.clone()),
        ),
    ];
    let mut out = String::new();
    for (what, page_size, api) in cases {
        let (api, source) = start(api, page_size, Duration::from_secs(10)).await;
        let got = match collect(&source, now(), &Thresholds::default()).await {
            Ok(f) => format!("{f:?}"),
            Err(err) => format!("{}: {err}", err.reason()),
        };
        let _ = writeln!(out, "[{what}]\n{}\n{got}\n", api.requests().join("\n"));
    }
    insta::assert_snapshot!("requests", out);
}

/// The failure report of each kind of source error.
#[test]
fn pin_failure_reports() {
    use crate::pulse::nodes::source::Resource;
    let mut out = String::new();
    for resource in [
        Resource::Nodes,
        Resource::Leases,
        Resource::CertificateSigningRequests,
    ] {
        for err in [
            SourceError::Unauthorized {
                resource,
                message: "HTTP 401: Unauthorized".to_owned(),
            },
            SourceError::Forbidden {
                resource,
                message: "HTTP 403: forbidden".to_owned(),
            },
            SourceError::Timeout {
                resource,
                timeout: Duration::from_millis(1500),
            },
            SourceError::Expired {
                resource,
                message: "HTTP 410".to_owned(),
            },
            SourceError::Unreachable {
                resource,
                message: "connection refused Bearer abc".to_owned(),
            },
        ] {
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string(&failure_report(&err, Some(2))).unwrap()
            );
        }
    }
    for path in [None, Some(std::path::PathBuf::from("/k/config"))] {
        let err = SourceError::Config {
            path,
            message: "no such file".to_owned(),
        };
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string(&failure_report(&err, None)).unwrap()
        );
    }
    insta::assert_snapshot!("failure_reports", out);
}

// ---- `run`: the report file and the log events ---------------------------------------------------

/// The JSON log events of this thread at DEBUG and above from this crate, while it lives.
struct Events {
    buf: Arc<Mutex<Vec<u8>>>,
    _guard: tracing::subscriber::DefaultGuard,
}

#[derive(Clone)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Events {
    fn start() -> Self {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = Sink(buf.clone());
        let subscriber = tracing_subscriber::fmt()
            .json()
            .flatten_event(true)
            .with_env_filter(tracing_subscriber::EnvFilter::new(
                "hypershift_adapter=debug",
            ))
            .with_writer(move || sink.clone())
            .finish();
        Events {
            buf,
            _guard: tracing::subscriber::set_default(subscriber),
        }
    }

    /// Each event without its timestamp, and with what varies from run to run masked.
    fn lines(&self) -> Vec<String> {
        let text = String::from_utf8(self.buf.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|line| {
                let mut event: Value = serde_json::from_str(line).unwrap();
                let object = event.as_object_mut().unwrap();
                object.remove("timestamp");
                for key in ["cpu_us", "peak_rss_kib", "path"] {
                    if let Some(v) = object.get_mut(key) {
                        *v = json!("…");
                    }
                }
                event.to_string()
            })
            .collect()
    }
}

fn args(extra: &[&str]) -> Args {
    use clap::Parser;
    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }
    let mut argv = vec!["x", "--generation", "4", "--cluster-id", "c-1"];
    argv.extend_from_slice(extra);
    Cli::try_parse_from(argv).unwrap().args
}

#[tokio::test]
async fn pin_run_reports_and_log_events() {
    let cluster = testing::synthetic_cluster(400, 9, now());
    // The synthetic nodes, then the corpus's odd shapes (stuck, pressured, unnamed, …).
    let nodes: Vec<Value> = cluster
        .iter()
        .map(|n| node(&n.summary))
        .chain(node_corpus().into_iter().skip(60))
        .collect();
    let leases: Vec<Value> = cluster
        .iter()
        .map(|n| lease(&n.lease.node, n.lease.renewed))
        .collect();
    let csrs: Vec<Value> = testing::synthetic_csrs(40, 9, now())
        .iter()
        .map(|c| {
            let cn = format!("system:node:{}", c.node);
            csr(&c.name, c.signer, &c.username, &cn, &c.conditions)
        })
        .collect();
    let mut odd = csr(
        "z-odd",
        crate::pulse::nodes::csr::KUBELET_SERVING_SIGNER,
        BOOTSTRAPPER,
        "nope",
        &[],
    );
    odd["metadata"]["creationTimestamp"] = json!("2026-11-24T00:00:00Z");
    let api = || {
        Api::default()
            .with(NODES, nodes.clone())
            .with(LEASES, leases.clone())
            .with(CSR_PATH, [csrs.clone(), vec![odd.clone()]].concat())
    };
    let forbidden = || {
        Answer::Status(
            403,
            status(403, "Forbidden", "certificatesigningrequests is forbidden"),
        )
    };
    let cases: Vec<(&str, Vec<&str>, Api)> = vec![
        (
            "synthetic",
            vec![
                "--verification-taint",
                SYNTHETIC_TAINT,
                "--page-size",
                "150",
            ],
            api(),
        ),
        (
            "expected nodes, every threshold",
            vec![
                "--expected-nodes",
                "500",
                "--min-ready-nodes",
                "2",
                "--not-ready-grace",
                "90s",
                "--stuck-terminating-after",
                "48h",
                "--stale-heartbeat-after",
                "1500ms",
                "--verification-taint",
                " node.example.com/unverified ,,",
                "--verification-grace",
                "1h30m",
                "--csr-pending-grace",
                "0s",
            ],
            api(),
        ),
        (
            "requests forbidden",
            vec![],
            api().answer(CSR_PATH, 0, forbidden()),
        ),
        (
            "nodes forbidden",
            vec![],
            api().answer(
                NODES,
                0,
                Answer::Status(403, status(403, "Forbidden", "nodes is forbidden")),
            ),
        ),
        (
            "leases unreachable",
            vec![],
            api().answer(LEASES, 0, Answer::Status(503, "no".to_owned())),
        ),
        (
            "empty cluster",
            vec![],
            Api::default()
                .with(NODES, vec![])
                .with(LEASES, vec![])
                .with(CSR_PATH, vec![]),
        ),
    ];
    let mut out = String::new();
    for (what, extra, api) in cases {
        let args = args(&extra);
        let (_, source) = start(api, args.page_size, Duration::from_secs(10)).await;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("adapter-report.json");
        let events = Events::start();
        let report = run(&args, &path, Ok(source), now()).await.unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            job_report::parse(written.as_bytes(), "Available").unwrap(),
            report
        );
        let _ = writeln!(out, "[{what}]\n{written}\n{}\n", events.lines().join("\n"));
    }
    // A source that could not be made.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("adapter-report.json");
    let events = Events::start();
    let err: Result<KubeNodeSource, _> = Err(SourceError::Config {
        path: Some("/k/config".into()),
        message: "no such file".to_owned(),
    });
    run(&args(&[]), &path, err, now()).await.unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    let _ = writeln!(
        out,
        "[no kubeconfig]\n{written}\n{}",
        events.lines().join("\n")
    );
    insta::assert_snapshot!("run", out);
}
