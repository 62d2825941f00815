//! REST resource-bundle schemas (protocol §4.3, §4.4) and status feedback access.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::work::{ExistingWork, ManifestStatus, ResourceIdentity, WorkCondition, WorkError};

/// `ResourceBundle` as served by `GET /api/maestro/v1/resource-bundles/{id}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceBundle {
    /// Resource id (UUID).
    pub id: String,
    /// `ResourceBundle`.
    #[serde(default)]
    pub kind: String,
    /// `/api/maestro/v1/resource-bundles/<id>`.
    #[serde(default)]
    pub href: String,
    /// Resource name (the id for gRPC-created works, not the work name).
    #[serde(default)]
    pub name: String,
    /// Consumer = work namespace.
    #[serde(default)]
    pub consumer_name: String,
    /// Current spec version (≥ 1).
    pub version: Option<i64>,
    /// RFC 3339.
    pub created_at: Option<String>,
    /// RFC 3339.
    pub updated_at: Option<String>,
    /// RFC 3339, present only while the bundle is being deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<String>,
    /// The work ObjectMeta as sent by the source, plus `creationTimestamp`/`deletionTimestamp`.
    #[serde(default)]
    pub metadata: Value,
    /// Raw manifests.
    #[serde(default)]
    pub manifests: Vec<Value>,
    /// `[]` when none.
    #[serde(default)]
    pub manifest_configs: Vec<Value>,
    /// `{}` when none.
    #[serde(default)]
    pub delete_option: Value,
    /// Absent until the agent reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<BundleStatus>,
}

/// `ResourceBundleList` (all five keys are always present).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceBundleList {
    /// `ResourceBundleList`.
    pub kind: String,
    /// 1-based page number.
    pub page: i64,
    /// Number of items in this page.
    pub size: i64,
    /// Number of all matches.
    pub total: i64,
    /// The page.
    pub items: Vec<ResourceBundle>,
}

/// The REST `status` object; the first two keys have Go field names (no JSON tags).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BundleStatus {
    /// Spec version the agent applied.
    #[serde(rename = "ObservedVersion")]
    pub observed_version: Option<i64>,
    /// Agent sequence id.
    #[serde(rename = "SequenceID")]
    pub sequence_id: Option<String>,
    /// The spec echoed by the agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest_bundle: Option<Value>,
    /// Work-level conditions.
    pub conditions: Vec<Condition>,
    /// Flat per-manifest status.
    pub resource_status: Vec<ManifestCondition>,
}

/// `metav1.Condition`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`/`False`/`Unknown`.
    pub status: String,
    /// Generation the condition refers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// RFC 3339.
    #[serde(default)]
    pub last_transition_time: String,
    /// CamelCase reason.
    #[serde(default)]
    pub reason: String,
    /// Message.
    #[serde(default)]
    pub message: String,
}

/// Status of one manifest (`ManifestCondition`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ManifestCondition {
    /// Which manifest.
    pub resource_meta: ResourceMeta,
    /// Feedback values.
    pub status_feedback: StatusFeedback,
    /// Per-manifest conditions.
    pub conditions: Vec<Condition>,
}

/// `ManifestResourceMeta`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResourceMeta {
    /// Index in `manifests`.
    pub ordinal: i64,
    /// API group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource.
    pub resource: String,
    /// Name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
}

/// `StatusFeedbackResult`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusFeedback {
    /// Values.
    #[serde(default)]
    pub values: Vec<FeedbackValue>,
}

/// One named feedback value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackValue {
    /// Feedback name (e.g. `status`).
    pub name: String,
    /// Value.
    pub field_value: FieldValue,
}

/// `FieldValue`: a typed value; `jsonRaw` is a string holding JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldValue {
    /// `Integer`, `String`, `Boolean` or `JsonRaw`.
    #[serde(rename = "type")]
    pub type_: String,
    /// For `Integer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integer: Option<i64>,
    /// For `String`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string: Option<String>,
    /// For `Boolean`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boolean: Option<bool>,
    /// For `JsonRaw`: JSON text, parsed again by [`FieldValue::to_json`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_raw: Option<String>,
}

