//! The body of an entity write (`POST /{plural}`, `PATCH /{plural}/{id}`) checked in the order
//! the real API checks it (measured on the kit's API by `real::differential_hyperfleet`; the
//! docs name the rules but not their order or words):
//!
//! 1. the body parses as one JSON object (or `null`), nothing after it — else 400
//!    `HYPERFLEET-VAL-006` `Invalid JSON in request body` (an empty body too);
//! 2. `spec`, when present, is an object (`null` is not) — else 400 `spec field must be an
//!    object`, before anything else is looked at;
//! 3. the decode into the request type, in the body's key order: a PATCH refuses a key other
//!    than `spec`, `labels`, `references` (400 `HYPERFLEET-VAL-006` `Invalid request format:
//!    json: unknown field "<key>"`), a POST ignores it; a value of the wrong JSON type is a 400
//!    `field '<key>' must be a string` / `an object` (`labels.<key>` for a label value);
//! 4. POST only: `kind` (`kind is required`, `kind must be '<Kind>'`), `name` (the entity's
//!    rules), then `spec is required`.
//!
//! What comes after (the child kind's 422, the parent, the same name, `at least one field`) is
//! the caller's.

use serde_json::{Map, Value};

use super::{Entity, Problem, name_error};
use crate::hyperfleet::api::keys_in_order;

/// A refused write: the problem and its `detail`.
pub(super) type Refusal = (Problem, String);

/// Steps 1–4 for `POST` of `entity`: the request's fields.
pub(super) fn create(body: &str, entity: &Entity) -> Result<Map<String, Value>, Refusal> {
    let request = parse(body)?;
    decode(&request, &keys_in_order(body), false)?;
    let kind = request
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if kind.is_empty() {
        return Err(validation("kind is required"));
    }
    if kind != entity.kind {
        return Err(validation(format!("kind must be '{}'", entity.kind)));
    }
    let name = request
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if let Some(detail) = name_error(name, entity.name_length) {
        return Err(validation(detail));
    }
    if !request.contains_key("spec") {
        return Err(validation("spec is required"));
    }
    Ok(request)
}

/// Steps 1–3 for `PATCH` (a strict decode): the request's fields.
pub(super) fn patch(body: &str) -> Result<Map<String, Value>, Refusal> {
    let request = parse(body)?;
    decode(&request, &keys_in_order(body), true)?;
    Ok(request)
}

fn validation(detail: impl Into<String>) -> Refusal {
    (Problem::Validation, detail.into())
}

/// Steps 1 and 2.
fn parse(body: &str) -> Result<Map<String, Value>, Refusal> {
    let invalid = || {
        (
            Problem::Malformed,
            "Invalid JSON in request body".to_owned(),
        )
    };
    let request = match serde_json::from_str::<Value>(body) {
        Ok(Value::Object(m)) => m,
        Ok(Value::Null) => Map::new(),
        Ok(_) | Err(_) => return Err(invalid()),
    };
    if request.get("spec").is_some_and(|s| !s.is_object()) {
        return Err(validation("spec field must be an object"));
    }
    Ok(request)
}

/// Step 3, the first refusal in `order` (the body's key order).
fn decode(request: &Map<String, Value>, order: &[String], strict: bool) -> Result<(), Refusal> {
    for key in order {
        let known = ["spec", "labels", "references"].contains(&key.as_str());
        if strict && !known {
            return Err((
                Problem::Malformed,
                format!("Invalid request format: json: unknown field \"{key}\""),
            ));
        }
        let Some(value) = request.get(key).filter(|v| !v.is_null()) else {
            continue;
        };
        let wrong = match key.as_str() {
            "kind" | "name" => {
                (!value.is_string()).then(|| format!("field '{key}' must be a string"))
            }
            "labels" => match value {
                // Go meets a map's entries in the body's order; these are sorted by key, which
                // differs only for a body with more than one bad label value.
                Value::Object(labels) => labels
                    .iter()
                    .find(|(_, v)| !v.is_null() && !v.is_string())
                    .map(|(k, _)| format!("field 'labels.{k}' must be a string")),
                _ => Some("field 'labels' must be an object".to_owned()),
            },
            "references" if strict => {
                (!value.is_object()).then(|| "field 'references' must be an object".to_owned())
            }
            _ => None,
        };
        if let Some(detail) = wrong {
            return Err(validation(detail));
        }
    }
    Ok(())
}
