//! A page of resource bundles, as Maestro's REST API answers
//! `GET /api/maestro/v1/resource-bundles?search=…` (HTTP 200), through what the adapter and
//! `diagnose` do with it: `rest::decode_answer` (what `RestClient::list` does with the body),
//! the count (`total`), whether each bundle is live and never reported (placement), which one is
//! the current work (`diagnose`), and each bundle as a work the pulses found.
//!
//! Properties: a body that is not a list is `WorkError::Protocol` (`ManifestWorkFailed`); every
//! report built from any bundle is writable and named.
#![no_main]

use hypershift_adapter::diagnose::judge_work::current_work;
use hypershift_adapter::work::WorkError;
use hypershift_adapter::work::maestro::bundle::ResourceBundleList;
use hypershift_adapter::work::maestro::rest::{RESOURCE_BUNDLES_PATH, decode_answer};
use hypershift_fuzz::{judge_existing, maestro_failure_report};
use libfuzzer_sys::fuzz_target;

const BASE: &str = "http://maestro:8000";
const SOURCE: &str = "hyperfleet-hypershift-adapter";

fuzz_target!(|data: &[u8]| {
    let url = format!("{BASE}{RESOURCE_BUNDLES_PATH}?search=source%3D%27{SOURCE}%27");
    let list: ResourceBundleList = match decode_answer(BASE, &url, 200, data) {
        Ok(list) => list,
        Err(e) => {
            assert!(
                matches!(e, WorkError::Protocol { .. }),
                "a 200 body gave {e:?}"
            );
            maestro_failure_report(e, "ManifestWorkFailed");
            return;
        }
    };
    // `RestClient::count` and the paging of `list_all`.
    let _ = u64::try_from(list.total).unwrap_or(0);
    let _ = usize::try_from(list.total).unwrap_or(0);
    if let Some(current) = current_work(&list.items) {
        assert!(list.items.iter().any(|b| std::ptr::eq(b, current)));
    }
    for bundle in &list.items {
        match bundle.to_existing_work(Some(SOURCE.to_owned())) {
            Ok(existing) => {
                let _ = existing.never_reported();
                judge_existing(&existing, "listed bundle");
            }
            Err(e) => {
                assert!(matches!(e, WorkError::MalformedFeedback { .. }), "{e:?}");
                maestro_failure_report(e, "InvalidFeedback");
            }
        }
    }
});
