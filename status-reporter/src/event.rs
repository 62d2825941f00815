//! The run's Kubernetes Event on the Job (`events.k8s.io/v1`): what the pulse decided, where
//! `kubectl describe job` and `kubectl get events` show it.
//!
//! One Event per run, created after the status PATCH (whose latency it does not touch), best
//! effort: one `create` with a short timeout and no retry; a refused or failed create is logged
//! and changes neither the Job's status nor the exit code.
//!
//! The shape, and what a real v1.36 API server answered for each rule (`docs/status-reporter.md`,
//! "The Event on the Job"):
//! - `type` `Warning` when the report says a person has to act ([`decide`]), else `Normal`;
//! - `reason` and `note` are the deciding condition's reason and message, cut to the API's limits
//!   (128 and 1024 bytes: a longer one is a 422);
//! - `action` [`ACTION`], `reportingController` [`REPORTING_CONTROLLER`], `reportingInstance` the
//!   Pod (both required by `events.k8s.io/v1`, the instance at most 128 bytes);
//! - `regarding` the Job with its uid (`kubectl describe job` selects its events by the uid);
//! - a deterministic name ([`name`]): the same outcome of the same Job recorded again (a re-run of
//!   the pulse) is the server's 409 `AlreadyExists`, not a second Event.

use std::time::Duration;

use jiff::Timestamp;
use job_report::{Condition, ConditionStatus, Report};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};

use crate::job_status::FIELD_MANAGER;

/// `reportingController`: a qualified name, required by `events.k8s.io/v1`; `kubectl describe`
/// shows it as the Event's source ("From").
pub const REPORTING_CONTROLLER: &str = "hyperfleet.io/status-reporter";
/// `action`: what the reporter did regarding the Job (required, at most 128 bytes).
pub const ACTION: &str = "ReportStatus";
/// The API server's limit on `note` (`message` in its 422), in bytes.
pub const MAX_NOTE_BYTES: usize = 1024;
/// The API server's limit on `reason`, `action` and `reportingInstance`, in bytes.
pub const MAX_SHORT_FIELD_BYTES: usize = 128;
/// The condition type HyperFleet reads as "someone has to act".
pub const HEALTH: &str = "Health";
/// The longest the one create may take.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// `Normal` or `Warning`, the only types the API accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Normal,
    Warning,
}

impl EventType {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// What the Event says: its type, and the deciding condition's reason and message (bounded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub type_: EventType,
    pub reason: String,
    /// `None` when the condition has no message.
    pub note: Option<String>,
}

/// The Event's type and deciding condition for the report written to the Job.
///
/// - `Warning` for the reporter's own failure rows (`own_failure`: crash, OOM kill, missing or
///   invalid report, timeout, SIGTERM), with their reason;
/// - `Warning` when the report's `Health` is `False`, with Health's reason;
/// - for a report without `Health` (another adapter, a legacy Go-format report), `Warning` when
///   its primary condition is `False` (a legacy `failure`);
/// - else `Normal`, with the primary condition's reason.
///
/// The primary condition is the report's condition of the first `condition_types` entry it has
/// (our Job: `Available`), else its first condition. `None` only for a report without
/// conditions, which validation never lets through.
pub fn decide(report: &Report, own_failure: bool, condition_types: &[String]) -> Option<Verdict> {
    let primary = condition_types
        .iter()
        .find_map(|t| report.condition(t))
        .or_else(|| report.conditions.first())?;
    let is_false = |c: &Condition| c.status == ConditionStatus::False;
    let (type_, deciding) = match report.condition(HEALTH) {
        _ if own_failure => (EventType::Warning, primary),
        Some(health) if is_false(health) => (EventType::Warning, health),
        Some(_) => (EventType::Normal, primary),
        None if is_false(primary) => (EventType::Warning, primary),
        None => (EventType::Normal, primary),
    };
    Some(Verdict {
        type_,
        reason: cut(&deciding.reason, MAX_SHORT_FIELD_BYTES),
        note: (!deciding.message.is_empty())
            .then(|| job_report::truncate(deciding.message.clone(), MAX_NOTE_BYTES)),
    })
}

