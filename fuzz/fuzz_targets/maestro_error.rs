//! An error answer of Maestro: a REST status and body (`GET …/resource-bundles…`), or a gRPC
//! status and message (`Publish`), through the adapter's classification
//! (`rest::decode_answer` → `error::from_rest_answer`, `rest::bundle_or_none`,
//! `error::from_grpc_call`) and the row a pulse makes of it (`work::failure::failure`, after the
//! retries `work::sync::with_retry` gives a transient error).
//!
//! Input: two bytes of HTTP status (big-endian), one byte of gRPC code, then the body (also the
//! gRPC message).
//!
//! Properties: a non-2xx answer is never read as a bundle; every error becomes the row its kind
//! names (`MaestroUnavailable`, `MaestroAuthFailed`, `ConsumerNotFound`, `AdapterMisconfigured`,
//! `ManifestWorkFailed`; on the hub backend `HubUnavailable`, `HubAuthFailed`,
//! `HubNamespaceNotFound`), writable, its message quoting the server's words (bounded,
//! credentials removed).
#![no_main]

use std::time::Duration;

use hypershift_adapter::work::WorkError;
use hypershift_adapter::work::maestro::bundle::ResourceBundle;
use hypershift_adapter::work::maestro::error::from_grpc_call;
use hypershift_adapter::work::maestro::rest::{
    RESOURCE_BUNDLES_PATH, bundle_or_none, decode_answer,
};
use hypershift_adapter::work::Failure;
use hypershift_fuzz::{expected_failure_reason, failure_report};
use libfuzzer_sys::fuzz_target;

const BASE: &str = "http://maestro:8000";
const GRPC: &str = "http://maestro-grpc:8090";

/// The row of `error` on both backends, as the retry loop hands it over.
fn rows(error: &WorkError) {
    for hub in [false, true] {
        let failure = if error.is_transient() {
            Failure::GaveUp {
                error: error.clone(),
                attempts: 7,
                elapsed: Duration::from_secs(120),
            }
        } else {
            Failure::Permanent(error.clone())
        };
        failure_report(hub, failure, expected_failure_reason(hub, error));
    }
    // SIGTERM during the retries: the backend's unavailable row.
    failure_report(
        false,
        Failure::Interrupted {
            last: Some(error.clone()),
        },
        "MaestroUnavailable",
    );
}

fuzz_target!(|data: &[u8]| {
    let [hi, lo, code, body @ ..] = data else {
        return;
    };
    let status = u16::from_be_bytes([*hi, *lo]);
    let url = format!("{BASE}{RESOURCE_BUNDLES_PATH}/a7e844fe-9524-5d24-9a33-34edcc1457de");
    if (200..300).contains(&status) {
        return;
    }
    let answer: Result<ResourceBundle, WorkError> = decode_answer(BASE, &url, status, body);
    let error = match answer {
        Ok(bundle) => panic!("HTTP {status} was read as a bundle: {bundle:?}"),
        Err(e) => e,
    };
    assert!(
        !error.message().is_empty(),
        "an error without words: {error:?}"
    );
    rows(&error);
    // The same answer to the GET of one bundle: `maestro-7` is "no such bundle".
    match bundle_or_none(BASE, &url, Err(error)) {
        Ok(Some(_)) => panic!("an error answer gave a bundle"),
        Ok(None) => assert_eq!(status, 404, "only a 404 means no bundle"),
        Err(e) => rows(&e),
    }
    // The body as the message of a gRPC status.
    let message = String::from_utf8_lossy(body);
    let code = tonic::Code::from(i32::from(*code % 17));
    if code != tonic::Code::Ok {
        let error = from_grpc_call(GRPC, &tonic::Status::new(code, message.as_ref()));
        rows(&error);
    }
});
