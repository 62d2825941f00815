//! The status-reporter's one Event per run (issue 32) on the real servers: each pulse is the
//! shipped Job template (`manifests/job.yaml`) on the kit's kube-apiserver, its Pod made by the
//! real job controller and run by the testbed's kubelet (`testbed::kubelet`) with the Job's
//! ServiceAccount and a token from the real TokenRequest API, under `manifests/rbac.yaml` as
//! shipped (the `real::pulse` bed). After each pulse the Events whose `regarding` is the Job are
//! read back from the API (`regarding.uid` and `reportingController` field selectors), and
//! `kubectl describe job` is run as an SRE would.
//!
//! What is proven: one Event with the report's reason after a pulse, `Normal`; a `Health=False`
//! report makes a `Warning` with Health's reason; a crash and an OOM kill each make one; a
//! re-run of the reporter on the same Job is the server's 409, still one Event; the
//! ServiceAccount with only `rbac.yaml` may create Events and nothing wider (the real
//! authorizer); with Events refused by RBAC the Job's status is still written and the reporter
//! exits 0.

use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, PostParams};
use serde_json::{Value, json};
use testbed::real::RealSystems;

use crate::pulse::bed::{Bed, Edit, Outcome};

const SUITE: &str = "real::events";
const REPORTING_CONTROLLER: &str = "hyperfleet.io/status-reporter";
/// The pulse Jobs' ServiceAccount (`manifests/rbac.yaml`).
const ACCOUNT: &str = "hypershift-adapter";

/// `manifests/rbac.yaml`'s Role as it is.
fn as_shipped(_: &mut Value) {}

/// The Role without its `events.k8s.io` rule: the reporter's Event is refused (403).
fn without_events(role: &mut Value) {
    role["rules"]
        .as_array_mut()
        .unwrap()
        .retain(|rule| rule["apiGroups"] != json!(["events.k8s.io"]));
}

/// The Job kept for 10 minutes after it finishes (shipped: 60 s), so the test can read it and
/// run the reporter again before the TTL controller deletes it.
fn kept(job: &mut Value) {
    job["spec"]["ttlSecondsAfterFinished"] = json!(600);
}

fn container<'a>(job: &'a mut Value, name: &str) -> &'a mut Value {
    job["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["name"] == name)
        .unwrap()
}

fn set_adapter_env(job: &mut Value, name: &str, value: &str) {
    let env = container(job, "adapter")["env"].as_array_mut().unwrap();
    match env.iter_mut().find(|e| e["name"] == name) {
        Some(entry) => entry["value"] = json!(value),
        None => env.push(json!({"name": name, "value": value})),
    }
}

/// The Events the status-reporter recorded about the Job (by its uid), as the API returns them.
async fn our_events(kube: &kube::Client, ns: &str, job: &Value) -> Vec<Event> {
    let uid = job["metadata"]["uid"].as_str().unwrap();
    let events: Api<Event> = Api::namespaced(kube.clone(), ns);
    let selector = format!("regarding.uid={uid},reportingController={REPORTING_CONTROLLER}");
    events
        .list(&ListParams::default().fields(&selector))
        .await
        .unwrap()
        .items
}

/// The one Event of the Job, checked against the Job it names and the Pod that reported it.
async fn the_event(kube: &kube::Client, outcome: &Outcome, ns: &str) -> Event {
    let explain = outcome.explain();
    let mut events = our_events(kube, ns, &outcome.job).await;
    assert_eq!(events.len(), 1, "{events:#?}\n{explain}");
    let event = events.remove(0);
    let regarding = event.regarding.clone().unwrap();
    assert_eq!(
        (
            regarding.api_version.as_deref(),
            regarding.kind.as_deref(),
            regarding.name.as_deref(),
            regarding.namespace.as_deref(),
        ),
        (
            Some("batch/v1"),
            Some("Job"),
            outcome.job["metadata"]["name"].as_str(),
            Some(ns)
        )
    );
    assert_eq!(event.action.as_deref(), Some("ReportStatus"));
    assert_eq!(
        event.reporting_instance.as_deref(),
        outcome.pod["metadata"]["name"].as_str(),
        "reported by the Job's Pod"
    );
    assert!(event.event_time.is_some());
    event
}

