//! The report of a pulse: a pure function of its [`Outcome`] — the decision's conditions (the
//! object's own table for what its status says), then placement's word, then where the work
//! lives (`data.management_cluster`).

use job_report::{ConditionStatus, Report};

use super::object::Object;
use super::step::{Decision, Deletion, Outcome, Placement, Pulse};
use crate::hyperfleet::spec::SpecViolation;
use crate::hypershift::immutable::ImmutableChange;
use crate::message::{cond, redact};
use crate::placement as rows;
use crate::work::Failure;
use crate::work::deletion::{DELETING, with_finalized_unconfirmed};
use crate::work::failure::FailureContext;
use crate::work::manifestwork::work_generation;
use crate::work::outcome::{self, ObjectRef, WorkRef};
use crate::work::{ExistingWork, WorkAt};

/// The report of `outcome`.
pub fn report<O: Object>(pulse: &Pulse<O::Spec>, outcome: &Outcome) -> Report {
    let at = &outcome.at;
    let mut report = decision::<O>(pulse, at, &outcome.decision);
    rows::set_management_cluster(&mut report, &at.consumer);
    for placement in &outcome.placement {
        apply(&mut report, placement, &at.name);
    }
    report
}

/// `Generation g` or `This spec`, as the messages of a generation not sent say.
fn this_generation(generation: Option<i64>) -> String {
    generation.map_or_else(|| "This spec".to_owned(), |g| format!("Generation {g}"))
}

fn decision<O: Object>(pulse: &Pulse<O::Spec>, at: &WorkAt, decision: &Decision) -> Report {
    let work = WorkRef {
        consumer: &at.consumer,
        name: &at.name,
    };
    let generation = pulse.generation;
    let unnamed = O::object(("", ""));
    let held = |w: &ExistingWork| work_generation(&w.annotations);
    let observed = |w: &ExistingWork| O::observed(pulse, work, w, held(w));
    let plain = |conditions| O::report(generation, conditions, None);
    let not_ours = |found| {
        plain(outcome::ownership_conflict(
            work,
            &O::owner(&pulse.ids),
            found,
        ))
    };
    match decision {
        Decision::Invalid(violations) => plain(super::invalid_spec_conditions(
            violations,
            unnamed.source,
            O::INVALID,
        )),
        Decision::Failed(failure) => plain(failure_conditions::<O>(pulse, work, failure).1),
        Decision::NotOurs(found) => not_ours(found),
        Decision::Created => O::created(pulse, work),
        Decision::Observed(w) => observed(w),
        Decision::Stale {
            work: w,
            pulse: p,
            held: h,
        } => {
            let report = O::observed(pulse, work, w, Some(*h));
            outcome::stale_generation(work, report, *p, *h)
        }
        Decision::NotSentDeleting(w) => not_sent_deleting::<O>(pulse, at, observed(w), held(w)),
        Decision::Updated(w) => {
            let report = O::observed(pulse, work, w, generation);
            outcome::updated(work, &unnamed, report, held(w), generation)
        }
        Decision::UpdatedMeanwhile(w) => {
            outcome::updated_meanwhile(&unnamed, observed(w), held(w), generation)
        }
        Decision::Immutable { work: w, changes } => {
            immutable(work, &unnamed, observed(w), changes, (generation, held(w)))
        }
        Decision::Waiting { why, work: None } => {
            O::report(generation, waiting(unnamed.kind, why), Some(pulse))
        }
        Decision::Waiting { why, work: Some(w) } => {
            update_waiting(observed(w), unnamed, why, (generation, held(w)))
        }
        Decision::Unfit {
            work: w,
            violations,
        } => unfit(
            observed(w),
            unnamed,
            (O::INVALID, violations),
            (generation, held(w)),
        ),
        Decision::Deleting(Deletion::Failed(failure)) => {
            with_finalized_unconfirmed(plain(failure_conditions::<O>(pulse, work, failure).1))
        }
        Decision::Deleting(Deletion::NotOurs(found)) => with_finalized_unconfirmed(not_ours(found)),
        Decision::Deleting(deletion) => O::deletion(pulse, work, deletion),
        Decision::NoManagementCluster { region, passed } => {
            let message = crate::placement::select::none_available_message(region, passed);
            plain(rows::no_management_cluster_conditions(message))
        }
        Decision::InventoryUnavailable(error) => {
            plain(rows::inventory_unavailable_conditions(error))
        }
        Decision::LockUnavailable(error) => {
            plain(rows::placement_lock_unavailable_conditions(error))
        }
    }
}