/// `s` cut to at most `max` bytes on a character boundary, unmarked (a reason stays one word).
fn cut(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

/// The Job an Event is about.
#[derive(Debug, Clone, Copy)]
pub struct JobRef<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
    pub uid: &'a str,
}

/// The Event's name: `<job>.<16 hex digits>`, the digits a hash (FNV-1a, 64 bits) of the Job's
/// uid, the type and the reason. The same outcome of the same Job always gets the same name, so
/// recording it again is a 409; a Job re-created under the same name (a new uid), or a run of the
/// same Job that ends differently, gets a new one.
pub fn name(job: &JobRef<'_>, verdict: &Verdict) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut hash = OFFSET;
    for part in [job.uid, verdict.type_.as_str(), &verdict.reason] {
        // 0xff never occurs in UTF-8: it separates the parts.
        for byte in part.bytes().chain([0xff]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(PRIME);
        }
    }
    format!("{}.{hash:016x}", job.name)
}

/// The Event for `verdict` on `job`, reported by `instance` (this Pod) at `now`.
pub fn build(job: &JobRef<'_>, verdict: &Verdict, instance: &str, now: Timestamp) -> Event {
    Event {
        metadata: ObjectMeta {
            name: Some(name(job, verdict)),
            namespace: Some(job.namespace.to_owned()),
            ..ObjectMeta::default()
        },
        event_time: Some(MicroTime(now)),
        type_: Some(verdict.type_.as_str().to_owned()),
        reason: Some(verdict.reason.clone()),
        note: verdict.note.clone(),
        action: Some(ACTION.to_owned()),
        reporting_controller: Some(REPORTING_CONTROLLER.to_owned()),
        reporting_instance: Some(cut(instance, MAX_SHORT_FIELD_BYTES)),
        regarding: Some(ObjectReference {
            api_version: Some("batch/v1".to_owned()),
            kind: Some("Job".to_owned()),
            namespace: Some(job.namespace.to_owned()),
            name: Some(job.name.to_owned()),
            uid: Some(job.uid.to_owned()),
            ..ObjectReference::default()
        }),
        ..Event::default()
    }
}

/// How the one create ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// 201: the Event is on the Job.
    Created,
    /// 409 `AlreadyExists`: this outcome of this Job was recorded before (a re-run).
    AlreadyRecorded,
    /// Any other answer of the server (403 without the RBAC grant, 422, 5xx, …).
    Refused {
        code: u16,
        reason: String,
        message: String,
    },
    /// No answer: connection, TLS, or the timeout.
    Failed(String),
}

/// One create of `event`, no retry, within `timeout`.
pub async fn record(api: &Api<Event>, event: &Event, timeout: Duration) -> Recorded {
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PostParams::default()
    };
    match tokio::time::timeout(timeout, api.create(&params, event)).await {
        Ok(Ok(_)) => Recorded::Created,
        Ok(Err(kube::Error::Api(status))) if status.code == 409 => Recorded::AlreadyRecorded,
        Ok(Err(kube::Error::Api(status))) => Recorded::Refused {
            code: status.code,
            reason: status.reason.clone(),
            message: status.message.clone(),
        },
        Ok(Err(other)) => Recorded::Failed(other.to_string()),
        Err(_) => Recorded::Failed(format!("no answer within {}s", timeout.as_secs_f32())),
    }
}

