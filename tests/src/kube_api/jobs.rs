//! Job-specific behaviour: condition normalisation and the status-update validation rules
//! (`ValidateJobUpdateStatus` as measured on v1.36).

use serde_json::{Map, Value, json};

use super::pods;
use super::status::FieldError;
use super::strategic_merge::MergeKeys;
use super::time;

/// Lists of a Job that a strategic merge patch merges by key.
pub const MERGE_KEYS: MergeKeys = MergeKeys(&[
    ("status.conditions", "type"),
    ("metadata.ownerReferences", "uid"),
    ("spec.template.spec.containers", "name"),
    ("spec.template.spec.initContainers", "name"),
    ("spec.template.spec.volumes", "name"),
]);

/// Pod-template labels the Job strategy sets on create: the Job's name under both keys, its uid
/// under both keys (`hyperfleet-framework.md` §5.2, §8).
pub const JOB_NAME_LABELS: [&str; 2] = ["batch.kubernetes.io/job-name", "job-name"];
pub const CONTROLLER_UID_LABELS: [&str; 2] =
    ["batch.kubernetes.io/controller-uid", "controller-uid"];

/// Longest label value, in bytes.
const MAX_LABEL_VALUE_BYTES: usize = 63;

/// What the API server adds to a new Job (the uid must already be stamped): the Job strategy's
/// generated `spec.selector` (`matchLabels` on the controller uid, `manualSelector: false`) and
/// pod-template labels carrying the Job's name and uid (labels the client set are kept, as the
/// real strategy keeps them), and the defaults of `SetDefaults_Job` and of the pod template
/// ([`pods::default_pod_spec`]) as a v1.36 server applies them.
pub fn default_on_create(job: &mut Value) {
    if let Some(spec) = job.get_mut("spec").and_then(Value::as_object_mut) {
        default_job_spec(spec);
        if let Some(pod) = spec
            .get_mut("template")
            .and_then(|t| t.get_mut("spec"))
            .and_then(Value::as_object_mut)
        {
            pods::default_pod_spec(pod);
        }
    }
    selector_and_labels(job);
}

/// `SetDefaults_Job` (measured on v1.36 with `kubectl create --dry-run=server`): completions and
/// parallelism 1 when both are unset, else parallelism 1 when unset; backoffLimit 6;
/// completionMode NonIndexed; suspend false; manualSelector false; podReplacementPolicy
/// TerminatingOrFailed (Failed with a podFailurePolicy).
fn default_job_spec(spec: &mut Map<String, Value>) {
    if !spec.contains_key("completions") && !spec.contains_key("parallelism") {
        spec.insert("completions".into(), json!(1));
    }
    spec.entry("parallelism").or_insert(json!(1));
    spec.entry("backoffLimit").or_insert(json!(6));
    spec.entry("completionMode").or_insert(json!("NonIndexed"));
    spec.entry("suspend").or_insert(json!(false));
    spec.entry("manualSelector").or_insert(json!(false));
    let replacement = if spec.contains_key("podFailurePolicy") {
        "Failed"
    } else {
        "TerminatingOrFailed"
    };
    spec.entry("podReplacementPolicy")
        .or_insert(json!(replacement));
}

fn selector_and_labels(job: &mut Value) {
    let name = job
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let uid = job
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let Some(spec) = job.as_object_mut().and_then(|o| ensure_object(o, "spec")) else {
        return;
    };
    if let Some(template) = ensure_object(spec, "template")
        && let Some(metadata) = ensure_object(template, "metadata")
        && let Some(labels) = ensure_object(metadata, "labels")
    {
        for key in JOB_NAME_LABELS {
            labels.entry(key).or_insert_with(|| json!(name));
        }
        for key in CONTROLLER_UID_LABELS {
            labels.entry(key).or_insert_with(|| json!(uid));
        }
    }
    if let Some(selector) = ensure_object(spec, "selector")
        && let Some(match_labels) = ensure_object(selector, "matchLabels")
    {
        match_labels
            .entry(CONTROLLER_UID_LABELS[0])
            .or_insert_with(|| json!(uid));
    }
}

/// `map[field]` as an object, created when absent; `None` when it holds something else.
fn ensure_object<'a>(
    map: &'a mut Map<String, Value>,
    field: &str,
) -> Option<&'a mut Map<String, Value>> {
    map.entry(field)
        .or_insert_with(|| json!({}))
        .as_object_mut()
}

