//! Reading a HyperFleet spec field by field: every violation is collected (not just the first)
//! and names the field by its HyperFleet spec name (`cluster_network_cidr`,
//! `platform.gcp.zone`), so one report lists everything to fix.
//!
//! The [`Checker`]'s readers each take a field, record what is wrong with it and yield a
//! [`Read`]: the typed value, or [`Invalid`] once its violation is recorded. A validator reads
//! every field first (so every violation is collected), then builds its value with `?`.
//! [`shapes`] names the fields of a spec's two shapes.
//!
//! Input leniency: an optional field that is absent, `null` or `""` is treated as not set.
//! Unknown fields are ignored: a HyperFleet spec also carries fields for other adapters.

pub mod shapes;

use std::ops::RangeInclusive;

use regex::Regex;
use serde_json::{Map, Value};

pub use crate::message::json_kind;

/// One problem with a spec: the spec field (by its HyperFleet spec name, e.g.
/// `cluster_network_cidr`, `platform.gcp.zone`) and what is expected of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct SpecViolation {
    pub field: &'static str,
    pub problem: String,
}

/// A lowercase DNS label (RFC 1123), without the length limit.
pub fn dns_label() -> &'static Regex {
    regex!(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
}
/// A lowercase DNS subdomain (RFC 1123), without the length limit.
pub fn dns_subdomain() -> &'static Regex {
    regex!(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
}
/// A GCP resource name (RFC 1035 label), without the length limit.
pub fn gcp_resource_name() -> &'static Regex {
    regex!(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
}
/// A Google service account email (`GCPServiceAccountEmail`, `hypershift-api.md` §1.3).
pub fn service_account_email() -> &'static Regex {
    regex!(
        r"^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\.iam\.gserviceaccount\.com$"
    )
}

/// A value that could not be read: its violation is recorded in the [`Checker`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invalid;

/// What a reader yields: the value, or [`Invalid`] after recording why not.
pub type Read<T> = Result<T, Invalid>;

/// Field-by-field checker that collects every violation.
pub struct Checker<'a> {
    pub spec: &'a Map<String, Value>,
    pub violations: Vec<SpecViolation>,
}

/// Length bounds (in characters) and pattern of one string field, with the human description of
/// what is expected (a constant: the pattern is a function, e.g. `|| regex!(…)`).
pub struct Rule {
    pub len: RangeInclusive<usize>,
    pub pattern: fn() -> &'static Regex,
    pub expected: &'static str,
}

impl<'a> Checker<'a> {
    /// A checker of `spec`.
    pub fn new(spec: &'a Map<String, Value>) -> Self {
        Checker {
            spec,
            violations: Vec::new(),
        }
    }

