//! The transport's part of a report, the same for every object shipped in a work (HostedCluster,
//! NodePool): what the backend and the work agent said, as conditions. The pulse puts them
//! together with what the object's own status says; the rows are in each object's condition table
//! ([`crate::pulse::table`]).
//!
//! Available is `Unknown` only where the adapter could not observe the object (backend errors,
//! feedback not synced or unreadable): the HyperFleet API discards such a report once the adapter
//! has reported before (rule 13), so its conclusion stays what was last observed. A refusal
//! (someone else's work, immutable fields) is `False`, so that it is stored. Health is `False`
//! where a person has to act.

use job_report::{Condition, ConditionStatus, MAX_MESSAGE_LEN, Report};
use serde_json::Value;

use super::feedback::{Feedback, applied_object, apply_failures, feedback_of};
use super::manifestwork::{Owner, Ownership, STATUS_FEEDBACK_NAME};
use super::observed::{Lag, OperatorClock, Stamp};
use super::{ExistingWork, WorkCondition};
use crate::duration::friendly;
use crate::message::{
    Conditions, cond, json_kind, no_issues, or_none, quote, refusal_conditions, replace, truncate,
};

/// Where the work lives: used in messages so an SRE can find it.
#[derive(Debug, Clone, Copy)]
pub struct WorkRef<'a> {
    pub consumer: &'a str,
    pub name: &'a str,
}

/// The object a work carries, as messages name it and the work's status identifies it.
#[derive(Debug, Clone, Copy)]
pub struct ObjectRef<'a> {
    /// `HostedCluster`, `NodePool`.
    pub kind: &'static str,
    /// API group and plural resource, as the work's status names them.
    pub group: &'static str,
    pub resource: &'static str,
    pub namespace: &'a str,
    pub name: &'a str,
    /// The HyperFleet resource it is built from, as a person fixes it: `cluster`, `NodePool`.
    pub source: &'static str,
}

impl ObjectRef<'_> {
    /// `namespace/name`.
    pub fn place(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// The reason of a manifest reported not available: `HostedClusterMissing`, `NodePoolMissing`.
    pub fn missing_reason(&self) -> String {
        format!("{}Missing", self.kind)
    }
}

/// Feedback that is present but is not the object's status.
#[derive(Debug, thiserror::Error)]
pub enum FeedbackError {
    #[error("the status feedback is a string that is not JSON ({0})")]
    NotJson(serde_json::Error),
    #[error("the status feedback is {found}, not a {kind} status object")]
    NotAnObject {
        found: &'static str,
        kind: &'static str,
    },
    #[error("the status feedback does not have the shape of a {kind} status ({source})")]
    Shape {
        kind: &'static str,
        source: serde_json::Error,
    },
    /// The backend could not parse a `jsonRaw` value (`WorkError::MalformedFeedback`).
    #[error("the status feedback {feedback:?} of {manifest} is not valid JSON ({message})")]
    Malformed {
        manifest: String,
        feedback: String,
        message: String,
    },
}

/// Parses a `status` feedback value into `T`: either the status object itself or, as Maestro and
/// the work agent deliver `jsonRaw`, a string holding its JSON.
pub fn parse_status<T: serde::de::DeserializeOwned>(
    value: &Value,
    kind: &'static str,
) -> Result<T, FeedbackError> {
    let parsed;
    let object = match value {
        Value::String(raw) => {
            parsed = serde_json::from_str::<Value>(raw).map_err(FeedbackError::NotJson)?;
            &parsed
        }
        other => other,
    };
    if !object.is_object() {
        return Err(FeedbackError::NotAnObject {
            found: json_kind(object),
            kind,
        });
    }
    T::deserialize(object).map_err(|source| FeedbackError::Shape { kind, source })
}