/// `(type, reason, note)` of an Event.
fn shape(event: &Event) -> (String, String, String) {
    (
        event.type_.clone().unwrap_or_default(),
        event.reason.clone().unwrap_or_default(),
        event.note.clone().unwrap_or_default(),
    )
}

/// The Job's condition `kind` as `(status, reason, message)`.
fn condition(outcome: &Outcome, kind: &str) -> (String, String, String) {
    let c = outcome.job["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} on the Job: {}", outcome.explain()));
    let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
    (s("status"), s("reason"), s("message"))
}

/// The lines of the `Events:` section of `kubectl describe job` as the kit's admin, or `None`
/// (after one line) without kubectl.
fn describe_events(real: &RealSystems, ns: &str, job: &str) -> Option<Vec<String>> {
    let out = std::process::Command::new("kubectl")
        .args(["describe", "job", job, "-n", ns])
        .env("KUBECONFIG", real.kubeconfig())
        .output();
    let Ok(out) = out else {
        println!("{SUITE}: kubectl is not installed; `kubectl describe job` not checked");
        return None;
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "kubectl describe job: {text}");
    let events = text
        .split("\nEvents:")
        .nth(1)
        .unwrap_or_else(|| panic!("no Events section:\n{text}"));
    Some(events.lines().map(str::to_owned).collect())
}

