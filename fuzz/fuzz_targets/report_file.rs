//! The report file (`/results/adapter-report.json`) as the status-reporter reads it once the
//! adapter has ended: `ResultsFile::look` (bounded read, `job_report::parse`, v1 or legacy
//! format) and `final_outcome`, the report the outcome becomes, and the PATCH that puts it on the
//! Job (`job_status::patch_body`).
//!
//! Properties: a file that is not a valid report gives `InvalidResultFormat` on every configured
//! condition type, saying why; a valid report is one `job_report::validate` accepts, and written
//! again by the adapter's writer (`job_report::write_atomic`) and read back it gives the same
//! conditions and data (the round trip); the PATCH carries every condition, the data annotation
//! (the same data) and the generation, and stays under the API server's annotation limit.
#![no_main]

use std::time::Duration;

use hypershift_fuzz::{assert_accepted, assert_reasons, assert_writable, now, scratch_file};
use job_report::{OBSERVED_GENERATION_ANNOTATION, REPORT_DATA_ANNOTATION, Report};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use status_reporter::job_status::{JobView, patch_body};
use status_reporter::outcome::{Outcome, Termination};
use status_reporter::results::{Look, ResultsFile};

/// `CONDITION_TYPE` of the shipped Job (`manifests/job.yaml`).
const TYPES: [&str; 3] = ["Available", "Applied", "Health"];
/// The API server's limit on an object's annotations (keys plus values).
const MAX_ANNOTATIONS: usize = 256 * 1024;

/// What the reporter would put on a Job that has nothing yet.
fn patch(report: &Report) {
    let view = JobView {
        resource_version: Some("4242".to_owned()),
        ..JobView::default()
    };
    let body = patch_body(&view, report, now())
        .unwrap_or_else(|| panic!("a Job without conditions already says this report"));
    let conditions = body["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(conditions.len(), report.conditions.len());
    for (c, sent) in report.conditions.iter().zip(&conditions) {
        assert_eq!(sent["type"], c.type_.as_str());
        assert_eq!(sent["status"], c.status.as_str());
        assert_eq!(sent["reason"], c.reason.as_str());
        assert_eq!(sent["message"], c.message.as_str());
        assert!(sent["lastTransitionTime"].is_string());
    }
    let annotations = body["metadata"]["annotations"]
        .as_object()
        .unwrap_or_else(|| panic!("no annotations in {body}"));
    let data: Value = annotations[REPORT_DATA_ANNOTATION]
        .as_str()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_else(|| panic!("{REPORT_DATA_ANNOTATION} is not JSON"));
    assert_eq!(
        data,
        Value::Object(report.data.clone().unwrap_or_default()),
        "the data annotation is not the report's data"
    );
    match report.observed_generation {
        Some(g) => assert_eq!(annotations[OBSERVED_GENERATION_ANNOTATION], g.to_string()),
        None => assert!(annotations.get(OBSERVED_GENERATION_ANNOTATION).is_none()),
    }
    let size: usize = annotations
        .iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    assert!(size <= MAX_ANNOTATIONS, "annotations of {size} bytes");
}

fuzz_target!(|data: &[u8]| {
    let path = scratch_file("adapter-report.json", data);
    let mut results = ResultsFile::new(path.clone(), TYPES[0].to_owned(), Duration::ZERO);
    let end = Termination {
        exit_code: 0,
        reason: Some("Completed".to_owned()),
        message: None,
    };
    let outcome = status_reporter::final_outcome(&mut results, || Outcome::ended(end));
    let types: Vec<String> = TYPES.map(str::to_owned).to_vec();
    match outcome {
        Outcome::Report(report) => {
            // The adapter's own report, passed on as written: its messages may be empty.
            assert_accepted(&report, "report file");
            // The round trip: the adapter's writer, then the reporter's reader.
            match job_report::write_atomic(&path, &report) {
                Ok(()) => match results.look() {
                    Look::Ready(again) => {
                        assert_eq!(again.conditions, report.conditions, "conditions changed");
                        assert_eq!(again.data, report.data, "data changed");
                        assert_eq!(again.observed_generation, report.observed_generation);
                    }
                    other => panic!("a report written by write_atomic reads as {other:?}"),
                },
                // Pretty-printed, a report read at the limit may not fit any more.
                Err(job_report::WriteError::TooLarge { .. }) => {
                    assert!(data.len() as u64 > job_report::MAX_REPORT_BYTES / 4);
                }
                Err(e) => panic!("a valid report cannot be written: {e}"),
            }
            patch(&Outcome::Report(report).into_report(&types));
        }
        Outcome::InvalidResultFormat(why) => {
            assert!(!why.is_empty(), "an invalid report without a reason");
            let report = Outcome::InvalidResultFormat(why).into_report(&types);
            assert_writable(&report, "invalid report file");
            assert_reasons(&report, &["InvalidResultFormat"], "invalid report file");
            assert_eq!(report.conditions.len(), TYPES.len());
            patch(&report);
        }
        other => panic!("a file that is there gave {other:?}"),
    }
});