/// The report of an update refused for `changes` to immutable fields: what the agent last
/// reported (`report`), with each change listed.
fn immutable(
    work: WorkRef<'_>,
    unnamed: &ObjectRef<'_>,
    report: Report,
    changes: &[ImmutableChange],
    (generation, held): (Option<i64>, Option<i64>),
) -> Report {
    let lines: Vec<String> = changes.iter().map(ToString::to_string).collect();
    let fields: Vec<&str> = changes.iter().map(|c| c.field).collect();
    let changes = (&lines[..], &fields[..]);
    outcome::immutable_change(work, unnamed, report, changes, generation, held)
}

/// The report of a generation not sent because its work is being deleted: what the agent last
/// reported (`report`), with Applied saying why nothing was sent.
fn not_sent_deleting<O: Object>(
    pulse: &Pulse<O::Spec>,
    at: &WorkAt,
    mut report: Report,
    held: Option<i64>,
) -> Report {
    let generation = pulse.generation;
    let what = format!(
        "{} is not sent: ManifestWork {} is being deleted {}",
        this_generation(generation),
        at.name,
        O::deleting_on(&at.consumer)
    );
    outcome::not_yet(&mut report, DELETING, what, &O::object(("", "")), held);
    report.observed_generation = generation;
    report
}

/// The reason and conditions of a backend that did not answer usefully about `work` (retry
/// budget spent, shutdown, or a failure retrying cannot fix).
pub fn failure_conditions<O: Object>(
    pulse: &Pulse<O::Spec>,
    work: WorkRef<'_>,
    failure: &Failure,
) -> (&'static str, crate::message::Conditions) {
    let context = FailureContext {
        work,
        object_kind: O::KIND,
        retry_budget: pulse.transport.retry_budget,
        backend: pulse.transport.backend_ref(),
    };
    crate::work::failure::failure(&context, failure)
}

/// Nothing was sent: the cluster's control plane is not there yet (`why` says what is missing).
fn waiting(kind: &str, why: &str) -> crate::message::Conditions {
    [
        cond(
            "Applied",
            ConditionStatus::False,
            WAITING_FOR_CONTROL_PLANE,
            format!(
                "Nothing was sent: {why}. The {kind} is created once the cluster's HostedCluster is available; the next pulses check again"
            ),
        ),
        cond(
            "Available",
            ConditionStatus::False,
            WAITING_FOR_CONTROL_PLANE,
            format!("No {kind} runs yet: {why}"),
        ),
        crate::message::no_issues("Nothing to act on: waiting for the cluster's control plane"),
    ]
}

/// The reason of the rows where the control plane cannot take the object yet.
pub const WAITING_FOR_CONTROL_PLANE: &str = "WaitingForControlPlane";

/// A newer generation was not sent because the control plane is not available (`why`):
/// Available False [`WAITING_FOR_CONTROL_PLANE`], its message saying what the object of `held`
/// (`observed`) does meanwhile; Health stays `observed`'s.
fn update_waiting(
    mut observed: Report,
    object: outcome::ObjectRef<'_>,
    why: &str,
    (generation, held): (Option<i64>, Option<i64>),
) -> Report {
    let pulse = this_generation(generation);
    let kind = object.kind;
    crate::message::replace(
        &mut observed,
        cond(
            "Applied",
            ConditionStatus::False,
            WAITING_FOR_CONTROL_PLANE,
            format!(
                "{pulse} was not sent: {why}. The {kind} keeps the spec it has until the cluster's HostedCluster is available again; the next pulses check again"
            ),
        ),
    );
    let what = format!("{pulse} is not sent yet: {why}");
    outcome::not_yet(
        &mut observed,
        WAITING_FOR_CONTROL_PLANE,
        what,
        &object,
        held,
    );
    observed.observed_generation = generation;
    observed
}