/// The describe lines of our Events (the `From` column is the reporting controller).
fn described(real: &RealSystems, ns: &str, job: &str) -> Option<Vec<String>> {
    describe_events(real, ns, job).map(|lines| {
        lines
            .into_iter()
            .filter(|l| l.contains(REPORTING_CONTROLLER))
            .collect()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pulse_records_one_event_on_its_job_and_a_rerun_adds_none() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let kube = real.kube_client().await.unwrap();
    let bed = Bed::new(real, "events-pulse", as_shipped).await;
    let (id, _) = bed.create_cluster().await;
    let outcome = bed.pulse(&bed.job(&id, &kept)).await;
    let explain = outcome.explain();
    println!("{explain}");
    let (_, reason, message) = condition(&outcome, "Available");
    assert_eq!(condition(&outcome, "Health").0, "True", "{explain}");
    let event = the_event(&kube, &outcome, &bed.ns).await;
    assert_eq!(
        shape(&event),
        ("Normal".to_owned(), reason.clone(), message),
        "Available (the first CONDITION_TYPE) decides a Normal Event"
    );
    let job = outcome.job["metadata"]["name"].as_str().unwrap();
    if let Some(lines) = described(real, &bed.ns, job) {
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert!(
            lines[0].trim_start().starts_with("Normal") && lines[0].contains(&reason),
            "{lines:#?}"
        );
    }

    // The reporter run again on the same Job with the same outcome, as the Job's ServiceAccount.
    let rerun = rerun_reporter(real, &kube, &bed, &outcome).await;
    assert_eq!(rerun.status.code(), Some(0), "{}", log(&rerun));
    assert!(
        log(&rerun).contains("409 AlreadyExists"),
        "the server's answer to the same name: {}",
        log(&rerun)
    );
    let events = our_events(&kube, &bed.ns, &outcome.job).await;
    assert_eq!(events.len(), 1, "no duplicate: {events:#?}");
    assert_eq!(events[0].metadata.uid, event.metadata.uid, "the same Event");
    if let Some(lines) = described(real, &bed.ns, job) {
        assert_eq!(lines.len(), 1, "{lines:#?}");
    }
}

fn log(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The status-reporter binary once more against the finished Job of `outcome`, as its Pod ran
/// it (`JOB_NAME`, `POD_NAME`, the template's `CONDITION_TYPE`) with a token of the Job's
/// ServiceAccount, and a report of the conditions the Job carries.
async fn rerun_reporter(
    real: &'static RealSystems,
    kube: &kube::Client,
    bed: &Bed,
    outcome: &Outcome,
) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = testbed::real::kube_access::service_account_kubeconfig(
        real,
        kube,
        &bed.ns,
        ACCOUNT,
        600,
        &dir.path().join("kubeconfig"),
    )
    .await
    .unwrap();
    let conditions: Vec<Value> = ["Applied", "Available", "Health"]
        .iter()
        .map(|kind| {
            let (status, reason, message) = condition(outcome, kind);
            json!({"type": kind, "status": status, "reason": reason, "message": message})
        })
        .collect();
    let results = dir.path().join("adapter-report.json");
    std::fs::write(
        &results,
        json!({"version": 1, "conditions": conditions}).to_string(),
    )
    .unwrap();
    tokio::process::Command::new(testbed::binaries::path("status-reporter"))
        .env_clear()
        .envs([
            ("RESULTS_PATH", results.display().to_string()),
            (
                "JOB_NAME",
                outcome.job["metadata"]["name"].as_str().unwrap().to_owned(),
            ),
            ("JOB_NAMESPACE", bed.ns.clone()),
            (
                "POD_NAME",
                outcome.pod["metadata"]["name"].as_str().unwrap().to_owned(),
            ),
            ("CONDITION_TYPE", "Available,Applied,Health".to_owned()),
            ("MAX_WAIT_TIME_SECONDS", "20".to_owned()),
            ("LOG_FORMAT", "json".to_owned()),
            ("KUBECONFIG", kubeconfig.display().to_string()),
        ])
        .output()
        .await
        .unwrap()
}

/// The adapter cannot reach Maestro (a closed port, a 3 s retry budget): its report says
/// `Health=False`, and the Event is a `Warning` with Health's reason and message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_health_false_report_makes_a_warning() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let kube = real.kube_client().await.unwrap();
    let bed = Bed::new(real, "events-warn", as_shipped).await;
    let (id, _) = bed.create_cluster().await;
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let unreachable = |job: &mut Value| {
        kept(job);
        set_adapter_env(job, "MAESTRO_API_URL", &closed);
        set_adapter_env(job, "MAESTRO_GRPC_URL", &closed);
        set_adapter_env(job, "RETRY_BUDGET_SECONDS", "3");
    };
    let outcome = bed.pulse(&bed.job(&id, &unreachable)).await;
    let explain = outcome.explain();
    println!("{explain}");
    let (status, reason, message) = condition(&outcome, "Health");
    assert_eq!(status, "False", "{explain}");
    let event = the_event(&kube, &outcome, &bed.ns).await;
    assert_eq!(
        shape(&event),
        ("Warning".to_owned(), reason.clone(), message)
    );
    let job = outcome.job["metadata"]["name"].as_str().unwrap();
    if let Some(lines) = described(real, &bed.ns, job) {
        assert_eq!(lines.len(), 1, "{lines:#?}");
        assert!(
            lines[0].trim_start().starts_with("Warning") && lines[0].contains(&reason),
            "{lines:#?}"
        );
    }
}

/// The adapter crashing (its `/results` mount read-only: it exits 1) and OOM-killed (a 1Mi
/// memory limit): each pulse's Event is a `Warning` with the reporter's reason and the Job's
/// message as its note (cut to 1024 bytes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_and_an_oom_kill_each_make_a_warning() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let kube = real.kube_client().await.unwrap();
    let bed = Bed::new(real, "events-crash", as_shipped).await;
    assert!(
        bed.kubelet.memory_cgroups().is_some(),
        "no memory cgroup here: the kernel cannot OOM-kill the adapter"
    );
    let read_only_results = |job: &mut Value| {
        kept(job);
        let mounts = container(job, "adapter")["volumeMounts"]
            .as_array_mut()
            .unwrap();
        let results = mounts.iter_mut().find(|m| m["name"] == "results").unwrap();
        results["readOnly"] = json!(true);
    };
    let tiny = |job: &mut Value| {
        kept(job);
        container(job, "adapter")["resources"] =
            json!({"requests": {"cpu": "20m", "memory": "1Mi"}, "limits": {"memory": "1Mi"}});
    };
    let edits: [(&str, Edit<'_>); 2] = [
        ("AdapterExitedWithError", &read_only_results),
        ("AdapterOOMKilled", &tiny),
    ];
    for (want, edit) in edits {
        let (id, _) = bed.create_cluster().await;
        let outcome = bed.pulse(&bed.job(&id, edit)).await;
        let explain = outcome.explain();
        println!("{explain}");
        let (status, reason, message) = condition(&outcome, "Health");
        assert_eq!(
            (status.as_str(), reason.as_str()),
            ("False", want),
            "{explain}"
        );
        let event = the_event(&kube, &outcome, &bed.ns).await;
        let note = job_report::truncate(message, 1024);
        assert_eq!(shape(&event), ("Warning".to_owned(), want.to_owned(), note));
    }
}

/// With the Role's `events.k8s.io` rule removed: the Event's create is refused (403), the
/// reporter says so in its log, the Job carries the report's conditions and completes, and the
/// reporter container exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_events_refused_by_rbac_the_job_is_written_and_the_exit_code_unchanged() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let kube = real.kube_client().await.unwrap();
    let bed = Bed::new(real, "events-rbac", without_events).await;
    let (id, _) = bed.create_cluster().await;
    let outcome = bed.pulse(&bed.job(&id, &kept)).await;
    let explain = outcome.explain();
    println!("{explain}");
    let types: Vec<String> = outcome.conditions().into_iter().map(|c| c.0).collect();
    assert_eq!(
        types,
        [
            "Applied",
            "Available",
            "Complete",
            "Health",
            "SuccessCriteriaMet"
        ],
        "{explain}"
    );
    let reporter = outcome.terminated("status-reporter");
    assert_eq!(
        (reporter["exitCode"].as_i64(), reporter["reason"].as_str()),
        (Some(0), Some("Completed")),
        "{explain}"
    );
    let run = outcome.run.as_ref().expect("the kubelet's run");
    let log = run.container("status-reporter").unwrap().log_text();
    let user = format!("system:serviceaccount:{}:{ACCOUNT}", bed.ns);
    for words in [
        "the run's Event was refused",
        "cannot create resource \\\"events\\\" in API group \\\"events.k8s.io\\\"",
        user.as_str(),
    ] {
        assert!(
            log.contains(words),
            "{words:?} not in the reporter's log:\n{log}"
        );
    }
    assert!(our_events(&kube, &bed.ns, &outcome.job).await.is_empty());
}

