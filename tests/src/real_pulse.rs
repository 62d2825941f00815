//! One pulse through the real binaries, as HyperFleet sees it: the pulse Job and the Pod its
//! controller would create are seeded into the fake API server ([`PulseJob::seed_job`], a fresh
//! Job each pulse as after its TTL), the kubelet ([`crate::kubelet`], through the fake's HTTP API)
//! runs the built `hypershift-adapter controlplane` (or `nodepool`) and `status-reporter` as the
//! Pod's two containers sharing the `/results` emptyDir, and the outcome is the Job as the
//! framework reads it: its conditions and annotations.
//!
//! The Pod is `manifests/job.yaml`'s shape with the test's adapter env: the reporter's env of the
//! template (downward API), the Job's ServiceAccount (its token from the fake's TokenRequest API),
//! `FallbackToLogsOnError`. Unlike the template it runs as root and mounts this machine's
//! temporary directory at the same path, so the files a test names in the env (cluster specs,
//! tokens, kubeconfigs under its temp dir) are there.

use std::path::Path;

use serde_json::{Value, json};

use crate::kube_api::ApiServer;
use crate::kubelet::{Kubelet, KubeletConfig, PULSE_TIMEOUT, PodRun};
use crate::pulse_job::PulseJob;

/// The namespace of the pulse Jobs.
pub const NAMESPACE: &str = "hyperfleet";
/// `activeDeadlineSeconds` of the seeded Jobs.
const ACTIVE_DEADLINE_SECONDS: i64 = 600;
/// The ServiceAccount of the Jobs (`manifests/rbac.yaml`).
const SERVICE_ACCOUNT: &str = "hypershift-adapter";

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
/// but `RESULTS_OUTPUT_PATH` (`/results/adapter-report.json`, the emptyDir; an entry there
/// overrides it); the reporter's is that of `manifests/job.yaml`. `dir` holds the kubelet's pod
/// directories (volumes, logs).
///
/// # Panics
/// When the kubelet cannot run the Pod (a test set-up failure).
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
    server.put_object(
        "/api/v1",
        Some(NAMESPACE),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SERVICE_ACCOUNT}}),
    );
    let job = PulseJob::seed_job(server, job(job_name, check, adapter_env));
    let kubeconfig =
        kube::config::Kubeconfig::from_yaml(&server.kubeconfig()).expect("the fake's kubeconfig");
    let config = KubeletConfig {
        root: Some(dir.join("kubelet")),
        max_pod_runtime: PULSE_TIMEOUT,
        ..KubeletConfig::default()
    };
    let kubelet = Kubelet::new(kubeconfig, config).await.expect("a kubelet");
    let run = kubelet
        .run(&job.namespace, &job.pod)
        .await
        .expect("the kubelet runs the pod");
    outcome(server, job_name, &run)
}

fn outcome(server: &ApiServer, job_name: &str, run: &PodRun) -> JobPulse {
    let container = |name: &str| run.container(name);
    let code = |name: &str| container(name).and_then(crate::kubelet::ContainerRun::exit_code);
    let log = |name: &str| {
        container(name)
            .map(crate::kubelet::ContainerRun::log_text)
            .unwrap_or_default()
    };
    JobPulse {
        adapter_code: code("adapter"),
        reporter_code: code("status-reporter"),
        adapter_log: log("adapter"),
        reporter_log: log("status-reporter"),
        job: server.job(NAMESPACE, job_name).unwrap_or(Value::Null),
    }
}

/// The pulse's Job: see the module documentation.
fn job(job_name: &str, check: &str, adapter_env: &[(String, String)]) -> Value {
    let value = |(name, value): (&str, &str)| json!({"name": name, "value": value});
    let field = |name: &str, path: &str| json!({"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}});
    let mut env = vec![value((
        "RESULTS_OUTPUT_PATH",
        "/results/adapter-report.json",
    ))];
    env.extend(adapter_env.iter().map(|(k, v)| value((k, v))));
    let reporter_env = vec![
        value(("RESULTS_PATH", "/results/adapter-report.json")),
        field(
            "JOB_NAME",
            "metadata.labels['batch.kubernetes.io/job-name']",
        ),
        field("JOB_NAMESPACE", "metadata.namespace"),
        field("POD_NAME", "metadata.name"),
        value(("ADAPTER_CONTAINER_NAME", "adapter")),
        value(("CONDITION_TYPE", "Available,Applied,Health")),
        value(("LOG_FORMAT", "json")),
    ];
    let tmp = std::env::temp_dir().display().to_string();
    let mounts =
        json!([{"name": "results", "mountPath": "/results"}, {"name": "tmp", "mountPath": tmp}]);
    let container = |name: &str, image: &str, env: Vec<Value>| {
        json!({"name": name, "image": image, "env": env, "volumeMounts": mounts,
               "terminationMessagePolicy": "FallbackToLogsOnError"})
    };
    let mut adapter = container("adapter", "hypershift-adapter:dev", env);
    adapter["args"] = json!([check]);
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": job_name, "namespace": NAMESPACE, "labels": {"hyperfleet.io/adapter": check}},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": ACTIVE_DEADLINE_SECONDS,
            "template": {
                "metadata": {"labels": {"hyperfleet.io/adapter": check}},
                "spec": {
                    "restartPolicy": "Never",
                    "serviceAccountName": SERVICE_ACCOUNT,
                    "securityContext": {"runAsUser": 0, "runAsGroup": 0},
                    "containers": [adapter, container("status-reporter", "status-reporter:dev", reporter_env)],
                    "volumes": [
                        {"name": "results", "emptyDir": {}},
                        {"name": "tmp", "hostPath": {"path": tmp, "type": "Directory"}},
                    ],
                },
            },
        },
    })
}
