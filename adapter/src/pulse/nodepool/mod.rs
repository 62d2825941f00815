//! The `nodepool` subcommand: a HyperFleet NodePool's HyperShift NodePool, shipped in its own
//! ManifestWork `nodepool-<nodepoolId>` to the cluster's management cluster (the same consumer
//! and HostedCluster namespace as the control plane), and what its status says, per platform.
//! This file is the pure mapping; [`run`](mod@run) is the wiring.
//!
//! Wiring, in order (one REST GET per pulse, plus one for the control plane when something is to
//! be sent):
//! 1. The NodePool (HyperFleet API or file) → [`NodePoolSpec::validate`]; violations →
//!    `InvalidNodePoolSpec`, nothing sent.
//! 2. `deleted_time` set → delete the work once, report the stages with `Finalized` (below).
//! 3. Get `nodepool-<nodepoolId>`:
//!    - missing → read the control plane's work `hostedcluster-<clusterId>`: no work, not the
//!      control-plane adapter's, being deleted, or its HostedCluster not reported
//!      `Available=True` → `WaitingForControlPlane`, nothing sent; the NodePool checked against
//!      the HostedCluster (GCP needs GCP, zone in its region, release skew, HyperFleet's
//!      `clusterName` its name) → violations are `InvalidNodePoolSpec`; else create, with the
//!      defaults the HostedCluster gives (zone `<region>-a`, release image, PSC subnet);
//!    - ours, generation newer → the immutable fields compared with the NodePool the work
//!      holds (a change is refused without reading the control plane), then the same
//!      control-plane gate (Applied False `WaitingForControlPlane` while it holds) and checks,
//!      then update;
//!    - ours, generation older → `StaleGeneration`; current → the agent's view, then the
//!      NodePool's status.
//!
//! The condition table, with what to do for each row, is [`table::TABLE`] (docs/nodepool.md shows it).
//!
//! Generation, as for `controlplane` (docs/report.md "Which generation a report describes"): every
//! row carries G, the newest of the pulse's generation and the work's; Available is True only when
//! the work carries G, the agent reports it applied with usable feedback, and the NodePool is ready
//! with no rollout; `Unknown` only where the adapter could not observe; refusals are False.
//!
//! Health from the NodePool ("the checks below" above) is the first of the five Health rows that
//! applies, in table order, with the NodePool's message; else True `NoIssues`.
//!
//! While the NodePool is being deleted (`deleted_time`): the stages of
//! [`crate::work::deletion`] (`DeletionRequested`, `FinalizersRunning`, `CleanupConfirmed`,
//! `DeletionStuck`, Available `Deleting`/`Deleted`) with the fourth condition `Finalized`; an
//! error row then carries `Finalized=False` with Applied's reason. `Finalized=True` is what lets
//! HyperFleet hard-delete the NodePool, and with it the control plane's `NodePoolsExist` clear.
//!
//! `data`: `desired_replicas` and `autoscaling_min`/`autoscaling_max` (what the management
//! cluster was asked for; `null` when not applicable), `current_replicas` (`status.replicas`),
//! `version` (`status.version`), `node_versions` (`status.nodesInfo.nodeVersions`), and their
//! sums `ready_nodes`, `unready_nodes`.

use job_report::{ConditionStatus, Report};
use serde_json::{Map, Value, json};

use crate::hyperfleet::nodepool::{NodePoolSpec, Scaling};
use crate::hyperfleet::spec::SpecViolation;
use crate::hyperfleet::{ADAPTER_LABEL, CLUSTER_ID_LABEL, NODEPOOL_ID_LABEL};
use crate::hypershift::nodepool::status::{
    self as np_status, Desired, MachinesClock, NodePoolStatus,
};
use crate::hypershift::nodepool::{self, Placement};
use crate::message::{Conditions, cond, no_issues, redact};
use crate::work::ExistingWork;
use crate::work::backend::Backend;
use crate::work::deletion::{self as work_deletion, Deleting, Progress, with_finalized};
use crate::work::manifestwork::{self, Delivery, Owner, ResourceIdentifier, WorkManifest};
use crate::work::observed::{Lag, OperatorClock, Stamp};
use crate::work::outcome::{self, FeedbackError, ObjectRef, Observed, WorkRef};
use crate::work::scalar_feedback::{ScalarStatus, StatusValue, ValueKind};

pub mod args;
pub mod object;
pub mod run;
pub mod table;

pub use args::{Args, ConfigError};
pub use object::NodePool;
pub use run::{execute, run};

