//! A controlplane pulse Job on the real API server, its Pod run by the testbed's kubelet
//! (`testbed::kubelet`): `manifests/job.yaml` rendered with this checkout's values in a namespace
//! of the test with the RBAC of `manifests/rbac.yaml` (so the status-reporter's watch and PATCH
//! pass the real RBAC with a token from the real TokenRequest API), the adapter pointed at the
//! real Maestro (a consumer of the test, with its own agent) and the real HyperFleet API; then the
//! real job controller's verdict. And the kubelet-related faults of issue 24 item 3d, each ending
//! with a true, explained status on the Job.

/// Also the bed of `real::events`.
pub(crate) mod bed;

use serde_json::{Value, json};
use testbed::real::RealSystems;

use bed::Bed;

const SUITE: &str = "real::pulse";

/// `manifests/rbac.yaml`'s Role as it is.
fn as_shipped(_: &mut Value) {}

/// The Role without `patch` on `jobs/status`: the status-reporter may read its Job but not
/// write it.
fn without_status_patch(role: &mut Value) {
    for rule in role["rules"].as_array_mut().unwrap() {
        if rule["resources"] == json!(["jobs/status"]) {
            rule["verbs"] = json!(["get"]);
        }
    }
}

/// The Job's container `name`.
fn container<'a>(job: &'a mut Value, name: &str) -> &'a mut Value {
    let containers = job["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .unwrap();
    containers.iter_mut().find(|c| c["name"] == name).unwrap()
}

/// Sets (or adds) env `name` of the adapter container.
fn set_adapter_env(job: &mut Value, name: &str, value: &str) {
    let env = container(job, "adapter")["env"].as_array_mut().unwrap();
    match env.iter_mut().find(|e| e["name"] == name) {
        Some(entry) => entry["value"] = json!(value),
        None => env.push(json!({"name": name, "value": value})),
    }
}

fn triples(expected: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    expected
        .iter()
        .map(|(t, s, r)| ((*t).to_owned(), (*s).to_owned(), (*r).to_owned()))
        .collect()
}

