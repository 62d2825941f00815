//! The feedback values the work agent reports for a manifest: the whole `status` of a
//! HostedCluster or NodePool (`jsonRaw`, the Maestro agent's `.status` rule, as an object or as
//! the JSON text), or the hub's scalar values (`status.conditions[type=Available].status`, …)
//! that `work::scalar_feedback::rebuild` puts together again, and the deletion values
//! (`deletionTimestamp`, `finalizers`). Read by the functions the pulses call:
//! `controlplane::report_found` (`parse_feedback`, then the HostedCluster condition table),
//! `nodepool::parse_feedback` / `report_status`, `ObjectDeletion::from_manifest`.
//!
//! Properties: a value that is not a status is `InvalidFeedback`; every report is writable and
//! carries only its table's reasons; the HostedCluster's endpoint and versions in `data` are
//! strings.
#![no_main]

use std::collections::BTreeMap;
use std::time::Duration;

use hypershift_adapter::hypershift::nodepool::status::MachinesClock;
use hypershift_adapter::pulse::{controlplane, nodepool};
use hypershift_adapter::work::feedback::ObjectDeletion;
use hypershift_adapter::work::outcome::WorkRef;
use hypershift_adapter::work::scalar_feedback::rebuild;
use hypershift_adapter::work::{ManifestStatus, WorkCondition};
use hypershift_fuzz::{
    CONSUMER, CONTROLPLANE_REASONS, NODEPOOL_REASONS, assert_reasons, assert_writable,
    default_desired, now,
};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const WORK: WorkRef<'static> = WorkRef {
    consumer: CONSUMER,
    name: "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
};

/// `status` as both pulses read it.
fn judge(status: &Value, what: &str) {
    let report = controlplane::report_found(WORK, Some(status), Some(2));
    assert_writable(&report, what);
    assert_reasons(&report, CONTROLPLANE_REASONS, what);
    let data = report
        .data
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no data"));
    for key in [
        controlplane::DATA_CONTROL_PLANE_ENDPOINT,
        controlplane::DATA_VERSION,
        controlplane::DATA_DESIRED_VERSION,
    ] {
        assert!(
            data.get(key).is_some_and(Value::is_string),
            "{what}: data.{key}"
        );
    }
    let controlplane_ok = controlplane::parse_feedback(status).is_ok();
    assert_eq!(
        controlplane_ok,
        report
            .condition("Available")
            .is_some_and(|c| c.reason != "InvalidFeedback"),
        "{what}: InvalidFeedback exactly when the status does not parse"
    );

    let desired = default_desired();
    let clock = MachinesClock {
        now: now(),
        stuck_after: Duration::from_secs(900),
    };
    let report = match nodepool::parse_feedback(status) {
        Ok(parsed) => nodepool::report_status(WORK, &parsed, &desired, clock, Some(2)),
        Err(error) => nodepool::report_invalid_feedback(WORK, &error, &desired, Some(2)),
    };
    assert_writable(&report, what);
    assert_reasons(&report, NODEPOOL_REASONS, what);
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    judge(&value, "status value");
    // The same status as the agent's `jsonRaw` text.
    judge(&Value::String(value.to_string()), "status jsonRaw");

    // The input as the feedback values of one manifest (by name).
    let Value::Object(map) = value else { return };
    let values: BTreeMap<String, Value> = map.into_iter().collect();
    if let Some(status) = rebuild(&values) {
        assert!(status.is_object());
        judge(&status, "scalar values");
    }
    let manifest = ManifestStatus {
        conditions: vec![WorkCondition {
            type_: "Available".to_owned(),
            status: "True".to_owned(),
            ..WorkCondition::default()
        }],
        values,
        ..ManifestStatus::default()
    };
    let deletion = ObjectDeletion::from_manifest(Some(&manifest));
    assert!(!deletion.gone);
    assert!(
        deletion
            .deletion_timestamp
            .as_deref()
            .is_none_or(|t| !t.is_empty())
    );
});
