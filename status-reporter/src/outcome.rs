//! What the reporter concluded, and the conditions that say so on the Job.

use std::time::Duration;

use job_report::{Condition, ConditionStatus, Report};

/// How the adapter container ended, as the kubelet reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Termination {
    pub exit_code: i32,
    /// The kubelet's reason, e.g. `Completed`, `Error`, `OOMKilled`.
    pub reason: Option<String>,
    /// The container's termination message (`/dev/termination-log`), if any.
    pub message: Option<String>,
}

impl Termination {
    pub fn oom_killed(&self) -> bool {
        self.reason.as_deref() == Some("OOMKilled")
    }

    /// The termination message fit to quote in a condition: one line, credentials redacted, at
    /// most 4096 bytes ([`job_report::termination_message`]); `None` when there is none. It is
    /// what the adapter wrote to its termination log, or with `FallbackToLogsOnError` the kubelet's
    /// tail of its log (JSON lines) when it wrote none and failed.
    pub fn quoted_message(&self) -> Option<String> {
        self.message
            .as_deref()
            .map(job_report::termination_message)
            .filter(|m| !m.is_empty())
    }
}

/// The one thing the reporter puts on the Job.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The adapter wrote a valid report.
    Report(Report),
    /// The adapter container was OOM-killed before writing a report.
    OomKilled(Termination),
    /// The adapter container exited non-zero before writing a report.
    ExitedWithError(Termination),
    /// The adapter container exited 0 without writing a report.
    MissingResults(Termination),
    /// The report is there but is not valid.
    InvalidResultFormat(String),
    /// No report within the deadline, and the adapter still had not ended.
    Timeout(Duration),
    /// The Pod is being stopped (SIGTERM) and there is no report.
    Terminated,
}

/// The message length cap for what the reporter writes (the report's own limit).
const MAX_MESSAGE: usize = job_report::MAX_MESSAGE_LEN;

impl Outcome {
    /// What the adapter container's end means when it left no report: OOM-killed, exited
    /// non-zero, or exited 0 without writing one.
    pub fn ended(end: Termination) -> Outcome {
        match end {
            t if t.oom_killed() => Outcome::OomKilled(t),
            t if t.exit_code != 0 => Outcome::ExitedWithError(t),
            t => Outcome::MissingResults(t),
        }
    }

    /// Whether this is one of the reporter's own failure rows (no usable report): crash, OOM
    /// kill, missing or invalid report, timeout, SIGTERM.
    pub fn is_own_failure(&self) -> bool {
        !matches!(self, Outcome::Report(_))
    }

    /// Short name for logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Outcome::Report(_) => "Report",
            Outcome::OomKilled(_) => "AdapterOOMKilled",
            Outcome::ExitedWithError(_) => "AdapterExitedWithError",
            Outcome::MissingResults(_) => "AdapterMissingResults",
            Outcome::InvalidResultFormat(_) => "InvalidResultFormat",
            Outcome::Timeout(_) => "AdapterTimeout",
            Outcome::Terminated => "AdapterTerminated",
        }
    }

    /// The report to write: the adapter's own, or one `False` condition per `failure_types`
    /// entry saying what went wrong.
    pub fn into_report(self, failure_types: &[String]) -> Report {
        let message = match &self {
            Outcome::Report(_) => None,
            Outcome::OomKilled(t) => {
                let mut m = format!(
                    "The adapter container was killed for exceeding its memory limit (OOMKilled, exit code {}) before writing a report; raise its memory limit or look for a leak in its logs",
                    t.exit_code
                );
                if let Some(tm) = t.quoted_message() {
                    m.push_str("; its termination message: ");
                    m.push_str(&tm);
                }
                Some(m)
            }
            Outcome::ExitedWithError(t) => {
                let mut m = format!(
                    "The adapter container exited with code {}{} before writing a report",
                    t.exit_code,
                    t.reason
                        .as_deref()
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default()
                );
                if let Some(tm) = t.quoted_message() {
                    m.push_str(": ");
                    m.push_str(&tm);
                } else {
                    m.push_str("; see the adapter container's logs");
                }
                Some(m)
            }
            Outcome::MissingResults(_) => Some(
                "The adapter container exited 0 but wrote no report; check that it writes to the results path the status-reporter reads"
                    .to_owned(),
            ),
            Outcome::InvalidResultFormat(why) => Some(format!(
                "The adapter's report is invalid: {why}"
            )),
            Outcome::Timeout(waited) => Some(format!(
                "The adapter wrote no report within {}s and was still running; it may be hung, see its logs (the wait is the Job's activeDeadlineSeconds less a margin, or MAX_WAIT_TIME_SECONDS)",
                waited.as_secs()
            )),
            Outcome::Terminated => Some(
                "The pod was stopped (SIGTERM) before the adapter wrote a report; the Job was deleted, preempted or hit its deadline"
                    .to_owned(),
            ),
        };
        let reason = self.reason();
        match (self, message) {
            (Outcome::Report(report), _) => report,
            (_, message) => {
                let message = truncate(message.unwrap_or_default(), MAX_MESSAGE);
                Report::new(
                    failure_types
                        .iter()
                        .map(|t| {
                            Condition::new(
                                t.clone(),
                                ConditionStatus::False,
                                reason,
                                message.clone(),
                            )
                        })
                        .collect(),
                )
            }
        }
    }
}

