//! The vocabulary of one pulse: what it was given ([`Pulse`]), what it has read and done so far
//! ([`Seen`]), what it asks next ([`Step`]: a [`Read`], a [`Write`], or done with an
//! [`Outcome`]). The plan ([`super::plan`]) is a pure function from [`Seen`] to [`Step`]; the
//! act ([`super::act`]) answers each step and records the answer in [`Seen`].

use std::time::Duration;

use serde_json::Value;

use crate::hyperfleet::nodepools::NodePools;
use crate::hyperfleet::spec::SpecViolation;
use crate::hypershift::immutable::ImmutableChange;
use crate::placement::entity::{Health, ManagementCluster};
use crate::placement::select::PassedOver;
use crate::work::Failure;
use crate::work::failure::Transport;
use crate::work::manifestwork::Ownership;
use crate::work::{ExistingWork, Found, WorkAt};

/// The ids of the HyperFleet resource a pulse is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ids {
    pub cluster_id: String,
    /// Set for a NodePool.
    pub nodepool_id: Option<String>,
}

/// Where the pulse's works live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    /// On one management cluster, named by the flags.
    Static(String),
    /// Wherever placement put (or puts) the cluster's control plane.
    Placed,
}

/// The bounds a pulse judges time with.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub deletion_stuck_after: Duration,
    pub operator_stuck_after: Duration,
    /// NodePools only (machines not ready for this long).
    pub machines_stuck_after: Duration,
}

/// What a pulse was given, before any work was read: the HyperFleet resource and the settings.
#[derive(Debug)]
pub struct Pulse<S> {
    pub ids: Ids,
    /// The resource's name, when it has one.
    pub name: Option<String>,
    /// The generation this pulse is for.
    pub generation: Option<i64>,
    /// What HyperFleet asks for.
    pub asked: Asked<S>,
    /// A deleting cluster's NodePools as listed, or why they could not be (control planes only).
    pub nodepools: Result<NodePools, String>,
    pub transport: Transport,
    pub placement: Where,
    /// The source id of the works (`MAESTRO_SOURCE_ID`).
    pub source: String,
    /// The clock every judgement of this pulse uses.
    pub now: jiff::Timestamp,
    pub bounds: Bounds,
}

/// What HyperFleet asks of a pulse.
#[derive(Debug)]
pub enum Asked<S> {
    /// The object of this spec (validated: what it breaks, or the spec to build from).
    Spec(Result<S, Vec<SpecViolation>>),
    /// The deletion of the resource, asked at `deleted_time` (the spec is not read).
    Deletion { deleted_time: String },
}

impl<S> Pulse<S> {
    /// The resource's `deleted_time`, when it is being deleted.
    pub fn deleted_time(&self) -> Option<&str> {
        match &self.asked {
            Asked::Deletion { deleted_time } => Some(deleted_time),
            Asked::Spec(_) => None,
        }
    }

    /// Whether the deletion has lasted longer than allowed: `deleted_time` +
    /// `--deletion-stuck-after` before the pulse's clock (never when `deleted_time` is unknown or
    /// unparsable).
    pub fn deletion_late(&self) -> bool {
        let clock = crate::work::deletion::Clock {
            now: self.now,
            stuck_after: self.bounds.deletion_stuck_after,
        };
        crate::work::deletion::is_late(self.deleted_time().unwrap_or_default(), clock)
    }

    /// The management cluster of the static mode (`""` when placed).
    pub fn static_consumer(&self) -> &str {
        match &self.placement {
            Where::Static(consumer) => consumer,
            Where::Placed => "",
        }
    }
}

/// A read the plan needs answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    /// The work at `at` (`again`: the re-read after a conflicting update).
    Work { at: WorkAt, again: bool },
    /// The cluster's control-plane works on every management cluster (`nth`: 0 first, then
    /// again after a race or a conflict).
    Find { nth: u8 },
    /// The record of the management cluster named by `consumer`.
    Record { consumer: String },
    /// The management clusters that may take a new control plane of `region`.
    Candidates { region: String },
    /// How many control planes each of `consumers` holds.
    Loads { consumers: Vec<String> },
}

/// A write the plan decided.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant, reason = "one step at a time, boxed")]
pub enum Write {
    /// Create `manifest` at `at`; a create that races another writer reads the work instead.
    Create { at: WorkAt, manifest: Value },
    /// Replace the work `current` (as read) at `at` by `manifest` (`again`: after a conflict).
    Update {
        at: WorkAt,
        manifest: Value,
        current: ExistingWork,
        again: bool,
    },
    /// Request the deletion of the work at `at`.
    Delete { at: WorkAt },
    /// Under the placement lease of `at.consumer`: count its control planes again and create
    /// `manifest` there when it holds fewer than `max`.
    Place {
        at: WorkAt,
        max: u64,
        manifest: Value,
    },
}

/// What the plan asks next.
#[derive(Debug)]
pub enum Step {
    Read(Read),
    Write(Box<Write>),
    Done(Box<Outcome>),
}

