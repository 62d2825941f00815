//! The `nodepool` decision and its wiring (see the module docs of [`super`]): validate, get the
//! NodePool's work, gate on the cluster's control plane before anything is sent, create or
//! update, delete for a deleted NodePool; transient backend failures retried within
//! `--retry-budget` ([`crate::work::sync`]).
//!
//! [`run`] takes the work client and the shutdown signal as parameters and returns the report;
//! [`execute`] is the edge.

use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;

use futures::FutureExt;
use job_report::Report;
use serde_json::Value;

use super::args::{Args, ConfigError};
use super::{
    WorkRef, desired_of, manifest_work_for, owner, report, report_adapter_misconfigured,
    report_created, report_deletion, report_immutable_change, report_invalid_spec,
    report_nodepool_unavailable, report_observed, report_ownership_conflict, report_update_waiting,
    report_updated, report_waiting,
};
use crate::cli::{EXIT_CONFIG, EXIT_NO_REPORT};
use crate::hyperfleet::cluster::HOSTED_CLUSTER_NAMESPACE;
use crate::hyperfleet::nodepool::{ControlPlane, NodePoolInput, NodePoolSpec};
use crate::hyperfleet::spec::SpecViolation;
use crate::hyperfleet::{ADAPTER_LABEL, CLUSTER_ID_LABEL, CONTROLPLANE_ADAPTER};
use crate::hypershift::hostedcluster;
use crate::hypershift::hostedcluster::status::HostedClusterStatus;
use crate::hypershift::nodepool::status::{Desired, MachinesClock};
use crate::hypershift::nodepool::{self, Placement};
use crate::hypershift::{find_in, place_in};
use crate::message::quote;
use crate::work::backend::WorkArgs;
use crate::work::deletion::{self as work_deletion, Progress, with_finalized_unconfirmed};
use crate::work::feedback::ObjectDeletion;
use crate::work::manifestwork::{self, Owner, Ownership};
use crate::work::observed::OperatorClock;
use crate::work::outcome::{self, FailureContext, ObjectRef, Observed};
use crate::work::sync::{self, Failure, GenerationCheck, LogContext, Seen, UpdateRequest, Updated};
use crate::work::{ExistingWork, WorkClient, WorkError};

/// Why `execute` could not end with a written report.
pub type RunError = super::super::RunError<ConfigError>;

/// Decides what to do for this NodePool and returns the report (not yet written). `now` is the
/// clock deletions and stuck machines are measured with; `shutdown` resolving stops any retry and
/// the in-flight call.
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
    let consumer = args.work.static_consumer();
    let mut report = run_on(args, work, consumer, input, now, shutdown).await?;
    crate::placement::set_management_cluster(&mut report, consumer);
    Ok(report)
}

/// The NodePool and cluster ids of this pulse (flags, else the object's).
fn ids(args: &Args, input: &NodePoolInput) -> Result<(String, String), ConfigError> {
    let nodepool_id = pick(
        args.nodepool_id.as_deref(),
        input.id.clone(),
        ("--nodepool-id", "NODEPOOL_ID", "id", "the NodePool id"),
    )?;
    let cluster_id = pick(
        args.cluster_id.as_deref(),
        input.cluster_id.clone(),
        (
            "--cluster-id",
            "CLUSTER_ID",
            "owner_references.id",
            "cluster id",
        ),
    )?;
    Ok((nodepool_id, cluster_id))
}

