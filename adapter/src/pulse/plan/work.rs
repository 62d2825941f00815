//! The work stage of the plan: what to do with the work where it is — deleting ([`deletion`]),
//! missing ([`create`]), someone else's, older or newer than the pulse ([`found`],
//! [`update`]). Each stage is `Ok` with the step it ends on, or stops early with `Err`: the
//! step that asks what it needs.

use crate::pulse::object::Object;
use crate::pulse::step::{Asked, Created, Decision, Deletion, Outcome, Seen, Step, Write};
use crate::work::Failure;
use crate::work::manifestwork::{GenerationCheck, generation_check};
use crate::work::manifestwork::{Ownership, is_ours, ownership, work_generation};
use crate::work::{ExistingWork, WorkAt, WorkError, WorkKey};

/// A stage's step: `Err` stops the plan early with the step asking what it needs.
pub(super) type Stage = Result<Step, Step>;

/// Done with `decision` about the work at `at`.
pub(super) fn done(at: &WorkAt, decision: Decision) -> Step {
    Step::Done(Box::new(Outcome {
        at: at.clone(),
        decision,
        placement: Vec::new(),
    }))
}

/// Done: the backend did not answer usefully about the work at `at`.
pub(super) fn failed(at: &WorkAt, failure: &Failure) -> Step {
    done(at, Decision::Failed(failure.clone()))
}

/// The place of a work not located (no work found, nothing to place).
pub(super) fn nowhere(name: &str) -> WorkAt {
    WorkAt {
        consumer: String::new(),
        name: name.to_owned(),
        key: WorkKey::Named,
    }
}

/// Where the gate reads the cluster's control plane from.
#[derive(Debug, Clone)]
pub(super) enum Source<'s> {
    /// The control plane's work at this place, read when needed.
    Read(WorkAt),
    /// The control plane's work as placement found it (`None`: there is none).
    Found(Option<&'s ExistingWork>),
}

/// The work the work stage is about, and how it is read.
#[derive(Debug, Clone)]
pub(super) struct Target<'s> {
    pub at: WorkAt,
    /// The work as placement found it (`Some(None)`: known absent); `None`: read it.
    pub first: Option<Option<&'s ExistingWork>>,
    /// Where the gate reads the control plane (NodePools).
    pub control_plane: Source<'s>,
    /// A placed work is read again by search number `n` (the backend finds it by its key);
    /// `None`: by reading `at`.
    pub search_again: Option<u8>,
}

/// The work stage: what to do with the work at `target`.
pub(super) fn work<O: Object>(seen: &Seen<'_, O::Spec>, target: &Target<'_>) -> Step {
    stage::<O>(seen, target).unwrap_or_else(|step| step)
}

fn stage<O: Object>(seen: &Seen<'_, O::Spec>, target: &Target<'_>) -> Stage {
    let at = &target.at;
    let first = match target.first {
        Some(known) => Ok(known),
        None => seen.work(at, false)?.as_ref().map(Option::as_ref),
    };
    let spec = match &seen.pulse.asked {
        Asked::Deletion { .. } => return deletion::<O>(seen, at, first),
        Asked::Spec(Err(violations)) => return Ok(done(at, Decision::Invalid(violations.clone()))),
        Asked::Spec(Ok(spec)) => spec,
    };
    match first.map_err(|failure| failed(at, failure))? {
        None => create::<O>(seen, target, spec),
        Some(existing) => found::<O>(seen, target, spec, existing),
    }
}

/// The work exists: ours, and how its generation compares with the pulse's.
fn found<O: Object>(
    seen: &Seen<'_, O::Spec>,
    target: &Target<'_>,
    spec: &O::Spec,
    existing: &ExistingWork,
) -> Stage {
    let pulse = seen.pulse;
    let at = &target.at;
    if let not_ours @ Ownership::NotOurs { .. } = ownership(&existing.labels, &O::owner(&pulse.ids))
    {
        return Ok(done(at, Decision::NotOurs(not_ours)));
    }
    let work = existing.clone();
    Ok(
        match generation_check(pulse.generation, work_generation(&existing.annotations)) {
            GenerationCheck::Newer if existing.deleting.is_none() => {
                return update::<O>(seen, target, spec, existing);
            }
            GenerationCheck::Newer => done(at, Decision::NotSentDeleting(work)),
            GenerationCheck::Older { pulse, held } => {
                done(at, Decision::Stale { work, pulse, held })
            }
            GenerationCheck::Current => done(at, Decision::Observed(work)),
        },
    )
}

