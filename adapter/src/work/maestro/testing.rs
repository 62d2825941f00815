//! What only the tests, the testbed and the fuzz targets need of the Maestro client, compiled for
//! the crate's tests and with the feature `testing`: the client's two transports and its event
//! builder; and, of the CloudEvents the adapter only publishes, an event read back from protobuf
//! binary mode the way Maestro's reader does and from its JSON (structured) form, its JSON form
//! rendered, and the status events of the Subscribe stream decoded.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::bundle::{Condition, ManifestCondition};
use super::client::{BundleApi, MaestroWorkClient};
use super::cloudevent::{ATTRIBUTE_PREFIX, AttrValue, CONTENT_TYPE_KEY, CloudEvent};
use super::error::protocol;
use super::grpc::Publisher;
use super::manifestbundle::{DATA_TYPE, SpecEventBuilder, WorkMeta};
use super::proto;
use super::rest::RestClient;
use crate::work::WorkError;

impl MaestroWorkClient {
    /// The REST client (for list queries).
    pub fn rest(&self) -> &RestClient {
        &self.api.rest
    }

    /// The gRPC publisher (for update/delete requests built with [`SpecEventBuilder`]).
    pub fn publisher(&self) -> &Publisher {
        &self.api.publisher
    }
}

impl<A: BundleApi> MaestroWorkClient<A> {
    /// The spec event builder of this source/consumer.
    pub fn events(&self) -> &SpecEventBuilder {
        &self.events
    }
}

/// Type of the heartbeat events on the Subscribe stream; skip them before decoding.
pub const HEARTBEAT_TYPE: &str = "io.open-cluster-management.cloudevents.heartbeat";

impl AttrValue {
    /// The value as an integer: native `ce_integer` or a string holding a decimal integer (CE `ToInteger`).
    pub fn as_integer(&self) -> Option<i64> {
        match self {
            Self::Integer(i) => Some(i64::from(*i)),
            Self::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// The value as a string (CE `ToString` for the textual kinds; integers and booleans are rendered).
    pub fn as_string(&self) -> Option<String> {
        match self {
            Self::String(s) | Self::Uri(s) | Self::UriRef(s) => Some(s.clone()),
            Self::Integer(i) => Some(i.to_string()),
            Self::Boolean(b) => Some(b.to_string()),
            Self::Timestamp(t) => Some(t.to_string()),
            Self::Bytes(_) => None,
        }
    }

    /// The value as a timestamp: native `ce_timestamp` or an RFC 3339 string (CE `ToTime`).
    pub fn as_timestamp(&self) -> Option<jiff::Timestamp> {
        match self {
            Self::Timestamp(t) => Some(*t),
            Self::String(s) => s.parse().ok(),
            _ => None,
        }
    }

    fn from_proto(value: &proto::CloudEventAttributeValue) -> Option<Self> {
        use proto::cloud_event_attribute_value::Attr;
        Some(match value.attr.as_ref()? {
            Attr::CeBoolean(b) => Self::Boolean(*b),
            Attr::CeInteger(i) => Self::Integer(*i),
            Attr::CeString(s) => Self::String(s.clone()),
            Attr::CeBytes(b) => Self::Bytes(b.clone()),
            Attr::CeUri(s) => Self::Uri(s.clone()),
            Attr::CeUriRef(s) => Self::UriRef(s.clone()),
            Attr::CeTimestamp(t) => Self::Timestamp(jiff::Timestamp::new(t.seconds, t.nanos).ok()?),
        })
    }
}

impl CloudEvent {
    /// Decodes a protobuf binary-mode event the way Maestro's reader does (§2.3): keys without the `ce-` prefix
    /// other than `contenttype` are ignored; `ce-time` is the time attribute; `text_data` is accepted as bytes.
    /// Structured mode (`contenttype` = `application/cloudevents+json`) is decoded from the JSON in the data.
    pub fn from_proto(event: &proto::CloudEvent) -> Result<Self, WorkError> {
        if event.spec_version.is_empty() {
            return Err(protocol("cloudevent without spec_version"));
        }
        let content_type = event
            .attributes
            .get(CONTENT_TYPE_KEY)
            .and_then(AttrValue::from_proto)
            .and_then(|v| v.as_string());
        let data = match &event.data {
            Some(proto::cloud_event::Data::BinaryData(b)) => Some(b.clone()),
            Some(proto::cloud_event::Data::TextData(t)) => Some(t.clone().into_bytes()),
            Some(proto::cloud_event::Data::ProtoData(any)) => Some(any.value.clone()),
            None => None,
        };
        if content_type
            .as_deref()
            .is_some_and(|ct| ct.starts_with("application/cloudevents+json"))
        {
            let bytes = data.unwrap_or_default();
            let json: Value = serde_json::from_slice(&bytes)
                .map_err(|e| protocol(format!("structured cloudevent: {e}")))?;
            return Self::from_json(&json);
        }
        let mut out = Self {
            id: event.id.clone(),
            source: event.source.clone(),
            spec_version: event.spec_version.clone(),
            ty: event.r#type.clone(),
            data_content_type: content_type,
            time: None,
            extensions: BTreeMap::new(),
            data,
        };
        for (key, value) in &event.attributes {
            let Some(name) = key.strip_prefix(ATTRIBUTE_PREFIX) else {
                continue;
            };
            let value = AttrValue::from_proto(value)
                .ok_or_else(|| protocol(format!("attribute {key:?} has no or an invalid value")))?;
            if name == "time" {
                out.time = Some(
                    value
                        .as_timestamp()
                        .ok_or_else(|| protocol("ce-time is not a timestamp"))?,
                );
            } else {
                out.extensions.insert(name.to_owned(), value);
            }
        }
        Ok(out)
    }

    /// Reads the CloudEvents JSON (structured) form, e.g. the fixture files. Extension values keep their JSON
    /// type (string, integer, boolean).
    pub fn from_json(json: &Value) -> Result<Self, WorkError> {
        let obj = json
            .as_object()
            .ok_or_else(|| protocol("cloudevent JSON is not an object"))?;
        let text = |k: &str| obj.get(k).and_then(|v| v.as_str()).map(str::to_owned);
        let time = text("time")
            .map(|t| t.parse().map_err(|e| protocol(format!("time {t:?}: {e}"))))
            .transpose()?;
        let mut out = Self {
            id: text("id").unwrap_or_default(),
            source: text("source").unwrap_or_default(),
            spec_version: text("specversion").unwrap_or_default(),
            ty: text("type").unwrap_or_default(),
            data_content_type: text("datacontenttype"),
            time,
            extensions: BTreeMap::new(),
            data: match obj.get("data") {
                Some(Value::Null) | None => None,
                Some(v) => Some(serde_json::to_vec(v).map_err(|e| protocol(e.to_string()))?),
            },
        };
        for (key, value) in obj {
            if matches!(
                key.as_str(),
                "id" | "source"
                    | "specversion"
                    | "type"
                    | "datacontenttype"
                    | "time"
                    | "data"
                    | "data_base64"
            ) {
                continue;
            }
            let attr = match value {
                Value::String(s) => AttrValue::String(s.clone()),
                Value::Bool(b) => AttrValue::Boolean(*b),
                Value::Number(n) => AttrValue::Integer(
                    n.as_i64()
                        .and_then(|i| i32::try_from(i).ok())
                        .ok_or_else(|| protocol(format!("extension {key:?} is not an int32")))?,
                ),
                _ => {
                    return Err(protocol(format!(
                        "extension {key:?} has an unsupported JSON type"
                    )));
                }
            };
            out.extensions.insert(key.clone(), attr);
        }
        Ok(out)
    }

    /// Renders the CloudEvents JSON (structured) form; `data` is embedded as JSON when it parses as JSON.
    pub fn to_json(&self) -> Value {
        let mut obj = serde_json::Map::new();
        obj.insert("specversion".into(), self.spec_version.clone().into());
        obj.insert("id".into(), self.id.clone().into());
        obj.insert("source".into(), self.source.clone().into());
        obj.insert("type".into(), self.ty.clone().into());
        for (name, value) in self.optional_attributes("datacontenttype", "") {
            obj.insert(name, serde_json::to_value(value).unwrap_or_default());
        }
        if let Some(data) = &self.data {
            let value = serde_json::from_slice(data)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(data).into_owned()));
            obj.insert("data".into(), value);
        }
        Value::Object(obj)
    }

