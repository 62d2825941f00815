//! ManifestWork → ManifestBundle CloudEvents (protocol §3): the spec requests a source publishes (the
//! status events a source receives only the tests decode: `testing.rs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::cloudevent::{AttrValue, CloudEvent, SPEC_VERSION};
use super::error::invalid;
use super::resource_id::resource_id;
use crate::work::WorkError;

/// Data type prefix of every ManifestBundle event type.
pub const DATA_TYPE: &str = "io.open-cluster-management.works.v1alpha1.manifestbundles";
/// Annotation that overrides the version sent in `ce-resourceversion`.
pub const RESOURCE_VERSION_ANNOTATION: &str =
    "cloudevents.open-cluster-management.io/resourceversion";
/// Prefix of annotations copied into the `logtracing` extension.
pub const LOG_TRACING_PREFIX: &str = "logging.open-cluster-management.io/";
/// Client-side limit for the total size of the manifests (500 KiB).
pub const MAX_MANIFESTS_BYTES: usize = 500 * 1024;

/// The spec actions a source can publish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecAction {
    /// `spec.create_request`.
    Create,
    /// `spec.update_request` (versioned replace; `resourceversion 0` = unconditional).
    Update,
    /// `spec.delete_request` (soft delete, no data).
    Delete,
}

impl SpecAction {
    /// The full CloudEvent type.
    pub fn event_type(self) -> String {
        let action = match self {
            Self::Create => "create_request",
            Self::Update => "update_request",
            Self::Delete => "delete_request",
        };
        format!("{DATA_TYPE}.spec.{action}")
    }
}

/// Work ObjectMeta as sent in the `metadata` extension, fields in Go `metav1.ObjectMeta` order so the JSON text
/// matches the Go client's byte for byte.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkMeta {
    /// Work name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Work namespace (= consumer).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Resource id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// Resource version string (`"0"` for new works).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    /// Generation (omitted when 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub generation: i64,
    /// Set by the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<String>,
    /// Set on delete requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<String>,
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Owner references, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_references: Option<Value>,
    /// Finalizers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

/// Builds spec CloudEvents for one source and consumer.
#[derive(Debug, Clone)]
pub struct SpecEventBuilder {
    source_id: String,
    consumer: String,
    /// A resource id given by the caller (a placed or found bundle) instead of the derived one.
    resource_id: Option<String>,
}

impl SpecEventBuilder {
    /// `source_id` = CE source (`MAESTRO_SOURCE_ID`), `consumer` = work namespace (`MANAGEMENT_CLUSTER_CONSUMER`).
    pub fn new(source_id: impl Into<String>, consumer: impl Into<String>) -> Self {
        Self {
            source_id: source_id.into(),
            consumer: consumer.into(),
            resource_id: None,
        }
    }

    /// The same builder addressing the bundle `id` (placement id, or a bundle found by search)
    /// instead of the id derived from source, consumer and work name.
    #[must_use]
    pub fn with_resource_id(mut self, id: impl Into<String>) -> Self {
        self.resource_id = Some(id.into());
        self
    }

    /// The CE source (`MAESTRO_SOURCE_ID`).
    pub fn source_id(&self) -> &str {
        &self.source_id
    }

    /// The consumer the events address.
    pub fn consumer(&self) -> &str {
        &self.consumer
    }

    /// `create_request` for `work` with a fresh event id and the current time.
    pub fn create_request(&self, work: &Value) -> Result<CloudEvent, WorkError> {
        self.request(SpecAction::Create, work)
    }

    /// `update_request` for `work` (its generation or resourceversion annotation is the expected version).
    pub fn update_request(&self, work: &Value) -> Result<CloudEvent, WorkError> {
        self.request(SpecAction::Update, work)
    }

    /// `delete_request` for `work` (only its metadata is used).
    pub fn delete_request(&self, work: &Value) -> Result<CloudEvent, WorkError> {
        self.request(SpecAction::Delete, work)
    }

    /// `action` for `work` with a fresh event id and the current time.
    fn request(&self, action: SpecAction, work: &Value) -> Result<CloudEvent, WorkError> {
        self.build(action, work, &new_event_id(), jiff::Timestamp::now())
    }