/// Applied: the work did not exist and was created now.
pub fn created(work: WorkRef<'_>, object: &ObjectRef<'_>) -> Condition {
    cond(
        "Applied",
        ConditionStatus::True,
        "ManifestWorkCreated",
        format!(
            "{} sent to management cluster {} in ManifestWork {}",
            object.kind, work.consumer, work.name
        ),
    )
}

/// Applied: the work is applied and the object reports status.
pub fn applied(work: WorkRef<'_>, object: &ObjectRef<'_>) -> Condition {
    cond(
        "Applied",
        ConditionStatus::True,
        "ManifestWorkApplied",
        format!(
            "{} from ManifestWork {} is applied on management cluster {} and reports status",
            object.kind, work.name, work.consumer
        ),
    )
}

/// The work exists, no usable status: `note` says why a value that is there was not used
/// (`None`: there is none yet).
pub fn awaiting(work: WorkRef<'_>, object: &ObjectRef<'_>, note: Option<&str>) -> Conditions {
    let applied = match note {
        None => format!(
            "ManifestWork {} exists on management cluster {}; no {} status has been fed back yet",
            work.name, work.consumer, object.kind
        ),
        Some(note) => format!(
            "ManifestWork {} exists on management cluster {}; {note}",
            work.name, work.consumer
        ),
    };
    [
        cond(
            "Applied",
            ConditionStatus::True,
            "ManifestWorkExists",
            applied,
        ),
        cond(
            "Available",
            ConditionStatus::False,
            "AwaitingFeedback",
            format!(
                "Waiting for the {} status from management cluster {}. If this lasts more than a few minutes, check the ManifestWork {} conditions (Applied, StatusFeedbackSynced) on the hub and the work agent on the management cluster",
                object.kind, work.consumer, work.name
            ),
        ),
        no_issues(&format!(
            "No degradation reported (no {} status yet)",
            object.kind
        )),
    ]
}

/// What the work agent's view of a work allows the pulse to say.
#[derive(Debug)]
pub enum Observed<'a> {
    /// The object's status may be read: map it.
    Status(&'a Value),
    /// The agent could not apply the work. `fresh` is the object's status when an earlier apply
    /// still reports (then Available comes from it), else `available` says it is not running.
    ApplyFailed {
        applied: Condition,
        available: Condition,
        health: Condition,
        fresh: Option<&'a Value>,
    },
    /// The agent's view decides all three conditions (awaiting, missing, not synced).
    Decided(Conditions),
}

/// Reads what the agent reports about `existing`, in order: a manifest (or the work) with
/// `Applied=False` → apply failed; the object's manifest `Available=False` → missing (stale
/// feedback ignored); `StatusFeedbackSynced=False` → not synced; a status value while the
/// manifest is not reported `Available=True`, or older than that report → awaiting; no value →
/// awaiting; otherwise the status value.
pub fn observe<'a>(
    work: WorkRef<'_>,
    existing: &'a ExistingWork,
    object: &ObjectRef<'_>,
) -> Observed<'a> {
    let manifest = existing.manifest(object.group, object.resource, object.namespace, object.name);
    let feedback = feedback_of(manifest, object.kind, STATUS_FEEDBACK_NAME);
    let failures = apply_failures(existing);
    if !failures.is_empty() {
        let [applied, available, health] = apply_failed(work, object, &failures);
        let fresh = match feedback {
            Feedback::Fresh(value) => Some(value),
            _ => None,
        };
        return Observed::ApplyFailed {
            applied,
            available,
            health,
            fresh,
        };
    }
    match feedback {
        Feedback::Fresh(value) => match agent_behind(existing) {
            Some(note) => Observed::Decided(awaiting(work, object, Some(&note))),
            None => Observed::Status(value),
        },
        Feedback::None => Observed::Decided(awaiting(work, object, None)),
        Feedback::Ignored(why) => Observed::Decided(awaiting(work, object, Some(&why))),
        Feedback::ResourceNotAvailable(c) => Observed::Decided(missing(work, object, c)),
        Feedback::NotSynced(c) => Observed::Decided(not_synced(work, object, c)),
    }
}