impl FieldValue {
    /// The value as JSON (`jsonRaw` parsed). `Ok(None)` when the field named by `type` is absent.
    /// Errors carry the parser message; callers add the manifest/feedback names.
    pub fn to_json(&self) -> Result<Option<Value>, serde_json::Error> {
        Ok(match self.type_.as_str() {
            "Integer" => self.integer.map(Value::from),
            "String" => self.string.clone().map(Value::String),
            "Boolean" => self.boolean.map(Value::Bool),
            "JsonRaw" => self
                .json_raw
                .as_deref()
                .map(serde_json::from_str)
                .transpose()?,
            _ => None,
        })
    }
}

impl ManifestCondition {
    /// Human-readable identity, e.g. `hypershift.openshift.io/hostedclusters clusters/my-cluster`.
    pub fn describe(&self) -> String {
        let m = &self.resource_meta;
        let what = if m.resource.is_empty() {
            &m.kind
        } else {
            &m.resource
        };
        format!("{}/{} {}/{}", m.group, what, m.namespace, m.name)
    }

    /// The feedback value `name` as JSON (`jsonRaw` parsed); [`WorkError::MalformedFeedback`] for bad JSON.
    pub fn feedback(&self, name: &str) -> Result<Option<Value>, WorkError> {
        let Some(value) = self.status_feedback.values.iter().find(|v| v.name == name) else {
            return Ok(None);
        };
        value
            .field_value
            .to_json()
            .map_err(|e| WorkError::MalformedFeedback {
                manifest: self.describe(),
                feedback: name.to_owned(),
                message: e.to_string(),
            })
    }

    /// All feedback values as JSON, by name.
    pub fn feedback_values(&self) -> Result<BTreeMap<String, Value>, WorkError> {
        let mut out = BTreeMap::new();
        for v in &self.status_feedback.values {
            if let Some(json) = self.feedback(&v.name)? {
                out.insert(v.name.clone(), json);
            }
        }
        Ok(out)
    }

    /// This manifest's conditions and feedback in the backend-neutral form.
    pub fn manifest_status(&self) -> Result<ManifestStatus, WorkError> {
        Ok(ManifestStatus {
            resource: identity(&self.resource_meta),
            conditions: self
                .conditions
                .iter()
                .map(Condition::to_work_condition)
                .collect(),
            values: self.feedback_values()?,
        })
    }
}

impl ResourceBundle {
    /// Converts to the backend-neutral view. `source` is the source id the bundle id was derived from.
    /// Fails with [`WorkError::MalformedFeedback`] if any `jsonRaw` is not JSON.
    pub fn to_existing_work(&self, source: Option<String>) -> Result<ExistingWork, WorkError> {
        let string_map = |key: &str| -> BTreeMap<String, String> {
            let map = self.metadata[key].as_object().into_iter().flatten();
            map.filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        };
        let deleting = self.deleted_at.clone().or_else(|| {
            self.metadata["deletionTimestamp"]
                .as_str()
                .map(str::to_owned)
        });
        let none = BundleStatus::default();
        let status = self.status.as_ref().unwrap_or(&none);
        Ok(ExistingWork {
            labels: string_map("labels"),
            annotations: string_map("annotations"),
            source,
            version: self.version,
            observed_version: status.observed_version,
            deleting,
            workload: self.manifests.clone(),
            ..reported(&status.conditions, &status.resource_status)?
        })
    }
}

