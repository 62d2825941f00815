//! What the work agent reports about a manifest it applied, read the same way for every object
//! (HostedCluster, NodePool): whether its fed-back status may be used at all, what could not be
//! applied, and how far its deletion is.
//!
//! The agent keeps the last feedback of an object that is gone or whose sync fails
//! (`fixtures/maestro/real/08-*`), so a status value alone proves nothing: it is used only while the
//! manifest's `Available` is `True` and the value is not older than that report.

use serde_json::Value;

use super::manifestwork::{
    DELETION_TIMESTAMP_FEEDBACK_NAME, FINALIZERS_FEEDBACK_NAME, GENERATION_FEEDBACK_NAME,
};
use super::observed::AppliedObject;
use super::{ExistingWork, ManifestStatus, WorkCondition};
use crate::message::{or_none, quote};

/// Whether an object's fed-back status may be used, from what the agent says about its manifest.
#[derive(Debug)]
pub enum Feedback<'a> {
    /// The agent says the object is available and the feedback is not older than that.
    Fresh(&'a Value),
    /// No status value (or no manifest status) yet.
    None,
    /// A value is there but must not be used; the text says why.
    Ignored(String),
    /// Manifest `Available=False`: the object is not on the management cluster.
    ResourceNotAvailable(&'a WorkCondition),
    /// Manifest `StatusFeedbackSynced=False`.
    NotSynced(&'a WorkCondition),
}

/// Reads the manifest of an object of kind `kind` (e.g. `HostedCluster`, for messages): its
/// feedback value `value_name` and its `Available` / `StatusFeedbackSynced` conditions.
pub fn feedback_of<'a>(
    manifest: Option<&'a ManifestStatus>,
    kind: &str,
    value_name: &str,
) -> Feedback<'a> {
    let Some(manifest) = manifest else {
        return Feedback::None;
    };
    let available = manifest.condition("Available");
    if let Some(a) = available.filter(|a| a.status == "False") {
        return Feedback::ResourceNotAvailable(a);
    }
    let synced = manifest.condition("StatusFeedbackSynced");
    if let Some(s) = synced.filter(|s| s.status == "False") {
        return Feedback::NotSynced(s);
    }
    let Some(value) = manifest.values.get(value_name) else {
        return Feedback::None;
    };
    let Some(available) = available.filter(|a| a.status == "True") else {
        return Feedback::Ignored(format!(
            "the work agent has not reported the {kind} as available (manifest Available={}), so the status fed back earlier is not used",
            available.map_or("<not reported>", |a| a.status.as_str())
        ));
    };
    if let Some(synced) = synced
        && let (Ok(available_at), Ok(synced_at)) = (
            available.last_transition_time.parse::<jiff::Timestamp>(),
            synced.last_transition_time.parse::<jiff::Timestamp>(),
        )
        && synced_at < available_at
    {
        return Feedback::Ignored(format!(
            "the fed-back {kind} status (last changed {}) is older than the agent's report that the {kind} became available ({}), so it is not used",
            synced.last_transition_time, available.last_transition_time
        ));
    }
    Feedback::Fresh(value)
}

/// What the agent reports of the object it applied besides its status: its `metadata.generation`
/// (the [`GENERATION_FEEDBACK_NAME`] value: an integer, or a string holding one) and when it last
/// applied a change (the manifest's `Applied` transition).
pub fn applied_object(manifest: Option<&ManifestStatus>) -> AppliedObject<'_> {
    let Some(manifest) = manifest else {
        return AppliedObject::default();
    };
    let generation = match manifest.values.get(GENERATION_FEEDBACK_NAME) {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    };
    let applied_at = manifest
        .condition("Applied")
        .filter(|c| c.status == "True" && !c.last_transition_time.is_empty())
        .map(|c| c.last_transition_time.as_str());
    AppliedObject {
        generation,
        applied_at,
    }
}

/// Every manifest the agent could not apply, as `Kind namespace/name (Reason): message`; when no
/// manifest says so but the work's `Applied` is `False`, the work's reason and message.
pub fn apply_failures(existing: &ExistingWork) -> Vec<String> {
    let failure = |what: &str, applied: &WorkCondition| {
        let (reason, message) = (or_none(&applied.reason), quote(&applied.message));
        format!("{what} ({reason}): {message}")
    };
    let mut failures: Vec<String> = existing
        .manifests
        .iter()
        .filter_map(|m| {
            let applied = m.condition("Applied").filter(|c| c.status == "False")?;
            let r = &m.resource;
            let what = if r.kind.is_empty() {
                &r.resource
            } else {
                &r.kind
            };
            let place = if r.namespace.is_empty() {
                r.name.clone()
            } else {
                format!("{}/{}", r.namespace, r.name)
            };
            Some(failure(&format!("{what} {place}"), applied))
        })
        .collect();
    if failures.is_empty()
        && let Some(applied) = existing
            .condition("Applied")
            .filter(|c| c.status == "False")
    {
        failures.push(failure("ManifestWork", applied));
    }
    failures
}

