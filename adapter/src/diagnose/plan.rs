//! The pulse's own plan ([`crate::pulse::plan`]), stepped over what diagnose read instead of
//! what a pulse reads: the object from the HyperFleet API, its work as Maestro holds it. No IO:
//! where the plan would read something diagnose did not, or write, it stops — that step is what
//! the next pulse does. The links of the management cluster judge from it, with the pulse's own
//! tables, so that diagnose never concludes what a pulse would not.

use job_report::Report;
use serde_json::{Map, Value};

use super::judge::{Kind, Observations, Settings};
use crate::hyperfleet::cluster::{ClusterInput, ClusterSpec, SecretSettings};
use crate::hyperfleet::nodepool::{NodePoolInput, NodePoolSpec};
use crate::hyperfleet::nodepools::NodePools;
use crate::hyperfleet::spec::SpecViolation;
use crate::pulse::controlplane::ControlPlane;
use crate::pulse::nodepool::NodePool;
use crate::pulse::object::Object;
use crate::pulse::plan::plan;
use crate::pulse::step::{
    Answer, Asked, Bounds, Ids, Outcome, Pulse, Read, Seen, Step, Where, Write,
};
use crate::work::failure::{Backend, Transport};
use crate::work::outcome::WorkRef;
use crate::work::{ExistingWork, WorkAt};

/// Where the plan stops over what diagnose read.
#[derive(Debug)]
pub enum Next {
    /// Done: the outcome a pulse would report.
    Done(Box<Outcome>),
    /// The plan would create the work (none exists for the object).
    Create,
    /// The plan would update the work (the object is at a newer generation).
    Update,
    /// The plan would request the work's deletion.
    Delete,
    /// The plan needs something diagnose does not read (a NodePool's control plane).
    Read,
}

/// The object diagnosed, as a pulse of it on the management cluster of its work would see it.
#[derive(Debug)]
pub enum Pulsed {
    Cluster(Pulse<ClusterSpec>),
    NodePool(Pulse<NodePoolSpec>),
}

impl Pulsed {
    /// The pulse of the object `obs` read (a spec that cannot be read as one: no spec) on
    /// `consumer`.
    pub fn of(s: &Settings, obs: &Observations, consumer: &str) -> Self {
        let object = obs.object.as_ref().ok().cloned();
        let base = Base { s, obs, consumer };
        match s.kind {
            Kind::Cluster => {
                let input = object.and_then(|o| ClusterInput::from_value(o).ok());
                let input = input.map(|i| (i.name, i.generation, i.deleted_time, i.spec));
                Pulsed::Cluster(base.pulse(input, |name, spec| {
                    let secrets = SecretSettings::default();
                    ClusterSpec::validate_with(&s.cluster_id, name, spec, &secrets)
                }))
            }
            Kind::NodePool => {
                let input = object.and_then(|o| NodePoolInput::from_value(o).ok());
                let input = input.map(|i| (i.name, i.generation, i.deleted_time, i.spec));
                Pulsed::NodePool(base.pulse(input, |name, spec| {
                    NodePoolSpec::validate(&s.id, &s.cluster_id, name, spec)
                }))
            }
        }
    }

    /// Where the plan stops with `work` (the object's work as found, `None`: there is none).
    pub fn next(&self, work: Option<&ExistingWork>) -> Next {
        match self {
            Pulsed::Cluster(pulse) => step::<ControlPlane>(pulse, work),
            Pulsed::NodePool(pulse) => step::<NodePool>(pulse, work),
        }
    }

    /// What the object's tables say about `existing` at `generation` (the report a pulse of that
    /// generation makes of it).
    pub fn observed(
        &self,
        work: WorkRef<'_>,
        existing: &ExistingWork,
        generation: Option<i64>,
    ) -> Report {
        match self {
            Pulsed::Cluster(pulse) => ControlPlane::observed(pulse, work, existing, generation),
            Pulsed::NodePool(pulse) => NodePool::observed(pulse, work, existing, generation),
        }
    }
}

/// What a pulse reads of the object: its name, generation, `deleted_time` and spec.
type Input = (
    Option<String>,
    Option<i64>,
    Option<String>,
    Map<String, Value>,
);

/// What every pulse of the object shares.
struct Base<'a> {
    s: &'a Settings,
    obs: &'a Observations,
    consumer: &'a str,
}

impl Base<'_> {
    /// The pulse of `input` (`None`: not an object of its kind), its spec read by `validate`.
    fn pulse<S>(
        self,
        input: Option<Input>,
        validate: impl FnOnce(Option<&str>, &Map<String, Value>) -> Result<S, Vec<SpecViolation>>,
    ) -> Pulse<S> {
        let s = self.s;
        let (name, generation, asked) = match input {
            None => (None, None, Asked::Spec(Err(Vec::new()))),
            Some((name, generation, Some(deleted_time), _)) => {
                (name, generation, Asked::Deletion { deleted_time })
            }
            Some((name, generation, None, spec)) => {
                let asked = Asked::Spec(validate(name.as_deref(), &spec));
                (name, generation, asked)
            }
        };
        let nodepools = match &self.obs.nodepools {
            Some(Ok(list)) => {
                NodePools::from_list(list).ok_or_else(|| "not a NodePool list".to_owned())
            }
            Some(Err(failure)) => Err(failure.to_string()),
            None => Err("not read".to_owned()),
        };
        Pulse {
            ids: Ids {
                cluster_id: s.cluster_id.clone(),
                nodepool_id: (s.kind == Kind::NodePool).then(|| s.id.clone()),
            },
            name,
            generation: generation.filter(|g| *g >= 1),
            asked,
            nodepools,
            transport: Transport {
                backend: Backend::Maestro,
                maestro_urls: (String::new(), String::new()),
                kubeconfig: None,
                retry_budget: std::time::Duration::ZERO,
            },
            placement: Where::Static(self.consumer.to_owned()),
            source: s.source.clone(),
            now: s.now,
            bounds: Bounds {
                deletion_stuck_after: s.deletion_stuck_after,
                operator_stuck_after: s.operator_stuck_after,
                machines_stuck_after: s.machines_stuck_after,
            },
        }
    }
}

/// The plan of `O` over `work`, the object's own work: its first read is answered with it.
fn step<O: Object>(pulse: &Pulse<O::Spec>, work: Option<&ExistingWork>) -> Next {
    let first = Read::Work {
        at: WorkAt::named(pulse.static_consumer(), &O::work_name(&pulse.ids)),
        again: false,
    };
    let mut seen = Seen::new(pulse);
    loop {
        return match plan::<O>(&seen) {
            Step::Read(read) if read == first => {
                seen.read(read, Answer::Work(Ok(work.cloned())));
                continue;
            }
            Step::Done(outcome) => Next::Done(outcome),
            Step::Write(write) => match *write {
                Write::Create { .. } => Next::Create,
                Write::Update { .. } => Next::Update,
                Write::Delete { .. } | Write::Place { .. } => Next::Delete,
            },
            Step::Read(_) => Next::Read,
        };
    }
}
