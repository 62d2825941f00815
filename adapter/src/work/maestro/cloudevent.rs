//! CloudEvents ⇄ protobuf binding in binary mode (protocol §2.3), plus reading the CloudEvents JSON form.
//!
//! Wire rules: `datacontenttype` travels as `attributes["contenttype"]` (no prefix); `time` as `ce-time`; every
//! other optional attribute and every extension as `ce-<name>`; data as raw JSON bytes in `binary_data`.

use std::collections::BTreeMap;

use super::proto;
use crate::work::WorkError;

/// CloudEvents spec version sent and accepted.
pub const SPEC_VERSION: &str = "1.0";
/// Attribute key that carries `datacontenttype` (no `ce-` prefix).
pub const CONTENT_TYPE_KEY: &str = "contenttype";
/// Prefix of all other attribute/extension keys.
pub const ATTRIBUTE_PREFIX: &str = "ce-";
/// Type of the heartbeat events on the Subscribe stream; skip them before decoding.
pub const HEARTBEAT_TYPE: &str = "io.open-cluster-management.cloudevents.heartbeat";

/// A CloudEvent attribute or extension value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrValue {
    /// `ce_boolean`.
    Boolean(bool),
    /// `ce_integer` (int32).
    Integer(i32),
    /// `ce_string`.
    String(String),
    /// `ce_bytes`.
    Bytes(Vec<u8>),
    /// `ce_uri`.
    Uri(String),
    /// `ce_uri_ref`.
    UriRef(String),
    /// `ce_timestamp`.
    Timestamp(jiff::Timestamp),
}

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

    fn to_proto(&self) -> proto::CloudEventAttributeValue {
        use proto::cloud_event_attribute_value::Attr;
        let attr = match self {
            Self::Boolean(b) => Attr::CeBoolean(*b),
            Self::Integer(i) => Attr::CeInteger(*i),
            Self::String(s) => Attr::CeString(s.clone()),
            Self::Bytes(b) => Attr::CeBytes(b.clone()),
            Self::Uri(s) => Attr::CeUri(s.clone()),
            Self::UriRef(s) => Attr::CeUriRef(s.clone()),
            Self::Timestamp(t) => Attr::CeTimestamp(prost_types::Timestamp {
                seconds: t.as_second(),
                nanos: t.subsec_nanosecond(),
            }),
        };
        proto::CloudEventAttributeValue { attr: Some(attr) }
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

    fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Self::Boolean(b) => Value::Bool(*b),
            Self::Integer(i) => Value::from(*i),
            Self::String(s) | Self::Uri(s) | Self::UriRef(s) => Value::String(s.clone()),
            Self::Bytes(b) => Value::Array(b.iter().map(|x| Value::from(*x)).collect()),
            Self::Timestamp(t) => Value::String(t.to_string()),
        }
    }
}

/// A CloudEvent, independent of its encoding.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CloudEvent {
    /// `id`.
    pub id: String,
    /// `source`.
    pub source: String,
    /// `specversion` (always `1.0` here).
    pub spec_version: String,
    /// `type`.
    pub ty: String,
    /// `datacontenttype`.
    pub data_content_type: Option<String>,
    /// `time`.
    pub time: Option<jiff::Timestamp>,
    /// Other optional attributes (`subject`, `dataschema`) and all extensions, by bare name.
    pub extensions: BTreeMap<String, AttrValue>,
    /// Data as raw bytes (JSON for every event used here).
    pub data: Option<Vec<u8>>,
}