/// `adapter` field of every report this module builds.
pub const ADAPTER_NAME: &str = "hypershift-nodepool";
/// Value of [`ADAPTER_LABEL`] on the works this adapter owns.
pub const ADAPTER_LABEL_VALUE: &str = crate::hyperfleet::NODEPOOL_ADAPTER;
/// `data` keys.
pub const DATA_DESIRED_REPLICAS: &str = "desired_replicas";
pub const DATA_CURRENT_REPLICAS: &str = "current_replicas";
pub const DATA_AUTOSCALING_MIN: &str = "autoscaling_min";
pub const DATA_AUTOSCALING_MAX: &str = "autoscaling_max";
pub const DATA_VERSION: &str = "version";
pub const DATA_NODE_VERSIONS: &str = "node_versions";
pub const DATA_READY_NODES: &str = "ready_nodes";
pub const DATA_UNREADY_NODES: &str = "unready_nodes";
/// Reasons of this subcommand's own rows.
pub use crate::pulse::report::WAITING_FOR_CONTROL_PLANE;
pub const INVALID_NODE_POOL_SPEC: &str = "InvalidNodePoolSpec";
pub const NODE_POOL_SPEC_UNAVAILABLE: &str = "NodePoolSpecUnavailable";
pub const NODE_POOL_MISSING: &str = "NodePoolMissing";

/// The NodePool `(namespace, name)` as the work's status and the messages name it.
pub fn node_pool_object<'a>((namespace, name): (&'a str, &'a str)) -> ObjectRef<'a> {
    ObjectRef {
        kind: nodepool::KIND,
        group: nodepool::GROUP,
        resource: nodepool::RESOURCE,
        namespace,
        name,
        source: "NodePool",
    }
}

/// The labels that make a work this NodePool's.
pub fn owner(cluster_id: &str, nodepool_id: &str) -> Owner {
    Owner {
        labels: vec![
            (CLUSTER_ID_LABEL, cluster_id.to_owned()),
            (NODEPOOL_ID_LABEL, nodepool_id.to_owned()),
            (ADAPTER_LABEL, ADAPTER_LABEL_VALUE.to_owned()),
        ],
    }
}

/// The ManifestWork `nodepool-<nodepoolId>` carrying the NodePool built for `placement`, in the
/// consumer's namespace, stamped with `generation` when known. No Namespace manifest: the
/// HostedCluster's namespace comes with the control plane's work.
pub fn manifest_work(
    spec: &NodePoolSpec,
    placement: &Placement<'_>,
    consumer: &str,
    generation: Option<i64>,
) -> Value {
    let object = nodepool::node_pool(spec, placement);
    let identifier = ResourceIdentifier {
        group: nodepool::GROUP.into(),
        resource: nodepool::RESOURCE.into(),
        namespace: placement.namespace.into(),
        name: nodepool::node_pool_name(spec),
    };
    manifestwork::manifest_work(
        &manifestwork::node_pool_work_name(&spec.nodepool_id),
        consumer,
        &owner(&spec.cluster_id, &spec.nodepool_id),
        generation,
        vec![WorkManifest {
            object,
            identifier,
            delivery: Delivery::Owned,
        }],
    )
}

/// What the hub backend feeds back of a NodePool's status, as scalars a standard OCM hub carries
/// ([`crate::work::scalar_feedback`]): every documented condition
/// ([`FED_BACK_CONDITIONS`](crate::hypershift::nodepool::status::FED_BACK_CONDITIONS)), `replicas`,
/// `version`, and the first `nodesInfo.nodeVersions` entry (a list of unknown length cannot be
/// read element by element without the agent failing on an index past its end).
pub const SCALAR_STATUS: ScalarStatus = ScalarStatus {
    conditions: crate::hypershift::nodepool::status::FED_BACK_CONDITIONS,
    values: &[
        StatusValue::Field {
            path: "replicas",
            kind: ValueKind::Integer,
        },
        StatusValue::Field {
            path: "version",
            kind: ValueKind::String,
        },
        StatusValue::First {
            list: "nodesInfo.nodeVersions",
            field: "ocpVersion",
            kind: ValueKind::String,
        },
        StatusValue::First {
            list: "nodesInfo.nodeVersions",
            field: "kubeletVersion",
            kind: ValueKind::String,
        },
        StatusValue::First {
            list: "nodesInfo.nodeVersions",
            field: "readyNodeCount",
            kind: ValueKind::Integer,
        },
        StatusValue::First {
            list: "nodesInfo.nodeVersions",
            field: "unreadyNodeCount",
            kind: ValueKind::Integer,
        },
    ],
};