/// What the work agent reports about an object's deletion, from its manifest's feedback values
/// ([`DELETION_TIMESTAMP_FEEDBACK_NAME`], [`FINALIZERS_FEEDBACK_NAME`]) and conditions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ObjectDeletion {
    /// `.metadata.deletionTimestamp`, once the agent has fed it back.
    pub deletion_timestamp: Option<String>,
    /// `.metadata.finalizers` as fed back (empty when none or not reported).
    pub finalizers: Vec<String>,
    /// The agent reports the manifest `Available=False`: the object is gone from the management
    /// cluster, the work itself is still being removed.
    pub gone: bool,
}

impl ObjectDeletion {
    /// Reads the deletion timestamp (a string) and the finalizers (an array of strings, a string
    /// holding that JSON, or one finalizer as a string: the hub's first) fed back for `manifest`.
    pub fn from_manifest(manifest: Option<&ManifestStatus>) -> ObjectDeletion {
        let Some(manifest) = manifest else {
            return ObjectDeletion::default();
        };
        let deletion_timestamp = manifest
            .values
            .get(DELETION_TIMESTAMP_FEEDBACK_NAME)
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        let strings = |list: &[Value]| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        let finalizers = match manifest.values.get(FINALIZERS_FEEDBACK_NAME) {
            Some(Value::Array(list)) => strings(list),
            // A string holding the list's JSON, or (the hub's `.metadata.finalizers[*]`) one finalizer.
            Some(Value::String(raw)) => match serde_json::from_str::<Value>(raw) {
                Ok(Value::Array(list)) => strings(&list),
                _ if raw.is_empty() => Vec::new(),
                _ => vec![raw.clone()],
            },
            _ => Vec::new(),
        };
        let gone = manifest
            .condition("Available")
            .is_some_and(|c| c.status == "False");
        ObjectDeletion {
            deletion_timestamp,
            finalizers,
            gone,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn with_finalizers(value: Value) -> ManifestStatus {
        ManifestStatus {
            values: [(FINALIZERS_FEEDBACK_NAME.to_owned(), value)]
                .into_iter()
                .collect(),
            ..ManifestStatus::default()
        }
    }

    #[test]
    fn finalizers_are_read_as_a_list_its_json_or_the_hubs_first_one() {
        let read = |v: Value| ObjectDeletion::from_manifest(Some(&with_finalizers(v))).finalizers;
        let both = [
            "hypershift.openshift.io/finalizer",
            "hypershift.io/gcp-oidc-discovery",
        ];
        assert_eq!(read(json!(both)), both);
        assert_eq!(read(json!(json!(both).to_string())), both);
        assert_eq!(
            read(json!("hypershift.openshift.io/finalizer")),
            ["hypershift.openshift.io/finalizer"],
            "the hub's `.metadata.finalizers[*]`: one string"
        );
        assert!(read(json!("")).is_empty());
        assert!(ObjectDeletion::from_manifest(None).finalizers.is_empty());
    }
}

/// Pins what the agent's reports are read as: [`feedback_of`] over a grid of manifest conditions
/// and times, [`applied_object`], [`apply_failures`] and [`ObjectDeletion`] (also over the
/// `work_feedback` fuzz corpus).
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod pinned {
    use std::fmt::Write as _;

    use serde_json::json;

    use super::*;
    use crate::work::ResourceIdentity;
    use crate::work::maestro::error::pin_inputs::corpus;

    fn condition(type_: &str, status: &str, time: &str) -> WorkCondition {
        WorkCondition {
            type_: type_.to_owned(),
            status: status.to_owned(),
            reason: format!("{type_}Reason"),
            message: format!("{type_} says \"{status}\"\nsecond line"),
            observed_generation: Some(2),
            last_transition_time: time.to_owned(),
        }
    }

    fn manifest(conditions: Vec<WorkCondition>, values: &[(&str, Value)]) -> ManifestStatus {
        ManifestStatus {
            resource: ResourceIdentity::default(),
            conditions,
            values: values
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        }
    }

    #[test]
    fn feedback_grid() {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "none: {:?}",
            feedback_of(None, "HostedCluster", "status")
        );
        let times = [
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:00:01Z",
            "not a time",
            "",
        ];
        for available in [None, Some("True"), Some("False"), Some("Unknown")] {
            for synced in [None, Some("True"), Some("False")] {
                for (at, st) in [(0, 0), (1, 0), (0, 1), (2, 0), (0, 3)] {
                    for value in [None, Some(json!({"x": 1}))] {
                        let mut conditions = Vec::new();
                        if let Some(a) = available {
                            conditions.push(condition("Available", a, times[at]));
                        }
                        if let Some(s) = synced {
                            conditions.push(condition("StatusFeedbackSynced", s, times[st]));
                        }
                        let values: Vec<(&str, Value)> =
                            value.iter().map(|v| ("status", v.clone())).collect();
                        let m = manifest(conditions, &values);
                        let _ = writeln!(
                            out,
                            "{available:?} {synced:?} {at}/{st} {}: {:?}",
                            value.is_some(),
                            feedback_of(Some(&m), "NodePool", "status")
                        );
                    }
                }
            }
        }
        insta::assert_snapshot!("feedback_grid", out);
    }

    #[test]
    fn applied_failures_and_deletion() {
        let mut out = String::new();
        let _ = writeln!(out, "applied none: {:?}", applied_object(None));
        for generation in [
            json!(3),
            json!("4"),
            json!(" 5 "),
            json!("x"),
            json!(1.5),
            json!(true),
            json!(null),
        ] {
            for applied in [
                None,
                Some(("True", "t")),
                Some(("True", "")),
                Some(("False", "t")),
            ] {
                let conditions = applied
                    .map(|(s, t)| condition("Applied", s, t))
                    .into_iter()
                    .collect();
                let m = manifest(
                    conditions,
                    &[(GENERATION_FEEDBACK_NAME, generation.clone())],
                );
                let _ = writeln!(
                    out,
                    "applied {generation} {applied:?}: {:?}",
                    applied_object(Some(&m))
                );
            }
        }
        let resource = |kind: &str, resource: &str, namespace: &str| ResourceIdentity {
            kind: kind.to_owned(),
            resource: resource.to_owned(),
            namespace: namespace.to_owned(),
            name: "n".to_owned(),
            ..ResourceIdentity::default()
        };
        let failed = |r: ResourceIdentity, reason: &str| ManifestStatus {
            resource: r,
            conditions: vec![WorkCondition {
                reason: reason.to_owned(),
                ..condition("Applied", "False", "t")
            }],
            values: BTreeMap::new(),
        };
        let works = [
            ExistingWork::default(),
            ExistingWork {
                conditions: vec![condition("Applied", "False", "t")],
                ..ExistingWork::default()
            },
            ExistingWork {
                conditions: vec![WorkCondition {
                    reason: String::new(),
                    message: String::new(),
                    ..condition("Applied", "False", "t")
                }],
                manifests: vec![manifest(vec![condition("Applied", "True", "t")], &[])],
                ..ExistingWork::default()
            },
            ExistingWork {
                conditions: vec![condition("Applied", "False", "t")],
                manifests: vec![
                    failed(
                        resource("HostedCluster", "hostedclusters", "clusters"),
                        "Denied",
                    ),
                    failed(resource("", "namespaces", ""), ""),
                    failed(resource("", "", "ns"), "R"),
                    manifest(vec![condition("Applied", "Unknown", "t")], &[]),
                ],
                ..ExistingWork::default()
            },
        ];
        for work in &works {
            let _ = writeln!(out, "failures: {:?}", apply_failures(work));
        }
        let _ = writeln!(
            out,
            "deletion none: {:?}",
            ObjectDeletion::from_manifest(None)
        );
        for (finalizers, timestamp, available) in [
            (json!(["a", "b"]), json!("t"), Some("False")),
            (json!("[\"a\",5]"), json!(""), Some("True")),
            (json!("{\"a\":1}"), json!(5), None),
            (json!(""), json!(null), Some("Unknown")),
            (json!("one"), json!("t"), None),
            (json!(7), json!("t"), None),
            (json!([1, "x", null]), json!("t"), None),
        ] {
            let conditions = available
                .map(|a| condition("Available", a, "t"))
                .into_iter()
                .collect();
            let m = manifest(
                conditions,
                &[
                    (FINALIZERS_FEEDBACK_NAME, finalizers.clone()),
                    (DELETION_TIMESTAMP_FEEDBACK_NAME, timestamp.clone()),
                ],
            );
            let _ = writeln!(
                out,
                "deletion {finalizers} {timestamp} {available:?}: {:?}",
                ObjectDeletion::from_manifest(Some(&m))
            );
        }
        for (name, data) in corpus("work_feedback") {
            let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(&data) else {
                continue;
            };
            let m = ManifestStatus {
                values: map.into_iter().collect(),
                ..ManifestStatus::default()
            };
            let _ = writeln!(
                out,
                "[{name}] {:?} {:?} {:?}",
                ObjectDeletion::from_manifest(Some(&m)),
                applied_object(Some(&m)),
                feedback_of(Some(&m), "HostedCluster", "status")
            );
        }
        insta::assert_snapshot!("applied_failures_and_deletion", out);
    }

    use std::collections::BTreeMap;
}
