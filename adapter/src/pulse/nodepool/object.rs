//! The NodePool as an [`Object`] of the pipeline: a HyperFleet NodePool's HyperShift `NodePool`,
//! sent once its cluster's HostedCluster can take it, on the control plane's management cluster.

use job_report::Report;
use serde_json::Value;

use super::{
    desired_of, manifest_work_for, node_pool_object, owner, report, report_created,
    report_deletion, report_observed,
};
use crate::hyperfleet::cluster::HOSTED_CLUSTER_NAMESPACE;
use crate::hyperfleet::nodepool::{ControlPlane, NodePoolSpec};
use crate::hyperfleet::spec::SpecViolation;
use crate::hyperfleet::{ADAPTER_LABEL, CLUSTER_ID_LABEL, CONTROLPLANE_ADAPTER};
use crate::hypershift::hostedcluster::{self, status::HostedClusterStatus};
use crate::hypershift::immutable::ImmutableChange;
use crate::hypershift::nodepool::status::{Desired, MachinesClock};
use crate::hypershift::nodepool::{self, Placement};
use crate::hypershift::{find_in, place_in};
use crate::message::{Conditions, or_none, quote};
use crate::pulse::object::{Object, held_and_new};
use crate::pulse::step::{Asked, Deletion, Ids, Pulse};
use crate::work::ExistingWork;
use crate::work::deletion::Progress;
use crate::work::manifestwork::{self, Owner, Ownership};
use crate::work::observed::OperatorClock;
use crate::work::outcome::{self, ObjectRef, Observed, WorkRef};

/// A NodePool of a cluster.
#[derive(Debug)]
pub struct NodePool;

/// The cluster's HostedCluster as its work holds it, once it may take NodePools.
#[derive(Debug, Clone)]
pub struct HostedCluster {
    pub namespace: String,
    pub facts: ControlPlane,
}

impl Object for NodePool {
    type Spec = NodePoolSpec;
    type Gate = HostedCluster;
    const KIND: &'static str = nodepool::KIND;
    const INVALID: &'static str = super::INVALID_NODE_POOL_SPEC;
    const GATED: bool = true;
    const PLACES: bool = false;

    fn work_name(ids: &Ids) -> String {
        manifestwork::node_pool_work_name(ids.nodepool_id.as_deref().unwrap_or_default())
    }

    fn owner(ids: &Ids) -> Owner {
        owner(
            &ids.cluster_id,
            ids.nodepool_id.as_deref().unwrap_or_default(),
        )
    }

