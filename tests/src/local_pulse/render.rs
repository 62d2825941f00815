//! What the runner prints: the Job as `kubectl get job -o yaml` shows its metadata and
//! `status.conditions`, a one-line summary, and the check against the expected conditions.

use serde_json::{Map, Value, json};

use super::scenario::Expected;

/// The parts of a stored Job a newcomer needs: `apiVersion`, `kind`, `metadata` (name,
/// namespace, labels, annotations) and `status.conditions`, keys sorted as kubectl sorts them.
pub fn job_view(job: &Value) -> Value {
    let mut metadata = Map::new();
    for key in ["name", "namespace", "labels", "annotations"] {
        if let Some(v) = job["metadata"].get(key) {
            metadata.insert(key.to_owned(), v.clone());
        }
    }
    let conditions = job["status"]["conditions"].clone();
    sorted(&json!({
        "apiVersion": job["apiVersion"],
        "kind": job["kind"],
        "metadata": metadata,
        "status": {"conditions": if conditions.is_null() { json!([]) } else { conditions }},
    }))
}

/// `value` with every object's keys in byte order (serde_json may preserve insertion order).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// `value` as YAML, each line indented by `indent` spaces.
pub fn yaml(value: &Value, indent: usize) -> String {
    let text = serde_saphyr::to_string(value)
        .unwrap_or_else(|e| format!("# cannot render as YAML ({e}); JSON:\n{value:#}\n"));
    let pad = " ".repeat(indent);
    text.lines().map(|line| format!("{pad}{line}\n")).collect()
}

