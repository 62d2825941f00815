//! A ManifestWork as an OCM hub's API server answers `GET …/manifestworks/{name}` (what kube-rs
//! deserializes into a `DynamicObject`), through `work::hub::existing_work` (what
//! `HubWorkClient::get` returns: labels, generation, conditions, the feedback of every manifest,
//! scalar feedback rebuilt into a `status`), then both pulses' judgement of a work they found.
//!
//! Properties: a status this client cannot read is `WorkError::Protocol`, a `jsonRaw` that is not
//! JSON `MalformedFeedback` (rows `ManifestWorkFailed`, `InvalidFeedback`); every report is
//! writable and named.
#![no_main]

use hypershift_adapter::work::WorkError;
use hypershift_adapter::work::hub::existing_work;
use hypershift_adapter::work::Failure;
use hypershift_fuzz::{expected_failure_reason, failure_report, judge_existing};
use kube::api::DynamicObject;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // kube-rs: `serde_json::from_slice` of the body; a failure is its `SerdeError`, which the hub
    // client reports as a protocol error.
    let Ok(object) = serde_json::from_slice::<DynamicObject>(data) else {
        return;
    };
    match existing_work(&object) {
        Ok(existing) => judge_existing(&existing, "hub ManifestWork"),
        Err(e) => {
            assert!(
                matches!(
                    e,
                    WorkError::Protocol { .. } | WorkError::MalformedFeedback { .. }
                ),
                "existing_work gave {e:?}"
            );
            let expected = expected_failure_reason(true, &e);
            failure_report(true, Failure::Permanent(e), expected);
        }
    }
});
