//! End-to-end: the real `hypershift-adapter nodes` binary against the testbed API server serving
//! Nodes, node Leases and CertificateSigningRequests, with a temp dir as the `emptyDir`. Every case reads the written report
//! with `job_report::parse` and asserts the exact reasons and the node names in the messages.
//!
//! Timestamps are relative to the moment the cluster is put into the server, and every age sits
//! minutes away from its threshold, so the grace logic is deterministic however slow the run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use http::Method;
use hypershift_adapter::pulse::nodes::judge::{self, ReadyState, TaintSummary};
use hypershift_adapter::pulse::nodes::source::LeaseRenewal;
use hypershift_adapter::pulse::nodes::{NodeSummary, Thresholds, testing};
use jiff::{SignedDuration, Timestamp};
use job_report::{ConditionStatus, Report};
use serde_json::{Value, json};
use testbed::csr::{BOOTSTRAPPER, KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER, KubeletCsr};
use testbed::kube_api::{ApiServer, Fault, FaultAction};
use testbed::pulse_job::PulseJob;
use tokio::process::Command;

const LEASES: &str = "kube-node-lease";
const TAINT: &str = testing::SYNTHETIC_TAINT;
const NODES_PATH: &str = "/api/v1/nodes";
const LEASES_PATH: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
const CSRS_PATH: &str = hypershift_adapter::pulse::nodes::source::CSR_PATH;
/// A worker of a platform-None NodePool, as seed 002 names them.
const WORKER: &str = "prod-eu-1-worker-ignition-1";

/// A cluster in the testbed API server, and a pulse's emptyDir.
struct Cluster {
    server: ApiServer,
    now: Timestamp,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    results: PathBuf,
}

/// One finished `hypershift-adapter nodes`.
struct Checked {
    code: Option<i32>,
    report: Report,
    text: String,
    logs: String,
    took: Duration,
}

impl Cluster {
    async fn new() -> Cluster {
        let server = ApiServer::start().await;
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = server.write_kubeconfig(dir.path());
        let results = dir.path().join("results").join("adapter-report.json");
        std::fs::create_dir_all(results.parent().unwrap()).unwrap();
        Cluster {
            server,
            now: Timestamp::now(),
            dir,
            kubeconfig,
            results,
        }
    }

    fn ago(&self, d: SignedDuration) -> Option<Timestamp> {
        Some(self.now - d)
    }

    /// A Ready node, a week old, heartbeat 10 s ago.
    fn healthy(&self, name: &str) -> NodeSummary {
        NodeSummary {
            name: name.to_owned(),
            created: self.ago(days(7)),
            ready: Some(ReadyState {
                status: ConditionStatus::True,
                since: self.ago(days(7)),
                heartbeat: self.ago(secs(10)),
            }),
            ..NodeSummary::default()
        }
    }

    /// A node whose Ready condition has had `status` for `for_`.
    fn ready(&self, name: &str, status: ConditionStatus, for_: SignedDuration) -> NodeSummary {
        let mut node = self.healthy(name);
        node.ready = Some(ReadyState {
            status,
            since: self.ago(for_),
            heartbeat: self.ago(secs(10)),
        });
        node
    }

    /// Puts the Node (a full object, as a kubelet reports it) and, when given, its Lease
    /// renewed `lease` ago.
    fn put(&self, node: &NodeSummary, lease: Option<SignedDuration>) {
        self.server
            .put_node(serde_json::to_value(testing::node_object(node)).unwrap());
        if let Some(age) = lease {
            let lease = LeaseRenewal {
                node: node.name.clone(),
                renewed: self.ago(age),
            };
            self.server.put_lease(
                LEASES,
                serde_json::to_value(testing::lease_object(&lease)).unwrap(),
            );
        }
    }

    /// Puts a node with a fresh (5 s old) lease.
    fn put_fresh(&self, node: &NodeSummary) {
        self.put(node, Some(secs(5)));
    }

    /// Puts a kubelet CertificateSigningRequest created `age` ago, with a real request for
    /// `node`.
    fn put_csr(&self, csr: &KubeletCsr<'_>) {
        self.server.put_csr(csr.object().unwrap());
    }

