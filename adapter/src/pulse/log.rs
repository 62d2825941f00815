//! The one log event of a pulse: what it decided (`decision`, and `placement` where placement
//! had a word), about which work, and the reasons it reported. `WARN` when the report says a
//! person must act (Health False), `ERROR` for a double placement, else `INFO`.

use job_report::{ConditionStatus, Report};

use super::object::Object;
use super::step::{Decision, Outcome, Placement, Pulse};
use crate::placement as rows;
use crate::work::deletion::FINALIZED;
use crate::work::manifestwork::work_generation;

/// The decision's name, as the log and the condition tables call it.
pub fn decision<O: Object>(pulse: &Pulse<O::Spec>, outcome: &Outcome, report: &Report) -> String {
    let reason = |t: &str| report.condition(t).map_or("", |c| c.reason.as_str());
    match &outcome.decision {
        Decision::Invalid(_) | Decision::Unfit { .. } => O::INVALID,
        Decision::Failed(failure) => {
            let at = &outcome.at;
            let work = crate::work::outcome::WorkRef {
                consumer: &at.consumer,
                name: &at.name,
            };
            super::report::failure_conditions::<O>(pulse, work, failure).0
        }
        Decision::NotOurs(_) => "OwnershipConflict",
        Decision::Created => "ManifestWorkCreated",
        Decision::Observed(_) | Decision::NotSentDeleting(_) | Decision::UpdatedMeanwhile(_) => {
            "ManifestWorkFound"
        }
        Decision::Stale { .. } => "StaleGeneration",
        Decision::Updated(_) => "ManifestWorkUpdated",
        Decision::Immutable { .. } => crate::work::outcome::IMMUTABLE_FIELD_CHANGED,
        Decision::Waiting { .. } => super::report::WAITING_FOR_CONTROL_PLANE,
        Decision::Deleting(_) => reason(FINALIZED),
        Decision::NoManagementCluster { .. } => rows::NO_MANAGEMENT_CLUSTER_AVAILABLE,
        Decision::InventoryUnavailable(_) => rows::INVENTORY_UNAVAILABLE,
        Decision::LockUnavailable(_) => rows::PLACEMENT_LOCK_UNAVAILABLE,
    }
    .to_owned()
}

impl Placement {
    /// The placement decision's name, when it has one.
    pub fn name(&self) -> Option<&'static str> {
        match self {
            Placement::Sticky => Some("Sticky"),
            Placement::Unavailable { .. } => Some(rows::MANAGEMENT_CLUSTER_UNAVAILABLE),
            Placement::Double(_) => Some(rows::DOUBLE_PLACEMENT),
            Placement::FailedOver { .. } => Some(rows::FAILED_OVER_BEFORE_APPLY),
            Placement::WithdrawnDuplicates(_) => Some("WithdrawDuplicate"),
            Placement::PlacedByAnotherPulse => Some("PlacedByAnotherPulse"),
            Placement::RecordUnreadable { .. } => None,
        }
    }
}

/// The generation the work held, when the decision is about one.
fn held(decision: &Decision) -> Option<i64> {
    let work = match decision {
        Decision::Observed(w)
        | Decision::NotSentDeleting(w)
        | Decision::Updated(w)
        | Decision::UpdatedMeanwhile(w)
        | Decision::Stale { work: w, .. }
        | Decision::Immutable { work: w, .. }
        | Decision::Unfit { work: w, .. }
        | Decision::Waiting { work: Some(w), .. } => w,
        _ => return None,
    };
    work_generation(&work.annotations)
}

/// The fields a refusal names.
fn fields(decision: &Decision) -> Vec<&'static str> {
    match decision {
        Decision::Invalid(violations) | Decision::Unfit { violations, .. } => {
            violations.iter().map(|v| v.field).collect()
        }
        Decision::Immutable { changes, .. } => changes.iter().map(|c| c.field).collect(),
        _ => Vec::new(),
    }
}

/// Logs the pulse's one event.
pub fn pulse<O: Object>(pulse: &Pulse<O::Spec>, outcome: &Outcome, report: &Report) {
    let reason = |t: &str| report.condition(t).map_or("", |c| c.reason.as_str());
    let decision = decision::<O>(pulse, outcome, report);
    let placement: Vec<&str> = outcome
        .placement
        .iter()
        .filter_map(Placement::name)
        .collect();
    let placement = (!placement.is_empty()).then(|| placement.join(","));
    let fields = fields(&outcome.decision);
    let fields = (!fields.is_empty()).then_some(fields);
    macro_rules! event {
        ($level:expr) => {
            tracing::event!(
                $level,
                cluster_id = pulse.ids.cluster_id,
                nodepool_id = pulse.ids.nodepool_id,
                generation = pulse.generation,
                held_generation = held(&outcome.decision),
                work = outcome.at.name,
                consumer = outcome.at.consumer,
                decision,
                placement,
                applied = reason("Applied"),
                available = reason("Available"),
                health = reason("Health"),
                finalized = pulse.deleted_time().map(|_| reason(FINALIZED)),
                deleted_time = pulse.deleted_time(),
                fields = fields.as_ref().map(|f| tracing::field::debug(f)),
                "pulse"
            )
        };
    }
    let health_false = report
        .condition("Health")
        .is_some_and(|c| c.status == ConditionStatus::False);
    let double = outcome
        .placement
        .iter()
        .any(|p| matches!(p, Placement::Double(_)));
    match (double, health_false) {
        (true, _) => event!(tracing::Level::ERROR),
        (false, true) => event!(tracing::Level::WARN),
        (false, false) => event!(tracing::Level::INFO),
    }
}
