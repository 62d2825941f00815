//! What the HyperFleet API does with a status `PUT …/statuses` body
//! (`docs/hyperfleet-framework.md` §7.3, §7.4): the OpenAPI schema `AdapterStatusCreateRequest`
//! from the spec (with `$ref`s resolved, checked with [`crate::openapi`]) and the handler rules in
//! their order. Rules 0–0″ (auth, tenancy) and 8 (the resource exists) are outside a body check;
//! rules 9–11 and 13 depend on the server's state and are evaluated against a [`Stored`].

use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value};

use crate::openapi;

/// The API's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// 201: stored.
    Stored,
    /// 204: accepted but discarded (rules 9, 10, 11, 13), with the rule number.
    Discarded(u8),
    /// 400 with the problem's `code` and `detail`.
    Rejected { code: &'static str, detail: String },
}

/// What the server holds when the body arrives.
#[derive(Debug, Clone, Copy)]
pub struct Stored {
    /// The resource's current generation.
    pub generation: i64,
    /// This adapter's stored report: (observed_generation, last_report_time), if any.
    pub report: Option<(i64, Timestamp)>,
}

fn rejected(code: &'static str, detail: impl Into<String>) -> Answer {
    Answer::Rejected {
        code,
        detail: detail.into(),
    }
}

/// A status body that passed rules 1–7 (§7.4), decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub adapter: String,
    pub observed_generation: i64,
    /// `None` when absent or `null`: the server's time is used.
    pub observed_time: Option<Timestamp>,
    /// The condition objects as sent (each has a non-empty `type` and a valid `status`).
    pub conditions: Vec<Value>,
    /// `data` as sent (`None` when absent or `null`).
    pub data: Option<Value>,
    pub metadata: Option<Value>,
}

impl Request {
    /// The status of condition `type_`, if reported.
    pub fn status_of(&self, type_: &str) -> Option<&str> {
        self.conditions
            .iter()
            .find(|c| c["type"] == type_)
            .and_then(|c| c["status"].as_str())
    }
}

/// Rules 1–7 and 9–14 of §7.4, in order, on the raw request body.
pub fn put_status(body: &str, now: Timestamp, stored: Stored) -> Answer {
    match check_request(body, now) {
        Ok(request) => classify(&request, now, stored),
        Err(answer) => answer,
    }
}