/// Condition `type_` on the Job.
fn find_condition<'a>(job: &'a Value, type_: &str) -> Option<&'a Value> {
    job["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// `(status, reason)` of condition `type_` on the Job.
pub fn condition(job: &Value, type_: &str) -> Option<(String, String)> {
    find_condition(job, type_).map(|c| {
        let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
        (s("status"), s("reason"))
    })
}

/// `Applied = True/ManifestWorkCreated   Available = False/Provisioning   Health = True/NoIssues`
/// (`-` for a condition the Job does not have), then `   Finalized = …` when the Job has one.
pub fn summary(job: &Value) -> String {
    let mut parts: Vec<String> = ["Applied", "Available", "Health"]
        .iter()
        .map(|t| {
            let value = condition(job, t)
                .map(|(status, reason)| format!("{status}/{reason}"))
                .unwrap_or_else(|| "-".to_owned());
            format!("{t} = {value}")
        })
        .collect();
    if let Some((status, reason)) = condition(job, "Finalized") {
        parts.push(format!("Finalized = {status}/{reason}"));
    }
    parts.join("   ")
}

/// Differences between the Job and what the pulse expects (conditions, `report-data` values,
/// text each `(type, text)` condition's message must contain); empty when it matches.
pub fn mismatches(
    job: &Value,
    expected: &Expected,
    data: &[(&str, String)],
    messages: &[(&str, String)],
) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |type_: &str, want: Option<(&str, &str)>| {
        let got = condition(job, type_);
        let same = match (&got, want) {
            (None, None) => true,
            (Some((s, r)), Some((ws, wr))) => s == ws && r == wr,
            _ => false,
        };
        if !same {
            let show = |c: Option<(&str, &str)>| {
                c.map(|(s, r)| format!("{s}/{r}"))
                    .unwrap_or_else(|| "(none)".to_owned())
            };
            out.push(format!(
                "{type_}: expected {}, got {}",
                show(want),
                show(got.as_ref().map(|(s, r)| (s.as_str(), r.as_str())))
            ));
        }
    };
    check("Applied", expected.applied);
    check("Available", Some(expected.available));
    check("Health", Some(expected.health));
    check("Finalized", expected.finalized);
    if !data.is_empty() {
        let annotation = job["metadata"]["annotations"]["hyperfleet.io/report-data"]
            .as_str()
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
            .unwrap_or(Value::Null);
        for (key, want) in data {
            // A string as itself, a number, `null` or a list as its JSON text (as the
            // `data.hyperfleet.io/<key>` annotation carries it).
            let got = match annotation.get(*key) {
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => Some(other.to_string()),
                None => None,
            };
            if got.as_deref() != Some(want.as_str()) {
                out.push(format!(
                    "report-data {key}: expected {want:?}, got {}",
                    annotation[*key]
                ));
            }
        }
    }
    for (type_, text) in messages {
        let message = find_condition(job, type_)
            .and_then(|c| c["message"].as_str())
            .unwrap_or_default();
        if !message.contains(text.as_str()) {
            out.push(format!(
                "{type_} message: expected it to contain {text:?}, got {message:?}"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_keeps_metadata_and_conditions_sorted() {
        let job = json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "j", "uid": "u", "labels": {"b": "1", "a": "2"}},
            "spec": {"backoffLimit": 0},
            "status": {"active": 1, "conditions": [{"type": "Health", "status": "True", "reason": "NoIssues"}]}
        });
        let view = job_view(&job);
        assert_eq!(view["metadata"].get("uid"), None);
        assert_eq!(view.get("spec"), None);
        let text = yaml(&view, 0);
        assert!(text.contains("name: j"), "{text}");
        assert!(
            text.find("a: ").unwrap() < text.find("b: ").unwrap(),
            "{text}"
        );
        assert_eq!(
            summary(&job),
            "Applied = -   Available = -   Health = True/NoIssues"
        );
    }

    #[test]
    fn mismatches_name_the_condition() {
        let job = json!({"status": {"conditions": [
            {"type": "Available", "status": "False", "reason": "AdapterTimeout"},
            {"type": "Health", "status": "False", "reason": "AdapterTimeout"}
        ]}});
        let expected = Expected {
            applied: None,
            available: ("False", "AdapterTimeout"),
            health: ("False", "AdapterTimeout"),
            finalized: None,
        };
        assert!(mismatches(&job, &expected, &[], &[]).is_empty());
        let expected = Expected {
            applied: Some(("True", "ManifestWorkCreated")),
            ..expected
        };
        assert_eq!(
            mismatches(&job, &expected, &[], &[]),
            vec!["Applied: expected True/ManifestWorkCreated, got (none)".to_owned()]
        );
    }

    #[test]
    fn finalized_is_checked_when_expected_and_refused_when_not() {
        let conditions = json!([
            {"type": "Applied", "status": "True", "reason": "CleanupConfirmed"},
            {"type": "Available", "status": "False", "reason": "Deleted"},
            {"type": "Health", "status": "True", "reason": "NoIssues"},
        ]);
        let mut finalized = conditions.clone();
        finalized
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "Finalized", "status": "True", "reason": "CleanupConfirmed"}));
        let with = json!({"status": {"conditions": finalized}});
        let without = json!({"status": {"conditions": conditions}});
        let expected = Expected {
            applied: Some(("True", "CleanupConfirmed")),
            available: ("False", "Deleted"),
            health: ("True", "NoIssues"),
            finalized: Some(("True", "CleanupConfirmed")),
        };
        assert!(mismatches(&with, &expected, &[], &[]).is_empty());
        assert_eq!(
            summary(&with),
            "Applied = True/CleanupConfirmed   Available = False/Deleted   Health = True/NoIssues   Finalized = True/CleanupConfirmed"
        );
        // Missing, or still False: a mismatch.
        assert_eq!(
            mismatches(&without, &expected, &[], &[]),
            vec!["Finalized: expected True/CleanupConfirmed, got (none)".to_owned()]
        );
        let pending = Expected {
            finalized: Some(("False", "DeletionRequested")),
            ..expected.clone()
        };
        assert_eq!(
            mismatches(&with, &pending, &[], &[]),
            vec![
                "Finalized: expected False/DeletionRequested, got True/CleanupConfirmed".to_owned()
            ]
        );
        // Not expected (a cluster not being deleted): a Finalized on the Job is a mismatch.
        let alive = Expected {
            finalized: None,
            ..expected
        };
        assert_eq!(
            mismatches(&with, &alive, &[], &[]),
            vec!["Finalized: expected (none), got True/CleanupConfirmed".to_owned()]
        );
    }

    #[test]
    fn data_values_are_compared_as_their_annotation_text() {
        let data = json!({"version": "4.17.0", "current_replicas": 3, "desired_replicas": null});
        let job = json!({
            "metadata": {"annotations": {"hyperfleet.io/report-data": data.to_string()}},
            "status": {"conditions": [
                {"type": "Applied", "status": "True", "reason": "ManifestWorkApplied"},
                {"type": "Available", "status": "True", "reason": "NodePoolReady"},
                {"type": "Health", "status": "True", "reason": "NoIssues"}
            ]}
        });
        let expected = Expected {
            applied: Some(("True", "ManifestWorkApplied")),
            available: ("True", "NodePoolReady"),
            health: ("True", "NoIssues"),
            finalized: None,
        };
        let want = |pairs: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
            pairs.iter().map(|(k, v)| (*k, (*v).to_owned())).collect()
        };
        let same = want(&[
            ("version", "4.17.0"),
            ("current_replicas", "3"),
            ("desired_replicas", "null"),
        ]);
        assert!(mismatches(&job, &expected, &same, &[]).is_empty());
        let other = want(&[("current_replicas", "5"), ("autoscaling_min", "null")]);
        assert_eq!(
            mismatches(&job, &expected, &other, &[]),
            vec![
                "report-data current_replicas: expected \"5\", got 3".to_owned(),
                "report-data autoscaling_min: expected \"null\", got null".to_owned(),
            ]
        );
    }

    #[test]
    fn a_message_without_the_expected_text_is_a_mismatch() {
        let job = json!({"status": {"conditions": [
            {"type": "Applied", "status": "False", "reason": "ApplyFailed",
             "message": "could not apply: Failed to apply manifest: namespaces \"clusters\" not found"}
        ]}});
        let expected = Expected {
            applied: Some(("False", "ApplyFailed")),
            available: ("False", "ApplyFailed"),
            health: ("False", "ApplyFailed"),
            finalized: None,
        };
        let found = [("Applied", "namespaces \"clusters\" not found".to_owned())];
        let problems = mismatches(&job, &expected, &[], &found);
        assert!(
            !problems.iter().any(|p| p.starts_with("Applied")),
            "{problems:?}"
        );
        let other = [("Applied", "admission policy".to_owned())];
        let problems = mismatches(&job, &expected, &[], &other);
        assert!(
            problems.contains(&"Applied message: expected it to contain \"admission policy\", got \"could not apply: Failed to apply manifest: namespaces \\\"clusters\\\" not found\"".to_owned()),
            "{problems:?}"
        );
        // A condition the Job does not have has no message.
        let problems = mismatches(&job, &expected, &[], &[("Health", "x".to_owned())]);
        assert!(
            problems.contains(&"Health message: expected it to contain \"x\", got \"\"".to_owned()),
            "{problems:?}"
        );
    }
}
