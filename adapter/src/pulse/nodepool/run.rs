//! The `nodepool` pulse's inputs and edge: [`run`] builds the [`Pulse`] from the flags and the
//! NodePool and runs the pipeline ([`crate::pulse::run`]) on the backend it is given; [`execute`]
//! is the process edge: it reads the NodePool, then the shared edge ([`Edge`]) builds the backend
//! client, runs, and writes the report.

use std::future::Future;
use std::process::ExitCode;

use job_report::Report;

use super::args::{Args, ConfigError};
use super::object::NodePool;
use super::{report_invalid_spec, report_nodepool_unavailable};
use crate::hyperfleet::nodepool::{NodePoolInput, NodePoolSpec};
use crate::hyperfleet::spec::SpecViolation;
use crate::pulse::step::{Asked, Bounds, Ids, Pulse, Where};
use crate::pulse::{Edge, Unread};
use crate::work::WorkClient;

/// Why `execute` could not end with a written report.
pub type RunError = super::super::RunError<ConfigError>;

/// The pulse of the NodePool `input` on one static management cluster (`--consumer`). `now` is
/// the clock deletions and stuck machines are measured with; `shutdown` resolving stops any
/// retry and the call in flight.
///
/// The ids are the flags', else the object's (`id`, `owner_references.id`); both given and
/// different → [`ConfigError::Mismatch`]. The generation is `--generation`, else the object's.
pub async fn run(
    args: &Args,
    work: &impl WorkClient,
    input: NodePoolInput,
    now: jiff::Timestamp,
    shutdown: impl Future<Output = ()>,
) -> Result<Report, ConfigError> {
    let placement = Where::Static(args.work.static_consumer().to_owned());
    let pulse = pulse(args, input, now, placement)?;
    let budget = args.work.retry_budget;
    Ok(crate::pulse::run_static::<NodePool>(work, &pulse, budget, shutdown).await)
}

/// The pulse's inputs: the ids, generation and spec (validated unless the NodePool is being
/// deleted) of `input`, with the flags.
pub(super) fn pulse(
    args: &Args,
    input: NodePoolInput,
    now: jiff::Timestamp,
    placement: Where,
) -> Result<Pulse<NodePoolSpec>, ConfigError> {
    let nodepool_id = pick(
        args.nodepool_id.as_deref(),
        input.id,
        ("--nodepool-id", "NODEPOOL_ID", "id", "the NodePool id"),
    )?;
    let cluster_id = pick(
        args.cluster_id.as_deref(),
        input.cluster_id,
        (
            "--cluster-id",
            "CLUSTER_ID",
            "owner_references.id",
            "cluster id",
        ),
    )?;
    let asked = match input.deleted_time {
        Some(deleted_time) => Asked::Deletion { deleted_time },
        None => Asked::Spec(NodePoolSpec::validate(
            &nodepool_id,
            &cluster_id,
            input.name.as_deref(),
            &input.spec,
        )),
    };
    Ok(Pulse {
        ids: Ids {
            cluster_id,
            nodepool_id: Some(nodepool_id),
        },
        name: input.name,
        generation: args.generation.or(input.generation.filter(|g| *g >= 1)),
        asked,
        nodepools: Err("not read: a NodePool pulse".to_owned()),
        transport: args.work.transport(),
        placement,
        source: args.work.maestro_source_id.clone(),
        now,
        bounds: Bounds {
            deletion_stuck_after: args.deletion_stuck_after,
            operator_stuck_after: args.operator_stuck_after,
            machines_stuck_after: args.machines_stuck_after,
        },
    })
}

/// The flag's value, else the object's; both and different is a configuration error.
fn pick(
    flag: Option<&str>,
    object: Option<String>,
    (flag_name, env, field, what): (&'static str, &'static str, &'static str, &'static str),
) -> Result<String, ConfigError> {
    let flag = flag.filter(|v| !v.is_empty());
    let object = object.filter(|v| !v.is_empty());
    match (flag, object) {
        (Some(given), Some(object)) if given != object => Err(ConfigError::Mismatch {
            flag: flag_name,
            env,
            field,
            given: given.to_owned(),
            object,
        }),
        (Some(given), _) => Ok(given.to_owned()),
        (None, Some(object)) => Ok(object),
        (None, None) => Err(ConfigError::Missing {
            what,
            flag: flag_name,
            env,
            field,
        }),
    }
}

/// The whole subcommand: check the flags, read the NodePool, build the backend client, run,
/// write the report. Exit 0 once a report is written, 1 when none could be, 2 on bad
/// configuration.
pub async fn execute(args: Args) -> ExitCode {
    let result = execute_inner(&args, super::super::shutdown_signal()).await;
    let ids = (args.cluster_id.as_deref(), args.nodepool_id.as_deref());
    super::super::exit_code(result, ids, args.generation)
}

async fn execute_inner(args: &Args, shutdown: impl Future<Output = ()>) -> Result<(), RunError> {
    args.check()?;
    let results_path = args.results_path(std::env::var_os("RESULTS_PATH"));
    let generation = args.generation;
    let edge = Edge {
        work: &args.work,
        api: (args.hyperfleet_api.as_deref(), &args.hyperfleet_auth),
        lease: None,
        ids: (args.cluster_id.as_deref(), args.nodepool_id.as_deref()),
        generation,
    };
    let report = match load_nodepool(args).await {
        Err(Unread::Unavailable(detail)) => {
            tracing::warn!(cluster_id = args.cluster_id, nodepool_id = args.nodepool_id, generation, decision = super::NODE_POOL_SPEC_UNAVAILABLE, error = %detail, "cannot read the NodePool");
            report_nodepool_unavailable(&detail, generation)
        }
        Err(Unread::Invalid(detail)) => {
            tracing::warn!(cluster_id = args.cluster_id, nodepool_id = args.nodepool_id, generation, decision = super::INVALID_NODE_POOL_SPEC, error = %detail, "the NodePool input is not a NodePool");
            report_invalid_spec(
                &[SpecViolation {
                    field: "nodepool",
                    problem: detail,
                }],
                generation,
            )
        }
        Ok(input) => {
            let build = |placement| pulse(args, input, jiff::Timestamp::now(), placement);
            edge.run::<NodePool, _>(build, shutdown).await?
        }
    };
    edge.finish(&results_path, report)
}

async fn load_nodepool(args: &Args) -> Result<NodePoolInput, Unread> {
    if let Some(path) = &args.nodepool_spec {
        let text = crate::input_file::NODEPOOL_SPEC
            .read_text(path)
            .map_err(Unread::Unavailable)?;
        return NodePoolInput::from_json(&text)
            .map_err(|e| Unread::Invalid(format!("{}: {e}", path.display())));
    }
    let (Some(url), Some(cluster_id), Some(nodepool_id)) =
        (&args.hyperfleet_api, &args.cluster_id, &args.nodepool_id)
    else {
        return Err(Unread::Unavailable(
            "neither --nodepool-spec nor --hyperfleet-api with --cluster-id and --nodepool-id is set".to_owned(),
        ));
    };
    crate::hyperfleet::api::fetch_nodepool(
        url,
        cluster_id,
        nodepool_id,
        &args.hyperfleet_auth,
        crate::hyperfleet::api::TIMEOUT,
    )
    .await
    .map_err(Unread::from)
}