    /// Deterministic builder behind the three requests.
    pub fn build(
        &self,
        action: SpecAction,
        work: &Value,
        event_id: &str,
        time: jiff::Timestamp,
    ) -> Result<CloudEvent, WorkError> {
        let meta = self.work_meta(work)?;
        let id = self.resource_id.clone().unwrap_or_else(|| {
            resource_id(&self.source_id, &self.consumer, &meta.name).to_string()
        });
        let version = spec_version(&meta)?;
        let meta = self.wire_meta(meta, &id, action, time);
        let mut ext = self.extensions(&meta, id, version)?;
        let (data, data_content_type) = if action == SpecAction::Delete {
            ext.insert("deletiontimestamp".to_owned(), AttrValue::Timestamp(time));
            (None, None)
        } else {
            (
                Some(manifest_bundle(work)?),
                Some("application/json".to_owned()),
            )
        };
        Ok(CloudEvent {
            id: event_id.to_owned(),
            source: self.source_id.clone(),
            spec_version: SPEC_VERSION.to_owned(),
            ty: action.event_type(),
            data_content_type,
            time: Some(time),
            extensions: ext,
            data,
        })
    }

    /// The work's metadata, checked: its name and the consumer are DNS-1123 labels, and its
    /// namespace, when set, is the consumer.
    fn work_meta(&self, work: &Value) -> Result<WorkMeta, WorkError> {
        let meta_in = work.get("metadata").cloned().unwrap_or(Value::Null);
        let meta: WorkMeta = serde_json::from_value(meta_in)
            .map_err(|e| invalid(format!("work metadata cannot be read: {e}")))?;
        validate_label("metadata.name", &meta.name)?;
        if !meta.namespace.is_empty() && meta.namespace != self.consumer {
            return Err(invalid(format!(
                "work namespace {:?} does not match the consumer {:?}",
                meta.namespace, self.consumer
            )));
        }
        validate_label("consumer", &self.consumer)?;
        Ok(meta)
    }

