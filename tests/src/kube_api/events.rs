//! `events.k8s.io/v1` Events as the kit's v1.36 API server takes a create (each rule below was
//! measured there with a POST breaking it; `docs/testing.md`, "Fakes pinned to their real twins"):
//!
//! - `eventTime` is decoded as `2006-01-02T15:04:05.000000Z07:00`, exactly six fractional digits:
//!   anything else is a 400 naming the part that did not parse; an offset is stored as UTC;
//! - the 422 `Event "<name>" is invalid: …` (details without a group, kind `Event`), the checks
//!   in the server's order: `involvedObject.namespace` (an empty `regarding.namespace` outside
//!   `default` and `kube-system`), `reportingController` (required; its name part non-empty, at
//!   most 63 bytes, `[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]`), `reportingInstance`, `action`,
//!   `reason` (required, at most 128 bytes), `message` (the `note`, at most 1024 bytes), `type`
//!   (`Normal` or `Warning`); without `eventTime` only `eventTime` and `type` are checked;
//! - the answer carries `deprecatedSource: {}`, `deprecatedFirstTimestamp` and
//!   `deprecatedLastTimestamp` `null`.
//!
//! A taken name is the generic 409 `AlreadyExists` of a create (`events.events.k8s.io "<name>"
//! already exists`), checked after these, as on the real server. Not modelled: `series`,
//! `related`, the `reportingController` prefix, the deprecated fields set by a client.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Value, json};

use super::status::{ApiError, FieldError};

/// The layout the server names in a 400 for an `eventTime` it cannot parse.
const MICRO_LAYOUT: &str = "2006-01-02T15:04:05.000000Z07:00";
/// `reason`, `action`, `reportingInstance`: at most this many bytes.
const SHORT_FIELD: usize = 128;
/// `note` (`message` in the 422): at most this many bytes.
const NOTE: usize = 1024;

#[allow(
    clippy::expect_used,
    reason = "literal patterns, exercised by the unit tests below"
)]
fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).expect("literal pattern compiles")
}

static DATE_TIME: LazyLock<Regex> =
    LazyLock::new(|| compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}"));
static FRACTION: LazyLock<Regex> = LazyLock::new(|| compile(r"^\.\d{6}"));
static ZONE: LazyLock<Regex> = LazyLock::new(|| compile(r"^(Z|[+-]\d{2}:\d{2})$"));
static NAME_PART: LazyLock<Regex> =
    LazyLock::new(|| compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"));

/// Checks a POSTed Event as the server does before it stores it (400, then 422) and puts
/// `eventTime` in the form it is stored in.
pub fn check_create(object: &mut Value, namespace: &str, name: &str) -> Result<(), ApiError> {
    if let Some(time) = object.get("eventTime").and_then(Value::as_str) {
        let stored = micro_time(time)?;
        object["eventTime"] = json!(stored);
    }
    let errors = validate(object, namespace);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("Event", name, "", "Event", &errors))
    }
}

/// The fields the server adds to a created Event.
pub fn default_on_create(object: &mut Value) {
    if let Some(map) = object.as_object_mut() {
        map.entry("deprecatedSource").or_insert_with(|| json!({}));
        map.entry("deprecatedFirstTimestamp").or_insert(Value::Null);
        map.entry("deprecatedLastTimestamp").or_insert(Value::Null);
    }
}

/// `eventTime` as stored (UTC, six fractional digits), or the server's 400.
fn micro_time(time: &str) -> Result<String, ApiError> {
    let refuse = |rest: &str, element: &str| {
        ApiError::bad_request(format!(
            "Event in version \"v1\" cannot be handled as a Event: parsing time {time:?} as {MICRO_LAYOUT:?}: cannot parse {rest:?} as {element:?}"
        ))
    };
    let Some(date_time) = DATE_TIME.find(time) else {
        return Err(refuse(time, "2006"));
    };
    let rest = &time[date_time.end()..];
    let Some(fraction) = FRACTION.find(rest) else {
        return Err(refuse(rest, ".000000"));
    };
    let zone = &rest[fraction.end()..];
    if !ZONE.is_match(zone) {
        return Err(refuse(zone, "Z07:00"));
    }
    let parsed: jiff::Timestamp = time.parse().map_err(|_| refuse(time, "2006"))?;
    Ok(jiff::fmt::strtime::format("%Y-%m-%dT%H:%M:%S%.6fZ", parsed).unwrap_or_default())
}