/// Placement (`--management-clusters-file`, `--management-clusters-from-api`): the NodePool goes
/// where its cluster's control plane is. One search finds the control-plane work on any consumer
/// (the applied live one, else the oldest live one, else the newest soft-deleted one); the usual
/// flow then runs with the control plane read from that search and the NodePool work on its
/// consumer (standard id). An Unavailable management cluster gives Health False
/// `ManagementClusterUnavailable`.
pub async fn run_placed<A, I>(
    args: &Args,
    (api, inventory): (&A, &I),
    input: NodePoolInput,
    now: jiff::Timestamp,
    shutdown: impl Future<Output = ()>,
) -> Result<Report, ConfigError>
where
    A: crate::work::maestro::placed::BundleApi,
    I: crate::placement::inventory::Inventory + Sync,
{
    use crate::placement::cluster_works_search;
    use crate::work::maestro::placed::{
        ConsumerWorkClient, PlacedWorkClient, RoutedWorkClient, find, is_live, never_reported,
    };
    let (nodepool_id, cluster_id) = ids(args, &input)?;
    let source = args.work.maestro_source_id.as_str();
    let shutdown = shutdown.fuse();
    let mut shutdown = std::pin::pin!(shutdown);
    let log = LogContext {
        cluster_id: &cluster_id,
        nodepool_id: Some(&nodepool_id),
        generation: args.generation,
    };
    let search = cluster_works_search(source, &cluster_id);
    let searched = match &search {
        Ok(search) => {
            sync::with_retry(args.work.retry_budget, &mut shutdown, log, || {
                find(api, search)
            })
            .await
        }
        Err(e) => Err(Failure::Permanent(e.clone())),
    };
    let work_name = manifestwork::node_pool_work_name(&nodepool_id);
    let generation = args.generation.or(input.generation.filter(|g| *g >= 1));
    let failure_report = |failure: Failure| {
        let ctx = Ctx {
            cluster_id: &cluster_id,
            nodepool_id: &nodepool_id,
            generation,
            work: WorkRef {
                consumer: crate::placement::NOT_LOCATED,
                name: &work_name,
            },
            owner: owner(&cluster_id, &nodepool_id),
            work_args: &args.work,
            clock: MachinesClock {
                now,
                stuck_after: args.machines_stuck_after,
            },
            operator: OperatorClock {
                now,
                stuck_after: args.operator_stuck_after,
            },
        };
        report_failure(&ctx, failure)
    };
    let mut found = match searched {
        Ok(found) => found,
        Err(failure) => return Ok(failure_report(failure)),
    };
    found.sort_by(|a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
    let reported = |b: &&crate::work::maestro::bundle::ResourceBundle| {
        b.to_existing_work(None)
            .map(|w| !never_reported(&w))
            .unwrap_or(true)
    };
    let live: Vec<_> = found.iter().filter(|b| is_live(b)).collect();
    let control_plane = live
        .iter()
        .copied()
        .find(reported)
        .or_else(|| live.first().copied())
        .or_else(|| found.iter().rev().find(|b| !is_live(b)));
    let (id, consumer, primed) = match control_plane {
        Some(b) => (
            b.id.clone(),
            b.consumer_name.clone(),
            b.to_existing_work(Some(source.to_owned())).ok(),
        ),
        None => (String::new(), String::new(), None),
    };
    let hc_work = manifestwork::hosted_cluster_work_name(&cluster_id);
    let placed = match PlacedWorkClient::new(
        api,
        source,
        search.as_deref().unwrap_or_default(),
        (&id, &consumer),
        primed,
    ) {
        Ok(placed) => placed,
        Err(e) => return Ok(failure_report(Failure::Permanent(e))),
    };
    let routed = RoutedWorkClient {
        placed_name: &hc_work,
        placed,
        rest: ConsumerWorkClient::new(api, source, &consumer),
    };
    let mut report = run_on(args, &routed, &consumer, input, now, &mut shutdown).await?;
    if !consumer.is_empty() {
        health_of_management_cluster(
            &mut report,
            inventory,
            &consumer,
            (&cluster_id, &nodepool_id),
        )
        .await;
    }
    crate::placement::set_management_cluster(&mut report, &consumer);
    Ok(report)
}

/// The health rule on the record of the management cluster the NodePool lives on.
async fn health_of_management_cluster(
    report: &mut Report,
    inventory: &impl crate::placement::inventory::Inventory,
    consumer: &str,
    (cluster_id, nodepool_id): (&str, &str),
) {
    use crate::placement::entity::Health;
    match inventory.by_consumer(consumer).await {
        Ok(found) => {
            let (name, health) = match found.into_iter().next() {
                Some(mc) => (mc.name.clone(), mc.health()),
                None => (
                    consumer.to_owned(),
                    Health::Unavailable(format!("no ManagementCluster names consumer {consumer}")),
                ),
            };
            if let Health::Unavailable(detail) = health {
                tracing::warn!(
                    cluster_id,
                    nodepool_id,
                    management_cluster = consumer,
                    decision = crate::placement::MANAGEMENT_CLUSTER_UNAVAILABLE,
                    detail,
                    "the NodePool's management cluster is unavailable"
                );
                crate::placement::replace_condition(
                    report,
                    crate::placement::management_cluster_unavailable(&name, consumer, &detail),
                );
            }
        }
        Err(e) => {
            tracing::warn!(cluster_id, nodepool_id, management_cluster = consumer, error = %e, "the management cluster's record could not be read; Health left as the work says");
            if let Some(health) = report.conditions.iter_mut().find(|c| c.type_ == "Health") {
                health.message = format!(
                    "{} (the record of management cluster {consumer} could not be read: {})",
                    health.message,
                    crate::message::redact(&e)
                );
            }
        }
    }
}

/// [`run`] on `work`, whose works live on `consumer`.
async fn run_on(
    args: &Args,
    work: &impl WorkClient,
    consumer: &str,
    input: NodePoolInput,
    now: jiff::Timestamp,
    shutdown: impl Future<Output = ()>,
) -> Result<Report, ConfigError> {
    // Destructured so a new flag cannot be silently ignored here.
    let Args {
        cluster_id: cluster_id_flag,
        nodepool_id: nodepool_id_flag,
        generation: generation_flag,
        nodepool_spec: _,
        hyperfleet_api: _,
        hyperfleet_token_file: _,
        results_path: _,
        deletion_stuck_after,
        machines_stuck_after,
        operator_stuck_after,
        work: work_args,
        log_format: _,
        log_level: _,
    } = args;
    let NodePoolInput {
        id: object_id,
        name,
        generation: object_generation,
        cluster_id: object_cluster_id,
        deleted_time,
        spec,
    } = input;
    let nodepool_id = pick(
        nodepool_id_flag.as_deref(),
        object_id,
        ("--nodepool-id", "NODEPOOL_ID", "id", "the NodePool id"),
    )?;
    let cluster_id = pick(
        cluster_id_flag.as_deref(),
        object_cluster_id,
        (
            "--cluster-id",
            "CLUSTER_ID",
            "owner_references.id",
            "cluster id",
        ),
    )?;
    let generation = generation_flag.or(object_generation.filter(|g| *g >= 1));
    let work_name = manifestwork::node_pool_work_name(&nodepool_id);
    let ctx = Ctx {
        cluster_id: &cluster_id,
        nodepool_id: &nodepool_id,
        generation,
        work: WorkRef {
            consumer,
            name: &work_name,
        },
        owner: owner(&cluster_id, &nodepool_id),
        work_args,
        clock: MachinesClock {
            now,
            stuck_after: *machines_stuck_after,
        },
        operator: OperatorClock {
            now,
            stuck_after: *operator_stuck_after,
        },
    };
    let shutdown = shutdown.fuse();
    let mut shutdown = std::pin::pin!(shutdown);
    // Where the NodePool is when the work does not say: the adapter's HostedCluster namespace and
    // the name it would build.
    let fallback = (
        HOSTED_CLUSTER_NAMESPACE.to_owned(),
        name.as_deref()
            .map_or_else(|| nodepool_id.clone(), |n| format!("{n}-{cluster_id}")),
    );

    if let Some(deleted_time) = &deleted_time {
        let stuck = work_deletion::is_late(
            deleted_time,
            work_deletion::Clock {
                now,
                stuck_after: *deletion_stuck_after,
            },
        );
        return Ok(run_deletion(&ctx, work, deleted_time, stuck, &fallback, &mut shutdown).await);
    }

    let spec = match NodePoolSpec::validate(&nodepool_id, &cluster_id, name.as_deref(), &spec) {
        Ok(spec) => spec,
        Err(violations) => return Ok(invalid(&ctx, &violations)),
    };

    let found = sync::with_retry(ctx.retry_budget(), &mut shutdown, ctx.log(), || {
        work.get(&work_name)
    })
    .await;
    let report = match found {
        Err(failure) => report_failure(&ctx, failure),
        Ok(None) => create(&ctx, work, &spec, &mut shutdown).await,
        Ok(Some(existing)) => match manifestwork::ownership(&existing.labels, &ctx.owner) {
            found @ Ownership::NotOurs { .. } => {
                tracing::warn!(cluster_id, nodepool_id, generation, work = work_name, decision = "OwnershipConflict", found = %found, "work belongs to someone else; left untouched");
                report_ownership_conflict(ctx.work, &ctx.owner, &found, generation)
            }
            Ownership::Ours => {
                let held = manifestwork::work_generation(&existing.annotations);
                match sync::generation_check(generation, held) {
                    GenerationCheck::Newer if existing.deleting.is_none() => {
                        update(&ctx, work, &spec, &existing, &fallback, &mut shutdown).await
                    }
                    check => {
                        let report = observed(&ctx, &existing, &fallback, &spec, held);
                        let report = match check {
                            GenerationCheck::Older { pulse, held } => {
                                tracing::info!(
                                    cluster_id,
                                    nodepool_id,
                                    generation,
                                    held_generation = held,
                                    work = work_name,
                                    decision = "StaleGeneration",
                                    "the work carries a newer generation; nothing sent"
                                );
                                outcome::stale_generation(ctx.work, report, pulse, held)
                            }
                            GenerationCheck::Newer => {
                                tracing::info!(
                                    cluster_id,
                                    nodepool_id,
                                    generation,
                                    held_generation = held,
                                    work = work_name,
                                    "the work is being deleted; not updated"
                                );
                                // The report describes the pulse's generation, which the work
                                // (being deleted) will never carry.
                                let mut report = report;
                                outcome::not_yet(
                                    &mut report,
                                    work_deletion::DELETING,
                                    format!(
                                        "{} is not sent: ManifestWork {work_name} is being deleted on the management cluster",
                                        generation.map_or_else(
                                            || "This spec".to_owned(),
                                            |g| format!("Generation {g}")
                                        )
                                    ),
                                    &super::node_pool_object(("", "")),
                                    held,
                                );
                                report.observed_generation = generation;
                                report
                            }
                            GenerationCheck::Current => report,
                        };
                        log_decision(&ctx, "ManifestWorkFound", &report);
                        report
                    }
                }
            }
        },
    };
    Ok(report)
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

/// What every decision of one pulse shares.
struct Ctx<'a> {
    cluster_id: &'a str,
    nodepool_id: &'a str,
    generation: Option<i64>,
    work: WorkRef<'a>,
    owner: Owner,
    work_args: &'a WorkArgs,
    clock: MachinesClock,
    /// The clock and bound of the HyperShift operator's lag after an apply.
    operator: OperatorClock,
}

impl Ctx<'_> {
    fn log(&self) -> LogContext<'_> {
        LogContext {
            cluster_id: self.cluster_id,
            nodepool_id: Some(self.nodepool_id),
            generation: self.generation,
        }
    }

    fn retry_budget(&self) -> Duration {
        self.work_args.retry_budget
    }
}