/// The real authorizer on the Job's ServiceAccount under `manifests/rbac.yaml` as shipped:
/// `create` on `events.k8s.io` events in its namespace, and nothing wider.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_account_may_create_events_and_nothing_wider() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let kube = real.kube_client().await.unwrap();
    let bed = Bed::new(real, "events-grant", as_shipped).await;
    let ns = bed.ns.as_str();
    let cases = [
        (ns, "events.k8s.io", "create", true),
        (ns, "events.k8s.io", "patch", false),
        (ns, "events.k8s.io", "update", false),
        (ns, "events.k8s.io", "get", false),
        (ns, "events.k8s.io", "list", false),
        (ns, "events.k8s.io", "watch", false),
        (ns, "events.k8s.io", "delete", false),
        (ns, "events.k8s.io", "deletecollection", false),
        (ns, "", "create", false),
        ("default", "events.k8s.io", "create", false),
    ];
    let mut wrong = Vec::new();
    for (namespace, group, verb, allowed) in cases {
        let review: SubjectAccessReview = serde_json::from_value(json!({"spec": {
            "user": format!("system:serviceaccount:{ns}:{ACCOUNT}"),
            "groups": ["system:serviceaccounts", format!("system:serviceaccounts:{ns}"), "system:authenticated"],
            "resourceAttributes": {"namespace": namespace, "group": group, "resource": "events", "verb": verb}
        }}))
        .unwrap();
        let answer = Api::<SubjectAccessReview>::all(kube.clone())
            .create(&PostParams::default(), &review)
            .await
            .unwrap();
        if answer.status.is_some_and(|s| s.allowed) != allowed {
            wrong.push(format!(
                "{verb} {group}/events in {namespace}: expected {allowed}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
