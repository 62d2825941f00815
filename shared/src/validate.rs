//! Parsing and validation: every violation is reported, each with its JSON path and rule.

use std::collections::HashSet;
use std::fmt;

use jiff::Timestamp;
use serde_json::{Map, Value};

use crate::names::{is_reason, qualified_name_problem};
use crate::{
    Condition, ConditionStatus, MAX_CONDITIONS, MAX_DATA_BYTES, MAX_MESSAGE_LEN, MAX_REASON_LEN,
    REPORT_VERSION, RESERVED_CONDITION_TYPES, Report, legacy,
};

/// One broken rule: where (a JSON path such as `conditions[1].status`), which rule, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Path from the report's root, `""` for the root itself.
    pub path: String,
    /// Short rule name: `required`, `type`, `enum`, `pattern`, `maxLength`, `unique`, ….
    pub rule: &'static str,
    /// What is wrong and what is expected.
    pub message: String,
}

impl Violation {
    pub(crate) fn new(path: impl Into<String>, rule: &'static str, message: String) -> Self {
        Violation {
            path: path.into(),
            rule,
            message,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "report: {} ({})", self.message, self.rule)
        } else {
            write!(f, "{}: {} ({})", self.path, self.message, self.rule)
        }
    }
}

/// Why bytes are not a usable report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Not JSON (yet): a writer that is not atomic may still be writing it.
    #[error("report is not valid JSON: {0}")]
    Syntax(String),
    /// JSON, but it breaks the contract.
    #[error("report is invalid: {}", join(.0))]
    Invalid(Vec<Violation>),
}

impl ParseError {
    /// Whether more bytes could still turn this into a valid report (a half-written file).
    pub fn may_be_incomplete(&self) -> bool {
        matches!(self, ParseError::Syntax(_))
    }
}

fn join(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Parses a report, in the v1 format or the legacy Go-reporter format. A legacy report becomes
/// one condition of type `legacy_condition_type`.
pub fn parse(bytes: &[u8], legacy_condition_type: &str) -> Result<Report, ParseError> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| ParseError::Syntax(e.to_string()))?;
    let Value::Object(object) = value else {
        return Err(ParseError::Invalid(vec![Violation::new(
            "",
            "type",
            format!("must be a JSON object (got {})", kind(&value)),
        )]));
    };
    let mut walk = Walk::default();
    let report = if legacy::is_legacy(&object) {
        legacy::convert(&object, legacy_condition_type, &mut walk)
    } else {
        v1(&object, &mut walk)
    };
    match report {
        Some(report) if walk.violations.is_empty() => Ok(report),
        _ => Err(ParseError::Invalid(walk.violations)),
    }
}

/// Checks a report built in code against the same rules [`parse`] enforces.
pub fn validate(report: &Report) -> Result<(), Vec<Violation>> {
    let value = serde_json::to_value(report).map_err(|e| {
        vec![Violation::new(
            "",
            "serialize",
            format!("cannot be serialized: {e}"),
        )]
    })?;
    let Value::Object(object) = value else {
        return Err(vec![Violation::new(
            "",
            "type",
            "must be a JSON object".to_owned(),
        )]);
    };
    let mut walk = Walk::default();
    v1(&object, &mut walk);
    if walk.violations.is_empty() {
        Ok(())
    } else {
        Err(walk.violations)
    }
}

