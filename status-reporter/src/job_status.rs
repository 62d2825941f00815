//! Reading the Job and writing its status: one strategic-merge PATCH of `jobs/status` that
//! carries the conditions, the data annotations (`hyperfleet.io/report-data` and one
//! `data.hyperfleet.io/<key>` per data key), `hyperfleet.io/observed-generation` and the
//! `resourceVersion` it was based on.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use job_report::{
    DATA_ANNOTATION_PREFIX, OBSERVED_GENERATION_ANNOTATION, REPORT_DATA_ANNOTATION, Report,
    StoredCondition, data_annotations, merge,
};
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};
use tokio::time::{Instant, sleep, timeout};

use crate::retry::Backoff;

/// The field manager our writes are recorded under.
pub const FIELD_MANAGER: &str = "status-reporter";
/// The longest a single API call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// What the reporter needs to know of the Job.
#[derive(Debug, Clone, Default)]
pub struct JobView {
    /// The Job's `metadata.uid`: the run's Event names the Job by it (`regarding.uid`), as
    /// `kubectl describe job` selects its events.
    pub uid: Option<String>,
    pub resource_version: Option<String>,
    pub conditions: Vec<StoredCondition>,
    pub annotations: BTreeMap<String, String>,
    pub start_time: Option<Timestamp>,
    pub active_deadline_seconds: Option<i64>,
}

impl JobView {
    /// What the reporter keeps of the Job it read.
    pub fn from_job(job: Job) -> JobView {
        let status = job.status.unwrap_or_default();
        JobView {
            uid: job.metadata.uid,
            resource_version: job.metadata.resource_version,
            annotations: job.metadata.annotations.unwrap_or_default(),
            conditions: status
                .conditions
                .unwrap_or_default()
                .into_iter()
                .map(|c| StoredCondition {
                    type_: c.type_,
                    status: c.status,
                    reason: c.reason,
                    message: c.message,
                    last_transition_time: c.last_transition_time.map(|t| t.0),
                })
                .collect(),
            start_time: status.start_time.map(|t| t.0),
            active_deadline_seconds: job.spec.and_then(|s| s.active_deadline_seconds),
        }
    }

    /// When the Job controller will stop the Job, if it has a deadline.
    pub fn deadline(&self) -> Option<Timestamp> {
        let start = self.start_time?;
        let seconds = self.active_deadline_seconds?;
        start
            .checked_add(jiff::SignedDuration::from_secs(seconds))
            .ok()
    }
}

/// How a write ended well.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Patched,
    /// The Job already said exactly this; nothing was sent.
    Unchanged,
}

/// Why the Job could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The server refused for good (401, 403, 404, 422, …): retrying will not help.
    #[error("{verb} {resource} was refused with {code} {reason}: {message}")]
    Refused {
        verb: &'static str,
        resource: String,
        code: u16,
        reason: String,
        message: String,
    },
    /// Transient failures until the deadline passed.
    #[error("{verb} {resource} kept failing until the deadline; last error: {last}")]
    GaveUp {
        verb: &'static str,
        resource: String,
        last: String,
    },
}

enum Attempt {
    /// 409: the Job changed since it was read.
    Stale,
    /// Worth trying again after a pause.
    Transient(String),
    Permanent {
        code: u16,
        reason: String,
        message: String,
    },
}

fn classify(result: Result<kube::Error, tokio::time::error::Elapsed>) -> Attempt {
    match result {
        Err(_) => Attempt::Transient(format!("no answer within {}s", CALL_TIMEOUT.as_secs())),
        Ok(kube::Error::Api(status)) => match status.code {
            409 => Attempt::Stale,
            408 | 429 | 500..=599 => Attempt::Transient(format!(
                "{} {}: {}",
                status.code, status.reason, status.message
            )),
            code => Attempt::Permanent {
                code,
                reason: status.reason.clone(),
                message: status.message.clone(),
            },
        },
        // Connection refused/reset, TLS, body read errors: the server may come back.
        Ok(other) => Attempt::Transient(other.to_string()),
    }
}