/// Rules 1–7 of §7.4, in order: what the handler checks before it looks the resource up
/// (rule 8). `Err` is the 400.
pub fn check_request(body: &str, now: Timestamp) -> Result<Request, Answer> {
    // 3 (bad JSON) is a decode error too; checked before types since nothing decodes. The
    // handler's `json.Decoder` reads the first JSON value and ignores what follows it
    // (measured on the real API: `{"adapter": "x"} and more` gets rule 5's 400).
    let value: Value = match serde_json::Deserializer::from_str(body)
        .into_iter::<Value>()
        .next()
    {
        Some(Ok(v)) => v,
        // Go's decoder names a truncated body `unexpected EOF` (recording
        // real-api/14-status-invalid-json.json); other syntax errors keep serde's words.
        Some(Err(e)) if e.classify() == serde_json::error::Category::Eof => {
            return Err(rejected(
                "HYPERFLEET-VAL-006",
                "Invalid request format: unexpected EOF",
            ));
        }
        Some(Err(e)) => {
            return Err(rejected(
                "HYPERFLEET-VAL-006",
                format!("Invalid request format: {e}"),
            ));
        }
        // 1. empty body (or only white space)
        None => {
            return Err(rejected(
                "HYPERFLEET-VAL-006",
                "Request body is required but was empty",
            ));
        }
    };
    // `null` decodes to the zero request (then rule 4 refuses it); any other value that is not
    // an object is a type mismatch of the whole body, which Go names with an empty field
    // (measured on the real API for `[]`: `field '' must be an object`).
    let map = match value {
        Value::Object(map) => map,
        Value::Null => Map::new(),
        _ => {
            return Err(rejected("HYPERFLEET-VAL-000", "field '' must be an object"));
        }
    };
    let map = &map;
    // 2. JSON type mismatches, as Go's decoder into the request struct sees them: the first in
    // the body's order. `null` decodes to the zero value without error.
    if let Some(answer) = type_mismatch(map, &keys_in_order(body)) {
        return Err(answer);
    }
    // 3. unparsable observed_time
    let observed_time = match map.get("observed_time") {
        Some(Value::String(s)) => match s.parse::<Timestamp>() {
            Ok(t) if rfc3339_shape(s) => Some(t),
            _ => {
                return Err(rejected(
                    "HYPERFLEET-VAL-006",
                    format!("Invalid request format: {}", go_time_error(s)),
                ));
            }
        },
        _ => None,
    };
    // 4. adapter
    let adapter = map
        .get("adapter")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if adapter.is_empty() {
        return Err(rejected("HYPERFLEET-VAL-000", "adapter is required"));
    }
    // 5. observed_generation
    let generation = map
        .get("observed_generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if generation < 1 {
        return Err(rejected(
            "HYPERFLEET-VAL-000",
            "observed_generation must be >= 1",
        ));
    }
    // 6. conditions
    let empty = Vec::new();
    let conditions = map
        .get("conditions")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let mut seen = std::collections::BTreeSet::new();
    for (i, c) in conditions.iter().enumerate() {
        let type_ = c.get("type").and_then(Value::as_str).unwrap_or_default();
        if type_.is_empty() {
            return Err(rejected(
                "HYPERFLEET-VAL-000",
                format!("condition type cannot be empty at index {i}"),
            ));
        }
        if !seen.insert(type_) {
            return Err(rejected(
                "HYPERFLEET-VAL-000",
                format!("duplicate condition type '{type_}' at index {i}"),
            ));
        }
        let status = c.get("status").and_then(Value::as_str).unwrap_or_default();
        if !["True", "False", "Unknown"].contains(&status) {
            return Err(rejected(
                "HYPERFLEET-VAL-000",
                format!(
                    "invalid status value '{status}' for condition at index {i} (type: {type_}): must be 'True', 'False', or 'Unknown'"
                ),
            ));
        }
    }
    // 7. observed_time window
    if let Some(t) = observed_time {
        if t > now + SignedDuration::from_mins(5) {
            return Err(rejected(
                "HYPERFLEET-VAL-000",
                "observed_time must not be more than 5m0s in the future",
            ));
        }
        if t < now - SignedDuration::from_mins(30) {
            return Err(rejected(
                "HYPERFLEET-VAL-000",
                "observed_time must not be more than 30m0s in the past",
            ));
        }
    }
    let non_null = |key: &str| map.get(key).filter(|v| !v.is_null()).cloned();
    Ok(Request {
        adapter: adapter.to_owned(),
        observed_generation: generation,
        observed_time,
        conditions: conditions.clone(),
        data: non_null("data"),
        metadata: non_null("metadata"),
    })
}

/// Rules 9–14 of §7.4, in order, for a body that passed [`check_request`] and a resource that
/// exists (rule 8).
pub fn classify(request: &Request, now: Timestamp, stored: Stored) -> Answer {
    let generation = request.observed_generation;
    let reported_at = request.observed_time.unwrap_or(now);
    // 9–11
    if generation > stored.generation {
        return Answer::Discarded(9);
    }
    if let Some((g, last)) = stored.report {
        if g > generation {
            return Answer::Discarded(10);
        }
        if g == generation && reported_at < last {
            return Answer::Discarded(11);
        }
    }
    // 12. mandatory types
    for mandatory in ["Available", "Applied", "Health"] {
        if request.status_of(mandatory).is_none() {
            return rejected(
                "HYPERFLEET-VAL-000",
                format!(
                    "missing mandatory condition '{mandatory}': all adapters must report Available, Applied, and Health"
                ),
            );
        }
    }
    // 13
    if request.status_of("Available") == Some("Unknown") && stored.report.is_some() {
        return Answer::Discarded(13);
    }
    Answer::Stored
}