fn v1(object: &Map<String, Value>, walk: &mut Walk) -> Option<Report> {
    const KNOWN: [&str; 5] = [
        "version",
        "adapter",
        "observed_generation",
        "conditions",
        "data",
    ];
    walk.unknown_fields(object, "", &KNOWN);

    let version = match object.get("version") {
        None | Some(Value::Null) => Some(REPORT_VERSION),
        Some(v) => match v.as_u64() {
            Some(n) if n == u64::from(REPORT_VERSION) => Some(REPORT_VERSION),
            Some(n) if n > u64::from(REPORT_VERSION) => {
                walk.push(Violation::new(
                    "version",
                    "version",
                    format!(
                        "report version {n} is newer than this reader understands ({REPORT_VERSION}); upgrade the status-reporter or write version {REPORT_VERSION}"
                    ),
                ));
                None
            }
            _ => {
                walk.push(Violation::new(
                    "version",
                    "enum",
                    format!("must be the integer {REPORT_VERSION} (got {v})"),
                ));
                None
            }
        },
    };
    let adapter = walk.optional_string(object, "", "adapter");
    let observed_generation = match object.get("observed_generation") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_i64() {
            Some(n) if n >= 1 => Some(n),
            _ => {
                walk.push(Violation::new(
                    "observed_generation",
                    "minimum",
                    format!("must be an integer >= 1 (got {v})"),
                ));
                None
            }
        },
    };
    let conditions = conditions(object.get("conditions"), walk);
    let data = match object.get("data") {
        None | Some(Value::Null) => None,
        Some(Value::Object(data)) => {
            walk.data_size("data", data);
            Some(data.clone())
        }
        Some(other) => {
            walk.push(Violation::new(
                "data",
                "type",
                format!("must be a JSON object (got {})", kind(other)),
            ));
            None
        }
    };
    Some(Report {
        version: version?,
        adapter,
        observed_generation,
        conditions: conditions?,
        data,
    })
}

fn conditions(value: Option<&Value>, walk: &mut Walk) -> Option<Vec<Condition>> {
    let list = match value {
        None | Some(Value::Null) => {
            walk.push(Violation::new(
                "conditions",
                "required",
                format!("is required: a list of 1 to {MAX_CONDITIONS} conditions"),
            ));
            return None;
        }
        Some(Value::Array(list)) => list,
        Some(other) => {
            walk.push(Violation::new(
                "conditions",
                "type",
                format!("must be a list (got {})", kind(other)),
            ));
            return None;
        }
    };
    if list.is_empty() || list.len() > MAX_CONDITIONS {
        walk.push(Violation::new(
            "conditions",
            if list.is_empty() {
                "minItems"
            } else {
                "maxItems"
            },
            format!(
                "must hold 1 to {MAX_CONDITIONS} conditions (got {})",
                list.len()
            ),
        ));
    }
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let path = format!("conditions[{i}]");
        let parsed = condition(item, &path, walk);
        if let Some(t) = item.get("type").and_then(Value::as_str)
            && !seen.insert(t)
        {
            walk.push(Violation::new(
                format!("{path}.type"),
                "unique",
                format!("type {t:?} appears more than once; each type may appear once"),
            ));
        }
        out.extend(parsed);
    }
    (out.len() == list.len()).then_some(out)
}

fn condition(item: &Value, path: &str, walk: &mut Walk) -> Option<Condition> {
    let Value::Object(object) = item else {
        walk.push(Violation::new(
            path,
            "type",
            format!("must be an object (got {})", kind(item)),
        ));
        return None;
    };
    const KNOWN: [&str; 5] = ["type", "status", "reason", "message", "lastTransitionTime"];
    walk.unknown_fields(object, path, &KNOWN);

    let type_ = walk.required_string(object, path, "type");
    if let Some(t) = &type_ {
        if let Some(problem) = qualified_name_problem(t) {
            walk.push(Violation::new(
                format!("{path}.type"),
                "qualifiedName",
                problem,
            ));
        } else if RESERVED_CONDITION_TYPES.contains(&t.as_str()) {
            walk.push(Violation::new(
                format!("{path}.type"),
                "reserved",
                format!(
                    "{t:?} is owned by the Job controller; use another type (reserved: {})",
                    RESERVED_CONDITION_TYPES.join(", ")
                ),
            ));
        }
    }
    let status = walk.required_string(object, path, "status").and_then(|s| {
        let parsed = ConditionStatus::parse(&s);
        if parsed.is_none() {
            walk.push(Violation::new(
                format!("{path}.status"),
                "enum",
                format!("must be one of True, False, Unknown (got {s:?})"),
            ));
        }
        parsed
    });
    let reason = walk.required_string(object, path, "reason");
    if let Some(r) = &reason {
        walk.reason(&format!("{path}.reason"), r);
    }
    let message = walk
        .optional_string(object, path, "message")
        .unwrap_or_default();
    walk.message(&format!("{path}.message"), &message);
    let last_transition_time = match object.get("lastTransitionTime") {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(s)) => match s.parse::<Timestamp>() {
            Ok(t) => Some(Some(t)),
            Err(_) => {
                walk.push(Violation::new(
                    format!("{path}.lastTransitionTime"),
                    "format",
                    format!("must be an RFC 3339 time such as 2026-11-25T10:30:00Z (got {s:?})"),
                ));
                None
            }
        },
        Some(other) => {
            walk.push(Violation::new(
                format!("{path}.lastTransitionTime"),
                "type",
                format!("must be an RFC 3339 string (got {})", kind(other)),
            ));
            None
        }
    };
    Some(Condition {
        type_: type_?,
        status: status?,
        reason: reason?,
        message,
        last_transition_time: last_transition_time?,
    })
}

