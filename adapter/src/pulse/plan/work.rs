//! The work stage of the plan: what to do with the work where it is — deleting ([`deletion`]),
//! missing ([`create`]), someone else's, older or newer than the pulse ([`found`],
//! [`update`]).

#![allow(
    clippy::result_large_err,
    reason = "a plan call returns one step; the next step is the error of its helpers, moved once"
)]

use crate::pulse::object::Object;
use crate::pulse::step::{Asked, Created, Decision, Deletion, Outcome, Read, Seen, Step, Write};
use crate::work::manifestwork::{Ownership, is_ours, ownership, work_generation};
use crate::work::sync::{Failure, GenerationCheck, generation_check};
use crate::work::{ExistingWork, WorkAt, WorkError, WorkKey};

/// Done with `decision` about the work at `at`.
pub(super) fn done(at: WorkAt, decision: Decision) -> Step {
    Step::Done(Outcome {
        at,
        decision,
        placement: Vec::new(),
    })
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
    let pulse = seen.pulse;
    let first = match first(seen, target) {
        Ok(first) => first,
        Err(step) => return step,
    };
    let at = target.at.clone();
    let spec = match &pulse.asked {
        Asked::Deletion { .. } => return deletion::<O>(seen, target, first),
        Asked::Spec(Err(violations)) => return done(at, Decision::Invalid(violations.clone())),
        Asked::Spec(Ok(spec)) => spec,
    };
    match first {
        Err(failure) => done(at, Decision::Failed(failure.clone())),
        Ok(None) => create::<O>(seen, target, spec),
        Ok(Some(existing)) => found::<O>(seen, target, spec, existing),
    }
}

/// The first read of the work: from placement, else asked.
fn first<'a>(
    seen: &'a Seen<'_, impl Sized>,
    target: &'a Target<'_>,
) -> Result<Result<Option<&'a ExistingWork>, &'a Failure>, Step> {
    if let Some(known) = target.first {
        return Ok(Ok(known));
    }
    match seen.work(&target.at, false) {
        None => Err(Step::Read(Read::Work {
            at: target.at.clone(),
            again: false,
        })),
        Some(read) => Ok(read.as_ref().map(Option::as_ref)),
    }
}

/// The work exists: ours, and how its generation compares with the pulse's.
fn found<O: Object>(
    seen: &Seen<'_, O::Spec>,
    target: &Target<'_>,
    spec: &O::Spec,
    existing: &ExistingWork,
) -> Step {
    let pulse = seen.pulse;
    let at = target.at.clone();
    if let not_ours @ Ownership::NotOurs { .. } = ownership(&existing.labels, &O::owner(&pulse.ids))
    {
        return done(at, Decision::NotOurs(not_ours));
    }
    let held = work_generation(&existing.annotations);
    let work = existing.clone();
    match generation_check(pulse.generation, held) {
        GenerationCheck::Newer if existing.deleting.is_none() => {
            update::<O>(seen, target, spec, existing)
        }
        GenerationCheck::Newer => done(at, Decision::NotSentDeleting(work)),
        GenerationCheck::Older { pulse, held } => done(at, Decision::Stale { work, pulse, held }),
        GenerationCheck::Current => done(at, Decision::Observed(work)),
    }
}

/// What the gate says: the control plane offers what the object needs, or the plan goes no
/// further (`Err`: the step to return).
fn gate<O: Object>(
    seen: &Seen<'_, O::Spec>,
    target: &Target<'_>,
    waiting: Option<&ExistingWork>,
) -> Result<O::Gate, Step> {
    let pulse = seen.pulse;
    let consumer = target.at.consumer.as_str();
    let control_plane = if O::GATED {
        match &target.control_plane {
            Source::Found(work) => *work,
            Source::Read(at) => match seen.work(at, false) {
                None => {
                    return Err(Step::Read(Read::Work {
                        at: at.clone(),
                        again: false,
                    }));
                }
                Some(Err(failure)) => {
                    return Err(done(target.at.clone(), Decision::Failed(failure.clone())));
                }
                Some(Ok(work)) => work.as_ref(),
            },
        }
    } else {
        None
    };
    O::gate(pulse, consumer, control_plane).map_err(|why| {
        done(
            target.at.clone(),
            Decision::Waiting {
                why,
                work: waiting.cloned(),
            },
        )
    })
}

