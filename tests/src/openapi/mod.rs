//! A small validator for the OpenAPI v3 subset Kubernetes structural schemas use, to check
//! generated objects against real CRDs without an API server.
//!
//! Checked: `type` (incl. `nullable`, `x-kubernetes-int-or-string`), `required` (after applying
//! `default`s, as the API server does), `properties` and unknown fields (which the API server
//! would prune: reported as errors), `additionalProperties`, `enum`, `minLength`/`maxLength`
//! (characters), `pattern` (with RE2's meaning, [`cel::re2`]), `minimum`/`maximum`,
//! `format: int32|int64`, `minItems`/`maxItems`, `minProperties`/`maxProperties`,
//! `x-kubernetes-list-type: set|map` uniqueness, and
//! `x-kubernetes-validations` through [`cel`] (a hand-written subset: rules it cannot evaluate are
//! returned as `unevaluated`, never silently passed). Transition rules (those using `oldSelf`)
//! are not evaluated: this validates a create.

pub mod cel;

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value};

/// A problem with the object at `path` (JSON-pointer-like, e.g. `.spec.services[0].service`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    pub path: String,
    pub message: String,
}

#[derive(Debug, Default)]
pub struct Outcome {
    pub errors: Vec<Finding>,
    /// CEL rules on present nodes that the subset evaluator could not evaluate.
    pub unevaluated: Vec<Finding>,
}

impl Outcome {
    /// Whether some error is at `path` (exactly) and its message contains `needle`.
    pub fn has_error(&self, path: &str, needle: &str) -> bool {
        self.errors
            .iter()
            .any(|f| f.path == path && f.message.contains(needle))
    }
}

/// Reads a CRD file and returns the `openAPIV3Schema` of the served `version`.
pub fn crd_schema(path: &Path, version: &str) -> Value {
    let path = path.display();
    let text =
        std::fs::read_to_string(path.to_string()).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let crd: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("parse {path}: {e}"));
    crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == version)
        .unwrap_or_else(|| panic!("{path} has no version {version}"))["schema"]["openAPIV3Schema"]
        .clone()
}

/// Applies the schema's `default`s to `value` as the API server's structural defaulting does: at
/// every object the schema describes (through `properties`, `items` and
/// `additionalProperties`), each absent property with a `default` gets it (and is defaulted in
/// turn); nothing is added where the object itself is absent.
pub fn apply_defaults(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(props) = schema["properties"].as_object() {
                for (name, prop) in props {
                    if !map.contains_key(name)
                        && let Some(default) = prop.get("default")
                    {
                        map.insert(name.clone(), default.clone());
                    }
                    if let Some(child) = map.get_mut(name) {
                        apply_defaults(prop, child);
                    }
                }
            } else if schema["additionalProperties"].is_object() {
                for child in map.values_mut() {
                    apply_defaults(&schema["additionalProperties"], child);
                }
            }
        }
        Value::Array(items) if schema["items"].is_object() => {
            for item in items {
                apply_defaults(&schema["items"], item);
            }
        }
        _ => {}
    }
}

/// Validates `object` (a whole resource) against a CRD's `openAPIV3Schema`.
pub fn validate(schema: &Value, object: &Value) -> Outcome {
    let mut v = Validator {
        outcome: Outcome::default(),
    };
    v.walk(schema, object, "", true);
    v.outcome.errors.sort();
    v.outcome.errors.dedup();
    v.outcome
}