/// A newer generation does not fit the cluster's HostedCluster (`violations`): nothing was
/// sent. Applied, Available and Health False `reason`, reported at `generation` (a refusal must
/// reach HyperFleet), Available's message saying what the object of `held` (`observed`) does
/// meanwhile.
fn unfit(
    mut observed: Report,
    object: outcome::ObjectRef<'_>,
    (reason, violations): (&str, &[SpecViolation]),
    (generation, held): (Option<i64>, Option<i64>),
) -> Report {
    let details: String = violations.iter().map(|v| format!("\n- {v}")).collect();
    let fields: Vec<&str> = violations.iter().map(|v| v.field).collect();
    let pulse = this_generation(generation);
    let (kind, source) = (object.kind, object.source);
    crate::message::replace(
        &mut observed,
        cond(
            "Applied",
            ConditionStatus::False,
            reason,
            format!(
                "{pulse} was not sent: it does not fit the cluster's HostedCluster. The {kind} keeps the spec it has. Fix these fields in the HyperFleet {source} spec:{details}"
            ),
        ),
    );
    crate::message::replace(
        &mut observed,
        cond(
            "Health",
            ConditionStatus::False,
            reason,
            format!(
                "A person must act: the {source} spec does not fit the HostedCluster ({}); see Applied",
                fields.join(", ")
            ),
        ),
    );
    let what = format!("{pulse} is refused (see Applied) and will not be applied");
    outcome::not_yet(&mut observed, reason, what, &object, held);
    observed.observed_generation = generation;
    observed
}

/// Placement's word on the report of the work `name`.
fn apply(report: &mut Report, placement: &Placement, name: &str) {
    match placement {
        Placement::Sticky | Placement::WithdrawnDuplicates(_) | Placement::PlacedByAnotherPulse => {
        }
        Placement::Unavailable {
            name,
            consumer,
            detail,
        } => crate::message::replace(
            report,
            rows::management_cluster_unavailable(name, consumer, detail),
        ),
        Placement::RecordUnreadable { consumer, error } => {
            if let Some(health) = report.conditions.iter_mut().find(|c| c.type_ == "Health") {
                health.message = format!(
                    "{} (the record of management cluster {consumer} could not be read: {})",
                    health.message,
                    redact(error)
                );
            }
        }
        Placement::Double(works) => {
            crate::message::replace(report, rows::double_placement(works));
        }
        Placement::FailedOver {
            from_name,
            from,
            detail,
            key,
        } => failed_over(report, (from_name, from, detail, key), name),
    }
}

/// A work no agent applied was withdrawn from management cluster `from` and the cluster placed
/// again: Applied and Health say so when it was placed, else Applied's message says what was
/// withdrawn.
fn failed_over(
    report: &mut Report,
    (from_name, from, detail, key): (&str, &str, &str, &str),
    name: &str,
) {
    let to = report
        .data
        .as_ref()
        .and_then(|d| d.get(rows::DATA_MANAGEMENT_CLUSTER))
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let placed = report
        .condition("Applied")
        .is_some_and(|c| c.status == ConditionStatus::True);
    let what = format!(
        "The work on management cluster {from_name} (consumer {from}) was never applied and that management cluster is unavailable: {detail}; it was withdrawn (bundle {key})"
    );
    if placed {
        crate::message::replace(
            report,
            cond(
                "Applied",
                ConditionStatus::True,
                rows::FAILED_OVER_BEFORE_APPLY,
                format!(
                    "{what} and ManifestWork {name} was created on management cluster {to} instead"
                ),
            ),
        );
        crate::message::replace(
            report,
            cond(
                "Health",
                ConditionStatus::True,
                "NoIssues",
                format!(
                    "The adapter failed the control plane over from management cluster {from_name} before it was applied; it is now placed on {to}"
                ),
            ),
        );
    } else if let Some(applied) = report.conditions.iter_mut().find(|c| c.type_ == "Applied") {
        applied.message = format!("{what}. {}", applied.message);
    }
}
