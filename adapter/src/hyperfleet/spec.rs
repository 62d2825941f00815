//! Reading a HyperFleet spec field by field: every violation is collected (not just the first)
//! and names the field by its HyperFleet spec name (`cluster_network_cidr`,
//! `platform.gcp.zone`), so one report lists everything to fix.
//!
//! Input leniency: an optional field that is absent, `null` or `""` is treated as not set.
//! Unknown fields are ignored: a HyperFleet spec also carries fields for other adapters.

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

pub fn dns_label() -> &'static Regex {
    regex!(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
}
pub fn dns_subdomain() -> &'static Regex {
    regex!(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
}
pub fn gcp_resource_name() -> &'static Regex {
    regex!(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
}
/// A Google service account email (`GCPServiceAccountEmail`, `hypershift-api.md` §1.3).
pub fn service_account_email() -> &'static Regex {
    regex!(
        r"^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\.iam\.gserviceaccount\.com$"
    )
}
/// Field-by-field checker that collects every violation.
pub struct Checker<'a> {
    pub spec: &'a Map<String, Value>,
    pub violations: Vec<SpecViolation>,
}

/// Length bounds and pattern of one string field, with the human description of what is expected.
pub struct Rule {
    pub min: usize,
    pub max: usize,
    pub pattern: &'static Regex,
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

    pub fn violation(&mut self, field: &'static str, problem: impl Into<String>) {
        self.violations.push(SpecViolation {
            field,
            problem: problem.into(),
        });
    }

    /// The field as a string; `None` when absent, `null`, `""` or not a string (the last is a
    /// violation).
    pub fn optional(&mut self, field: &'static str) -> Option<&'a str> {
        match self.get(field) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.is_empty() => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(other) => {
                self.violation(
                    field,
                    format!("must be a string, found {}", json_kind(other)),
                );
                None
            }
        }
    }

    /// Like [`Checker::optional`], with a violation when the field is missing.
    pub fn required(&mut self, field: &'static str, expected: &str) -> Option<&'a str> {
        let present = matches!(self.get(field), Some(v) if !v.is_null() && v.as_str() != Some(""));
        let value = self.optional(field);
        if !present {
            self.violation(field, format!("is required: {expected}"));
        }
        value
    }

    /// Checks `value` against `rule`; records the first failure and returns whether it passed.
    pub fn check(&mut self, field: &'static str, value: &str, rule: &Rule) -> bool {
        let len = value.chars().count();
        if len < rule.min || len > rule.max {
            self.violation(
                field,
                format!(
                    "must be {}–{} characters long (got {len}): {}",
                    rule.min, rule.max, rule.expected
                ),
            );
            return false;
        }
        if !rule.pattern.is_match(value) {
            self.violation(
                field,
                format!("{} is not valid: expected {}", quoted(value), rule.expected),
            );
            return false;
        }
        true
    }

    pub fn required_checked(&mut self, field: &'static str, rule: &Rule) -> Option<&'a str> {
        let value = self.required(field, rule.expected)?;
        self.check(field, value, rule).then_some(value)
    }

    #[expect(
        clippy::result_unit_err,
        reason = "the violation is recorded in the checker; Err only says the value is unusable"
    )]
    pub fn optional_checked(
        &mut self,
        field: &'static str,
        rule: &Rule,
    ) -> Result<Option<&'a str>, ()> {
        match self.optional(field) {
            None => Ok(None),
            Some(value) if self.check(field, value, rule) => Ok(Some(value)),
            Some(_) => Err(()),
        }
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
