//! End-to-end: the real `status-reporter` binary's one Event per run (`events.k8s.io/v1`) against
//! the fake API server, which answers as the kit's v1.36 server did (201, 409 `AlreadyExists` on
//! a taken name, 403 without the grant, the create's 422 rules; `testbed::kube_api`). The same
//! behaviour on the real API server, job controller and RBAC: `tests/tests/real/events.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use http::Method;
use serde_json::{Value, json};
use testbed::kube_api::{ApiServer, Fault, FaultAction, RecordedRequest};
use testbed::pulse_job::PulseJob;
use tokio::process::{Child, Command};

const NS: &str = "hyperfleet";
const JOB: &str = "hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g3";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/hyperfleet/events";

struct Case {
    server: ApiServer,
    job: PulseJob,
    _dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    results: PathBuf,
}

struct Finished {
    code: Option<i32>,
    logs: String,
}

impl Case {
    async fn new() -> Case {
        let server = ApiServer::start().await;
        let job = PulseJob::seed(&server, NS, JOB, None);
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = server.write_kubeconfig(dir.path());
        let results = dir.path().join("results").join("adapter-report.json");
        std::fs::create_dir_all(results.parent().unwrap()).unwrap();
        Case {
            server,
            job,
            _dir: dir,
            kubeconfig,
            results,
        }
    }