/// The record of a management cluster, as far as it could be read.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Known { name: String, health: Health },
    Unreadable(String),
}

/// How a create ended.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant, reason = "one per pulse")]
pub enum Created {
    /// Created now.
    Now,
    /// Another writer created it first: the work as read then.
    Raced(ExistingWork),
}

/// What one lease-guarded create on a candidate came to.
#[derive(Debug, Clone)]
pub enum Attempt {
    /// The create's outcome (the lease was released); `key` is the backend's key of the placement.
    Created {
        result: Result<(), Failure>,
        key: String,
    },
    /// Passed over, with this reason.
    PassedOver(String),
    /// The lease cannot be used.
    LockUnavailable(String),
    /// The pulse is shutting down.
    Interrupted,
}

/// The answer to a [`Read`] or a [`Write`].
#[derive(Debug, Clone)]
pub enum Answer {
    Work(Result<Option<ExistingWork>, Failure>),
    Found(Result<Vec<Found>, Failure>),
    Record(Record),
    Candidates(Result<Vec<ManagementCluster>, String>),
    Loads(Vec<Result<u64, String>>),
    Created(Result<Created, Failure>),
    /// An update or a delete.
    Done(Result<(), Failure>),
    Placed(Attempt),
}

/// Which write an answer answers (a [`Write`] without its payload).
#[derive(Debug, Clone, PartialEq)]
enum Wrote {
    Create(WorkAt),
    Update(bool),
    Delete(WorkAt),
    Place(String),
}

impl Wrote {
    fn of(write: &Write) -> Self {
        match write {
            Write::Create { at, .. } => Wrote::Create(at.clone()),
            Write::Update { again, .. } => Wrote::Update(*again),
            Write::Delete { at } => Wrote::Delete(at.clone()),
            Write::Place { at, .. } => Wrote::Place(at.consumer.clone()),
        }
    }
}

/// What the plan still needs: `Err` is the step that asks for it.
pub type Need<'s, T> = Result<&'s T, Step>;

/// Everything a pulse has read and done so far, on top of what it was given. Each accessor
/// answers what was asked, or is the step that asks it.
#[derive(Debug)]
pub struct Seen<'p, S> {
    pub pulse: &'p Pulse<S>,
    reads: Vec<(Read, Answer)>,
    writes: Vec<(Wrote, Answer)>,
}

/// The accessor of the answers of one kind of read.
macro_rules! read {
    ($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) -> $variant:ident($out:ty) = $read:expr) => {
        $(#[$doc])*
        pub fn $name(&self, $($arg: $ty),*) -> Need<'_, $out> {
            let read = $read;
            match self.reads.iter().find(|(r, _)| *r == read) {
                Some((_, Answer::$variant(answer))) => Ok(answer),
                _ => Err(Step::Read(read)),
            }
        }
    };
}

impl<'p, S> Seen<'p, S> {
    /// Nothing read yet.
    pub fn new(pulse: &'p Pulse<S>) -> Self {
        Self {
            pulse,
            reads: Vec::new(),
            writes: Vec::new(),
        }
    }

    /// Records the answer to `read`.
    pub fn read(&mut self, read: Read, answer: Answer) {
        self.reads.push((read, answer));
    }

    /// Records the answer to `write`.
    pub fn wrote(&mut self, write: &Write, answer: Answer) {
        self.writes.push((Wrote::of(write), answer));
    }

    fn written(&self, wrote: &Wrote) -> Option<&Answer> {
        self.writes.iter().find(|(w, _)| w == wrote).map(|(_, a)| a)
    }

    read!(
        /// The work at `at` (`again`: read again after a conflict).
        work(at: &WorkAt, again: bool) -> Work(Result<Option<ExistingWork>, Failure>)
            = Read::Work { at: at.clone(), again }
    );
    read!(
        /// The cluster's control-plane works, as search `nth` found them.
        found(nth: u8) -> Found(Result<Vec<Found>, Failure>) = Read::Find { nth }
    );
    read!(
        /// The record of `consumer`'s management cluster.
        record(consumer: &str) -> Record(Record)
            = Read::Record { consumer: consumer.to_owned() }
    );
    read!(
        /// The management clusters of `region`.
        candidates(region: &str) -> Candidates(Result<Vec<ManagementCluster>, String>)
            = Read::Candidates { region: region.to_owned() }
    );
    read!(
        /// The loads of `consumers`, in their order.
        loads(consumers: Vec<String>) -> Loads(Vec<Result<u64, String>>)
            = Read::Loads { consumers }
    );

