//! End-to-end: the real `hypershift-adapter controlplane` binary against the fake Maestro (and
//! the fake Kubernetes API server for the `hub` backend), with a temp dir as the `emptyDir`.
//! Every case reads the report with `job_report::parse` and asserts exact reasons.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use hypershift_adapter::work::WorkClient;
use hypershift_adapter::work::maestro::{
    BearerToken, MaestroConfig, MaestroWorkClient, TokenSource,
};
use job_report::Report;
use serde_json::{Value, json};
use testbed::kube_api::ApiServer;
use testbed::maestro::{FakeMaestro, FakeOptions};
use testbed::pulse_job::PulseJob;
use tokio::process::Command;

const CLUSTER: &str = include_str!("../../adapter/tests/fixtures/cluster-valid.json");
const ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
const CONSUMER: &str = "mgmt-1";
const SOURCE: &str = "hyperfleet-hypershift-adapter";
const WORKS: &str = "/apis/work.open-cluster-management.io/v1";

fn work_name() -> String {
    format!("hostedcluster-{ID}")
}

/// A pulse's emptyDir and inputs.
struct Pod {
    dir: tempfile::TempDir,
    results: PathBuf,
    spec: PathBuf,
}

struct Pulse {
    code: Option<i32>,
    report: Report,
    logs: String,
    took: Duration,
}

impl Pod {
    fn new() -> Pod {
        Pod::with_cluster(CLUSTER)
    }

    fn with_cluster(cluster: &str) -> Pod {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results").join("adapter-report.json");
        std::fs::create_dir_all(results.parent().unwrap()).unwrap();
        let spec = dir.path().join("cluster.json");
        std::fs::write(&spec, cluster).unwrap();
        Pod { dir, results, spec }
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The adapter container's environment for the Maestro backend.
    fn maestro_env(&self, maestro: &FakeMaestro) -> Vec<(String, String)> {
        let mut env = self.base_env();
        env.extend(pairs(&[
            ("MAESTRO_API_URL", &maestro.rest_url()),
            ("MAESTRO_GRPC_URL", &maestro.grpc_url()),
        ]));
        env
    }

    fn base_env(&self) -> Vec<(String, String)> {
        pairs(&[
            ("CLUSTER_SPEC_FILE", &self.spec.display().to_string()),
            ("RESULTS_OUTPUT_PATH", &self.results.display().to_string()),
            ("MANAGEMENT_CLUSTER_CONSUMER", CONSUMER),
            ("LOG_FORMAT", "json"),
        ])
    }

    /// Runs one pulse with `env` (later entries win) and reads the report.
    async fn run(&self, env: &[(String, String)]) -> Pulse {
        let _ = std::fs::remove_file(&self.results);
        let started = Instant::now();
        let out = Command::new(testbed::binaries::path("hypershift-adapter"))
            .arg("controlplane")
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(Duration::from_secs(60), out)
            .await
            .expect("the adapter did not exit within 60 s")
            .unwrap();
        let took = started.elapsed();
        let logs = String::from_utf8_lossy(&out.stderr).into_owned();
        let bytes = std::fs::read(&self.results)
            .unwrap_or_else(|e| panic!("no report ({e}); exit {:?}; logs:\n{logs}", out.status));
        let report = job_report::parse(&bytes, "Available").unwrap();
        Pulse {
            code: out.status.code(),
            report,
            logs,
            took,
        }
    }
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn with(mut env: Vec<(String, String)>, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    env.extend(pairs(extra));
    env
}

impl Pulse {
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

    fn message(&self, type_: &str) -> String {
        self.report.condition(type_).unwrap().message.clone()
    }

    fn data(&self, key: &str) -> Value {
        self.report.data.as_ref().unwrap()[key].clone()
    }

    fn assert_written(&self) {
        assert_eq!(self.code, Some(0), "{}", self.logs);
    }
}

fn triples(items: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    items
        .iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect()
}

fn error_row(reason: &str) -> Vec<(String, String, String)> {
    triples(&[
        ("Applied", "False", reason),
        ("Available", "Unknown", reason),
        ("Health", "False", reason),
    ])
}

async fn maestro() -> FakeMaestro {
    FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.to_owned()],
        ..FakeOptions::default()
    })
    .await
    .unwrap()
}