/// What the cluster's control plane offers the object, or the step the plan stops on: it is
/// not read yet, or cannot be, or cannot take the object (`waiting`: the object's work).
fn gate<O: Object>(
    seen: &Seen<'_, O::Spec>,
    target: &Target<'_>,
    waiting: Option<&ExistingWork>,
) -> Result<O::Gate, Step> {
    let at = &target.at;
    let control_plane = match &target.control_plane {
        _ if !O::GATED => None,
        Source::Found(work) => *work,
        Source::Read(cp) => seen
            .work(cp, false)?
            .as_ref()
            .map_err(|f| failed(at, f))?
            .as_ref(),
    };
    O::gate(seen.pulse, &at.consumer, control_plane).map_err(|why| {
        let work = waiting.cloned();
        done(at, Decision::Waiting { why, work })
    })
}

/// The work is missing: the gate, the spec against it, then the create (a create that races
/// another writer carries on with the work it wrote).
fn create<O: Object>(seen: &Seen<'_, O::Spec>, target: &Target<'_>, spec: &O::Spec) -> Stage {
    let at = &target.at;
    let gate = gate::<O>(seen, target, None)?;
    let violations = O::fits(spec, &gate);
    if !violations.is_empty() {
        return Ok(done(at, Decision::Invalid(violations)));
    }
    let manifest = || O::manifest(seen.pulse, spec, &at.consumer, &gate);
    match seen
        .created(at, manifest)?
        .as_ref()
        .map_err(|f| failed(at, f))?
    {
        Created::Now => Ok(done(at, Decision::Created)),
        Created::Raced(existing) => found::<O>(seen, target, spec, existing),
    }
}

/// The pulse is newer than the work: the immutable fields, the gate, the spec against it, then
/// the update guarded by the version read; after a conflict the work is read again once.
fn update<O: Object>(
    seen: &Seen<'_, O::Spec>,
    target: &Target<'_>,
    spec: &O::Spec,
    existing: &ExistingWork,
) -> Stage {
    let at = &target.at;
    let work = || existing.clone();
    let immutable = |changes| {
        let work = work();
        Ok(done(at, Decision::Immutable { work, changes }))
    };
    let changes = O::held_changes(existing, spec);
    if !changes.is_empty() {
        return immutable(changes);
    }
    let gate = gate::<O>(seen, target, Some(existing))?;
    let violations = O::fits(spec, &gate);
    if !violations.is_empty() {
        let work = work();
        return Ok(done(at, Decision::Unfit { work, violations }));
    }
    let manifest = O::manifest(seen.pulse, spec, &at.consumer, &gate);
    let changes = O::changes(existing, &manifest, spec);
    if !changes.is_empty() {
        return immutable(changes);
    }
    let send = || Write::Update {
        at: at.clone(),
        manifest: manifest.clone(),
        current: work(),
        again: false,
    };
    Ok(match seen.updated(false, send)? {
        Ok(()) => done(at, Decision::Updated(work())),
        Err(Failure::Permanent(WorkError::Conflict { message })) => {
            return after_conflict::<O>(seen, target, (spec, existing), (&manifest, message));
        }
        Err(failure) => failed(at, failure),
    })
}