/// What a work's agent reported, its conditions and each manifest's (feedback parsed), as an
/// [`ExistingWork`] that knows nothing else yet: the part of the view of a Maestro bundle and of
/// a hub ManifestWork that both read alike. [`WorkError::MalformedFeedback`] for a `jsonRaw` that
/// is not JSON.
pub fn reported(
    conditions: &[Condition],
    manifests: &[ManifestCondition],
) -> Result<ExistingWork, WorkError> {
    Ok(ExistingWork {
        manifests: manifests
            .iter()
            .map(ManifestCondition::manifest_status)
            .collect::<Result<_, _>>()?,
        conditions: conditions
            .iter()
            .map(Condition::to_work_condition)
            .collect(),
        ..ExistingWork::default()
    })
}

impl Condition {
    /// Backend-neutral copy.
    pub fn to_work_condition(&self) -> WorkCondition {
        WorkCondition {
            type_: self.type_.clone(),
            status: self.status.clone(),
            reason: self.reason.clone(),
            message: self.message.clone(),
            observed_generation: self.observed_generation,
            last_transition_time: self.last_transition_time.clone(),
        }
    }
}

fn identity(m: &ResourceMeta) -> ResourceIdentity {
    ResourceIdentity {
        group: m.group.clone(),
        version: m.version.clone(),
        kind: m.kind.clone(),
        resource: m.resource.clone(),
        namespace: m.namespace.clone(),
        name: m.name.clone(),
    }
}

/// `status` of a ManifestWork object (hub layout: `resourceStatus.manifests[]`), as the Go client builds it and
/// as the OCM hub serves it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ManifestWorkStatus {
    /// Work-level conditions.
    pub conditions: Vec<Condition>,
    /// Per-manifest status.
    pub resource_status: ManifestResourceStatus,
}

