//! The `controlplane` pulse's inputs and edge: [`run`] and [`run_with`] build the [`Pulse`] from
//! the flags and the cluster and run the pipeline ([`crate::pulse::run`]) on the backend they are
//! given; [`execute`] is the process edge: it reads the cluster (and a deleting cluster's
//! NodePools), then the shared edge ([`Edge`]) builds the backend client, runs, and writes the
//! report.

use std::future::Future;
use std::process::ExitCode;

use job_report::Report;
use serde_json::Value;

use super::args::{Args, ConfigError};
use super::object::ControlPlane;
use super::{report_cluster_unavailable, report_invalid_spec};
use crate::hyperfleet::cluster::{ClusterInput, ClusterSpec, SecretSettings, SpecViolation};
use crate::hyperfleet::nodepools::NodePools;
use crate::pulse::step::{Asked, Bounds, Ids, Pulse, Where};
use crate::pulse::{Edge, Unread};
use crate::work::WorkClient;

/// Why `execute` could not end with a written report.
pub type RunError = super::super::RunError<ConfigError>;

/// What a pulse reads besides the cluster and the work: only a deleting cluster uses them.
#[derive(Debug, Clone)]
pub struct PulseInputs {
    /// The cluster's NodePools as the HyperFleet API (or `--nodepools-file`) lists them, or why
    /// they could not be read.
    pub nodepools: Result<NodePools, String>,
    /// The clock of the pulse.
    pub now: jiff::Timestamp,
}

/// The pulse of `cluster` on one static management cluster (`--consumer`), with the clock read
/// now and no NodePool list (a deleting cluster is then held).
pub async fn run(
    args: &Args,
    work: &impl WorkClient,
    cluster: ClusterInput,
    shutdown: impl Future<Output = ()>,
) -> Result<Report, ConfigError> {
    let inputs = PulseInputs {
        nodepools: Err("the NodePool list was not read".to_owned()),
        now: jiff::Timestamp::now(),
    };
    run_with(args, work, cluster, &inputs, shutdown).await
}

/// [`run`] with the NodePool list and the clock given.
///
/// The cluster id is `--cluster-id`, else the cluster object's `id` (both given and different →
/// [`ConfigError::ClusterIdMismatch`]); the generation is `--generation`, else the object's.
/// Secret-name flags override the spec's. `shutdown` resolving stops any retry and the call in
/// flight.
pub async fn run_with(
    args: &Args,
    work: &impl WorkClient,
    cluster: ClusterInput,
    inputs: &PulseInputs,
    shutdown: impl Future<Output = ()>,
) -> Result<Report, ConfigError> {
    let placement = Where::Static(args.work.static_consumer().to_owned());
    let pulse = pulse(args, cluster, inputs, placement)?;
    let budget = args.work.retry_budget;
    Ok(crate::pulse::run_static::<ControlPlane>(work, &pulse, budget, shutdown).await)
}

/// The pulse's inputs: the ids, generation and spec (validated unless the cluster is being
/// deleted) of `cluster`, with the flags.
fn pulse(
    args: &Args,
    cluster: ClusterInput,
    inputs: &PulseInputs,
    placement: Where,
) -> Result<Pulse<ClusterSpec>, ConfigError> {
    let cluster_id = resolve_cluster_id(args.cluster_id.as_ref(), cluster.id)?;
    let asked = match cluster.deleted_time {
        Some(deleted_time) => Asked::Deletion { deleted_time },
        None => Asked::Spec(ClusterSpec::validate_with(
            &cluster_id,
            cluster.name.as_deref(),
            &cluster.spec,
            &secret_settings(args),
        )),
    };
    Ok(Pulse {
        ids: Ids {
            cluster_id,
            nodepool_id: None,
        },
        name: cluster.name,
        generation: args.generation.or(cluster.generation.filter(|g| *g >= 1)),
        asked,
        nodepools: inputs.nodepools.clone(),
        transport: args.work.transport(),
        placement,
        source: args.work.maestro_source_id.clone(),
        now: inputs.now,
        bounds: Bounds {
            deletion_stuck_after: args.deletion_stuck_after,
            operator_stuck_after: args.operator_stuck_after,
            machines_stuck_after: std::time::Duration::ZERO,
        },
    })
}

/// The cluster id: `--cluster-id`, else the object's `id`; both and different → an error.
pub(super) fn resolve_cluster_id(
    flag: Option<&String>,
    object: Option<String>,
) -> Result<String, ConfigError> {
    let flag = flag.filter(|id| !id.is_empty());
    let object = object.filter(|id| !id.is_empty());
    match (flag, object) {
        (Some(flag), Some(object)) if *flag != object => Err(ConfigError::ClusterIdMismatch {
            flag: flag.clone(),
            object,
        }),
        (Some(flag), _) => Ok(flag.clone()),
        (None, Some(object)) => Ok(object),
        (None, None) => Err(ConfigError::NoClusterId),
    }
}