    /// The cluster's HostedCluster may take NodePools when its work exists, is the
    /// control-plane adapter's, is not being deleted, and its HostedCluster is applied and
    /// reported `Available=True`.
    fn gate(
        pulse: &Pulse<NodePoolSpec>,
        consumer: &str,
        control_plane: Option<&ExistingWork>,
    ) -> Result<HostedCluster, String> {
        let name = manifestwork::hosted_cluster_work_name(&pulse.ids.cluster_id);
        let Some(cp) = control_plane else {
            return Err(format!(
                "the cluster has no control plane on management cluster {consumer} yet (ManifestWork {name} does not exist; if HyperFleet reports the cluster's control plane available, this Job's MANAGEMENT_CLUSTER_CONSUMER and MAESTRO_SOURCE_ID must be the control plane Job's)"
            ));
        };
        let cp_owner = Owner {
            labels: vec![
                (CLUSTER_ID_LABEL, pulse.ids.cluster_id.clone()),
                (ADAPTER_LABEL, CONTROLPLANE_ADAPTER.to_owned()),
            ],
        };
        if let found @ Ownership::NotOurs { .. } = manifestwork::ownership(&cp.labels, &cp_owner) {
            return Err(format!(
                "ManifestWork {name} on management cluster {consumer} is not the cluster's control plane (it has {found}, not {})",
                cp_owner.describe()
            ));
        }
        if cp.deleting.is_some() {
            return Err(format!(
                "the cluster's control plane (ManifestWork {name} on management cluster {consumer}) is being deleted"
            ));
        }
        let Some(hc) = find_in(&cp.workload, hostedcluster::KIND) else {
            return Err(format!(
                "ManifestWork {name} on management cluster {consumer} carries no HostedCluster"
            ));
        };
        let text = |pointer: &str| {
            hc.pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let namespace = text("/metadata/namespace").unwrap_or_default();
        let hc_name = text("/metadata/name").unwrap_or_default();
        let status = available_status(cp, (consumer, &name), (&namespace, &hc_name))?;
        Ok(HostedCluster {
            facts: ControlPlane {
                name: hc_name,
                platform: text("/spec/platform/type").unwrap_or_default(),
                region: text("/spec/platform/gcp/region"),
                psc_subnet: text(
                    "/spec/platform/gcp/networkConfig/privateServiceConnectSubnet/name",
                ),
                release_image: text("/spec/release/image"),
                version: status.completed_version(),
            },
            namespace,
        })
    }

    fn fits(spec: &NodePoolSpec, gate: &HostedCluster) -> Vec<SpecViolation> {
        spec.check_against(&gate.facts)
    }

    fn manifest(
        pulse: &Pulse<NodePoolSpec>,
        spec: &NodePoolSpec,
        consumer: &str,
        gate: &HostedCluster,
    ) -> Value {
        let placement = Placement::joining(&gate.namespace, &gate.facts);
        manifest_work_for(
            pulse.transport.backend,
            spec,
            &placement,
            consumer,
            pulse.generation,
        )
    }

    /// The immutable fields `spec` would change on the NodePool the work holds, built for the
    /// HostedCluster that NodePool names (its namespace, `clusterName` and subnet).
    fn held_changes(work: &ExistingWork, spec: &NodePoolSpec) -> Vec<ImmutableChange> {
        let Some(held) = find_in(&work.workload, nodepool::KIND) else {
            return Vec::new();
        };
        let text = |pointer: &str| held.pointer(pointer).and_then(Value::as_str);
        let placement = Placement {
            namespace: text("/metadata/namespace").unwrap_or_default(),
            cluster_name: text("/spec/clusterName").unwrap_or_default(),
            default_subnet: text("/spec/platform/gcp/subnet"),
            region: None,
            release_image: text("/spec/release/image"),
        };
        let new = nodepool::node_pool(spec, &placement);
        nodepool::immutable::immutable_changes(held, &new, spec.shape)
    }

    fn changes(
        current: &ExistingWork,
        manifest: &Value,
        spec: &NodePoolSpec,
    ) -> Vec<ImmutableChange> {
        held_and_new(current, manifest, nodepool::KIND).map_or_else(Vec::new, |(old, new)| {
            nodepool::immutable::immutable_changes(old, new, spec.shape)
        })
    }

    /// The NodePool the work holds; else the adapter's HostedCluster namespace and the name it
    /// would build (`<name>-<clusterId>`, or the NodePool's id without a name).
    fn place(pulse: &Pulse<NodePoolSpec>, work: Option<&ExistingWork>) -> (String, String) {
        let nodepool_id = pulse.ids.nodepool_id.clone().unwrap_or_default();
        let fallback = pulse
            .name
            .as_deref()
            .map_or(nodepool_id, |n| format!("{n}-{}", pulse.ids.cluster_id));
        place_in(
            work.map_or(&[], |w| w.workload.as_slice()),
            nodepool::KIND,
            (HOSTED_CLUSTER_NAMESPACE, &fallback),
        )
    }

    fn object<'a>(place: (&'a str, &'a str)) -> ObjectRef<'a> {
        node_pool_object(place)
    }

    fn report(
        generation: Option<i64>,
        conditions: Conditions,
        asked: Option<&Pulse<NodePoolSpec>>,
    ) -> Report {
        let desired = asked.and_then(spec_desired);
        report(generation, conditions, desired.as_ref(), None)
    }

    fn created(pulse: &Pulse<NodePoolSpec>, work: WorkRef<'_>) -> Report {
        let desired = spec_desired(pulse).unwrap_or_default();
        report_created(work, &desired, pulse.generation)
    }

    /// What the agent and the NodePool's status say, against what the work asked for (else the
    /// pulse's spec).
    fn observed(
        pulse: &Pulse<NodePoolSpec>,
        work: WorkRef<'_>,
        existing: &ExistingWork,
        generation: Option<i64>,
    ) -> Report {
        let (namespace, name) = Self::place(pulse, Some(existing));
        let desired = find_in(&existing.workload, nodepool::KIND)
            .map(Desired::of)
            .or_else(|| spec_desired(pulse))
            .unwrap_or_default();
        let clocks = (
            MachinesClock {
                now: pulse.now,
                stuck_after: pulse.bounds.machines_stuck_after,
            },
            OperatorClock {
                now: pulse.now,
                stuck_after: pulse.bounds.operator_stuck_after,
            },
        );
        report_observed(
            work,
            existing,
            (&namespace, &name),
            &desired,
            clocks,
            generation,
        )
    }

    fn deletion(pulse: &Pulse<NodePoolSpec>, work: WorkRef<'_>, deletion: &Deletion) -> Report {
        let (existing, progress) = match deletion {
            Deletion::Gone(w) => (w.as_ref(), None),
            Deletion::Requested { now, work } => (Some(work), Some(*now)),
            // A NodePool's deletion is never held; nothing else reaches here.
            Deletion::Held { work, .. } => (Some(work), Some(false)),
            Deletion::Failed(_) | Deletion::NotOurs(_) => (None, None),
        };
        let (namespace, name) = Self::place(pulse, existing);
        let progress = match progress {
            None => Progress::Gone,
            Some(now) => {
                let object = Self::object_deletion(existing, (&namespace, &name));
                Progress::Requested { now, object }
            }
        };
        report_deletion(
            work,
            (&namespace, &name),
            &progress,
            pulse.deleted_time().unwrap_or_default(),
            pulse.deletion_late(),
            pulse.generation,
        )
    }

    fn deleting_on(_: &str) -> String {
        "on the management cluster".to_owned()
    }
}

/// What the pulse's spec asks for, when it was validated.
fn spec_desired(pulse: &Pulse<NodePoolSpec>) -> Option<Desired> {
    match &pulse.asked {
        Asked::Spec(Ok(spec)) => Some(desired_of(spec)),
        Asked::Spec(Err(_)) | Asked::Deletion { .. } => None,
    }
}

/// The status of the control plane's HostedCluster, once the agent reports it `Available=True`;
/// else why it cannot take NodePools yet.
fn available_status(
    cp: &ExistingWork,
    (consumer, name): (&str, &str),
    (namespace, hc_name): (&str, &str),
) -> Result<HostedClusterStatus, String> {
    let object = ObjectRef {
        kind: hostedcluster::KIND,
        group: hostedcluster::GROUP,
        resource: hostedcluster::RESOURCE,
        namespace,
        name: hc_name,
        source: "cluster",
    };
    let cp_work = WorkRef { consumer, name };
    let place = format!("HostedCluster {namespace}/{hc_name}");
    let status = match outcome::observe(cp_work, cp, &object) {
        Observed::Status(value) => {
            outcome::parse_status::<HostedClusterStatus>(value, hostedcluster::KIND)
                .map_err(|e| format!("the status of {place} cannot be read ({e})"))?
        }
        Observed::Decided([_, available, _]) => {
            return Err(format!(
                "{place} is not available yet ({}: {})",
                available.reason,
                quote(&available.message)
            ));
        }
        Observed::ApplyFailed { .. } => {
            return Err(format!(
                "the work agent on management cluster {consumer} could not apply {place}"
            ));
        }
    };
    match status.condition("Available") {
        Some(a) if a.status == "True" => Ok(status),
        Some(a) => Err(format!(
            "{place} is not available yet (Available={} ({}): {})",
            a.status,
            or_none(&a.reason),
            quote(&a.message)
        )),
        None => Err(format!(
            "{place} has not reported an Available condition yet"
        )),
    }
}