/// Why a status fed back must not be used yet because the agent has not reported on the work's
/// current version (Maestro `status.ObservedVersion`, a hub work's conditions' `observedGeneration`,
/// behind the version): it still describes what the work carried before.
fn agent_behind(existing: &ExistingWork) -> Option<String> {
    let (Some(version), Some(observed)) = (existing.version, existing.observed_version) else {
        return None;
    };
    (observed < version).then(|| {
        format!(
            "the work agent has not reported on version {version} of the work yet (it last reported version {observed}), so the status fed back describes an earlier spec and is not used"
        )
    })
}

/// Whether the operator of `object` (a manifest of `existing`) has not yet observed what the agent
/// applied ([`observed::lag`](super::observed::lag)): the object's fed-back `metadata.generation`
/// against the `observedGeneration` of its conditions (`stamps`) of the types the tables `read`,
/// and `release` (`(asked, desired)`) when the object reports one.
pub fn operator_lag<'a>(
    existing: &ExistingWork,
    object: &ObjectRef<'_>,
    stamps: impl IntoIterator<Item = Stamp<'a>>,
    read: &[&str],
    release: Option<(&str, &str)>,
) -> Option<Lag> {
    let manifest = existing.manifest(object.group, object.resource, object.namespace, object.name);
    super::observed::lag(applied_object(manifest), stamps, read, release)
}

/// Available's reason while the object's operator has not observed the spec the agent applied.
pub const AWAITING_OPERATOR: &str = "AwaitingOperator";
/// Health's reason when that has lasted past the bound (`--operator-stuck-after`).
pub const OPERATOR_NOT_RECONCILING: &str = "OperatorNotReconciling";

/// The agent applied a spec that the object's operator (`operator`, e.g. `the HyperShift
/// operator`) has not observed yet ([`Lag`]): Applied True `ManifestWorkApplied`; Available False
/// [`AWAITING_OPERATOR`], naming the generation applied, the one the status describes, when it
/// was applied, and what that status still says (`serving`, the Available its tables give);
/// Health `health` (what the status says) while within `clock`'s bound, False
/// [`OPERATOR_NOT_RECONCILING`] past it.
pub fn awaiting_operator(
    work: WorkRef<'_>,
    object: &ObjectRef<'_>,
    operator: &str,
    lag: &Lag,
    clock: OperatorClock,
    (serving, health): (&Condition, Condition),
) -> Conditions {
    let place = object.place();
    let what = lag.describe(clock);
    let said = format!(
        "{} {}: {}",
        serving.status.as_str(),
        or_none(&serving.reason),
        serving.message
    );
    let available = cond(
        "Available",
        ConditionStatus::False,
        AWAITING_OPERATOR,
        truncate(
            format!(
                "{} {place} on management cluster {} is not yet observed by {operator}: {what}. Until {operator} reconciles it, its status describes the previous spec and is not taken for this one; it says: {said}",
                object.kind, work.consumer
            ),
            MAX_MESSAGE_LEN,
        ),
    );
    let health = if lag.is_stuck(clock) {
        cond(
            "Health",
            ConditionStatus::False,
            OPERATOR_NOT_RECONCILING,
            format!(
                "A person must act: {operator} on management cluster {} has not observed {} {place} for more than {} ({what}). Check that it runs on that management cluster and read its log for this {}; if it is only slow (many control planes), raise --operator-stuck-after (OPERATOR_STUCK_AFTER)",
                work.consumer,
                object.kind,
                friendly(clock.stuck_after),
                object.kind
            ),
        )
    } else {
        health
    };
    [applied(work, object), available, health]
}

/// Reason when the agent could not apply the work.
pub const APPLY_FAILED: &str = "ApplyFailed";
/// Reason when the agent reports `StatusFeedbackSynced=False`.
pub const FEEDBACK_NOT_SYNCED: &str = "FeedbackNotSynced";

