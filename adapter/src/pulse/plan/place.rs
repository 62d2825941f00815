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

use super::work::{Source, Stage, Target, done, failed, nowhere, work};
use crate::placement::NOT_LOCATED;
use crate::placement::entity::Health;
use crate::placement::select::{self, PassedOver};
use crate::pulse::object::Object;
use crate::pulse::step::{Asked, Attempt, Decision, Placement, Record, Seen, Step, Write};
use crate::work::Failure;
use crate::work::{Found, WorkAt, WorkError, WorkKey};

/// The placement stage, then the work stage on the work it locates.
pub(super) fn plan<O: Object>(seen: &Seen<'_, O::Spec>, name: &str) -> Step {
    let stage = Placing { seen, name };
    stage.locate::<O>().unwrap_or_else(|step| step)
}

/// The placement of the work `name`, over what was seen.
struct Placing<'a, 'p, S> {
    seen: &'a Seen<'p, S>,
    name: &'a str,
}

impl<S> Placing<'_, '_, S> {
    /// The search, then what the works found say.
    fn locate<O: Object<Spec = S>>(&self) -> Stage {
        let not_located = WorkAt::named(NOT_LOCATED, self.name);
        let found = self
            .seen
            .found(0)?
            .as_ref()
            .map_err(|f| failed(&not_located, f))?;
        let mut works: Vec<&Found> = found.iter().collect();
        works.sort_by(|a, b| (&a.created_at, a.key()).cmp(&(&b.created_at, b.key())));
        let live: Vec<&Found> = works.iter().copied().filter(|f| !f.deleting).collect();
        let withdrawn = works.iter().rev().copied().find(|f| f.deleting);
        if !O::PLACES {
            return self.follow::<O>(&live, withdrawn);
        }
        match (&self.seen.pulse.asked, live.as_slice()) {
            (Asked::Deletion { .. }, _) => self.on::<O>(live.first().copied().or(withdrawn), 1),
            (Asked::Spec(_), []) => self.place::<O>(withdrawn.map(Found::key), None),
            (Asked::Spec(_), [only]) => self.steady::<O>(only),
            (Asked::Spec(_), several) => self.repair::<O>(several),
        }
    }

    /// The work stage on `found` (or on no work); `searches` is how many searches located it.
    fn on<O: Object<Spec = S>>(&self, found: Option<&Found>, searches: u8) -> Stage {
        let (at, first) = match found {
            None => (nowhere(self.name), None),
            Some(found) => {
                let read = found.work.as_ref();
                let failure = |e: &WorkError| failed(&found.at, &Failure::Permanent(e.clone()));
                (found.at.clone(), Some(read.map_err(failure)?))
            }
        };
        let target = Target {
            at,
            first: Some(first),
            control_plane: Source::Found(None),
            search_again: Some(searches),
        };
        Ok(work::<O>(self.seen, &target))
    }

    /// One live work: where it is, after the health rule on its management cluster.
    fn steady<O: Object<Spec = S>>(&self, found: &Found) -> Stage {
        let consumer = found.at.consumer.as_str();
        let placement = match self.seen.record(consumer)? {
            Record::Known {
                name,
                health: Health::Unavailable(detail),
            } if !found.reported() => {
                return self.fail_over::<O>(found, name, detail);
            }
            record => health_rule(consumer, record).unwrap_or(Placement::Sticky),
        };
        Ok(said(self.on::<O>(Some(found), 1)?, placement))
    }

    /// Withdraws a work no agent ever reported from an unavailable management cluster and places
    /// the cluster again among the others, once.
    fn fail_over<O: Object<Spec = S>>(
        &self,
        found: &Found,
        from_name: &str,
        detail: &str,
    ) -> Stage {
        self.seen
            .deleted(&found.at)?
            .as_ref()
            .map_err(|f| failed(&found.at, f))?;
        let from = found.at.consumer.as_str();
        let failed_over = Placement::FailedOver {
            from_name: from_name.to_owned(),
            from: from.to_owned(),
            detail: detail.to_owned(),
            key: found.key().to_owned(),
        };
        Ok(said(
            self.place::<O>(Some(found.key()), Some((from, detail)))?,
            failed_over,
        ))
    }

    /// Several live works: the applied one kept (else the oldest), the never-applied others
    /// withdrawn; more than one applied → `DoublePlacement`, nothing deleted.
    fn repair<O: Object<Spec = S>>(&self, live: &[&Found]) -> Stage {
        let applied: Vec<&Found> = live.iter().copied().filter(|f| f.reported()).collect();
        let keys = |works: &[&Found]| {
            let key = |f: &&Found| (f.key().to_owned(), f.at.consumer.clone());
            works.iter().map(key).collect::<Vec<_>>()
        };
        if let [first, _, ..] = applied.as_slice() {
            return Ok(said(
                self.on::<O>(Some(first), 1)?,
                Placement::Double(keys(&applied)),
            ));
        }
        let keep = applied.first().copied().unwrap_or(live[0]);
        let others: Vec<&Found> = live
            .iter()
            .copied()
            .filter(|f| f.key() != keep.key())
            .collect();
        for other in &others {
            self.seen
                .deleted(&other.at)?
                .as_ref()
                .map_err(|f| failed(&other.at, f))?;
        }
        Ok(said(
            self.steady::<O>(keep)?,
            Placement::WithdrawnDuplicates(keys(&others)),
        ))
    }