/// Go's `time.Time` JSON decoding wants RFC 3339 with a `T`, seconds and a zone.
/// Go's `time.Parse(time.RFC3339, s)` error for a value that does not parse (measured on the
/// real API: `parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday"
/// as "2006"`): the first layout element the value does not match, with the rest of the value;
/// a field out of its range says so (`month out of range`, as Go's `time` package words it).
fn go_time_error(s: &str) -> String {
    const LAYOUT: &str = "2006-01-02T15:04:05Z07:00";
    let elements: [(&str, usize); 11] = [
        ("2006", 4),
        ("-", 0),
        ("01", 2),
        ("-", 0),
        ("02", 2),
        ("T", 0),
        ("15", 2),
        (":", 0),
        ("04", 2),
        (":", 0),
        ("05", 2),
    ];
    let mut rest = s;
    let mut numbers = Vec::new();
    for (element, digits) in elements {
        let matched = if digits == 0 {
            rest.strip_prefix(element)
        } else {
            rest.get(..digits)
                .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))
                .map(|d| {
                    numbers.push(d.parse::<u32>().unwrap_or(0));
                    &rest[digits..]
                })
        };
        match matched {
            Some(r) => rest = r,
            None => {
                return format!(
                    "parsing time {s:?} as {LAYOUT:?}: cannot parse {rest:?} as {element:?}"
                );
            }
        }
    }
    let ranges = [
        ("month", 1, 12),
        ("day", 1, 31),
        ("hour", 0, 23),
        ("minute", 0, 59),
        ("second", 0, 59),
    ];
    for ((name, low, high), value) in ranges.iter().zip(numbers.iter().skip(1)) {
        if value < low || value > high {
            return format!("parsing time {s:?}: {name} out of range");
        }
    }
    format!("parsing time {s:?} as {LAYOUT:?}: cannot parse {rest:?} as \"Z07:00\"")
}

fn rfc3339_shape(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 20
        && b[10] == b'T'
        && b[4] == b'-'
        && b[7] == b'-'
        && b[13] == b':'
        && b[16] == b':'
        && (s.ends_with('Z') || s.get(19..).is_some_and(|zone| zone.contains(['+', '-'])))
}

/// The keys of the first JSON object in `body`, in the order they are written (Go's decoder
/// meets them, and reports the first mismatch, in that order; `serde_json::Map` sorts them).
/// Empty when the body does not start with an object.
pub(crate) fn keys_in_order(body: &str) -> Vec<String> {
    struct Keys(Vec<String>);
    impl<'de> serde::Deserialize<'de> for Keys {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visitor;
            impl<'de> serde::de::Visitor<'de> for Visitor {
                type Value = Keys;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Keys, A::Error> {
                    let mut keys = Vec::new();
                    while let Some(key) = map.next_key::<String>()? {
                        map.next_value::<serde::de::IgnoredAny>()?;
                        keys.push(key);
                    }
                    Ok(Keys(keys))
                }
            }
            d.deserialize_map(Visitor)
        }
    }
    match serde_json::Deserializer::from_str(body)
        .into_iter::<Keys>()
        .next()
    {
        Some(Ok(Keys(keys))) => keys,
        _ => Vec::new(),
    }
}

fn type_mismatch(map: &Map<String, Value>, order: &[String]) -> Option<Answer> {
    let mismatch = |field: &str, want: &str| {
        Some(rejected(
            "HYPERFLEET-VAL-000",
            format!("field '{field}' must be {want}"),
        ))
    };
    for field in order {
        let Some(value) = map.get(field).filter(|v| !v.is_null()) else {
            continue;
        };
        let ok = match field.as_str() {
            "adapter" => value.is_string(),
            "observed_generation" => {
                value.is_number() && value.as_i64().is_some_and(|g| i32::try_from(g).is_ok())
            }
            "observed_time" => value.is_string(),
            "conditions" => value.is_array(),
            "data" | "metadata" => value.is_object(),
            // Unknown top-level fields are ignored (non-strict decode).
            _ => true,
        };
        if !ok {
            let want = match field.as_str() {
                "observed_generation" => "a number",
                "conditions" => "an array",
                "data" | "metadata" => "an object",
                _ => "a string",
            };
            return mismatch(field, want);
        }
    }
    if let Some(Value::Array(conditions)) = map.get("conditions") {
        for c in conditions {
            let Value::Object(c) = c else {
                return mismatch("conditions", "an array of objects");
            };
            for key in ["type", "status", "reason", "message"] {
                if let Some(v) = c.get(key)
                    && !v.is_null()
                    && !v.is_string()
                {
                    return mismatch(&format!("conditions.{key}"), "a string");
                }
            }
        }
    }
    None
}