/// The create-time label checks of a (defaulted) Job, as a v1.36 server runs them: every value of
/// `metadata.labels` and of the pod-template labels (reported as `spec.template.labels`) is a
/// valid label value. A Job name over 63 bytes therefore fails twice, once per job-name label,
/// with the same message (`hyperfleet-framework.md` §8).
pub fn validate_create(job: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (pointer, field) in [
        ("/metadata/labels", "metadata.labels"),
        ("/spec/template/metadata/labels", "spec.template.labels"),
    ] {
        let Some(labels) = job.pointer(pointer).and_then(Value::as_object) else {
            continue;
        };
        for value in labels.values() {
            let text = value.as_str().unwrap_or("");
            if let Some(detail) = label_value_problem(text) {
                errors.push(FieldError::invalid(
                    field,
                    Some(format!("{text:?}")),
                    detail,
                ));
            }
        }
    }
    errors
}

/// Why `value` is not a label value: ≤ 63 bytes, `(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?`.
/// The length message is v1.36's; the team docs do not record the pattern message, so that one
/// names the pattern only (the rejection itself is certain).
fn label_value_problem(value: &str) -> Option<&'static str> {
    if value.len() > MAX_LABEL_VALUE_BYTES {
        return Some("must be no more than 63 bytes");
    }
    let bytes = value.as_bytes();
    let alnum = |b: &u8| b.is_ascii_alphanumeric();
    let valid = match (bytes.first(), bytes.last()) {
        (None, _) | (_, None) => true,
        (Some(first), Some(last)) => {
            alnum(first)
                && alnum(last)
                && bytes
                    .iter()
                    .all(|b| alnum(b) || matches!(b, b'-' | b'_' | b'.'))
        }
    };
    (!valid)
        .then_some("must match the label-value pattern (([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
}

/// Server-side defaults of a Job the controller has started: `startTime` and `active: 1`.
/// A Job managed by another controller (`spec.managedBy`) gets an empty status, as on a real cluster.
pub fn default_status(job: &mut Value) {
    let managed_elsewhere = job
        .pointer("/spec/managedBy")
        .and_then(Value::as_str)
        .is_some_and(|m| m != "kubernetes.io/job-controller");
    let Some(object) = job.as_object_mut() else {
        return;
    };
    object.entry("apiVersion").or_insert(json!("batch/v1"));
    object.entry("kind").or_insert(json!("Job"));
    let status = object.entry("status").or_insert_with(|| json!({}));
    if let (Value::Object(status), false) = (status, managed_elsewhere) {
        status
            .entry("startTime")
            .or_insert_with(|| json!(time::now()));
        status.entry("active").or_insert(json!(1));
        status.entry("ready").or_insert(json!(0));
        status.entry("terminating").or_insert(json!(0));
        status
            .entry("uncountedTerminatedPods")
            .or_insert_with(|| json!({}));
    }
}

/// Decodes the conditions the way the typed `JobCondition` round-trip does: known fields only,
/// `type`/`status` default to `""`, times normalised (null when absent), empty `reason`/`message`
/// omitted, an empty list removed. Returns the dropped unknown fields (`status.conditions[0].x`),
/// or Go's time-parse message for a bad time.
pub fn normalise_conditions(job: &mut Value) -> Result<Vec<String>, String> {
    let Some(status) = job.get_mut("status").and_then(Value::as_object_mut) else {
        return Ok(Vec::new());
    };
    let conditions = match status.get("conditions") {
        Some(Value::Array(list)) if !list.is_empty() => list.clone(),
        Some(_) => {
            status.remove("conditions");
            return Ok(Vec::new());
        }
        None => return Ok(Vec::new()),
    };
    let normalised = conditions
        .iter()
        .map(normalise_condition)
        .collect::<Result<Vec<_>, _>>()?;
    status.insert("conditions".into(), Value::Array(normalised));
    Ok(unknown_fields(&conditions))
}

const CONDITION_FIELDS: [&str; 6] = [
    "type",
    "status",
    "lastProbeTime",
    "lastTransitionTime",
    "reason",
    "message",
];

fn unknown_fields(conditions: &[Value]) -> Vec<String> {
    let mut unknown = Vec::new();
    for (index, condition) in conditions.iter().enumerate() {
        for field in condition.as_object().into_iter().flat_map(Map::keys) {
            if !CONDITION_FIELDS.contains(&field.as_str()) {
                unknown.push(format!("status.conditions[{index}].{field}"));
            }
        }
    }
    unknown
}

