//! The status-reporter's and diagnose's requests: the whole reporter run (`status_reporter::run`:
//! watch its Pod by field selector, read `jobs/status`, one strategic-merge PATCH with the read
//! resourceVersion, then the run's `events.k8s.io/v1` Event), then its error paths (a stale
//! resourceVersion's 409, a 422, a Job that is gone; an Event's name taken, its 400 and 422
//! rules), and the same under the shipped RBAC: `manifests/rbac.yaml` for the reporter (what it
//! may do, the 403s of what it may not) and `manifests/rbac-diagnose.yaml` for diagnose's lists.

use std::time::Duration;

use clap::Parser;
use job_report::{Condition, ConditionStatus, Report, StoredCondition};
use serde_json::{Value, json};
use status_reporter::adapter_pod::{self, PodEvent};
use status_reporter::config::{Args, Config};
use status_reporter::event::{self, JobRef};
use status_reporter::job_status::{JobStatus, JobView, patch_body};

use super::{Pair, Side, pulse_job};

const SMP: &str = "application/strategic-merge-patch+json";
const ID: &str = "019ac6d2-7c1e-7b3a-9f4e-2d6c8a1b3e5f";

fn job_name() -> String {
    format!("hs-cp-{ID}-g2147483647")
}

/// The reporter's view of a Job body (what `JobStatus::read` keeps of it).
fn view_of(job: &Value) -> JobView {
    let conditions = job["status"]["conditions"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|c| StoredCondition {
                    type_: c["type"].as_str().unwrap_or_default().to_owned(),
                    status: c["status"].as_str().unwrap_or_default().to_owned(),
                    reason: c["reason"].as_str().map(str::to_owned),
                    message: c["message"].as_str().map(str::to_owned),
                    last_transition_time: c["lastTransitionTime"]
                        .as_str()
                        .and_then(|t| t.parse().ok()),
                })
                .collect()
        })
        .unwrap_or_default();
    JobView {
        resource_version: job["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_owned),
        conditions,
        annotations: serde_json::from_value(job["metadata"]["annotations"].clone())
            .unwrap_or_default(),
        ..JobView::default()
    }
}

fn report(status: ConditionStatus, reason: &str) -> Report {
    Report {
        adapter: Some("controlplane".into()),
        observed_generation: Some(2_147_483_647),
        data: Some(
            json!({"hostedClusterName": "c-019ac6d2", "version": "4.17.3"})
                .as_object()
                .unwrap()
                .clone(),
        ),
        ..Report::new(vec![
            Condition::new(
                "Applied",
                ConditionStatus::True,
                "ManifestWorkApplied",
                "applied",
            ),
            Condition::new(
                "Available",
                status,
                reason,
                "the hosted control plane is available",
            ),
            Condition::new(
                "Health",
                ConditionStatus::True,
                "Healthy",
                "all checks passed",
            ),
        ])
    }
}

/// The framework's Job, the job controller's first sync (its Pod), and the kubelet's write of
/// the adapter container's end; returns the Pod's name.
async fn setup(side: &Side) -> String {
    let ns = &side.ns;
    side.raw(
        "framework: create the pulse Job",
        "POST",
        &format!("/apis/batch/v1/namespaces/{ns}/jobs"),
        Some("application/json"),
        Some(&pulse_job(ID)),
    )
    .await;
    let pod = side.job_controller_started(&job_name()).await;
    let terminated = json!({"status": {"phase": "Running", "containerStatuses": [
        {"name": "adapter", "image": "hypershift-adapter:dev", "imageID": "", "ready": false, "restartCount": 0,
         "started": false,
         "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": "2026-11-28T02:00:00Z", "finishedAt": "2026-11-28T02:00:09Z"}}},
        {"name": "status-reporter", "image": "hypershift-adapter:dev", "imageID": "", "ready": true, "restartCount": 0,
         "started": true, "state": {"running": {"startedAt": "2026-11-28T02:00:00Z"}}}
    ]}});
    side.raw(
        "kubelet: the adapter container terminated",
        "PATCH",
        &format!("/api/v1/namespaces/{ns}/pods/{pod}/status"),
        Some(SMP),
        Some(&terminated),
    )
    .await;
    pod
}

