//! One pulse through the real binaries, as HyperFleet sees it: the pulse Job and its Pod are
//! seeded into the fake API server ([`PulseJob`], a fresh Job each pulse as after its TTL), the
//! built `status-reporter` and `hypershift-adapter controlplane` (or `nodepool`) run as the
//! Pod's two containers sharing a results directory ([`crate::kubelet`] marks the adapter
//! container terminated), and the outcome is the Job as the framework reads it: its conditions
//! and annotations.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::kube_api::ApiServer;
use crate::kubelet::{TerminationMessage, play_kubelet, spawn};
use crate::pulse_job::PulseJob;

/// The namespace of the pulse Jobs.
pub const NAMESPACE: &str = "hyperfleet";
/// `activeDeadlineSeconds` of the seeded Jobs.
const ACTIVE_DEADLINE_SECONDS: i64 = 600;

/// A finished pulse: the containers' exit codes and logs, and the Job as stored afterwards.
#[derive(Debug, Clone)]
pub struct JobPulse {
    pub adapter_code: Option<i32>,
    pub reporter_code: Option<i32>,
    pub adapter_log: String,
    pub reporter_log: String,
    /// The stored Job (`null` if it is gone).
    pub job: Value,
}

impl JobPulse {
    /// `(type, status, reason)` of every Job condition, sorted by type.
    pub fn conditions(&self) -> Vec<(String, String, String)> {
        let mut out: Vec<(String, String, String)> = self.job["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
                (s("type"), s("status"), s("reason"))
            })
            .collect();
        out.sort();
        out
    }

    /// The message of condition `type_` (`""` if the Job has none).
    pub fn message(&self, type_: &str) -> String {
        self.job["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == type_)
            .and_then(|c| c["message"].as_str())
            .unwrap_or_default()
            .to_owned()
    }

    /// One annotation of the Job.
    pub fn annotation(&self, key: &str) -> Option<String> {
        self.job["metadata"]["annotations"][key]
            .as_str()
            .map(str::to_owned)
    }

    /// `hyperfleet.io/report-data`, parsed (`null` when absent or not JSON).
    pub fn report_data(&self) -> Value {
        self.annotation("hyperfleet.io/report-data")
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or(Value::Null)
    }

    /// Both containers exited 0: the report was written and the Job says what happened.
    pub fn ended_cleanly(&self) -> bool {
        self.adapter_code == Some(0) && self.reporter_code == Some(0)
    }

    /// Exit codes and both logs, for an assertion message.
    pub fn explain(&self) -> String {
        format!(
            "adapter exit {:?}, status-reporter exit {:?}\n--- adapter log\n{}\n--- status-reporter log\n{}",
            self.adapter_code, self.reporter_code, self.adapter_log, self.reporter_log
        )
    }
}

/// Runs one pulse of Job `job_name` in [`NAMESPACE`], its adapter container running
/// `hypershift-adapter controlplane`: `adapter_env` is the adapter container's whole environment
/// except `RESULTS_OUTPUT_PATH` and `TERMINATION_MESSAGE_PATH` (an entry there overrides them);
/// the adapter's termination message is read as the kubelet reads it; the reporter's is that of `manifests/job.yaml`
/// ([`PulseJob::reporter_env`]) with a kubeconfig for `server`. `dir` is the Pod's emptyDir (the
/// report of an earlier pulse is removed first) and holds the logs.
///
/// # Panics
/// When the directory or the logs cannot be written or read, or a binary cannot start (a test
/// set-up failure).
pub async fn run(
    server: &ApiServer,
    dir: &Path,
    job_name: &str,
    adapter_env: &[(String, String)],
) -> JobPulse {
    run_check(server, dir, "controlplane", job_name, adapter_env).await
}

/// [`run`] for a NodePool's pulse Job (`hs-np-<nodepoolId>-g<generation>`): the adapter
/// container runs `hypershift-adapter nodepool`, the Job is labelled `hyperfleet.io/adapter:
/// nodepool`.
///
/// # Panics
/// As [`run`].
pub async fn run_nodepool(
    server: &ApiServer,
    dir: &Path,
    job_name: &str,
    adapter_env: &[(String, String)],
) -> JobPulse {
    run_check(server, dir, "nodepool", job_name, adapter_env).await
}

/// One pulse whose adapter container runs `hypershift-adapter <check>`.
#[allow(
    clippy::expect_used,
    reason = "test set-up: a failure here is a failed test"
)]
async fn run_check(
    server: &ApiServer,
    dir: &Path,
    check: &str,
    job_name: &str,
    adapter_env: &[(String, String)],
) -> JobPulse {
    let results_dir = dir.join("results");
    std::fs::create_dir_all(&results_dir).expect("create the results directory");
    let results = results_dir.join("adapter-report.json");
    let _ = std::fs::remove_file(&results);
    let kubeconfig = server.write_kubeconfig(dir);

    let job = seed(server, job_name, check);
    let logs = |name: &str| -> PathBuf { dir.join(format!("{name}.log")) };
    let mut reporter = spawn(
        "status-reporter",
        &crate::binaries::path("status-reporter"),
        &[],
        job.reporter_env(&kubeconfig, &results),
        &logs("status-reporter"),
        false,
    )
    .expect("start the status-reporter");
    let results_env = ("RESULTS_OUTPUT_PATH".to_owned(), path(&results));
    let termination = TerminationMessage::prepare(dir, "adapter", &logs("adapter"))
        .expect("create the termination message file");
    // The test's own entries come last, so it may move the report (e.g. somewhere unwritable).
    let mut adapter = spawn(
        "adapter",
        &crate::binaries::path("hypershift-adapter"),
        &[check],
        [results_env, termination.env()]
            .into_iter()
            .chain(adapter_env.iter().cloned()),
        &logs("adapter"),
        false,
    )
    .expect("start the adapter");
    let (adapter_code, reporter_code) = play_kubelet(
        server,
        &job,
        &mut adapter.child,
        &mut reporter.child,
        true,
        Some(&termination),
    )
    .await;
    adapter.flush().await;
    reporter.flush().await;
    let read = |name: &str| std::fs::read_to_string(logs(name)).expect("read a container log");
    JobPulse {
        adapter_code,
        reporter_code,
        adapter_log: read("adapter"),
        reporter_log: read("status-reporter"),
        job: server.job(NAMESPACE, job_name).unwrap_or(Value::Null),
    }
}

/// A fresh running Job and Pod named after `job_name`: seeding replaces an earlier pulse's (as
/// their TTL would have removed them), so every pulse starts without conditions and with running
/// containers.
fn seed(server: &ApiServer, job_name: &str, check: &str) -> PulseJob {
    PulseJob::seed_with_metadata(
        server,
        NAMESPACE,
        job_name,
        Some(ACTIVE_DEADLINE_SECONDS),
        serde_json::json!({"hyperfleet.io/adapter": check}),
        None,
    )
}

fn path(p: &Path) -> String {
    p.display().to_string()
}
