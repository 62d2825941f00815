//! Placement as a stage of the plan (docs/placement.md), pure like the rest of it: one search
//! finds the cluster's control-plane works on every management cluster, then
//! - a control plane: one live work → used where it is, after the health rule on its management
//!   cluster's record (unavailable and never reported by its agent → withdrawn and placed again,
//!   once; unavailable and reported → Health says so, never a move); no live work → placed
//!   (screened, ranked, one lease-guarded create per candidate in turn; a create refused because
//!   another pulse placed it first carries on with that pulse's work); several → the applied one
//!   kept (else the oldest), the never-applied others withdrawn, two applied → `DoublePlacement`;
//!   deleting → the work found (the oldest live one, else the newest being deleted);
//! - a NodePool: it follows the control plane (the applied live work, else the oldest live one,
//!   else the newest being deleted) to its management cluster, whose record's health Health
//!   reports.

use super::work::{Source, Target, done, nowhere, work};
use crate::pulse::object::Object;
use crate::pulse::step::{Asked, Attempt, Decision, Placement, Read, Record, Seen, Step, Write};
use crate::placement::NOT_LOCATED;
use crate::placement::entity::Health;
use crate::placement::select::{self, PassedOver};
use crate::work::sync::Failure;
use crate::work::{Found, WorkAt, WorkError, WorkKey};

/// The placement stage, then the work stage on the work it locates.
pub(super) fn plan<O: Object>(seen: &Seen<'_, O::Spec>, name: &str) -> Step {
    let found = match seen.found(0) {
        None => return Step::Read(Read::Find { nth: 0 }),
        Some(Err(failure)) => return failed(located(NOT_LOCATED, name), failure),
        Some(Ok(found)) => found,
    };
    let mut works: Vec<&Found> = found.iter().collect();
    works.sort_by(|a, b| (&a.created_at, a.key()).cmp(&(&b.created_at, b.key())));
    let live: Vec<&Found> = works.iter().copied().filter(|f| !f.deleting).collect();
    let withdrawn = works.iter().rev().copied().find(|f| f.deleting);
    if !O::PLACES {
        return follow::<O>(seen, name, &live, withdrawn);
    }
    let stage = Stage { seen, name };
    match (&seen.pulse.asked, live.as_slice()) {
        (Asked::Deletion { .. }, _) => stage.on::<O>(live.first().copied().or(withdrawn), 1, None),
        (Asked::Spec(_), []) => stage.place::<O>(withdrawn.map(Found::key), None),
        (Asked::Spec(_), [only]) => stage.steady::<O>(only),
        (Asked::Spec(_), several) => stage.repair::<O>(several),
    }
}

/// `name` on `consumer`, keyed by its name.
fn located(consumer: &str, name: &str) -> WorkAt {
    WorkAt::named(consumer, name)
}

fn failed(at: WorkAt, failure: &Failure) -> Step {
    done(at, Decision::Failed(failure.clone()))
}

/// The control plane's placement, over what was seen.
struct Stage<'a, 'p, S> {
    seen: &'a Seen<'p, S>,
    name: &'a str,
}

impl<S> Stage<'_, '_, S> {
    /// The work stage on `found` (or on no work), the placement word added to its outcome;
    /// `searches` is how many searches located it.
    fn on<O: Object<Spec = S>>(
        &self,
        found: Option<&Found>,
        searches: u8,
        placement: Option<Placement>,
    ) -> Step {
        let (at, first) = match found {
            None => (nowhere(self.name), None),
            Some(found) => match &found.work {
                Err(error) => {
                    return failed(found.at.clone(), &Failure::Permanent(error.clone()));
                }
                Ok(work) => (found.at.clone(), Some(work)),
            },
        };
        let target = Target {
            at,
            first: Some(first),
            control_plane: Source::Found(None),
            search_again: Some(searches),
        };
        with_placement(work::<O>(self.seen, &target), placement)
    }