    /// A joining node's first client request, made by the bootstrapper, created `age` ago.
    fn bootstrap_csr<'a>(
        &self,
        name: &'a str,
        node: &'a str,
        age: SignedDuration,
        conditions: &'a [&'a str],
    ) -> KubeletCsr<'a> {
        KubeletCsr {
            name,
            created: self.now - age,
            signer: KUBELET_CLIENT_SIGNER,
            username: BOOTSTRAPPER,
            node,
            conditions,
        }
    }

    fn env(&self) -> Vec<(String, String)> {
        pairs(&[
            ("KUBECONFIG", &self.kubeconfig.display().to_string()),
            ("RESULTS_OUTPUT_PATH", &self.results.display().to_string()),
            ("LOG_FORMAT", "json"),
        ])
    }

    async fn run(&self, args: &[&str]) -> Checked {
        self.run_with(args, &self.env()).await
    }

    /// Runs `hypershift-adapter nodes args` with exactly `env` and reads the report.
    async fn run_with(&self, args: &[&str], env: &[(String, String)]) -> Checked {
        let _ = std::fs::remove_file(&self.results);
        let out = self.spawn(args, env).await;
        let text = std::fs::read_to_string(&self.results).unwrap_or_else(|e| {
            panic!(
                "no report ({e}); exit {:?}; logs:\n{}",
                out.0.status, out.0.stderr
            )
        });
        let report = job_report::parse(text.as_bytes(), "Available").unwrap();
        Checked {
            code: out.0.status.code(),
            report,
            text,
            logs: out.0.stderr,
            took: out.1,
        }
    }

    async fn spawn(&self, args: &[&str], env: &[(String, String)]) -> (Exit, Duration) {
        let started = Instant::now();
        let out = Command::new(testbed::binaries::path("hypershift-adapter"))
            .arg("nodes")
            .args(args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(Duration::from_secs(120), out)
            .await
            .expect("the adapter did not exit within 120 s")
            .unwrap();
        let took = started.elapsed();
        (
            Exit {
                status: out.status,
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            },
            took,
        )
    }

    /// LIST requests for `path`, in order: their raw query strings.
    fn lists(&self, path: &str) -> Vec<String> {
        self.server
            .requests()
            .iter()
            .filter(|r| r.method == Method::GET && r.path == path)
            .map(|r| r.query.clone().unwrap_or_default())
            .collect()
    }
}

struct Exit {
    status: std::process::ExitStatus,
    stderr: String,
}

impl Checked {
    /// `(type, status, reason)` in report order.
    fn reasons(&self) -> Vec<(String, String, String)> {
        self.report
            .conditions
            .iter()
            .map(|c| {
                (
                    c.type_.clone(),
                    c.status.as_str().to_owned(),
                    c.reason.clone(),
                )
            })
            .collect()
    }

    fn message(&self, type_: &str) -> &str {
        &self.report.condition(type_).unwrap().message
    }

    fn data(&self, key: &str) -> &Value {
        &self.report.data.as_ref().unwrap()[key]
    }

    /// Exit 0 and the report carries Applied=True ChecksExecuted, then `available` and `health`.
    fn assert_checked(&self, available: (&str, &str), health: (&str, &str)) {
        assert_eq!(self.code, Some(0), "{}", self.logs);
        assert_eq!(
            self.reasons(),
            triples(&[
                ("Applied", "True", "ChecksExecuted"),
                ("Available", available.0, available.1),
                ("Health", health.0, health.1),
            ]),
            "{}",
            self.text
        );
    }

    /// Exit 0, Applied=False with `reason`, Available and Health Unknown with the same reason.
    fn assert_failed(&self, reason: &str) {
        assert_eq!(self.code, Some(0), "{}", self.logs);
        assert_eq!(
            self.reasons(),
            triples(&[
                ("Applied", "False", reason),
                ("Available", "Unknown", reason),
                ("Health", "Unknown", reason),
            ]),
            "{}",
            self.text
        );
        let applied = self.message("Applied");
        assert_eq!(
            self.message("Health"),
            format!("Nodes were not checked: {applied}")
        );
    }
}

fn secs(s: i64) -> SignedDuration {
    SignedDuration::from_secs(s)
}

fn mins(m: i64) -> SignedDuration {
    SignedDuration::from_mins(m)
}