/// Collects violations while walking a JSON document.
#[derive(Default)]
pub(crate) struct Walk {
    violations: Vec<Violation>,
}

impl Walk {
    pub(crate) fn push(&mut self, violation: Violation) {
        self.violations.push(violation);
    }

    pub(crate) fn unknown_fields(
        &mut self,
        object: &Map<String, Value>,
        path: &str,
        known: &[&str],
    ) {
        for key in object.keys().filter(|k| !known.contains(&k.as_str())) {
            self.push(Violation::new(
                join_path(path, key),
                "unknownField",
                format!("unknown field; allowed here: {}", known.join(", ")),
            ));
        }
    }

    pub(crate) fn required_string(
        &mut self,
        object: &Map<String, Value>,
        path: &str,
        key: &str,
    ) -> Option<String> {
        match object.get(key) {
            None | Some(Value::Null) => {
                self.push(Violation::new(
                    join_path(path, key),
                    "required",
                    "is required".to_owned(),
                ));
                None
            }
            Some(_) => self.optional_string(object, path, key),
        }
    }

    pub(crate) fn optional_string(
        &mut self,
        object: &Map<String, Value>,
        path: &str,
        key: &str,
    ) -> Option<String> {
        match object.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                self.push(Violation::new(
                    join_path(path, key),
                    "type",
                    format!("must be a string (got {})", kind(other)),
                ));
                None
            }
        }
    }

    pub(crate) fn reason(&mut self, path: &str, reason: &str) {
        if reason.len() > MAX_REASON_LEN {
            self.push(Violation::new(
                path,
                "maxLength",
                format!(
                    "must be at most {MAX_REASON_LEN} characters (got {})",
                    reason.len()
                ),
            ));
        } else if !is_reason(reason) {
            self.push(Violation::new(
                path,
                "pattern",
                format!(
                    "{reason:?} must be CamelCase: a letter, then letters, digits, '_', ',' or ':' (e.g. \"ControlPlaneReady\")"
                ),
            ));
        }
    }

    pub(crate) fn message(&mut self, path: &str, message: &str) {
        if message.len() > MAX_MESSAGE_LEN {
            self.push(Violation::new(
                path,
                "maxLength",
                format!(
                    "must be at most {MAX_MESSAGE_LEN} bytes (got {})",
                    message.len()
                ),
            ));
        }
    }

    pub(crate) fn data_size(&mut self, path: &str, data: &Map<String, Value>) {
        let size = serde_json::to_string(data).map_or(usize::MAX, |s| s.len());
        if size > MAX_DATA_BYTES {
            self.push(Violation::new(
                path,
                "maxSize",
                format!("must be at most {MAX_DATA_BYTES} bytes as compact JSON (got {size})"),
            ));
        }
    }
}