impl CloudEvent {
    /// Encodes in protobuf binary mode (§2.3).
    pub fn to_proto(&self) -> proto::CloudEvent {
        let mut attributes = std::collections::HashMap::new();
        if let Some(ct) = &self.data_content_type {
            attributes.insert(
                CONTENT_TYPE_KEY.to_owned(),
                AttrValue::String(ct.clone()).to_proto(),
            );
        }
        if let Some(t) = self.time {
            attributes.insert(
                format!("{ATTRIBUTE_PREFIX}time"),
                AttrValue::Timestamp(t).to_proto(),
            );
        }
        for (name, value) in &self.extensions {
            attributes.insert(format!("{ATTRIBUTE_PREFIX}{name}"), value.to_proto());
        }
        proto::CloudEvent {
            id: self.id.clone(),
            source: self.source.clone(),
            spec_version: self.spec_version.clone(),
            r#type: self.ty.clone(),
            attributes,
            data: self.data.clone().map(proto::cloud_event::Data::BinaryData),
        }
    }

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
            let json: serde_json::Value = serde_json::from_slice(&bytes)
                .map_err(|e| protocol(&format!("structured cloudevent: {e}")))?;
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
            let value = AttrValue::from_proto(value).ok_or_else(|| {
                protocol(&format!("attribute {key:?} has no or an invalid value"))
            })?;
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
    pub fn from_json(json: &serde_json::Value) -> Result<Self, WorkError> {
        let obj = json
            .as_object()
            .ok_or_else(|| protocol("cloudevent JSON is not an object"))?;
        let text = |k: &str| obj.get(k).and_then(|v| v.as_str()).map(str::to_owned);
        let mut out = Self {
            id: text("id").unwrap_or_default(),
            source: text("source").unwrap_or_default(),
            spec_version: text("specversion").unwrap_or_default(),
            ty: text("type").unwrap_or_default(),
            data_content_type: text("datacontenttype"),
            time: match text("time") {
                Some(t) => Some(
                    t.parse()
                        .map_err(|e| protocol(&format!("time {t:?}: {e}")))?,
                ),
                None => None,
            },
            extensions: BTreeMap::new(),
            data: match obj.get("data") {
                Some(serde_json::Value::Null) | None => None,
                Some(v) => Some(serde_json::to_vec(v).map_err(|e| protocol(&e.to_string()))?),
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
                serde_json::Value::String(s) => AttrValue::String(s.clone()),
                serde_json::Value::Bool(b) => AttrValue::Boolean(*b),
                serde_json::Value::Number(n) => AttrValue::Integer(
                    n.as_i64()
                        .and_then(|i| i32::try_from(i).ok())
                        .ok_or_else(|| protocol(&format!("extension {key:?} is not an int32")))?,
                ),
                _ => {
                    return Err(protocol(&format!(
                        "extension {key:?} has an unsupported JSON type"
                    )));
                }
            };
            out.extensions.insert(key.clone(), attr);
        }
        Ok(out)
    }

    /// Renders the CloudEvents JSON (structured) form; `data` is embedded as JSON when it parses as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let mut obj = serde_json::Map::new();
        obj.insert("specversion".into(), self.spec_version.clone().into());
        obj.insert("id".into(), self.id.clone().into());
        obj.insert("source".into(), self.source.clone().into());
        obj.insert("type".into(), self.ty.clone().into());
        if let Some(ct) = &self.data_content_type {
            obj.insert("datacontenttype".into(), ct.clone().into());
        }
        if let Some(t) = self.time {
            obj.insert("time".into(), t.to_string().into());
        }
        for (name, value) in &self.extensions {
            obj.insert(name.clone(), value.to_json());
        }
        if let Some(data) = &self.data {
            let value = serde_json::from_slice(data).unwrap_or_else(|_| {
                serde_json::Value::String(String::from_utf8_lossy(data).into_owned())
            });
            obj.insert("data".into(), value);
        }
        serde_json::Value::Object(obj)
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

fn protocol(message: &str) -> WorkError {
    WorkError::Protocol {
        message: message.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::type_complexity)]
mod tests {
    use super::*;