fn days(d: i64) -> SignedDuration {
    SignedDuration::from_hours(24 * d)
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn triples(items: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    items
        .iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect()
}

// ---- judgements -------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_cluster_is_available_with_no_issues() {
    let c = Cluster::new().await;
    for name in ["worker-a", "worker-b", "worker-c"] {
        c.put_fresh(&c.healthy(name));
    }
    let r = c
        .run(&[
            "--generation",
            "4",
            "--cluster-id",
            testbed::ids::CLUSTER_ID,
        ])
        .await;
    r.assert_checked(("True", "NodesReady"), ("True", "NoIssues"));
    assert_eq!(r.report.adapter.as_deref(), Some("hypershift-nodes"));
    assert_eq!(r.report.observed_generation, Some(4));
    assert_eq!(r.message("Applied"), "Checked 3 nodes and 3 node leases");
    assert_eq!(
        r.message("Available"),
        "3 of 3 nodes Ready; at least 1 required"
    );
    assert_eq!(r.message("Health"), "No issues on 3 nodes");
    assert_eq!(r.data("nodes_total"), 3);
    assert_eq!(r.data("nodes_ready"), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_ready_within_the_grace_is_no_issue_even_with_a_silent_lease() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    // Ready False for 1m and Unknown for 2m (grace 5m); both leases 3m old (stale limit 2m):
    // the grace wins over the shorter heartbeat limit.
    c.put(
        &c.ready("worker-b", ConditionStatus::False, mins(1)),
        Some(mins(3)),
    );
    c.put(
        &c.ready("worker-c", ConditionStatus::Unknown, mins(2)),
        Some(mins(3)),
    );
    let r = c.run(&[]).await;
    r.assert_checked(("True", "NodesReady"), ("True", "NoIssues"));
    assert_eq!(
        r.message("Available"),
        "1 of 3 nodes Ready; at least 1 required"
    );
    assert_eq!(
        r.message("Health"),
        "No issues on 3 nodes (2 not Ready within the 5m grace)"
    );
    assert_eq!(r.data("not_ready_within_grace"), 2);
    assert_eq!(r.data("stale_heartbeat"), &json!({"count": 0, "nodes": []}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_false_past_the_grace_is_nodes_not_ready() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    // The kubelet is alive (fresh lease) but reports NotReady for 10m.
    c.put_fresh(&c.ready("worker-b", ConditionStatus::False, mins(10)));
    let r = c.run(&[]).await;
    r.assert_checked(("True", "NodesReady"), ("False", "NodesNotReady"));
    assert_eq!(
        r.message("Health"),
        "1 node not Ready for longer than 5m: worker-b."
    );
    assert_eq!(
        r.message("Available"),
        "1 of 2 nodes Ready; at least 1 required"
    );
    assert_eq!(
        r.data("not_ready"),
        &json!({"count": 1, "nodes": ["worker-b"]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_unknown_past_the_grace_with_a_silent_lease_is_not_ready_and_stale() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    c.put(
        &c.ready("worker-b", ConditionStatus::Unknown, mins(10)),
        Some(mins(10)),
    );
    let r = c.run(&["--not-ready-grace", "3m"]).await;
    r.assert_checked(("True", "NodesReady"), ("False", "NodesNotReady"));
    assert_eq!(
        r.message("Health"),
        "1 node not Ready for longer than 3m: worker-b. Also: 1 node without a recent heartbeat."
    );
    assert_eq!(
        r.data("stale_heartbeat"),
        &json!({"count": 1, "nodes": ["worker-b"]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fewer_ready_nodes_than_expected_is_not_available() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    c.put_fresh(&c.healthy("worker-b"));
    let r = c.run(&["--expected-nodes", "3"]).await;
    r.assert_checked(("False", "InsufficientReadyNodes"), ("True", "NoIssues"));
    assert_eq!(
        r.message("Available"),
        "2 of 2 nodes Ready; at least 3 required (--expected-nodes)"
    );
    assert_eq!(r.data("ready_required"), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_disk_pid_pressure_and_network_unavailable_are_node_pressure() {
    let c = Cluster::new().await;
    let mut a = c.healthy("worker-a");
    a.memory_pressure = true;
    let mut b = c.healthy("worker-b");
    b.disk_pressure = true;
    b.pid_pressure = true;
    let mut d = c.healthy("worker-d");
    d.network_unavailable = true;
    for node in [a, b, c.healthy("worker-c"), d] {
        c.put_fresh(&node);
    }
    let r = c.run(&[]).await;
    r.assert_checked(("True", "NodesReady"), ("False", "NodePressure"));
    assert_eq!(
        r.message("Health"),
        "3 nodes under pressure: worker-a (MemoryPressure), worker-b (DiskPressure, PIDPressure), worker-d (NetworkUnavailable)."
    );
    assert_eq!(
        r.message("Available"),
        "4 of 4 nodes Ready; at least 1 required"
    );
    assert_eq!(
        r.data("pid_pressure"),
        &json!({"count": 1, "nodes": ["worker-b"]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cordoned_node_is_counted_but_not_a_health_problem() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    let mut b = c.healthy("worker-b");
    b.unschedulable = true;
    c.put_fresh(&b);
    let r = c.run(&[]).await;
    r.assert_checked(("True", "NodesReady"), ("True", "NoIssues"));
    assert_eq!(r.message("Health"), "No issues on 2 nodes (1 cordoned)");
    assert_eq!(
        r.data("cordoned"),
        &json!({"count": 1, "nodes": ["worker-b"]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verification_taint_past_its_grace_is_nodes_unverified() {
    let c = Cluster::new().await;
    let tainted = |name: &str, key: &str, age: SignedDuration| {
        let mut node = c.healthy(name);
        node.taints.push(TaintSummary {
            key: key.to_owned(),
            time_added: c.ago(age),
        });
        node
    };
    c.put_fresh(&tainted("worker-a", TAINT, mins(10)));
    c.put_fresh(&tainted("worker-b", TAINT, mins(20)));
    c.put_fresh(&tainted(
        "worker-c",
        "example.com/not-verification",
        days(1),
    ));
    let r = c.run(&["--verification-taint", TAINT]).await;
    r.assert_checked(("True", "NodesReady"), ("False", "NodesUnverified"));
    assert_eq!(
        r.message("Health"),
        format!("1 node carrying a verification taint for longer than 15m: worker-b ({TAINT}).")
    );
    assert_eq!(
        r.data("unverified"),
        &json!({"count": 1, "nodes": [{"name": "worker-b", "taints": [TAINT]}]})
    );

    // Without the flag no taint is a verification taint.
    let r = c.run(&[]).await;
    r.assert_checked(("True", "NodesReady"), ("True", "NoIssues"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminating_with_finalizers_past_the_limit_is_stuck() {
    let c = Cluster::new().await;
    let deleting = |name: &str, age: SignedDuration| {
        let mut node = c.healthy(name);
        node.deleting_since = c.ago(age);
        node.finalizers = vec![
            "example.com/z-cleanup".to_owned(),
            "example.com/a-drain".to_owned(),
        ];
        node
    };
    c.put_fresh(&deleting("worker-a", mins(20)));
    c.put_fresh(&deleting("worker-b", mins(5)));
    c.put_fresh(&c.healthy("worker-c"));
    let r = c.run(&["--stuck-terminating-after", "10m"]).await;
    r.assert_checked(("True", "NodesReady"), ("False", "NodesStuckTerminating"));
    assert_eq!(
        r.message("Health"),
        "1 node stuck terminating for longer than 10m: worker-a (finalizers: example.com/a-drain, example.com/z-cleanup)."
    );

    // The default limit (30m) is not reached by either.
    let r = c.run(&[]).await;
    r.assert_checked(("True", "NodesReady"), ("True", "NoIssues"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ready_node_with_a_stale_lease_is_stale_heartbeats() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    c.put(&c.healthy("worker-b"), Some(mins(5)));
    // No Lease: the Ready condition's heartbeat (10 s ago) stands in.
    c.put(&c.healthy("worker-c"), None);
    let r = c.run(&[]).await;
    r.assert_checked(("True", "NodesReady"), ("False", "StaleHeartbeats"));
    assert_eq!(r.message("Applied"), "Checked 3 nodes and 2 node leases");
    assert_eq!(
        r.message("Health"),
        "1 node without a heartbeat for longer than 2m: worker-b."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_names_the_worst_problem_and_counts_the_others() {
    let c = Cluster::new().await;
    c.put_fresh(&c.ready("worker-a", ConditionStatus::False, mins(10)));
    c.put(&c.healthy("worker-b"), Some(mins(5)));
    let mut pressured = c.healthy("worker-c");
    pressured.memory_pressure = true;
    c.put_fresh(&pressured);
    let mut stuck = c.healthy("worker-d");
    stuck.deleting_since = c.ago(SignedDuration::from_hours(2));
    stuck.finalizers = vec!["example.com/cleanup".to_owned()];
    c.put_fresh(&stuck);
    let mut unverified = c.healthy("worker-e");
    unverified.taints.push(TaintSummary {
        key: TAINT.to_owned(),
        time_added: c.ago(SignedDuration::from_hours(1)),
    });
    c.put_fresh(&unverified);
    let r = c.run(&["--verification-taint", TAINT]).await;
    r.assert_checked(("True", "NodesReady"), ("False", "NodesNotReady"));
    assert_eq!(
        r.message("Health"),
        "1 node not Ready for longer than 5m: worker-a. Also: 1 node without a recent heartbeat; \
         1 node under pressure; 1 node stuck terminating; 1 node unverified."
    );
}

// ---- kubelet certificate signing requests ---------------------------------------------------------

/// Health's advice when requests are pending.
const APPROVE: &str = "Check that each node is one you expect to join, then approve its request \
    with `oc adm certificate approve <name>` (or `kubectl certificate approve`), or deny it; \
    this adapter never approves requests.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_platform_none_worker_waiting_on_its_bootstrap_request_is_named() {
    // Seed 002: the worker booted from its ignition, its kubelet asked for a client
    // certificate, nothing approves it on platform None; no Node object exists yet.
    let c = Cluster::new().await;
    c.put_csr(&c.bootstrap_csr("csr-7xq2p", WORKER, mins(20), &[]));
    let args = [
        "--cluster-id",
        testbed::ids::CLUSTER_ID,
        "--generation",
        "3",
    ];
    let r = c.run(&args).await;
    r.assert_checked(
        ("False", "InsufficientReadyNodes"),
        ("False", "PendingCertificateRequests"),
    );
    assert_eq!(r.message("Applied"), "Checked 0 nodes and 0 node leases");
    assert_eq!(
        r.message("Health"),
        format!(
            "1 kubelet certificate signing request pending for longer than 10m: \
             csr-7xq2p (node {WORKER}, {KUBELET_CLIENT_SIGNER}). {APPROVE}"
        )
    );
    assert_eq!(
        r.data("pending_certificate_requests"),
        &json!({"checked": true, "count": 1, "within_grace": 0, "requests": [
            {"name": "csr-7xq2p", "node": WORKER, "signer": KUBELET_CLIENT_SIGNER}
        ]})
    );
    assert_eq!(c.lists(CSRS_PATH).len(), 1);

    // Someone approved it (and denied an impostor's): nothing pending is reported.
    c.put_csr(&c.bootstrap_csr("csr-7xq2p", WORKER, mins(20), &["Approved"]));
    c.put_csr(&c.bootstrap_csr("csr-9zzzz", "intruder-1", mins(30), &["Denied"]));
    let r = c.run(&args).await;
    r.assert_checked(("False", "InsufficientReadyNodes"), ("True", "NoIssues"));
    assert_eq!(r.message("Health"), "No issues on 0 nodes");

    // The node registered and asked for its serving certificate 2 minutes ago: within the
    // grace, counted but not a problem.
    c.put_fresh(&c.healthy(WORKER));
    c.put_csr(&KubeletCsr {
        name: "csr-b4kqm",
        created: c.now - mins(2),
        signer: KUBELET_SERVING_SIGNER,
        username: &format!("system:node:{WORKER}"),
        node: WORKER,
        conditions: &[],
    });
    let r = c.run(&args).await;
    r.assert_checked(("True", "NodesReady"), ("True", "NoIssues"));
    assert_eq!(
        r.data("pending_certificate_requests"),
        &json!({"checked": true, "count": 0, "within_grace": 1, "requests": []})
    );

    // A shorter grace makes it a problem, though the node is Ready: its kubelet cannot serve
    // logs, exec or metrics without the certificate.
    let r = c.run(&["--csr-pending-grace", "1m"]).await;
    r.assert_checked(
        ("True", "NodesReady"),
        ("False", "PendingCertificateRequests"),
    );
    assert!(
        r.message("Health").starts_with(&format!(
            "1 kubelet certificate signing request pending for longer than 1m: \
             csr-b4kqm (node {WORKER}, {KUBELET_SERVING_SIGNER})."
        )),
        "{}",
        r.message("Health")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_node_cannot_be_read_names_its_requester() {
    let c = Cluster::new().await;
    let mut csr = c
        .bootstrap_csr("csr-garbled", WORKER, mins(20), &[])
        .object()
        .unwrap();
    csr["spec"]["request"] = json!("bm90IGEgY2VydGlmaWNhdGUgcmVxdWVzdA==");
    c.server.put_csr(csr);
    c.put_csr(&c.bootstrap_csr("csr-ok", "prod-eu-1-worker-ignition-2", mins(20), &[]));
    let r = c.run(&[]).await;
    r.assert_checked(
        ("False", "InsufficientReadyNodes"),
        ("False", "PendingCertificateRequests"),
    );
    assert_eq!(
        r.message("Health"),
        format!(
            "2 kubelet certificate signing requests pending for longer than 10m: \
             csr-garbled (node unknown, requested by {BOOTSTRAPPER}, {KUBELET_CLIENT_SIGNER}), \
             csr-ok (node prod-eu-1-worker-ignition-2, {KUBELET_CLIENT_SIGNER}). {APPROVE}"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_signing_requests_are_listed_page_by_page_after_the_nodes() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    let names = ["csr-a", "csr-b", "csr-c", "csr-d"];
    for name in names {
        c.put_csr(&c.bootstrap_csr(name, "worker-x", mins(30), &["Approved"]));
    }
    // On the last page: only seen if every page is read.
    c.put_csr(&c.bootstrap_csr("csr-e", WORKER, mins(30), &[]));
    let r = c.run(&["--page-size", "2"]).await;
    r.assert_checked(
        ("True", "NodesReady"),
        ("False", "PendingCertificateRequests"),
    );
    assert!(
        r.message("Health").contains("csr-e (node"),
        "{}",
        r.message("Health")
    );
    let lists = c.lists(CSRS_PATH);
    assert_eq!(lists.len(), 3, "{lists:?}");
    assert!(lists.iter().all(|q| q.contains("limit=2")), "{lists:?}");
    assert!(!lists[0].contains("continue="), "{lists:?}");
    assert!(
        lists[1..].iter().all(|q| q.contains("continue=")),
        "{lists:?}"
    );
    let requests = c.server.requests();
    let last_node = requests.iter().rposition(|r| r.path == NODES_PATH).unwrap();
    let first_csr = requests.iter().position(|r| r.path == CSRS_PATH).unwrap();
    assert!(last_node < first_csr, "nodes are read before the requests");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_csr_grant_the_nodes_are_still_reported_and_the_grant_is_named() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    c.put_csr(&c.bootstrap_csr("csr-7xq2p", WORKER, mins(20), &[]));
    c.server
        .deny("certificates.k8s.io", "certificatesigningrequests");
    let not_checked = format!(
        "Certificate signing requests were not checked: not allowed to list certificate signing \
         requests: HTTP 403: certificatesigningrequests.certificates.k8s.io is forbidden: User \
         {:?} cannot list resource \"certificatesigningrequests\" in API group \
         \"certificates.k8s.io\" at the cluster scope. Grant get and list on \
         certificatesigningrequests (API group certificates.k8s.io, cluster scope) as the \
         ClusterRole in manifests/rbac-nodes.yaml does.",
        c.server.user()
    );
    let r = c.run(&[]).await;
    r.assert_checked(("True", "NodesReady"), ("True", "NoIssues"));
    assert_eq!(
        r.message("Applied"),
        "Checked 1 node and 1 node lease; certificate signing requests could not be listed (Forbidden)"
    );
    assert_eq!(
        r.message("Health"),
        format!("No issues on 1 node. {not_checked}")
    );
    assert_eq!(
        r.data("pending_certificate_requests"),
        &json!({"checked": false, "reason": "Forbidden"})
    );
    let warning = r
        .logs
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["level"] == "WARN")
        .unwrap_or_else(|| panic!("no warning in {}", r.logs));
    assert_eq!(warning["reason"], "Forbidden", "{warning}");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .starts_with("cannot list certificate signing requests"),
        "{warning}"
    );
    assert_eq!(c.lists(CSRS_PATH).len(), 1, "a 403 is not retried");

    // A node problem is reported as always, with the same note.
    c.put_fresh(&c.ready("worker-b", ConditionStatus::False, mins(10)));
    let r = c.run(&[]).await;
    r.assert_checked(("True", "NodesReady"), ("False", "NodesNotReady"));
    assert_eq!(
        r.message("Health"),
        format!("1 node not Ready for longer than 5m: worker-b. {not_checked}")
    );
}

// ---- paging and the cluster's size ---------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_page_by_page_with_continue_tokens() {
    let c = Cluster::new().await;
    for name in ["worker-a", "worker-b", "worker-c", "worker-d"] {
        c.put_fresh(&c.healthy(name));
    }
    // On the last page: only seen if every page is read.
    c.put_fresh(&c.ready("worker-e", ConditionStatus::False, mins(10)));
    let r = c.run(&["--page-size", "2"]).await;
    r.assert_checked(("True", "NodesReady"), ("False", "NodesNotReady"));
    assert_eq!(r.message("Applied"), "Checked 5 nodes and 5 node leases");
    assert_eq!(
        r.message("Health"),
        "1 node not Ready for longer than 5m: worker-e."
    );
    for path in [LEASES_PATH, NODES_PATH] {
        let lists = c.lists(path);
        assert_eq!(lists.len(), 3, "{path}: {lists:?}");
        assert!(lists.iter().all(|q| q.contains("limit=2")), "{lists:?}");
        assert!(!lists[0].contains("continue="), "{lists:?}");
        assert!(
            lists[1..].iter().all(|q| q.contains("continue=")),
            "{lists:?}"
        );
        assert_ne!(lists[1], lists[2], "each page has its own token");
    }
    // Leases are read first, then nodes.
    let requests = c.server.requests();
    let first_node = requests.iter().position(|r| r.path == NODES_PATH).unwrap();
    let last_lease = requests
        .iter()
        .rposition(|r| r.path == LEASES_PATH)
        .unwrap();
    assert!(last_lease < first_node);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_list_is_restarted_once() {
    let c = Cluster::new().await;
    for name in ["worker-a", "worker-b", "worker-c"] {
        c.put_fresh(&c.healthy(name));
    }
    c.server
        .inject(Fault::new(NODES_PATH, 1, FaultAction::Status(410)));
    let r = c.run(&["--page-size", "2"]).await;
    r.assert_checked(("True", "NodesReady"), ("True", "NoIssues"));
    assert_eq!(r.message("Applied"), "Checked 3 nodes and 3 node leases");
    // 410, then the whole list again: two pages.
    assert_eq!(c.lists(NODES_PATH).len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_thousand_nodes_are_checked_with_the_counts_right() {
    let c = Cluster::new().await;
    let cluster = testing::synthetic_cluster(5000, 11, c.now);
    for node in &cluster {
        c.put(&node.summary, None);
        c.server.put_lease(
            LEASES,
            serde_json::to_value(testing::lease_object(&node.lease)).unwrap(),
        );
    }
    // And the requests a busy cluster holds, each with a real request for its node.
    let csrs = testing::synthetic_csrs(600, 11, c.now);
    for csr in &csrs {
        c.put_csr(&KubeletCsr {
            name: &csr.name,
            created: csr.created,
            signer: csr.signer,
            username: &csr.username,
            node: &csr.node,
            conditions: &csr.conditions,
        });
    }
    let r = c
        .run(&["--verification-taint", TAINT, "--generation", "2"])
        .await;
    assert_eq!(r.code, Some(0), "{}", r.logs);

    // The same cluster judged in memory as of the moment it was generated: the synthetic ages
    // are at least 110 s from every threshold (a healthy lease is at most 10 s old, the
    // stale limit is 2m), so the run's few seconds change nothing.
    let thresholds = Thresholds {
        verification_taints: vec![TAINT.to_owned()],
        ..Thresholds::default()
    };
    let leases: HashMap<String, Timestamp> = cluster
        .iter()
        .filter_map(|n| Some((n.lease.node.clone(), n.lease.renewed?)))
        .collect();
    let mut findings = testing::judge(
        cluster.iter().map(|n| &n.summary),
        &leases,
        c.now,
        &thresholds,
    );
    let summaries: Vec<_> = csrs.iter().map(testing::SyntheticCsr::summary).collect();
    findings.certificate_requests =
        judge::CsrCheck::Checked(testing::judge_csrs(&summaries, c.now, &thresholds));
    assert!(
        findings.ready > 4800 && !findings.problems().is_empty(),
        "{findings:?}"
    );
    assert!(
        findings.count(hypershift_adapter::pulse::nodes::Problem::PendingCsr) > 10,
        "{:?}",
        findings.certificate_requests
    );
    assert_eq!(r.report, judge::report(&findings, &thresholds, Some(2)));
    assert_eq!(r.data("nodes_total"), 5000);
    assert_eq!(
        r.message("Applied"),
        "Checked 5000 nodes and 5000 node leases"
    );
    // 250 per page by default.
    assert_eq!(c.lists(NODES_PATH).len(), 20);
    assert_eq!(c.lists(LEASES_PATH).len(), 20);
    assert_eq!(c.lists(CSRS_PATH).len(), 3);
}

// ---- the API failing -----------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_is_unauthorized() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    c.server
        .inject(Fault::new(NODES_PATH, 1, FaultAction::Status(401)));
    let r = c.run(&[]).await;
    r.assert_failed("Unauthorized");
    assert_eq!(
        r.message("Applied"),
        "the API server rejected the credentials when listing nodes: HTTP 401: Unauthorized. \
         Check the kubeconfig (or the service account token) the Job mounts"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_is_unauthorized_and_never_reaches_the_report_or_logs() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    let wrong = "wrong-token-must-not-leak";
    let kubeconfig = c.dir.path().join("wrong-kubeconfig");
    std::fs::write(
        &kubeconfig,
        c.server.kubeconfig().replace(c.server.token(), wrong),
    )
    .unwrap();
    let mut env = c.env();
    env.retain(|(k, _)| k != "KUBECONFIG");
    let r = c
        .run_with(&["--kubeconfig", &kubeconfig.display().to_string()], &env)
        .await;
    r.assert_failed("Unauthorized");
    assert!(
        r.message("Applied").starts_with(
            "the API server rejected the credentials when listing leases in namespace kube-node-lease: HTTP 401"
        ),
        "{}",
        r.message("Applied")
    );
    assert!(!r.text.contains(wrong));
    assert!(!r.logs.contains(wrong));
    assert!(c.lists(NODES_PATH).is_empty(), "stops at the first failure");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_403_is_forbidden_with_the_servers_message() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    c.server
        .inject(Fault::new(LEASES_PATH, 1, FaultAction::Status(403)));
    let r = c.run(&[]).await;
    r.assert_failed("Forbidden");
    assert_eq!(
        r.message("Applied"),
        format!(
            "not allowed to list leases in namespace kube-node-lease: HTTP 403: \
             leases.coordination.k8s.io is forbidden: User {:?} cannot list resource \"leases\" \
             in API group \"coordination.k8s.io\" in the namespace \"kube-node-lease\". \
             Grant the ClusterRole and Role in manifests/rbac-nodes.yaml",
            c.server.user()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_is_cluster_unreachable_without_retries() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    c.server
        .inject(Fault::new(NODES_PATH, 1, FaultAction::Status(500)));
    let r = c.run(&[]).await;
    r.assert_failed("ClusterUnreachable");
    assert!(
        r.message("Applied")
            .starts_with("cannot read nodes from the API server: HTTP 500"),
        "{}",
        r.message("Applied")
    );
    assert_eq!(c.lists(NODES_PATH).len(), 1, "one attempt per pulse");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_api_is_cluster_unreachable_after_the_request_timeout() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    c.server
        .inject(Fault::new(LEASES_PATH, 1, FaultAction::Hang));
    let r = c.run(&["--request-timeout", "1s"]).await;
    r.assert_failed("ClusterUnreachable");
    // The per-call timeout starts before the request is sent, so it fires before the client's
    // read timeout (also 1s), which would say "cannot read leases … from the API server".
    assert_eq!(
        r.message("Applied"),
        "timed out after 1s listing leases in namespace kube-node-lease; the API server did not answer"
    );
    assert!(r.took >= Duration::from_secs(1), "{:?}", r.took);
    assert!(r.took < Duration::from_secs(10), "{:?}", r.took);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_port_is_cluster_unreachable() {
    let c = Cluster::new().await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    std::fs::write(
        &c.kubeconfig,
        c.server.kubeconfig().replace(&c.server.url(), &closed),
    )
    .unwrap();
    let r = c.run(&["--request-timeout", "5s"]).await;
    r.assert_failed("ClusterUnreachable");
    assert!(
        r.message("Applied")
            .starts_with("cannot read leases in namespace kube-node-lease from the API server: "),
        "{}",
        r.message("Applied")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exits_non_zero_only_when_no_report_can_be_written() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    let results = c.dir.path().join("no-such-dir").join("adapter-report.json");
    let mut env = c.env();
    env.retain(|(k, _)| k != "RESULTS_OUTPUT_PATH");
    env.push((
        "RESULTS_OUTPUT_PATH".to_owned(),
        results.display().to_string(),
    ));
    let (exit, _) = c.spawn(&[], &env).await;
    assert_eq!(exit.status.code(), Some(1), "{}", exit.stderr);
    assert!(!results.exists());
}

// ---- configuration from the environment, logs ------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_by_env_with_a_kubeconfig_list_and_json_logs_without_the_token() {
    let c = Cluster::new().await;
    for name in ["worker-a", "worker-b"] {
        c.put_fresh(&c.healthy(name));
    }
    let extra = c.dir.path().join("extra-kubeconfig");
    std::fs::write(
        &extra,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: other\n  cluster:\n    server: https://other.invalid\n",
    )
    .unwrap();
    let env = pairs(&[
        // A `:`-list like kubectl accepts; the file without a context merges in harmlessly.
        (
            "KUBECONFIG",
            &format!("{}:{}", c.kubeconfig.display(), extra.display()),
        ),
        // The status-reporter's name for the path.
        ("RESULTS_PATH", &c.results.display().to_string()),
        ("CLUSTER_ID", testbed::ids::CLUSTER_ID),
        ("GENERATION", "7"),
        ("EXPECTED_NODES", "3"),
    ]);
    let r = c.run_with(&[], &env).await;
    r.assert_checked(("False", "InsufficientReadyNodes"), ("True", "NoIssues"));
    assert_eq!(r.report.observed_generation, Some(7));
    assert!(!r.text.contains(c.server.token()));
    assert!(!r.logs.contains(c.server.token()));
    let events: Vec<Value> = r
        .logs
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let checked = events
        .iter()
        .find(|e| e["message"] == "nodes checked")
        .unwrap_or_else(|| panic!("no 'nodes checked' event in {}", r.logs));
    assert_eq!(checked["cluster_id"], testbed::ids::CLUSTER_ID);
    assert_eq!(checked["nodes"], 2);
    assert_eq!(checked["health"], "NoIssues");
    let written = events
        .iter()
        .find(|e| e["message"] == "report written")
        .unwrap();
    assert!(
        written["cpu_us"].as_u64().is_some_and(|us| us > 0),
        "{written}"
    );
    assert!(
        written["peak_rss_kib"].as_u64().is_some_and(|k| k > 0),
        "{written}"
    );
}

// ---- with the status-reporter ---------------------------------------------------------------------

/// The adapter and the real status-reporter share the emptyDir; returns the Job's conditions
/// `(type, status, reason)` sorted by type, and the Job.
async fn with_reporter(c: &Cluster, args: &[&str]) -> (Vec<(String, String, String)>, PulseJob) {
    let job = PulseJob::seed(
        &c.server,
        "hyperfleet",
        &testbed::pulse_job::nodes_job_name(testbed::ids::CLUSTER_ID, 3),
        Some(600),
    );
    let reporter = Command::new(testbed::binaries::path("status-reporter"))
        .env_clear()
        .envs(job.reporter_env(&c.kubeconfig, &c.results))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut env = c.env();
    env.push(("GENERATION".to_owned(), "3".to_owned()));
    let r = c.run_with(args, &env).await;
    assert_eq!(r.code, Some(0), "{}", r.logs);
    let out = tokio::time::timeout(Duration::from_secs(30), reporter.wait_with_output())
        .await
        .expect("the reporter did not exit")
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut conditions: Vec<(String, String, String)> = job
        .conditions(&c.server)
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (s("type"), s("status"), s("reason"))
        })
        .collect();
    conditions.sort();
    (conditions, job)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_status_reporter_the_findings_land_on_the_job() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    c.put_fresh(&c.healthy("worker-b"));
    let mut pressured = c.healthy("worker-c");
    pressured.disk_pressure = true;
    c.put_fresh(&pressured);
    c.put_fresh(&c.ready("worker-d", ConditionStatus::False, mins(1)));
    let (conditions, job) = with_reporter(&c, &[]).await;
    assert_eq!(
        conditions,
        triples(&[
            ("Applied", "True", "ChecksExecuted"),
            ("Available", "True", "NodesReady"),
            ("Health", "False", "NodePressure"),
        ])
    );
    let health = job
        .conditions(&c.server)
        .into_iter()
        .find(|c| c["type"] == "Health")
        .unwrap();
    assert_eq!(
        health["message"],
        "1 node under pressure: worker-c (DiskPressure)."
    );
    let data: Value = serde_json::from_str(
        &job.annotation(&c.server, "hyperfleet.io/report-data")
            .unwrap(),
    )
    .unwrap();
    assert_eq!(data["nodes_total"], 4);
    assert_eq!(data["nodes_ready"], 3);
    assert_eq!(data["not_ready_within_grace"], 1);
    assert_eq!(
        data["disk_pressure"],
        json!({"count": 1, "nodes": ["worker-c"]})
    );
    assert_eq!(
        job.annotation(&c.server, "hyperfleet.io/observed-generation")
            .as_deref(),
        Some("3")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_status_reporter_a_pending_request_lands_on_the_job() {
    let c = Cluster::new().await;
    c.put_csr(&c.bootstrap_csr("csr-7xq2p", WORKER, mins(20), &[]));
    let (conditions, job) = with_reporter(&c, &[]).await;
    assert_eq!(
        conditions,
        triples(&[
            ("Applied", "True", "ChecksExecuted"),
            ("Available", "False", "InsufficientReadyNodes"),
            ("Health", "False", "PendingCertificateRequests"),
        ])
    );
    let annotation = job
        .annotation(&c.server, "data.hyperfleet.io/pending_certificate_requests")
        .expect("one annotation per data key");
    assert_eq!(
        serde_json::from_str::<Value>(&annotation).unwrap(),
        json!({"checked": true, "count": 1, "within_grace": 0, "requests": [
            {"name": "csr-7xq2p", "node": WORKER, "signer": KUBELET_CLIENT_SIGNER}
        ]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_status_reporter_a_forbidden_list_lands_on_the_job() {
    let c = Cluster::new().await;
    c.put_fresh(&c.healthy("worker-a"));
    c.server
        .inject(Fault::new(NODES_PATH, 1, FaultAction::Status(403)));
    let (conditions, job) = with_reporter(&c, &[]).await;
    assert_eq!(
        conditions,
        triples(&[
            ("Applied", "False", "Forbidden"),
            ("Available", "Unknown", "Forbidden"),
            ("Health", "Unknown", "Forbidden"),
        ])
    );
    let applied = job
        .conditions(&c.server)
        .into_iter()
        .find(|c| c["type"] == "Applied")
        .unwrap();
    assert!(
        applied["message"]
            .as_str()
            .unwrap()
            .starts_with("not allowed to list nodes: HTTP 403: nodes is forbidden"),
        "{applied}"
    );
}
