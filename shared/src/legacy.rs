//! The Go status-reporter's report format, still written by older adapters:
//! `{"status":"success"|"failure","reason":"…","message":"…","details":{…}}`.

use serde_json::{Map, Value};

use crate::validate::{Violation, Walk};
use crate::{Condition, ConditionStatus, Report};

/// Reason used when a legacy report gives none.
pub(crate) const NO_REASON: &str = "NoReasonProvided";

/// Whether the object looks like a legacy report: a string `status` and no `conditions`.
pub(crate) fn is_legacy(object: &Map<String, Value>) -> bool {
    !object.contains_key("conditions") && object.get("status").is_some_and(Value::is_string)
}

/// Converts a legacy report into one condition of `condition_type`, collecting every violation.
pub(crate) fn convert(
    object: &Map<String, Value>,
    condition_type: &str,
    walk: &mut Walk,
) -> Option<Report> {
    const KNOWN: [&str; 4] = ["status", "reason", "message", "details"];
    walk.unknown_fields(object, "", &KNOWN);

    let status = match object.get("status").and_then(Value::as_str) {
        Some("success") => Some(ConditionStatus::True),
        Some("failure") => Some(ConditionStatus::False),
        Some(other) => {
            walk.push(Violation::new(
                "status",
                "enum",
                format!("must be \"success\" or \"failure\" (got {other:?})"),
            ));
            None
        }
        None => None,
    };
    let reason = walk
        .optional_string(object, "", "reason")
        .unwrap_or_default();
    let reason = if reason.is_empty() {
        NO_REASON.to_owned()
    } else {
        reason
    };
    walk.reason("reason", &reason);
    let message = walk
        .optional_string(object, "", "message")
        .unwrap_or_default();
    walk.message("message", &message);
    let data = match object.get("details") {
        None | Some(Value::Null) => None,
        Some(Value::Object(details)) => {
            walk.data_size("details", details);
            Some(details.clone())
        }
        // A scalar or list of details is kept, wrapped so `data` stays an object.
        Some(other) => {
            let mut wrapped = Map::new();
            wrapped.insert("details".to_owned(), other.clone());
            walk.data_size("details", &wrapped);
            Some(wrapped)
        }
    };
    let condition = Condition::new(condition_type, status?, reason, message);
    Some(Report {
        data,
        ..Report::new(vec![condition])
    })
}