/// The Job this reporter writes.
#[derive(Clone)]
pub struct JobStatus {
    api: Api<Job>,
    name: String,
    namespace: String,
}

impl JobStatus {
    pub fn new(client: kube::Client, namespace: &str, name: &str) -> JobStatus {
        JobStatus {
            api: Api::namespaced(client, namespace),
            name: name.to_owned(),
            namespace: namespace.to_owned(),
        }
    }

    fn resource(&self) -> String {
        format!("jobs/{}/status in namespace {}", self.name, self.namespace)
    }

    /// GETs `jobs/status`, retrying transient failures until `deadline`.
    pub async fn read(&self, deadline: Instant) -> Result<JobView, JobError> {
        let mut backoff = Backoff::new();
        loop {
            let last = match timeout(CALL_TIMEOUT, self.api.get_status(&self.name)).await {
                Ok(Ok(job)) => return Ok(JobView::from_job(job)),
                Ok(Err(e)) => classify(Ok(e)),
                Err(elapsed) => classify(Err(elapsed)),
            };
            let last = match last {
                Attempt::Permanent {
                    code,
                    reason,
                    message,
                } => return Err(self.refused("get", code, reason, message)),
                Attempt::Stale => "409 Conflict".to_owned(),
                Attempt::Transient(why) => why,
            };
            tracing::warn!(verb = "get", resource = %self.resource(), error = %last, "reading the Job failed; retrying");
            self.pause(&mut backoff, deadline, "get", last).await?;
        }
    }

    /// Writes `report` onto the Job. Starts from `view` when given (saving a GET), re-reads and
    /// re-merges on 409, retries transient failures with backoff until `deadline`.
    pub async fn write(
        &self,
        view: Option<JobView>,
        report: &Report,
        deadline: Instant,
    ) -> Result<Written, JobError> {
        self.write_from(view, report, deadline)
            .await
            .map(|(written, _)| written)
    }

    /// [`Self::write`], also returning the view of the Job the write was based on (the last one
    /// read), whose uid the run's Event names.
    pub async fn write_from(
        &self,
        view: Option<JobView>,
        report: &Report,
        deadline: Instant,
    ) -> Result<(Written, JobView), JobError> {
        let mut view = match view {
            Some(view) => view,
            None => self.read(deadline).await?,
        };
        warn_skipped(report);
        let mut backoff = Backoff::new();
        loop {
            let Some(body) = patch_body(&view, report, Timestamp::now()) else {
                return Ok((Written::Unchanged, view));
            };
            let params = PatchParams {
                field_manager: Some(FIELD_MANAGER.to_owned()),
                ..PatchParams::default()
            };
            let patch = Patch::Strategic(&body);
            let call = self.api.patch_status(&self.name, &params, &patch);
            let attempt = match timeout(CALL_TIMEOUT, call).await {
                Ok(Ok(_)) => return Ok((Written::Patched, view)),
                Ok(Err(e)) => classify(Ok(e)),
                Err(elapsed) => classify(Err(elapsed)),
            };
            match attempt {
                Attempt::Stale => {
                    tracing::info!(resource = %self.resource(), "the Job changed since it was read (409); re-reading and merging again");
                    view = self.read(deadline).await?;
                }
                Attempt::Transient(why) => {
                    tracing::warn!(verb = "patch", resource = %self.resource(), error = %why, "writing the Job failed; retrying");
                    self.pause(&mut backoff, deadline, "patch", why).await?;
                }
                Attempt::Permanent {
                    code,
                    reason,
                    message,
                } => return Err(self.refused("patch", code, reason, message)),
            }
        }
    }

    fn refused(&self, verb: &'static str, code: u16, reason: String, message: String) -> JobError {
        JobError::Refused {
            verb,
            resource: self.resource(),
            code,
            reason,
            message,
        }
    }

    async fn pause(
        &self,
        backoff: &mut Backoff,
        deadline: Instant,
        verb: &'static str,
        last: String,
    ) -> Result<(), JobError> {
        let delay = backoff.next_delay();
        if Instant::now() + delay >= deadline {
            return Err(JobError::GaveUp {
                verb,
                resource: self.resource(),
                last,
            });
        }
        sleep(delay).await;
        Ok(())
    }
}