    /// The metadata as the `metadata` extension carries it: in the consumer's namespace, the
    /// resource `id` as uid, the annotated version (else the work's own, else `"0"`) as
    /// resourceVersion, no creation time; a delete request's deletion time.
    fn wire_meta(
        &self,
        mut meta: WorkMeta,
        id: &str,
        action: SpecAction,
        time: jiff::Timestamp,
    ) -> WorkMeta {
        meta.namespace = self.consumer.clone();
        meta.uid = id.to_owned();
        if let Some(v) = meta.annotations.get(RESOURCE_VERSION_ANNOTATION) {
            meta.resource_version = v.clone();
        } else if meta.resource_version.is_empty() {
            meta.resource_version = "0".to_owned();
        }
        meta.creation_timestamp = None;
        if action == SpecAction::Delete {
            meta.deletion_timestamp = Some(time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
        }
        meta
    }

    /// The extensions every spec request carries: consumer, resource id and version, the
    /// metadata and the log-tracing annotations as JSON text.
    fn extensions(
        &self,
        meta: &WorkMeta,
        id: String,
        version: i32,
    ) -> Result<BTreeMap<String, AttrValue>, WorkError> {
        let tracing: BTreeMap<&String, &String> = meta
            .annotations
            .iter()
            .filter(|(k, _)| k.starts_with(LOG_TRACING_PREFIX))
            .collect();
        Ok([
            ("clustername", AttrValue::String(self.consumer.clone())),
            ("resourceid", AttrValue::String(id)),
            ("resourceversion", AttrValue::Integer(version)),
            ("originalsource", AttrValue::String(String::new())),
            ("metadata", AttrValue::String(to_json_text(meta)?)),
            ("logtracing", AttrValue::String(to_json_text(&tracing)?)),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect())
    }
}

/// The spec version a request carries (`resourceversion`): the resource-version annotation when
/// set, else the generation; it must fit an int32.
fn spec_version(meta: &WorkMeta) -> Result<i32, WorkError> {
    let version = match meta.annotations.get(RESOURCE_VERSION_ANNOTATION) {
        Some(v) => v.parse::<i64>().map_err(|_| {
            invalid(format!(
                "annotation {RESOURCE_VERSION_ANNOTATION} is not an integer: {v:?}"
            ))
        })?,
        None => meta.generation,
    };
    i32::try_from(version).map_err(|_| invalid(format!("resource version {version} exceeds int32")))
}

/// JSON bytes of the ManifestBundle (`manifests`, `deleteOption`, `manifestConfigs`, `executer`) of a work.
fn manifest_bundle(work: &Value) -> Result<Vec<u8>, WorkError> {
    let spec = work.get("spec");
    let manifests = spec
        .and_then(|s| s.pointer("/workload/manifests"))
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty())
        .ok_or_else(|| invalid("spec.workload.manifests must be a non-empty array"))?;
    check_manifests(manifests)?;
    let mut bundle = serde_json::Map::new();
    bundle.insert("manifests".into(), Value::Array(manifests.clone()));
    // The work's `executor` is the bundle's `executer` (the Go type's spelling).
    for (field, key) in [
        ("deleteOption", "deleteOption"),
        ("manifestConfigs", "manifestConfigs"),
        ("executor", "executer"),
    ] {
        if let Some(v) = spec.and_then(|s| s.get(field)).filter(|v| !v.is_null()) {
            bundle.insert(key.into(), v.clone());
        }
    }
    serde_json::to_vec(&Value::Object(bundle)).map_err(|e| invalid(e.to_string()))
}

/// Every manifest has a `metadata.name` and no `generateName`, and together they are at most
/// [`MAX_MANIFESTS_BYTES`].
fn check_manifests(manifests: &[Value]) -> Result<(), WorkError> {
    for (i, m) in manifests.iter().enumerate() {
        let name = m.pointer("/metadata/name").and_then(Value::as_str);
        if name.is_none_or(str::is_empty) {
            return Err(invalid(format!(
                "spec.workload.manifests[{i}].metadata.name is required"
            )));
        }
        if m.pointer("/metadata/generateName").is_some() {
            return Err(invalid(format!(
                "spec.workload.manifests[{i}].metadata.generateName is not allowed"
            )));
        }
    }
    let size = serde_json::to_vec(manifests)
        .map_err(|e| invalid(e.to_string()))?
        .len();
    if size > MAX_MANIFESTS_BYTES {
        return Err(invalid(format!(
            "manifests are {size} bytes, the limit is {MAX_MANIFESTS_BYTES}"
        )));
    }
    Ok(())
}

/// A random (v4) event id.
pub fn new_event_id() -> String {
    let mut bytes = [0u8; 16];
    fastrand::fill(&mut bytes);
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .to_string()
}

/// DNS-1123 label check (≤ 63, lowercase alphanumerics and `-`, alphanumeric at both ends).
fn validate_label(what: &str, value: &str) -> Result<(), WorkError> {
    let ok = !value.is_empty()
        && value.len() <= 63
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !value.starts_with('-')
        && !value.ends_with('-');
    ok.then_some(())
        .ok_or_else(|| invalid(format!("{what} {value:?} is not a DNS-1123 label")))
}

fn to_json_text<T: Serialize>(value: &T) -> Result<String, WorkError> {
    serde_json::to_string(value).map_err(|e| invalid(e.to_string()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::work::maestro::proto::cloud_event_attribute_value::Attr;
    use crate::work::maestro::test_fixtures::fixture;
    use crate::work::maestro::testing::StatusEvent;

    const SOURCE: &str = "mw-client-example";
    const CONSUMER: &str = "7ff1a8f4-8811-49b4-8c19-9271bc51975e";

    /// The ManifestWork the Go client published in `cloudevents.grpcclient.json`.
    fn fixture_work() -> Option<Value> {
        let event = fixture("cloudevents.grpcclient.json")?;
        Some(serde_json::json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": "e44ec579-9646-549a-b679-db8d19d6da37",
                         "labels": {"maestro.resource.type": "2d18a7dc-c731-5753-8aa9-6b2f22e3b12b"}},
            "spec": {"workload": {"manifests": event["data"]["manifests"]},
                     "manifestConfigs": event["data"]["manifestConfigs"]}
        }))
    }

    fn fixture_create() -> Option<CloudEvent> {
        let expected = fixture("cloudevents.grpcclient.json")?;
        let time = expected["time"].as_str().unwrap().parse().unwrap();
        let event = SpecEventBuilder::new(SOURCE, CONSUMER)
            .build(
                SpecAction::Create,
                &fixture_work()?,
                expected["id"].as_str().unwrap(),
                time,
            )
            .unwrap();
        Some(event)
    }