fn ready_status(degraded: bool) -> Value {
    json!({
        "conditions": [
            {"type": "Available", "status": "True", "reason": "AsExpected", "message": "The hosted control plane is available"},
            {"type": "Progressing", "status": "False", "reason": "AsExpected", "message": ""},
            {"type": "Degraded", "status": if degraded { "True" } else { "False" },
             "reason": if degraded { "EtcdQuorumLost" } else { "AsExpected" },
             "message": if degraded { "etcd has lost quorum" } else { "" }}
        ],
        "controlPlaneEndpoint": {"host": "api.prod-eu-1.hcp.example.com", "port": 443},
        // Serving 4.17.0 with no rollout (a `Partial` newest entry would be an upgrade in
        // progress: Available False `Upgrading`).
        "version": {"desired": {"version": "4.17.0"}, "history": [
            {"state": "Completed", "version": "4.17.0"}
        ]}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pulses_create_then_await_feedback_then_report_ready_then_degraded() {
    let maestro = maestro().await;
    maestro.set_agent_delay(None); // the agent reports only when told
    let pod = Pod::new();
    let env = pod.maestro_env(&maestro);

    let first = pod.run(&env).await;
    first.assert_written();
    assert_eq!(
        first.reasons(),
        triples(&[
            ("Applied", "True", "ManifestWorkCreated"),
            ("Available", "False", "Provisioning"),
            ("Health", "True", "NoIssues"),
        ])
    );
    assert_eq!(first.report.observed_generation, Some(3));
    assert_eq!(
        first.report.adapter.as_deref(),
        Some("hypershift-controlplane")
    );
    assert_eq!(maestro.publishes(), 1);
    assert_eq!(maestro.rest_gets(), 1);
    let stored = maestro.resource(&work_name()).expect("the work is stored");
    assert_eq!(stored.consumer, CONSUMER);
    // Logs are JSON lines carrying the cluster id and generation, and no token.
    let decision = first
        .logs
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["decision"] == "ManifestWorkCreated")
        .expect("a decision event");
    assert_eq!(decision["cluster_id"], ID);
    assert_eq!(decision["generation"], 3);

    let second = pod.run(&env).await;
    second.assert_written();
    assert_eq!(
        second.reasons(),
        triples(&[
            ("Applied", "True", "ManifestWorkExists"),
            ("Available", "False", "AwaitingFeedback"),
            ("Health", "True", "NoIssues"),
        ])
    );
    assert_eq!(maestro.publishes(), 1, "pulse 2 published again");
    assert_eq!(maestro.rest_gets(), 2);

    assert!(maestro.set_feedback(&work_name(), &ready_status(false)));
    let third = pod.run(&env).await;
    third.assert_written();
    assert_eq!(
        third.reasons(),
        triples(&[
            ("Applied", "True", "ManifestWorkApplied"),
            ("Available", "True", "ControlPlaneReady"),
            ("Health", "True", "NoIssues"),
        ])
    );
    assert_eq!(
        third.data("control_plane_endpoint"),
        "https://api.prod-eu-1.hcp.example.com:443"
    );
    assert_eq!(third.data("version"), "4.17.0");

    assert!(maestro.set_feedback(&work_name(), &ready_status(true)));
    let fourth = pod.run(&env).await;
    fourth.assert_written();
    assert_eq!(
        fourth.reasons(),
        triples(&[
            ("Applied", "True", "ManifestWorkApplied"),
            ("Available", "True", "ControlPlaneReady"),
            ("Health", "False", "Degraded"),
        ])
    );
    assert!(fourth.message("Health").contains("etcd has lost quorum"));
    assert_eq!(maestro.publishes(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_raw_is_invalid_feedback() {
    let maestro = maestro().await;
    let pod = Pod::new();
    let env = pod.maestro_env(&maestro);
    pod.run(&env).await.assert_written();
    assert!(maestro.set_feedback_raw(&work_name(), "{\"conditions\": [oops"));
    let pulse = pod.run(&env).await;
    pulse.assert_written();
    assert_eq!(
        pulse.reasons(),
        triples(&[
            ("Applied", "True", "ManifestWorkExists"),
            ("Available", "Unknown", "InvalidFeedback"),
            ("Health", "Unknown", "InvalidFeedback"),
        ])
    );
    assert!(
        pulse.message("Available").contains("not valid JSON"),
        "{}",
        pulse.message("Available")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_consumer_is_consumer_not_found() {
    let maestro = maestro().await;
    let pod = Pod::new();
    let env = with(
        pod.maestro_env(&maestro),
        &[("MANAGEMENT_CLUSTER_CONSUMER", "nowhere-1")],
    );
    let pulse = pod.run(&env).await;
    pulse.assert_written();
    assert_eq!(pulse.reasons(), error_row("ConsumerNotFound"));
    assert!(pulse.message("Applied").contains("nowhere-1"));
    assert_eq!(maestro.resource_count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_token_over_tls_is_auth_failure_without_retries() {
    let maestro = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.to_owned()],
        ..FakeOptions::tls_with_token("the-right-token")
    })
    .await
    .unwrap();
    let pod = Pod::new();
    let ca = pod.file("ca.crt", maestro.ca_pem().unwrap());
    let token = pod.file("token", "s3cr3t-wrong-token\n");
    let env = with(
        pod.maestro_env(&maestro),
        &[
            ("MAESTRO_CA_FILE", &ca.display().to_string()),
            ("MAESTRO_TOKEN_FILE", &token.display().to_string()),
        ],
    );
    let pulse = pod.run(&env).await;
    pulse.assert_written();
    assert_eq!(pulse.reasons(), error_row("MaestroAuthFailed"));
    assert_eq!(maestro.publishes(), 1, "auth failures are not retried");
    assert!(!pulse.logs.contains("s3cr3t-wrong-token"), "token in logs");
    let report_text = std::fs::read_to_string(&pod.results).unwrap();
    assert!(
        !report_text.contains("s3cr3t-wrong-token"),
        "token in report"
    );

    // The right token works over the same TLS setup.
    std::fs::write(&token, "the-right-token").unwrap();
    let pulse = pod.run(&env).await;
    assert_eq!(
        pulse.report.condition("Applied").unwrap().reason,
        "ManifestWorkCreated"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maestro_down_is_unavailable_within_the_budget() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let pod = Pod::new();
    let url = format!("http://{closed}");
    let env = with(
        pod.base_env(),
        &[
            ("MAESTRO_API_URL", &url),
            ("MAESTRO_GRPC_URL", &url),
            ("RETRY_BUDGET_SECONDS", "3"),
        ],
    );
    let pulse = pod.run(&env).await;
    pulse.assert_written();
    assert_eq!(pulse.reasons(), error_row("MaestroUnavailable"));
    assert!(pulse.took < Duration::from_secs(8), "took {:?}", pulse.took);
    assert!(
        pulse.message("Applied").contains("attempts"),
        "{}",
        pulse.message("Applied")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transient_failure_is_retried_and_then_succeeds() {
    let maestro = maestro().await;
    maestro.fail_next(1);
    let pod = Pod::new();
    let pulse = pod.run(&pod.maestro_env(&maestro)).await;
    pulse.assert_written();
    assert_eq!(
        pulse.report.condition("Applied").unwrap().reason,
        "ManifestWorkCreated"
    );
    assert_eq!(maestro.publishes(), 1);
    assert!(
        pulse.took >= Duration::from_millis(500),
        "no backoff: {:?}",
        pulse.took
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn someone_elses_work_is_an_ownership_conflict() {
    let maestro = maestro().await;
    // Another adapter published a work under our name and source id.
    let mut config = MaestroConfig::new(maestro.grpc_url(), maestro.rest_url(), SOURCE, CONSUMER);
    config.token = TokenSource::Static(BearerToken::new("unused"));
    let other = MaestroWorkClient::new(config).unwrap();
    other
        .create(&json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": work_name(), "namespace": CONSUMER,
                         "labels": {"hyperfleet.io/cluster-id": "019a6f1f-0d2e-7c3b-a4f5-6e7d8c9b0a1f", "hyperfleet.io/adapter": "nodepool"}},
            "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "x", "namespace": "default"}, "data": {}}]}}
        }))
        .await
        .unwrap();
    assert_eq!(maestro.publishes(), 1);
    let pod = Pod::new();
    let pulse = pod.run(&pod.maestro_env(&maestro)).await;
    pulse.assert_written();
    assert_eq!(pulse.reasons(), error_row_false("OwnershipConflict"));
    assert!(
        pulse
            .message("Applied")
            .contains("019a6f1f-0d2e-7c3b-a4f5-6e7d8c9b0a1f")
    );
    assert_eq!(maestro.publishes(), 1, "the foreign work was touched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_spec_names_the_fields_and_sends_nothing() {
    let maestro = maestro().await;
    let mut cluster: Value = serde_json::from_str(CLUSTER).unwrap();
    cluster["spec"]["machine_network_cidr"] = json!("10.0.0.0/33");
    cluster["spec"]["pull_secret_name"] = json!("Not_A_Name");
    let pod = Pod::with_cluster(&cluster.to_string());
    let pulse = pod.run(&pod.maestro_env(&maestro)).await;
    pulse.assert_written();
    assert_eq!(pulse.reasons(), error_row_false("InvalidClusterSpec"));
    let applied = pulse.message("Applied");
    assert!(applied.contains("machine_network_cidr"), "{applied}");
    assert!(applied.contains("pull_secret_name"), "{applied}");
    assert_eq!(maestro.publishes(), 0);
    assert_eq!(maestro.rest_gets(), 0);

    // A flag override fixes the secret name, not the CIDR.
    let env = with(
        pod.maestro_env(&maestro),
        &[("PULL_SECRET_NAME", "pull-secret")],
    );
    let pulse = pod.run(&env).await;
    let applied = pulse.message("Applied");
    assert!(!applied.contains("pull_secret_name"), "{applied}");
    assert!(applied.contains("machine_network_cidr"), "{applied}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_from_the_hyperfleet_api_with_a_bearer_token() {
    use axum::extract::Path as UrlPath;
    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::get;

    async fn cluster(UrlPath(id): UrlPath<String>, headers: HeaderMap) -> (StatusCode, String) {
        if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer hf-token") {
            return (
                StatusCode::UNAUTHORIZED,
                r#"{"reason":"no token"}"#.to_owned(),
            );
        }
        if id != ID {
            return (
                StatusCode::NOT_FOUND,
                r#"{"reason":"no such cluster"}"#.to_owned(),
            );
        }
        (StatusCode::OK, CLUSTER.to_owned())
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().route("/api/hyperfleet/v1/clusters/{id}", get(cluster));
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let maestro = maestro().await;
    let pod = Pod::new();
    let token = pod.file("hf-token", "hf-token\n");
    let env: Vec<(String, String)> = pod
        .maestro_env(&maestro)
        .into_iter()
        .filter(|(k, _)| k != "CLUSTER_SPEC_FILE")
        .collect();
    let env = with(
        env,
        &[
            ("HYPERFLEET_API_URL", &api),
            ("HYPERFLEET_API_TOKEN_FILE", &token.display().to_string()),
            ("CLUSTER_ID", ID),
            ("GENERATION", "4"),
        ],
    );
    let pulse = pod.run(&env).await;
    pulse.assert_written();
    assert_eq!(
        pulse.report.condition("Applied").unwrap().reason,
        "ManifestWorkCreated"
    );
    assert_eq!(pulse.report.observed_generation, Some(4));

    // A refused token is reported, and nothing is sent.
    std::fs::write(&token, "stale").unwrap();
    let pulse = pod.run(&env).await;
    pulse.assert_written();
    assert_eq!(pulse.reasons(), error_row("ClusterSpecUnavailable"));
    assert!(
        pulse.message("Applied").contains("401"),
        "{}",
        pulse.message("Applied")
    );
    assert_eq!(maestro.publishes(), 1);
    server.abort();
}

/// An unsigned JWT whose `exp` is `exp` (what the adapter reads of a projected token).
fn jwt(exp: i64) -> String {
    use base64::Engine as _;
    let b64 = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let claims = json!({"aud": ["hyperfleet-api"], "exp": exp, "sub": "system:serviceaccount:hyperfleet-system:hypershift-adapter"});
    format!("{}.{}.c2ln", b64(&json!({"alg": "RS256"})), b64(&claims))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_goes_with_the_configured_scheme_and_a_bad_one_is_reported_not_sent() {
    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::get;
    use std::sync::{Arc, Mutex};

    // A recording HyperFleet API: every Authorization header it gets; it answers 404.
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/api/hyperfleet/v1/clusters/{id}",
        get(move |headers: HeaderMap| async move {
            let value = headers
                .get("authorization")
                .map(|v| v.to_str().unwrap().to_owned());
            record.lock().unwrap().push(value.unwrap_or_default());
            (StatusCode::NOT_FOUND, r#"{"reason":"recorded"}"#)
        }),
    );
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let maestro = maestro().await;
    let pod = Pod::new();
    let now = jiff::Timestamp::now().as_second();
    let token = pod.file("hf-token", &format!("{}\n", jwt(now + 600)));
    let file = token.display().to_string();
    let env: Vec<(String, String)> = pod
        .maestro_env(&maestro)
        .into_iter()
        .filter(|(k, _)| k != "CLUSTER_SPEC_FILE")
        .collect();
    let env = with(
        env,
        &[
            ("HYPERFLEET_API_URL", &api),
            ("HYPERFLEET_API_TOKEN_FILE", &file),
            ("CLUSTER_ID", ID),
        ],
    );

    // Bearer by default, ServiceAccount when configured; the token itself is never logged.
    for (scheme, sent) in [(None, "Bearer"), (Some("ServiceAccount"), "ServiceAccount")] {
        let env = match scheme {
            Some(s) => with(env.clone(), &[("HYPERFLEET_API_AUTH_SCHEME", s)]),
            None => env.clone(),
        };
        let pulse = pod.run(&env).await;
        assert_eq!(pulse.reasons(), error_row("ClusterSpecUnavailable"));
        let last = seen.lock().unwrap().last().cloned().unwrap();
        assert_eq!(last, format!("{sent} {}", jwt(now + 600)));
        assert!(!pulse.logs.contains(&jwt(now + 600)), "token in logs");
    }
    assert_eq!(seen.lock().unwrap().len(), 2);

    // Expired, empty, missing: a report naming the file and what to do, and nothing sent.
    std::fs::write(&token, jwt(now - 5)).unwrap();
    let expired = pod.run(&env).await;
    std::fs::write(&token, "\n").unwrap();
    let empty = pod.run(&env).await;
    std::fs::remove_file(&token).unwrap();
    let missing = pod.run(&env).await;
    for (pulse, says) in [
        (expired, "expired"),
        (empty, "is empty"),
        (missing, "cannot read"),
    ] {
        assert_eq!(pulse.reasons(), error_row("ClusterSpecUnavailable"));
        let message = pulse.message("Applied");
        for part in [says, file.as_str(), "projected ServiceAccount token"] {
            assert!(message.contains(part), "{part:?} not in {message}");
        }
        assert!(
            !message.contains("c2ln") && !pulse.logs.contains("c2ln"),
            "token shown"
        );
    }
    assert_eq!(seen.lock().unwrap().len(), 2, "a bad token was sent");
    assert_eq!(maestro.publishes(), 0);
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hub_backend_creates_the_work_then_reads_its_feedback() {
    let server = ApiServer::start().await;
    let pod = Pod::new();
    let kubeconfig = server.write_kubeconfig(pod.dir.path());
    let env = with(
        pod.base_env(),
        &[
            ("WORK_BACKEND", "hub"),
            ("KUBECONFIG", &kubeconfig.display().to_string()),
        ],
    );
    let first = pod.run(&env).await;
    first.assert_written();
    assert_eq!(
        first.report.condition("Applied").unwrap().reason,
        "ManifestWorkCreated"
    );
    let mut work = server
        .object(WORKS, "manifestworks", Some(CONSUMER), &work_name())
        .expect("the work was created on the hub");
    assert_eq!(work["metadata"]["labels"]["hyperfleet.io/cluster-id"], ID);
    assert_eq!(
        work["spec"]["workload"]["manifests"][1]["kind"],
        "HostedCluster"
    );

    let second = pod.run(&env).await;
    assert_eq!(
        second.report.condition("Available").unwrap().reason,
        "AwaitingFeedback"
    );

    work["status"] = json!({
        "conditions": [{"type": "Applied", "status": "True", "reason": "AppliedManifestWorkComplete",
                        "message": "ok", "lastTransitionTime": "2026-11-25T10:30:00Z"}],
        "resourceStatus": {"manifests": [{
            "resourceMeta": {"ordinal": 1, "group": "hypershift.openshift.io", "version": "v1beta1",
                             "kind": "HostedCluster", "resource": "hostedclusters",
                             "namespace": "clusters", "name": "prod-eu-1"},
            "statusFeedback": {"values": [{"name": "status",
                "fieldValue": {"type": "JsonRaw", "jsonRaw": ready_status(false).to_string()}}]},
            "conditions": [
                {"type": "Applied", "status": "True", "reason": "AppliedManifestComplete", "message": "Apply manifest complete",
                 "lastTransitionTime": "2026-11-25T10:30:00Z", "observedGeneration": 1},
                {"type": "Available", "status": "True", "reason": "ResourceAvailable", "message": "Resource is available",
                 "lastTransitionTime": "2026-11-25T10:30:00Z"},
                {"type": "StatusFeedbackSynced", "status": "True", "reason": "StatusFeedbackSynced", "message": "",
                 "lastTransitionTime": "2026-11-25T10:31:00Z"}
            ]
        }]}
    });
    // What the hub's agent feeds back for the work's own rules: scalars, no whole status.
    let mut status = work["status"].take();
    testbed::hub_agent::agent_feedback(&work, &mut status);
    let names: Vec<&str> = status["resourceStatus"]["manifests"][0]["statusFeedback"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"status.conditions[type=Available].status") && !names.contains(&"status"),
        "{names:?}"
    );
    work["status"] = status;
    server.put_object(WORKS, Some(CONSUMER), work);
    let third = pod.run(&env).await;
    third.assert_written();
    assert_eq!(
        third.reasons(),
        triples(&[
            ("Applied", "True", "ManifestWorkApplied"),
            ("Available", "True", "ControlPlaneReady"),
            ("Health", "True", "NoIssues"),
        ])
    );
    assert_eq!(third.data("version"), "4.17.0");
    let posts = server
        .requests()
        .iter()
        .filter(|r| r.method == http::Method::POST && r.path.ends_with("/manifestworks"))
        .count();
    assert_eq!(posts, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adapter_and_status_reporter_together_put_the_conditions_on_the_job() {
    let maestro = maestro().await;
    let server = ApiServer::start().await;
    let job = PulseJob::seed(
        &server,
        "hyperfleet",
        &testbed::pulse_job::controlplane_job_name(ID, 3),
        Some(600),
    );
    let pod = Pod::new();
    let kubeconfig = server.write_kubeconfig(pod.dir.path());
    let reporter = Command::new(testbed::binaries::path("status-reporter"))
        .env_clear()
        .envs(job.reporter_env(&kubeconfig, &pod.results))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pulse = pod.run(&pod.maestro_env(&maestro)).await;
    pulse.assert_written();
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
        .conditions(&server)
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (s("type"), s("status"), s("reason"))
        })
        .collect();
    conditions.sort();
    assert_eq!(
        conditions,
        triples(&[
            ("Applied", "True", "ManifestWorkCreated"),
            ("Available", "False", "Provisioning"),
            ("Health", "True", "NoIssues"),
        ])
    );
    assert_eq!(
        job.annotation(&server, "hyperfleet.io/observed-generation")
            .as_deref(),
        Some("3")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_while_retrying_still_writes_a_report_and_exits_0() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let pod = Pod::new();
    let url = format!("http://{closed}");
    let env = with(
        pod.base_env(),
        &[
            ("MAESTRO_API_URL", &url),
            ("MAESTRO_GRPC_URL", &url),
            ("RETRY_BUDGET_SECONDS", "60"),
        ],
    );
    let child = Command::new(testbed::binaries::path("hypershift-adapter"))
        .arg("controlplane")
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Long enough for the handler to be installed, far inside the 60 s budget.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pid = child.id().unwrap().to_string();
    let sent = Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .expect("the adapter ignored SIGTERM")
        .unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "{:?}",
        sent.elapsed()
    );
    let logs = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{logs}");
    let report = job_report::parse(&std::fs::read(&pod.results).unwrap(), "Available").unwrap();
    let applied = report.condition("Applied").unwrap();
    assert_eq!(applied.reason, "MaestroUnavailable");
    assert!(applied.message.contains("stopped"), "{}", applied.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hub_backend_retries_a_503_and_reports_a_rejected_token() {
    use testbed::kube_api::{Fault, FaultAction};

    let server = ApiServer::start().await;
    let pod = Pod::new();
    let kubeconfig = server.write_kubeconfig(pod.dir.path());
    let env = with(
        pod.base_env(),
        &[
            ("WORK_BACKEND", "hub"),
            ("KUBECONFIG", &kubeconfig.display().to_string()),
        ],
    );
    server.inject(Fault::new("/manifestworks", 1, FaultAction::Status(503)).on(http::Method::POST));
    let pulse = pod.run(&env).await;
    pulse.assert_written();
    assert_eq!(
        pulse.report.condition("Applied").unwrap().reason,
        "ManifestWorkCreated"
    );
    let statuses: Vec<Option<u16>> = server
        .requests()
        .iter()
        .filter(|r| r.method == http::Method::POST && r.path.ends_with("/manifestworks"))
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, [Some(503), Some(201)]);

    let text = std::fs::read_to_string(&kubeconfig).unwrap();
    std::fs::write(&kubeconfig, text.replace(server.token(), "not-the-token")).unwrap();
    let pulse = pod.run(&env).await;
    pulse.assert_written();
    assert_eq!(pulse.reasons(), error_row("HubAuthFailed"));
    let message = pulse.message("Applied");
    assert!(
        message.contains(&format!("KUBECONFIG={}", kubeconfig.display()))
            && message.contains("on hub http")
            && message.contains("401")
            && !message.contains("Maestro"),
        "the hub, in its own words: {message}"
    );
    assert!(!pulse.logs.contains("not-the-token"), "token in logs");
}

/// The hub backend's failures in its own words: an unreachable hub is `HubUnavailable` naming
/// the kubeconfig and the API server, never Maestro's words. (Every hub reason: the nodepool
/// unit tests, `the_hub_backend_fails_in_its_own_words`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_hub_is_hub_unavailable_naming_the_hub() {
    let server = ApiServer::start().await;
    let pod = Pod::new();
    let kubeconfig = server.write_kubeconfig(pod.dir.path());
    let env = with(
        pod.base_env(),
        &[
            ("WORK_BACKEND", "hub"),
            ("KUBECONFIG", &kubeconfig.display().to_string()),
            ("RETRY_BUDGET_SECONDS", "1"),
        ],
    );
    let url = server.url();
    server.shutdown();
    let pulse = pod.run(&env).await;
    pulse.assert_written();
    assert_eq!(pulse.reasons(), error_row("HubUnavailable"));
    let message = pulse.message("Applied");
    assert!(
        message.contains(&format!("on hub {url}"))
            && message.contains(&format!("KUBECONFIG={}", kubeconfig.display()))
            && !message.contains("Maestro"),
        "{message}"
    );
}

/// A Job pointed at the wrong endpoint gets a message naming the URL and what was expected, and
/// no retries where retrying cannot help.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misconfigured_maestro_urls_name_the_url_and_what_was_expected() {
    let plain = maestro().await;
    let tls = FakeMaestro::start(FakeOptions {
        tls: true,
        consumers: vec![CONSUMER.to_owned()],
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let kube = ApiServer::start().await;
    let pod = Pod::new();
    let ca = pod.file("ca.pem", tls.ca_pem().unwrap());
    let ca = ca.display().to_string();
    let https = |u: String| u.replacen("http://", "https://", 1);
    let http = |u: String| u.replacen("https://", "http://", 1);
    // (case, REST URL, gRPC URL, the URL the message must name, what it must say)
    let cases = [
        (
            "gRPC URL is the REST port",
            plain.rest_url(),
            plain.rest_url(),
            "MAESTRO_GRPC_URL",
            "not as a gRPC server",
        ),
        (
            "REST URL is the gRPC port",
            plain.grpc_url(),
            plain.grpc_url(),
            "MAESTRO_API_URL",
            "does not answer HTTP/1.1",
        ),
        (
            "https:// on a plaintext server",
            https(plain.rest_url()),
            plain.grpc_url(),
            "MAESTRO_API_URL",
            "answered without TLS",
        ),
        (
            "https:// gRPC on a plaintext server",
            plain.rest_url(),
            https(plain.grpc_url()),
            "MAESTRO_GRPC_URL",
            "answered without TLS",
        ),
        (
            "http:// on a TLS server",
            http(tls.rest_url()),
            tls.grpc_url(),
            "MAESTRO_API_URL",
            "use https://",
        ),
        (
            "a Kubernetes API server, not Maestro",
            kube.url(),
            plain.grpc_url(),
            "MAESTRO_API_URL",
            "like a Kubernetes API server",
        ),
        (
            "a Kubernetes API server as gRPC",
            plain.rest_url(),
            kube.url(),
            "MAESTRO_GRPC_URL",
            "not as a gRPC server",
        ),
    ];
    for (case, rest, grpc, setting, says) in cases {
        let named = if setting == "MAESTRO_API_URL" {
            &rest
        } else {
            &grpc
        };
        let env = with(
            pod.base_env(),
            &[
                ("MAESTRO_API_URL", &rest),
                ("MAESTRO_GRPC_URL", &grpc),
                ("MAESTRO_CA_FILE", &ca),
                ("RETRY_BUDGET_SECONDS", "30"),
            ],
        );
        let pulse = pod.run(&env).await;
        pulse.assert_written();
        assert_eq!(pulse.reasons(), error_row("AdapterMisconfigured"), "{case}");
        let message = pulse.message("Applied");
        assert!(
            message.contains(&format!("{setting} {named}")),
            "{case}: {message}"
        );
        assert!(message.contains(says), "{case}: {message}");
        assert!(
            !pulse.logs.contains("retrying"),
            "{case}: retried:\n{}",
            pulse.logs
        );
    }
}

/// A UUIDv7-shaped cluster, so these cases do not share a work with the others.
const TRUTH_ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";

fn truth_cluster() -> String {
    let mut cluster: Value = serde_json::from_str(CLUSTER).unwrap();
    cluster["id"] = TRUTH_ID.into();
    cluster.to_string()
}

/// The API server's words in recording `06-apply-failure.json`.
const DENIED: &str = "hostedclusters.hypershift.openshift.io \"prod-eu-1\" is forbidden: ValidatingAdmissionPolicy 'deny-hc' with binding 'deny-hc' denied request: HostedCluster prod-eu-1 refused by an admission policy of this management cluster";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maestro_agent_truth_apply_failure_missing_namespace_and_a_deleted_hosted_cluster() {
    let maestro = maestro().await;
    maestro.set_agent_delay(None);
    // An empty management cluster: no `clusters` namespace.
    maestro.set_cluster_namespaces(&["default", "kube-system"]);
    let pod = Pod::with_cluster(&truth_cluster());
    let env = with(pod.maestro_env(&maestro), &[("GENERATION", "4")]);
    let work = format!("hostedcluster-{TRUTH_ID}");
    pod.run(&env).await.assert_written();

    // The work carries the namespace: the HostedCluster applies on the empty cluster.
    assert!(maestro.set_feedback(&work, &ready_status(false)));
    let ready = pod.run(&env).await;
    assert_eq!(
        ready.reasons(),
        triples(&[
            ("Applied", "True", "ManifestWorkApplied"),
            ("Available", "True", "ControlPlaneReady"),
            ("Health", "True", "NoIssues"),
        ])
    );
    // The management cluster holds generation 4's spec; a late pulse for generation 3 says so
    // (and sends nothing; a newer generation would update the work, see tests/lifecycle.rs).
    let publishes = maestro.publishes();
    let later = pod
        .run(&with(pod.maestro_env(&maestro), &[("GENERATION", "3")]))
        .await;
    assert_eq!(later.report.observed_generation, Some(4));
    assert_eq!(
        later.report.condition("Applied").unwrap().reason,
        "StaleGeneration"
    );
    assert_eq!(maestro.publishes(), publishes);

    // The HostedCluster is deleted on the management cluster: the agent keeps the old feedback.
    assert!(maestro.delete_on_cluster(&work, true));
    let gone = pod.run(&env).await;
    gone.assert_written();
    assert_eq!(
        gone.reasons(),
        triples(&[
            ("Applied", "True", "ManifestWorkApplied"),
            ("Available", "False", "HostedClusterMissing"),
            ("Health", "False", "HostedClusterMissing"),
        ])
    );
    assert_eq!(gone.data("control_plane_endpoint"), "");
    // Re-created by the agent's resync: no feedback yet.
    assert!(maestro.delete_on_cluster(&work, false));
    assert_eq!(
        pod.run(&env)
            .await
            .report
            .condition("Available")
            .unwrap()
            .reason,
        "AwaitingFeedback"
    );

    // An admission policy refuses the HostedCluster.
    assert!(maestro.fail_apply(&work, Some(DENIED)));
    let denied = pod.run(&env).await;
    denied.assert_written();
    assert_eq!(denied.reasons(), error_row_false("ApplyFailed"));
    assert!(
        denied
            .message("Applied")
            .contains(&format!("Failed to apply manifest: {DENIED}")),
        "{}",
        denied.message("Applied")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_without_its_namespace_fails_on_an_empty_management_cluster() {
    // The negative of the case above: what the real agent reported (recording 07) for a work
    // that does not carry the namespace.
    let maestro = maestro().await;
    maestro.set_agent_delay(None);
    maestro.set_cluster_namespaces(&["default"]);
    let pod = Pod::with_cluster(&truth_cluster());
    let env = pod.maestro_env(&maestro);
    pod.run(&env).await.assert_written();
    let work = format!("hostedcluster-{TRUTH_ID}");
    // Drop the Namespace manifest from the stored work, as an older adapter built it.
    let id = maestro.resource(&work).unwrap().id;
    assert!(maestro.strip_manifest_for_test(&id, "Namespace"));
    assert!(maestro.apply(&work));
    let pulse = pod.run(&env).await;
    assert_eq!(pulse.reasons(), error_row_false("ApplyFailed"));
    assert!(
        pulse
            .message("Applied")
            .contains(r#"Failed to apply manifest: namespaces "clusters" not found"#),
        "{}",
        pulse.message("Applied")
    );
}

fn error_row_false(reason: &str) -> Vec<(String, String, String)> {
    triples(&[
        ("Applied", "False", reason),
        ("Available", "False", reason),
        ("Health", "False", reason),
    ])
}

/// The hub ManifestWork status the work agent writes, shaped like the recordings: `applied` =
/// the HostedCluster manifest's Applied (with the agent's message when false), `available` its
/// Available, `feedback` the status kept.
fn hub_status(applied: Result<(), &str>, available: bool, feedback: Option<&Value>) -> Value {
    let t0 = "2026-11-26T03:36:31Z";
    let t1 = "2026-11-26T03:38:15Z";
    let mut hc_conditions = vec![match applied {
        Ok(()) => {
            json!({"type": "Applied", "status": "True", "reason": "AppliedManifestComplete", "message": "Apply manifest complete", "lastTransitionTime": t0, "observedGeneration": 1})
        }
        Err(m) => {
            json!({"type": "Applied", "status": "False", "reason": "AppliedManifestFailed", "message": format!("Failed to apply manifest: {m}"), "lastTransitionTime": t0, "observedGeneration": 1})
        }
    }];
    hc_conditions.push(if available {
        json!({"type": "Available", "status": "True", "reason": "ResourceAvailable", "message": "Resource is available", "lastTransitionTime": t0})
    } else {
        json!({"type": "Available", "status": "False", "reason": "ResourceNotAvailable", "message": "Resource is not available", "lastTransitionTime": t1})
    });
    if applied.is_ok() {
        hc_conditions.push(json!({"type": "StatusFeedbackSynced", "status": "True", "reason": "StatusFeedbackSynced", "message": "", "lastTransitionTime": t0}));
    }
    let values = feedback.map_or(json!({}), |f| {
        json!({"values": [{"name": "status", "fieldValue": {"type": "JsonRaw", "jsonRaw": f.to_string()}}]})
    });
    json!({
        "conditions": [
            {"type": "Applied", "status": if applied.is_ok() { "True" } else { "False" },
             "reason": if applied.is_ok() { "AppliedManifestWorkComplete" } else { "AppliedManifestWorkFailed" },
             "message": "", "lastTransitionTime": t0, "observedGeneration": 1},
            {"type": "Available", "status": if available { "True" } else { "False" },
             "reason": if available { "ResourcesAvailable" } else { "ResourcesNotAvailable" },
             "message": "", "lastTransitionTime": t0, "observedGeneration": 1}
        ],
        "resourceStatus": {"manifests": [
            {"resourceMeta": {"ordinal": 0, "group": "", "version": "v1", "kind": "Namespace", "resource": "namespaces", "namespace": "", "name": "clusters"},
             "statusFeedback": {},
             "conditions": [{"type": "Applied", "status": "True", "reason": "AppliedManifestComplete", "message": "Apply manifest complete", "lastTransitionTime": t0, "observedGeneration": 1},
                            {"type": "Available", "status": "True", "reason": "ResourceAvailable", "message": "Resource is available", "lastTransitionTime": t0}]},
            {"resourceMeta": {"ordinal": 1, "group": "hypershift.openshift.io", "version": "v1beta1", "kind": "HostedCluster", "resource": "hostedclusters", "namespace": "clusters", "name": "prod-eu-1"},
             "statusFeedback": values,
             "conditions": hc_conditions}
        ]}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hub_agent_truth_apply_failure_and_a_deleted_hosted_cluster() {
    let server = ApiServer::start().await;
    let pod = Pod::with_cluster(&truth_cluster());
    let kubeconfig = server.write_kubeconfig(pod.dir.path());
    let env = with(
        pod.base_env(),
        &[
            ("WORK_BACKEND", "hub"),
            ("KUBECONFIG", &kubeconfig.display().to_string()),
            ("GENERATION", "4"),
        ],
    );
    let name = format!("hostedcluster-{TRUTH_ID}");
    pod.run(&env).await.assert_written();
    let set_status = |mut status: Value| {
        let mut work = server
            .object(WORKS, "manifestworks", Some(CONSUMER), &name)
            .unwrap();
        // Fed back as the hub's agent does it, by the work's own (scalar) rules.
        testbed::hub_agent::agent_feedback(&work, &mut status);
        work["status"] = status;
        server.put_object(WORKS, Some(CONSUMER), work);
    };
    let ready = ready_status(false);

    set_status(hub_status(Ok(()), true, Some(&ready)));
    let first = pod.run(&env).await;
    assert_eq!(
        first.reasons(),
        triples(&[
            ("Applied", "True", "ManifestWorkApplied"),
            ("Available", "True", "ControlPlaneReady"),
            ("Health", "True", "NoIssues"),
        ])
    );
    let later = pod.run(&with(env.clone(), &[("GENERATION", "3")])).await;
    assert_eq!(later.report.observed_generation, Some(4));
    assert_eq!(
        later.report.condition("Applied").unwrap().reason,
        "StaleGeneration"
    );

    set_status(hub_status(Ok(()), false, Some(&ready)));
    let gone = pod.run(&env).await;
    assert_eq!(
        gone.reasons(),
        triples(&[
            ("Applied", "True", "ManifestWorkApplied"),
            ("Available", "False", "HostedClusterMissing"),
            ("Health", "False", "HostedClusterMissing"),
        ])
    );
    assert_eq!(gone.data("control_plane_endpoint"), "");

    set_status(hub_status(Err(DENIED), false, None));
    let denied = pod.run(&env).await;
    assert_eq!(denied.reasons(), error_row_false("ApplyFailed"));
    assert!(denied.message("Applied").contains(DENIED));
}

/// The fake's bundles say what the real server said in the same states (recordings `02`, `04`,
/// `06`, `08`): the same status keys, `name` = id, and the same work and manifest conditions
/// (type, status, reason) on the HostedCluster manifest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fake_reports_the_states_like_the_recorded_maestro() {
    let Some(dir) = job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/maestro")
    else {
        return;
    };
    let recorded = |file: &str| -> Value {
        let text = std::fs::read_to_string(dir.join("real").join(file)).unwrap();
        serde_json::from_str::<Value>(&text).unwrap()["body"].clone()
    };
    let shape = |bundle: &Value| -> Value {
        let status = &bundle["status"];
        let triple = |c: &Value| json!([c["type"], c["status"], c["reason"]]);
        let hc = status["resourceStatus"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["resourceMeta"]["kind"] == "HostedCluster")
            .unwrap();
        let mut manifest: Vec<Value> = hc["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(triple)
            .collect();
        manifest.sort_by_key(|v| v.to_string());
        let mut keys: Vec<&String> = status.as_object().unwrap().keys().collect();
        keys.sort();
        json!({
            "keys": keys,
            "name_is_id": bundle["name"] == bundle["id"],
            "work": status["conditions"].as_array().unwrap().iter().map(triple).collect::<Vec<_>>(),
            "manifest": manifest,
            // The `status` value (the recordings' work had only that rule).
            "feedback": hc["statusFeedback"]["values"]
                .as_array()
                .is_some_and(|values| values.iter().any(|v| v["name"] == "status")),
        })
    };
    let maestro = maestro().await;
    maestro.set_agent_delay(None);
    let pod = Pod::with_cluster(&truth_cluster());
    pod.run(&pod.maestro_env(&maestro)).await.assert_written();
    let work = format!("hostedcluster-{TRUTH_ID}");
    let fake = |m: &FakeMaestro| m.resource(&work).unwrap().to_rest();
    assert!(
        fake(&maestro).get("status").is_none(),
        "no status before the agent reports"
    );
    assert!(maestro.apply(&work));
    assert_eq!(
        shape(&fake(&maestro)),
        shape(&recorded("02-applied-no-hc-status.json")),
        "02"
    );
    // Without a status, the agent still feeds back `.metadata.generation` (an Integer, as the
    // real agent did for an object without status; the recordings' work did not ask for it).
    let values = fake(&maestro)["status"]["resourceStatus"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["resourceMeta"]["kind"] == "HostedCluster")
        .unwrap()["statusFeedback"]["values"]
        .clone();
    assert_eq!(
        values,
        json!([{"name": "generation", "fieldValue": {"type": "Integer", "integer": 1}}])
    );
    assert!(maestro.set_feedback(&work, &ready_status(false)));
    assert_eq!(
        shape(&fake(&maestro)),
        shape(&recorded("04-available.json")),
        "04"
    );
    assert!(maestro.delete_on_cluster(&work, true));
    assert_eq!(
        shape(&fake(&maestro)),
        shape(&recorded("08-hc-deleted-on-cluster.json")),
        "08"
    );
    assert!(maestro.delete_on_cluster(&work, false));
    assert!(maestro.fail_apply(&work, Some(DENIED)));
    let denied = fake(&maestro);
    assert_eq!(
        shape(&denied),
        shape(&recorded("06-apply-failure.json")),
        "06"
    );
}

/// The real operator's status for a HostedCluster whose release image cannot be resolved
/// (`fixtures/hypershift-operator/b-gke-like/03-after-3min.json`, `gcp2`), fed back as the agent
/// would: the adapter and the status-reporter put `Health=False` with the operator's reason and
/// words on the Job, and `Available=False Blocked`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recorded_blocked_cluster_is_unhealthy_on_the_job_in_the_operators_words() {
    let Some(dir) =
        job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/hypershift-operator")
    else {
        return;
    };
    let snapshot: Value =
        serde_json::from_slice(&std::fs::read(dir.join("b-gke-like/03-after-3min.json")).unwrap())
            .unwrap();
    let gcp2 = snapshot["hostedclusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|hc| hc["metadata"]["name"] == "gcp2")
        .unwrap();
    let operator_says = gcp2["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "ValidReleaseImage")
        .unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned();

    let maestro = maestro().await;
    let pod = Pod::new();
    let env = pod.maestro_env(&maestro);
    let created = pod.run(&env).await;
    created.assert_written();
    assert!(maestro.set_feedback(&work_name(), &gcp2["status"]));

    let server = ApiServer::start().await;
    let job = PulseJob::seed(
        &server,
        "hyperfleet",
        &testbed::pulse_job::controlplane_job_name(ID, 3),
        Some(600),
    );
    let kubeconfig = server.write_kubeconfig(pod.dir.path());
    let reporter = Command::new(testbed::binaries::path("status-reporter"))
        .env_clear()
        .envs(job.reporter_env(&kubeconfig, &pod.results))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pulse = pod.run(&env).await;
    pulse.assert_written();
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
    let on_job: Vec<Value> = job.conditions(&server);
    let get = |type_: &str| {
        on_job
            .iter()
            .find(|c| c["type"] == type_)
            .unwrap_or_else(|| panic!("no {type_} on the Job: {on_job:?}"))
            .clone()
    };
    let health = get("Health");
    assert_eq!(
        (&health["status"], &health["reason"]),
        (&json!("False"), &json!("ReleaseImageInvalid"))
    );
    let message = health["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "ValidReleaseImage=False (PayloadArchNotFound): {operator_says}"
        )),
        "{message}"
    );
    assert!(message.contains("Progressing=False (Blocked)"), "{message}");
    let available = get("Available");
    assert_eq!(
        (&available["status"], &available["reason"]),
        (&json!("False"), &json!("Blocked"))
    );
    assert_eq!(get("Applied")["reason"], "ManifestWorkApplied");
}