    /// No live work: the candidates of the cluster's region screened and ranked, then a
    /// lease-guarded create on each in turn until one takes it. `after` keys the withdrawn work
    /// the placement follows; `exclude` is a management cluster withdrawn from in this pulse.
    fn place<O: Object<Spec = S>>(
        &self,
        after: Option<&str>,
        exclude: Option<(&str, &str)>,
    ) -> Stage {
        let pulse = self.seen.pulse;
        let Asked::Spec(Ok(spec)) = &pulse.asked else {
            return self.on::<O>(None, 1);
        };
        let region = O::region(spec);
        let nowhere = nowhere(self.name);
        let candidates = self.seen.candidates(region)?.as_ref();
        let candidates =
            candidates.map_err(|e| done(&nowhere, Decision::InventoryUnavailable(e.clone())))?;
        let (eligible, mut passed) = select::screen(region, candidates, exclude);
        let loads = self
            .seen
            .loads(eligible.iter().map(|c| c.consumer.clone()).collect())?;
        let loaded = eligible.into_iter().zip(loads.iter().cloned()).collect();
        let after = after.map(str::to_owned);
        for (candidate, _) in select::rank(&pulse.ids.cluster_id, loaded, &mut passed) {
            let key = WorkKey::Placed {
                after: after.clone(),
            };
            let at = WorkAt {
                consumer: candidate.consumer,
                name: self.name.to_owned(),
                key,
            };
            let gate = O::gate(pulse, &at.consumer, None)
                .map_err(|why| done(&at, Decision::Waiting { why, work: None }))?;
            let manifest = || O::manifest(pulse, spec, &at.consumer, &gate);
            let place = || Write::Place {
                at: at.clone(),
                max: candidate.max,
                manifest: manifest(),
            };
            let reason = match self.seen.attempt(&at, place)? {
                Attempt::PassedOver(reason) => reason.clone(),
                Attempt::LockUnavailable(error) => {
                    return Ok(done(&nowhere, Decision::LockUnavailable(error.clone())));
                }
                Attempt::Interrupted => {
                    return Ok(failed(&at, &Failure::Interrupted { last: None }));
                }
                Attempt::Created { result: Ok(()), .. } => return Ok(done(&at, Decision::Created)),
                Attempt::Created {
                    result: Err(Failure::Permanent(WorkError::ConsumerNotFound { .. })),
                    ..
                } => "unknown consumer".to_owned(),
                Attempt::Created {
                    result: Err(Failure::Permanent(WorkError::AlreadyExists { .. })),
                    key,
                } => return self.winner::<O>(&at, key),
                Attempt::Created {
                    result: Err(failure),
                    ..
                } => return Ok(failed(&at, failure)),
            };
            passed.push(PassedOver {
                name: candidate.name,
                reason,
            });
        }
        let region = region.to_owned();
        Ok(done(
            &nowhere,
            Decision::NoManagementCluster { region, passed },
        ))
    }

    /// Another pulse placed the cluster first with the same key: its work, found again.
    fn winner<O: Object<Spec = S>>(&self, at: &WorkAt, key: &str) -> Stage {
        let found = self.seen.found(1)?.as_ref().map_err(|f| failed(at, f))?;
        let own = found.iter().find(|f| f.key() == key);
        let winner = own.or_else(|| found.iter().find(|f| !f.deleting));
        Ok(said(
            self.on::<O>(winner, 2)?,
            Placement::PlacedByAnotherPulse,
        ))
    }

    /// A NodePool follows its cluster's control plane: the work stage on the control plane's
    /// management cluster, then the health rule on its record.
    fn follow<O: Object<Spec = S>>(&self, live: &[&Found], withdrawn: Option<&Found>) -> Stage {
        let reported = live.iter().copied().find(|f| f.reported());
        let control_plane = reported.or_else(|| live.first().copied()).or(withdrawn);
        let consumer = control_plane.map_or("", |f| f.at.consumer.as_str());
        let target = Target {
            at: WorkAt::named(consumer, self.name),
            first: None,
            control_plane: Source::Found(control_plane.and_then(|f| f.work.as_ref().ok())),
            search_again: None,
        };
        let step = work::<O>(self.seen, &target);
        if consumer.is_empty() || !matches!(step, Step::Done(_)) {
            return Ok(step);
        }
        Ok(match health_rule(consumer, self.seen.record(consumer)?) {
            Some(placement) => said(step, placement),
            None => step,
        })
    }
}

/// What the record of `consumer`'s management cluster adds to the report: unavailable, or not
/// readable; `None` when it is well.
fn health_rule(consumer: &str, record: &Record) -> Option<Placement> {
    let consumer = consumer.to_owned();
    match record {
        Record::Known {
            name,
            health: Health::Unavailable(detail),
        } => Some(Placement::Unavailable {
            name: name.clone(),
            consumer,
            detail: detail.clone(),
        }),
        Record::Unreadable(error) => Some(Placement::RecordUnreadable {
            consumer,
            error: error.clone(),
        }),
        Record::Known { .. } => None,
    }
}

/// `step`, with `placement`'s word said before the words on its outcome when it is done.
fn said(step: Step, placement: Placement) -> Step {
    match step {
        Step::Done(mut outcome) => {
            outcome.placement.insert(0, placement);
            Step::Done(outcome)
        }
        step => step,
    }
}