    /// The value at `field`, a key or a dotted path into nested objects (`platform.gcp.zone`).
    pub fn get(&self, field: &str) -> Option<&'a Value> {
        let mut parts = field.split('.');
        let mut value = self.spec.get(parts.next()?)?;
        for part in parts {
            value = value.as_object()?.get(part)?;
        }
        Some(value)
    }

    /// The value at `field` unless it is absent or `null`.
    pub fn set(&self, field: &str) -> Option<&'a Value> {
        self.get(field).filter(|v| !v.is_null())
    }

    /// Whether `field` holds something other than `null` and `""`.
    pub fn given(&self, field: &str) -> bool {
        self.set(field).is_some_and(|v| v.as_str() != Some(""))
    }

    /// Records a violation of `field`.
    pub fn violation(&mut self, field: &'static str, problem: impl Into<String>) {
        self.violations.push(SpecViolation {
            field,
            problem: problem.into(),
        });
    }

    /// Records a violation of `field`: the value is [`Invalid`].
    pub fn refuse<T>(&mut self, field: &'static str, problem: impl Into<String>) -> Read<T> {
        self.violation(field, problem);
        Err(Invalid)
    }

    /// Refuses `found` at `field` for not being `expected` (`a string`, `an object {…}`).
    pub fn wrong_type<T>(&mut self, field: &'static str, expected: &str, found: &Value) -> Read<T> {
        let found = json_kind(found);
        self.refuse(field, format!("must be {expected}, found {found}"))
    }

    /// The field as a string; `None` when absent, `null`, `""` or not a string (the last is a
    /// violation, and the field then reads as not set).
    pub fn optional(&mut self, field: &'static str) -> Option<&'a str> {
        match self.get(field) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.is_empty() => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(other) => self.wrong_type(field, "a string", other).ok(),
        }
    }

    /// Like [`Checker::optional`], with a violation when the field is missing.
    pub fn required(&mut self, field: &'static str, expected: &str) -> Read<&'a str> {
        let present = self.given(field);
        let value = self.optional(field);
        if !present {
            self.violation(field, format!("is required: {expected}"));
        }
        value.ok_or(Invalid)
    }

    /// Checks `value` against `rule`; records the first failure and returns whether it passed.
    pub fn check(&mut self, field: &'static str, value: &str, rule: &Rule) -> bool {
        let (len, expected) = (value.chars().count(), rule.expected);
        let problem = if !rule.len.contains(&len) {
            let (min, max) = rule.bounds();
            format!("must be {min}–{max} characters long (got {len}): {expected}")
        } else if !(rule.pattern)().is_match(value) {
            format!("{} is not valid: expected {expected}", quoted(value))
        } else {
            return true;
        };
        self.violation(field, problem);
        false
    }

    /// `value` when it passes `rule`.
    pub fn checked<'v>(
        &mut self,
        field: &'static str,
        value: &'v str,
        rule: &Rule,
    ) -> Read<&'v str> {
        self.check(field, value, rule)
            .then_some(value)
            .ok_or(Invalid)
    }

    /// A required string field that passes `rule`.
    pub fn required_checked(&mut self, field: &'static str, rule: &Rule) -> Read<&'a str> {
        let value = self.required(field, rule.expected)?;
        self.checked(field, value, rule)
    }

    /// An optional string field ([`Checker::optional`]) that, when set, passes `rule`.
    pub fn optional_checked(&mut self, field: &'static str, rule: &Rule) -> Read<Option<&'a str>> {
        self.optional(field)
            .map(|value| self.checked(field, value, rule))
            .transpose()
    }

    /// An optional string field ([`Checker::optional`]) that, when set, is one of `choices`;
    /// another value is refused as `"<value>" <problem>`.
    pub fn one_of<T: Copy>(
        &mut self,
        field: &'static str,
        choices: &[(&str, T)],
        problem: &str,
    ) -> Read<Option<T>> {
        let Some(value) = self.optional(field) else {
            return Ok(None);
        };
        match choose(choices, value) {
            Some(choice) => Ok(Some(choice)),
            None => self.refuse(field, format!("{} {problem}", quoted(value))),
        }
    }

    /// An optional string field ([`Checker::optional`]) that, when set, is one of `names`;
    /// another value is refused as `"<value>" <problem>`.
    pub fn one_of_names(
        &mut self,
        field: &'static str,
        names: &[&'static str],
        problem: &str,
    ) -> Read<Option<&'static str>> {
        let choices: Vec<(&str, &'static str)> = names.iter().map(|n| (*n, *n)).collect();
        self.one_of(field, &choices, problem)
    }

    /// The value of an optional field, required: `problem` when it is not set.
    pub fn require<T>(
        &mut self,
        field: &'static str,
        value: Read<Option<T>>,
        problem: &str,
    ) -> Read<T> {
        match value? {
            Some(value) => Ok(value),
            None => self.refuse(field, problem),
        }
    }

    /// An optional integer field in `[min, max]` (`unit` follows the bounds in the message, e.g.
    /// ` GB`).
    pub fn integer(
        &mut self,
        field: &'static str,
        (min, max): (i64, i64),
        unit: &str,
    ) -> Read<Option<i64>> {
        let Some(value) = self.set(field) else {
            return Ok(None);
        };
        let problem = match value.as_i64() {
            Some(n) if (min..=max).contains(&n) => return Ok(Some(n)),
            Some(n) => format!("must be between {min} and {max}{unit} (got {n})"),
            None => format!("must be a whole number, found {}", describe(value)),
        };
        self.refuse(field, problem)
    }

    /// An optional boolean field.
    pub fn boolean(&mut self, field: &'static str) -> Read<Option<bool>> {
        self.typed(field, "true or false", Value::as_bool)
    }

    /// An optional list field; another type is refused as not `expected` (`a list of …`).
    pub fn list(&mut self, field: &'static str, expected: &str) -> Read<Option<&'a [Value]>> {
        self.typed(field, expected, |v| v.as_array().map(Vec::as_slice))
    }

    /// An optional object field; another type is refused as not `expected` (`an object …`).
    pub fn object(
        &mut self,
        field: &'static str,
        expected: &str,
    ) -> Read<Option<&'a Map<String, Value>>> {
        self.typed(field, expected, Value::as_object)
    }

    /// An optional field of the type `as_type` reads; another type is refused as not `expected`.
    fn typed<T>(
        &mut self,
        field: &'static str,
        expected: &str,
        as_type: impl FnOnce(&'a Value) -> Option<T>,
    ) -> Read<Option<T>> {
        let Some(value) = self.set(field) else {
            return Ok(None);
        };
        match as_type(value) {
            Some(typed) => Ok(Some(typed)),
            None => self.wrong_type(field, expected, value),
        }
    }
}

impl Checker<'_> {
    /// The value read, when no violation was recorded; else every violation.
    pub fn finish<T>(self, value: Read<T>) -> Result<T, Vec<SpecViolation>> {
        if !self.violations.is_empty() {
            return Err(self.violations);
        }
        // Every `Invalid` comes with a violation; this is a safety net, not a path.
        value.map_err(|Invalid| {
            vec![SpecViolation {
                field: "spec",
                problem: "could not be validated (internal error); please report this".to_owned(),
            }]
        })
    }
}

/// Reads every item with `read` (each records its own violations, so all are read): the
/// values, or [`Invalid`] when any item was.
pub fn each<I, T>(
    items: impl IntoIterator<Item = I>,
    mut read: impl FnMut(I) -> Read<T>,
) -> Read<Vec<T>> {
    let mut values = Vec::new();
    let mut valid = true;
    for item in items {
        match read(item) {
            Ok(value) => values.push(value),
            Err(Invalid) => valid = false,
        }
    }
    valid.then_some(values).ok_or(Invalid)
}

impl Rule {
    /// A rule of `len` characters matching `pattern`, expecting nothing yet (see
    /// [`Rule::expecting`]).
    pub const fn new(len: RangeInclusive<usize>, pattern: fn() -> &'static Regex) -> Rule {
        Rule {
            len,
            pattern,
            expected: "",
        }
    }

    /// The rule, with the human description of what is expected.
    pub const fn expecting(self, expected: &'static str) -> Rule {
        Rule { expected, ..self }
    }

    /// The length bounds, for messages.
    pub fn bounds(&self) -> (usize, usize) {
        (*self.len.start(), *self.len.end())
    }
}

/// The choice named `value`.
pub fn choose<T: Copy>(choices: &[(&str, T)], value: &str) -> Option<T> {
    choices
        .iter()
        .find(|(name, _)| *name == value)
        .map(|(_, choice)| *choice)
}

/// A JSON value as a message names it: numbers with their value, else their kind.
fn describe(v: &Value) -> String {
    match v {
        Value::Number(n) => format!("the number {n}"),
        other => json_kind(other).to_owned(),
    }
}

/// `"value"`, truncated so a hostile input cannot flood the report.
pub fn quoted(value: &str) -> String {
    const MAX: usize = 100;
    if value.chars().count() <= MAX {
        format!("{value:?}")
    } else {
        let head: String = value.chars().take(MAX).collect();
        format!("{head:?}…")
    }
}
