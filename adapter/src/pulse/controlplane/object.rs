//! The control plane as an [`Object`] of the pipeline: a cluster's `HostedCluster`, placed on a
//! management cluster, deleted once the cluster's NodePools are gone.

use job_report::Report;
use serde_json::Value;

use super::deletion::{self, Stage};
use super::{
    hosted_cluster_object, manifest_work_for, owner, report, report_created, report_observed,
};
use crate::hyperfleet::cluster::{ClusterSpec, HOSTED_CLUSTER_NAMESPACE};
use crate::hypershift::immutable::ImmutableChange;
use crate::hypershift::{hostedcluster, place_in};
use crate::message::Conditions;
use crate::pulse::object::{Object, held_and_new};
use crate::pulse::step::{Asked, Deletion, Ids, Pulse};
use crate::work::ExistingWork;
use crate::work::manifestwork::{self, Owner};
use crate::work::observed::OperatorClock;
use crate::work::outcome::{ObjectRef, WorkRef};

/// A cluster's control plane: its `HostedCluster`.
#[derive(Debug)]
pub struct ControlPlane;

impl Object for ControlPlane {
    type Spec = ClusterSpec;
    type Gate = ();
    const KIND: &'static str = hostedcluster::KIND;
    const INVALID: &'static str = "InvalidClusterSpec";
    const GATED: bool = false;
    const PLACES: bool = true;

    fn work_name(ids: &Ids) -> String {
        manifestwork::hosted_cluster_work_name(&ids.cluster_id)
    }

    fn owner(ids: &Ids) -> Owner {
        owner(&ids.cluster_id)
    }

    fn gate(_: &Pulse<ClusterSpec>, _: &str, _: Option<&ExistingWork>) -> Result<(), String> {
        Ok(())
    }

    fn region(spec: &ClusterSpec) -> &str {
        &spec.gcp.region
    }

    fn manifest(pulse: &Pulse<ClusterSpec>, spec: &ClusterSpec, consumer: &str, (): &()) -> Value {
        manifest_work_for(pulse.transport.backend, spec, consumer, pulse.generation)
    }

    /// Immutable fields of the work's HostedCluster that `manifest` would change. A work without
    /// a HostedCluster manifest has nothing to compare (the API server's own rules still apply).
    fn changes(
        current: &ExistingWork,
        manifest: &Value,
        spec: &ClusterSpec,
    ) -> Vec<ImmutableChange> {
        held_and_new(current, manifest, hostedcluster::KIND).map_or_else(Vec::new, |(old, new)| {
            hostedcluster::immutable::immutable_changes(old, new, spec.names)
        })
    }

    /// NodePools listed, or a list that cannot be read, hold the deletion.
    fn holds_deletion(pulse: &Pulse<ClusterSpec>) -> bool {
        pulse.nodepools.as_ref().map_or(true, |pools| pools.any())
    }

    /// The work's HostedCluster; without one, the spec's (or the cluster's name, else its id, in
    /// the adapter's namespace).
    fn place(pulse: &Pulse<ClusterSpec>, work: Option<&ExistingWork>) -> (String, String) {
        let fallback = match &pulse.asked {
            Asked::Spec(Ok(spec)) => {
                let (namespace, name) = hostedcluster::hosted_cluster_ref(spec);
                (namespace.to_owned(), name.to_owned())
            }
            _ => {
                let name = pulse.name.clone().filter(|n| !n.is_empty());
                let name = name.unwrap_or_else(|| pulse.ids.cluster_id.clone());
                (HOSTED_CLUSTER_NAMESPACE.to_owned(), name)
            }
        };
        let workload = work.map_or(&[][..], |w| w.workload.as_slice());
        place_in(workload, hostedcluster::KIND, (&fallback.0, &fallback.1))
    }

    fn object<'a>(place: (&'a str, &'a str)) -> ObjectRef<'a> {
        hosted_cluster_object(place)
    }

    fn report(
        generation: Option<i64>,
        conditions: Conditions,
        _: Option<&Pulse<ClusterSpec>>,
    ) -> Report {
        report(generation, conditions)
    }

    fn created(pulse: &Pulse<ClusterSpec>, work: WorkRef<'_>) -> Report {
        report_created(work, pulse.generation)
    }

    fn observed(
        pulse: &Pulse<ClusterSpec>,
        work: WorkRef<'_>,
        existing: &ExistingWork,
        generation: Option<i64>,
    ) -> Report {
        let (namespace, name) = Self::place(pulse, Some(existing));
        let clock = OperatorClock {
            now: pulse.now,
            stuck_after: pulse.bounds.operator_stuck_after,
        };
        report_observed(work, existing, (&namespace, &name), generation, clock)
    }

    fn deletion(pulse: &Pulse<ClusterSpec>, work: WorkRef<'_>, deletion: &Deletion) -> Report {
        let existing = match deletion {
            Deletion::Requested { work, .. } | Deletion::Held { work, .. } => Some(work),
            Deletion::Gone(_) | Deletion::Failed(_) | Deletion::NotOurs(_) => None,
        };
        let (namespace, name) = Self::place(pulse, existing);
        let (stage, observed) = match deletion {
            Deletion::Requested { now, .. } => {
                let hc = Self::object_deletion(existing, (&namespace, &name));
                (Stage::Requested { now: *now, hc }, None)
            }
            Deletion::Held { work: w, nodepools } => {
                let held = manifestwork::work_generation(&w.annotations);
                let stage = match nodepools {
                    Err(why) => Stage::NodePoolsUnknown(why.clone()),
                    Ok(pools) => Stage::NodePoolsExist(pools.clone()),
                };
                (stage, Some(Self::observed(pulse, work, w, held)))
            }
            Deletion::Gone(_) | Deletion::Failed(_) | Deletion::NotOurs(_) => (Stage::Gone, None),
        };
        deletion::report_deletion(
            work,
            (&namespace, &name),
            &stage,
            observed.as_ref(),
            pulse.deleted_time().unwrap_or_default(),
            pulse.deletion_late(),
            pulse.generation,
        )
    }

    fn deleting_on(consumer: &str) -> String {
        format!("on management cluster {consumer}")
    }
}