fn log_decision(ctx: &Ctx<'_>, decision: &str, report: &Report) {
    let reason = |t: &str| report.condition(t).map_or("", |c| c.reason.as_str());
    tracing::info!(
        cluster_id = ctx.cluster_id,
        nodepool_id = ctx.nodepool_id,
        generation = ctx.generation,
        work = ctx.work.name,
        consumer = ctx.work.consumer,
        decision,
        applied = reason("Applied"),
        available = reason("Available"),
        health = reason("Health"),
        "nodepool pulse"
    );
}

fn invalid(ctx: &Ctx<'_>, violations: &[SpecViolation]) -> Report {
    let fields: Vec<&str> = violations.iter().map(|v| v.field).collect();
    tracing::warn!(cluster_id = ctx.cluster_id, nodepool_id = ctx.nodepool_id, generation = ctx.generation, decision = super::INVALID_NODE_POOL_SPEC, fields = ?fields, "NodePool spec is invalid; nothing sent");
    report_invalid_spec(violations, ctx.generation)
}

/// The report when the backend did not answer usefully.
fn report_failure(ctx: &Ctx<'_>, failure: Failure) -> Report {
    let failure_ctx = FailureContext {
        work: ctx.work,
        object_kind: nodepool::KIND,
        retry_budget: ctx.retry_budget(),
        backend: ctx.work_args.backend_ref(),
        log: ctx.log(),
    };
    report(
        ctx.generation,
        outcome::failure(&failure_ctx, failure),
        None,
        None,
    )
}

