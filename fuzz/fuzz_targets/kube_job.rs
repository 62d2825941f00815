//! The pulse Job, as the status-reporter reads it before writing (`GET jobs/{name}`, kube-rs
//! deserializing a `Job`): `JobView::from_job`, its deadline (`JobView::deadline`), and the PATCH
//! of a report onto what the Job already says (`job_status::patch_body`: conditions merged,
//! data annotations set and stale ones removed).
//!
//! Properties: any Job gives a view and a deadline without overflow; the PATCH carries every
//! condition of the report once, removes only `data.hyperfleet.io/` annotations, and writing the
//! same report again onto the Job the PATCH made sends nothing.
#![no_main]

use hypershift_fuzz::now;
use job_report::{Condition, ConditionStatus, DATA_ANNOTATION_PREFIX, Report, StoredCondition};
use k8s_openapi::api::batch::v1::Job;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use status_reporter::job_status::{JobView, patch_body};

fn reports() -> [Report; 2] {
    let mut ready = Report::new(vec![
        Condition::new(
            "Applied",
            ConditionStatus::True,
            "ManifestWorkApplied",
            "applied",
        ),
        Condition::new(
            "Available",
            ConditionStatus::True,
            "ControlPlaneReady",
            "ready",
        ),
        Condition::new(
            "Health",
            ConditionStatus::True,
            "NoIssues",
            "No degradation detected",
        ),
    ]);
    ready.observed_generation = Some(3);
    ready.data = json!({"control_plane_endpoint": "https://api.prod-eu-1.hcp.example.com:443",
                        "version": "4.17.0", "desired_version": "4.17.0"})
    .as_object()
    .cloned();
    let failed = Report::new(vec![Condition::new(
        "Available",
        ConditionStatus::False,
        "AdapterTimeout",
        "The adapter wrote no report within 290s",
    )]);
    [ready, failed]
}

/// The view of the Job once the API server applied `body` (a strategic-merge PATCH: conditions
/// merged by `type`, the first of a type replaced; `null` annotations removed).
fn patched(view: &JobView, body: &Value) -> JobView {
    let mut annotations = view.annotations.clone();
    for (k, v) in body["metadata"]["annotations"]
        .as_object()
        .into_iter()
        .flatten()
    {
        match v.as_str() {
            Some(v) => annotations.insert(k.clone(), v.to_owned()),
            None => annotations.remove(k),
        };
    }
    let mut conditions = view.conditions.clone();
    for c in body["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let sent = StoredCondition {
            type_: c["type"].as_str().unwrap_or_default().to_owned(),
            status: c["status"].as_str().unwrap_or_default().to_owned(),
            reason: c["reason"].as_str().map(str::to_owned),
            message: c["message"].as_str().map(str::to_owned),
            last_transition_time: c["lastTransitionTime"]
                .as_str()
                .and_then(|t| t.parse().ok()),
        };
        match conditions.iter_mut().find(|s| s.type_ == sent.type_) {
            Some(stored) => *stored = sent,
            None => conditions.push(sent),
        }
    }
    JobView {
        annotations,
        conditions,
        ..view.clone()
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(job) = serde_json::from_slice::<Job>(data) else {
        return;
    };
    let view = JobView::from_job(job);
    let _ = view.deadline();
    for report in reports() {
        let Some(body) = patch_body(&view, &report, now()) else {
            continue;
        };
        let sent = body["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for c in &report.conditions {
            let same: Vec<&Value> = sent
                .iter()
                .filter(|s| s["type"] == c.type_.as_str())
                .collect();
            assert_eq!(
                same.len(),
                1,
                "condition {} sent {} times",
                c.type_,
                same.len()
            );
            assert_eq!(same[0]["reason"], c.reason.as_str());
        }
        for (k, v) in body["metadata"]["annotations"]
            .as_object()
            .into_iter()
            .flatten()
        {
            if v.is_null() {
                assert!(k.starts_with(DATA_ANNOTATION_PREFIX), "removed {k}");
            }
        }
        let after = patched(&view, &body);
        assert!(
            patch_body(&after, &report, now()).is_none(),
            "the same report again onto the patched Job sends {:#}",
            patch_body(&after, &report, now()).unwrap_or_default()
        );
    }
});