struct Validator {
    outcome: Outcome,
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl Validator {
    fn error(&mut self, path: &str, message: impl Into<String>) {
        self.outcome.errors.push(Finding {
            path: path.to_owned(),
            message: message.into(),
        });
    }

    fn walk(&mut self, schema: &Value, value: &Value, path: &str, root: bool) {
        if value.is_null() {
            if schema["nullable"] != true {
                self.error(path, "must not be null");
            }
            return;
        }
        let int_or_string = schema["x-kubernetes-int-or-string"] == true;
        let type_ok = match (schema["type"].as_str(), value) {
            _ if int_or_string => value.is_string() || value.is_i64() || value.is_u64(),
            (None, _) => true,
            (Some("object"), Value::Object(_))
            | (Some("array"), Value::Array(_))
            | (Some("string"), Value::String(_))
            | (Some("boolean"), Value::Bool(_))
            | (Some("number"), Value::Number(_)) => true,
            (Some("integer"), Value::Number(n)) => n.is_i64() || n.is_u64(),
            _ => false,
        };
        if !type_ok {
            self.error(
                path,
                format!("must be of type {}, found {}", schema["type"], kind(value)),
            );
            return;
        }
        if let Some(options) = schema["enum"].as_array()
            && !options.contains(value)
        {
            self.error(
                path,
                format!("{value} is not one of {}", Value::Array(options.clone())),
            );
        }
        // Defaults apply before validation on the API server; rules then see the defaulted object.
        let defaulted;
        let value = match value {
            Value::Object(map) => {
                defaulted = Value::Object(self.defaulted(schema, map));
                &defaulted
            }
            other => other,
        };
        match value {
            Value::String(s) => self.string(schema, s, path),
            Value::Number(_) => self.number(schema, value, path),
            Value::Array(items) => self.array(schema, items, path),
            Value::Object(map) => self.object(schema, map, path, root),
            _ => {}
        }
        self.rules(schema, value, path);
    }

    fn defaulted(&self, schema: &Value, map: &Map<String, Value>) -> Map<String, Value> {
        let mut map = map.clone();
        if let Some(props) = schema["properties"].as_object() {
            for (name, prop) in props {
                if !map.contains_key(name)
                    && let Some(default) = prop.get("default")
                {
                    map.insert(name.clone(), default.clone());
                }
            }
        }
        map
    }

    fn string(&mut self, schema: &Value, s: &str, path: &str) {
        let len = s.chars().count() as u64;
        if let Some(min) = schema["minLength"].as_u64()
            && len < min
        {
            self.error(path, format!("length {len} is less than minLength {min}"));
        }
        if let Some(max) = schema["maxLength"].as_u64()
            && len > max
        {
            self.error(path, format!("length {len} is more than maxLength {max}"));
        }
        if let Some(pattern) = schema["pattern"].as_str()
            && !cel::compile(pattern).is_match(s)
        {
            self.error(path, format!("{s:?} does not match pattern {pattern}"));
        }
    }

    fn number(&mut self, schema: &Value, value: &Value, path: &str) {
        let Some(n) = value.as_f64() else { return };
        if let Some(min) = schema["minimum"].as_f64()
            && n < min
        {
            self.error(path, format!("{n} is less than minimum {min}"));
        }
        if let Some(max) = schema["maximum"].as_f64()
            && n > max
        {
            self.error(path, format!("{n} is more than maximum {max}"));
        }
        let range = match schema["format"].as_str() {
            Some("int32") => Some((f64::from(i32::MIN), f64::from(i32::MAX))),
            _ => None,
        };
        if let Some((lo, hi)) = range
            && (n < lo || n > hi)
        {
            self.error(path, format!("{n} is out of int32 range"));
        }
    }

    fn array(&mut self, schema: &Value, items: &[Value], path: &str) {
        let len = items.len() as u64;
        if let Some(min) = schema["minItems"].as_u64()
            && len < min
        {
            self.error(path, format!("has {len} items, fewer than minItems {min}"));
        }
        if let Some(max) = schema["maxItems"].as_u64()
            && len > max
        {
            self.error(path, format!("has {len} items, more than maxItems {max}"));
        }
        match schema["x-kubernetes-list-type"].as_str() {
            Some("set") => {
                let distinct: BTreeSet<String> = items.iter().map(Value::to_string).collect();
                if distinct.len() != items.len() {
                    self.error(path, "list-type set has duplicate items");
                }
            }
            Some("map") => {
                let keys: Vec<&str> = schema["x-kubernetes-list-map-keys"]
                    .as_array()
                    .map(|k| k.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let distinct: BTreeSet<String> = items
                    .iter()
                    .map(|item| {
                        keys.iter()
                            .map(|k| item[*k].to_string())
                            .collect::<Vec<_>>()
                            .join("\u{0}")
                    })
                    .collect();
                if distinct.len() != items.len() {
                    self.error(path, format!("list-type map has duplicate keys {keys:?}"));
                }
            }
            _ => {}
        }
        if let Some(item_schema) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                self.walk(item_schema, item, &format!("{path}[{i}]"), false);
            }
        }
    }