    /// One live work: where it is, after the health rule on its management cluster.
    fn steady<O: Object<Spec = S>>(&self, found: &Found) -> Step {
        let consumer = found.at.consumer.as_str();
        let Some(record) = self.seen.record(consumer) else {
            return Step::Read(Read::Record {
                consumer: consumer.to_owned(),
            });
        };
        let placement = match record {
            Record::Known {
                name,
                health: Health::Unavailable(detail),
            } => {
                if !found.reported() {
                    return self.fail_over::<O>(found, name, detail);
                }
                Placement::Unavailable {
                    name: name.clone(),
                    consumer: consumer.to_owned(),
                    detail: detail.clone(),
                }
            }
            Record::Unreadable(error) => Placement::RecordUnreadable {
                consumer: consumer.to_owned(),
                error: error.clone(),
            },
            Record::Known { .. } => Placement::Sticky,
        };
        self.on::<O>(Some(found), 1, Some(placement))
    }

    /// Withdraws a work no agent ever reported from an unavailable management cluster and places
    /// the cluster again among the others, once.
    fn fail_over<O: Object<Spec = S>>(&self, found: &Found, from_name: &str, detail: &str) -> Step {
        match self.seen.deleted(&found.at) {
            None => Step::Write(Write::Delete {
                at: found.at.clone(),
            }),
            Some(Err(failure)) => failed(found.at.clone(), failure),
            Some(Ok(())) => {
                let from = found.at.consumer.as_str();
                let failed_over = Placement::FailedOver {
                    from_name: from_name.to_owned(),
                    from: from.to_owned(),
                    detail: detail.to_owned(),
                    key: found.key().to_owned(),
                };
                let placed = self.place::<O>(Some(found.key()), Some((from, detail)));
                with_placement(placed, Some(failed_over))
            }
        }
    }

    /// Several live works: the applied one kept (else the oldest), the never-applied others
    /// withdrawn; more than one applied → `DoublePlacement`, nothing deleted.
    fn repair<O: Object<Spec = S>>(&self, live: &[&Found]) -> Step {
        let applied: Vec<&Found> = live.iter().copied().filter(|f| f.reported()).collect();
        if let [first, _, ..] = applied.as_slice() {
            let works = applied
                .iter()
                .map(|f| (f.key().to_owned(), f.at.consumer.clone()))
                .collect();
            return self.on::<O>(Some(first), 1, Some(Placement::Double(works)));
        }
        let keep = applied.first().copied().unwrap_or(live[0]);
        let mut withdrawn = Vec::new();
        for other in live.iter().filter(|f| f.key() != keep.key()) {
            match self.seen.deleted(&other.at) {
                None => {
                    return Step::Write(Write::Delete {
                        at: other.at.clone(),
                    });
                }
                Some(Err(failure)) => return failed(other.at.clone(), failure),
                Some(Ok(())) => withdrawn.push((other.key().to_owned(), other.at.consumer.clone())),
            }
        }
        let withdrawn = Placement::WithdrawnDuplicates(withdrawn);
        with_placement(self.steady::<O>(keep), Some(withdrawn))
    }

