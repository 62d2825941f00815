//! The stages of deleting a work and the object it carries, as conditions plus the fourth
//! condition `Finalized` (`hyperfleet-framework.md` §6), the same for every object; the stages are
//! the deletion rows of each object's condition table ([`crate::pulse::table`]).
//!
//! Every stage describes the deletion generation (the one HyperFleet's DELETE bumped): `Applied`
//! says whether our resources still exist on the management cluster, `Available` whether they
//! are available at that generation (never: it asks for none), as in the framework's examples.
//! `Available` is never `Unknown` here: the HyperFleet API discards a report whose `Available` is
//! `Unknown` once the adapter has reported before (rule 13, `hyperfleet-framework.md` §7.4), and
//! with it the `Finalized` it carries.

use job_report::{Condition, ConditionStatus, Report};

use super::feedback::ObjectDeletion;
use super::outcome::{ObjectRef, WorkRef};
use crate::message::{Conditions, cond, no_issues, quote};

/// The fourth condition type, present only while the HyperFleet resource is being deleted.
pub const FINALIZED: &str = "Finalized";
/// Reasons of the deletion stages.
pub const DELETION_REQUESTED: &str = "DeletionRequested";
pub const FINALIZERS_RUNNING: &str = "FinalizersRunning";
pub const CLEANUP_CONFIRMED: &str = "CleanupConfirmed";
pub const DELETION_STUCK: &str = "DeletionStuck";
/// Available's reasons while deleting and once deleted.
pub const DELETING: &str = "Deleting";
pub const DELETED: &str = "Deleted";

/// Where a deletion is, once nothing holds it any more.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// The work's deletion was requested (`now`: by this pulse); the object is deleting as far
    /// as the agent reported (`object`).
    Requested { now: bool, object: ObjectDeletion },
    /// The work is gone from the management cluster.
    Gone,
}

/// What every deletion report says besides the stage.
#[derive(Debug, Clone, Copy)]
pub struct Deleting<'a> {
    pub work: WorkRef<'a>,
    pub object: ObjectRef<'a>,
    /// The HyperFleet resource's `deleted_time` (`""` when unknown).
    pub deleted_time: &'a str,
    /// Longer than allowed since `deleted_time`.
    pub stuck: bool,
    /// `(finalizer, what usually holds it)` for the object's kind.
    pub known_finalizers: &'a [(&'a str, &'a str)],
    /// What "gone" means for people, e.g. `no control plane runs`.
    pub gone_meaning: &'a str,
}

impl Deleting<'_> {
    /// ` (deleted in HyperFleet at …)`, or `""`.
    pub fn since(&self) -> String {
        if self.deleted_time.is_empty() {
            String::new()
        } else {
            format!(" (deleted in HyperFleet at {})", self.deleted_time)
        }
    }
}

/// The conditions and `Finalized` of a deletion at `progress`.
pub fn stage(d: &Deleting<'_>, progress: &Progress) -> (Conditions, Condition) {
    match progress {
        Progress::Requested { now, object } => requested(d, *now, object),
        Progress::Gone => gone(d),
    }
}

/// The work's deletion was requested (`now`: by this pulse); `del` is what the agent fed back of
/// the object's own deletion.
fn requested(d: &Deleting<'_>, now: bool, del: &ObjectDeletion) -> (Conditions, Condition) {
    let (work, object) = (d.work, &d.object);
    let place = object.place();
    let since = d.since();
    let requested = if now {
        format!(
            "Deletion of ManifestWork {} on management cluster {} requested by this pulse",
            work.name, work.consumer
        )
    } else {
        format!(
            "Deletion of ManifestWork {} on management cluster {} was requested; it is still there",
            work.name, work.consumer
        )
    };
    let applied = cond(
        "Applied",
        ConditionStatus::True,
        DELETION_REQUESTED,
        requested.clone(),
    );
    let available = cond(
        "Available",
        ConditionStatus::False,
        DELETING,
        format!(
            "The {} is being deleted{since}; {} {place} on management cluster {} is going away",
            object.source, object.kind, work.consumer
        ),
    );
    let finalizers = del.finalizers.join(", ");
    // Gone first: the agent keeps the last feedback (finalizers included) of an object that is no
    // longer there.
    let finalized = if del.gone {
        cond(
            FINALIZED,
            ConditionStatus::False,
            DELETION_REQUESTED,
            format!(
                "{} {place} is gone from management cluster {}; waiting for the work agent to remove ManifestWork {}",
                object.kind, work.consumer, work.name
            ),
        )
    } else if del.deletion_timestamp.is_some() && !del.finalizers.is_empty() {
        cond(
            FINALIZED,
            ConditionStatus::False,
            FINALIZERS_RUNNING,
            format!(
                "{} {place} is being deleted (since {}); finalizers still running: {finalizers}",
                object.kind,
                del.deletion_timestamp.as_deref().unwrap_or_default()
            ),
        )
    } else {
        cond(
            FINALIZED,
            ConditionStatus::False,
            DELETION_REQUESTED,
            format!(
                "{requested}; the work agent has not reported {} {place} as deleting yet",
                object.kind
            ),
        )
    };
    let health = if d.stuck {
        cond(
            "Health",
            ConditionStatus::False,
            DELETION_STUCK,
            stuck_guidance(d, del),
        )
    } else {
        no_issues("No problem with the deletion so far")
    };
    ([applied, available, health], finalized)
}