    fn object(&mut self, schema: &Value, map: &Map<String, Value>, path: &str, root: bool) {
        if let Some(required) = schema["required"].as_array() {
            for field in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(field) {
                    self.error(&format!("{path}.{field}"), "Required value");
                }
            }
        }
        let count = map.len() as u64;
        if let Some(min) = schema["minProperties"].as_u64()
            && count < min
        {
            self.error(
                path,
                format!("has {count} properties, fewer than minProperties {min}"),
            );
        }
        if let Some(max) = schema["maxProperties"].as_u64()
            && count > max
        {
            self.error(
                path,
                format!("has {count} properties, more than maxProperties {max}"),
            );
        }
        let props = schema["properties"].as_object();
        let preserve = schema["x-kubernetes-preserve-unknown-fields"] == true;
        let embedded = schema["x-kubernetes-embedded-resource"] == true;
        for (name, child) in map {
            let child_path = format!("{path}.{name}");
            if (root || embedded) && ["apiVersion", "kind", "metadata"].contains(&name.as_str()) {
                // Type and object meta are validated by the API server itself (see `metadata`).
                continue;
            }
            if let Some(prop) = props.and_then(|p| p.get(name)) {
                self.walk(prop, child, &child_path, false);
            } else if let Some(additional) = schema.get("additionalProperties") {
                if additional.is_object() {
                    self.walk(additional, child, &child_path, false);
                }
            } else if (root || embedded)
                && ["apiVersion", "kind", "metadata"].contains(&name.as_str())
            {
                // ObjectMeta and type meta are validated by the API server itself.
            } else if !preserve {
                self.error(&child_path, "unknown field (the API server would prune it)");
            }
        }
        if (root || embedded)
            && let Some(metadata) = map.get("metadata")
        {
            self.metadata(metadata, &format!("{path}.metadata"));
        }
    }

    /// The ObjectMeta checks that matter for what we send: name, namespace, labels.
    fn metadata(&mut self, metadata: &Value, path: &str) {
        let label = cel::compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
        let subdomain =
            cel::compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");
        match metadata["name"].as_str() {
            Some(name) if name.len() <= 253 && subdomain.is_match(name) => {}
            other => self.error(
                &format!("{path}.name"),
                format!("{other:?} is not a DNS-1123 subdomain"),
            ),
        }
        if let Some(ns) = metadata.get("namespace") {
            match ns.as_str() {
                Some(ns) if ns.len() <= 63 && label.is_match(ns) => {}
                _ => self.error(
                    &format!("{path}.namespace"),
                    format!("{ns} is not a DNS-1123 label"),
                ),
            }
        }
        let value_re = cel::compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$");
        if let Some(labels) = metadata["labels"].as_object() {
            for (k, v) in labels {
                let name = k.rsplit('/').next().unwrap_or(k);
                let prefix_ok = k
                    .rsplit_once('/')
                    .is_none_or(|(p, _)| p.len() <= 253 && subdomain.is_match(p));
                let name_ok = name.len() <= 63 && value_re.is_match(name) && !name.is_empty();
                if !prefix_ok || !name_ok {
                    self.error(
                        &format!("{path}.labels"),
                        format!("invalid label key {k:?}"),
                    );
                }
                match v.as_str() {
                    Some(s) if s.len() <= 63 && value_re.is_match(s) => {}
                    _ => self.error(
                        &format!("{path}.labels.{k}"),
                        format!("invalid label value {v}"),
                    ),
                }
            }
        }
        if let Some(annotations) = metadata["annotations"].as_object()
            && annotations.values().any(|v| !v.is_string())
        {
            self.error(
                &format!("{path}.annotations"),
                "annotation values must be strings",
            );
        }
    }

    fn rules(&mut self, schema: &Value, value: &Value, path: &str) {
        let Some(rules) = schema["x-kubernetes-validations"].as_array() else {
            return;
        };
        for rule in rules {
            let text = rule["rule"].as_str().unwrap_or_default();
            let message = rule["message"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("failed rule: {text}"));
            match cel::evaluate(text, value) {
                cel::Verdict::Pass | cel::Verdict::Transition => {}
                cel::Verdict::Fail => self.error(path, message),
                cel::Verdict::Unsupported => self.outcome.unevaluated.push(Finding {
                    path: path.to_owned(),
                    message: format!("{message} [rule: {text}]"),
                }),
            }
        }
    }
}
