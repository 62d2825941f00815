//! Reading the Job and writing its status: one strategic-merge PATCH of `jobs/status` that
//! carries the conditions, the report-data annotation and the `resourceVersion` it was based on.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use job_report::{
    OBSERVED_GENERATION_ANNOTATION, REPORT_DATA_ANNOTATION, Report, StoredCondition, merge,
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
    pub resource_version: Option<String>,
    pub conditions: Vec<StoredCondition>,
    pub annotations: BTreeMap<String, String>,
    pub start_time: Option<Timestamp>,
    pub active_deadline_seconds: Option<i64>,
}

impl JobView {
    fn from_job(job: Job) -> JobView {
        let status = job.status.unwrap_or_default();
        JobView {
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
        let mut view = match view {
            Some(view) => view,
            None => self.read(deadline).await?,
        };
        let mut backoff = Backoff::new();
        loop {
            let Some(body) = patch_body(&view, report, Timestamp::now()) else {
                return Ok(Written::Unchanged);
            };
            let params = PatchParams {
                field_manager: Some(FIELD_MANAGER.to_owned()),
                ..PatchParams::default()
            };
            let patch = Patch::Strategic(&body);
            let call = self.api.patch_status(&self.name, &params, &patch);
            let attempt = match timeout(CALL_TIMEOUT, call).await {
                Ok(Ok(_)) => return Ok(Written::Patched),
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

/// The strategic-merge patch that puts `report` on the Job described by `view`, or `None` when
/// the Job already says all of it.
pub fn patch_body(view: &JobView, report: &Report, now: Timestamp) -> Option<Value> {
    let merged = merge(&view.conditions, &report.conditions, now);
    let mut annotations = BTreeMap::new();
    annotations.insert(REPORT_DATA_ANNOTATION, report.data_json());
    if let Some(generation) = report.observed_generation {
        annotations.insert(OBSERVED_GENERATION_ANNOTATION, generation.to_string());
    }
    let annotations_changed = annotations
        .iter()
        .any(|(k, v)| view.annotations.get(*k) != Some(v));
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
                        "hyperfleet.io/observed-generation": "4"
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
            ]
            .into(),
            ..JobView::default()
        };
        assert_eq!(patch_body(&view, &report(), Timestamp::now()), None);
        let mut changed = view.clone();
        changed.annotations.remove(OBSERVED_GENERATION_ANNOTATION);
        assert!(patch_body(&changed, &report(), Timestamp::now()).is_some());
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
