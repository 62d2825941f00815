//! The OCM work agent's status feedback, evaluated as the agent does it on a standard hub (feature
//! gate `RawFeedbackJsonString` off, its default), for the subset of JSONPath the adapter's rules
//! use. What it follows, from upstream `open-cluster-management-io/ocm`:
//!
//! - `pkg/work/spoke/statusfeedback/reader.go` `getValueByJsonPath`: the path is parsed as
//!   `{<path>}` by `k8s.io/client-go/util/jsonpath` with `AllowMissingKeys(true)` and evaluated on
//!   the whole object; no result → no value; the first result is kept (gate off); `nil` → no value;
//!   `int64` → `Integer`, `string` → `String`, `bool` → `Boolean`; anything else (object, list,
//!   float) → the error "the type … of the value for <name> is not found";
//! - `pkg/work/spoke/controllers/statuscontroller/availablestatus_controller.go`
//!   `getFeedbackValues`: every rule is evaluated; the values found are reported even when some
//!   rule failed; any failure makes `StatusFeedbackSynced=False` reason `StatusFeedbackSyncFailed`
//!   "Sync status feedback failed with error …", else `True` `StatusFeedbackSynced`;
//! - `vendor/k8s.io/client-go/util/jsonpath/jsonpath.go`: a missing field yields nothing (allowed
//!   missing keys), a field of a non-object yields nothing, `null` is skipped; `[*]` is every
//!   element (a non-list is an error); `[N]` past the end is an error ("array index out of bounds"),
//!   missing keys allowed or not; a filter `[?(@.k=="v")]` keeps the elements whose `k` equals `v`
//!   (elements without `k` are skipped; a filter on something that is not a list, `null` included,
//!   is an error).
//!
//! Supported syntax: `.field` segments, `[*]`, `[N]` (N ≥ 0), `[?(@.field=="text")]` and
//! `[?(@=="text")]`. Anything else panics (the adapter's rules must stay in the subset).

use serde_json::{Value, json};

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    All,
    Index(usize),
    /// `@.<field>` (or `@` itself when `None`) equals the text.
    Filter(Option<String>, String),
}

fn parse(path: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            assert!(end > 0, "empty field in {path:?}");
            steps.push(Step::Field(after[..end].to_owned()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("[?(") {
            let end = after
                .find(")]")
                .unwrap_or_else(|| panic!("unclosed filter in {path:?}"));
            let (left, right) = after[..end]
                .split_once("==")
                .unwrap_or_else(|| panic!("only == filters are supported: {path:?}"));
            let text = right
                .strip_prefix('"')
                .and_then(|r| r.strip_suffix('"'))
                .unwrap_or_else(|| panic!("the filter compares with a quoted text: {path:?}"));
            let field = match left {
                "@" => None,
                other => Some(
                    other
                        .strip_prefix("@.")
                        .unwrap_or_else(|| panic!("unsupported filter {left:?} in {path:?}"))
                        .to_owned(),
                ),
            };
            steps.push(Step::Filter(field, text.to_owned()));
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after
                .find(']')
                .unwrap_or_else(|| panic!("unclosed [ in {path:?}"));
            let inside = &after[..end];
            steps.push(if inside == "*" {
                Step::All
            } else {
                Step::Index(
                    inside
                        .parse()
                        .unwrap_or_else(|_| panic!("unsupported selector [{inside}] in {path:?}")),
                )
            });
            rest = &after[end + 1..];
        } else {
            panic!("unsupported JSONPath {path:?}");
        }
    }
    steps
}

fn kind_name(value: &Value) -> &'static str {
    // The Go type the agent names in its error.
    match value {
        Value::Object(_) => "map[string]interface {}",
        Value::Array(_) => "[]interface {}",
        Value::Number(n) if !n.is_i64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Null => "<nil>",
    }
}