    #[test]
    fn create_request_reproduces_the_go_client_fixture() {
        let Some(expected) = fixture("cloudevents.grpcclient.json") else {
            return;
        };
        let Some(event) = fixture_create() else {
            return;
        };
        // Attributes, every extension (metadata text byte for byte) and data.
        assert_eq!(event.to_json(), expected);
    }

    #[test]
    fn create_request_wire_attributes() {
        let Some(event) = fixture_create() else {
            return;
        };
        let wire = event.to_proto();
        let mut keys: Vec<&str> = wire.attributes.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "ce-clustername",
                "ce-logtracing",
                "ce-metadata",
                "ce-originalsource",
                "ce-resourceid",
                "ce-resourceversion",
                "ce-time",
                "contenttype"
            ]
        );
        let attr = |k: &str| wire.attributes[k].attr.clone().unwrap();
        assert_eq!(
            attr("contenttype"),
            Attr::CeString("application/json".into())
        );
        assert_eq!(attr("ce-resourceversion"), Attr::CeInteger(0));
        assert_eq!(
            attr("ce-resourceid"),
            Attr::CeString("55c61e54-a3f6-563d-9fec-b1fe297bdfdb".into())
        );
        assert!(matches!(attr("ce-time"), Attr::CeTimestamp(_)));
        assert_eq!(wire.spec_version, "1.0");
        assert_eq!(wire.source, SOURCE);
        let Some(crate::work::maestro::proto::cloud_event::Data::BinaryData(data)) = &wire.data
        else {
            panic!("data must be binary_data")
        };
        let data: Value = serde_json::from_slice(data).unwrap();
        assert_eq!(
            Some(data),
            fixture("cloudevents.grpcclient.json").map(|f| f["data"].clone())
        );
    }

    #[test]
    fn update_and_delete_requests() {
        let Some(mut work) = fixture_work() else {
            return;
        };
        work["metadata"]["generation"] = 4.into();
        work["metadata"]["annotations"] =
            serde_json::json!({"logging.open-cluster-management.io/trace": "abc", "other": "x"});
        let time: jiff::Timestamp = "2026-01-02T03:04:05.5Z".parse().unwrap();
        let builder = SpecEventBuilder::new(SOURCE, CONSUMER);
        let update = builder
            .build(SpecAction::Update, &work, "u1", time)
            .unwrap();
        insta::assert_json_snapshot!("update_request", update.to_json(), {".data.manifests" => "[manifests]"});
        assert_eq!(
            update.extension("resourceversion"),
            Some(&AttrValue::Integer(4))
        );
        let delete = builder
            .build(SpecAction::Delete, &work, "d1", time)
            .unwrap();
        insta::assert_json_snapshot!("delete_request", delete.to_json());
        assert!(delete.data.is_none() && delete.data_content_type.is_none());
        assert_eq!(
            delete.extension("deletiontimestamp"),
            Some(&AttrValue::Timestamp(time))
        );
    }

    #[test]
    fn invalid_works_are_rejected_locally() {
        let builder = SpecEventBuilder::new(SOURCE, CONSUMER);
        let Some(mut work) = fixture_work() else {
            return;
        };
        work["metadata"]["namespace"] = "other".into();
        assert!(matches!(
            builder.create_request(&work),
            Err(WorkError::Invalid { .. })
        ));
        let Some(mut work) = fixture_work() else {
            return;
        };
        work["metadata"]["name"] = "Not_A_Label".into();
        assert!(matches!(
            builder.create_request(&work),
            Err(WorkError::Invalid { .. })
        ));
        let Some(mut work) = fixture_work() else {
            return;
        };
        work["spec"]["workload"]["manifests"] = serde_json::json!([]);
        assert!(matches!(
            builder.create_request(&work),
            Err(WorkError::Invalid { .. })
        ));
        let Some(mut work) = fixture_work() else {
            return;
        };
        work["spec"]["workload"]["manifests"][0]["data"] = "x".repeat(MAX_MANIFESTS_BYTES).into();
        assert!(matches!(
            builder.create_request(&work),
            Err(WorkError::Invalid { .. })
        ));
        let Some(mut work) = fixture_work() else {
            return;
        };
        work["metadata"]["namespace"] = CONSUMER.into();
        let event = builder.create_request(&work).unwrap();
        assert_eq!(event.ty, SpecAction::Create.event_type());
        assert_ne!(
            event.id,
            builder.create_request(&work).unwrap().id,
            "fresh event ids"
        );
    }

    #[test]
    fn status_fixture_decodes_unchanged() {
        let Some(event) = fixture("cloudevents.status.maestro.json") else {
            return;
        };
        let event = CloudEvent::from_json(&event).unwrap();
        let status = StatusEvent::decode(&event).unwrap();
        assert_eq!(status.resource_id, "55c61e54-a3f6-563d-9fec-b1fe297bdfdb");
        assert_eq!(status.resource_version, 1);
        assert_eq!(status.sequence_id, "2000808179729960960");
        assert_eq!(status.cluster_name.as_deref(), Some(CONSUMER));
        assert_eq!(
            status.metadata.as_ref().unwrap().name,
            "e44ec579-9646-549a-b679-db8d19d6da37"
        );
        assert!(!status.is_deleted());
        let feedback = status.status.resource_status[0]
            .feedback("status")
            .unwrap()
            .unwrap();
        assert_eq!(feedback["conditions"][0]["type"], "Progressing");
    }

    #[test]
    fn status_over_the_wire_accepts_string_versions() {
        let Some(event) = fixture("cloudevents.status.maestro.json") else {
            return;
        };
        let event = CloudEvent::from_json(&event).unwrap();
        let mut wire = event.to_proto();
        wire.attributes.insert(
            "ce-resourceversion".into(),
            crate::work::maestro::proto::CloudEventAttributeValue {
                attr: Some(Attr::CeString("1".into())),
            },
        );
        let decoded = CloudEvent::from_proto(&wire).unwrap();
        assert_eq!(StatusEvent::decode(&decoded).unwrap().resource_version, 1);
        wire.attributes.remove("ce-sequenceid");
        let decoded = CloudEvent::from_proto(&wire).unwrap();
        assert!(matches!(
            StatusEvent::decode(&decoded),
            Err(WorkError::Protocol { .. })
        ));
    }

    #[test]
    fn spec_events_are_not_status_events() {
        let Some(event) = fixture_create() else {
            return;
        };
        assert!(StatusEvent::decode(&event).is_err());
    }
}