    /// No live work: the candidates of the cluster's region screened and ranked, then a
    /// lease-guarded create on each in turn until one takes it. `after` keys the withdrawn work
    /// the placement follows; `exclude` is a management cluster withdrawn from in this pulse.
    fn place<O: Object<Spec = S>>(
        &self,
        after: Option<&str>,
        exclude: Option<(&str, &str)>,
    ) -> Step {
        let pulse = self.seen.pulse;
        let Asked::Spec(Ok(spec)) = &pulse.asked else {
            return self.on::<O>(None, 1, None);
        };
        let region = O::region(spec);
        let nothing = |decision| done(nowhere(self.name), decision);
        let candidates = match self.seen.candidates() {
            None => {
                return Step::Read(Read::Candidates {
                    region: region.to_owned(),
                });
            }
            Some(Err(error)) => return nothing(Decision::InventoryUnavailable(error.clone())),
            Some(Ok(candidates)) => candidates,
        };
        let (eligible, mut passed) = select::screen(region, candidates, exclude);
        let Some(loads) = self.seen.loads() else {
            let consumers = eligible.iter().map(|c| c.consumer.clone()).collect();
            return Step::Read(Read::Loads { consumers });
        };
        let loaded = eligible.into_iter().zip(loads.iter().cloned()).collect();
        let ranked = select::rank(&pulse.ids.cluster_id, loaded, &mut passed);
        let key = WorkKey::Placed {
            after: after.map(str::to_owned),
        };
        for (candidate, _) in ranked {
            let at = WorkAt {
                consumer: candidate.consumer.clone(),
                name: self.name.to_owned(),
                key: key.clone(),
            };
            let pass = |reason: String| PassedOver {
                name: candidate.name.clone(),
                reason,
            };
            match self.seen.attempt(&candidate.consumer) {
                None => {
                    let gate = match O::gate(pulse, &candidate.consumer, None) {
                        Ok(gate) => gate,
                        Err(why) => return done(at, Decision::Waiting { why, work: None }),
                    };
                    let manifest = O::manifest(pulse, spec, &candidate.consumer, &gate);
                    let max = candidate.max;
                    return Step::Write(Write::Place { at, max, manifest });
                }
                Some(Attempt::PassedOver(reason)) => passed.push(pass(reason.clone())),
                Some(Attempt::LockUnavailable(error)) => {
                    return nothing(Decision::LockUnavailable(error.clone()));
                }
                Some(Attempt::Interrupted) => {
                    return failed(at, &Failure::Interrupted { last: None });
                }
                Some(Attempt::Created { result, key }) => match result {
                    Ok(()) => return done(at, Decision::Created),
                    Err(Failure::Permanent(WorkError::ConsumerNotFound { .. })) => {
                        passed.push(pass("unknown consumer".to_owned()));
                    }
                    Err(Failure::Permanent(WorkError::AlreadyExists { .. })) => {
                        return self.winner::<O>(&at, key);
                    }
                    Err(failure) => return failed(at, failure),
                },
            }
        }
        nothing(Decision::NoManagementCluster {
            region: region.to_owned(),
            passed,
        })
    }

    /// Another pulse placed the cluster first with the same key: its work, found again.
    fn winner<O: Object<Spec = S>>(&self, at: &WorkAt, key: &str) -> Step {
        let found = match self.seen.found(1) {
            None => return Step::Read(Read::Find { nth: 1 }),
            Some(Err(failure)) => return failed(at.clone(), failure),
            Some(Ok(found)) => found,
        };
        let winner = found
            .iter()
            .find(|f| f.key() == key)
            .or_else(|| found.iter().find(|f| !f.deleting));
        let step = self.on::<O>(winner, 2, None);
        with_placement(step, Some(Placement::PlacedByAnotherPulse))
    }
}

/// A NodePool follows its cluster's control plane: the work stage on the control plane's
/// management cluster, then the health rule on its record.
fn follow<O: Object>(
    seen: &Seen<'_, O::Spec>,
    name: &str,
    live: &[&Found],
    withdrawn: Option<&Found>,
) -> Step {
    let control_plane = live
        .iter()
        .copied()
        .find(|f| f.reported())
        .or_else(|| live.first().copied())
        .or(withdrawn);
    let consumer = control_plane.map_or("", |f| f.at.consumer.as_str());
    let target = Target {
        at: located(consumer, name),
        first: None,
        control_plane: Source::Found(control_plane.and_then(|f| f.work.as_ref().ok())),
        search_again: None,
    };
    let step = work::<O>(seen, &target);
    if consumer.is_empty() || !matches!(step, Step::Done(_)) {
        return step;
    }
    let Some(record) = seen.record(consumer) else {
        return Step::Read(Read::Record {
            consumer: consumer.to_owned(),
        });
    };
    let placement = match record {
        Record::Known {
            name,
            health: Health::Unavailable(detail),
        } => Some(Placement::Unavailable {
            name: name.clone(),
            consumer: consumer.to_owned(),
            detail: detail.clone(),
        }),
        Record::Unreadable(error) => Some(Placement::RecordUnreadable {
            consumer: consumer.to_owned(),
            error: error.clone(),
        }),
        Record::Known { .. } => None,
    };
    with_placement(step, placement)
}

/// `step`, with `placement`'s word said before the words on its outcome when it is done.
fn with_placement(step: Step, placement: Option<Placement>) -> Step {
    match (step, placement) {
        (Step::Done(mut outcome), Some(placement)) => {
            outcome.placement.insert(0, placement);
            Step::Done(outcome)
        }
        (step, _) => step,
    }
}