    /// How the create at `at` ended, or the step that creates `manifest` there.
    pub fn created(
        &self,
        at: &WorkAt,
        manifest: impl FnOnce() -> Value,
    ) -> Need<'_, Result<Created, Failure>> {
        match self.written(&Wrote::Create(at.clone())) {
            Some(Answer::Created(created)) => Ok(created),
            _ => Err(Step::Write(Box::new(Write::Create {
                at: at.clone(),
                manifest: manifest(),
            }))),
        }
    }

    /// How the update (`again`: the one after a conflict) ended, or the step that sends it.
    pub fn updated(
        &self,
        again: bool,
        update: impl FnOnce() -> Write,
    ) -> Need<'_, Result<(), Failure>> {
        match self.written(&Wrote::Update(again)) {
            Some(Answer::Done(done)) => Ok(done),
            _ => Err(Step::Write(Box::new(update()))),
        }
    }

    /// How the deletion request at `at` ended, or the step that sends it.
    pub fn deleted(&self, at: &WorkAt) -> Need<'_, Result<(), Failure>> {
        match self.written(&Wrote::Delete(at.clone())) {
            Some(Answer::Done(done)) => Ok(done),
            _ => Err(Step::Write(Box::new(Write::Delete { at: at.clone() }))),
        }
    }

    /// How the lease-guarded create at `at` ended, or the step that tries it.
    pub fn attempt(&self, at: &WorkAt, place: impl FnOnce() -> Write) -> Need<'_, Attempt> {
        match self.written(&Wrote::Place(at.consumer.clone())) {
            Some(Answer::Placed(attempt)) => Ok(attempt),
            _ => Err(Step::Write(Box::new(place()))),
        }
    }
}

/// What the pulse concluded: where the work is, what it decided, and what placement adds.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The work the report is about (`consumer` `""` when it was not located).
    pub at: WorkAt,
    pub decision: Decision,
    /// Placement's words on the pulse, in the order they were said (applied to the report last).
    pub placement: Vec<Placement>,
}

/// What a pulse decided.
#[derive(Debug, Clone)]
pub enum Decision {
    /// The spec breaks rules, or does not fit the cluster's control plane: nothing sent.
    Invalid(Vec<SpecViolation>),
    /// The backend did not answer usefully.
    Failed(Failure),
    /// A work of our name belongs to someone else: left untouched.
    NotOurs(Ownership),
    /// The work was created now.
    Created,
    /// The work is there at the pulse's generation: what it reports.
    Observed(ExistingWork),
    /// The pulse is older than the work's generation: nothing sent.
    Stale {
        work: ExistingWork,
        pulse: i64,
        held: i64,
    },
    /// A newer generation is not sent: the work is being deleted.
    NotSentDeleting(ExistingWork),
    /// The work was updated to the pulse's generation.
    Updated(ExistingWork),
    /// Another pulse updated the work meanwhile: nothing sent.
    UpdatedMeanwhile(ExistingWork),
    /// A newer generation would change immutable fields: nothing sent.
    Immutable {
        work: ExistingWork,
        changes: Vec<ImmutableChange>,
    },
    /// The cluster's control plane cannot take the NodePool yet: nothing sent (`work`: the
    /// NodePool's work, when it exists).
    Waiting {
        why: String,
        work: Option<ExistingWork>,
    },
    /// A newer generation does not fit the cluster's control plane: nothing sent.
    Unfit {
        work: ExistingWork,
        violations: Vec<SpecViolation>,
    },
    /// The resource is being deleted.
    Deleting(Deletion),
    /// Placement: no management cluster can take the control plane.
    NoManagementCluster {
        region: String,
        passed: Vec<PassedOver>,
    },
    /// Placement: the inventory cannot be read.
    InventoryUnavailable(String),
    /// Placement: the placement lease cannot be used.
    LockUnavailable(String),
}

/// Where a deletion is.
#[derive(Debug, Clone)]
pub enum Deletion {
    /// The backend did not answer usefully.
    Failed(Failure),
    /// The work belongs to someone else: not deleted.
    NotOurs(Ownership),
    /// The work is gone (`work`: as read before a delete found it gone).
    Gone(Option<ExistingWork>),
    /// The work's deletion was requested (`now`: by this pulse).
    Requested { now: bool, work: ExistingWork },
    /// Nothing deleted: the cluster's NodePools are listed, or cannot be.
    Held {
        work: ExistingWork,
        nodepools: Result<NodePools, String>,
    },
}

/// What placement adds to the report.
#[derive(Debug, Clone, PartialEq)]
pub enum Placement {
    /// The work stays where it is.
    Sticky,
    /// Its management cluster is unavailable (Health says so).
    Unavailable {
        name: String,
        consumer: String,
        detail: String,
    },
    /// The record of its management cluster could not be read (Health's message says so).
    RecordUnreadable { consumer: String, error: String },
    /// More than one of the cluster's works was applied: `(key, consumer)` of each.
    Double(Vec<(String, String)>),
    /// Second live works no agent applied were withdrawn (their `(key, consumer)`).
    WithdrawnDuplicates(Vec<(String, String)>),
    /// Another pulse placed the cluster first: its work is used.
    PlacedByAnotherPulse,
    /// A work no agent applied was withdrawn from an unavailable management cluster and the
    /// cluster placed again.
    FailedOver {
        from_name: String,
        from: String,
        detail: String,
        key: String,
    },
}