/// The NodePool in a work: `(namespace, name)` and what it asks for. A work without a NodePool
/// manifest falls back to `fallback` and the pulse's spec.
fn held_node_pool(
    existing: &ExistingWork,
    fallback: &(String, String),
    spec: &NodePoolSpec,
) -> ((String, String), Desired) {
    let place = place_in(
        &existing.workload,
        nodepool::KIND,
        (&fallback.0, &fallback.1),
    );
    let desired =
        find_in(&existing.workload, nodepool::KIND).map_or_else(|| desired_of(spec), Desired::of);
    (place, desired)
}

/// The ordinary report of the work as the management cluster holds it.
fn observed(
    ctx: &Ctx<'_>,
    existing: &ExistingWork,
    fallback: &(String, String),
    spec: &NodePoolSpec,
    generation: Option<i64>,
) -> Report {
    let ((namespace, name), desired) = held_node_pool(existing, fallback, spec);
    report_observed(
        ctx.work,
        existing,
        (&namespace, &name),
        &desired,
        (ctx.clock, ctx.operator),
        generation,
    )
}

/// The cluster's HostedCluster as its work holds it, once it may take NodePools.
struct HostedCluster {
    namespace: String,
    facts: ControlPlane,
}

/// Why a NodePool cannot be sent yet.
enum Gate {
    /// The control plane is not there (the text says what); a later pulse checks again.
    Waiting(String),
    /// The backend did not answer.
    Failed(Failure),
}