/// The update met a stale version: the work read again decides — someone else's or being
/// deleted (the conflict stands), already at this generation (another pulse), immutable fields,
/// or the update once more.
fn after_conflict<O: Object>(
    seen: &Seen<'_, O::Spec>,
    target: &Target<'_>,
    (spec, existing): (&O::Spec, &ExistingWork),
    (manifest, message): (&serde_json::Value, &str),
) -> Stage {
    let pulse = seen.pulse;
    let at = &target.at;
    let failed_with = |error| Ok(done(at, Decision::Failed(Failure::Permanent(error))));
    let Some((fresh_at, fresh)) = reread(seen, target)?.map_err(|f| failed(at, f))? else {
        let message = format!("the work disappeared while it was being updated ({message})");
        return failed_with(WorkError::NotFound { message });
    };
    if !is_ours(&fresh.labels, &O::owner(&pulse.ids)) || fresh.deleting.is_some() {
        let message = message.to_owned();
        return failed_with(WorkError::Conflict { message });
    }
    let work = || existing.clone();
    let held = work_generation(&fresh.annotations);
    if generation_check(pulse.generation, held) != GenerationCheck::Newer {
        return Ok(done(&fresh_at, Decision::UpdatedMeanwhile(work())));
    }
    let changes = O::changes(fresh, manifest, spec);
    if !changes.is_empty() {
        let work = work();
        return Ok(done(&fresh_at, Decision::Immutable { work, changes }));
    }
    let send = || Write::Update {
        at: fresh_at.clone(),
        manifest: manifest.clone(),
        current: fresh.clone(),
        again: true,
    };
    Ok(match seen.updated(true, send)? {
        Ok(()) => done(&fresh_at, Decision::Updated(work())),
        Err(failure) => failed(&fresh_at, failure),
    })
}

/// The work read again after a conflict, and where it is now: a placed work by the search (the
/// work of its key, else the only live one of the cluster), else the work at its place.
#[allow(clippy::type_complexity)]
fn reread<'a>(
    seen: &'a Seen<'_, impl Sized>,
    target: &Target<'_>,
) -> Result<Result<Option<(WorkAt, &'a ExistingWork)>, &'a Failure>, Step> {
    let at = &target.at;
    let Some(n) = target.search_again else {
        let work = seen.work(at, true)?.as_ref();
        return Ok(work.map(|w| w.as_ref().map(|w| (at.clone(), w))));
    };
    let found = match seen.found(n)? {
        Err(failure) => return Ok(Err(failure)),
        Ok(found) => found,
    };
    let mut live = found.iter().filter(|f| !f.deleting);
    let only = match (live.next(), live.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    };
    let chosen = found.iter().find(|f| f.at.key == at.key).or(only);
    // A work that cannot be read is not one to update: the conflict stands.
    Ok(Ok(chosen.and_then(|f| {
        f.work.as_ref().ok().map(|w| (f.at.clone(), w))
    })))
}

/// The resource is being deleted: the work is deleted once it is ours and nothing holds it;
/// never created or updated.
fn deletion<O: Object>(
    seen: &Seen<'_, O::Spec>,
    at: &WorkAt,
    first: Result<Option<&ExistingWork>, &Failure>,
) -> Stage {
    let pulse = seen.pulse;
    let deleting = |deletion| Ok(done(at, Decision::Deleting(deletion)));
    let existing = match first {
        Err(failure) => return deleting(Deletion::Failed(failure.clone())),
        Ok(None) => return deleting(Deletion::Gone(None)),
        Ok(Some(existing)) => existing,
    };
    if let not_ours @ Ownership::NotOurs { .. } = ownership(&existing.labels, &O::owner(&pulse.ids))
    {
        return deleting(Deletion::NotOurs(not_ours));
    }
    let work = existing.clone();
    if existing.deleting.is_some() {
        return deleting(Deletion::Requested { now: false, work });
    }
    if O::holds_deletion(pulse) {
        let nodepools = pulse.nodepools.clone();
        return deleting(Deletion::Held { work, nodepools });
    }
    match seen.deleted(at)? {
        Ok(()) => deleting(Deletion::Requested { now: true, work }),
        // Gone between the read and the delete (another pulse, the agent): done.
        Err(Failure::Permanent(WorkError::NotFound { .. })) => deleting(Deletion::Gone(Some(work))),
        Err(failure) => deleting(Deletion::Failed(failure.clone())),
    }
}