    /// The extension `name`, if present.
    pub fn extension(&self, name: &str) -> Option<&AttrValue> {
        self.extensions.get(name)
    }

    /// True for the heartbeat events of the Subscribe stream.
    pub fn is_heartbeat(&self) -> bool {
        self.ty == HEARTBEAT_TYPE
    }
}

/// `ManifestBundleStatus`, the data of a status event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ManifestBundleStatus {
    /// The stored spec echoed by the server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest_bundle: Option<Value>,
    /// Work-level conditions.
    pub conditions: Vec<Condition>,
    /// Flat per-manifest status.
    pub resource_status: Vec<ManifestCondition>,
}

/// A decoded status event (server → source), §3.5/§3.8.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusEvent {
    /// `resourceid`.
    pub resource_id: String,
    /// `resourceversion`: the spec version the agent applied (int or string on the wire).
    pub resource_version: i64,
    /// `sequenceid`.
    pub sequence_id: String,
    /// `clustername`, if present.
    pub cluster_name: Option<String>,
    /// `statushash`, if present.
    pub status_hash: Option<String>,
    /// The spec metadata (`metadata` extension), if present.
    pub metadata: Option<WorkMeta>,
    /// The data.
    pub status: ManifestBundleStatus,
}

impl StatusEvent {
    /// Decodes a status event; `resourceid`, `resourceversion` and `sequenceid` are required.
    pub fn decode(event: &CloudEvent) -> Result<Self, WorkError> {
        let prefix = format!("{DATA_TYPE}.status.");
        if !event.ty.starts_with(&prefix) {
            return Err(protocol(format!(
                "not a manifestbundle status event: type {:?}",
                event.ty
            )));
        }
        let string = |name: &str| event.extension(name).and_then(AttrValue::as_string);
        let resource_id =
            string("resourceid").ok_or_else(|| protocol("status event without resourceid"))?;
        let resource_version = event
            .extension("resourceversion")
            .and_then(AttrValue::as_integer)
            .ok_or_else(|| protocol("status event without an integer resourceversion"))?;
        let sequence_id =
            string("sequenceid").ok_or_else(|| protocol("status event without sequenceid"))?;
        let metadata = string("metadata")
            .filter(|text| !text.is_empty())
            .map(|text| serde_json::from_str(&text))
            .transpose()
            .map_err(|e| protocol(format!("metadata extension is not JSON: {e}")))?;
        let status = match &event.data {
            Some(bytes) => serde_json::from_slice(bytes)
                .map_err(|e| protocol(format!("status data is not a ManifestBundleStatus: {e}")))?,
            None => ManifestBundleStatus::default(),
        };
        Ok(Self {
            resource_id,
            resource_version,
            sequence_id,
            cluster_name: string("clustername"),
            status_hash: string("statushash"),
            metadata,
            status,
        })
    }

    /// True when the agent reported the work deleted (`Deleted=True`): the final event for this resource.
    pub fn is_deleted(&self) -> bool {
        self.status
            .conditions
            .iter()
            .any(|c| c.type_ == "Deleted" && c.status == "True")
    }
}
