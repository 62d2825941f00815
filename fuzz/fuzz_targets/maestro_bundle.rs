//! One resource bundle, as Maestro's REST API answers `GET /api/maestro/v1/resource-bundles/{id}`
//! (HTTP 200), through what the adapter does with it: `rest::decode_answer` and
//! `rest::bundle_or_none` (what `RestClient::get` does with the body), `to_existing_work` (what
//! `MaestroWorkClient::get` returns), then both pulses' judgement of a work they found
//! ([`hypershift_fuzz::judge_existing`]).
//!
//! Properties: a body that is not a bundle is `WorkError::Protocol`, and the pulse reports it as
//! `ManifestWorkFailed`; a `jsonRaw` that is not JSON is `MalformedFeedback`, reported
//! `InvalidFeedback`; every report is writable and carries only its table's reasons.
#![no_main]

use hypershift_adapter::work::WorkError;
use hypershift_adapter::work::maestro::rest::{
    RESOURCE_BUNDLES_PATH, bundle_or_none, decode_answer,
};
use hypershift_fuzz::{judge_existing, maestro_failure_report};
use libfuzzer_sys::fuzz_target;

const BASE: &str = "http://maestro:8000";
const SOURCE: &str = "hyperfleet-hypershift-adapter";

fuzz_target!(|data: &[u8]| {
    let url = format!("{BASE}{RESOURCE_BUNDLES_PATH}/a7e844fe-9524-5d24-9a33-34edcc1457de");
    let bundle = match bundle_or_none(BASE, &url, decode_answer(BASE, &url, 200, data)) {
        Ok(Some(bundle)) => bundle,
        Ok(None) => panic!("a 200 answer read as no bundle"),
        Err(e) => {
            assert!(
                matches!(e, WorkError::Protocol { .. }),
                "a 200 body gave {e:?}"
            );
            maestro_failure_report(e, "ManifestWorkFailed");
            return;
        }
    };
    match bundle.to_existing_work(Some(SOURCE.to_owned())) {
        Ok(existing) => judge_existing(&existing, "bundle"),
        Err(e) => {
            assert!(
                matches!(e, WorkError::MalformedFeedback { .. }),
                "to_existing_work gave {e:?}"
            );
            maestro_failure_report(e, "InvalidFeedback");
        }
    }
});
