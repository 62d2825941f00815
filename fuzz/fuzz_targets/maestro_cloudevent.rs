//! A CloudEvent in protobuf binary mode (`io.cloudevents.v1.CloudEvent`, what the Maestro gRPC
//! source API carries, `maestro-protocol.md` §2.3), or in the CloudEvents JSON form when the
//! input starts with `{`, through the adapter's decoders: `CloudEvent::from_proto` (structured
//! mode included) or `CloudEvent::from_json`, then `StatusEvent::decode` (a manifestbundle status
//! event, as the Subscribe stream delivers them).
//!
//! Properties: a refused event is `WorkError::Protocol` with a message; an event decodes, encodes
//! and decodes again to the same event (`to_proto` → protobuf bytes → `from_proto`); a status
//! event has its resource id, version and sequence id.
#![no_main]

use hypershift_adapter::work::WorkError;
use hypershift_adapter::work::maestro::cloudevent::{CONTENT_TYPE_KEY, CloudEvent};
use hypershift_adapter::work::maestro::testing::StatusEvent;
use hypershift_adapter::work::maestro::proto;
use libfuzzer_sys::fuzz_target;
use prost::Message;

#[track_caller]
fn assert_protocol(result: Result<impl std::fmt::Debug, WorkError>, what: &str) {
    if let Err(e) = result {
        assert!(
            matches!(&e, WorkError::Protocol { message } if !message.is_empty()),
            "{what}: a refused event must be a Protocol error with a message, got {e:?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let event = if data.first() == Some(&b'{') {
        let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else {
            return;
        };
        let event = CloudEvent::from_json(&json);
        assert_protocol(
            event.as_ref().map(|_| ()).map_err(Clone::clone),
            "from_json",
        );
        match event {
            Ok(event) => event,
            Err(_) => return,
        }
    } else {
        // What tonic hands over: a message prost decoded.
        let Ok(wire) = proto::CloudEvent::decode(data) else {
            return;
        };
        let event = CloudEvent::from_proto(&wire);
        assert_protocol(
            event.as_ref().map(|_| ()).map_err(Clone::clone),
            "from_proto",
        );
        match event {
            Ok(event) => event,
            Err(_) => return,
        }
    };

    // Round trip through the wire, for an event in binary mode (a structured-mode content type
    // makes the reader take the data as the whole event).
    let structured = event
        .data_content_type
        .as_deref()
        .is_some_and(|ct| ct.starts_with("application/cloudevents+json"));
    if !event.spec_version.is_empty() && !structured {
        let bytes = event.to_proto().encode_to_vec();
        let wire = proto::CloudEvent::decode(bytes.as_slice())
            .unwrap_or_else(|e| panic!("the adapter's own encoding does not decode: {e}"));
        assert_eq!(
            wire.attributes.contains_key(CONTENT_TYPE_KEY),
            event.data_content_type.is_some(),
            "the datacontenttype attribute is sent exactly when the event has one"
        );
        let again = CloudEvent::from_proto(&wire)
            .unwrap_or_else(|e| panic!("the adapter's own encoding is refused: {e}\n{event:?}"));
        assert_eq!(again, event, "decode(encode(event)) differs");
    }

    let status = StatusEvent::decode(&event);
    assert_protocol(
        status.as_ref().map(|_| ()).map_err(Clone::clone),
        "StatusEvent::decode",
    );
    if let Ok(status) = status {
        let _ = status.is_deleted();
    }
    let _ = event.is_heartbeat();
    let _ = event.to_json();
});