/// The work is missing: the gate, the spec against it, then the create (a create that races
/// another writer carries on with the work it wrote).
fn create<O: Object>(seen: &Seen<'_, O::Spec>, target: &Target<'_>, spec: &O::Spec) -> Step {
    let pulse = seen.pulse;
    let at = target.at.clone();
    let gate = match gate::<O>(seen, target, None) {
        Ok(gate) => gate,
        Err(step) => return step,
    };
    let violations = O::fits(spec, &gate);
    if !violations.is_empty() {
        return done(at, Decision::Invalid(violations));
    }
    match seen.created(&at) {
        None => Step::Write(Write::Create {
            manifest: O::manifest(pulse, spec, &at.consumer, &gate),
            at,
        }),
        Some(Err(failure)) => done(at, Decision::Failed(failure.clone())),
        Some(Ok(Created::Now)) => done(at, Decision::Created),
        Some(Ok(Created::Raced(existing))) => found::<O>(seen, target, spec, existing),
    }
}

/// The pulse is newer than the work: the immutable fields, the gate, the spec against it, then
/// the update guarded by the version read; after a conflict the work is read again once.
fn update<O: Object>(
    seen: &Seen<'_, O::Spec>,
    target: &Target<'_>,
    spec: &O::Spec,
    existing: &ExistingWork,
) -> Step {
    let pulse = seen.pulse;
    let at = target.at.clone();
    let immutable = |changes: Vec<_>| {
        done(
            at.clone(),
            Decision::Immutable {
                work: existing.clone(),
                changes,
            },
        )
    };
    let changes = O::held_changes(existing, spec);
    if !changes.is_empty() {
        return immutable(changes);
    }
    let gate = match gate::<O>(seen, target, Some(existing)) {
        Ok(gate) => gate,
        Err(step) => return step,
    };
    let violations = O::fits(spec, &gate);
    if !violations.is_empty() {
        let work = existing.clone();
        return done(at, Decision::Unfit { work, violations });
    }
    let manifest = O::manifest(pulse, spec, &at.consumer, &gate);
    let changes = O::changes(existing, &manifest, spec);
    if !changes.is_empty() {
        return immutable(changes);
    }
    match seen.updated(false) {
        None => Step::Write(Write::Update {
            at,
            manifest,
            current: existing.clone(),
            again: false,
        }),
        Some(Ok(())) => done(at, Decision::Updated(existing.clone())),
        Some(Err(Failure::Permanent(WorkError::Conflict { message }))) => {
            after_conflict::<O>(seen, target, spec, existing, (manifest, message))
        }
        Some(Err(failure)) => done(at, Decision::Failed(failure.clone())),
    }
}

