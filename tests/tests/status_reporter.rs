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
        let server = ApiServer::start().await;
        let job = PulseJob::seed(&server, NS, JOB, active_deadline_seconds);
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
    assert_eq!(case.conditions(), failure("AdapterTimeout"));
    assert!(
        case.condition("Available")["message"]
            .as_str()
            .unwrap()
            .contains("within 1s")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wait_is_the_jobs_active_deadline_less_a_margin() {
    // 12 s deadline, 10 s margin: the reporter gives up after about 2 s.
    let case = Case::with_deadline(Some(12)).await;
    let child = case.spawn(&[]);
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.conditions(), failure("AdapterTimeout"));
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
    assert_eq!(case.conditions(), failure("AdapterExitedWithError"));
    assert_eq!(
        case.condition("Health")["message"],
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
    assert_eq!(case.conditions(), failure("AdapterOOMKilled"));
    assert!(
        case.condition("Available")["message"]
            .as_str()
            .unwrap()
            .contains("memory limit")
    );
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
    assert_eq!(case.conditions(), failure("AdapterMissingResults"));
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

/// Runs one case with an invalid report and returns the Available message.
async fn invalid_case(bytes: &[u8]) -> String {
    let case = Case::new().await;
    let child = case.spawn(&[]);
    case.ready().await;
    write_atomically(&case.results, bytes);
    let done = case.finish(child).await;
    assert_eq!(done.code, Some(0), "{}", done.logs);
    assert_eq!(case.conditions(), failure("InvalidResultFormat"));
    case.condition("Available")["message"]
        .as_str()
        .unwrap()
        .to_owned()
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
    assert_eq!(case.conditions(), failure("AdapterTerminated"));
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
