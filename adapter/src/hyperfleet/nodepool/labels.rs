//! Labels and taints: the GCP resource labels of the machines, and HyperFleet's Kubernetes
//! labels and taints of the nodes.

use regex::Regex;
use serde_json::{Map, Value};

use super::MAX_TAINTS;
use crate::hyperfleet::spec::{
    Checker, Invalid, Read, Rule, dns_subdomain, each, json_kind, quoted,
};

/// A NodePool taint (`spec.taints[]`), from HyperFleet's `platform.gcp.taints[]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

const RESOURCE_LABEL_KEY: Rule = Rule::new(1..=63, || regex!(r"^[a-z]([_a-z0-9-]{0,61}[a-z0-9])?$"))
    .expecting("label keys of 1–63 lowercase letters, digits, '_' or '-', starting with a letter and ending with a letter or digit");
const RESOURCE_LABEL_VALUE: Rule = RESOURCE_LABEL_KEY.expecting("label values empty or of 1–63 lowercase letters, digits, '_' or '-', starting with a letter and ending with a letter or digit");

/// `platform.gcp.resourceLabels` / `resource_labels` (`field`): an object of 1–60 GCP labels
/// (key → value), keys not starting with `goog`, values `""` or starting with a lowercase
/// letter; sorted by key.
pub(super) fn resource_labels(
    c: &mut Checker<'_>,
    field: &'static str,
) -> Read<Vec<(String, String)>> {
    let Some(labels) = c.object(field, "an object of labels {\"key\": \"value\"}")? else {
        return Ok(Vec::new());
    };
    if labels.len() > 60 {
        let n = labels.len();
        return c.refuse(field, format!("has {n} labels; at most 60 are allowed"));
    }
    sorted(each(labels, |(key, value)| {
        let key_ok = c.check(field, key, &RESOURCE_LABEL_KEY);
        let reserved = key_ok && key.starts_with("goog");
        if reserved {
            let key = quoted(key);
            c.violation(
                field,
                format!("label key {key} starts with the reserved prefix goog"),
            );
        }
        let value = string_value(c, field, key, value)?;
        let value_ok = value.is_empty() || c.check(field, value, &RESOURCE_LABEL_VALUE);
        (key_ok && !reserved && value_ok)
            .then(|| (key.clone(), value.clone()))
            .ok_or(Invalid)
    }))
}

/// HyperFleet's `platform.gcp.labels`: the nodes' Kubernetes labels (the NodePool's
/// `nodeLabels`), sorted by key.
pub(super) fn node_labels(c: &mut Checker<'_>) -> Read<Vec<(String, String)>> {
    const FIELD: &str = "platform.gcp.labels";
    let labels = c.object(FIELD, "an object of node labels {\"key\": \"value\"}")?;
    sorted(each(labels.into_iter().flatten(), |(key, value)| {
        let (key_ok, shown) = (label_key_ok(key), quoted(key));
        if !key_ok {
            c.violation(FIELD, format!("label key {shown} is not a Kubernetes label key: [prefix/]name, the name 1–63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, the prefix a DNS subdomain"));
        }
        let value = string_value(c, FIELD, key, value)?;
        if value.len() > 63 || !label_value().is_match(value) {
            let value = quoted(value);
            return c.refuse(FIELD, format!("the value of {shown} ({value}) is not a Kubernetes label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, or empty"));
        }
        key_ok.then(|| (key.clone(), value.clone())).ok_or(Invalid)
    }))
}

/// The value of label `key` in the labels at `field`, which must be a string.
fn string_value<'v>(
    c: &mut Checker<'_>,
    field: &'static str,
    key: &str,
    value: &'v Value,
) -> Read<&'v String> {
    let Value::String(value) = value else {
        let (key, found) = (quoted(key), json_kind(value));
        return c.refuse(
            field,
            format!("the value of {key} must be a string, found {found}"),
        );
    };
    Ok(value)
}

/// `labels`, sorted.
fn sorted(labels: Read<Vec<(String, String)>>) -> Read<Vec<(String, String)>> {
    let mut labels = labels?;
    labels.sort();
    Ok(labels)
}