/// The work is gone from the management cluster.
fn gone(d: &Deleting<'_>) -> (Conditions, Condition) {
    let (work, object) = (d.work, &d.object);
    let place = object.place();
    let since = d.since();
    (
        [
            cond(
                "Applied",
                ConditionStatus::False,
                CLEANUP_CONFIRMED,
                format!(
                    "Nothing is applied any more: ManifestWork {} is gone from management cluster {}, the {} was deleted",
                    work.name, work.consumer, object.kind
                ),
            ),
            cond(
                "Available",
                ConditionStatus::False,
                DELETED,
                format!(
                    "The {} was deleted{since}; {} on management cluster {}",
                    object.source, d.gone_meaning, work.consumer
                ),
            ),
            no_issues("Deletion completed"),
        ],
        cond(
            FINALIZED,
            ConditionStatus::True,
            CLEANUP_CONFIRMED,
            format!(
                "{} {place} and ManifestWork {} are gone from management cluster {}",
                object.kind, work.name, work.consumer
            ),
        ),
    )
}

/// Health's message for a deletion that takes too long: the finalizers and what usually holds
/// them, or, when the agent did not feed them back, how to read them.
fn stuck_guidance(d: &Deleting<'_>, del: &ObjectDeletion) -> String {
    let (work, object) = (d.work, &d.object);
    let (namespace, name, kind) = (object.namespace, object.name, object.kind);
    let mut message = format!("The deletion{} has not finished in time. ", d.since());
    if del.gone {
        message.push_str(&format!(
            "{kind} {namespace}/{name} is gone, but ManifestWork {} is still on management cluster {}: check the work agent there (its AppliedManifestWork carries the finalizer cluster.open-cluster-management.io/applied-manifest-work-cleanup)",
            work.name, work.consumer
        ));
        return message;
    }
    if del.finalizers.is_empty() {
        message.push_str(&format!(
            "The work agent has not reported the finalizers of {kind} {namespace}/{name}; read them on management cluster {}: kubectl get {} -n {namespace} {name} -o jsonpath='{{.metadata.finalizers}}'. ",
            work.consumer,
            kind.to_lowercase()
        ));
        for (finalizer, held_by) in d.known_finalizers {
            message.push_str(&format!("{finalizer} is {held_by}. "));
        }
        return message.trim_end().to_owned();
    }
    message.push_str(&format!(
        "{kind} {namespace}/{name} on management cluster {} still has finalizers: ",
        work.consumer
    ));
    let parts: Vec<String> = del
        .finalizers
        .iter()
        .map(|f| match d.known_finalizers.iter().find(|(k, _)| k == f) {
            Some((_, held_by)) => format!("{f} is {held_by}"),
            None => format!(
                "{} is not one HyperShift sets: find the controller that added it",
                quote(f)
            ),
        })
        .collect();
    message.push_str(&parts.join("; "));
    message
}

/// `report` with `finalized` appended.
pub fn with_finalized(mut report: Report, finalized: Condition) -> Report {
    report.conditions.push(finalized);
    report
}

/// An error report during deletion still carries `Finalized`: False, with Applied's reason
/// (nothing is confirmed).
pub fn with_finalized_unconfirmed(report: Report) -> Report {
    let reason = report
        .condition("Applied")
        .map(|c| c.reason.clone())
        .unwrap_or_default();
    with_finalized(
        report,
        Condition::new(
            FINALIZED,
            ConditionStatus::False,
            &reason,
            "Cleanup not confirmed: the deletion could not proceed this pulse (see Applied)"
                .to_owned(),
        ),
    )
}

/// The time after `deleted_time` past which a deletion that is not done is reported stuck.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub now: jiff::Timestamp,
    pub stuck_after: std::time::Duration,
}

/// Whether `since` + `clock.stuck_after` < `clock.now` (see [`crate::duration::is_past`]).
pub fn is_late(since: &str, clock: Clock) -> bool {
    crate::duration::is_past(since, clock.stuck_after, clock.now)
}
