//! The testbed's kubelet (`testbed::kubelet`) against the fake API server, through HTTP only:
//! a Pod's env (downward API, Secret keys, `$(VAR)`, the API server's service variables), its
//! volumes (emptyDir shared by both containers, a Secret, the ServiceAccount token minted by the
//! TokenRequest API), the termination message, the status a kubelet writes, a missing Secret
//! (`CreateContainerConfigError` until it appears) and a deletion (SIGTERM). The containers are
//! `/bin/sh` scripts (an image the test maps to the shell), in both isolation modes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::{Value, json};
use testbed::kube_api::ApiServer;
use testbed::kubelet::{Images, Isolation, Kubelet, KubeletConfig, PodRun, Program};

const NS: &str = "hyperfleet-system";

/// A kubelet whose `shell` image runs `/bin/sh -c <args>`.
async fn kubelet(server: &ApiServer, isolation: Isolation) -> Kubelet {
    let images = Images::default().with(
        "shell",
        Program {
            exe: "/bin/sh".into(),
            args: vec!["-c".into()],
            user: None,
        },
    );
    let config = KubeletConfig {
        images,
        isolation: Some(isolation),
        max_pod_runtime: Duration::from_secs(60),
        ..KubeletConfig::default()
    };
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&server.kubeconfig()).unwrap();
    Kubelet::new(kubeconfig, config).await.unwrap()
}

/// The modes this machine can run: the mount namespace only as root.
fn isolations() -> Vec<Isolation> {
    match Isolation::detect() {
        Isolation::MountNamespace => vec![Isolation::MountNamespace, Isolation::PathRewrite],
        Isolation::PathRewrite => vec![Isolation::PathRewrite],
    }
}

/// Seeds the ServiceAccount, a Secret and a pending Pod of two `shell` containers running
/// `writer` and `reader`, sharing `/results`.
fn seed(server: &ApiServer, name: &str, writer: &str, reader: &str) {
    server.put_object("/api/v1", Some(NS), json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "hypershift-adapter"}}));
    for secret in ["creds", "env-creds"] {
        put_secret(server, secret);
    }
    let shell = |container: &str, script: &str, extra_env: Value| {
        json!({
            "name": container, "image": "quay.io/testbed/shell:1", "args": [script],
            "terminationMessagePolicy": "FallbackToLogsOnError",
            "env": extra_env,
            "volumeMounts": [{"name": "results", "mountPath": "/results"},
                             {"name": "creds", "mountPath": "/var/run/secrets/creds", "readOnly": true}],
        })
    };
    // Paths in env values, so that path rewriting (no mount namespace) finds them too.
    let env = json!([
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "JOB_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-name']"}}},
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "env-creds", "key": "token"}}},
        {"name": "WHERE", "value": "$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)/$(POD_NAME)"},
        {"name": "OUT", "value": "/results/out"},
        {"name": "CREDS", "value": "/var/run/secrets/creds/token"},
        {"name": "SA", "value": "/var/run/secrets/kubernetes.io/serviceaccount"},
    ]);
    server.create_pod(NS, json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"batch.kubernetes.io/job-name": "hs-cp-x-g1"}},
        "spec": {
            "restartPolicy": "Never",
            "serviceAccountName": "hypershift-adapter",
            "terminationGracePeriodSeconds": 5,
            "containers": [shell("adapter", writer, env.clone()), shell("status-reporter", reader, env)],
            "volumes": [{"name": "results", "emptyDir": {}},
                        {"name": "creds", "secret": {"secretName": "creds", "defaultMode": 288}}],
        },
        "status": {"phase": "Pending"},
    }));
}

fn put_secret(server: &ApiServer, name: &str) {
    server.put_object("/api/v1", Some(NS), json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "data": {"token": "czNjcmV0"}}));
}

fn terminated(server: &ApiServer, pod: &str, container: &str) -> Value {
    let pod = server.pod(NS, pod).unwrap();
    let statuses = pod["status"]["containerStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let status = statuses
        .into_iter()
        .find(|s| s["name"] == container)
        .unwrap();
    status["state"]["terminated"].clone()
}

fn log(run: &PodRun, container: &str) -> String {
    run.container(container).unwrap().log_text()
}

/// The writer sees its env and files at their production paths, writes `/results/out` and a
/// termination message and exits 3; the reader waits for the file on the shared emptyDir and
/// exits 0. The Pod ends `Failed`, the writer `Error` with its message, the reader `Completed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_runs_with_its_env_volumes_and_token_and_ends_with_its_exit_codes() {
    for isolation in isolations() {
        let server = ApiServer::start().await;
        let writer = r#"echo "pod=$POD_NAME job=$JOB_NAME token=$TOKEN where=$WHERE"; cat "$CREDS"; echo; \
            echo "sa=$(cat "$SA/namespace")"; echo report > "$OUT"; \
            echo 'cannot go on: the reason' > "${TERMINATION_MESSAGE_PATH:-/dev/termination-log}"; exit 3"#;
        let reader = r#"while [ ! -s "$OUT" ]; do sleep 0.1; done; cat "$OUT""#;
        seed(&server, "p-1", writer, reader);
        let kubelet = kubelet(&server, isolation).await;
        let run = kubelet.run(NS, "p-1").await.unwrap();
        let writer_log = log(&run, "adapter");
        assert!(
            writer_log.contains("pod=p-1 job=hs-cp-x-g1 token=s3cret where="),
            "{isolation:?}: {writer_log}"
        );
        assert!(
            writer_log.contains("/p-1\ns3cret\nsa=hyperfleet-system"),
            "{isolation:?}: {writer_log}"
        );
        assert_eq!(log(&run, "status-reporter"), "report\n", "{isolation:?}");
        let adapter = terminated(&server, "p-1", "adapter");
        assert_eq!(
            (adapter["exitCode"].as_i64(), adapter["reason"].as_str()),
            (Some(3), Some("Error"))
        );
        assert_eq!(adapter["message"], "cannot go on: the reason\n");
        let reporter = terminated(&server, "p-1", "status-reporter");
        assert_eq!(reporter["reason"], "Completed");
        let pod = server.pod(NS, "p-1").unwrap();
        assert_eq!(pod["status"]["phase"], "Failed", "{isolation:?}");
        assert!(pod["status"]["startTime"].is_string());
    }
}

