//! The status-reporter's own Pod, as its watch delivers it (a `WatchEvent<Pod>` line, or a Pod):
//! `adapter_pod::observe` (the Job's name from its label, how the adapter container ended), then
//! the outcome of that end when no report was left (`Outcome::ended`) and the report it becomes.
//!
//! Properties: an ended adapter without a report is `AdapterOOMKilled`, `AdapterExitedWithError`
//! or `AdapterMissingResults` on every condition type, by its exit code and reason; the report is
//! writable and its message quotes the termination message on one line, bounded.
#![no_main]

use hypershift_fuzz::{assert_reasons, assert_writable};
use k8s_openapi::api::core::v1::Pod;
use kube::api::WatchEvent;
use libfuzzer_sys::fuzz_target;
use status_reporter::adapter_pod::{PodEvent, observe};
use status_reporter::outcome::Outcome;

const TYPES: [&str; 3] = ["Available", "Applied", "Health"];

fn judge(pod: &Pod) {
    let PodEvent::Seen { adapter, .. } = observe(pod, "adapter") else {
        panic!("a Pod read as something else than a Pod");
    };
    let Some(end) = adapter else { return };
    let expected = if end.oom_killed() {
        "AdapterOOMKilled"
    } else if end.exit_code != 0 {
        "AdapterExitedWithError"
    } else {
        "AdapterMissingResults"
    };
    let report = Outcome::ended(end.clone()).into_report(&TYPES.map(str::to_owned));
    assert_writable(&report, "adapter end");
    assert_reasons(&report, &[expected], "adapter end");
    if let Some(quoted) = end.quoted_message() {
        assert!(!quoted.contains('\n') && quoted.len() <= 4096, "{quoted:?}");
        if expected != "AdapterMissingResults" {
            assert!(report.conditions[0].message.contains(&quoted) || quoted.len() > 64);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    match serde_json::from_slice::<WatchEvent<Pod>>(data) {
        Ok(WatchEvent::Added(pod) | WatchEvent::Modified(pod)) => judge(&pod),
        Ok(_) => {}
        Err(_) => {
            if let Ok(pod) = serde_json::from_slice::<Pod>(data) {
                judge(&pod);
            }
        }
    }
});