/// `#/components/schemas/<name>` of an OpenAPI document with every `$ref` inlined, in the terms
/// of [`crate::openapi`] (a Kubernetes structural-schema validator) where OpenAPI 3.0 reads
/// differently: a schema without `type` admits any value, `null` included (3.0.3's `nullable`
/// clarification: it adds null only to an explicit `type`, and a type-less schema restricts
/// nothing), so it gets `nullable: true`; a type-less or `object` schema with neither
/// `properties` nor `additionalProperties` admits any property (OpenAPI's default), so it gets
/// `x-kubernetes-preserve-unknown-fields`.
/// An object schema with `properties` keeps reporting unknown fields, which the API drops.
pub fn schema(openapi_doc: &Value, name: &str) -> Value {
    let root = &openapi_doc["components"]["schemas"][name];
    assert!(!root.is_null(), "the OpenAPI document has no schema {name}");
    let mut schema = inline(openapi_doc, root, 0);
    oas30(&mut schema);
    schema
}

/// Rewrites one schema (and the schemas inside it) as [`schema`] describes.
fn oas30(schema: &mut Value) {
    let Value::Object(m) = schema else { return };
    let type_ = m.get("type").and_then(Value::as_str).map(str::to_owned);
    if type_.is_none() {
        m.entry("nullable").or_insert(Value::Bool(true));
    }
    if matches!(type_.as_deref(), None | Some("object"))
        && !m.contains_key("properties")
        && !m.contains_key("additionalProperties")
    {
        m.insert(
            "x-kubernetes-preserve-unknown-fields".into(),
            Value::Bool(true),
        );
    }
    if let Some(Value::Object(properties)) = m.get_mut("properties") {
        properties.values_mut().for_each(oas30);
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(child @ Value::Object(_)) = m.get_mut(key) {
            oas30(child);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(children)) = m.get_mut(key) {
            children.iter_mut().for_each(oas30);
        }
    }
}

fn inline(doc: &Value, v: &Value, depth: usize) -> Value {
    assert!(depth < 32, "$ref cycle");
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                let pointer = r.strip_prefix('#').unwrap_or(r);
                let target = doc
                    .pointer(pointer)
                    .unwrap_or_else(|| panic!("unresolved $ref {r}"));
                return inline(doc, target, depth + 1);
            }
            Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), inline(doc, v, depth)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| inline(doc, v, depth)).collect()),
        other => other.clone(),
    }
}

/// Schema findings for `body` (unknown fields are findings too: the server would drop them).
pub fn schema_errors(schema: &Value, body: &Value) -> Vec<String> {
    let outcome = openapi::validate(schema, body);
    outcome
        .errors
        .iter()
        .map(|f| format!("{}: {}", f.path, f.message))
        .collect()
}

#[cfg(test)]
mod go_time_tests {
    use super::go_time_error;

    #[test]
    fn time_errors_in_gos_words() {
        assert_eq!(
            go_time_error("yesterday"),
            r#"parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006""#
        );
        assert_eq!(
            go_time_error("2026-11-28 10:00:00Z"),
            r#"parsing time "2026-11-28 10:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 10:00:00Z" as "T""#
        );
        assert_eq!(
            go_time_error("2026-13-01T00:00:00Z"),
            r#"parsing time "2026-13-01T00:00:00Z": month out of range"#
        );
    }
}