/// [`manifest_work`] as `backend` ships it: on the hub, with scalar feedback
/// ([`SCALAR_STATUS`]).
pub fn manifest_work_for(
    backend: Backend,
    spec: &NodePoolSpec,
    placement: &Placement<'_>,
    consumer: &str,
    generation: Option<i64>,
) -> Value {
    let mut work = manifest_work(spec, placement, consumer, generation);
    if backend == Backend::Hub {
        manifestwork::use_scalar_feedback(&mut work, &SCALAR_STATUS);
    }
    work
}

/// What the management cluster was asked for, from the pulse's spec (before anything is held).
pub fn desired_of(spec: &NodePoolSpec) -> Desired {
    let (replicas, autoscaling) = match spec.scaling {
        Scaling::Replicas(n) => (Some(n), None),
        Scaling::Autoscaling { min, max } => (None, Some((min, max))),
    };
    Desired {
        platform_none: spec.platform == crate::hyperfleet::nodepool::PlatformType::None,
        replicas,
        autoscaling,
    }
}

/// Parses the `status` feedback value of a NodePool.
pub fn parse_feedback(value: &Value) -> Result<NodePoolStatus, FeedbackError> {
    outcome::parse_status(value, nodepool::KIND)
}

/// The NodePool for messages that do not name it.
fn unnamed() -> ObjectRef<'static> {
    node_pool_object(("", ""))
}

/// The work did not exist and was created now.
pub fn report_created(work: WorkRef<'_>, desired: &Desired, generation: Option<i64>) -> Report {
    let message = if desired.platform_none {
        "NodePool provisioning in progress: HyperShift generates the ignition payload next"
    } else {
        "NodePool provisioning in progress: HyperShift creates the machines next"
    };
    report(
        generation,
        [
            outcome::created(work, &unnamed()),
            cond(
                "Available",
                ConditionStatus::False,
                np_status::PROVISIONING,
                message.to_owned(),
            ),
            no_issues("No degradation detected"),
        ],
        Some(desired),
        None,
    )
}

/// The work exists and is ours: map what the agent reports about it, then the NodePool status it
/// fed back (`np` = the NodePool's `(namespace, name)`), against what it was asked for.
pub fn report_observed(
    work: WorkRef<'_>,
    existing: &ExistingWork,
    np: (&str, &str),
    desired: &Desired,
    (clock, operator): (MachinesClock, OperatorClock),
    generation: Option<i64>,
) -> Report {
    let object = node_pool_object(np);
    match outcome::observe(work, existing, &object) {
        Observed::Status(value) => match parse_feedback(value) {
            Ok(status) => match operator_lag(existing, &object, &status) {
                Some(lag) => {
                    let serving = np_status::available(&status, desired);
                    let health = np_status::health(&status, desired, clock);
                    let conditions = outcome::awaiting_operator(
                        work,
                        &object,
                        OPERATOR,
                        &lag,
                        operator,
                        (&serving, health),
                    );
                    report(generation, conditions, Some(desired), Some(&status))
                }
                None => report_status(work, &status, desired, clock, generation),
            },
            Err(error) => report_invalid_feedback(work, &error, desired, generation),
        },
        Observed::Decided(conditions) => report(generation, conditions, Some(desired), None),
        Observed::ApplyFailed {
            applied,
            available,
            health,
            fresh,
        } => {
            // An earlier apply may still be running: its fresh status says what serves, but the
            // generation reported is not applied, so Available stays False `ApplyFailed`.
            if let Some(status) = fresh.and_then(|v| parse_feedback(v).ok()) {
                let serving = np_status::available(&status, desired);
                let mut report = report(
                    generation,
                    [applied, serving, health],
                    Some(desired),
                    Some(&status),
                );
                outcome::not_yet(
                    &mut report,
                    outcome::APPLY_FAILED,
                    available.message,
                    &node_pool_object(np),
                    None,
                );
                return report;
            }
            report(
                generation,
                [applied, available, health],
                Some(desired),
                None,
            )
        }
    }
}

/// Who reconciles the NodePools this adapter ships, as messages name it.
pub const OPERATOR: &str = "the HyperShift operator";

/// Whether the HyperShift operator has not yet observed the NodePool the agent applied
/// ([`outcome::operator_lag`]): its `metadata.generation` fed back against the `observedGeneration` of the
/// conditions the tables read ([`np_status::types::ALL`]). A NodePool's status names no release
/// image (only the version it reached), so the generation alone decides.
pub fn operator_lag(
    existing: &ExistingWork,
    object: &ObjectRef<'_>,
    status: &NodePoolStatus,
) -> Option<Lag> {
    let stamps = status.conditions.iter().map(|c| Stamp {
        type_: &c.type_,
        observed_generation: c.observed_generation,
    });
    outcome::operator_lag(existing, object, stamps, &np_status::types::ALL, None)
}