/// The most skipped data keys warned about one by one; the rest get one line with their count.
const MAX_SKIP_WARNINGS: usize = 16;

/// One warning per data key that gets no annotation (at most [`MAX_SKIP_WARNINGS`], then one
/// line for the rest), naming the key and the rule it broke. The key is never a reason not to
/// write: the rest of the report is written.
fn warn_skipped(report: &Report) {
    let skipped = data_annotations(report.data.as_ref()).skipped;
    for s in skipped.iter().take(MAX_SKIP_WARNINGS) {
        tracing::warn!(
            key = %s.key,
            rule = %s.why,
            "a data key gets no {DATA_ANNOTATION_PREFIX} annotation; the rest of the report is written"
        );
    }
    if let Some(first) = skipped.get(MAX_SKIP_WARNINGS) {
        tracing::warn!(
            more = skipped.len() - MAX_SKIP_WARNINGS,
            first = %first.key,
            "more data keys get no {DATA_ANNOTATION_PREFIX} annotation for the same reasons; the rest of the report is written"
        );
    }
}

/// The annotations to put on the Job for `report`: `Some(value)` to set, `None` to remove
/// (`null` in the strategic-merge patch). `hyperfleet.io/report-data` (the whole `data`),
/// `hyperfleet.io/observed-generation` when the report has one, `data.hyperfleet.io/<key>` per
/// data key that can be an annotation name, and a removal for each `data.hyperfleet.io/`
/// annotation on the Job (whoever wrote it) whose key the report no longer has. Together they
/// stay far below the API server's 256 KiB annotation limit (see
/// [`job_report::MAX_DATA_ANNOTATIONS_BYTES`]).
pub fn annotations(view: &JobView, report: &Report) -> BTreeMap<String, Option<String>> {
    let mut annotations: BTreeMap<String, Option<String>> = BTreeMap::new();
    annotations.insert(REPORT_DATA_ANNOTATION.to_owned(), Some(report.data_json()));
    if let Some(generation) = report.observed_generation {
        annotations.insert(
            OBSERVED_GENERATION_ANNOTATION.to_owned(),
            Some(generation.to_string()),
        );
    }
    let per_key = data_annotations(report.data.as_ref()).annotations;
    for gone in view
        .annotations
        .keys()
        .filter(|k| k.starts_with(DATA_ANNOTATION_PREFIX) && !per_key.contains_key(*k))
    {
        annotations.insert(gone.clone(), None);
    }
    annotations.extend(per_key.into_iter().map(|(k, v)| (k, Some(v))));
    annotations
}