/// The Secret-name overrides of the flags.
pub(super) fn secret_settings(args: &Args) -> SecretSettings {
    SecretSettings {
        pull_secret_name: args.pull_secret_name.clone(),
        ssh_key_secret_name: args.ssh_key_secret_name.clone(),
        service_account_signing_key_secret_name: args
            .service_account_signing_key_secret_name
            .clone(),
    }
}

/// The whole subcommand: check the flags, read the cluster, build the backend client, run, write
/// the report. Exit 0 once a report is written, 1 when none could be, 2 on bad configuration.
pub async fn execute(args: Args) -> ExitCode {
    let result = execute_inner(&args, super::super::shutdown_signal()).await;
    super::super::exit_code(result, (args.cluster_id.as_deref(), None), args.generation)
}

async fn execute_inner(args: &Args, shutdown: impl Future<Output = ()>) -> Result<(), RunError> {
    args.check()?;
    let results_path = args.results_path(std::env::var_os("RESULTS_PATH"));
    let generation = args.generation;
    let namespace = args.job_namespace.as_deref().unwrap_or_default();
    let edge = Edge {
        work: &args.work,
        api: (args.hyperfleet_api.as_deref(), &args.hyperfleet_auth),
        lease: Some((
            namespace,
            args.pod_name.as_deref(),
            args.placement_lock_wait,
        )),
        ids: (args.cluster_id.as_deref(), None),
        generation,
    };
    let report = match load_cluster(args).await {
        Err(Unread::Unavailable(detail)) => {
            tracing::warn!(cluster_id = args.cluster_id, generation, decision = "ClusterSpecUnavailable", error = %detail, "cannot read the cluster");
            report_cluster_unavailable(&detail, generation)
        }
        Err(Unread::Invalid(detail)) => {
            tracing::warn!(cluster_id = args.cluster_id, generation, decision = "InvalidClusterSpec", error = %detail, "the cluster input is not a cluster");
            let violation = SpecViolation {
                field: "cluster",
                problem: detail,
            };
            report_invalid_spec(&[violation], generation)
        }
        Ok(cluster) => {
            let inputs = PulseInputs {
                nodepools: if cluster.deleted_time.is_some() {
                    load_nodepools(args, cluster.id.as_deref()).await
                } else {
                    Err("not read: the cluster is not being deleted".to_owned())
                },
                now: jiff::Timestamp::now(),
            };
            let build = |placement| pulse(args, cluster, &inputs, placement);
            edge.run::<ControlPlane, _>(build, shutdown).await?
        }
    };
    edge.finish(&results_path, report)
}

async fn load_cluster(args: &Args) -> Result<ClusterInput, Unread> {
    if let Some(path) = &args.cluster_spec {
        let text = crate::input_file::CLUSTER_SPEC
            .read_text(path)
            .map_err(Unread::Unavailable)?;
        return ClusterInput::from_json(&text)
            .map_err(|e| Unread::Invalid(format!("{}: {e}", path.display())));
    }
    let (Some(url), Some(cluster_id)) = (&args.hyperfleet_api, &args.cluster_id) else {
        return Err(Unread::Unavailable(
            "neither --cluster-spec nor --hyperfleet-api with --cluster-id is set".to_owned(),
        ));
    };
    crate::hyperfleet::api::fetch_cluster(
        url,
        cluster_id,
        &args.hyperfleet_auth,
        crate::hyperfleet::api::TIMEOUT,
    )
    .await
    .map_err(Unread::from)
}

/// The NodePools of a deleting cluster: from the HyperFleet API when the cluster came from it,
/// else from `--nodepools-file`; without either, why not (the deletion is then held).
pub async fn load_nodepools(args: &Args, object_id: Option<&str>) -> Result<NodePools, String> {
    if let Some(path) = &args.nodepools_file {
        let text = crate::input_file::NODEPOOL_LIST.read_text(path)?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| format!("the NodePool list file {} is not JSON: {e}", path.display()))?;
        return NodePools::from_list(&value).ok_or_else(|| {
            format!(
                "the NodePool list file {} is not a NodePool list {{\"items\": [...], \"total\": n}}",
                path.display()
            )
        });
    }
    let cluster_id = args.cluster_id.as_deref().or(object_id);
    match (&args.hyperfleet_api, cluster_id) {
        (Some(url), Some(cluster_id)) => crate::hyperfleet::api::fetch_nodepools(
            url,
            cluster_id,
            &args.hyperfleet_auth,
            crate::hyperfleet::api::TIMEOUT,
        )
        .await
        .map_err(|e| e.to_string()),
        _ => {
            tracing::warn!(
                cluster_id,
                "the cluster is being deleted but came from --cluster-spec without --nodepools-file: whether NodePools remain is unknown, so nothing is deleted"
            );
            Err("the cluster came from --cluster-spec and no --nodepools-file (NODEPOOLS_FILE) was given".to_owned())
        }
    }
}

#[cfg(test)]
#[path = "tests/pulses.rs"]
mod tests;

#[cfg(test)]
#[path = "tests/placed.rs"]
mod placed_tests;