fn apply_failed(work: WorkRef<'_>, object: &ObjectRef<'_>, failures: &[String]) -> Conditions {
    let place = object.place();
    [
        cond(
            "Applied",
            ConditionStatus::False,
            APPLY_FAILED,
            format!(
                "The work agent on management cluster {} could not apply ManifestWork {}: {}. It keeps retrying and failing until the cause is fixed on the management cluster (namespace, admission policy, quota) or in the {} spec",
                work.consumer,
                work.name,
                failures.join("; "),
                object.source
            ),
        ),
        cond(
            "Available",
            ConditionStatus::False,
            APPLY_FAILED,
            format!(
                "{} {place} is not running on management cluster {}: the work agent could not apply it (see Applied)",
                object.kind, work.consumer
            ),
        ),
        cond(
            "Health",
            ConditionStatus::False,
            APPLY_FAILED,
            format!(
                "A person must act: {} {place} cannot be applied on management cluster {} (see Applied)",
                object.kind, work.consumer
            ),
        ),
    ]
}

fn missing(work: WorkRef<'_>, object: &ObjectRef<'_>, available: &WorkCondition) -> Conditions {
    let place = object.place();
    let reason = object.missing_reason();
    [
        cond(
            "Applied",
            ConditionStatus::True,
            "ManifestWorkApplied",
            format!(
                "ManifestWork {} was applied on management cluster {}",
                work.name, work.consumer
            ),
        ),
        cond(
            "Available",
            ConditionStatus::False,
            &reason,
            format!(
                "The work agent reports {} {place} as not available on management cluster {} ({}: {}): it is not there (deleted outside the work?). The status fed back before is ignored. The agent re-creates it on its next resync (minutes); if this lasts, look at the management cluster",
                object.kind,
                work.consumer,
                or_none(&available.reason),
                quote(&available.message)
            ),
        ),
        cond(
            "Health",
            ConditionStatus::False,
            &reason,
            format!(
                "{} {place} is missing on management cluster {} (see Available)",
                object.kind, work.consumer
            ),
        ),
    ]
}

fn not_synced(work: WorkRef<'_>, object: &ObjectRef<'_>, synced: &WorkCondition) -> Conditions {
    let message = format!(
        "The work agent on management cluster {} could not sync the status of {} {} ({}: {}); the status fed back before is not used. Check the ManifestWork {} feedback rule and the work agent's logs",
        work.consumer,
        object.kind,
        object.place(),
        or_none(&synced.reason),
        quote(&synced.message),
        work.name
    );
    [
        cond(
            "Applied",
            ConditionStatus::True,
            "ManifestWorkApplied",
            format!(
                "ManifestWork {} is applied on management cluster {}",
                work.name, work.consumer
            ),
        ),
        cond(
            "Available",
            ConditionStatus::Unknown,
            FEEDBACK_NOT_SYNCED,
            message.clone(),
        ),
        cond(
            "Health",
            ConditionStatus::Unknown,
            FEEDBACK_NOT_SYNCED,
            message,
        ),
    ]
}

/// Status feedback was present but unreadable.
pub fn invalid_feedback(
    work: WorkRef<'_>,
    object: &ObjectRef<'_>,
    error: &FeedbackError,
) -> Conditions {
    let message = format!(
        "Cannot read the {} status fed back through ManifestWork {} on {}: {error}. Check the work's feedback rules (Maestro: `status` <- JSONPath `.status`, with the work agent's raw JSON feedback; an OCM hub: one scalar per status field, `status.…` <- `.status.…`) and the work agent's version",
        object.kind, work.name, work.consumer
    );
    [
        cond(
            "Applied",
            ConditionStatus::True,
            "ManifestWorkExists",
            format!(
                "ManifestWork {} exists on management cluster {}",
                work.name, work.consumer
            ),
        ),
        cond(
            "Available",
            ConditionStatus::Unknown,
            "InvalidFeedback",
            message.clone(),
        ),
        cond(
            "Health",
            ConditionStatus::Unknown,
            "InvalidFeedback",
            message,
        ),
    ]
}