/// `ManifestResourceStatus`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ManifestResourceStatus {
    /// One entry per manifest.
    #[serde(default)]
    pub manifests: Vec<ManifestCondition>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::work::maestro::test_fixtures::fixture;

    const DEPLOYMENT: (&str, &str, &str, &str) =
        ("apps", "deployments", "default", "maestro-e2e-upgrade-test");

    /// A REST bundle built from the status fixture the way the server presents it (§4.5).
    fn rest_bundle() -> Option<Value> {
        let status = fixture("cloudevents.status.maestro.json")?;
        let data = &status["data"];
        let meta: Value = serde_json::from_str(status["metadata"].as_str().unwrap()).unwrap();
        Some(serde_json::json!({
            "consumer_name": status["clustername"], "created_at": "2025-12-16T06:00:17.771003Z",
            "delete_option": {}, "href": "/api/maestro/v1/resource-bundles/55c61e54-a3f6-563d-9fec-b1fe297bdfdb",
            "id": status["resourceid"], "kind": "ResourceBundle",
            "manifest_configs": data["manifestBundle"]["manifestConfigs"], "manifests": data["manifestBundle"]["manifests"],
            "metadata": meta, "name": status["resourceid"],
            "status": {"ObservedVersion": 1, "SequenceID": status["sequenceid"], "conditions": data["conditions"],
                       "manifestBundle": data["manifestBundle"], "resourceStatus": data["resourceStatus"]},
            "updated_at": "2025-12-16T06:00:17.771003Z", "version": 1
        }))
    }

    #[test]
    fn rest_bundle_decodes_and_feedback_is_parsed_again() {
        let Some(bundle) = rest_bundle() else { return };
        let bundle: ResourceBundle = serde_json::from_value(bundle).unwrap();
        let status = bundle.status.as_ref().unwrap();
        assert_eq!(status.observed_version, Some(1));
        let (g, r, ns, n) = DEPLOYMENT;
        let work = bundle
            .to_existing_work(Some("mw-client-example".into()))
            .unwrap();
        let feedback = work.feedback_value(g, r, ns, n, "status").unwrap().clone();
        assert_eq!(feedback["conditions"][0]["reason"], "FoundNewReplicaSet");
        assert_eq!(
            work.feedback_value(g, "Deployment", ns, n, "status"),
            Some(&feedback)
        );
        assert_eq!(work.feedback_value(g, r, ns, "other", "status"), None);

        assert_eq!(
            work.labels["maestro.resource.type"],
            "2d18a7dc-c731-5753-8aa9-6b2f22e3b12b"
        );
        assert_eq!(work.version, Some(1));
        assert_eq!(work.observed_version, Some(1));
        assert_eq!(work.deleting, None);
        assert_eq!(work.workload, bundle.manifests);
        assert_eq!(work.workload[0]["kind"], "Deployment");
        assert_eq!(work.resource_version, None);
        assert_eq!(work.feedback_value(g, r, ns, n, "status"), Some(&feedback));
        assert_eq!(work.conditions[0].type_, "Applied");
    }

    #[test]
    fn malformed_json_raw_is_a_typed_error() {
        let Some(mut json) = rest_bundle() else {
            return;
        };
        json["status"]["resourceStatus"][0]["statusFeedback"]["values"][0]["fieldValue"]["jsonRaw"] =
            Value::String("{\"conditions\":[".into());
        let bundle: ResourceBundle = serde_json::from_value(json).unwrap();
        let err = bundle.to_existing_work(None).unwrap_err();
        match err {
            WorkError::MalformedFeedback {
                manifest, feedback, ..
            } => {
                assert_eq!(
                    manifest,
                    "apps/deployments default/maestro-e2e-upgrade-test"
                );
                assert_eq!(feedback, "status");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn scalar_feedback_types() {
        let v = |json: Value| {
            serde_json::from_value::<FieldValue>(json)
                .unwrap()
                .to_json()
                .unwrap()
        };
        assert_eq!(
            v(serde_json::json!({"type": "Integer", "integer": 3})),
            Some(Value::from(3))
        );
        assert_eq!(
            v(serde_json::json!({"type": "String", "string": "x"})),
            Some(Value::from("x"))
        );
        assert_eq!(
            v(serde_json::json!({"type": "Boolean", "boolean": true})),
            Some(Value::Bool(true))
        );
        assert_eq!(v(serde_json::json!({"type": "JsonRaw"})), None);
    }

    #[test]
    fn deleting_bundle_is_reported() {
        let Some(mut json) = rest_bundle() else {
            return;
        };
        json["deleted_at"] = "2026-01-01T00:00:00Z".into();
        let bundle: ResourceBundle = serde_json::from_value(json).unwrap();
        assert_eq!(
            bundle.to_existing_work(None).unwrap().deleting.as_deref(),
            Some("2026-01-01T00:00:00Z")
        );
    }

    #[test]
    fn watched_manifestwork_fixture_status_decodes() {
        let Some(work) = fixture("manifestwork.watched.json") else {
            return;
        };
        let status: ManifestWorkStatus = serde_json::from_value(work["status"].clone()).unwrap();
        let feedback = reported(&status.conditions, &status.resource_status.manifests)
            .unwrap()
            .manifests;
        assert_eq!(feedback.len(), 1);
        assert_eq!(feedback[0].resource.kind, "Deployment");
        assert_eq!(feedback[0].values["status"]["observedGeneration"], 1);
    }
}

/// Pins what the REST decoding makes of every recorded bundle and list, of the `maestro_bundle`
/// and `maestro_bundle_list` fuzz corpora and of a grid of edited bundles: the decoded value
/// (as serialized again), each [`ExistingWork`] (or its error), and each manifest's feedback.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod pinned {
    use std::fmt::Write as _;

    use serde_json::json;

    use super::*;
    use crate::work::maestro::error::pin_inputs::{corpus, digest, real, work_line};
    use crate::work::maestro::rest::{RESOURCE_BUNDLES_PATH, decode_answer};

    const BASE: &str = "http://maestro:8000";

    fn bundle_lines(out: &mut String, bundle: &ResourceBundle) {
        let serialized = serde_json::to_vec(bundle).unwrap();
        let _ = writeln!(out, "  serialized: {}", digest(&serialized));
        for source in [None, Some("hyperfleet-rec-1144924104".to_owned())] {
            let work = bundle.to_existing_work(source.clone());
            let _ = writeln!(
                out,
                "  work({source:?}): {:?}",
                work.as_ref().map(work_line)
            );
        }
        if let Some(status) = &bundle.status {
            for m in &status.resource_status {
                let _ = writeln!(
                    out,
                    "  manifest {}: values {:?}; status {:?}",
                    m.describe(),
                    m.feedback_values(),
                    m.feedback("status")
                );
            }
        }
    }

    fn decode(out: &mut String, name: &str, body: &[u8]) {
        let list = serde_json::from_slice::<serde_json::Value>(body)
            .is_ok_and(|v| v.get("items").is_some());
        let url = format!("{BASE}{RESOURCE_BUNDLES_PATH}");
        let _ = writeln!(out, "[{name}]");
        if list {
            match decode_answer::<ResourceBundleList>(BASE, &url, 200, body) {
                Ok(list) => {
                    let _ = writeln!(
                        out,
                        "  list {} page {} size {} total {}",
                        list.kind, list.page, list.size, list.total
                    );
                    for bundle in &list.items {
                        bundle_lines(out, bundle);
                    }
                }
                Err(e) => {
                    let _ = writeln!(out, "  list error: {e:?}");
                }
            }
        }
        match decode_answer::<ResourceBundle>(BASE, &url, 200, body) {
            Ok(bundle) => bundle_lines(out, &bundle),
            Err(e) => {
                let _ = writeln!(out, "  error: {e:?}");
            }
        }
    }

    #[test]
    fn fuzz_corpora() {
        let mut out = String::new();
        for target in ["maestro_bundle", "maestro_bundle_list"] {
            for (name, body) in corpus(target) {
                decode(&mut out, &format!("{target}/{name}"), &body);
            }
        }
        insta::assert_snapshot!("bundle_corpora", out);
    }

    #[test]
    fn recorded_bundles() {
        let Some(real) = real() else { return };
        let mut out = String::new();
        for (name, answer) in real {
            if answer["request"]["protocol"] == "http" && answer["status"] == 200 {
                decode(&mut out, &name, answer["body"].to_string().as_bytes());
            }
        }
        insta::assert_snapshot!("recorded_bundles", out);
    }

    fn base() -> serde_json::Value {
        json!({
            "id": "b-1", "kind": "ResourceBundle", "name": "b-1", "consumer_name": "mgmt-1", "version": 3,
            "metadata": {"name": "w", "labels": {"a": "1", "n": 5, "o": {"x": 1}}, "annotations": {"g": "2"},
                         "deletionTimestamp": "2026-01-02T00:00:00Z"},
            "manifests": [{"kind": "Namespace"}],
            "status": {
                "ObservedVersion": 2, "SequenceID": "9",
                "conditions": [{"type": "Applied", "status": "True", "observedGeneration": 2,
                                "lastTransitionTime": "t", "reason": "r", "message": "m"},
                               {"type": "Deleted", "status": "False"}],
                "resourceStatus": [
                    {"resourceMeta": {"ordinal": 0, "group": "g", "version": "v1", "kind": "K", "resource": "ks",
                                      "name": "n", "namespace": "ns"},
                     "statusFeedback": {"values": [
                        {"name": "i", "fieldValue": {"type": "Integer", "integer": 3}},
                        {"name": "s", "fieldValue": {"type": "String", "string": "x"}},
                        {"name": "b", "fieldValue": {"type": "Boolean", "boolean": false}},
                        {"name": "j", "fieldValue": {"type": "JsonRaw", "jsonRaw": "{\"z\":[1,2],\"a\":null}"}},
                        {"name": "missing", "fieldValue": {"type": "Integer", "string": "3"}},
                        {"name": "unknown", "fieldValue": {"type": "Float", "integer": 3}},
                        {"name": "i", "fieldValue": {"type": "String", "string": "dup"}}]},
                     "conditions": [{"type": "Available", "status": "True"}]},
                    {"resourceMeta": {"kind": "Kind", "name": "only-kind"}},
                    {}
                ]
            }
        })
    }

    #[test]
    fn edited_bundles() {
        type Edit = fn(&mut serde_json::Value);
        let edits: [(&str, Edit); 14] = [
            ("as is", |_| {}),
            ("deleted_at wins", |b| {
                b["deleted_at"] = json!("2026-03-03T00:00:00Z")
            }),
            ("no deletion", |b| b["metadata"] = json!({"name": "w"})),
            ("metadata not an object", |b| b["metadata"] = json!("x")),
            ("deletionTimestamp not a string", |b| {
                b["metadata"]["deletionTimestamp"] = json!(5)
            }),
            ("no status", |b| b["status"] = serde_json::Value::Null),
            ("empty status", |b| b["status"] = json!({})),
            ("no version", |b| b["version"] = serde_json::Value::Null),
            ("bad jsonRaw", |b| {
                b["status"]["resourceStatus"][0]["statusFeedback"]["values"][3]["fieldValue"]["jsonRaw"] =
                    json!("{");
            }),
            ("bad jsonRaw, resource missing", |b| {
                b["status"]["resourceStatus"][0]["resourceMeta"]["resource"] = json!("");
                b["status"]["resourceStatus"][0]["statusFeedback"]["values"][3]["fieldValue"]["jsonRaw"] =
                    json!("[");
            }),
            ("no id", |b| b["id"] = serde_json::Value::Null),
            ("version a string", |b| b["version"] = json!("3")),
            ("condition without status", |b| {
                b["status"]["conditions"][1] = json!({"type": "X"})
            }),
            ("feedback without type", |b| {
                b["status"]["resourceStatus"][0]["statusFeedback"]["values"][0]["fieldValue"] =
                    json!({"integer": 1});
            }),
        ];
        let mut out = String::new();
        for (name, edit) in edits {
            let mut bundle = base();
            edit(&mut bundle);
            decode(&mut out, name, bundle.to_string().as_bytes());
        }
        // Every feedback value of `base` parses: the work's lookup is the bundle status's.
        let bundle: ResourceBundle = serde_json::from_value(base()).unwrap();
        let work = bundle.to_existing_work(None).unwrap();
        for (g, r, ns, n) in [
            ("g", "ks", "ns", "n"),
            ("g", "k", "ns", "n"),
            ("g", "K", "ns", "n"),
            ("", "kind", "", "only-kind"),
            ("g", "x", "ns", "n"),
        ] {
            let _ = writeln!(
                out,
                "feedback {g}/{r} {ns}/{n}: {:?}",
                Ok::<_, WorkError>(work.feedback_value(g, r, ns, n, "j").cloned())
            );
        }
        insta::assert_snapshot!("edited_bundles", out);
    }

    /// The hub layout of the status (`resourceStatus.manifests[]`).
    #[test]
    fn manifest_work_status() {
        let mut out = String::new();
        let flat = base()["status"]["resourceStatus"].clone();
        for status in [
            json!({}),
            json!({"conditions": base()["status"]["conditions"], "resourceStatus": {"manifests": flat}}),
            json!({"resourceStatus": {}}),
            json!({"resourceStatus": {"manifests": [{"statusFeedback": {"values": [{"name": "s", "fieldValue": {"type": "JsonRaw", "jsonRaw": "nope"}}]}}]}}),
        ] {
            let status: ManifestWorkStatus = serde_json::from_value(status).unwrap();
            let _ = writeln!(
                out,
                "{}\n  {:#?}",
                serde_json::to_string(&status).unwrap(),
                reported(&status.conditions, &status.resource_status.manifests)
                    .map(|r| r.manifests)
            );
        }
        insta::assert_snapshot!("manifest_work_status", out);
    }
}