/// Reads the control plane's work and says whether the cluster's HostedCluster may take
/// NodePools: it exists, is the control-plane adapter's, is not being deleted, and its
/// HostedCluster is applied and reported `Available=True`.
async fn read_control_plane(
    ctx: &Ctx<'_>,
    work: &impl WorkClient,
    shutdown: &mut (impl Future<Output = ()> + Unpin),
) -> Result<HostedCluster, Gate> {
    let name = manifestwork::hosted_cluster_work_name(ctx.cluster_id);
    let consumer = ctx.work.consumer;
    let found = sync::with_retry(ctx.retry_budget(), shutdown, ctx.log(), || work.get(&name))
        .await
        .map_err(Gate::Failed)?;
    let Some(cp) = found else {
        return Err(Gate::Waiting(format!(
            "the cluster has no control plane on management cluster {consumer} yet (ManifestWork {name} does not exist; if HyperFleet reports the cluster's control plane available, this Job's MANAGEMENT_CLUSTER_CONSUMER and MAESTRO_SOURCE_ID must be the control plane Job's)"
        )));
    };
    let cp_owner = Owner {
        labels: vec![
            (CLUSTER_ID_LABEL, ctx.cluster_id.to_owned()),
            (ADAPTER_LABEL, CONTROLPLANE_ADAPTER.to_owned()),
        ],
    };
    if let found @ Ownership::NotOurs { .. } = manifestwork::ownership(&cp.labels, &cp_owner) {
        return Err(Gate::Waiting(format!(
            "ManifestWork {name} on management cluster {consumer} is not the cluster's control plane (it has {found}, not {})",
            cp_owner.describe()
        )));
    }
    if cp.deleting.is_some() {
        return Err(Gate::Waiting(format!(
            "the cluster's control plane (ManifestWork {name} on management cluster {consumer}) is being deleted"
        )));
    }
    let Some(hc) = find_in(&cp.workload, hostedcluster::KIND) else {
        return Err(Gate::Waiting(format!(
            "ManifestWork {name} on management cluster {consumer} carries no HostedCluster"
        )));
    };
    let text = |pointer: &str| {
        hc.pointer(pointer)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let namespace = text("/metadata/namespace").unwrap_or_default();
    let hc_name = text("/metadata/name").unwrap_or_default();
    let object = ObjectRef {
        kind: hostedcluster::KIND,
        group: hostedcluster::GROUP,
        resource: hostedcluster::RESOURCE,
        namespace: &namespace,
        name: &hc_name,
        source: "cluster",
    };
    let cp_work = WorkRef {
        consumer,
        name: &name,
    };
    let place = format!("HostedCluster {namespace}/{hc_name}");
    let status = match outcome::observe(cp_work, &cp, &object) {
        Observed::Status(value) => {
            outcome::parse_status::<HostedClusterStatus>(value, hostedcluster::KIND)
                .map_err(|e| Gate::Waiting(format!("the status of {place} cannot be read ({e})")))?
        }
        Observed::Decided([_, available, _]) => {
            return Err(Gate::Waiting(format!(
                "{place} is not available yet ({}: {})",
                available.reason,
                quote(&available.message)
            )));
        }
        Observed::ApplyFailed { .. } => {
            return Err(Gate::Waiting(format!(
                "the work agent on management cluster {consumer} could not apply {place}"
            )));
        }
    };
    match status.condition("Available") {
        Some(a) if a.status == "True" => {}
        Some(a) => {
            return Err(Gate::Waiting(format!(
                "{place} is not available yet (Available={} ({}): {})",
                a.status,
                crate::message::or_none(&a.reason),
                quote(&a.message)
            )));
        }
        None => {
            return Err(Gate::Waiting(format!(
                "{place} has not reported an Available condition yet"
            )));
        }
    }
    Ok(HostedCluster {
        facts: ControlPlane {
            name: hc_name,
            platform: text("/spec/platform/type").unwrap_or_default(),
            region: text("/spec/platform/gcp/region"),
            psc_subnet: text("/spec/platform/gcp/networkConfig/privateServiceConnectSubnet/name"),
            release_image: text("/spec/release/image"),
            version: status.completed_version(),
        },
        namespace,
    })
}

/// The work is missing: gate on the control plane, check the NodePool against its HostedCluster,
/// then create (a create that races another writer reads the work instead).
async fn create(
    ctx: &Ctx<'_>,
    work: &impl WorkClient,
    spec: &NodePoolSpec,
    shutdown: &mut (impl Future<Output = ()> + Unpin),
) -> Report {
    let desired = desired_of(spec);
    let hc = match read_control_plane(ctx, work, &mut *shutdown).await {
        Ok(hc) => hc,
        Err(Gate::Failed(failure)) => return report_failure(ctx, failure),
        Err(Gate::Waiting(why)) => {
            let report = report_waiting(&why, Some(&desired), ctx.generation);
            log_decision(ctx, super::WAITING_FOR_CONTROL_PLANE, &report);
            return report;
        }
    };
    let violations = spec.check_against(&hc.facts);
    if !violations.is_empty() {
        return invalid(ctx, &violations);
    }
    let placement = Placement::joining(&hc.namespace, &hc.facts);
    let manifest = manifest_work_for(
        ctx.work_args.backend,
        spec,
        &placement,
        ctx.work.consumer,
        ctx.generation,
    );
    let created = sync::with_retry(ctx.retry_budget(), shutdown, ctx.log(), || {
        sync::create_or_read(work, ctx.work.name, &manifest)
    })
    .await;
    let report = match created {
        Ok(Seen::Created) => report_created(ctx.work, &desired, ctx.generation),
        // Another writer created it between our read and our create: read as found.
        Ok(Seen::Found(existing)) => match manifestwork::ownership(&existing.labels, &ctx.owner) {
            found @ Ownership::NotOurs { .. } => {
                report_ownership_conflict(ctx.work, &ctx.owner, &found, ctx.generation)
            }
            Ownership::Ours => {
                let fallback = (hc.namespace.clone(), nodepool::node_pool_name(spec));
                let held = manifestwork::work_generation(&existing.annotations);
                observed(ctx, &existing, &fallback, spec, held)
            }
        },
        Err(failure) => return report_failure(ctx, failure),
    };
    log_decision(ctx, "ManifestWorkCreated", &report);
    report
}

/// The pulse is newer than the work: gate on the control plane, check, compare the immutable
/// fields with the NodePool the work holds, then publish the update guarded by the version read.
async fn update(
    ctx: &Ctx<'_>,
    work: &impl WorkClient,
    spec: &NodePoolSpec,
    existing: &ExistingWork,
    fallback: &(String, String),
    shutdown: &mut (impl Future<Output = ()> + Unpin),
) -> Report {
    let held = manifestwork::work_generation(&existing.annotations);
    // An immutable change needs a person whatever the control plane does: say so without
    // reading it (the NodePool is placed where the held one is).
    let changes = held_immutable_changes(existing, spec);
    if !changes.is_empty() {
        let observed = observed(ctx, existing, fallback, spec, held);
        let report = report_immutable_change(ctx.work, observed, &changes, ctx.generation, held);
        log_decision(ctx, crate::work::outcome::IMMUTABLE_FIELD_CHANGED, &report);
        return report;
    }
    let hc = match read_control_plane(ctx, work, &mut *shutdown).await {
        Ok(hc) => hc,
        Err(Gate::Failed(failure)) => return report_failure(ctx, failure),
        Err(Gate::Waiting(why)) => {
            let observed = observed(ctx, existing, fallback, spec, held);
            let report = report_update_waiting(observed, &why, ctx.generation, held);
            log_decision(ctx, super::WAITING_FOR_CONTROL_PLANE, &report);
            return report;
        }
    };
    let violations = spec.check_against(&hc.facts);
    if !violations.is_empty() {
        let observed = observed(ctx, existing, fallback, spec, held);
        return refused_update(ctx, observed, &violations, held);
    }
    let placement = Placement::joining(&hc.namespace, &hc.facts);
    let manifest = manifest_work_for(
        ctx.work_args.backend,
        spec,
        &placement,
        ctx.work.consumer,
        ctx.generation,
    );
    let request = UpdateRequest {
        name: ctx.work.name,
        owner: &ctx.owner,
        generation: ctx.generation,
        log: ctx.log(),
    };
    let refuse = |current: &ExistingWork| {
        let new = manifest["spec"]["workload"]["manifests"]
            .as_array()
            .and_then(|m| find_in(m, nodepool::KIND));
        let changes = match (find_in(&current.workload, nodepool::KIND), new) {
            (Some(old), Some(new)) => nodepool::immutable::immutable_changes(old, new, spec.shape),
            _ => Vec::new(),
        };
        (!changes.is_empty()).then_some(changes)
    };
    let outcome = sync::with_retry(ctx.retry_budget(), shutdown, ctx.log(), || {
        sync::update_once(work, request, existing, &manifest, refuse)
    })
    .await;
    let report = match outcome {
        Ok(Updated::Sent) => {
            // The agent has not applied it yet: the status is the running NodePool's.
            let observed = observed(ctx, existing, fallback, spec, ctx.generation);
            report_updated(ctx.work, observed, held, ctx.generation)
        }
        Ok(Updated::AlreadyCurrent) => {
            let observed = observed(ctx, existing, fallback, spec, held);
            outcome::updated_meanwhile(
                &super::node_pool_object(("", "")),
                observed,
                held,
                ctx.generation,
            )
        }
        Ok(Updated::Refused(changes)) => {
            let observed = observed(ctx, existing, fallback, spec, held);
            report_immutable_change(ctx.work, observed, &changes, ctx.generation, held)
        }
        Err(failure) => report_failure(ctx, failure),
    };
    log_decision(ctx, "ManifestWorkUpdate", &report);
    report
}

/// The immutable fields `spec` would change on the NodePool the work holds, built for the
/// HostedCluster that NodePool names (its namespace, `clusterName` and subnet).
fn held_immutable_changes(
    existing: &ExistingWork,
    spec: &NodePoolSpec,
) -> Vec<crate::hypershift::immutable::ImmutableChange> {
    let Some(held) = find_in(&existing.workload, nodepool::KIND) else {
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
    nodepool::immutable::immutable_changes(held, &nodepool::node_pool(spec, &placement), spec.shape)
}

/// A newer generation does not fit the HostedCluster (`violations`): nothing was sent; see
/// [`super::report_refused_update`].
fn refused_update(
    ctx: &Ctx<'_>,
    observed: Report,
    violations: &[SpecViolation],
    held: Option<i64>,
) -> Report {
    let fields: Vec<&str> = violations.iter().map(|v| v.field).collect();
    tracing::warn!(cluster_id = ctx.cluster_id, nodepool_id = ctx.nodepool_id, generation = ctx.generation, held_generation = held, decision = super::INVALID_NODE_POOL_SPEC, fields = ?fields, "the newer generation does not fit the HostedCluster; nothing sent");
    super::report_refused_update(observed, violations, ctx.generation, held)
}

/// The NodePool is being deleted: read the work; ours → request its deletion (once); report the
/// stage with `Finalized`. Never creates or updates.
async fn run_deletion(
    ctx: &Ctx<'_>,
    work: &impl WorkClient,
    deleted_time: &str,
    stuck: bool,
    fallback: &(String, String),
    shutdown: &mut (impl Future<Output = ()> + Unpin),
) -> Report {
    let name = ctx.work.name;
    let report = |progress: &Progress, np: &(String, String)| {
        let report = report_deletion(
            ctx.work,
            (&np.0, &np.1),
            progress,
            deleted_time,
            stuck,
            ctx.generation,
        );
        let reason = |t: &str| report.condition(t).map_or("", |c| c.reason.as_str());
        tracing::info!(
            cluster_id = ctx.cluster_id,
            nodepool_id = ctx.nodepool_id,
            generation = ctx.generation,
            work = name,
            consumer = ctx.work.consumer,
            deleted_time,
            decision = reason(work_deletion::FINALIZED),
            health = reason("Health"),
            "nodepool deletion"
        );
        report
    };
    let found = sync::with_retry(ctx.retry_budget(), &mut *shutdown, ctx.log(), || {
        work.get(name)
    })
    .await;
    let existing = match found {
        Ok(Some(existing)) => existing,
        Ok(None) => return report(&Progress::Gone, fallback),
        Err(failure) => return with_finalized_unconfirmed(report_failure(ctx, failure)),
    };
    if let found @ Ownership::NotOurs { .. } = manifestwork::ownership(&existing.labels, &ctx.owner)
    {
        tracing::warn!(cluster_id = ctx.cluster_id, nodepool_id = ctx.nodepool_id, work = name, decision = "OwnershipConflict", found = %found, "work belongs to someone else; not deleted");
        return with_finalized_unconfirmed(report_ownership_conflict(
            ctx.work,
            &ctx.owner,
            &found,
            ctx.generation,
        ));
    }
    let np = place_in(
        &existing.workload,
        nodepool::KIND,
        (&fallback.0, &fallback.1),
    );
    let object = ObjectDeletion::from_manifest(existing.manifest(
        nodepool::GROUP,
        nodepool::RESOURCE,
        &np.0,
        &np.1,
    ));
    if existing.deleting.is_some() {
        return report(&Progress::Requested { now: false, object }, &np);
    }
    let deleted = sync::with_retry(ctx.retry_budget(), shutdown, ctx.log(), || {
        work.delete(name)
    })
    .await;
    match deleted {
        Ok(()) => report(&Progress::Requested { now: true, object }, &np),
        // Gone between the read and the delete (another pulse, the agent): done.
        Err(Failure::Permanent(WorkError::NotFound { .. })) => report(&Progress::Gone, &np),
        Err(failure) => with_finalized_unconfirmed(report_failure(ctx, failure)),
    }
}

/// The whole subcommand: check the flags, read the NodePool, build the backend client, run,
/// write the report. Exit 0 once a report is written, 1 when none could be, 2 on bad
/// configuration.
pub async fn execute(args: Args) -> ExitCode {
    match execute_inner(&args, super::super::shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(RunError::Config(e)) => {
            tracing::error!(cluster_id = args.cluster_id, nodepool_id = args.nodepool_id, generation = args.generation, error = %e, "bad configuration; no report written");
            super::super::write_termination_message(&format!("bad configuration: {e}"));
            ExitCode::from(EXIT_CONFIG)
        }
        Err(e @ RunError::Write { .. }) => {
            tracing::error!(cluster_id = args.cluster_id, nodepool_id = args.nodepool_id, generation = args.generation, error = %e, "no report written");
            super::super::write_termination_message(&e.to_string());
            ExitCode::from(EXIT_NO_REPORT)
        }
    }
}

async fn execute_inner(args: &Args, shutdown: impl Future<Output = ()>) -> Result<(), RunError> {
    args.check()?;
    let results_path = args.results_path(std::env::var_os("RESULTS_PATH"));
    let generation = args.generation;
    let report = match load_nodepool(args).await {
        Err(Input::Unavailable(detail)) => {
            tracing::warn!(cluster_id = args.cluster_id, nodepool_id = args.nodepool_id, generation, decision = super::NODE_POOL_SPEC_UNAVAILABLE, error = %detail, "cannot read the NodePool");
            report_nodepool_unavailable(&detail, generation)
        }
        Err(Input::Invalid(detail)) => {
            tracing::warn!(cluster_id = args.cluster_id, nodepool_id = args.nodepool_id, generation, decision = super::INVALID_NODE_POOL_SPEC, error = %detail, "the NodePool input is not a NodePool");
            report_invalid_spec(
                &[SpecViolation {
                    field: "nodepool",
                    problem: detail,
                }],
                generation,
            )
        }
        Ok(input) => match args.work.connect().await {
            Ok(client) => match (inventory(args), &client) {
                (Some(inventory), crate::work::backend::AnyWorkClient::Maestro(maestro)) => {
                    run_placed(
                        args,
                        (maestro, &inventory),
                        input,
                        jiff::Timestamp::now(),
                        shutdown,
                    )
                    .await?
                }
                _ => run(args, &client, input, jiff::Timestamp::now(), shutdown).await?,
            },
            Err(e) => {
                tracing::error!(cluster_id = args.cluster_id, nodepool_id = args.nodepool_id, generation, decision = "AdapterMisconfigured", error = %e, "cannot build the work backend client");
                report_adapter_misconfigured(&e.to_string(), generation)
            }
        },
    };
    let mut report = report;
    crate::placement::set_management_cluster(&mut report, args.work.static_consumer());
    super::super::write_report(
        &results_path,
        &report,
        (args.cluster_id.as_deref(), args.nodepool_id.as_deref()),
    )
    .map_err(|source| RunError::Write {
        path: results_path.clone(),
        source,
    })
}

/// The inventory of the placement mode; `None` in static mode.
fn inventory(args: &Args) -> Option<crate::placement::inventory::AnyInventory> {
    use crate::placement::inventory::{AnyInventory, ApiInventory, FileInventory};
    match args.work.placement() {
        Ok(crate::work::backend::Placement::File(path)) => {
            Some(AnyInventory::File(FileInventory {
                path: path.to_owned(),
            }))
        }
        Ok(crate::work::backend::Placement::FromApi) => Some(AnyInventory::Api(ApiInventory {
            base_url: args.hyperfleet_api.clone().unwrap_or_default(),
            token_file: args.hyperfleet_token_file.clone(),
        })),
        Ok(crate::work::backend::Placement::Static(_)) | Err(_) => None,
    }
}

/// Why the NodePool could not be read.
enum Input {
    /// File unreadable, API unreachable or refusing: retry next pulse.
    Unavailable(String),
    /// The input is not a NodePool object or spec.
    Invalid(String),
}

async fn load_nodepool(args: &Args) -> Result<NodePoolInput, Input> {
    if let Some(path) = &args.nodepool_spec {
        let text = crate::input_file::NODEPOOL_SPEC
            .read_text(path)
            .map_err(Input::Unavailable)?;
        return NodePoolInput::from_json(&text)
            .map_err(|e| Input::Invalid(format!("{}: {e}", path.display())));
    }
    let (Some(url), Some(cluster_id), Some(nodepool_id)) =
        (&args.hyperfleet_api, &args.cluster_id, &args.nodepool_id)
    else {
        return Err(Input::Unavailable(
            "neither --nodepool-spec nor --hyperfleet-api with --cluster-id and --nodepool-id is set".to_owned(),
        ));
    };
    crate::hyperfleet::api::fetch_nodepool(
        url,
        cluster_id,
        nodepool_id,
        args.hyperfleet_token_file.as_deref(),
        crate::hyperfleet::api::TIMEOUT,
    )
    .await
    .map_err(|e| {
        if e.is_bad_input() {
            Input::Invalid(e.to_string())
        } else {
            Input::Unavailable(e.to_string())
        }
    })
}