/// Reason when a generation bump would change immutable fields (nothing sent).
pub const IMMUTABLE_FIELD_CHANGED: &str = "ImmutableFieldChanged";
/// Reason when the work was updated to this pulse's generation.
pub const MANIFEST_WORK_UPDATED: &str = "ManifestWorkUpdated";
/// Reason when the pulse is older than the generation the work carries (nothing sent).
pub const STALE_GENERATION: &str = "StaleGeneration";
/// Available's reason when the work was updated to the reported generation and the agent has
/// not applied it yet.
pub const UPDATING: &str = "Updating";

/// The work was updated to `generation` (from `held`): Applied says so. The report describes
/// `generation` (the newest the adapter knows of): Available is False [`UPDATING`] because the
/// management cluster does not reflect it yet, its message saying what the object of `held`
/// (`observed`, read before the update) does meanwhile; Health stays `observed`'s.
pub fn updated(
    work: WorkRef<'_>,
    object: &ObjectRef<'_>,
    mut observed: Report,
    held: Option<i64>,
    generation: Option<i64>,
) -> Report {
    let from = held.map_or_else(
        || "a work without a generation".to_owned(),
        |g| format!("generation {g}"),
    );
    let to = generation.map_or_else(
        || "the current spec".to_owned(),
        |g| format!("generation {g}"),
    );
    replace(
        &mut observed,
        cond(
            "Applied",
            ConditionStatus::True,
            MANIFEST_WORK_UPDATED,
            format!(
                "{} of {to} sent to management cluster {} in ManifestWork {} (it held {from}); the work agent applies it next",
                object.kind, work.consumer, work.name
            ),
        ),
    );
    // The management cluster runs the held generation's spec until the agent applies the update:
    // HyperFleet must not count the new generation as reconciled from the old object's status.
    // Reporting the new generation as not yet available keeps LastKnownReconciled (sticky at the
    // last reconciled generation); the next pulse reads the work at the new generation.
    not_yet(
        &mut observed,
        UPDATING,
        format!(
            "The {} of {to} is not applied yet (sent now; the work agent applies it next)",
            object.kind
        ),
        object,
        held,
    );
    observed.observed_generation = generation;
    observed
}

/// The pulse's update found the work already brought to `generation` (or newer) by another
/// pulse: nothing sent. The report describes `generation`, not yet reflected as far as this
/// pulse read (`observed` is the work read before, of `held`): Available False [`UPDATING`].
pub fn updated_meanwhile(
    object: &ObjectRef<'_>,
    mut observed: Report,
    held: Option<i64>,
    generation: Option<i64>,
) -> Report {
    let to = generation.map_or_else(
        || "the current spec".to_owned(),
        |g| format!("generation {g}"),
    );
    not_yet(
        &mut observed,
        UPDATING,
        format!(
            "Another pulse sent the {} of {to} meanwhile; the work agent applies it next",
            object.kind
        ),
        object,
        held,
    );
    observed.observed_generation = generation;
    observed
}

/// Replaces `observed`'s Available with False `reason`: `what` (why the generation reported is
/// not reflected), then what the object of `held` (the Available `observed` had) does meanwhile.
pub fn not_yet(
    observed: &mut Report,
    reason: &str,
    what: String,
    object: &ObjectRef<'_>,
    held: Option<i64>,
) {
    let held = held.map_or_else(String::new, |g| format!(" of generation {g}"));
    let meanwhile = match observed.condition("Available") {
        Some(a) => format!(
            "; meanwhile the {}{held} on the management cluster: Available={} ({}): {}",
            object.kind,
            a.status,
            or_none(&a.reason),
            quote(&a.message)
        ),
        None => String::new(),
    };
    replace(
        observed,
        cond(
            "Available",
            ConditionStatus::False,
            reason,
            format!("{what}{meanwhile}"),
        ),
    );
}