fn walk<'a>(input: Vec<&'a Value>, step: &Step) -> Result<Vec<&'a Value>, String> {
    let mut out = Vec::new();
    for value in input {
        match step {
            Step::Field(name) => {
                if let Some(found) = value.as_object().and_then(|o| o.get(name)) {
                    out.push(found);
                }
            }
            Step::All | Step::Index(_) => {
                if value.is_null() {
                    continue;
                }
                let Some(items) = value.as_array() else {
                    return Err(format!("{} is not array or slice", kind_name(value)));
                };
                match step {
                    Step::Index(i) if *i >= items.len() => {
                        return Err(format!(
                            "array index out of bounds: index {i}, length {}",
                            items.len()
                        ));
                    }
                    Step::Index(i) => out.push(&items[*i]),
                    _ => out.extend(items.iter()),
                }
            }
            Step::Filter(field, text) => {
                let Some(items) = value.as_array() else {
                    return Err(format!(
                        "{value} is not array or slice and cannot be filtered"
                    ));
                };
                for item in items {
                    let left = match field {
                        None => Some(item),
                        Some(f) => item.as_object().and_then(|o| o.get(f)),
                    };
                    match left {
                        None => {}
                        Some(Value::String(s)) if s == text => out.push(item),
                        Some(Value::String(_)) => {}
                        Some(other) => {
                            return Err(format!(
                                "incompatible types for comparison: {} and string",
                                kind_name(other)
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The agent's value for one rule (`{name, fieldValue}` as in a ManifestWork status), `Ok(None)`
/// when it reports none, `Err` with the agent's message when the rule fails.
pub fn value(name: &str, path: &str, object: &Value) -> Result<Option<Value>, String> {
    let mut current = vec![object];
    for step in parse(path) {
        current = walk(current, &step)
            .map_err(|e| format!("failed to find value for {name} with error: {e}"))?;
    }
    let Some(first) = current.first() else {
        return Ok(None);
    };
    let field = match first {
        Value::Null => return Ok(None),
        Value::String(s) => json!({"type": "String", "string": s}),
        Value::Bool(b) => json!({"type": "Boolean", "boolean": b}),
        Value::Number(n) if n.is_i64() => json!({"type": "Integer", "integer": n}),
        other => {
            return Err(format!(
                "the type {} of the value for {name} is not found",
                kind_name(other)
            ));
        }
    };
    Ok(Some(json!({"name": name, "fieldValue": field})))
}

/// Every rule of a manifest's `feedbackRules` (JSONPaths only) on `object`: the values found and,
/// when a rule failed, the agent's `StatusFeedbackSynced=False` message.
pub fn evaluate(rules: &Value, object: &Value) -> (Vec<Value>, Option<String>) {
    let mut values = Vec::new();
    let mut errors = Vec::new();
    for rule in rules.as_array().into_iter().flatten() {
        assert_eq!(
            rule["type"], "JSONPaths",
            "only JSONPaths rules are simulated"
        );
        for path in rule["jsonPaths"].as_array().into_iter().flatten() {
            let name = path["name"].as_str().unwrap_or_default();
            let expr = path["path"].as_str().unwrap_or_default();
            match value(name, expr, object) {
                Ok(Some(v)) => values.push(v),
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        }
    }
    let error = match errors.len() {
        0 => None,
        1 => Some(format!(
            "Sync status feedback failed with error {}",
            errors[0]
        )),
        _ => Some(format!(
            "Sync status feedback failed with error [{}]",
            errors.join(", ")
        )),
    };
    (values, error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object() -> Value {
        json!({
            "metadata": {"name": "hc", "finalizers": ["hypershift.openshift.io/finalizer", "x"]},
            "status": {
                "conditions": [
                    {"type": "Available", "status": "False", "observedGeneration": 3},
                    {"type": "Degraded", "status": "Unknown"},
                ],
                "controlPlaneEndpoint": {"host": "", "port": 0},
                "version": {"history": [{"state": "Partial", "version": "", "completionTime": null}], "availableUpdates": null},
                "ratio": 0.5,
                "empty": [],
            }
        })
    }

    fn got(path: &str) -> Result<Option<Value>, String> {
        value("v", path, &object()).map(|v| v.map(|v| v["fieldValue"].clone()))
    }

    #[test]
    fn scalars_by_filter_index_and_field() {
        assert_eq!(
            got(".status.conditions[?(@.type==\"Available\")].status"),
            Ok(Some(json!({"type": "String", "string": "False"})))
        );
        assert_eq!(
            got(".status.conditions[?(@.type==\"Available\")].observedGeneration"),
            Ok(Some(json!({"type": "Integer", "integer": 3})))
        );
        assert_eq!(
            got(".status.controlPlaneEndpoint.host"),
            Ok(Some(json!({"type": "String", "string": ""})))
        );
        assert_eq!(
            got(".metadata.finalizers[*]"),
            Ok(Some(
                json!({"type": "String", "string": "hypershift.openshift.io/finalizer"})
            )),
            "the first of several (gate off)"
        );
        assert_eq!(
            got(".metadata.finalizers[?(@==\"x\")]"),
            Ok(Some(json!({"type": "String", "string": "x"})))
        );
    }

    #[test]
    fn missing_things_give_no_value_and_non_scalars_fail() {
        assert_eq!(
            got(".status.conditions[?(@.type==\"Progressing\")].status"),
            Ok(None)
        );
        assert_eq!(
            got(".status.conditions[?(@.type==\"Degraded\")].reason"),
            Ok(None)
        );
        assert_eq!(got(".status.nope.deeper"), Ok(None));
        assert_eq!(
            got(".status.version.history[0].completionTime"),
            Ok(None),
            "null"
        );
        assert_eq!(
            got(".status.version.availableUpdates[*].version"),
            Ok(None),
            "null list"
        );
        assert_eq!(got(".status.empty[*].x"), Ok(None));
        assert!(
            got(".status")
                .unwrap_err()
                .contains("the type map[string]interface {} of the value for v is not found")
        );
        assert!(
            got(".metadata.finalizers")
                .unwrap_err()
                .contains("[]interface {}")
        );
        assert!(got(".status.ratio").unwrap_err().contains("float64"));
        assert!(
            got(".status.version.history[1].version")
                .unwrap_err()
                .contains("array index out of bounds")
        );
        assert!(
            got(".status.version.availableUpdates[?(@.x==\"y\")]")
                .unwrap_err()
                .contains("cannot be filtered")
        );
    }

    #[test]
    fn a_failing_rule_fails_the_sync_but_keeps_the_other_values() {
        let rules = json!([{"type": "JSONPaths", "jsonPaths": [
            {"name": "status", "path": ".status"},
            {"name": "host", "path": ".status.controlPlaneEndpoint.host"},
        ]}]);
        let (values, error) = evaluate(&rules, &object());
        assert_eq!(values.len(), 1);
        assert_eq!(values[0]["name"], "host");
        assert!(
            error
                .unwrap()
                .starts_with("Sync status feedback failed with error the type map")
        );
    }
}