/// The strategic-merge patch that puts `report` on the Job described by `view`, or `None` when
/// the Job already says all of it (conditions, annotations to set and annotations to remove).
pub fn patch_body(view: &JobView, report: &Report, now: Timestamp) -> Option<Value> {
    let merged = merge(&view.conditions, &report.conditions, now);
    let annotations = annotations(view, report);
    let annotations_changed = annotations
        .iter()
        .any(|(k, v)| view.annotations.get(k) != v.as_ref());
    if !merged.changed && !annotations_changed {
        return None;
    }
    let probe = Timestamp::from_second(now.as_second()).unwrap_or(now);
    let conditions: Vec<Value> = merged
        .conditions
        .iter()
        .map(|c| {
            json!({
                "type": c.type_,
                "status": c.status.as_str(),
                "reason": c.reason,
                "message": c.message,
                "lastTransitionTime": c.last_transition_time.map(|t| t.to_string()),
                "lastProbeTime": probe.to_string(),
            })
        })
        .collect();
    let mut metadata = json!({ "annotations": annotations });
    if let Some(rv) = &view.resource_version {
        metadata["resourceVersion"] = json!(rv);
    }
    Some(json!({ "metadata": metadata, "status": { "conditions": conditions } }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use job_report::{Condition, ConditionStatus};

    fn report() -> Report {
        Report {
            observed_generation: Some(4),
            data: Some(json!({"version": "4.17.0"}).as_object().unwrap().clone()),
            ..Report::new(vec![Condition::new(
                "Available",
                ConditionStatus::True,
                "Ready",
                "ok",
            )])
        }
    }

    #[test]
    fn body_carries_rv_conditions_and_annotations() {
        let view = JobView {
            resource_version: Some("41".into()),
            ..JobView::default()
        };
        let now: Timestamp = "2026-11-26T10:00:00.9Z".parse().unwrap();
        let body = patch_body(&view, &report(), now).unwrap();
        assert_eq!(
            body,
            json!({
                "metadata": {
                    "resourceVersion": "41",
                    "annotations": {
                        "hyperfleet.io/report-data": "{\"version\":\"4.17.0\"}",
                        "hyperfleet.io/observed-generation": "4",
                        "data.hyperfleet.io/version": "4.17.0"
                    }
                },
                "status": {"conditions": [{
                    "type": "Available", "status": "True", "reason": "Ready", "message": "ok",
                    "lastTransitionTime": "2026-11-26T10:00:00Z",
                    "lastProbeTime": "2026-11-26T10:00:00Z"
                }]}
            })
        );
    }

    #[test]
    fn nothing_to_write_when_the_job_already_says_it() {
        let view = JobView {
            resource_version: Some("41".into()),
            conditions: vec![StoredCondition {
                type_: "Available".into(),
                status: "True".into(),
                reason: Some("Ready".into()),
                message: Some("ok".into()),
                last_transition_time: Some("2026-11-25T00:00:00Z".parse().unwrap()),
            }],
            annotations: [
                (
                    REPORT_DATA_ANNOTATION.to_owned(),
                    r#"{"version":"4.17.0"}"#.to_owned(),
                ),
                (OBSERVED_GENERATION_ANNOTATION.to_owned(), "4".to_owned()),
                ("data.hyperfleet.io/version".to_owned(), "4.17.0".to_owned()),
                ("hyperfleet.io/generation".to_owned(), "4".to_owned()),
            ]
            .into(),
            ..JobView::default()
        };
        assert_eq!(patch_body(&view, &report(), Timestamp::now()), None);
        let mut changed = view.clone();
        changed.annotations.remove(OBSERVED_GENERATION_ANNOTATION);
        assert!(patch_body(&changed, &report(), Timestamp::now()).is_some());
        // A per-key annotation missing, different, or one too many: each is a write.
        let mut missing = view.clone();
        missing.annotations.remove("data.hyperfleet.io/version");
        assert!(patch_body(&missing, &report(), Timestamp::now()).is_some());
        let mut different = view.clone();
        different
            .annotations
            .insert("data.hyperfleet.io/version".into(), "4.16.0".into());
        assert!(patch_body(&different, &report(), Timestamp::now()).is_some());
        let mut extra = view.clone();
        extra
            .annotations
            .insert("data.hyperfleet.io/gone".into(), "x".into());
        let body = patch_body(&extra, &report(), Timestamp::now()).unwrap();
        assert_eq!(
            body["metadata"]["annotations"]["data.hyperfleet.io/gone"],
            Value::Null
        );
        assert!(
            body["metadata"]["annotations"]
                .as_object()
                .unwrap()
                .contains_key("data.hyperfleet.io/gone")
        );
    }

    fn report_with(data: Value) -> Report {
        Report {
            data: Some(data.as_object().unwrap().clone()),
            ..report()
        }
    }

    fn body_annotations(view: &JobView, report: &Report) -> Value {
        patch_body(view, report, Timestamp::now()).unwrap()["metadata"]["annotations"].clone()
    }

    #[test]
    fn one_annotation_per_data_key_for_every_json_type() {
        let data = json!({
            "control_plane_endpoint": "https://api.c1.example.com:6443",
            "empty": "",
            "nodes": 3,
            "ratio": 0.25,
            "ready": false,
            "nothing": null,
            "versions": {"desired": "4.17.0", "history": ["4.16.2"]},
            "zones": ["us-east-1a", "us-east-1b"]
        });
        let annotations = body_annotations(&JobView::default(), &report_with(data.clone()));
        assert_eq!(
            annotations,
            json!({
                "hyperfleet.io/report-data": data.to_string(),
                "hyperfleet.io/observed-generation": "4",
                "data.hyperfleet.io/control_plane_endpoint": "https://api.c1.example.com:6443",
                "data.hyperfleet.io/empty": "",
                "data.hyperfleet.io/nodes": "3",
                "data.hyperfleet.io/ratio": "0.25",
                "data.hyperfleet.io/ready": "false",
                "data.hyperfleet.io/nothing": "null",
                "data.hyperfleet.io/versions": r#"{"desired":"4.17.0","history":["4.16.2"]}"#,
                "data.hyperfleet.io/zones": r#"["us-east-1a","us-east-1b"]"#
            })
        );
    }

    #[test]
    fn keys_that_cannot_be_annotation_names_are_skipped_and_the_rest_written() {
        let data = json!({"version": "4.17.0", "bad key": 1, "a/b": 2, "-x": 3});
        let annotations = body_annotations(&JobView::default(), &report_with(data.clone()));
        let keys: Vec<&String> = annotations.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "data.hyperfleet.io/version",
                "hyperfleet.io/observed-generation",
                "hyperfleet.io/report-data"
            ]
        );
        // report-data still carries the whole data, skipped keys included.
        assert_eq!(annotations["hyperfleet.io/report-data"], data.to_string());
    }

    #[test]
    fn keys_gone_from_the_report_are_removed_whoever_wrote_them() {
        let view = JobView {
            annotations: [
                ("data.hyperfleet.io/version", "4.16.0"),
                ("data.hyperfleet.io/control_plane_endpoint", "https://old"),
                // Another writer's key under the prefix: the prefix is the reporter's.
                ("data.hyperfleet.io/written-by-someone-else", "x"),
                // Not under the prefix: left alone.
                ("hyperfleet.io/generation", "4"),
                ("sub.data.hyperfleet.io/x", "y"),
                ("data.hyperfleet.io.example/x", "y"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
            ..JobView::default()
        };
        let annotations = body_annotations(&view, &report_with(json!({"version": "4.17.0"})));
        assert_eq!(
            annotations,
            json!({
                "hyperfleet.io/report-data": r#"{"version":"4.17.0"}"#,
                "hyperfleet.io/observed-generation": "4",
                "data.hyperfleet.io/version": "4.17.0",
                "data.hyperfleet.io/control_plane_endpoint": null,
                "data.hyperfleet.io/written-by-someone-else": null
            })
        );
        // A report without data removes every per-key annotation.
        let no_data = Report {
            data: None,
            ..report()
        };
        let annotations = body_annotations(&view, &no_data);
        assert_eq!(annotations["hyperfleet.io/report-data"], "{}");
        for key in [
            "data.hyperfleet.io/version",
            "data.hyperfleet.io/control_plane_endpoint",
            "data.hyperfleet.io/written-by-someone-else",
        ] {
            assert_eq!(annotations.get(key), Some(&Value::Null), "{key}");
        }
    }

    #[test]
    fn a_failure_report_clears_the_data_keys_of_an_earlier_report() {
        let view = JobView {
            annotations: [("data.hyperfleet.io/version".to_owned(), "4.17.0".to_owned())].into(),
            ..JobView::default()
        };
        let failure = crate::outcome::Outcome::Terminated.into_report(&[
            "Applied".to_owned(),
            "Available".to_owned(),
            "Health".to_owned(),
        ]);
        let body = patch_body(&view, &failure, Timestamp::now()).unwrap();
        assert_eq!(
            body["metadata"]["annotations"],
            json!({"hyperfleet.io/report-data": "{}", "data.hyperfleet.io/version": null})
        );
        assert_eq!(body["status"]["conditions"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn deadline_is_start_plus_active_deadline() {
        let view = JobView {
            start_time: Some("2026-11-26T10:00:00Z".parse().unwrap()),
            active_deadline_seconds: Some(600),
            ..JobView::default()
        };
        assert_eq!(
            view.deadline(),
            Some("2026-11-26T10:10:00Z".parse().unwrap())
        );
        assert_eq!(JobView::default().deadline(), None);
    }
}