/// A Kubernetes label value (and taint value): alphanumerics, `-`, `_`, `.`, starting and
/// ending with an alphanumeric, or empty.
fn label_value() -> &'static Regex {
    regex!(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
}

/// Kubernetes label keys: an optional DNS-subdomain prefix (≤ 253) and `/`, then a name of 1–63
/// alphanumerics, `-`, `_`, `.` starting and ending with an alphanumeric.
fn label_key_ok(key: &str) -> bool {
    let name_re = regex!(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$");
    match key.split_once('/') {
        Some((prefix, name)) => {
            !prefix.is_empty()
                && prefix.len() <= 253
                && dns_subdomain().is_match(prefix)
                && name_re.is_match(name)
        }
        None => name_re.is_match(key),
    }
}

const TAINTS: &str = "platform.gcp.taints";
const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// HyperFleet's `platform.gcp.taints`: the NodePool's `taints` (≤ 50; key, value and effect by
/// the CRD's rules, `hypershift-api.md` §3.2).
pub(super) fn taints(c: &mut Checker<'_>) -> Read<Vec<Taint>> {
    let taints = c.list(TAINTS, "a list of {key, value, effect}")?;
    let taints = taints.unwrap_or_default();
    if taints.len() > MAX_TAINTS {
        let n = taints.len();
        return c.refuse(
            TAINTS,
            format!("has {n} taints; at most {MAX_TAINTS} are allowed"),
        );
    }
    each(taints.iter().enumerate(), |(i, taint)| {
        let Value::Object(taint) = taint else {
            let found = json_kind(taint);
            let problem =
                format!("taint {i} must be an object {{key, value, effect}}, found {found}");
            return c.refuse(TAINTS, problem);
        };
        let key_re = regex!(
            r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
        );
        let mut fields = TaintFields { c, i, taint };
        let key = fields.required(
            ("key", ""),
            |k| !k.is_empty() && k.len() <= 253 && key_re.is_match(k),
            "[prefix/]name of at most 253 characters, the name 1–63 letters, digits, '-', '_' or '.' starting and ending with a letter or digit",
        );
        let value = fields.optional(
            "value",
            |v| v.len() <= 253 && label_value().is_match(v),
            "at most 253 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
        );
        let effect = fields.required(
            ("effect", ": NoSchedule, PreferNoSchedule or NoExecute"),
            |e| EFFECTS.contains(&e),
            "expected NoSchedule, PreferNoSchedule or NoExecute",
        );
        Ok(Taint {
            key: key?.to_owned(),
            value: value?.filter(|v| !v.is_empty()).map(str::to_owned),
            effect: effect?.to_owned(),
        })
    })
}

/// The fields of taint `i`, named in messages as `taint <i>: <name>`.
struct TaintFields<'c, 'a, 't> {
    c: &'c mut Checker<'a>,
    i: usize,
    taint: &'t Map<String, Value>,
}

impl<'t> TaintFields<'_, '_, 't> {
    /// The string `name`, when set, `valid` (else refused as not `expected`).
    fn optional(
        &mut self,
        name: &str,
        valid: impl Fn(&str) -> bool,
        expected: &str,
    ) -> Read<Option<&'t str>> {
        let i = self.i;
        let problem = match self.taint.get(name) {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::String(s)) if valid(s) => return Ok(Some(s)),
            Some(Value::String(s)) => format!("{} is not valid: {expected}", quoted(s)),
            Some(other) => format!("must be a string, found {}", json_kind(other)),
        };
        self.c
            .refuse(TAINTS, format!("taint {i}: {name} {problem}"))
    }

    /// [`TaintFields::optional`], required: `is required<then>` when not set.
    fn required(
        &mut self,
        (name, then): (&str, &str),
        valid: impl Fn(&str) -> bool,
        expected: &str,
    ) -> Read<&'t str> {
        let value = self.optional(name, valid, expected);
        let problem = format!("taint {}: {name} is required{then}", self.i);
        self.c.require(TAINTS, value, &problem)
    }
}
