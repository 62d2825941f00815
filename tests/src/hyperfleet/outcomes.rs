//! The pulse Job as the framework's discovery sees it in each outcome, built by what really writes
//! it: the API server's defaults on create (`docs/hyperfleet-framework.md` §5.2), the
//! status-reporter's own pure functions (`Outcome::into_report`, `job_status::patch_body`) applied
//! with the testbed's strategic-merge implementation, and the Job controller's terminal
//! conditions (`docs/kubernetes-job-status.md`).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use jiff::Timestamp;
use job_report::{Report, StoredCondition};
use regex::Regex;
use serde_json::{Value, json};
use status_reporter::job_status::{JobView, patch_body};

use crate::kube_api::strategic_merge::{self, MergeKeys};

/// The merge key of `status.conditions` in a Job (by `type`).
const JOB_KEYS: MergeKeys = MergeKeys(&[("status.conditions", "type")]);
const UID: &str = "0b9a3c2e-6f1d-4c8a-9e7b-5d4c3b2a1f00";

/// What the API server answers to a GET right after creating `manifest` (a rendered Job):
/// server metadata, the generated selector and pod-template labels, defaults, and no
/// `status.conditions`.
pub fn created(manifest: &Value, now: Timestamp) -> Value {
    let mut job = manifest.clone();
    let name = job["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let meta = &mut job["metadata"];
    meta["uid"] = json!(UID);
    meta["resourceVersion"] = json!("1001");
    meta["generation"] = json!(1);
    meta["creationTimestamp"] = json!(second(now));
    let spec = &mut job["spec"];
    spec["selector"] = json!({"matchLabels": {"batch.kubernetes.io/controller-uid": UID}});
    for (key, default) in [("backoffLimit", 6), ("completions", 1), ("parallelism", 1)] {
        if spec.get(key).is_none() {
            spec[key] = json!(default);
        }
    }
    let labels = &mut spec["template"]["metadata"]["labels"];
    if !labels.is_object() {
        *labels = json!({});
    }
    for (k, v) in [
        ("batch.kubernetes.io/controller-uid", UID.to_owned()),
        ("batch.kubernetes.io/job-name", name.clone()),
        ("controller-uid", UID.to_owned()),
        ("job-name", name),
    ] {
        labels[k] = json!(v);
    }
    job["status"] = json!({});
    job
}

/// The Job once its pod runs: `startTime`, `active`, no conditions.
pub fn running(job: &Value, started: Timestamp) -> Value {
    let mut job = job.clone();
    job["status"] = json!({"startTime": second(started), "active": 1, "ready": 0});
    bump(&mut job);
    job
}

/// The Job after the status-reporter wrote `report` (its real patch, strategic-merged).
pub fn reported(job: &Value, report: &Report, now: Timestamp) -> Value {
    let view = view(job);
    let Some(patch) = patch_body(&view, report, now) else {
        return job.clone();
    };
    let mut merged = strategic_merge::apply(job, &patch, JOB_KEYS)
        .unwrap_or_else(|e| panic!("the reporter's patch does not apply: {e:?}"));
    bump(&mut merged);
    merged
}

/// The Job controller's terminal conditions after the pod ended: success appends
/// `SuccessCriteriaMet` and `Complete` (`CompletionsReached`), failure `FailureTarget` and
/// `Failed` (`BackoffLimitExceeded`).
pub fn finished(job: &Value, succeeded: bool, now: Timestamp) -> Value {
    let mut job = job.clone();
    let t = second(now);
    let (types, reason) = if succeeded {
        (["SuccessCriteriaMet", "Complete"], "CompletionsReached")
    } else {
        (["FailureTarget", "Failed"], "BackoffLimitExceeded")
    };
    let status = &mut job["status"];
    let mut conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    for type_ in types {
        conditions.push(
            json!({"type": type_, "status": "True", "reason": reason, "message": "",
            "lastProbeTime": t, "lastTransitionTime": t}),
        );
    }
    status["conditions"] = Value::Array(conditions);
    status["active"] = json!(0);
    if succeeded {
        status["succeeded"] = json!(1);
        status["completionTime"] = json!(t);
    } else {
        status["failed"] = json!(1);
    }
    bump(&mut job);
    job
}

fn bump(job: &mut Value) {
    let rv: u64 = job["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    job["metadata"]["resourceVersion"] = json!((rv + 1).to_string());
}

fn second(t: Timestamp) -> String {
    Timestamp::from_second(t.as_second())
        .unwrap_or(t)
        .to_string()
}

/// What the reporter reads of a Job (what `JobView::from_job` takes from a `batch/v1` Job).
pub fn view(job: &Value) -> JobView {
    let status = &job["status"];
    JobView {
        uid: job["metadata"]["uid"].as_str().map(str::to_owned),
        resource_version: job["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_owned),
        conditions: status["conditions"]
            .as_array()
            .map(|cs| {
                cs.iter()
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
            .unwrap_or_default(),
        annotations: job["metadata"]["annotations"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect::<BTreeMap<_, _>>()
            })
            .unwrap_or_default(),
        start_time: status["startTime"].as_str().and_then(|t| t.parse().ok()),
        active_deadline_seconds: job["spec"]["activeDeadlineSeconds"].as_i64(),
    }
}

static LABEL_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$").expect("valid pattern")
});
static SUBDOMAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
        .expect("valid pattern")
});

/// What a v1.36 API server says about the name and labels of a Job it is asked to create
/// (after it copied the name into the pod-template labels), in its words; empty when admitted.
pub fn job_admission_problems(manifest: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let name = manifest["metadata"]["name"].as_str().unwrap_or_default();
    if name.len() > 253 || !SUBDOMAIN.is_match(name) {
        problems.push(format!(
            "metadata.name: Invalid value: {name:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'"
        ));
    }
    let created = created(manifest, Timestamp::UNIX_EPOCH);
    for (at, labels) in [
        ("metadata.labels", &created["metadata"]["labels"]),
        (
            "spec.template.labels",
            &created["spec"]["template"]["metadata"]["labels"],
        ),
    ] {
        for (key, value) in labels.as_object().into_iter().flatten() {
            let value = value.as_str().unwrap_or_default();
            if value.len() > 63 {
                problems.push(format!(
                    "{at}: Invalid value: {value:?}: must be no more than 63 bytes (label {key})"
                ));
            } else if !LABEL_VALUE.is_match(value) {
                problems.push(format!(
                    "{at}: Invalid value: {value:?}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.' (label {key})"
                ));
            }
        }
    }
    problems
}