/// The ServiceAccount token in the container is one the API server accepts as the
/// ServiceAccount (minted by its TokenRequest API for this Pod).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_account_token_authenticates_as_the_service_account() {
    let server = ApiServer::start().await;
    seed(&server, "p-2", r#"cat "$SA/token""#, "true");
    let kubelet = kubelet(&server, Isolation::detect()).await;
    let run = kubelet.run(NS, "p-2").await.unwrap();
    let token = log(&run, "adapter");
    assert!(token.starts_with("testbed-sa-"), "{token:?}");
    server.deny("", "nodes");
    let answer = reqwest::Client::new()
        .get(format!("{}/api/v1/nodes", server.url()))
        .bearer_auth(token.trim())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 403, "authenticated, then denied by RBAC");
    let body: Value = answer.json().await.unwrap();
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("User \"system:serviceaccount:hyperfleet-system:hypershift-adapter\""),
        "{message}"
    );
}

/// A Secret the env names is missing: the container waits in `CreateContainerConfigError` with
/// the server's words, and starts once the Secret exists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_secret_keeps_the_container_waiting_until_it_appears() {
    let server = ApiServer::start().await;
    seed(&server, "p-3", "echo started", "true");
    server.delete_object("/api/v1", "secrets", Some(NS), "env-creds");
    let kubelet = kubelet(&server, Isolation::detect()).await;
    let running = kubelet.start(NS, "p-3");
    let mut waiting = Value::Null;
    for _ in 0..50 {
        let pod = server.pod(NS, "p-3").unwrap();
        waiting = pod["status"]["containerStatuses"][0]["state"]["waiting"].clone();
        if waiting["reason"] == "CreateContainerConfigError" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(waiting["reason"], "CreateContainerConfigError");
    assert_eq!(waiting["message"], "secrets \"env-creds\" not found");
    assert_eq!(server.pod(NS, "p-3").unwrap()["status"]["phase"], "Pending");
    put_secret(&server, "env-creds");
    let run = running.wait().await.unwrap();
    assert_eq!(log(&run, "adapter"), "started\n");
    assert_eq!(
        server.pod(NS, "p-3").unwrap()["status"]["phase"],
        "Succeeded"
    );
}

/// The Pod is deleted while a container runs (the job controller at the Job's deadline): the
/// kubelet sends SIGTERM; a process that ignores it is killed after the grace period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_pod_is_stopped_with_sigterm_then_sigkill() {
    let server = ApiServer::start().await;
    seed(
        &server,
        "p-4",
        "trap 'echo got TERM; exit 0' TERM; echo ready; while true; do sleep 0.1; done",
        "trap '' TERM; echo ready; while true; do sleep 0.1; done",
    );
    let kubelet = kubelet(&server, Isolation::detect()).await;
    let mut running = kubelet.start(NS, "p-4");
    // Both scripts have set their traps (a signal before that would end them unhandled).
    let pods = kubelet.root().join("pods");
    let ready = |container: &str| {
        let dirs = std::fs::read_dir(&pods).into_iter().flatten().flatten();
        dirs.into_iter().any(|pod| {
            let log = pod.path().join("containers").join(container).join("log");
            std::fs::read_to_string(log).is_ok_and(|t| t.contains("ready"))
        })
    };
    for _ in 0..100 {
        if ready("adapter") && ready("status-reporter") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(server.pod(NS, "p-4").unwrap()["status"]["phase"], "Running");
    let started = std::time::Instant::now();
    server.delete_object("/api/v1", "pods", Some(NS), "p-4");
    assert!(running.container_ended("adapter").await.is_some());
    let run = running.wait().await.unwrap();
    assert!(run.deleted);
    let adapter = run.container("adapter").unwrap();
    assert!(
        adapter.killed && adapter.log_text().contains("got TERM"),
        "{}",
        adapter.log_text()
    );
    assert_eq!(
        adapter.terminated.as_ref().unwrap().reason,
        "Completed",
        "exited 0 on SIGTERM"
    );
    let reporter = run.container("status-reporter").unwrap();
    assert_eq!(
        reporter.terminated.as_ref().unwrap().exit_code,
        137,
        "SIGKILL after the grace period"
    );
    assert!(
        started.elapsed() >= Duration::from_secs(5),
        "the grace period (5 s) was given"
    );
}