fn text<'a>(object: &'a Value, key: &str) -> &'a str {
    object.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The 422's field errors, in the server's order.
fn validate(object: &Value, namespace: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let too_long = |field: &str, max: usize| {
        FieldError::invalid(
            field,
            Some("\"\"".to_owned()),
            &format!("can have at most {max} characters"),
        )
    };
    let event_time = object.get("eventTime").is_some_and(|t| !t.is_null());
    if event_time {
        let regarding_namespace = object
            .pointer("/regarding/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if regarding_namespace.is_empty() && !matches!(namespace, "default" | "kube-system") {
            errors.push(FieldError::invalid(
                "involvedObject.namespace",
                Some("\"\"".to_owned()),
                "does not match event.namespace",
            ));
        }
        errors.extend(reporting_controller(text(object, "reportingController")));
        for field in ["reportingInstance", "action", "reason"] {
            match text(object, field) {
                "" => errors.push(FieldError::required(field, "")),
                value if value.len() > SHORT_FIELD => errors.push(too_long(field, SHORT_FIELD)),
                _ => {}
            }
        }
        if text(object, "note").len() > NOTE {
            errors.push(too_long("message", NOTE));
        }
    } else {
        errors.push(FieldError::required("eventTime", ""));
    }
    let type_ = text(object, "type");
    if !matches!(type_, "Normal" | "Warning") {
        errors.push(FieldError::invalid(
            "type",
            Some("\"\"".to_owned()),
            &format!("has invalid value: {type_}"),
        ));
    }
    errors
}