/// `status-reporter` as the Job runs it: POD_NAME from the downward API, the report in the
/// results directory; it watches its Pod, reads the Job and PATCHes the report onto it.
async fn run_reporter(side: &Side, dir: &std::path::Path, pod: &str) {
    let results = dir.join("adapter-report.json");
    let text = serde_json::to_string(&report(ConditionStatus::True, "AsExpected")).unwrap();
    std::fs::write(&results, text).unwrap();
    let args = Args::try_parse_from([
        "status-reporter",
        "--results-path",
        results.to_str().unwrap(),
        "--pod-name",
        pod,
        "--job-namespace",
        &side.ns,
        "--max-wait",
        "20s",
        "--file-watch",
        "poll",
    ])
    .unwrap();
    let config = Config::from_args(args).unwrap();
    side.proxy.step("status-reporter: the whole run");
    let exit = status_reporter::run(config, side.client().await, std::future::pending()).await;
    side.proxy
        .note("status-reporter exit", json!(format!("{exit:?}")));
}

async fn reporter_sequence(side: &mut Side) {
    let ns = side.ns.clone();
    let pod = setup(side).await;
    let dir = tempfile::tempdir().unwrap();
    run_reporter(side, dir.path(), &pod).await;
    let (_, written) = side
        .raw(
            "read back the Job",
            "GET",
            &format!("/apis/batch/v1/namespaces/{ns}/jobs/{}/status", job_name()),
            None,
            None,
        )
        .await;
    let uid = written["metadata"]["uid"].as_str().unwrap().to_owned();
    // The run's Event is named by a hash of the Job's uid, which differs per side.
    let verdict = event::decide(
        &report(ConditionStatus::True, "AsExpected"),
        false,
        &["Available".to_owned()],
    )
    .unwrap();
    let job = job_name();
    let reporters = event::name(
        &JobRef {
            namespace: &ns,
            name: &job,
            uid: &uid,
        },
        &verdict,
    );
    side.substitute(&reporters, "<the run's Event>");
    event_sequence(side, &uid).await;

    // A second write from a view older than the first: 409 on the stale resourceVersion, a
    // re-read, and one merged PATCH.
    let jobs = JobStatus::new(side.client().await, &ns, &job_name());
    let mut stale = view_of(&written);
    stale.resource_version = Some(
        (written["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            - 1)
        .to_string(),
    );
    side.proxy
        .step("status-reporter: write from a stale view (409, re-read, merge)");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let outcome = jobs
        .write(
            Some(stale),
            &report(ConditionStatus::False, "Progressing"),
            deadline,
        )
        .await;
    side.proxy
        .note("write outcome", json!(format!("{outcome:?}")));

    // The reporter's PATCH shaped bodies the API takes or refuses.
    let (_, current) = side
        .raw(
            "status-reporter: read the Job",
            "GET",
            &format!("/apis/batch/v1/namespaces/{ns}/jobs/{}/status", job_name()),
            None,
            None,
        )
        .await;
    let view = view_of(&current);
    let body = patch_body(
        &view,
        &report(ConditionStatus::True, "AsExpected"),
        jiff::Timestamp::now(),
    )
    .unwrap();
    let status_path = format!(
        "/apis/batch/v1/namespaces/{ns}/jobs/{}/status?fieldManager=status-reporter",
        job_name()
    );
    let mut odd = body.clone();
    odd["status"]["conditions"][0]["status"] = json!("Maybe");
    odd["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    side.raw(
        "PATCH a condition status other than True/False/Unknown (taken)",
        "PATCH",
        &status_path,
        Some(SMP),
        Some(&odd),
    )
    .await;
    let mut big = body.clone();
    big["metadata"]["annotations"]["data.hyperfleet.io/big"] = json!("x".repeat(262_145));
    side.raw(
        "PATCH annotations over 256 KiB (422)",
        "PATCH",
        &status_path,
        Some(SMP),
        Some(&big),
    )
    .await;
    let mut complete = body.clone();
    complete["status"]["conditions"] = json!([{"type": "Complete", "status": "True"}]);
    side.raw(
        "PATCH a Complete condition the Job controller owns (422)",
        "PATCH",
        &status_path,
        Some(SMP),
        Some(&complete),
    )
    .await;
    side.raw(
        "PATCH with a stale resourceVersion (409)",
        "PATCH",
        &status_path,
        Some(SMP),
        Some(&body),
    )
    .await;
    side.raw(
        "status-reporter: PATCH a Job that does not exist (404)",
        "PATCH",
        &format!(
            "/apis/batch/v1/namespaces/{ns}/jobs/hs-cp-gone/status?fieldManager=status-reporter"
        ),
        Some(SMP),
        Some(&body),
    )
    .await;
    side.proxy
        .step("status-reporter: read a Job that does not exist (404)");
    let gone = JobStatus::new(side.client().await, &ns, "hs-cp-gone")
        .read(tokio::time::Instant::now() + Duration::from_secs(5))
        .await;
    side.proxy
        .note("read outcome", json!(format!("{:?}", gone.map(|_| ()))));

    // The Pod by name: GET, LIST with the watch's field selector, a watch from "0".
    let pod_path = format!("/api/v1/namespaces/{ns}/pods");
    side.raw(
        "status-reporter: get its Pod",
        "GET",
        &format!("{pod_path}/{pod}"),
        None,
        None,
    )
    .await;
    side.raw(
        "status-reporter: list its Pod by field selector",
        "GET",
        &format!("{pod_path}?fieldSelector=metadata.name%3D{pod}"),
        None,
        None,
    )
    .await;
    side.raw(
        "status-reporter: list by a field selector the API does not support (400)",
        "GET",
        &format!("{pod_path}?fieldSelector=metadata.labels%3Dx"),
        None,
        None,
    )
    .await;
    watch_a_change(side, &pod).await;
}

/// `adapter_pod::watch` on the Pod while the kubelet writes it (the Pod stays running: a
/// finished Pod would make the real job controller finish the Job).
async fn watch_a_change(side: &Side, pod: &str) {
    let ns = side.ns.clone();
    side.proxy.step("status-reporter: watch its Pod");
    let (tx, mut rx) = tokio::sync::mpsc::channel(8);
    let api = kube::Api::namespaced(side.client().await, &ns);
    let watch = tokio::spawn(adapter_pod::watch(
        api,
        pod.to_owned(),
        "adapter".into(),
        tx,
    ));
    let first = tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .unwrap();
    assert!(matches!(first, Some(PodEvent::Seen { .. })), "{first:?}");
    let message = json!({"status": {"containerStatuses": [
        {"name": "status-reporter", "image": "hypershift-adapter:dev", "imageID": "", "ready": false, "restartCount": 0,
         "started": true, "state": {"running": {"startedAt": "2026-11-28T02:00:00Z"}}}
    ]}});
    side.raw(
        "kubelet: the status-reporter container is no longer ready",
        "PATCH",
        &format!("/api/v1/namespaces/{ns}/pods/{pod}/status"),
        Some(SMP),
        Some(&message),
    )
    .await;
    let second = tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .unwrap();
    assert!(matches!(second, Some(PodEvent::Seen { .. })), "{second:?}");
    watch.abort();
}

/// An Event on the pulse Job (`uid`) shaped as the reporter's (`status_reporter::event::build`),
/// named `<job>.<suffix>`, then `edit`.
fn event_body(ns: &str, uid: &str, suffix: &str, edit: impl FnOnce(&mut Value)) -> Value {
    let job = job_name();
    let verdict = event::Verdict {
        type_: event::EventType::Normal,
        reason: "AsExpected".to_owned(),
        note: Some("the hosted control plane is available".to_owned()),
    };
    let at: jiff::Timestamp = "2026-11-28T02:00:10.123456Z".parse().unwrap();
    let built = event::build(
        &JobRef {
            namespace: ns,
            name: &job,
            uid,
        },
        &verdict,
        &format!("{job}-x7k2p"),
        at,
    );
    let mut body = serde_json::to_value(built).unwrap();
    body["metadata"]["name"] = json!(format!("{job}.{suffix}"));
    edit(&mut body);
    body
}

/// What the API server does with the reporter's Events: a create, the same name again, and the
/// creates it refuses (each rule the reporter's bounds keep it from breaking).
async fn event_sequence(side: &Side, uid: &str) {
    let ns = side.ns.clone();
    let events =
        format!("/apis/events.k8s.io/v1/namespaces/{ns}/events?fieldManager=status-reporter");
    let post = |label: &'static str, body: Value| {
        let events = events.clone();
        async move {
            side.raw(
                label,
                "POST",
                &events,
                Some("application/json"),
                Some(&body),
            )
            .await;
        }
    };
    post(
        "status-reporter: create an Event on the Job (201)",
        event_body(&ns, uid, "diff", |_| {}),
    )
    .await;
    post(
        "status-reporter: the same Event name again (409 AlreadyExists)",
        event_body(&ns, uid, "diff", |e| e["note"] = json!("another run")),
    )
    .await;
    post(
        "an Event with a note over 1024 bytes (422)",
        event_body(&ns, uid, "note", |e| e["note"] = json!("é".repeat(513))),
    )
    .await;
    post(
        "an Event with a reason over 128 bytes (422)",
        event_body(&ns, uid, "reason", |e| e["reason"] = json!("R".repeat(129))),
    )
    .await;
    post(
        "an Event without reportingController (422)",
        event_body(&ns, uid, "controller", |e| {
            e.as_object_mut().unwrap().remove("reportingController");
        }),
    )
    .await;
    post(
        "an Event with many rules broken (422, the server's order)",
        event_body(&ns, uid, "many", |e| {
            for key in ["action", "reason", "reportingInstance"] {
                e.as_object_mut().unwrap().remove(key);
            }
            e["type"] = json!("Error");
            e["note"] = json!("x".repeat(1100));
        }),
    )
    .await;
    post(
        "an Event without eventTime (422)",
        event_body(&ns, uid, "no-time", |e| {
            e.as_object_mut().unwrap().remove("eventTime");
        }),
    )
    .await;
    post(
        "an Event whose eventTime has nanoseconds (400)",
        event_body(&ns, uid, "nanos", |e| {
            e["eventTime"] = json!("2026-11-28T02:00:10.123456789Z");
        }),
    )
    .await;
    post(
        "an Event whose eventTime has an offset (201, stored in UTC)",
        event_body(&ns, uid, "offset", |e| {
            e["eventTime"] = json!("2026-11-28T04:00:10.123456+02:00");
        }),
    )
    .await;
}

#[tokio::test]
async fn status_reporter_run_and_error_paths() {
    let Some(mut pair) = Pair::new("diff-reporter").await else {
        return;
    };
    reporter_sequence(&mut pair.real).await;
    reporter_sequence(&mut pair.fake).await;
    pair.assert_same();
}

/// Under `manifests/rbac.yaml` (the Job's ServiceAccount) and then `manifests/rbac-diagnose.yaml`
/// (diagnose's only grant): what each may do, and the 403 of what it may not.
async fn rbac_sequence(side: &mut Side) {
    let ns = side.ns.clone();
    let pod = setup(side).await;
    side.grant_only("rbac.yaml", "hypershift-adapter").await;
    let job = format!("/apis/batch/v1/namespaces/{ns}/jobs/{}", job_name());
    side.raw(
        "status-reporter (rbac.yaml): read jobs/status",
        "GET",
        &format!("{job}/status"),
        None,
        None,
    )
    .await;
    let jobs = JobStatus::new(side.client().await, &ns, &job_name());
    side.proxy
        .step("status-reporter (rbac.yaml): write the report");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let view = jobs.read(deadline).await.unwrap();
    let outcome = jobs
        .write(
            Some(view),
            &report(ConditionStatus::True, "AsExpected"),
            deadline,
        )
        .await;
    side.proxy
        .note("write outcome", json!(format!("{outcome:?}")));
    let uid = jobs
        .read(tokio::time::Instant::now() + Duration::from_secs(5))
        .await
        .unwrap()
        .uid
        .unwrap();
    let events = format!("/apis/events.k8s.io/v1/namespaces/{ns}/events");
    let event = event_body(&ns, &uid, "rbac", |_| {});
    side.raw(
        "status-reporter (rbac.yaml): create the run's Event (201)",
        "POST",
        &format!("{events}?fieldManager=status-reporter"),
        Some("application/json"),
        Some(&event),
    )
    .await;
    side.raw(
        "status-reporter (rbac.yaml): the same Event again (409: create alone is enough to learn it exists)",
        "POST",
        &format!("{events}?fieldManager=status-reporter"),
        Some("application/json"),
        Some(&event),
    )
    .await;
    let name = event["metadata"]["name"].as_str().unwrap();
    side.raw(
        "(rbac.yaml) an Event cannot be read (403)",
        "GET",
        &format!("{events}/{name}"),
        None,
        None,
    )
    .await;
    side.raw(
        "(rbac.yaml) an Event cannot be patched (403)",
        "PATCH",
        &format!("{events}/{name}"),
        Some("application/merge-patch+json"),
        Some(&json!({"note": "changed"})),
    )
    .await;
    let mut core = event.clone();
    core["apiVersion"] = json!("v1");
    side.raw(
        "(rbac.yaml) core (\"\") events are not granted (403)",
        "POST",
        &format!("/api/v1/namespaces/{ns}/events"),
        Some("application/json"),
        Some(&core),
    )
    .await;
    side.raw(
        "(rbac.yaml) the Job itself is not granted (403)",
        "GET",
        &job,
        None,
        None,
    )
    .await;
    side.raw(
        "(rbac.yaml) pods/status is not granted (403)",
        "PATCH",
        &format!("/api/v1/namespaces/{ns}/pods/{pod}/status"),
        Some(SMP),
        Some(&json!({"status": {"phase": "Succeeded"}})),
    )
    .await;
    side.raw(
        "(rbac.yaml) another namespace is not granted (403)",
        "GET",
        &format!("/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3D{pod}"),
        None,
        None,
    )
    .await;
    side.raw(
        "(rbac.yaml) Jobs cannot be deleted (403)",
        "DELETE",
        &job,
        None,
        None,
    )
    .await;

    side.grant_only("rbac-diagnose.yaml", "diagnose-reader")
        .await;
    let selector = format!("hyperfleet.io/cluster-id={ID}");
    side.proxy
        .step("diagnose (rbac-diagnose.yaml): list the pulse Jobs and Pods");
    let read = hypershift_adapter::diagnose::read::pulses(
        Some(&side.kubeconfig()),
        &ns,
        &selector,
        Duration::from_secs(10),
    )
    .await;
    let summary = read.map(|p| (p.jobs.len(), p.pods.map(|pods| pods.len())));
    side.proxy
        .note("diagnose read", json!(format!("{summary:?}")));
    side.proxy
        .step("diagnose (rbac-diagnose.yaml): another namespace (403)");
    let read = hypershift_adapter::diagnose::read::pulses(
        Some(&side.kubeconfig()),
        "kube-system",
        &selector,
        Duration::from_secs(10),
    )
    .await;
    side.proxy
        .note("diagnose read", json!(format!("{:?}", read.map(|_| ()))));
    side.proxy
        .step("status-reporter under rbac-diagnose.yaml: jobs/status is refused (403)");
    let refused = jobs
        .read(tokio::time::Instant::now() + Duration::from_secs(5))
        .await;
    side.proxy
        .note("read outcome", json!(format!("{:?}", refused.map(|_| ()))));
    side.raw(
        "(rbac-diagnose.yaml) no Events (403)",
        "POST",
        &format!("/apis/events.k8s.io/v1/namespaces/{ns}/events"),
        Some("application/json"),
        Some(&event_body(&ns, &uid, "diagnose", |_| {})),
    )
    .await;
    side.raw(
        "(rbac-diagnose.yaml) no watch on pods (403)",
        "GET",
        &format!("/api/v1/namespaces/{ns}/pods?watch=true&fieldSelector=metadata.name%3D{pod}&timeoutSeconds=1"),
        None,
        None,
    )
    .await;
}

#[tokio::test]
async fn shipped_rbac_of_the_reporter_and_diagnose() {
    let Some(mut pair) = Pair::new("diff-rbac").await else {
        return;
    };
    rbac_sequence(&mut pair.real).await;
    rbac_sequence(&mut pair.fake).await;
    pair.assert_same();
}