/// Cuts `s` to at most `max` bytes on a character boundary, marking the cut.
fn truncate(mut s: String, max: usize) -> String {
    const MARK: &str = " …[truncated]";
    if s.len() <= max {
        return s;
    }
    let mut end = max.saturating_sub(MARK.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push_str(MARK);
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn types() -> Vec<String> {
        vec!["Applied".into(), "Available".into(), "Health".into()]
    }

    #[test]
    fn failures_mark_every_configured_type_false() {
        let r = Outcome::Timeout(Duration::from_secs(295)).into_report(&types());
        assert_eq!(r.conditions.len(), 3);
        for c in &r.conditions {
            assert_eq!(c.status, ConditionStatus::False);
            assert_eq!(c.reason, "AdapterTimeout");
            assert!(c.message.contains("295s"), "{}", c.message);
        }
        assert_eq!(job_report::validate(&r), Ok(()));
    }

    #[test]
    fn exit_message_carries_code_reason_and_termination_message() {
        let t = Termination {
            exit_code: 3,
            reason: Some("Error".into()),
            message: Some("panic: boom\n".into()),
        };
        let r = Outcome::ExitedWithError(t).into_report(&types());
        assert_eq!(
            r.conditions[0].message,
            "The adapter container exited with code 3 (Error) before writing a report: panic: boom"
        );
    }

    #[test]
    fn huge_termination_messages_are_quoted_to_4096_bytes_in_a_valid_report() {
        let t = Termination {
            exit_code: 1,
            reason: None,
            message: Some("é".repeat(40_000)),
        };
        let r = Outcome::ExitedWithError(t).into_report(&types());
        let prefix = "The adapter container exited with code 1 before writing a report: ";
        let message = &r.conditions[0].message;
        assert!(message.starts_with(prefix), "{message}");
        assert!(message.len() <= prefix.len() + job_report::MAX_TERMINATION_MESSAGE);
        assert!(
            message.ends_with("é…"),
            "cut on a character boundary and marked"
        );
        assert_eq!(job_report::validate(&r), Ok(()));
    }

    #[test]
    fn the_adapters_cause_is_quoted_on_one_line_with_credentials_redacted() {
        let t = Termination {
            exit_code: 1,
            reason: Some("Error".into()),
            message: Some(
                "cannot write the report /results/adapter-report.json: cannot write report /results/adapter-report.json: Read-only file system (os error 30)\n\u{1b}[0mtoken=s3cr3t-v4lue\n".into(),
            ),
        };
        let r = Outcome::ExitedWithError(t).into_report(&types());
        assert_eq!(
            r.conditions[0].message,
            "The adapter container exited with code 1 (Error) before writing a report: cannot write the report /results/adapter-report.json: cannot write report /results/adapter-report.json: Read-only file system (os error 30) [0mtoken=[REDACTED]"
        );
    }

    #[test]
    fn an_oom_kill_quotes_the_termination_message_when_there_is_one() {
        let with = Termination {
            exit_code: 137,
            reason: Some("OOMKilled".into()),
            message: Some(
                r#"{"timestamp":"2026-11-26T16:00:00Z","level":"INFO","message":"reading nodes","cluster_id":"019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"}"#.into(),
            ),
        };
        let r = Outcome::OomKilled(with).into_report(&types());
        assert!(
            r.conditions[0]
                .message
                .ends_with(r#"look for a leak in its logs; its termination message: {"timestamp":"2026-11-26T16:00:00Z","level":"INFO","message":"reading nodes","cluster_id":"019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"}"#),
            "{}",
            r.conditions[0].message
        );
        let without = Termination {
            exit_code: 137,
            reason: Some("OOMKilled".into()),
            message: Some(" \n".into()),
        };
        let r = Outcome::OomKilled(without).into_report(&types());
        assert!(
            r.conditions[0]
                .message
                .ends_with("look for a leak in its logs"),
            "without a message today's text stays: {}",
            r.conditions[0].message
        );
    }

    #[test]
    fn a_report_passes_through_unchanged() {
        let report = Report::new(vec![Condition::new(
            "Applied",
            ConditionStatus::True,
            "Done",
            "",
        )]);
        assert_eq!(
            Outcome::Report(report.clone()).into_report(&types()),
            report
        );
    }
}