/// `reportingController`'s errors: required, and its name part (after the last `/`) a valid one.
fn reporting_controller(value: &str) -> Vec<FieldError> {
    const FIELD: &str = "reportingController";
    let shown = Some(serde_json::to_string(value).unwrap_or_default());
    let name = value.rsplit('/').next().unwrap_or_default();
    let mut errors = Vec::new();
    if value.is_empty() {
        errors.push(FieldError::required(FIELD, ""));
    }
    if name.is_empty() {
        errors.push(FieldError::invalid(
            FIELD,
            shown.clone(),
            "name part must be non-empty",
        ));
    } else if name.len() > 63 {
        errors.push(FieldError::invalid(
            FIELD,
            shown.clone(),
            "name part must be no more than 63 bytes",
        ));
    }
    if !NAME_PART.is_match(name) {
        errors.push(FieldError::invalid(
            FIELD,
            shown,
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn event() -> Value {
        json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "pulse.base", "namespace": "ev-exp"},
            "eventTime": "2026-12-01T22:10:00.123456Z",
            "reportingController": "hyperfleet.io/status-reporter", "reportingInstance": "pulse-n7c9c",
            "action": "ReportStatus", "reason": "ControlPlaneReady", "note": "The control plane is available",
            "type": "Normal",
            "regarding": {"apiVersion": "batch/v1", "kind": "Job", "namespace": "ev-exp", "name": "pulse"}
        })
    }

    /// A change to the valid Event, and the real server's 422 message for it.
    type Case = (fn(&mut Value), &'static str);

    fn refusal(mut object: Value) -> Value {
        check_create(&mut object, "ev-exp", "pulse.base")
            .unwrap_err()
            .to_json()
    }

    /// The real server's answers (kit v1.36.2), verbatim but for the name.
    #[test]
    fn each_rule_is_refused_in_the_servers_words() {
        let mut ok = event();
        assert!(check_create(&mut ok, "ev-exp", "pulse.base").is_ok());
        let cases: Vec<Case> = vec![
            (
                |e| e["note"] = json!("a".repeat(1025)),
                "Event \"pulse.base\" is invalid: message: Invalid value: \"\": can have at most 1024 characters",
            ),
            (
                |e| e["note"] = json!("é".repeat(513)),
                "Event \"pulse.base\" is invalid: message: Invalid value: \"\": can have at most 1024 characters",
            ),
            (
                |e| e["reason"] = json!("R".repeat(129)),
                "Event \"pulse.base\" is invalid: reason: Invalid value: \"\": can have at most 128 characters",
            ),
            (
                |e| {
                    e.as_object_mut().unwrap().remove("action");
                },
                "Event \"pulse.base\" is invalid: action: Required value",
            ),
            (
                |e| {
                    e.as_object_mut().unwrap().remove("eventTime");
                },
                "Event \"pulse.base\" is invalid: eventTime: Required value",
            ),
            (
                |e| e["type"] = json!("Error"),
                "Event \"pulse.base\" is invalid: type: Invalid value: \"\": has invalid value: Error",
            ),
            (
                |e| {
                    e.as_object_mut().unwrap().remove("regarding");
                },
                "Event \"pulse.base\" is invalid: involvedObject.namespace: Invalid value: \"\": does not match event.namespace",
            ),
            (
                |e| e["reportingController"] = json!("status reporter!"),
                "Event \"pulse.base\" is invalid: reportingController: Invalid value: \"status reporter!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
        ];
        for (edit, message) in cases {
            let mut e = event();
            edit(&mut e);
            let body = refusal(e);
            assert_eq!(body["message"], message);
            assert_eq!(body["code"], 422);
            assert_eq!(body["details"]["kind"], "Event");
            assert!(body["details"].get("group").is_none(), "{body}");
        }
        let mut none = event();
        none.as_object_mut().unwrap().remove("reportingController");
        let body = refusal(none);
        let causes: Vec<&str> = body["details"]["causes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["message"].as_str().unwrap())
            .collect();
        assert_eq!(causes.len(), 3, "{body}");
        assert_eq!(causes[0], "Required value");
        assert_eq!(
            causes[1],
            "Invalid value: \"\": name part must be non-empty"
        );
    }

    #[test]
    fn the_servers_order_when_many_rules_are_broken() {
        let mut e = event();
        for key in ["action", "reason", "reportingInstance"] {
            e.as_object_mut().unwrap().remove(key);
        }
        e["type"] = json!("Bad");
        e["note"] = json!("x".repeat(1100));
        e["reportingController"] = json!("c".repeat(130));
        let body = refusal(e);
        let fields: Vec<&str> = body["details"]["causes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["field"].as_str().unwrap())
            .collect();
        assert_eq!(
            fields,
            [
                "reportingController",
                "reportingInstance",
                "action",
                "reason",
                "message",
                "type"
            ]
        );
        let mut e = event();
        e.as_object_mut().unwrap().remove("eventTime");
        e.as_object_mut().unwrap().remove("action");
        e["type"] = json!("Bad");
        let body = refusal(e);
        assert_eq!(
            body["message"],
            "Event \"pulse.base\" is invalid: [eventTime: Required value, type: Invalid value: \"\": has invalid value: Bad]"
        );
    }

    #[test]
    fn event_time_has_exactly_six_fractional_digits_and_is_stored_in_utc() {
        for (time, answer) in [
            (
                "2026-12-01T22:10:00.123456789Z",
                "Event in version \"v1\" cannot be handled as a Event: parsing time \"2026-12-01T22:10:00.123456789Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"789Z\" as \"Z07:00\"",
            ),
            (
                "2026-12-01T22:10:00Z",
                "Event in version \"v1\" cannot be handled as a Event: parsing time \"2026-12-01T22:10:00Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"Z\" as \".000000\"",
            ),
            (
                "yesterday",
                "Event in version \"v1\" cannot be handled as a Event: parsing time \"yesterday\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"yesterday\" as \"2006\"",
            ),
        ] {
            let mut e = event();
            e["eventTime"] = json!(time);
            let body = check_create(&mut e, "ev-exp", "pulse.base")
                .unwrap_err()
                .to_json();
            assert_eq!(
                (body["code"].clone(), body["message"].clone()),
                (json!(400), json!(answer))
            );
        }
        let mut e = event();
        e["eventTime"] = json!("2026-12-01T22:10:00.123456+02:00");
        check_create(&mut e, "ev-exp", "pulse.base").unwrap();
        assert_eq!(e["eventTime"], "2026-12-01T20:10:00.123456Z");
    }

    #[test]
    fn regarding_without_a_namespace_is_taken_in_default() {
        let mut e = event();
        e.as_object_mut().unwrap().remove("regarding");
        assert!(check_create(&mut e, "default", "pulse.base").is_ok());
    }
}