/// One log line for how the create ended; it closes the run, so it carries the run's CPU time
/// and peak RSS (what `bench-status-reporter` reads).
pub fn log(recorded: &Recorded, event: &Event) {
    let name = event.metadata.name.as_deref().unwrap_or_default();
    let namespace = event.metadata.namespace.as_deref().unwrap_or_default();
    let type_ = event.type_.as_deref().unwrap_or_default();
    let reason = event.reason.as_deref().unwrap_or_default();
    let cpu_us = job_report::usage::cpu_micros();
    let peak_rss_kib = job_report::usage::peak_rss_kib();
    match recorded {
        Recorded::Created => tracing::info!(
            event = name,
            event_type = type_,
            reason,
            cpu_us,
            peak_rss_kib,
            "the run's Event is recorded on the Job"
        ),
        Recorded::AlreadyRecorded => tracing::info!(
            event = name,
            event_type = type_,
            reason,
            cpu_us,
            peak_rss_kib,
            "the run's Event was already recorded (409 AlreadyExists: this outcome of this Job, a re-run); not recorded again"
        ),
        Recorded::Refused {
            code,
            reason: status_reason,
            message,
        } => tracing::warn!(
            verb = "create", resource = %format!("events.k8s.io events in namespace {namespace}"),
            event = name, code, error = %format!("{status_reason}: {message}"), cpu_us, peak_rss_kib,
            "the run's Event was refused; the Job's status is written and the exit code is unchanged{}",
            if *code == 403 {
                " (grant create on events.k8s.io events in this namespace, manifests/rbac.yaml, or set RECORD_EVENTS=false)"
            } else {
                ""
            }
        ),
        Recorded::Failed(why) => tracing::warn!(
            verb = "create", resource = %format!("events.k8s.io events in namespace {namespace}"),
            event = name, error = %why, cpu_us, peak_rss_kib,
            "the run's Event could not be recorded (not retried); the Job's status is written and the exit code is unchanged"
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::outcome::Outcome;

    fn types() -> Vec<String> {
        vec!["Available".into(), "Applied".into(), "Health".into()]
    }

    fn report(health: ConditionStatus, health_reason: &str) -> Report {
        Report::new(vec![
            Condition::new(
                "Applied",
                ConditionStatus::True,
                "ManifestWorkCreated",
                "sent",
            ),
            Condition::new(
                "Available",
                ConditionStatus::False,
                "Provisioning",
                "in progress",
            ),
            Condition::new("Health", health, health_reason, "health says"),
        ])
    }

    #[test]
    fn a_healthy_report_is_normal_with_the_primary_conditions_reason() {
        let v = decide(&report(ConditionStatus::True, "NoIssues"), false, &types()).unwrap();
        assert_eq!(
            v,
            Verdict {
                type_: EventType::Normal,
                reason: "Provisioning".into(),
                note: Some("in progress".into()),
            }
        );
    }

    #[test]
    fn health_false_is_a_warning_with_healths_reason() {
        let v = decide(&report(ConditionStatus::False, "Degraded"), false, &types()).unwrap();
        assert_eq!(v.type_, EventType::Warning);
        assert_eq!(v.reason, "Degraded");
        assert_eq!(v.note.as_deref(), Some("health says"));
        // Unknown is not a person's call yet.
        let v = decide(
            &report(ConditionStatus::Unknown, "FeedbackNotSynced"),
            false,
            &types(),
        )
        .unwrap();
        assert_eq!(
            (v.type_, v.reason.as_str()),
            (EventType::Normal, "Provisioning")
        );
    }

    #[test]
    fn the_reporters_own_failures_are_warnings_with_their_reason() {
        for outcome in [
            Outcome::Terminated,
            Outcome::Timeout(Duration::from_secs(290)),
            Outcome::InvalidResultFormat("conditions: missing".into()),
        ] {
            let reason = outcome.reason();
            let failure = outcome.into_report(&types());
            let v = decide(&failure, true, &types()).unwrap();
            assert_eq!((v.type_, v.reason.as_str()), (EventType::Warning, reason));
            assert_eq!(
                v.note.as_deref(),
                Some(failure.conditions[0].message.as_str())
            );
        }
        // With only Available as CONDITION_TYPE (the default), still a Warning.
        let only = vec!["Available".to_owned()];
        let failure = Outcome::Terminated.into_report(&only);
        let v = decide(&failure, true, &only).unwrap();
        assert_eq!(v.type_, EventType::Warning);
    }

    #[test]
    fn without_health_the_primary_condition_decides() {
        let legacy_failure = Report::new(vec![Condition::new(
            "Available",
            ConditionStatus::False,
            "NoReasonProvided",
            "",
        )]);
        let v = decide(&legacy_failure, false, &["Available".to_owned()]).unwrap();
        assert_eq!(
            v,
            Verdict {
                type_: EventType::Warning,
                reason: "NoReasonProvided".into(),
                note: None,
            }
        );
        let other = Report::new(vec![Condition::new(
            "Ready",
            ConditionStatus::True,
            "AllGood",
            "fine",
        )]);
        let v = decide(&other, false, &["Available".to_owned()]).unwrap();
        assert_eq!((v.type_, v.reason.as_str()), (EventType::Normal, "AllGood"));
    }

    #[test]
    fn reason_and_note_are_cut_to_the_apis_limits() {
        let long = Report::new(vec![Condition::new(
            "Health",
            ConditionStatus::False,
            "R".repeat(1024),
            "é".repeat(40_000),
        )]);
        let v = decide(&long, false, &types()).unwrap();
        assert_eq!(v.reason, "R".repeat(128));
        let note = v.note.unwrap();
        assert!(note.len() <= MAX_NOTE_BYTES, "{}", note.len());
        assert!(
            note.ends_with("é…"),
            "cut on a character boundary and marked"
        );
        assert_eq!(cut("ééé", 5), "éé");
    }

    fn job() -> JobRef<'static> {
        JobRef {
            namespace: "hyperfleet-system",
            name: "hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g3",
            uid: "0f800455-b7c7-4060-bb84-bf29b49f7138",
        }
    }

    #[test]
    fn the_name_is_the_same_for_the_same_outcome_of_the_same_job_only() {
        let normal = decide(&report(ConditionStatus::True, "NoIssues"), false, &types()).unwrap();
        let warning = decide(&report(ConditionStatus::False, "Degraded"), false, &types()).unwrap();
        let a = name(&job(), &normal);
        assert_eq!(a, name(&job(), &normal));
        assert!(
            a.starts_with("hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g3.") && a.len() == 45 + 17,
            "{a}"
        );
        // Lowercase RFC 1123 subdomain, as the API requires of an Event's name.
        assert!(
            a.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        );
        assert_ne!(a, name(&job(), &warning));
        let recreated = JobRef {
            uid: "1f800455-b7c7-4060-bb84-bf29b49f7138",
            ..job()
        };
        assert_ne!(a, name(&recreated, &normal));
        // A different message alone is the same outcome.
        let mut other_note = normal.clone();
        other_note.note = Some("another message".into());
        assert_eq!(a, name(&job(), &other_note));
    }

    #[test]
    fn the_event_is_what_events_k8s_io_v1_requires() {
        let verdict = decide(&report(ConditionStatus::False, "Degraded"), false, &types()).unwrap();
        let now: Timestamp = "2026-12-01T22:10:00.123456789Z".parse().unwrap();
        let event = build(&job(), &verdict, &"p".repeat(200), now);
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "apiVersion": "events.k8s.io/v1",
                "kind": "Event",
                "metadata": {"name": name(&job(), &verdict), "namespace": "hyperfleet-system"},
                // Microseconds: the server refuses nanoseconds (400 "cannot parse \"789Z\"").
                "eventTime": "2026-12-01T22:10:00.123456Z",
                "type": "Warning",
                "reason": "Degraded",
                "note": "health says",
                "action": "ReportStatus",
                "reportingController": "hyperfleet.io/status-reporter",
                "reportingInstance": "p".repeat(128),
                "regarding": {
                    "apiVersion": "batch/v1", "kind": "Job", "namespace": "hyperfleet-system",
                    "name": "hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g3",
                    "uid": "0f800455-b7c7-4060-bb84-bf29b49f7138"
                }
            })
        );
    }
}