/// `generation` would change immutable fields (`changes`, one line each, naming the field,
/// `fields` their names): nothing was sent. Applied=False, Available=False and Health=False
/// [`IMMUTABLE_FIELD_CHANGED`]; the report describes `generation` (a refusal must reach HyperFleet:
/// an `Unknown` would be discarded, and False at the new generation keeps LastKnownReconciled),
/// Available's message saying what the object of `held` does meanwhile.
pub fn immutable_change(
    work: WorkRef<'_>,
    object: &ObjectRef<'_>,
    mut observed: Report,
    (changes, fields): (&[String], &[&str]),
    generation: Option<i64>,
    held: Option<i64>,
) -> Report {
    let list: String = changes.iter().map(|c| format!("\n- {c}")).collect();
    let pulse = generation.map_or_else(|| "This spec".to_owned(), |g| format!("Generation {g}"));
    let kept = held.map_or_else(String::new, |g| format!(" (generation {g})"));
    replace(
        &mut observed,
        cond(
            "Applied",
            ConditionStatus::False,
            IMMUTABLE_FIELD_CHANGED,
            format!(
                "{pulse} changes fields the {} does not allow to change after creation, so nothing was sent; management cluster {} keeps the spec it has{kept} in ManifestWork {}. Set these fields back in the HyperFleet {} spec (a different value needs a new {}):{list}",
                object.kind, work.consumer, work.name, object.source, object.source
            ),
        ),
    );
    replace(
        &mut observed,
        cond(
            "Health",
            ConditionStatus::False,
            IMMUTABLE_FIELD_CHANGED,
            format!(
                "A person must act: the {} spec changes immutable fields ({}); see Applied",
                object.source,
                fields.join(", ")
            ),
        ),
    );
    not_yet(
        &mut observed,
        IMMUTABLE_FIELD_CHANGED,
        format!(
            "{pulse} is refused (immutable fields changed, see Applied) and will not be applied"
        ),
        object,
        held,
    );
    observed.observed_generation = generation;
    observed
}

/// The pulse (`pulse`) is older than the generation the work carries (`held`): nothing was
/// sent. A True Applied becomes [`STALE_GENERATION`]; a False one keeps its reason and is
/// prefixed with the same note. `observed_generation` stays `held`.
pub fn stale_generation(work: WorkRef<'_>, mut observed: Report, pulse: i64, held: i64) -> Report {
    let note = format!(
        "This pulse is for generation {pulse}, older than generation {held} that ManifestWork {} on management cluster {} already carries; nothing was sent (a pulse never rolls the spec back)",
        work.name, work.consumer
    );
    if let Some(applied) = observed
        .conditions
        .iter_mut()
        .find(|c| c.type_ == "Applied")
    {
        let message = format!("{note}. {}", applied.message);
        if applied.status == ConditionStatus::True {
            *applied = cond("Applied", ConditionStatus::True, STALE_GENERATION, message);
        } else {
            applied.message = truncate(message, MAX_MESSAGE_LEN);
        }
    }
    observed.observed_generation = Some(held);
    observed
}

/// A work with our name exists but its labels say it belongs to someone else.
pub fn ownership_conflict(work: WorkRef<'_>, owner: &Owner, found: &Ownership) -> Conditions {
    let applied = format!(
        "ManifestWork {} on management cluster {} already exists with {found}, not {}; it was left untouched. Find who created it; delete or relabel it if it is stale",
        work.name,
        work.consumer,
        owner.describe()
    );
    let other = format!(
        "Nothing applied by this adapter: ManifestWork {} belongs to someone else (see Applied)",
        work.name
    );
    refusal_conditions("OwnershipConflict", applied, other)
}
