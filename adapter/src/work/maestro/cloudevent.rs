//! CloudEvents → protobuf binding in binary mode (protocol §2.3), as the adapter publishes them
//! (reading them back, and their JSON form, only the tests need: `testing.rs`).
//!
//! Wire rules: `datacontenttype` travels as `attributes["contenttype"]` (no prefix); `time` as `ce-time`; every
//! other optional attribute and every extension as `ce-<name>`; data as raw JSON bytes in `binary_data`.

use std::collections::BTreeMap;

use super::proto;

/// CloudEvents spec version sent and accepted.
pub const SPEC_VERSION: &str = "1.0";
/// Attribute key that carries `datacontenttype` (no `ce-` prefix).
pub const CONTENT_TYPE_KEY: &str = "contenttype";
/// Prefix of all other attribute/extension keys.
pub const ATTRIBUTE_PREFIX: &str = "ce-";

/// A CloudEvent attribute or extension value. Its JSON form (`Serialize`) is the bare value: a
/// string, number or boolean, bytes as a list of numbers, a timestamp in RFC 3339.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
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
    /// `datacontenttype` (under `content_type_key`), `time` and every extension (under `prefix`
    /// and their name): the attributes both encodings write besides the four required ones.
    pub(super) fn optional_attributes(
        &self,
        content_type_key: &str,
        prefix: &str,
    ) -> Vec<(String, AttrValue)> {
        let mut out = Vec::new();
        if let Some(ct) = &self.data_content_type {
            out.push((content_type_key.to_owned(), AttrValue::String(ct.clone())));
        }
        if let Some(t) = self.time {
            out.push((format!("{prefix}time"), AttrValue::Timestamp(t)));
        }
        for (name, value) in &self.extensions {
            out.push((format!("{prefix}{name}"), value.clone()));
        }
        out
    }

    /// Encodes in protobuf binary mode (§2.3).
    pub fn to_proto(&self) -> proto::CloudEvent {
        proto::CloudEvent {
            id: self.id.clone(),
            source: self.source.clone(),
            spec_version: self.spec_version.clone(),
            r#type: self.ty.clone(),
            attributes: self
                .optional_attributes(CONTENT_TYPE_KEY, ATTRIBUTE_PREFIX)
                .into_iter()
                .map(|(key, value)| (key, value.to_proto()))
                .collect(),
            data: self.data.clone().map(proto::cloud_event::Data::BinaryData),
        }
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

/// Pins the CloudEvent codecs over the `maestro_cloudevent` fuzz corpus and the recorded real
/// events (the adapter's requests, the Subscribe stream): each decoded event, its JSON form, its
/// protobuf encoding (attribute by attribute, in key order, and the rest of the message as
/// bytes) and the status event it decodes to.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod pinned {
    use std::fmt::Write as _;

    use prost::Message;
    use serde_json::Value;

    use super::*;
    use crate::work::WorkError;
    use crate::work::maestro::error::pin_inputs::{corpus, digest, real};
    use crate::work::maestro::testing::StatusEvent;
    use proto::cloud_event_attribute_value::Attr;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn wire_lines(out: &mut String, wire: &proto::CloudEvent) {
        let mut keys: Vec<&String> = wire.attributes.keys().collect();
        keys.sort();
        for key in keys {
            let value = &wire.attributes[key];
            let bytes = value.encode_to_vec();
            let encoded = if bytes.len() > 64 {
                digest(&bytes)
            } else {
                hex(&bytes)
            };
            let _ = writeln!(out, "    {key}: {:?} = {encoded}", value.attr);
        }
        let rest = proto::CloudEvent {
            attributes: std::collections::HashMap::new(),
            ..wire.clone()
        };
        let _ = writeln!(out, "    rest: {}", digest(&rest.encode_to_vec()));
    }

    fn event_lines(out: &mut String, event: Result<CloudEvent, WorkError>) {
        match event {
            Err(e) => {
                let _ = writeln!(out, "  refused: {e:?}");
            }
            Ok(event) => {
                let shown = CloudEvent {
                    data: event.data.as_deref().map(|d| {
                        if d.len() > 64 {
                            digest(d).into_bytes()
                        } else {
                            d.to_vec()
                        }
                    }),
                    ..event.clone()
                };
                let _ = writeln!(out, "  event: {shown:?}");
                let json = event.to_json().to_string();
                let json = if json.len() > 300 {
                    digest(json.as_bytes())
                } else {
                    json
                };
                let _ = writeln!(out, "  json: {json}");
                let _ = writeln!(out, "  heartbeat: {}", event.is_heartbeat());
                let _ = writeln!(out, "  wire:");
                let wire = event.to_proto();
                wire_lines(out, &wire);
                let again = CloudEvent::from_proto(&wire);
                let _ = writeln!(out, "  again: {}", again.as_ref().ok() == Some(&event));
                let status = StatusEvent::decode(&event).map(|s| {
                    let bundle = serde_json::to_vec(&s.status).unwrap();
                    (
                        s.resource_id,
                        s.resource_version,
                        s.sequence_id,
                        s.cluster_name,
                        s.status_hash,
                        s.metadata,
                        s.status.conditions,
                        digest(&bundle),
                    )
                });
                let _ = writeln!(out, "  status: {status:?}");
            }
        }
    }

    #[test]
    fn maestro_cloudevent_corpus() {
        let mut out = String::new();
        for (name, data) in corpus("maestro_cloudevent") {
            let _ = writeln!(out, "[{name}]");
            if data.first() == Some(&b'{') {
                let Ok(json) = serde_json::from_slice::<Value>(&data) else {
                    let _ = writeln!(out, "  not JSON");
                    continue;
                };
                event_lines(&mut out, CloudEvent::from_json(&json));
            } else {
                let Ok(wire) = proto::CloudEvent::decode(data.as_slice()) else {
                    let _ = writeln!(out, "  not protobuf");
                    continue;
                };
                event_lines(&mut out, CloudEvent::from_proto(&wire));
            }
        }
        insta::assert_snapshot!("cloudevent_corpus", out);
    }

    /// A recorded event (the protobuf message rendered as JSON, see the recordings' README).
    fn recorded(event: &Value) -> proto::CloudEvent {
        let text = |k: &str| event[k].as_str().unwrap_or_default().to_owned();
        let attributes = event["attributes"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(key, value)| {
                let (kind, v) = value.as_object().unwrap().iter().next().unwrap();
                let attr = match kind.as_str() {
                    "ce_string" => Attr::CeString(v.as_str().unwrap().to_owned()),
                    "ce_integer" => Attr::CeInteger(i32::try_from(v.as_i64().unwrap()).unwrap()),
                    "ce_boolean" => Attr::CeBoolean(v.as_bool().unwrap()),
                    "ce_uri" => Attr::CeUri(v.as_str().unwrap().to_owned()),
                    "ce_timestamp" => {
                        let t: jiff::Timestamp = v.as_str().unwrap().parse().unwrap();
                        Attr::CeTimestamp(prost_types::Timestamp {
                            seconds: t.as_second(),
                            nanos: t.subsec_nanosecond(),
                        })
                    }
                    other => panic!("attribute kind {other}"),
                };
                (
                    key.clone(),
                    proto::CloudEventAttributeValue { attr: Some(attr) },
                )
            })
            .collect();
        let data = match event["data_field"].as_str() {
            Some("binary_data") => Some(proto::cloud_event::Data::BinaryData(
                serde_json::to_vec(&event["binary_data"]).unwrap(),
            )),
            Some("text_data") => Some(proto::cloud_event::Data::TextData(
                event["text_data"].as_str().unwrap().to_owned(),
            )),
            _ => None,
        };
        proto::CloudEvent {
            id: text("id"),
            source: text("source"),
            spec_version: text("spec_version"),
            r#type: text("type"),
            attributes,
            data,
        }
    }

    #[test]
    fn recorded_events() {
        let Some(real) = real() else { return };
        let mut out = String::new();
        for (name, answer) in real {
            let request = &answer["request"];
            if let Some(event) = request.get("event_as_logged_by_server") {
                let _ = writeln!(out, "[{name} json]");
                event_lines(&mut out, CloudEvent::from_json(event));
            }
            if let Some(event) = request.get("event") {
                let _ = writeln!(out, "[{name} request]");
                event_lines(&mut out, CloudEvent::from_proto(&recorded(event)));
            }
            if let Some(events) = answer["body"].get("events") {
                let heartbeat = &answer["body"]["heartbeats"]["first"];
                let _ = writeln!(out, "[{name} heartbeat]");
                event_lines(&mut out, CloudEvent::from_proto(&recorded(heartbeat)));
                for (i, event) in events.as_array().unwrap().iter().enumerate() {
                    let _ = writeln!(out, "[{name} event {i}]");
                    event_lines(&mut out, CloudEvent::from_proto(&recorded(&event["event"])));
                }
            }
        }
        insta::assert_snapshot!("recorded_events", out);
    }

    /// Edited wire events: every attribute kind under every key form, structured mode, data forms.
    #[test]
    fn edited_wire_events() {
        let value = |attr: Attr| proto::CloudEventAttributeValue { attr: Some(attr) };
        let ts = prost_types::Timestamp {
            seconds: 1_765_632_750,
            nanos: 308_693_000,
        };
        let attrs = [
            Attr::CeBoolean(true),
            Attr::CeInteger(-3),
            Attr::CeString("7".into()),
            Attr::CeString("2026-01-01T00:00:00Z".into()),
            Attr::CeBytes(vec![0, 255]),
            Attr::CeUri("https://x".into()),
            Attr::CeUriRef("/x".into()),
            Attr::CeTimestamp(ts),
            Attr::CeTimestamp(prost_types::Timestamp {
                seconds: i64::MAX,
                nanos: 0,
            }),
        ];
        let base = proto::CloudEvent {
            id: "1".into(),
            source: "s".into(),
            spec_version: "1.0".into(),
            r#type: "t".into(),
            attributes: std::collections::HashMap::new(),
            data: None,
        };
        let mut out = String::new();
        for key in [
            "ce-time",
            "ce-resourceversion",
            "contenttype",
            "resourceid",
            "ce-",
        ] {
            for attr in &attrs {
                let mut wire = base.clone();
                wire.attributes.insert(key.into(), value(attr.clone()));
                let _ = writeln!(out, "[{key} = {attr:?}]");
                event_lines(&mut out, CloudEvent::from_proto(&wire));
            }
        }
        let mut wire = base.clone();
        wire.attributes.insert(
            "ce-x".into(),
            proto::CloudEventAttributeValue { attr: None },
        );
        let _ = writeln!(out, "[no value]");
        event_lines(&mut out, CloudEvent::from_proto(&wire));
        for data in [
            Some(proto::cloud_event::Data::TextData("{\"a\":1}".into())),
            Some(proto::cloud_event::Data::ProtoData(prost_types::Any {
                type_url: "u".into(),
                value: b"[1]".to_vec(),
            })),
            Some(proto::cloud_event::Data::BinaryData(b"not json".to_vec())),
        ] {
            let mut wire = base.clone();
            wire.data = data.clone();
            let _ = writeln!(out, "[data {data:?}]");
            event_lines(&mut out, CloudEvent::from_proto(&wire));
        }
        for structured in [
            r#"{"specversion":"1.0","id":"x","source":"s","type":"t","ext":"v","data":{"a":1}}"#,
            "not json",
            "",
        ] {
            let mut wire = base.clone();
            wire.attributes.insert(
                "contenttype".into(),
                value(Attr::CeString(
                    "application/cloudevents+json; charset=utf-8".into(),
                )),
            );
            if !structured.is_empty() {
                wire.data = Some(proto::cloud_event::Data::BinaryData(structured.into()));
            }
            let _ = writeln!(out, "[structured {structured}]");
            event_lines(&mut out, CloudEvent::from_proto(&wire));
        }
        let mut wire = base.clone();
        wire.spec_version = String::new();
        let _ = writeln!(out, "[no spec version]");
        event_lines(&mut out, CloudEvent::from_proto(&wire));
        for json in [
            serde_json::json!({"specversion": "1.0", "id": 5, "type": "t", "time": "2026-01-01T00:00:00.5+01:00", "b": true, "n": 3, "data": null, "data_base64": "x"}),
            serde_json::json!({"time": "yesterday"}),
            serde_json::json!({"n": 3_000_000_000_i64}),
            serde_json::json!({"n": 1.5}),
            serde_json::json!({"o": {}}),
            serde_json::json!({"l": []}),
            serde_json::json!({"z": null}),
            serde_json::json!([]),
            serde_json::json!({"data": "text", "datacontenttype": "text/plain"}),
        ] {
            let _ = writeln!(out, "[json {json}]");
            event_lines(&mut out, CloudEvent::from_json(&json));
        }
        insta::assert_snapshot!("edited_wire_events", out);
    }
}