    #[test]
    fn binary_mode_keys_follow_the_binding() {
        let mut event = CloudEvent {
            id: "1".into(),
            source: "s".into(),
            spec_version: SPEC_VERSION.into(),
            ty: "t".into(),
            data_content_type: Some("application/json".into()),
            time: Some("2025-12-13T13:32:30.308693Z".parse().unwrap()),
            data: Some(b"{}".to_vec()),
            ..Default::default()
        };
        event
            .extensions
            .insert("resourceversion".into(), AttrValue::Integer(3));
        let wire = event.to_proto();
        let mut keys: Vec<_> = wire.attributes.keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, ["ce-resourceversion", "ce-time", "contenttype"]);
        let ts = &wire.attributes["ce-time"];
        assert_eq!(
            ts.attr,
            Some(proto::cloud_event_attribute_value::Attr::CeTimestamp(
                prost_types::Timestamp {
                    seconds: 1_765_632_750,
                    nanos: 308_693_000
                }
            ))
        );
        assert_eq!(CloudEvent::from_proto(&wire).unwrap(), event);
    }

    #[test]
    fn reader_ignores_unprefixed_keys_and_accepts_string_integers() {
        let mut wire = CloudEvent {
            spec_version: "1.0".into(),
            ..Default::default()
        }
        .to_proto();
        wire.attributes
            .insert("resourceversion".into(), AttrValue::Integer(9).to_proto());
        wire.attributes.insert(
            "ce-resourceversion".into(),
            AttrValue::String("1".into()).to_proto(),
        );
        wire.attributes.insert(
            "ce-deletiontimestamp".into(),
            AttrValue::String("2026-01-01T00:00:00Z".into()).to_proto(),
        );
        let event = CloudEvent::from_proto(&wire).unwrap();
        assert_eq!(event.extensions.len(), 2);
        assert_eq!(
            event
                .extension("resourceversion")
                .and_then(AttrValue::as_integer),
            Some(1)
        );
        assert_eq!(
            event
                .extension("deletiontimestamp")
                .and_then(AttrValue::as_timestamp),
            Some("2026-01-01T00:00:00Z".parse().unwrap())
        );
    }

    fn attr_value() -> impl proptest::strategy::Strategy<Value = AttrValue> {
        use proptest::prelude::*;
        prop_oneof![
            any::<bool>().prop_map(AttrValue::Boolean),
            any::<i32>().prop_map(AttrValue::Integer),
            ".*".prop_map(AttrValue::String),
            proptest::collection::vec(any::<u8>(), 0..16).prop_map(AttrValue::Bytes),
            (0i64..4_000_000_000, 0i32..1_000_000_000)
                .prop_map(|(s, n)| AttrValue::Timestamp(jiff::Timestamp::new(s, n).unwrap())),
        ]
    }

    proptest::proptest! {
        #[test]
        fn proto_round_trip(
            ext in proptest::collection::btree_map("[a-z][a-z0-9]{0,12}", attr_value(), 1..6),
            data in proptest::option::of(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)),
        ) {
            let ext: BTreeMap<String, AttrValue> = ext.into_iter().filter(|(k, _)| k != "time").collect();
            let event = CloudEvent {
                id: "id".into(), source: "src".into(), spec_version: SPEC_VERSION.into(), ty: "t".into(),
                data_content_type: Some("application/json".into()), time: None, extensions: ext, data,
            };
            proptest::prop_assert_eq!(CloudEvent::from_proto(&event.to_proto()).unwrap(), event);
        }

        #[test]
        fn integer_extensions_accept_native_and_string(v in proptest::prelude::any::<i32>()) {
            proptest::prop_assert_eq!(AttrValue::Integer(v).as_integer(), Some(i64::from(v)));
            proptest::prop_assert_eq!(AttrValue::String(v.to_string()).as_integer(), Some(i64::from(v)));
        }
    }

    #[test]
    fn empty_spec_version_is_rejected() {
        assert!(CloudEvent::from_proto(&proto::CloudEvent::default()).is_err());
    }
}
