//! How report conditions and their messages are written, by every layer: one constructor that
//! bounds the message, foreign text quoted with a bound and made visible when empty, and server
//! or transport text with credentials removed.

use job_report::{Condition, ConditionStatus, MAX_MESSAGE_LEN, Report};
use serde_json::Value;

/// Longest part of a foreign (HostedCluster, NodePool, server) message quoted inside one of ours.
pub const MAX_QUOTED: usize = 2048;

/// `Applied`, `Available`, `Health`: the three conditions every HyperFleet status carries, in that
/// order.
pub type Conditions = [Condition; 3];

/// A condition whose message is bounded to what the report contract allows.
pub fn cond(type_: &str, status: ConditionStatus, reason: &str, message: String) -> Condition {
    Condition::new(type_, status, reason, truncate(message, MAX_MESSAGE_LEN))
}

/// `Health=True NoIssues` with `message`.
pub fn no_issues(message: &str) -> Condition {
    cond(
        "Health",
        ConditionStatus::True,
        "NoIssues",
        message.to_owned(),
    )
}

/// A foreign condition's reason, or `no reason` when it has none.
pub fn or_none(reason: &str) -> &str {
    if reason.is_empty() {
        "no reason"
    } else {
        reason
    }
}

/// A foreign message, bounded, with an empty one made visible.
pub fn quote(message: &str) -> String {
    if message.is_empty() {
        "(no message)".to_owned()
    } else {
        truncate(message.to_owned(), MAX_QUOTED)
    }
}

/// `s` cut to at most `max` bytes on a character boundary, ending in `…` when cut.
pub fn truncate(s: String, max: usize) -> String {
    job_report::truncate(s, max)
}

/// A server/transport error text, bounded, with credentials removed: the word after `Bearer`
/// or `Basic`, and the value of `token`, `password`, `secret`-like keys (`k=v`, `k: v`, `"k":"v"`)
/// ([`job_report::redact`], which the status-reporter uses too).
pub fn redact(detail: &str) -> String {
    truncate(job_report::redact(detail), MAX_QUOTED)
}

/// How a JSON value's type reads in a message ("a string", "an object", …).
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Replaces the condition of `condition`'s type in `report` (nothing when it has none).
pub fn replace(report: &mut Report, condition: Condition) {
    if let Some(c) = report
        .conditions
        .iter_mut()
        .find(|c| c.type_ == condition.type_)
    {
        *c = condition;
    }
}

/// Applied False, Available False, Health False, all with `reason`: the adapter refused to send
/// (invalid spec, someone else's work). Not `Unknown`: the HyperFleet API discards an `Unknown`
/// Available once the adapter has reported (rule 13), and the refusal must reach it; False at
/// the generation refused does not drop LastKnownReconciled (sticky at the last reconciled one).
pub fn refusal_conditions(reason: &str, applied: String, other: String) -> Conditions {
    [
        cond("Applied", ConditionStatus::False, reason, applied),
        cond("Available", ConditionStatus::False, reason, other.clone()),
        cond("Health", ConditionStatus::False, reason, other),
    ]
}

/// Applied False, Available Unknown, Health False, all with `reason`: the adapter could not
/// observe the management cluster (or read its input).
pub fn error_conditions(reason: &str, applied: String, other: String) -> Conditions {
    [
        cond("Applied", ConditionStatus::False, reason, applied),
        cond("Available", ConditionStatus::Unknown, reason, other.clone()),
        cond("Health", ConditionStatus::False, reason, other),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_foreign_messages_are_visible() {
        assert_eq!(quote(""), "(no message)");
        assert_eq!(or_none(""), "no reason");
        assert_eq!(or_none("AsExpected"), "AsExpected");
    }

    #[test]
    fn credentials_are_redacted() {
        let text = redact(r#"401: Bearer abc.def token=xyz "password":"p4ss" Basic dXNlcg=="#);
        for secret in ["abc.def", "xyz", "p4ss", "dXNlcg=="] {
            assert!(!text.contains(secret), "{text}");
        }
        assert!(text.contains("[REDACTED]"));
    }
}