/// The update met a stale version: the work read again decides — someone else's or being
/// deleted (the conflict stands), already at this generation (another pulse), immutable fields,
/// or the update once more.
fn after_conflict<O: Object>(
    seen: &Seen<'_, O::Spec>,
    target: &Target<'_>,
    spec: &O::Spec,
    existing: &ExistingWork,
    (manifest, message): (serde_json::Value, &str),
) -> Step {
    let pulse = seen.pulse;
    let fresh = match reread(seen, target) {
        Ok(fresh) => fresh,
        Err(step) => return step,
    };
    let at = target.at.clone();
    let failed = |error: WorkError| done(at.clone(), Decision::Failed(Failure::Permanent(error)));
    let (fresh_at, fresh) = match fresh {
        Err(failure) => return done(at, Decision::Failed(failure.clone())),
        Ok(None) => {
            return failed(WorkError::NotFound {
                message: format!("the work disappeared while it was being updated ({message})"),
            });
        }
        Ok(Some(fresh)) => fresh,
    };
    if !is_ours(&fresh.labels, &O::owner(&pulse.ids)) || fresh.deleting.is_some() {
        return failed(WorkError::Conflict {
            message: message.to_owned(),
        });
    }
    let held = work_generation(&fresh.annotations);
    if generation_check(pulse.generation, held) != GenerationCheck::Newer {
        return done(fresh_at, Decision::UpdatedMeanwhile(existing.clone()));
    }
    let changes = O::changes(fresh, &manifest, spec);
    if !changes.is_empty() {
        let work = existing.clone();
        return done(fresh_at, Decision::Immutable { work, changes });
    }
    match seen.updated(true) {
        None => Step::Write(Write::Update {
            at: fresh_at,
            manifest,
            current: fresh.clone(),
            again: true,
        }),
        Some(Ok(())) => done(fresh_at, Decision::Updated(existing.clone())),
        Some(Err(failure)) => done(fresh_at, Decision::Failed(failure.clone())),
    }
}

/// The work read again after a conflict, and where it is now: a placed work by the search (the
/// work of its key, else the only live one of the cluster), else the work at its place.
#[allow(clippy::type_complexity)]
fn reread<'a>(
    seen: &'a Seen<'_, impl Sized>,
    target: &Target<'_>,
) -> Result<Result<Option<(WorkAt, &'a ExistingWork)>, &'a Failure>, Step> {
    let Some(n) = target.search_again else {
        return match seen.work(&target.at, true) {
            None => Err(Step::Read(Read::Work {
                at: target.at.clone(),
                again: true,
            })),
            Some(Err(failure)) => Ok(Err(failure)),
            Some(Ok(work)) => Ok(Ok(work.as_ref().map(|w| (target.at.clone(), w)))),
        };
    };
    let found = match seen.found(n) {
        None => return Err(Step::Read(Read::Find { nth: n })),
        Some(Err(failure)) => return Ok(Err(failure)),
        Some(Ok(found)) => found,
    };
    let own = found.iter().find(|f| f.at.key == target.at.key);
    let chosen = own.or_else(|| {
        let mut live = found.iter().filter(|f| !f.deleting);
        match (live.next(), live.next()) {
            (Some(only), None) => Some(only),
            _ => None,
        }
    });
    Ok(match chosen {
        None => Ok(None),
        Some(found) => match &found.work {
            Ok(work) => Ok(Some((found.at.clone(), work))),
            // A work that cannot be read is not ours to update: the conflict stands.
            Err(_) => Ok(None),
        },
    })
}

/// The resource is being deleted: the work is deleted once it is ours and nothing holds it;
/// never created or updated.
fn deletion<O: Object>(
    seen: &Seen<'_, O::Spec>,
    target: &Target<'_>,
    first: Result<Option<&ExistingWork>, &Failure>,
) -> Step {
    let pulse = seen.pulse;
    let at = target.at.clone();
    let deleting = |deletion| done(at.clone(), Decision::Deleting(deletion));
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
    match seen.deleted(&at) {
        None => Step::Write(Write::Delete { at }),
        Some(Ok(())) => deleting(Deletion::Requested { now: true, work }),
        // Gone between the read and the delete (another pulse, the agent): done.
        Some(Err(Failure::Permanent(WorkError::NotFound { .. }))) => {
            deleting(Deletion::Gone(Some(work)))
        }
        Some(Err(failure)) => deleting(Deletion::Failed(failure.clone())),
    }
}

/// The place of a work not located (no work found, nothing to place).
pub(super) fn nowhere(name: &str) -> WorkAt {
    WorkAt {
        consumer: String::new(),
        name: name.to_owned(),
        key: WorkKey::Named,
    }
}