    fn spawn(&self, extra: &[(&str, &str)]) -> Child {
        Command::new(testbed::binaries::path("status-reporter"))
            .env_clear()
            .envs(self.job.reporter_env(&self.kubeconfig, &self.results))
            .envs(extra.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap()
    }

    /// One run of the reporter with `report` already in place.
    async fn run_with(&self, report: &Value, extra: &[(&str, &str)]) -> Finished {
        std::fs::write(&self.results, report.to_string()).unwrap();
        self.finish(self.spawn(extra)).await
    }

    async fn finish(&self, child: Child) -> Finished {
        let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
            .await
            .expect("the reporter did not exit within 30 s")
            .unwrap();
        Finished {
            code: out.status.code(),
            logs: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }

    /// The POSTs of Events, in order.
    fn event_posts(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == Method::POST && r.path == EVENTS)
            .collect()
    }

    /// The Event the last POST created, as stored.
    fn stored_event(&self) -> Value {
        let post = self.event_posts().pop().expect("no Event was POSTed");
        let name = post.body_json().unwrap()["metadata"]["name"]
            .as_str()
            .unwrap()
            .to_owned();
        self.server
            .object("/apis/events.k8s.io/v1", "events", Some(NS), &name)
            .unwrap_or_else(|| panic!("Event {name} is not stored"))
    }

    fn job_uid(&self) -> String {
        self.server.job(NS, JOB).unwrap()["metadata"]["uid"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// `(type, status, reason)` of the Job's conditions, sorted.
    fn conditions(&self) -> Vec<(String, String, String)> {
        let mut list: Vec<_> = self
            .job
            .conditions(&self.server)
            .iter()
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
                (s("type"), s("status"), s("reason"))
            })
            .collect();
        list.sort();
        list
    }
}

fn report(health: &str, health_reason: &str, health_message: &str) -> Value {
    json!({
        "version": 1, "adapter": "hypershift-controlplane", "observed_generation": 3,
        "conditions": [
            {"type": "Applied", "status": "True", "reason": "ManifestWorkCreated", "message": "sent"},
            {"type": "Available", "status": "False", "reason": "Provisioning", "message": "Control plane provisioning in progress"},
            {"type": "Health", "status": health, "reason": health_reason, "message": health_message}
        ]
    })
}

fn triple(t: &str, s: &str, r: &str) -> (String, String, String) {
    (t.to_owned(), s.to_owned(), r.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_makes_one_normal_event_on_the_job_after_the_patch() {
    let case = Case::new().await;
    let done = case
        .run_with(&report("True", "NoIssues", "No degradation detected"), &[])
        .await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    let requests = case.requests();
    let patch = requests
        .iter()
        .position(|r| r.method == Method::PATCH && r.path.ends_with(&format!("/jobs/{JOB}/status")))
        .expect("the PATCH");
    let post = requests
        .iter()
        .position(|r| r.method == Method::POST && r.path == EVENTS)
        .expect("the Event's POST");
    assert!(patch < post, "the status PATCH goes first");
    assert_eq!(case.event_posts().len(), 1);
    assert_eq!(case.event_posts()[0].status, Some(201));
    let event = case.stored_event();
    assert_eq!(event["type"], "Normal");
    assert_eq!(
        event["reason"], "Provisioning",
        "Available decides a Normal Event"
    );
    assert_eq!(event["note"], "Control plane provisioning in progress");
    assert_eq!(event["action"], "ReportStatus");
    assert_eq!(
        event["reportingController"],
        "hyperfleet.io/status-reporter"
    );
    assert_eq!(event["reportingInstance"], case.job.pod.as_str());
    assert_eq!(
        event["regarding"],
        json!({"apiVersion": "batch/v1", "kind": "Job", "namespace": NS, "name": JOB, "uid": case.job_uid()})
    );
    assert!(
        event["metadata"]["name"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{JOB}.")),
        "{event}"
    );
    assert!(
        done.logs.contains("the run's Event is recorded on the Job"),
        "{}",
        done.logs
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_false_makes_a_warning_with_healths_reason_and_message() {
    let case = Case::new().await;
    let done = case
        .run_with(
            &report(
                "False",
                "MaestroUnavailable",
                "Maestro did not answer within the retry budget",
            ),
            &[],
        )
        .await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    let event = case.stored_event();
    assert_eq!(
        (&event["type"], &event["reason"], &event["note"]),
        (
            &json!("Warning"),
            &json!("MaestroUnavailable"),
            &json!("Maestro did not answer within the retry budget")
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_and_an_oom_kill_each_make_a_warning_with_the_reporters_reason() {
    for (exit_code, kubelet_reason, reason) in [
        (1, "Error", "AdapterExitedWithError"),
        (137, "OOMKilled", "AdapterOOMKilled"),
    ] {
        let case = Case::new().await;
        let child = case.spawn(&[]);
        for _ in 0..1000 {
            let watching = case.requests().iter().any(|r| {
                r.path.ends_with("/pods") && r.query.as_deref().unwrap_or("").contains("watch")
            });
            if watching {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        case.server.terminate_container(
            NS,
            &case.job.pod,
            "adapter",
            exit_code,
            kubelet_reason,
            Some("panic: boom"),
        );
        let done = case.finish(child).await;
        assert_eq!(done.code, Some(0), "{}", done.logs);
        let event = case.stored_event();
        assert_eq!(
            (&event["type"], &event["reason"]),
            (&json!("Warning"), &json!(reason))
        );
        let applied = case
            .job
            .conditions(&case.server)
            .into_iter()
            .find(|c| c["type"] == "Applied")
            .unwrap();
        assert_eq!(
            event["note"], applied["message"],
            "the note is the condition's message"
        );
    }
}

/// A re-run of the same pulse (the same Job, the same outcome): the same name, the server's 409,
/// still one Event; the exit code is 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_of_the_same_pulse_does_not_pile_up_events() {
    let case = Case::new().await;
    let healthy = report("True", "NoIssues", "fine");
    assert_eq!(case.run_with(&healthy, &[]).await.code, Some(0));
    let again = case.run_with(&healthy, &[]).await;
    assert_eq!(again.code, Some(0), "{}", again.logs);
    let posts = case.event_posts();
    assert_eq!(
        posts.iter().map(|p| p.status).collect::<Vec<_>>(),
        [Some(201), Some(409)]
    );
    assert_eq!(
        posts[0].body_json().unwrap()["metadata"]["name"],
        posts[1].body_json().unwrap()["metadata"]["name"]
    );
    assert!(again.logs.contains("409 AlreadyExists"), "{}", again.logs);
    let stored = case
        .server
        .requests()
        .iter()
        .filter(|r| r.method == Method::POST && r.path == EVENTS && r.status == Some(201))
        .count();
    assert_eq!(stored, 1);
    // A different outcome of the same Job is a new Event.
    let degraded = report("False", "Degraded", "the hosted control plane is degraded");
    assert_eq!(case.run_with(&degraded, &[]).await.code, Some(0));
    assert_eq!(case.event_posts().last().unwrap().status, Some(201));
    assert_eq!(case.stored_event()["reason"], "Degraded");
}

/// RBAC without `create` on `events.k8s.io` events: the 403 is logged (verb, resource, the fix),
/// the Job's status is written, the exit code is 0, and nothing is retried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_event_changes_neither_the_job_nor_the_exit_code() {
    let case = Case::new().await;
    case.server.deny("events.k8s.io", "events");
    let done = case
        .run_with(&report("False", "Degraded", "degraded"), &[])
        .await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(
        case.conditions(),
        [
            triple("Applied", "True", "ManifestWorkCreated"),
            triple("Available", "False", "Provisioning"),
            triple("Health", "False", "Degraded"),
        ]
    );
    let posts = case.event_posts();
    assert_eq!(posts.len(), 1, "one create, no retry");
    assert_eq!(posts[0].status, Some(403));
    for words in [
        "the run's Event was refused",
        "cannot create resource \\\"events\\\" in API group \\\"events.k8s.io\\\"",
        "RECORD_EVENTS=false",
        "\"verb\":\"create\"",
    ] {
        assert!(
            done.logs.contains(words),
            "{words:?} not in:\n{}",
            done.logs
        );
    }
}

/// A server error is not retried either, and a create that never answers is given up after 5 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_event_is_tried_once_and_bounded_in_time() {
    let case = Case::new().await;
    case.server
        .inject(Fault::new(EVENTS, 5, FaultAction::Status(500)).on(Method::POST));
    let done = case
        .run_with(&report("True", "NoIssues", "fine"), &[])
        .await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.event_posts().len(), 1, "no retry storm");

    let case = Case::new().await;
    case.server
        .inject(Fault::new(EVENTS, 1, FaultAction::Hang).on(Method::POST));
    let started = Instant::now();
    let done = case
        .run_with(&report("True", "NoIssues", "fine"), &[])
        .await;
    let took = started.elapsed();
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert!(took < Duration::from_secs(15), "{took:?}");
    assert!(done.logs.contains("no answer within 5s"), "{}", done.logs);
    assert_eq!(case.conditions().len(), 3, "the status is written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_events_false_sends_no_event() {
    let case = Case::new().await;
    let done = case
        .run_with(
            &report("False", "Degraded", "degraded"),
            &[("RECORD_EVENTS", "false")],
        )
        .await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert!(case.event_posts().is_empty());
    assert_eq!(case.conditions().len(), 3);
}