fn join_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn invalid(json: &str) -> Vec<Violation> {
        match parse(json.as_bytes(), "Available") {
            Err(ParseError::Invalid(v)) => v,
            other => panic!("expected violations for {json}, got {other:?}"),
        }
    }

    fn paths(v: &[Violation]) -> Vec<(&str, &str)> {
        v.iter().map(|v| (v.path.as_str(), v.rule)).collect()
    }

    const GOOD: &str = r#"{
      "version": 1, "adapter": "hypershift-controlplane", "observed_generation": 3,
      "conditions": [
        {"type": "Applied", "status": "True", "reason": "ManifestWorkCreated", "message": "sent", "lastTransitionTime": "2026-11-25T10:30:00Z"},
        {"type": "Available", "status": "False", "reason": "Provisioning", "message": "in progress"},
        {"type": "Health", "status": "True", "reason": "NoIssues"}
      ],
      "data": {"control_plane_endpoint": "", "version": ""}
    }"#;

    #[test]
    fn accepts_the_design_example() {
        let r = parse(GOOD.as_bytes(), "Available").unwrap();
        assert_eq!(r.observed_generation, Some(3));
        assert_eq!(r.conditions.len(), 3);
        assert_eq!(r.condition("Health").unwrap().message, "");
        assert_eq!(
            r.condition("Applied").unwrap().last_transition_time,
            Some("2026-11-25T10:30:00Z".parse().unwrap())
        );
        assert_eq!(validate(&r), Ok(()));
    }

    #[test]
    fn truncated_json_is_a_syntax_error_that_may_complete() {
        let err = parse(&GOOD.as_bytes()[..40], "Available").unwrap_err();
        assert!(err.may_be_incomplete(), "{err}");
        assert!(!parse(b"[]", "Available").unwrap_err().may_be_incomplete());
    }

    #[test]
    fn reports_every_violation_with_its_path() {
        let v = invalid(
            r#"{"version": 1, "extra": 1, "observed_generation": 0, "data": [],
                "conditions": [
                  {"type": "Complete", "status": "Maybe", "reason": "bad reason"},
                  {"type": "Health", "status": "True", "reason": "Ok", "lastTransitionTime": "yesterday", "foo": 1},
                  {"type": "Health", "status": "True", "reason": "Ok"},
                  {"status": "True"}
                ]}"#,
        );
        assert_eq!(
            paths(&v),
            vec![
                ("extra", "unknownField"),
                ("observed_generation", "minimum"),
                ("conditions[0].type", "reserved"),
                ("conditions[0].status", "enum"),
                ("conditions[0].reason", "pattern"),
                ("conditions[1].foo", "unknownField"),
                ("conditions[1].lastTransitionTime", "format"),
                ("conditions[2].type", "unique"),
                ("conditions[3].type", "required"),
                ("conditions[3].reason", "required"),
                ("data", "type"),
            ]
        );
        assert!(v[3].message.contains("\"Maybe\""), "{}", v[3]);
    }

    #[test]
    fn missing_or_empty_conditions() {
        assert_eq!(
            paths(&invalid(r#"{"version":1}"#)),
            vec![("conditions", "required")]
        );
        assert_eq!(
            paths(&invalid(r#"{"conditions":[]}"#)),
            vec![("conditions", "minItems")]
        );
        let many: Vec<String> = (0..17)
            .map(|i| format!(r#"{{"type":"T{i}","status":"True","reason":"R"}}"#))
            .collect();
        let json = format!(r#"{{"conditions":[{}]}}"#, many.join(","));
        assert_eq!(paths(&invalid(&json)), vec![("conditions", "maxItems")]);
    }

    #[test]
    fn newer_version_names_the_upgrade() {
        let v =
            invalid(r#"{"version":2,"conditions":[{"type":"A","status":"True","reason":"R"}]}"#);
        assert_eq!(paths(&v), vec![("version", "version")]);
        assert!(v[0].message.contains("upgrade"), "{}", v[0]);
    }

    #[test]
    fn sizes_are_bounded() {
        let long = "x".repeat(MAX_MESSAGE_LEN + 1);
        let json = format!(
            r#"{{"conditions":[{{"type":"A","status":"True","reason":"R","message":"{long}"}}],"data":{{"k":"{}"}}}}"#,
            "y".repeat(MAX_DATA_BYTES)
        );
        assert_eq!(
            paths(&invalid(&json)),
            vec![("conditions[0].message", "maxLength"), ("data", "maxSize")]
        );
    }

    #[test]
    fn root_must_be_an_object() {
        assert_eq!(paths(&invalid("42")), vec![("", "type")]);
    }

    #[test]
    fn legacy_success_and_failure() {
        let r = parse(
            br#"{"status":"success","reason":"","message":"done","details":{"k":1}}"#,
            "Ready",
        )
        .unwrap();
        assert_eq!(r.conditions.len(), 1);
        let c = &r.conditions[0];
        assert_eq!(
            (
                c.type_.as_str(),
                c.status,
                c.reason.as_str(),
                c.message.as_str()
            ),
            ("Ready", ConditionStatus::True, "NoReasonProvided", "done")
        );
        assert_eq!(r.data_json(), r#"{"k":1}"#);

        let r = parse(br#"{"status":"failure","reason":"Boom"}"#, "Available").unwrap();
        assert_eq!(r.conditions[0].status, ConditionStatus::False);
        assert_eq!(r.conditions[0].reason, "Boom");
        assert_eq!(r.data, None);

        let v = invalid(r#"{"status":"maybe","reason":"bad reason"}"#);
        assert_eq!(paths(&v), vec![("status", "enum"), ("reason", "pattern")]);
    }

    #[test]
    fn written_reports_round_trip() {
        let r = parse(GOOD.as_bytes(), "Available").unwrap();
        let json = serde_json::to_vec(&r).unwrap();
        assert_eq!(parse(&json, "Available").unwrap(), r);
    }

    mod properties {
        #![allow(clippy::unwrap_used)]
        use super::super::*;
        use proptest::prelude::*;

        fn status() -> impl Strategy<Value = ConditionStatus> {
            prop_oneof![
                Just(ConditionStatus::True),
                Just(ConditionStatus::False),
                Just(ConditionStatus::Unknown)
            ]
        }

        fn condition() -> impl Strategy<Value = Condition> {
            (
                "[A-Z][A-Za-z0-9]{0,20}",
                status(),
                "[A-Za-z][A-Za-z0-9_]{0,30}",
                ".{0,60}",
            )
                .prop_filter("reserved", |(t, ..)| {
                    !RESERVED_CONDITION_TYPES.contains(&t.as_str())
                })
                .prop_map(|(t, s, r, m)| Condition::new(t, s, r, m))
        }

        proptest! {
            /// Any report built from valid parts validates, and parses back to itself.
            #[test]
            fn valid_reports_round_trip(conditions in proptest::collection::vec(condition(), 1..=16), generation in proptest::option::of(1i64..1_000_000)) {
                let mut seen = std::collections::HashSet::new();
                let conditions: Vec<_> = conditions.into_iter().filter(|c| seen.insert(c.type_.clone())).collect();
                let report = Report { observed_generation: generation, ..Report::new(conditions) };
                prop_assert_eq!(validate(&report), Ok(()));
                let bytes = serde_json::to_vec(&report).unwrap();
                prop_assert_eq!(parse(&bytes, "Available").unwrap(), report);
            }

            /// Arbitrary bytes never panic, and anything accepted also passes `validate`.
            #[test]
            fn arbitrary_input_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
                if let Ok(report) = parse(&bytes, "Available") {
                    prop_assert_eq!(validate(&report), Ok(()));
                }
            }

            /// A status outside True/False/Unknown is always rejected at its path.
            #[test]
            fn bad_status_is_named(s in "[a-zA-Z]{0,8}") {
                prop_assume!(ConditionStatus::parse(&s).is_none());
                let json = serde_json::json!({"conditions": [{"type": "A", "status": s, "reason": "R"}]});
                match parse(json.to_string().as_bytes(), "Available") {
                    Err(ParseError::Invalid(v)) => prop_assert_eq!(v[0].path.as_str(), "conditions[0].status"),
                    other => prop_assert!(false, "{:?}", other),
                }
            }
        }
    }
}