/// Pins what [`SpecEventBuilder::build`] makes of a range of works (every action, the metadata it
/// rewrites and keeps, the resource id and version sources, the bundle's optional fields) and the
/// errors it gives: each event's attributes, extensions (typed) and data bytes, each error's text.
/// Needs no fixture.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod pinned {
    use std::fmt::Write as _;

    use serde_json::json;

    use super::*;
    use crate::work::maestro::testing::StatusEvent;

    const SOURCE: &str = "hyperfleet-hypershift";
    const CONSUMER: &str = "mgmt-1";

    fn work(edit: impl FnOnce(&mut Value)) -> Value {
        let mut work = json!({
            "apiVersion": "work.open-cluster-management.io/v1",
            "kind": "ManifestWork",
            "metadata": {"name": "cluster-abc"},
            "spec": {"workload": {"manifests": [
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "clusters"}},
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "clusters"}, "data": {"k": "v"}},
            ]}},
        });
        edit(&mut work);
        work
    }

    fn everything(work: &mut Value) {
        work["metadata"] = json!({
            "name": "cluster-abc",
            "namespace": CONSUMER,
            "uid": "replaced",
            "resourceVersion": "12",
            "generation": 3,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"hyperfleet.io/cluster-id": "abc"},
            "annotations": {
                "logging.open-cluster-management.io/trace": "t-1",
                "logging.open-cluster-management.io/span": "s-1",
                "other": "x",
            },
            "ownerReferences": [{"kind": "X", "name": "y"}],
            "finalizers": ["a", "b"],
        });
        work["spec"]["deleteOption"] = json!({"propagationPolicy": "Foreground"});
        work["spec"]["manifestConfigs"] = json!([{"resourceIdentifier": {"name": "c"}}]);
        work["spec"]["executor"] = json!({"subject": {"type": "ServiceAccount"}});
    }

    fn cases() -> Vec<(&'static str, SpecAction, Value, Option<&'static str>)> {
        use SpecAction::{Create, Delete, Update};
        let annotated = |w: &mut Value| {
            everything(w);
            w["metadata"]["annotations"][RESOURCE_VERSION_ANNOTATION] = json!("7");
        };
        vec![
            ("minimal create", Create, work(|_| {}), None),
            ("minimal update", Update, work(|_| {}), None),
            ("minimal delete", Delete, work(|_| {}), None),
            ("everything, create", Create, work(everything), None),
            ("everything, update", Update, work(everything), None),
            ("everything, delete", Delete, work(everything), None),
            ("annotated version, update", Update, work(annotated), None),
            ("annotated version, delete", Delete, work(annotated), None),
            (
                "placed resource id",
                Update,
                work(everything),
                Some("placed-1"),
            ),
            (
                "null bundle options",
                Create,
                work(|w| {
                    w["spec"]["deleteOption"] = Value::Null;
                    w["spec"]["manifestConfigs"] = Value::Null;
                    w["spec"]["executor"] = Value::Null;
                }),
                None,
            ),
            (
                "delete without manifests",
                Delete,
                work(|w| w["spec"] = json!({})),
                None,
            ),
            (
                "no metadata",
                Create,
                work(|w| w["metadata"] = Value::Null),
                None,
            ),
            (
                "metadata not an object",
                Create,
                work(|w| w["metadata"] = json!(5)),
                None,
            ),
            (
                "name not a label",
                Create,
                work(|w| w["metadata"]["name"] = json!("Not_A_Label")),
                None,
            ),
            (
                "name too long",
                Create,
                work(|w| w["metadata"]["name"] = json!("a".repeat(64))),
                None,
            ),
            (
                "name ends with a dash",
                Create,
                work(|w| w["metadata"]["name"] = json!("a-")),
                None,
            ),
            (
                "other namespace",
                Update,
                work(|w| w["metadata"]["namespace"] = json!("other")),
                None,
            ),
            (
                "annotation not an integer",
                Update,
                work(|w| {
                    w["metadata"]["annotations"] = json!({RESOURCE_VERSION_ANNOTATION: "seven"});
                }),
                None,
            ),
            (
                "generation past int32",
                Update,
                work(|w| w["metadata"]["generation"] = json!(3_000_000_000_i64)),
                None,
            ),
            (
                "no manifests",
                Create,
                work(|w| w["spec"] = json!({})),
                None,
            ),
            (
                "empty manifests",
                Update,
                work(|w| w["spec"]["workload"]["manifests"] = json!([])),
                None,
            ),
            (
                "manifest without a name",
                Create,
                work(|w| w["spec"]["workload"]["manifests"][1]["metadata"] = json!({})),
                None,
            ),
            (
                "manifest with generateName",
                Create,
                work(|w| {
                    w["spec"]["workload"]["manifests"][0]["metadata"]["generateName"] = json!("n-");
                }),
                None,
            ),
            (
                "manifests too large",
                Create,
                work(|w| {
                    w["spec"]["workload"]["manifests"][1]["data"]["k"] =
                        json!("x".repeat(MAX_MANIFESTS_BYTES));
                }),
                None,
            ),
        ]
    }

    #[test]
    fn spec_events_and_errors_over_a_range_of_works() {
        let time: jiff::Timestamp = "2026-01-02T03:04:05.5Z".parse().unwrap();
        let mut out = String::new();
        for (name, action, work, resource_id) in cases() {
            let mut builder = SpecEventBuilder::new(SOURCE, CONSUMER);
            if let Some(id) = resource_id {
                builder = builder.with_resource_id(id);
            }
            let _ = writeln!(out, "[{name}]");
            match builder.build(action, &work, "e-1", time) {
                Ok(mut event) => {
                    let data = event.data.take();
                    let _ = writeln!(out, "{event:#?}");
                    if let Some(data) = data {
                        let _ = writeln!(out, "data bytes: {}", String::from_utf8_lossy(&data));
                    }
                }
                Err(err) => {
                    let _ = writeln!(out, "error: {err}");
                }
            }
        }
        let bad_consumer = SpecEventBuilder::new(SOURCE, "Mgmt_1").build(
            SpecAction::Create,
            &work(|_| {}),
            "e-1",
            time,
        );
        let _ = writeln!(out, "[consumer not a label]\n{bad_consumer:?}");
        insta::assert_snapshot!("spec_events_grid", out);
    }

    /// The same events as protobuf messages: every attribute (key order) and the rest, as bytes.
    #[test]
    fn spec_events_on_the_wire() {
        use prost::Message;
        let time: jiff::Timestamp = "2026-01-02T03:04:05.5Z".parse().unwrap();
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        let mut out = String::new();
        for (name, action, work, resource_id) in cases() {
            let mut builder = SpecEventBuilder::new(SOURCE, CONSUMER);
            if let Some(id) = resource_id {
                builder = builder.with_resource_id(id);
            }
            let Ok(event) = builder.build(action, &work, "e-1", time) else {
                continue;
            };
            let mut wire = event.to_proto();
            let _ = writeln!(out, "[{name}]");
            let mut attributes: Vec<_> = wire.attributes.drain().collect();
            attributes.sort_by(|a, b| a.0.cmp(&b.0));
            for (key, value) in attributes {
                let _ = writeln!(out, "  {key} = {}", hex(&value.encode_to_vec()));
            }
            let _ = writeln!(out, "  rest = {}", hex(&wire.encode_to_vec()));
        }
        insta::assert_snapshot!("spec_events_on_the_wire", out);
    }

    /// Status events with each required extension missing or of another kind, and odd data.
    #[test]
    fn status_events_decoded() {
        let base = || CloudEvent {
            id: "s-1".into(),
            source: "mgmt-1-work-agent".into(),
            spec_version: "1.0".into(),
            ty: format!("{DATA_TYPE}.status.update_request"),
            data_content_type: Some("application/json".into()),
            time: None,
            extensions: [
                ("resourceid", AttrValue::String("r-1".into())),
                ("resourceversion", AttrValue::Integer(2)),
                ("sequenceid", AttrValue::String("99".into())),
                ("clustername", AttrValue::String("mgmt-1".into())),
                ("statushash", AttrValue::String("h".into())),
                (
                    "metadata",
                    AttrValue::String(r#"{"name":"w","labels":{"a":"b"},"generation":3}"#.into()),
                ),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
            data: Some(
                br#"{"conditions":[{"type":"Deleted","status":"True"}],"resourceStatus":[{}]}"#
                    .to_vec(),
            ),
        };
        type Edit = fn(&mut CloudEvent);
        let edits: [(&str, Edit); 16] = [
            ("as is", |_| {}),
            ("spec type", |e| e.ty = SpecAction::Update.event_type()),
            ("other type", |e| e.ty = "x.status.update_request".into()),
            ("no resourceid", |e| {
                e.extensions.remove("resourceid");
            }),
            ("integer resourceid", |e| {
                e.extensions
                    .insert("resourceid".into(), AttrValue::Integer(5));
            }),
            ("string version", |e| {
                e.extensions
                    .insert("resourceversion".into(), AttrValue::String(" 7 ".into()));
            }),
            ("bad version", |e| {
                e.extensions
                    .insert("resourceversion".into(), AttrValue::String("x".into()));
            }),
            ("no version", |e| {
                e.extensions.remove("resourceversion");
            }),
            ("no sequenceid", |e| {
                e.extensions.remove("sequenceid");
            }),
            ("bytes sequenceid", |e| {
                e.extensions
                    .insert("sequenceid".into(), AttrValue::Bytes(vec![1]));
            }),
            ("empty metadata", |e| {
                e.extensions
                    .insert("metadata".into(), AttrValue::String(String::new()));
            }),
            ("bad metadata", |e| {
                e.extensions
                    .insert("metadata".into(), AttrValue::String("{".into()));
            }),
            ("no optional", |e| {
                e.extensions.remove("clustername");
                e.extensions.remove("statushash");
                e.extensions.remove("metadata");
            }),
            ("no data", |e| e.data = None),
            ("bad data", |e| e.data = Some(b"[]".to_vec())),
            ("not deleted", |e| {
                e.data = Some(br#"{"conditions":[{"type":"Deleted","status":"False"}]}"#.to_vec())
            }),
        ];
        let mut out = String::new();
        for (name, edit) in edits {
            let mut event = base();
            edit(&mut event);
            let status = StatusEvent::decode(&event);
            let deleted = status.as_ref().map(StatusEvent::is_deleted);
            let _ = writeln!(out, "[{name}] {status:?} deleted {deleted:?}");
        }
        for action in [SpecAction::Create, SpecAction::Update, SpecAction::Delete] {
            let _ = writeln!(out, "{action:?}: {}", action.event_type());
        }
        insta::assert_snapshot!("status_events_decoded", out);
    }
}