/// The conditions of a pulse whose adapter failed in a way the status-reporter detects
/// (`reason` on the three types the Job template names), with the job controller's `Failed`.
fn reporter_failure(reason: &str, failed: &str) -> Vec<(String, String, String)> {
    triples(&[
        ("Applied", "False", reason),
        ("Available", "False", reason),
        ("Failed", "True", failed),
        ("FailureTarget", "True", failed),
        ("Health", "False", reason),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controlplane_pulse_job_completes_with_the_reports_conditions() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::new(real, "pulse-cp", as_shipped).await;
    let (id, name) = bed.create_cluster().await;
    let outcome = bed.pulse(&bed.job(&id, &|_| {})).await;
    let explain = outcome.explain();
    println!("{explain}");
    assert_eq!(
        outcome.conditions(),
        triples(&[
            ("Applied", "True", "ManifestWorkCreated"),
            ("Available", "False", "Provisioning"),
            ("Complete", "True", "CompletionsReached"),
            ("Health", "True", "NoIssues"),
            ("SuccessCriteriaMet", "True", "CompletionsReached"),
        ]),
        "{explain}"
    );
    let annotations = &outcome.job["metadata"]["annotations"];
    assert_eq!(
        annotations["hyperfleet.io/observed-generation"], "1",
        "{explain}"
    );
    assert!(
        annotations["hyperfleet.io/report-data"].is_string(),
        "{explain}"
    );
    assert_eq!(outcome.pod["status"]["phase"], "Succeeded", "{explain}");
    for name in ["adapter", "status-reporter"] {
        let t = outcome.terminated(name);
        assert_eq!(
            (t["exitCode"].as_i64(), t["reason"].as_str()),
            (Some(0), Some("Completed")),
            "{name}: {explain}"
        );
        assert!(
            t["startedAt"].is_string() && t["finishedAt"].is_string(),
            "{name}: {explain}"
        );
    }
    // As a kubelet leaves a finished Pod: only the terminated state, Ready=False/PodCompleted.
    for status in outcome.pod["status"]["containerStatuses"]
        .as_array()
        .unwrap()
    {
        let states: Vec<&String> = status["state"].as_object().unwrap().keys().collect();
        assert_eq!(states, ["terminated"], "{explain}");
    }
    let ready = outcome.pod["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap();
    assert_eq!(
        (&ready["status"], &ready["reason"], ready.get("message")),
        (&json!("False"), &json!("PodCompleted"), None),
        "{explain}"
    );
    let hosted = bed.hosted_cluster(&name).await;
    assert_eq!(hosted["metadata"]["name"], name.as_str());
}

/// A Role without `patch` on `jobs/status`: the report is written, the status-reporter's PATCH
/// is refused (403) and it exits 1; the Pod fails, so the job controller fails the Job
/// (`BackoffLimitExceeded`, `backoffLimit: 0`) and the Job carries none of the report's
/// conditions. What an SRE sees is on the Pod: the reporter's last log lines name the refused
/// verb, resource, namespace and ServiceAccount.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reporters_patch_refused_by_rbac_fails_the_job_and_the_pod_says_why() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::new(real, "pulse-rbac", without_status_patch).await;
    let (id, _) = bed.create_cluster().await;
    let outcome = bed.pulse(&bed.job(&id, &|_| {})).await;
    let explain = outcome.explain();
    println!("{explain}");
    assert_eq!(
        outcome.conditions(),
        triples(&[
            ("Failed", "True", "BackoffLimitExceeded"),
            ("FailureTarget", "True", "BackoffLimitExceeded")
        ]),
        "{explain}"
    );
    assert_eq!(
        outcome.message("Failed"),
        "Job has reached the specified backoff limit",
        "{explain}"
    );
    assert!(
        outcome.job["metadata"]["annotations"]
            .get("hyperfleet.io/report-data")
            .is_none(),
        "{explain}"
    );
    assert_eq!(outcome.pod["status"]["phase"], "Failed", "{explain}");
    let adapter = outcome.terminated("adapter");
    assert_eq!(
        (adapter["exitCode"].as_i64(), adapter["reason"].as_str()),
        (Some(0), Some("Completed")),
        "{explain}"
    );
    let reporter = outcome.terminated("status-reporter");
    assert_eq!(
        (reporter["exitCode"].as_i64(), reporter["reason"].as_str()),
        (Some(1), Some("Error")),
        "{explain}"
    );
    let message = reporter["message"].as_str().unwrap_or_default();
    let user = format!("system:serviceaccount:{}:hypershift-adapter", bed.ns);
    for words in [
        "cannot patch resource",
        "jobs/status",
        user.as_str(),
        bed.ns.as_str(),
    ] {
        assert!(
            message.contains(words),
            "{words:?} not in the reporter's termination message: {message}\n{explain}"
        );
    }
}

/// The adapter cannot write its report (its `/results` mount made read-only): it exits 1 with
/// its fatal error as the termination message, which the status-reporter quotes in
/// `AdapterExitedWithError`; the job controller fails the Job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_adapter_crashing_is_adapter_exited_with_error_with_its_termination_message() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::new(real, "pulse-crash", as_shipped).await;
    let (id, _) = bed.create_cluster().await;
    let read_only_results = |job: &mut Value| {
        let mounts = container(job, "adapter")["volumeMounts"]
            .as_array_mut()
            .unwrap();
        let results = mounts.iter_mut().find(|m| m["name"] == "results").unwrap();
        results["readOnly"] = json!(true);
    };
    let outcome = bed.pulse(&bed.job(&id, &read_only_results)).await;
    let explain = outcome.explain();
    println!("{explain}");
    assert_eq!(
        outcome.conditions(),
        reporter_failure("AdapterExitedWithError", "BackoffLimitExceeded"),
        "{explain}"
    );
    let adapter = outcome.terminated("adapter");
    assert_eq!(
        (adapter["exitCode"].as_i64(), adapter["reason"].as_str()),
        (Some(1), Some("Error")),
        "{explain}"
    );
    let termination = adapter["message"].as_str().unwrap_or_default();
    assert!(
        termination.contains("Read-only file system"),
        "{termination}\n{explain}"
    );
    let applied = outcome.message("Applied");
    assert!(
        applied.contains("exit code 1") || applied.contains("exited with code 1"),
        "{applied}\n{explain}"
    );
    assert!(
        applied.contains(termination.trim()),
        "the reporter quotes the termination message: {applied}\n{explain}"
    );
}

/// The adapter's memory limit below what it needs to start (1Mi): the kernel OOM-kills it in its
/// memory cgroup, the kubelet reports `OOMKilled` (exit code 137), the status-reporter
/// `AdapterOOMKilled`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_adapter_oom_killed_is_adapter_oom_killed() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::new(real, "pulse-oom", as_shipped).await;
    assert!(
        bed.kubelet.memory_cgroups().is_some(),
        "no memory cgroup here: the kernel cannot OOM-kill the adapter"
    );
    let (id, _) = bed.create_cluster().await;
    let tiny = |job: &mut Value| {
        container(job, "adapter")["resources"] =
            json!({"requests": {"cpu": "20m", "memory": "1Mi"}, "limits": {"memory": "1Mi"}});
    };
    let outcome = bed.pulse(&bed.job(&id, &tiny)).await;
    let explain = outcome.explain();
    println!("{explain}");
    assert_eq!(
        outcome.conditions(),
        reporter_failure("AdapterOOMKilled", "BackoffLimitExceeded"),
        "{explain}"
    );
    let adapter = outcome.terminated("adapter");
    assert_eq!(
        (adapter["exitCode"].as_i64(), adapter["reason"].as_str()),
        (Some(137), Some("OOMKilled")),
        "{explain}"
    );
}

/// The adapter hangs (Maestro accepts connections and never answers; its retry budget outlasts
/// the Job): the status-reporter stops waiting at the deadline less its margin
/// (`AdapterTimeout`), then the job controller's `activeDeadlineSeconds` fails the Job
/// (`DeadlineExceeded`) and deletes the Pod, and the kubelet stops the adapter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_adapter_hanging_past_the_deadline_is_adapter_timeout_and_deadline_exceeded() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::new(real, "pulse-hang", as_shipped).await;
    let (id, _) = bed.create_cluster().await;
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            open.push(socket);
        }
    });
    let hang = |job: &mut Value| {
        job["spec"]["activeDeadlineSeconds"] = json!(30);
        set_adapter_env(job, "MAESTRO_API_URL", &url);
        set_adapter_env(job, "MAESTRO_GRPC_URL", &url);
    };
    let outcome = bed.pulse(&bed.job(&id, &hang)).await;
    held.abort();
    let explain = outcome.explain();
    println!("{explain}");
    assert_eq!(
        outcome.conditions(),
        reporter_failure("AdapterTimeout", "DeadlineExceeded"),
        "{explain}"
    );
    assert_eq!(
        outcome.message("Failed"),
        "Job was active longer than specified deadline",
        "{explain}"
    );
    let run = outcome.run.as_ref().expect("the kubelet's run");
    let adapter = run.container("adapter").unwrap();
    assert!(
        run.deleted && adapter.killed,
        "the kubelet stopped the adapter when the Pod was deleted: {explain}"
    );
}