fn normalise_condition(condition: &Value) -> Result<Value, String> {
    let text = |field: &str| {
        condition
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let when = |field: &str| match condition.get(field).and_then(Value::as_str) {
        Some(raw) if !raw.is_empty() => time::normalise(raw).map(Value::String),
        _ => Ok(Value::Null),
    };
    let mut out = Map::new();
    out.insert("type".into(), Value::String(text("type")));
    out.insert("status".into(), Value::String(text("status")));
    out.insert("lastProbeTime".into(), when("lastProbeTime")?);
    out.insert("lastTransitionTime".into(), when("lastTransitionTime")?);
    for field in ["reason", "message"] {
        let value = text(field);
        if !value.is_empty() {
            out.insert(field.into(), Value::String(value));
        }
    }
    Ok(Value::Object(out))
}

fn has_true(job: &Value, kind: &str) -> bool {
    job.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|list| {
            list.iter()
                .any(|c| c["type"] == kind && c["status"] == "True")
        })
}

fn count(job: &Value, field: &str) -> i64 {
    job.pointer(&format!("/status/{field}"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// The status-update rules, in the order the real server reports them.
pub fn validate_status_update(old: &Value, new: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for field in ["active", "succeeded", "failed", "ready", "terminating"] {
        let value = count(new, field);
        if value < 0 {
            errors.push(FieldError::invalid(
                &format!("status.{field}"),
                Some(value.to_string()),
                "must be greater than or equal to 0",
            ));
        }
    }
    let (active, ready) = (count(new, "active"), count(new, "ready"));
    if ready > active {
        errors.push(FieldError::invalid(
            "status.ready",
            Some(ready.to_string()),
            "cannot set more ready pods than active",
        ));
    }
    let [complete, failed, criteria_met, failure_target] =
        ["Complete", "Failed", "SuccessCriteriaMet", "FailureTarget"]
            .map(|kind| has_true(new, kind));
    let [
        was_complete,
        was_failed,
        was_criteria_met,
        was_failure_target,
    ] = ["Complete", "Failed", "SuccessCriteriaMet", "FailureTarget"]
        .map(|kind| has_true(old, kind));
    let completion_time = new
        .pointer("/status/completionTime")
        .and_then(Value::as_str);
    match (complete, completion_time) {
        (true, None) => errors.push(FieldError::required(
            "status.completionTime",
            "completionTime is required for Complete jobs",
        )),
        (false, Some(at)) => errors.push(FieldError::invalid(
            "status.completionTime",
            Some(format!("{at:?}")),
            "cannot set completionTime when there is no Complete=True condition",
        )),
        _ => {}
    }
    let conditions = |errors: &mut Vec<FieldError>, detail: &str| {
        errors.push(FieldError::invalid("status.conditions", None, detail))
    };
    if complete && failed {
        conditions(
            &mut errors,
            "cannot set Complete=True and Failed=true conditions",
        );
    }
    if failed && !failure_target {
        conditions(
            &mut errors,
            "cannot set Failed=True condition without the FailureTarget=true condition",
        );
    }
    if complete && !criteria_met {
        conditions(
            &mut errors,
            "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
        );
    }
    if criteria_met && failed {
        conditions(
            &mut errors,
            "cannot set SuccessCriteriaMet=True and Failed=true conditions",
        );
    }
    if was_complete && !complete {
        conditions(
            &mut errors,
            "cannot disable the terminal Complete=True condition",
        );
    }
    if was_failed && !failed {
        conditions(
            &mut errors,
            "cannot disable the terminal Failed=True condition",
        );
    }
    if was_criteria_met && !criteria_met {
        conditions(
            &mut errors,
            "cannot disable the SuccessCriteriaMet=True condition",
        );
    }
    if was_failure_target && !failure_target {
        conditions(
            &mut errors,
            "cannot disable the FailureTarget=True condition",
        );
    }
    if complete || failed {
        if active > 0 {
            errors.push(FieldError::invalid(
                "status.active",
                Some(active.to_string()),
                "active>0 is invalid for finished job",
            ));
        }
        if new.pointer("/status/startTime").is_none_or(Value::is_null) {
            errors.push(FieldError::required(
                "status.startTime",
                "startTime is required for finished job",
            ));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running() -> Value {
        json!({"status": {"active": 1, "startTime": "2026-11-25T10:00:00Z"}})
    }

    fn with_conditions(mut job: Value, conditions: Value) -> Value {
        job["status"]["conditions"] = conditions;
        job
    }

    fn messages(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn complete_by_hand_on_a_running_job_breaks_three_rules() {
        let new = with_conditions(running(), json!([{"type": "Complete", "status": "True"}]));
        assert_eq!(
            messages(&validate_status_update(&running(), &new)),
            [
                "status.completionTime: Required value: completionTime is required for Complete jobs",
                "status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
                "status.active: Invalid value: 1: active>0 is invalid for finished job",
            ]
        );
    }

    #[test]
    fn adding_failed_to_a_complete_job_breaks_three_condition_rules() {
        let mut old = json!({"status": {"succeeded": 1, "startTime": "2026-11-25T10:00:00Z", "completionTime": "2026-11-25T23:15:42Z"}});
        old["status"]["conditions"] = json!([{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]);
        let mut new = old.clone();
        new["status"]["conditions"]
            .as_array_mut()
            .unwrap()
            .insert(0, json!({"type": "Failed", "status": "True"}));
        assert_eq!(
            messages(&validate_status_update(&old, &new)),
            [
                "status.conditions: Invalid value: cannot set Complete=True and Failed=true conditions",
                "status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition",
                "status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and Failed=true conditions",
            ]
        );
    }

    #[test]
    fn custom_conditions_with_any_status_value_are_accepted() {
        let new = with_conditions(
            running(),
            json!([{"type": "Applied", "status": "Maybe"}, {"type": "Complete", "status": "False"}]),
        );
        assert!(validate_status_update(&running(), &new).is_empty());
    }

    #[test]
    fn conditions_are_normalised_like_the_typed_round_trip() {
        let mut job = json!({"status": {"conditions": [{"status": "True", "reason": "R", "extra": 1,
            "lastTransitionTime": "2026-11-25T10:00:00.123456+02:00"}]}});
        normalise_conditions(&mut job).unwrap();
        assert_eq!(
            job["status"]["conditions"][0],
            json!({"type": "", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-11-25T08:00:00Z", "reason": "R"})
        );
    }

    #[test]
    fn unknown_condition_fields_are_dropped_and_reported() {
        let mut job = json!({"status": {"conditions": [{"type": "A", "status": "True", "observedGeneration": 3}]}});
        let unknown = normalise_conditions(&mut job).unwrap();
        assert_eq!(unknown, ["status.conditions[0].observedGeneration"]);
        assert!(
            job["status"]["conditions"][0]
                .get("observedGeneration")
                .is_none()
        );
    }

    fn named(name: &str) -> Value {
        let mut job = json!({"metadata": {"name": name, "uid": "6a1f0000-0000-4000-8000-000000000001"},
                             "spec": {"template": {"spec": {"containers": []}}}});
        default_on_create(&mut job);
        job
    }

    #[test]
    fn create_copies_the_name_and_uid_into_template_labels_and_the_selector() {
        let job = named("hs-cp-x-g1");
        let uid = "6a1f0000-0000-4000-8000-000000000001";
        assert_eq!(
            job["spec"]["template"]["metadata"]["labels"],
            json!({"batch.kubernetes.io/job-name": "hs-cp-x-g1", "job-name": "hs-cp-x-g1",
                   "batch.kubernetes.io/controller-uid": uid, "controller-uid": uid})
        );
        assert_eq!(
            job["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
        );
        assert!(validate_create(&job).is_empty());
    }

    #[test]
    fn a_name_of_64_bytes_fails_both_job_name_labels() {
        let name = "a".repeat(64);
        let errors = validate_create(&named(&name));
        let expected =
            format!("spec.template.labels: Invalid value: {name:?}: must be no more than 63 bytes");
        assert_eq!(messages(&errors), [expected.clone(), expected]);
        assert!(validate_create(&named(&"a".repeat(63))).is_empty());
    }

    #[test]
    fn label_values_are_checked_in_metadata_and_template() {
        let mut job = named("ok");
        job["metadata"]["labels"] = json!({"hyperfleet.io/cluster-id": "x".repeat(64)});
        job["spec"]["template"]["metadata"]["labels"]["app"] = json!("-starts-with-dash");
        let errors = messages(&validate_create(&job));
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].starts_with("metadata.labels: Invalid value: \"xxx"),
            "{errors:?}"
        );
        assert!(
            errors[0].ends_with("must be no more than 63 bytes"),
            "{errors:?}"
        );
        assert!(
            errors[1].starts_with("spec.template.labels: Invalid value: \"-starts-with-dash\"")
        );
        for good in ["", "a", "A.b_c-9", &"z".repeat(63)] {
            assert_eq!(label_value_problem(good), None, "{good:?}");
        }
        for bad in ["-a", "a-", "a b", "é", ".", &"z".repeat(64)] {
            assert!(label_value_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn labels_the_client_set_are_kept() {
        let mut job = json!({"metadata": {"name": "n", "uid": "u"},
            "spec": {"template": {"metadata": {"labels": {"job-name": "mine"}}}}});
        default_on_create(&mut job);
        assert_eq!(
            job["spec"]["template"]["metadata"]["labels"]["job-name"],
            "mine"
        );
        assert_eq!(
            job["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"],
            "n"
        );
    }

    #[test]
    fn an_empty_condition_list_is_removed() {
        let mut job = json!({"status": {"conditions": []}});
        normalise_conditions(&mut job).unwrap();
        assert_eq!(job, json!({"status": {}}));
    }
}