/// The mapping of a parsed NodePool status.
pub fn report_status(
    work: WorkRef<'_>,
    status: &NodePoolStatus,
    desired: &Desired,
    clock: MachinesClock,
    generation: Option<i64>,
) -> Report {
    report(
        generation,
        [
            outcome::applied(work, &unnamed()),
            np_status::available(status, desired),
            np_status::health(status, desired, clock),
        ],
        Some(desired),
        Some(status),
    )
}

/// Feedback was present but unreadable.
pub fn report_invalid_feedback(
    work: WorkRef<'_>,
    error: &FeedbackError,
    desired: &Desired,
    generation: Option<i64>,
) -> Report {
    report(
        generation,
        outcome::invalid_feedback(work, &unnamed(), error),
        Some(desired),
        None,
    )
}

/// The NodePool spec failed validation, or does not fit the HostedCluster; nothing was sent.
pub fn report_invalid_spec(violations: &[SpecViolation], generation: Option<i64>) -> Report {
    report(
        generation,
        super::invalid_spec_conditions(violations, "NodePool", INVALID_NODE_POOL_SPEC),
        None,
        None,
    )
}

/// The NodePool could not be read: file missing, HyperFleet API unreachable or refusing.
pub fn report_nodepool_unavailable(detail: &str, generation: Option<i64>) -> Report {
    let applied = format!(
        "Cannot read the NodePool to build it: {}. Nothing was sent. The next pulse retries; if it persists, check the HyperFleet API URL and token (or the mounted NodePool spec file)",
        redact(detail)
    );
    let other = "Not checked: the NodePool could not be read (see Applied)".to_owned();
    report(
        generation,
        crate::message::error_conditions(NODE_POOL_SPEC_UNAVAILABLE, applied, other),
        None,
        None,
    )
}

/// The report of a deleting NodePool at `progress`.
pub fn report_deletion(
    work: WorkRef<'_>,
    np: (&str, &str),
    progress: &Progress,
    deleted_time: &str,
    stuck: bool,
    generation: Option<i64>,
) -> Report {
    let deleting = Deleting {
        work,
        object: node_pool_object(np),
        deleted_time,
        stuck,
        known_finalizers: &nodepool::FINALIZERS,
        gone_meaning: "its HyperShift NodePool no longer exists",
    };
    let (conditions, finalized) = work_deletion::stage(&deleting, progress);
    with_finalized(report(generation, conditions, None, None), finalized)
}

/// A report with every `data` key: what was asked for (`desired`, when known) and what the
/// NodePool reports (`status`, when read).
fn report(
    generation: Option<i64>,
    conditions: Conditions,
    desired: Option<&Desired>,
    status: Option<&NodePoolStatus>,
) -> Report {
    let (replicas, autoscaling) = desired.map_or((None, None), |d| (d.replicas, d.autoscaling));
    let (replicas, autoscaling) = match autoscaling {
        Some(_) => (None, autoscaling),
        None => (replicas, None),
    };
    let versions = status.map_or(&[][..], NodePoolStatus::node_versions);
    let list: Vec<Value> = versions
        .iter()
        .map(|v| {
            json!({
                "ocp_version": v.ocp_version,
                "kubelet_version": v.kubelet_version,
                "ready_nodes": v.ready_node_count,
                "unready_nodes": v.unready_node_count,
            })
        })
        .collect();
    let ready: i64 = versions.iter().map(|v| v.ready_node_count).sum();
    let unready: i64 = versions.iter().map(|v| v.unready_node_count).sum();
    let data = Map::from_iter([
        (DATA_DESIRED_REPLICAS.into(), json!(replicas)),
        (
            DATA_CURRENT_REPLICAS.into(),
            json!(status.map_or(0, |s| s.replicas)),
        ),
        (
            DATA_AUTOSCALING_MIN.into(),
            json!(autoscaling.map(|(min, _)| min)),
        ),
        (
            DATA_AUTOSCALING_MAX.into(),
            json!(autoscaling.map(|(_, max)| max)),
        ),
        (
            DATA_VERSION.into(),
            json!(status.map_or("", |s| s.version.as_str())),
        ),
        (DATA_NODE_VERSIONS.into(), Value::Array(list)),
        (DATA_READY_NODES.into(), json!(ready)),
        (DATA_UNREADY_NODES.into(), json!(unready)),
    ]);
    let mut report = Report::new(conditions.into());
    report.adapter = Some(ADAPTER_NAME.to_owned());
    report.observed_generation = generation;
    report.data = Some(data);
    report
}

#[cfg(test)]
mod tests;

#[cfg(test)]
#[path = "tests/placed.rs"]
mod placed_tests;
