//! End-to-end: the real `status-reporter` binary against the fake API server, with a temp dir as
//! the Job's `emptyDir`. Every case ends with the exact conditions on the Job.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use http::Method;
use serde_json::{Value, json};
use testbed::kube_api::{ApiServer, Fault, FaultAction};
use testbed::pulse_job::PulseJob;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};

const NS: &str = "hyperfleet";
/// `hs-cp-<UUIDv7 cluster id>-g3`, as `testbed::pulse_job::controlplane_job_name` builds it.
const JOB: &str = "hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g3";
/// The API server's limit on the total of an object's annotations (keys plus values), in bytes.
const ANNOTATION_LIMIT: usize = 262_144;

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
        Case::with_deadline(None).await
    }

    async fn with_deadline(active_deadline_seconds: Option<i64>) -> Case {
        Case::seeded(active_deadline_seconds, None).await
    }

    /// A Job that already carries `annotations` (from the framework or another tool).
    async fn with_annotations(annotations: Value) -> Case {
        Case::seeded(None, Some(annotations)).await
    }

    async fn seeded(active_deadline_seconds: Option<i64>, annotations: Option<Value>) -> Case {
        let server = ApiServer::start().await;
        let job = PulseJob::seed_with_metadata(
            &server,
            NS,
            JOB,
            active_deadline_seconds,
            json!({"hyperfleet.io/adapter": "controlplane"}),
            annotations,
        );
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
        let mut cmd = Command::new(testbed::binaries::path("status-reporter"));
        cmd.env_clear()
            .envs(self.job.reporter_env(&self.kubeconfig, &self.results))
            .envs(extra.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd.spawn().unwrap()
    }

    /// Waits until the reporter has read the Job and started watching its Pod: it is waiting.
    async fn ready(&self) {
        let job_get = format!("/jobs/{JOB}/status");
        for _ in 0..1000 {
            let requests = self.server.requests();
            let read = requests
                .iter()
                .any(|r| r.method == Method::GET && r.path.ends_with(&job_get));
            let watching = requests.iter().any(|r| {
                r.path.ends_with("/pods") && r.query.as_deref().unwrap_or("").contains("watch")
            });
            if read && watching {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the reporter never read the Job and watched its Pod");
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

    /// `(type, status, reason)` of each condition on the Job, sorted by type.
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

    fn condition(&self, type_: &str) -> Value {
        self.job
            .conditions(&self.server)
            .into_iter()
            .find(|c| c["type"] == type_)
            .unwrap_or_else(|| panic!("no {type_} condition"))
    }

    fn patches(&self) -> Vec<Option<u16>> {
        self.server
            .requests()
            .iter()
            .filter(|r| r.method == Method::PATCH && r.path.ends_with("/status"))
            .map(|r| r.status)
            .collect()
    }

    /// The bodies of the PATCHes of `jobs/status`, in order.
    fn patch_bodies(&self) -> Vec<Value> {
        self.server
            .requests()
            .iter()
            .filter(|r| r.method == Method::PATCH && r.path.ends_with("/status"))
            .map(|r| r.body_json().expect("a PATCH body that is not JSON"))
            .collect()
    }

    /// The Job's annotations as stored.
    fn annotations(&self) -> serde_json::Map<String, Value> {
        self.server
            .job(NS, JOB)
            .and_then(|j| j["metadata"]["annotations"].as_object().cloned())
            .unwrap_or_default()
    }

    /// The Job's `data.hyperfleet.io/` annotations, without the prefix.
    fn data_annotations(&self) -> Vec<(String, String)> {
        self.annotations()
            .iter()
            .filter_map(|(k, v)| {
                let key = k.strip_prefix("data.hyperfleet.io/")?;
                Some((key.to_owned(), v.as_str().unwrap().to_owned()))
            })
            .collect()
    }

    /// A failure the reporter detected: `False` with `reason` on every `CONDITION_TYPE` of the
    /// Job template (Applied, Available, Health), all with the same message, which is returned.
    fn assert_failure(&self, reason: &str) -> String {
        assert_eq!(self.conditions(), failure(reason));
        let message = self.condition("Applied")["message"].clone();
        for type_ in ["Available", "Health"] {
            assert_eq!(self.condition(type_)["message"], message, "{type_}");
        }
        let message = message.as_str().unwrap().to_owned();
        assert!(!message.is_empty());
        message
    }

    fn write_report(&self, report: &Value) {
        write_atomically(&self.results, report.to_string().as_bytes());
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn triple(t: &str, s: &str, r: &str) -> (String, String, String) {
    (t.to_owned(), s.to_owned(), r.to_owned())
}

fn failure(reason: &str) -> Vec<(String, String, String)> {
    vec![
        triple("Applied", "False", reason),
        triple("Available", "False", reason),
        triple("Health", "False", reason),
    ]
}

fn good_report() -> Value {
    json!({
        "version": 1,
        "adapter": "hypershift-controlplane",
        "observed_generation": 3,
        "conditions": [
            {"type": "Applied", "status": "True", "reason": "ManifestWorkCreated", "message": "HostedCluster sent"},
            {"type": "Available", "status": "False", "reason": "Provisioning", "message": "Control plane provisioning in progress"},
            {"type": "Health", "status": "True", "reason": "NoIssues", "message": "No degradation detected"}
        ],
        "data": {"control_plane_endpoint": "", "version": ""}
    })
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The log lines at WARN, parsed.
fn warnings(logs: &str) -> Vec<Value> {
    logs.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["level"] == "WARN")
        .collect()
}

/// The total of the Job's annotation keys and values, as the API server counts it against its
/// 256 KiB limit.
fn annotation_bytes(annotations: &serde_json::Map<String, Value>) -> usize {
    annotations
        .iter()
        .map(|(k, v)| k.len() + v.as_str().unwrap().len())
        .sum()
}

fn good_conditions() -> Vec<(String, String, String)> {
    vec![
        triple("Applied", "True", "ManifestWorkCreated"),
        triple("Available", "False", "Provisioning"),
        triple("Health", "True", "NoIssues"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn success_puts_conditions_and_data_on_the_job_in_one_patch() {
    let case = Case::new().await;
    let child = case.spawn(&[]);
    case.ready().await;
    case.write_report(&good_report());
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.conditions(), good_conditions());
    assert_eq!(
        case.job
            .annotation(&case.server, "hyperfleet.io/report-data")
            .as_deref(),
        Some(r#"{"control_plane_endpoint":"","version":""}"#)
    );
    assert_eq!(
        case.job
            .annotation(&case.server, "hyperfleet.io/observed-generation")
            .as_deref(),
        Some("3")
    );
    assert_eq!(
        case.data_annotations(),
        pairs(&[("control_plane_endpoint", ""), ("version", "")])
    );
    assert_eq!(case.patches(), vec![Some(200)]);
    let applied = case.condition("Applied");
    assert_eq!(applied["message"], "HostedCluster sent");
    assert!(
        applied["lastTransitionTime"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    // Every log line is JSON and names the Job.
    for line in done.logs.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}"));
        assert_eq!(v["span"]["job"], JOB, "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adapter_reported_failure_is_written_as_reported() {
    let case = Case::new().await;
    let child = case.spawn(&[]);
    case.ready().await;
    case.write_report(&json!({"conditions": [
        {"type": "Applied", "status": "False", "reason": "InvalidClusterSpec", "message": "cluster_network_cidr: not a CIDR"},
        {"type": "Available", "status": "Unknown", "reason": "InvalidClusterSpec"},
        {"type": "Health", "status": "True", "reason": "NoIssues"}
    ]}));
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(
        case.conditions(),
        vec![
            triple("Applied", "False", "InvalidClusterSpec"),
            triple("Available", "Unknown", "InvalidClusterSpec"),
            triple("Health", "True", "NoIssues"),
        ]
    );
    assert_eq!(
        case.condition("Applied")["message"],
        "cluster_network_cidr: not a CIDR"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_adapter_times_out_at_max_wait() {
    let case = Case::new().await;
    let child = case.spawn(&[("MAX_WAIT_TIME_SECONDS", "1")]);
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    let message = case.assert_failure("AdapterTimeout");
    assert!(message.contains("within 1s"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wait_is_the_jobs_active_deadline_less_a_margin() {
    // 12 s deadline, 10 s margin: the reporter gives up after about 2 s.
    let case = Case::with_deadline(Some(12)).await;
    let child = case.spawn(&[]);
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    case.assert_failure("AdapterTimeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_1_is_adapter_exited_with_error_with_the_code_and_message() {
    let case = Case::new().await;
    let child = case.spawn(&[]);
    case.ready().await;
    case.server.terminate_container(
        NS,
        &case.job.pod,
        "adapter",
        1,
        "Error",
        Some("maestro: connection refused"),
    );
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(
        case.assert_failure("AdapterExitedWithError"),
        "The adapter container exited with code 1 (Error) before writing a report: maestro: connection refused"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oom_kill_is_adapter_oom_killed() {
    let case = Case::new().await;
    let child = case.spawn(&[]);
    case.ready().await;
    case.server
        .terminate_container(NS, &case.job.pod, "adapter", 137, "OOMKilled", None);
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    let message = case.assert_failure("AdapterOOMKilled");
    assert!(message.contains("memory limit"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_0_without_a_file_is_adapter_missing_results() {
    let case = Case::new().await;
    let child = case.spawn(&[]);
    case.ready().await;
    case.server
        .terminate_container(NS, &case.job.pod, "adapter", 0, "Completed", None);
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    case.assert_failure("AdapterMissingResults");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_written_just_before_exit_wins_over_the_exit() {
    let case = Case::new().await;
    let child = case.spawn(&[("FILE_WATCH", "poll"), ("POLL_INTERVAL_SECONDS", "30")]);
    case.ready().await;
    case.write_report(&good_report());
    case.server
        .terminate_container(NS, &case.job.pod, "adapter", 0, "Completed", None);
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.conditions(), good_conditions());
}

/// Runs one case with an invalid report and returns the conditions' message.
async fn invalid_case(bytes: &[u8]) -> String {
    let case = Case::new().await;
    let child = case.spawn(&[]);
    case.ready().await;
    write_atomically(&case.results, bytes);
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    case.assert_failure("InvalidResultFormat")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_json_is_invalid_result_format_after_settling() {
    let message = invalid_case(b"{\"conditions\": [oops").await;
    assert!(message.contains("not valid JSON"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_maybe_is_named_in_the_message() {
    let message =
        invalid_case(br#"{"conditions":[{"type":"Available","status":"Maybe","reason":"X"}]}"#)
            .await;
    assert!(
        message.contains("conditions[0].status") && message.contains("\"Maybe\""),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_conditions_is_named_in_the_message() {
    let message = invalid_case(br#"{"version":1,"data":{}}"#).await;
    assert!(message.contains("conditions: is required"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reserved_type_is_refused() {
    let message =
        invalid_case(br#"{"conditions":[{"type":"Complete","status":"True","reason":"Done"}]}"#)
            .await;
    assert!(message.contains("owned by the Job controller"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_over_1_mib_is_refused() {
    let mut big =
        br#"{"conditions":[{"type":"A","status":"True","reason":"R"}],"data":{"k":""#.to_vec();
    big.extend(std::iter::repeat_n(b'x', 1024 * 1024));
    big.extend(br#""}}"#);
    let message = invalid_case(&big).await;
    assert!(message.contains("1048576-byte limit"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_atomic_write_in_two_chunks_ends_as_the_valid_report() {
    let case = Case::new().await;
    let child = case.spawn(&[]);
    case.ready().await;
    let text = good_report().to_string();
    let (first, second) = text.split_at(text.len() / 2);
    let mut file = tokio::fs::File::create(&case.results).await.unwrap();
    file.write_all(first.as_bytes()).await.unwrap();
    file.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    file.write_all(second.as_bytes()).await.unwrap();
    file.flush().await.unwrap();
    drop(file);
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.conditions(), good_conditions());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_legacy_go_reporter_format_becomes_the_first_condition_type() {
    let case = Case::new().await;
    let child = case.spawn(&[]);
    case.ready().await;
    case.write_report(&json!({"status": "failure", "reason": "", "message": "quota exceeded", "details": {"zone": "a"}}));
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    // The Job template's CONDITION_TYPE starts with Available, the legacy format's meaning.
    assert_eq!(
        case.conditions(),
        vec![triple("Available", "False", "NoReasonProvided")]
    );
    assert_eq!(case.condition("Available")["message"], "quota exceeded");
    assert_eq!(
        case.job
            .annotation(&case.server, "hyperfleet.io/report-data")
            .as_deref(),
        Some(r#"{"zone":"a"}"#)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_before_any_report_is_adapter_terminated() {
    let case = Case::new().await;
    let child = case.spawn(&[]);
    case.ready().await;
    let pid = child.id().unwrap().to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    let message = case.assert_failure("AdapterTerminated");
    assert!(message.contains("SIGTERM"), "{message}");
}

/// The SIGTERM handler is installed before the first request: a SIGTERM that arrives while the
/// reporter is still reading the Job is handled (one last look, `AdapterTerminated` on the Job),
/// not the default action that kills the process before it writes anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_while_the_job_is_first_read_is_handled() {
    let case = Case::new().await;
    let job_status = format!("/jobs/{JOB}/status");
    case.server.inject(
        Fault::new(&job_status, 1, FaultAction::Delay(Duration::from_secs(2))).on(Method::GET),
    );
    let child = case.spawn(&[]);
    for _ in 0..1000 {
        let in_flight = case
            .server
            .requests()
            .iter()
            .any(|r| r.method == Method::GET && r.path.ends_with(&job_status));
        if in_flight {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let pid = child.id().unwrap().to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "killed by the signal?\n{}", done.logs);
    let message = case.assert_failure("AdapterTerminated");
    assert!(message.contains("SIGTERM"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_after_the_report_still_writes_the_report() {
    let case = Case::new().await;
    let child = case.spawn(&[("FILE_WATCH", "poll"), ("POLL_INTERVAL_SECONDS", "30")]);
    case.ready().await;
    case.write_report(&good_report());
    let pid = child.id().unwrap().to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.conditions(), good_conditions());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_409_on_the_first_patch_is_re_read_and_merged_again() {
    let case = Case::new().await;
    let child = case.spawn(&[]);
    case.ready().await;
    // Someone else (the Job controller, say) writes the Job after the reporter read it.
    let client = case.server.client().await;
    let jobs: kube::Api<k8s_openapi::api::batch::v1::Job> = kube::Api::namespaced(client, NS);
    let other = json!({"status": {"conditions": [{"type": "Other", "status": "True", "reason": "Elsewhere"}]}});
    jobs.patch_status(
        JOB,
        &Default::default(),
        &kube::api::Patch::Strategic(&other),
    )
    .await
    .unwrap();
    case.write_report(&good_report());
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.patches(), vec![Some(200), Some(409), Some(200)]);
    let mut expected = good_conditions();
    expected.push(triple("Other", "True", "Elsewhere"));
    expected.sort();
    assert_eq!(case.conditions(), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_is_retried_then_succeeds() {
    let case = Case::new().await;
    case.server.inject(
        Fault::new(&format!("/jobs/{JOB}/status"), 1, FaultAction::Status(500)).on(Method::PATCH),
    );
    let child = case.spawn(&[]);
    case.ready().await;
    case.write_report(&good_report());
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.patches(), vec![Some(500), Some(200)]);
    assert_eq!(case.conditions(), good_conditions());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_403_is_permanent_exit_1_with_a_clear_log_line() {
    let case = Case::new().await;
    case.server.inject(
        Fault::new(&format!("/jobs/{JOB}/status"), 1, FaultAction::Status(403)).on(Method::PATCH),
    );
    let child = case.spawn(&[]);
    case.ready().await;
    case.write_report(&good_report());
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(1), "{}", done.logs);
    assert_eq!(case.patches(), vec![Some(403)]);
    assert!(case.conditions().is_empty());
    let line = done
        .logs
        .lines()
        .find(|l| l.contains("could not be written"))
        .expect("no error line");
    assert!(
        line.contains("patch")
            && line.contains("cannot patch resource")
            && line.contains("jobs/status"),
        "{line}"
    );
    assert!(
        !done.logs.contains(case.server.token()),
        "the token was logged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_job_is_exit_1() {
    let case = Case::new().await;
    let child = case.spawn(&[]);
    case.ready().await;
    case.server.delete_job(NS, JOB);
    case.write_report(&good_report());
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(1), "{}", done.logs);
    assert_eq!(case.patches(), vec![Some(404)]);
    assert!(done.logs.contains("not found"), "{}", done.logs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_twice_with_the_same_report_keeps_last_transition_time_and_skips_the_write() {
    let case = Case::new().await;
    case.write_report(&good_report());
    let done = case.finish(case.spawn(&[])).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    let first = case.condition("Available");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let done = case.finish(case.spawn(&[])).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(
        case.condition("Available")["lastTransitionTime"],
        first["lastTransitionTime"]
    );
    assert_eq!(
        case.patches(),
        vec![Some(200)],
        "the second run must not write"
    );
}

// ---- the per-key data annotations ----------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_report_updates_changed_keys_and_removes_dropped_ones() {
    let case = Case::with_annotations(json!({"hyperfleet.io/generation": "3"})).await;
    let mut first = good_report();
    first["data"] = json!({
        "control_plane_endpoint": "",
        "version": "4.17.0",
        "progress": {"done": 3, "of": 7}
    });
    case.write_report(&first);
    let done = case.finish(case.spawn(&[])).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(
        case.data_annotations(),
        pairs(&[
            ("control_plane_endpoint", ""),
            ("progress", r#"{"done":3,"of":7}"#),
            ("version", "4.17.0"),
        ])
    );

    let mut second = good_report();
    second["conditions"][1] = json!({"type": "Available", "status": "True", "reason": "ControlPlaneReady", "message": "The control plane is available"});
    second["data"] = json!({
        "control_plane_endpoint": "https://api.c1.example.com:6443",
        "version": "4.17.0"
    });
    case.write_report(&second);
    let done = case.finish(case.spawn(&[])).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(
        case.data_annotations(),
        pairs(&[
            ("control_plane_endpoint", "https://api.c1.example.com:6443"),
            ("version", "4.17.0"),
        ])
    );
    let annotations = case.annotations();
    assert_eq!(
        annotations["hyperfleet.io/generation"], "3",
        "another writer's annotation is kept"
    );
    assert_eq!(annotations["hyperfleet.io/observed-generation"], "3");
    assert_eq!(
        annotations["hyperfleet.io/report-data"],
        second["data"].to_string()
    );
    assert_eq!(case.condition("Available")["reason"], "ControlPlaneReady");
    // One PATCH per write, the removal travelling in the second as a strategic-merge null.
    assert_eq!(case.patches(), vec![Some(200), Some(200)]);
    let second_body = &case.patch_bodies()[1]["metadata"]["annotations"];
    assert_eq!(
        second_body.get("data.hyperfleet.io/progress"),
        Some(&Value::Null),
        "{second_body}"
    );

    // The same report again: nothing to write, no request.
    let done = case.finish(case.spawn(&[])).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.patches(), vec![Some(200), Some(200)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_after_a_report_clears_its_data_keys_and_marks_all_three_false() {
    let case = Case::new().await;
    case.write_report(&good_report());
    let done = case.finish(case.spawn(&[])).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.data_annotations().len(), 2);
    // The next run of the pulse (same Job) crashes before it reports.
    std::fs::remove_file(&case.results).unwrap();
    let child = case.spawn(&[]);
    case.ready().await;
    case.server
        .terminate_container(NS, &case.job.pod, "adapter", 2, "Error", None);
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    case.assert_failure("AdapterExitedWithError");
    assert_eq!(case.data_annotations(), vec![]);
    assert_eq!(case.annotations()["hyperfleet.io/report-data"], "{}");
    assert_eq!(case.patches(), vec![Some(200), Some(200)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_key_that_cannot_be_an_annotation_name_is_skipped_with_a_warning() {
    let case = Case::new().await;
    let child = case.spawn(&[]);
    case.ready().await;
    let mut report = good_report();
    report["data"] = json!({
        "control plane/endpoint": "https://api.c1.example.com:6443",
        "control_plane_endpoint": "https://api.c1.example.com:6443",
        "version": "4.17.0"
    });
    case.write_report(&report);
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.conditions(), good_conditions());
    assert_eq!(
        case.data_annotations(),
        pairs(&[
            ("control_plane_endpoint", "https://api.c1.example.com:6443"),
            ("version", "4.17.0"),
        ])
    );
    // report-data keeps the whole data, the skipped key included.
    assert_eq!(
        case.annotations()["hyperfleet.io/report-data"],
        report["data"].to_string()
    );
    assert_eq!(case.patches(), vec![Some(200)]);
    let body = case.patch_bodies()[0].to_string();
    assert!(!body.contains("data.hyperfleet.io/control plane"), "{body}");
    let warnings = warnings(&done.logs);
    assert_eq!(warnings.len(), 1, "{}", done.logs);
    assert_eq!(warnings[0]["key"], "control plane/endpoint");
    let rule = warnings[0]["rule"].as_str().unwrap();
    assert!(
        rule.contains("1 to 63 characters matching [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"),
        "{rule}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_largest_data_report_is_written_whole_in_one_patch() {
    let case = Case::new().await;
    let mut data = json!({
        "control_plane_endpoint": "https://api.c1.example.com:6443",
        "version": "4.17.0",
        "notes": ""
    });
    let padding = job_report::MAX_DATA_BYTES - data.to_string().len();
    data["notes"] = json!("n".repeat(padding));
    assert_eq!(data.to_string().len(), job_report::MAX_DATA_BYTES);
    let mut report = good_report();
    report["data"] = data.clone();
    case.write_report(&report);
    let done = case.finish(case.spawn(&[])).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.conditions(), good_conditions());
    assert_eq!(case.patches(), vec![Some(200)]);
    assert_eq!(
        case.data_annotations(),
        pairs(&[
            ("control_plane_endpoint", "https://api.c1.example.com:6443"),
            ("notes", &"n".repeat(padding)),
            ("version", "4.17.0"),
        ])
    );
    let annotations = case.annotations();
    assert_eq!(annotations["hyperfleet.io/report-data"], data.to_string());
    let total = annotation_bytes(&annotations);
    assert!(total <= 2 * job_report::MAX_DATA_BYTES + 1024, "{total}");
    assert!(warnings(&done.logs).is_empty(), "{}", done.logs);
}

/// The `data` of at most `MAX_DATA_BYTES` with the most keys: one-, two- then three-character
/// keys, each `0`. Its per-key annotations cost about 3.5 times its size.
fn data_of_tiny_keys() -> serde_json::Map<String, Value> {
    let alnum: Vec<char> = ('0'..='9').chain('A'..='Z').chain('a'..='z').collect();
    let mut keys: Vec<String> = alnum.iter().map(char::to_string).collect();
    for a in &alnum {
        for b in &alnum {
            keys.push(format!("{a}{b}"));
        }
    }
    for a in &alnum {
        for b in &alnum {
            for c in &alnum {
                keys.push(format!("{a}{b}{c}"));
            }
        }
    }
    let mut data = serde_json::Map::new();
    let mut size = 2; // {}
    for key in keys {
        let entry = key.len() + 5; // "k":0,
        if size + entry > job_report::MAX_DATA_BYTES {
            break;
        }
        size += entry;
        data.insert(key, json!(0));
    }
    data
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_largest_data_report_of_tiny_keys_stays_under_the_annotation_limit() {
    // Another tool left 8 KiB of annotations on the Job.
    let case = Case::with_annotations(json!({
        "hyperfleet.io/generation": "3",
        "example.com/notes": "x".repeat(8 * 1024)
    }))
    .await;
    let data = data_of_tiny_keys();
    let size = Value::Object(data.clone()).to_string().len();
    assert!(size <= job_report::MAX_DATA_BYTES && size > job_report::MAX_DATA_BYTES - 16);
    let mut report = good_report();
    report["data"] = Value::Object(data.clone());
    case.write_report(&report);
    let done = case.finish(case.spawn(&[])).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.conditions(), good_conditions());
    assert_eq!(case.patches(), vec![Some(200)]);
    let annotations = case.annotations();
    let total = annotation_bytes(&annotations);
    assert!(
        total <= ANNOTATION_LIMIT,
        "{total} bytes of annotations: a real API server refuses the Job"
    );
    assert_eq!(
        annotations["example.com/notes"].as_str().unwrap().len(),
        8 * 1024
    );
    assert_eq!(
        annotations["hyperfleet.io/report-data"],
        Value::Object(data.clone()).to_string()
    );
    // The keys that fit are written, in key order, each as itself; the rest skipped and said so.
    let written = case.data_annotations();
    assert!(
        written.len() > 4000 && written.len() < data.len(),
        "{}",
        written.len()
    );
    assert!(
        written
            .iter()
            .all(|(k, v)| data.contains_key(k) && v == "0")
    );
    let warnings = warnings(&done.logs);
    assert_eq!(warnings.len(), 17, "{}", done.logs);
    let summary = &warnings[16];
    assert_eq!(
        summary["more"].as_u64().unwrap() as usize + 16,
        data.len() - written.len(),
        "{summary}"
    );
    assert!(
        warnings[0]["rule"]
            .as_str()
            .unwrap()
            .contains("131072 bytes"),
        "{}",
        warnings[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_key_annotations_missing_from_the_job_are_written_even_when_the_rest_is_unchanged() {
    let case = Case::new().await;
    case.write_report(&good_report());
    let done = case.finish(case.spawn(&[])).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    // Someone removes one per-key annotation (a strategic-merge null, as the reporter sends
    // them); the conditions and report-data still say the same.
    let client = case.server.client().await;
    let jobs: kube::Api<k8s_openapi::api::batch::v1::Job> = kube::Api::namespaced(client, NS);
    let removal = json!({"metadata": {"annotations": {"data.hyperfleet.io/version": null}}});
    jobs.patch_status(
        JOB,
        &Default::default(),
        &kube::api::Patch::Strategic(&removal),
    )
    .await
    .unwrap();
    assert_eq!(
        case.data_annotations(),
        pairs(&[("control_plane_endpoint", "")])
    );
    let done = case.finish(case.spawn(&[])).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(
        case.data_annotations(),
        pairs(&[("control_plane_endpoint", ""), ("version", "")])
    );
    assert_eq!(
        case.patches(),
        vec![Some(200), Some(200), Some(200)],
        "the reporter's two writes and the removal"
    );
}
