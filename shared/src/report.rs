//! The report types, as they appear in `adapter-report.json`.

use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One adapter report: what the adapter saw, as Kubernetes-style conditions plus free `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// Schema version; 1 when absent.
    #[serde(default = "default_version")]
    pub version: u32,
    /// Name of the adapter that wrote the report, e.g. `hypershift-controlplane`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// The cluster generation the adapter acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// 1 to 16 conditions with distinct types.
    pub conditions: Vec<Condition>,
    /// Free-form facts for the framework (never secrets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Map<String, Value>>,
}

fn default_version() -> u32 {
    crate::REPORT_VERSION
}

impl Report {
    /// A version-1 report with the given conditions and nothing else.
    pub fn new(conditions: Vec<Condition>) -> Self {
        Report {
            version: crate::REPORT_VERSION,
            adapter: None,
            observed_generation: None,
            conditions,
            data: None,
        }
    }

    /// The condition of the given type, if the report has one.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    /// `data` as compact JSON (`{}` when absent), as the Job annotation carries it.
    pub fn data_json(&self) -> String {
        match &self.data {
            Some(data) => Value::Object(data.clone()).to_string(),
            None => "{}".to_owned(),
        }
    }
}

/// `True`, `False` or `Unknown`, exactly as Kubernetes spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ConditionStatus {
    True,
    False,
    Unknown,
}

impl ConditionStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        }
    }

    /// Parses the exact wire spelling; anything else (`true`, `Maybe`, ``) is `None`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "True" => Some(ConditionStatus::True),
            "False" => Some(ConditionStatus::False),
            "Unknown" => Some(ConditionStatus::Unknown),
            _ => None,
        }
    }
}

impl From<bool> for ConditionStatus {
    fn from(value: bool) -> Self {
        if value {
            ConditionStatus::True
        } else {
            ConditionStatus::False
        }
    }
}

impl fmt::Display for ConditionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One condition of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// A Kubernetes qualified name, e.g. `Available`; not one the Job controller owns.
    #[serde(rename = "type")]
    pub type_: String,
    pub status: ConditionStatus,
    /// CamelCase machine-readable reason, e.g. `ControlPlaneReady`.
    pub reason: String,
    /// What happened and, when something is wrong, what to do about it.
    #[serde(default)]
    pub message: String,
    /// When `status` last changed; the status-reporter fills it in when absent.
    #[serde(
        rename = "lastTransitionTime",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub last_transition_time: Option<Timestamp>,
}

impl Condition {
    /// A condition without a transition time.
    pub fn new(
        type_: impl Into<String>,
        status: ConditionStatus,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Condition {
            type_: type_.into(),
            status,
            reason: reason.into(),
            message: message.into(),
            last_transition_time: None,
        }
    }
}
