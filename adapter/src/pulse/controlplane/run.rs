//! The `controlplane` decision and its wiring: validate the spec, get the work, create it when
//! missing, update it on a newer generation, delete it for a deleted cluster, map what was seen to
//! a report; transient backend failures are retried within `--retry-budget`
//! ([`crate::work::sync`]).
//!
//! [`run`] takes the work client and the shutdown signal as parameters and returns the report;
//! [`execute`] is the edge: it reads the cluster, builds the backend client from the flags,
//! listens for SIGTERM, runs and writes the report.

use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;

use futures::FutureExt;
use job_report::Report;
use serde_json::Value;

use super::args::{Args, ConfigError};
use super::deletion::{self, DELETING, FINALIZED, Stage};
use super::{
    IMMUTABLE_FIELD_CHANGED, OperatorClock, WorkRef, hosted_cluster_object, owner, report,
    report_adapter_misconfigured, report_cluster_unavailable, report_created,
    report_immutable_change, report_invalid_spec, report_observed, report_ownership_conflict,
    report_stale_generation, report_updated,
};
use crate::cli::{EXIT_CONFIG, EXIT_NO_REPORT};
use crate::hyperfleet::cluster::{
    ClusterInput, ClusterSpec, HOSTED_CLUSTER_NAMESPACE, SecretSettings, SpecNames, SpecViolation,
};
use crate::hyperfleet::nodepools::NodePools;
use crate::hypershift::hostedcluster;
use crate::hypershift::immutable::ImmutableChange;
use crate::hypershift::{find_in, place_in};
use crate::placement::inventory::{AnyInventory, ApiInventory, FileInventory};
use crate::work::backend::{AnyWorkClient, Placement, WorkArgs};
use crate::work::deletion::with_finalized_unconfirmed;
use crate::work::feedback::ObjectDeletion;
use crate::work::manifestwork::{self, Owner, Ownership};
use crate::work::outcome::{self, FailureContext};
use crate::work::sync::{self, Failure, GenerationCheck, LogContext, Seen, UpdateRequest, Updated};
use crate::work::{ExistingWork, WorkClient, WorkError};

pub use crate::work::sync::{INITIAL_BACKOFF, MAX_BACKOFF};

/// Why `execute` could not end with a written report.
pub type RunError = super::super::RunError<ConfigError>;

/// Decides what to do for this cluster and returns the report (not yet written).
///
/// The cluster id is `--cluster-id`, else the cluster object's `id` (both given and different →
/// [`ConfigError::ClusterIdMismatch`]); the generation is `--generation`, else the object's.
/// Secret-name flags override the spec's. A spec with violations is reported and nothing is
/// sent. `shutdown` resolving stops any retry and the in-flight call.
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

/// What a pulse reads besides the cluster and the work: only a deleting cluster uses them.
#[derive(Debug, Clone)]
pub struct PulseInputs {
    /// The cluster's NodePools as the HyperFleet API (or `--nodepools-file`) lists them, or why
    /// they could not be read.
    pub nodepools: Result<NodePools, String>,
    /// The clock a deletion's age is measured with.
    pub now: jiff::Timestamp,
}

/// [`run`] with the NodePool list and the clock given (a deleting cluster needs both): a cluster
/// with `deleted_time` is deleted instead of created or updated (see
/// [`deletion`]). Static placement: the work lives on `--consumer`, which the report names in
/// `data.management_cluster`.
pub async fn run_with(
    args: &Args,
    work: &impl WorkClient,
    cluster: ClusterInput,
    inputs: &PulseInputs,
    shutdown: impl Future<Output = ()>,
) -> Result<Report, ConfigError> {
    let consumer = args.work.static_consumer();
    let mut report = run_on(args, work, consumer, cluster, inputs, shutdown).await?;
    crate::placement::set_management_cluster(&mut report, consumer);
    Ok(report)
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

/// [`run_with`] on the work client `work`, whose work lives on `consumer` (static or placed).
pub(super) async fn run_on(
    args: &Args,
    work: &impl WorkClient,
    consumer: &str,
    cluster: ClusterInput,
    inputs: &PulseInputs,
    shutdown: impl Future<Output = ()>,
) -> Result<Report, ConfigError> {
    // Destructured so a new flag cannot be silently ignored here.
    let Args {
        cluster_id: cluster_id_flag,
        generation: generation_flag,
        cluster_spec: _,
        hyperfleet_api: _,
        hyperfleet_token_file: _,
        nodepools_file: _,
        deletion_stuck_after,
        operator_stuck_after,
        results_path: _,
        work: work_args,
        // Only a new placement uses them (the placement lease, `placed.rs`).
        job_namespace: _,
        pod_name: _,
        placement_lock_wait: _,
        pull_secret_name,
        ssh_key_secret_name,
        service_account_signing_key_secret_name,
        log_format: _,
        log_level: _,
    } = args;
    let ClusterInput {
        id: object_id,
        name,
        generation: object_generation,
        deleted_time,
        spec,
    } = cluster;
    let cluster_id = resolve_cluster_id(cluster_id_flag.as_ref(), object_id)?;
    let generation = generation_flag.or(object_generation.filter(|g| *g >= 1));
    let settings = SecretSettings {
        pull_secret_name: pull_secret_name.clone(),
        ssh_key_secret_name: ssh_key_secret_name.clone(),
        service_account_signing_key_secret_name: service_account_signing_key_secret_name.clone(),
    };

    let work_name = manifestwork::hosted_cluster_work_name(&cluster_id);
    let ctx = Ctx {
        cluster_id: &cluster_id,
        generation,
        work: WorkRef {
            consumer,
            name: &work_name,
        },
        owner: owner(&cluster_id),
        work_args,
        operator: OperatorClock {
            now: inputs.now,
            stuck_after: *operator_stuck_after,
        },
    };
    let shutdown = shutdown.fuse();
    let mut shutdown = std::pin::pin!(shutdown);

    if let Some(deleted_time) = &deleted_time {
        let hc_name = name
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| cluster_id.clone());
        let deletion = Deletion {
            deleted_time,
            nodepools: &inputs.nodepools,
            stuck: deletion::is_stuck(
                deleted_time,
                deletion::Clock {
                    now: inputs.now,
                    stuck_after: *deletion_stuck_after,
                },
            ),
            hc_name: &hc_name,
        };
        return Ok(run_deletion(&ctx, work, &deletion, &mut shutdown).await);
    }

    let spec = match ClusterSpec::validate_with(&cluster_id, name.as_deref(), &spec, &settings) {
        Ok(spec) => spec,
        Err(violations) => {
            let fields: Vec<&str> = violations.iter().map(|v| v.field).collect();
            tracing::warn!(
                cluster_id,
                generation,
                decision = "InvalidClusterSpec",
                fields = ?fields,
                "cluster spec is invalid; nothing sent"
            );
            return Ok(report_invalid_spec(&violations, generation));
        }
    };
    let manifest = super::manifest_work_for(work_args.backend, &spec, consumer, generation);
    let work_ref = ctx.work;

    let outcome = sync::with_retry(ctx.retry_budget(), &mut shutdown, ctx.log(), || {
        sync::get_or_create(work, &work_name, &manifest)
    })
    .await;

    let report = match outcome {
        Ok(Seen::Created) => {
            tracing::info!(
                cluster_id,
                generation,
                work = work_name,
                consumer,
                decision = "ManifestWorkCreated",
                "work created"
            );
            report_created(work_ref, generation)
        }
        Ok(Seen::Found(existing)) => match manifestwork::ownership(&existing.labels, &ctx.owner) {
            Ownership::Ours => {
                let hc = hostedcluster::hosted_cluster_ref(&spec);
                let held = manifestwork::work_generation(&existing.annotations);
                match sync::generation_check(generation, held) {
                    GenerationCheck::Newer if existing.deleting.is_none() => {
                        let names = spec.names;
                        update_work(&ctx, work, &existing, (&manifest, names), hc, &mut shutdown)
                            .await
                    }
                    check => {
                        // The management cluster holds the spec of the generation the work was
                        // built from; that is the generation reported.
                        let report = report_observed(work_ref, &existing, hc, held, ctx.operator);
                        let report = match check {
                            GenerationCheck::Older { pulse, held } => {
                                tracing::info!(
                                    cluster_id,
                                    generation,
                                    held_generation = held,
                                    work = work_name,
                                    decision = "StaleGeneration",
                                    "the work carries a newer generation; nothing sent"
                                );
                                report_stale_generation(work_ref, report, pulse, held)
                            }
                            GenerationCheck::Newer => {
                                tracing::info!(
                                    cluster_id,
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
                                    DELETING,
                                    format!(
                                        "{} is not sent: ManifestWork {work_name} is being deleted on management cluster {consumer}",
                                        generation.map_or_else(
                                            || "This spec".to_owned(),
                                            |g| format!("Generation {g}")
                                        )
                                    ),
                                    &hosted_cluster_object(hc),
                                    held,
                                );
                                report.observed_generation = generation;
                                report
                            }
                            GenerationCheck::Current => report,
                        };
                        log_found(&ctx, &existing, &report);
                        report
                    }
                }
            }
            found @ Ownership::NotOurs { .. } => {
                tracing::warn!(cluster_id, generation, work = work_name, consumer, decision = "OwnershipConflict", found = %found, "work belongs to someone else; left untouched");
                report_ownership_conflict(work_ref, &cluster_id, &found, generation)
            }
        },
        Err(failure) => report_failure(&ctx, failure),
    };
    Ok(report)
}

/// What every decision of one pulse shares.
pub(super) struct Ctx<'a> {
    pub(super) cluster_id: &'a str,
    pub(super) generation: Option<i64>,
    pub(super) work: WorkRef<'a>,
    pub(super) owner: Owner,
    pub(super) work_args: &'a WorkArgs,
    /// The clock and bound of the HyperShift operator's lag after an apply.
    pub(super) operator: OperatorClock,
}

impl Ctx<'_> {
    pub(super) fn log(&self) -> LogContext<'_> {
        LogContext {
            cluster_id: self.cluster_id,
            nodepool_id: None,
            generation: self.generation,
        }
    }

    pub(super) fn retry_budget(&self) -> Duration {
        self.work_args.retry_budget
    }
}

fn log_found(ctx: &Ctx<'_>, existing: &ExistingWork, report: &Report) {
    let reason = |t: &str| report.condition(t).map_or("", |c| c.reason.as_str());
    tracing::info!(
        cluster_id = ctx.cluster_id,
        generation = ctx.generation,
        work = ctx.work.name,
        consumer = ctx.work.consumer,
        decision = "ManifestWorkFound",
        applied = reason("Applied"),
        available = reason("Available"),
        health = reason("Health"),
        deleting = existing.deleting.is_some(),
        "work found"
    );
}

/// The report when the backend did not answer usefully (retry budget spent, SIGTERM, or a
/// failure retrying cannot fix).
pub(super) fn report_failure(ctx: &Ctx<'_>, failure: Failure) -> Report {
    let failure_ctx = FailureContext {
        work: ctx.work,
        object_kind: hostedcluster::KIND,
        retry_budget: ctx.retry_budget(),
        backend: ctx.work_args.backend_ref(),
        log: ctx.log(),
    };
    report(
        ctx.generation,
        outcome::failure(&failure_ctx, failure),
        "",
        "",
    )
}

/// The pulse is newer than the work: compare, then publish the update guarded by the version
/// read (one re-read and retry after a stale-version conflict).
async fn update_work(
    ctx: &Ctx<'_>,
    work: &impl WorkClient,
    existing: &ExistingWork,
    (manifest, names): (&Value, &SpecNames),
    hc: (&str, &str),
    shutdown: &mut (impl Future<Output = ()> + Unpin),
) -> Report {
    let held = manifestwork::work_generation(&existing.annotations);
    let request = UpdateRequest {
        name: ctx.work.name,
        owner: &ctx.owner,
        generation: ctx.generation,
        log: ctx.log(),
    };
    let refuse = |current: &ExistingWork| {
        let changes = changes_against(current, manifest, names);
        (!changes.is_empty()).then_some(changes)
    };
    let outcome = sync::with_retry(ctx.retry_budget(), shutdown, ctx.log(), || {
        sync::update_once(work, request, existing, manifest, refuse)
    })
    .await;
    match outcome {
        Ok(Updated::Sent) => {
            tracing::info!(
                cluster_id = ctx.cluster_id,
                generation = ctx.generation,
                held_generation = held,
                work = ctx.work.name,
                consumer = ctx.work.consumer,
                decision = "ManifestWorkUpdated",
                "work updated"
            );
            // The agent has not applied it yet: the status is the running control plane's.
            let observed = report_observed(ctx.work, existing, hc, ctx.generation, ctx.operator);
            report_updated(ctx.work, observed, held, ctx.generation)
        }
        Ok(Updated::AlreadyCurrent) => {
            tracing::info!(
                cluster_id = ctx.cluster_id,
                generation = ctx.generation,
                work = ctx.work.name,
                "the work was updated by another pulse meanwhile; nothing sent"
            );
            let observed = report_observed(ctx.work, existing, hc, held, ctx.operator);
            outcome::updated_meanwhile(&hosted_cluster_object(hc), observed, held, ctx.generation)
        }
        Ok(Updated::Refused(changes)) => {
            let fields: Vec<&str> = changes.iter().map(|c| c.field).collect();
            tracing::warn!(cluster_id = ctx.cluster_id, generation = ctx.generation, held_generation = held, work = ctx.work.name, decision = IMMUTABLE_FIELD_CHANGED, fields = ?fields, "immutable HostedCluster fields would change; nothing sent");
            let observed = report_observed(ctx.work, existing, hc, held, ctx.operator);
            report_immutable_change(ctx.work, observed, &changes, ctx.generation, held)
        }
        Err(failure) => report_failure(ctx, failure),
    }
}

/// Immutable fields of the work's HostedCluster that `manifest` would change. A work without a
/// HostedCluster manifest has nothing to compare (the API server's own rules still apply).
fn changes_against(
    existing: &ExistingWork,
    manifest: &Value,
    names: &SpecNames,
) -> Vec<ImmutableChange> {
    let new = manifest["spec"]["workload"]["manifests"]
        .as_array()
        .and_then(|m| find_in(m, hostedcluster::KIND));
    match (find_in(&existing.workload, hostedcluster::KIND), new) {
        (Some(old), Some(new)) => hostedcluster::immutable::immutable_changes(old, new, names),
        _ => Vec::new(),
    }
}

/// What a deleting cluster's pulse knows besides the work.
struct Deletion<'a> {
    deleted_time: &'a str,
    nodepools: &'a Result<NodePools, String>,
    stuck: bool,
    /// The HostedCluster name when the work does not say (the cluster's name, else its id).
    hc_name: &'a str,
}

/// The cluster is being deleted: read the work; ours and no NodePools listed → request its
/// deletion (once); report the stage with `Finalized`. Never creates or updates.
async fn run_deletion(
    ctx: &Ctx<'_>,
    work: &impl WorkClient,
    deletion: &Deletion<'_>,
    shutdown: &mut (impl Future<Output = ()> + Unpin),
) -> Report {
    let name = ctx.work.name;
    let found = sync::with_retry(ctx.retry_budget(), &mut *shutdown, ctx.log(), || {
        work.get(name)
    })
    .await;
    let existing = match found {
        Ok(existing) => existing,
        Err(failure) => return with_finalized_unconfirmed(report_failure(ctx, failure)),
    };
    let hc_ref = |existing: Option<&ExistingWork>| -> (String, String) {
        place_in(
            existing.map_or(&[], |e| e.workload.as_slice()),
            hostedcluster::KIND,
            (HOSTED_CLUSTER_NAMESPACE, deletion.hc_name),
        )
    };
    let report = |stage: &Stage, existing: Option<&ExistingWork>, observed: Option<&Report>| {
        let (namespace, hc_name) = hc_ref(existing);
        let report = deletion::report_deletion(
            ctx.work,
            (&namespace, &hc_name),
            stage,
            observed,
            deletion.deleted_time,
            deletion.stuck,
            ctx.generation,
        );
        let reason = |t: &str| report.condition(t).map_or("", |c| c.reason.as_str());
        tracing::info!(
            cluster_id = ctx.cluster_id,
            generation = ctx.generation,
            work = name,
            consumer = ctx.work.consumer,
            deleted_time = deletion.deleted_time,
            decision = reason(FINALIZED),
            applied = reason("Applied"),
            health = reason("Health"),
            "cluster deletion"
        );
        report
    };
    let Some(existing) = existing else {
        return report(&Stage::Gone, None, None);
    };
    let ownership = manifestwork::ownership(&existing.labels, &ctx.owner);
    if let found @ Ownership::NotOurs { .. } = ownership {
        tracing::warn!(cluster_id = ctx.cluster_id, work = name, decision = "OwnershipConflict", found = %found, "work belongs to someone else; not deleted");
        return with_finalized_unconfirmed(report_ownership_conflict(
            ctx.work,
            ctx.cluster_id,
            &found,
            ctx.generation,
        ));
    }
    let (namespace, hc_name) = hc_ref(Some(&existing));
    let hc_deletion = ObjectDeletion::from_manifest(existing.manifest(
        hostedcluster::GROUP,
        hostedcluster::RESOURCE,
        &namespace,
        &hc_name,
    ));
    if existing.deleting.is_some() {
        return report(
            &Stage::Requested {
                now: false,
                hc: hc_deletion,
            },
            Some(&existing),
            None,
        );
    }
    let held = manifestwork::work_generation(&existing.annotations);
    match deletion.nodepools {
        Err(why) => {
            let observed = report_observed(
                ctx.work,
                &existing,
                (&namespace, &hc_name),
                held,
                ctx.operator,
            );
            return report(
                &Stage::NodePoolsUnknown(why.clone()),
                Some(&existing),
                Some(&observed),
            );
        }
        Ok(pools) if pools.any() => {
            let observed = report_observed(
                ctx.work,
                &existing,
                (&namespace, &hc_name),
                held,
                ctx.operator,
            );
            return report(
                &Stage::NodePoolsExist(pools.clone()),
                Some(&existing),
                Some(&observed),
            );
        }
        Ok(_) => {}
    }
    let deleted = sync::with_retry(ctx.retry_budget(), shutdown, ctx.log(), || {
        work.delete(name)
    })
    .await;
    match deleted {
        Ok(()) => report(
            &Stage::Requested {
                now: true,
                hc: hc_deletion,
            },
            Some(&existing),
            None,
        ),
        // Gone between the read and the delete (another pulse, the agent): done.
        Err(Failure::Permanent(WorkError::NotFound { .. })) => report(&Stage::Gone, None, None),
        Err(failure) => with_finalized_unconfirmed(report_failure(ctx, failure)),
    }
}

/// The whole subcommand: check the flags, read the cluster, build the backend client, run, write
/// the report. Exit 0 once a report is written, 1 when none could be, 2 on bad configuration.
pub async fn execute(args: Args) -> ExitCode {
    match execute_inner(&args, super::super::shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(RunError::Config(e)) => {
            tracing::error!(cluster_id = args.cluster_id, generation = args.generation, error = %e, "bad configuration; no report written");
            super::super::write_termination_message(&format!("bad configuration: {e}"));
            ExitCode::from(EXIT_CONFIG)
        }
        Err(e @ RunError::Write { .. }) => {
            tracing::error!(cluster_id = args.cluster_id, generation = args.generation, error = %e, "no report written");
            super::super::write_termination_message(&e.to_string());
            ExitCode::from(EXIT_NO_REPORT)
        }
    }
}

async fn execute_inner(args: &Args, shutdown: impl Future<Output = ()>) -> Result<(), RunError> {
    args.check()?;
    let results_path = args.results_path(std::env::var_os("RESULTS_PATH"));
    let generation = args.generation;
    let report = match load_cluster(args).await {
        Err(Input::Unavailable(detail)) => {
            tracing::warn!(cluster_id = args.cluster_id, generation, decision = "ClusterSpecUnavailable", error = %detail, "cannot read the cluster");
            report_cluster_unavailable(&detail, generation)
        }
        Err(Input::Invalid(detail)) => {
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
            match args.work.connect().await {
                Ok(client) => match (inventory(args), &client) {
                    (Some(inventory), AnyWorkClient::Maestro(maestro)) => {
                        let lock = placement_lock(args).await;
                        let placer = super::placed::Placer {
                            api: maestro,
                            inventory: &inventory,
                            lock: &lock,
                        };
                        super::placed::run_placed(args, placer, cluster, &inputs, shutdown).await?
                    }
                    _ => run_with(args, &client, cluster, &inputs, shutdown).await?,
                },
                Err(e) => {
                    tracing::error!(cluster_id = args.cluster_id, generation = args.generation, decision = "AdapterMisconfigured", error = %e, "cannot build the work backend client");
                    report_adapter_misconfigured(&e.to_string(), args.generation)
                }
            }
        }
    };
    let mut report = report;
    crate::placement::set_management_cluster(&mut report, args.work.static_consumer());
    super::super::write_report(&results_path, &report, (args.cluster_id.as_deref(), None)).map_err(
        |source| RunError::Write {
            path: results_path.clone(),
            source,
        },
    )
}

/// The placement lease client of the inventory modes (no request is made until a new placement
/// needs it; a client that cannot be built is reported then, as `PlacementLockUnavailable`).
async fn placement_lock(
    args: &Args,
) -> crate::placement::lease::PlacementLock<crate::placement::lease::KubeLeases> {
    let namespace = args.job_namespace.clone().unwrap_or_default();
    let api =
        crate::placement::lease::KubeLeases::connect(args.work.kubeconfig.as_deref(), &namespace)
            .await;
    let holder = crate::placement::lease::holder_identity(args.pod_name.as_deref());
    tracing::debug!(namespace, holder, "placement lease settings");
    crate::placement::lease::PlacementLock {
        api,
        holder,
        wait: args.placement_lock_wait,
    }
}

/// The inventory of the placement mode; `None` in static mode.
fn inventory(args: &Args) -> Option<AnyInventory> {
    match args.work.placement() {
        Ok(Placement::File(path)) => Some(AnyInventory::File(FileInventory {
            path: path.to_owned(),
        })),
        Ok(Placement::FromApi) => Some(AnyInventory::Api(ApiInventory {
            base_url: args.hyperfleet_api.clone().unwrap_or_default(),
            token_file: args.hyperfleet_token_file.clone(),
        })),
        Ok(Placement::Static(_)) | Err(_) => None,
    }
}

/// Why the cluster could not be read.
enum Input {
    /// File unreadable, API unreachable or refusing: retry next pulse.
    Unavailable(String),
    /// The input is not a cluster object or spec.
    Invalid(String),
}

async fn load_cluster(args: &Args) -> Result<ClusterInput, Input> {
    if let Some(path) = &args.cluster_spec {
        let text = crate::input_file::CLUSTER_SPEC
            .read_text(path)
            .map_err(Input::Unavailable)?;
        return ClusterInput::from_json(&text)
            .map_err(|e| Input::Invalid(format!("{}: {e}", path.display())));
    }
    let (Some(url), Some(cluster_id)) = (&args.hyperfleet_api, &args.cluster_id) else {
        return Err(Input::Unavailable(
            "neither --cluster-spec nor --hyperfleet-api with --cluster-id is set".to_owned(),
        ));
    };
    crate::hyperfleet::api::fetch_cluster(
        url,
        cluster_id,
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
            args.hyperfleet_token_file.as_deref(),
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
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::collections::{BTreeMap, VecDeque};
    use std::sync::Mutex;

    use clap::Parser;
    use job_report::ConditionStatus;
    use serde_json::{Value, json};

    use super::*;
    use crate::hyperfleet::cluster::fixture::VALID;
    use crate::work::{ManifestStatus, ResourceIdentity, WorkCondition};
    use tokio::time::Instant;

    const ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";

    /// [`super::run`], with the pulse recorded in the oracle ([`crate::testing`]).
    async fn run(
        args: &Args,
        work: &(impl WorkClient + Sync),
        cluster: ClusterInput,
        shutdown: impl Future<Output = ()>,
    ) -> Result<Report, ConfigError> {
        let log = crate::testing::Log::start();
        let recorded = crate::testing::Recorded::new(work);
        let result = super::run(args, &recorded, cluster, shutdown).await;
        let outcome = result.as_ref().map_err(ToString::to_string);
        crate::testing::check("controlplane", outcome, &recorded.requests(), &log);
        result
    }

    /// [`super::run_with`], with the pulse recorded in the oracle.
    async fn run_with(
        args: &Args,
        work: &(impl WorkClient + Sync),
        cluster: ClusterInput,
        inputs: &PulseInputs,
        shutdown: impl Future<Output = ()>,
    ) -> Result<Report, ConfigError> {
        let log = crate::testing::Log::start();
        let recorded = crate::testing::Recorded::new(work);
        let result = super::run_with(args, &recorded, cluster, inputs, shutdown).await;
        let outcome = result.as_ref().map_err(ToString::to_string);
        crate::testing::check("controlplane", outcome, &recorded.requests(), &log);
        result
    }

    /// An in-memory backend: one optional work, scripted failures per verb, a call log.
    #[derive(Default)]
    struct FakeWork {
        stored: Mutex<Option<ExistingWork>>,
        get_failures: Mutex<VecDeque<WorkError>>,
        create_failures: Mutex<VecDeque<WorkError>>,
        /// Every get fails with this (after the scripted ones).
        get_always: Option<WorkError>,
        /// Calls never answer.
        hang: bool,
        calls: Mutex<Vec<&'static str>>,
        created: Mutex<Vec<Value>>,
        updated: Mutex<Vec<Value>>,
    }

    impl FakeWork {
        fn with(existing: ExistingWork) -> Self {
            FakeWork {
                stored: Mutex::new(Some(existing)),
                ..Default::default()
            }
        }
        fn fail_gets(self, errors: impl IntoIterator<Item = WorkError>) -> Self {
            self.get_failures.lock().unwrap().extend(errors);
            self
        }
        fn fail_creates(self, errors: impl IntoIterator<Item = WorkError>) -> Self {
            self.create_failures.lock().unwrap().extend(errors);
            self
        }
        fn calls(&self) -> Vec<&'static str> {
            self.calls.lock().unwrap().clone()
        }
    }

    impl WorkClient for FakeWork {
        async fn get(&self, _name: &str) -> Result<Option<ExistingWork>, WorkError> {
            self.calls.lock().unwrap().push("get");
            if self.hang {
                std::future::pending::<()>().await;
            }
            if let Some(e) = self.get_failures.lock().unwrap().pop_front() {
                return Err(e);
            }
            if let Some(e) = &self.get_always {
                return Err(e.clone());
            }
            Ok(self.stored.lock().unwrap().clone())
        }

        async fn create(&self, work: &Value) -> Result<(), WorkError> {
            self.calls.lock().unwrap().push("create");
            if let Some(e) = self.create_failures.lock().unwrap().pop_front() {
                return Err(e);
            }
            self.created.lock().unwrap().push(work.clone());
            Ok(())
        }

        /// Like the real backends: refused while deleting or when `current` is stale; otherwise the
        /// stored work takes the labels, annotations and manifests of `work` and its version bumps.
        async fn update(&self, work: &Value, current: &ExistingWork) -> Result<(), WorkError> {
            self.calls.lock().unwrap().push("update");
            let mut stored = self.stored.lock().unwrap();
            let Some(existing) = stored.as_mut() else {
                return Err(WorkError::NotFound {
                    message: "no such work".into(),
                });
            };
            if existing.deleting.is_some() {
                return Err(WorkError::Conflict {
                    message: "the resource is under deletion".into(),
                });
            }
            if existing.version != current.version {
                return Err(WorkError::Conflict {
                    message: "the resource version is not the latest".into(),
                });
            }
            let map = |key: &str| -> BTreeMap<String, String> {
                serde_json::from_value(work["metadata"][key].clone()).unwrap_or_default()
            };
            existing.labels = map("labels");
            existing.annotations = map("annotations");
            existing.workload =
                serde_json::from_value(work["spec"]["workload"]["manifests"].clone())
                    .unwrap_or_default();
            existing.version = Some(existing.version.unwrap_or(0) + 1);
            self.updated.lock().unwrap().push(work.clone());
            Ok(())
        }

        /// Marks the stored work as deleting (idempotent); `NotFound` without one.
        async fn delete(&self, _name: &str) -> Result<(), WorkError> {
            self.calls.lock().unwrap().push("delete");
            match self.stored.lock().unwrap().as_mut() {
                None => Err(WorkError::NotFound {
                    message: "no such work".into(),
                }),
                Some(existing) => {
                    existing
                        .deleting
                        .get_or_insert_with(|| "2026-11-26T03:44:21Z".to_owned());
                    Ok(())
                }
            }
        }
    }

    fn args(extra: &[&str]) -> Args {
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        let mut argv = vec![
            "x",
            "--consumer",
            "mgmt-1",
            "--cluster-spec",
            "/unused.json",
            "--maestro-api-url",
            "http://r",
            "--maestro-grpc-url",
            "http://g",
        ];
        argv.extend(extra);
        Cli::try_parse_from(argv).unwrap().args
    }

    fn cluster() -> ClusterInput {
        ClusterInput::from_json(VALID).unwrap()
    }

    fn ours() -> ExistingWork {
        ExistingWork {
            labels: BTreeMap::from([
                ("hyperfleet.io/cluster-id".to_owned(), ID.to_owned()),
                (
                    "hyperfleet.io/adapter".to_owned(),
                    "controlplane".to_owned(),
                ),
            ]),
            // Built by a pulse of the fixture cluster's generation.
            annotations: BTreeMap::from([("hyperfleet.io/generation".to_owned(), "3".to_owned())]),
            ..Default::default()
        }
    }

    fn with_status(status: Value) -> ExistingWork {
        ExistingWork {
            manifests: vec![ManifestStatus {
                // As the real agent reports a HostedCluster it applied and reads status from.
                conditions: ["Applied", "Available", "StatusFeedbackSynced"]
                    .into_iter()
                    .map(|t| WorkCondition {
                        type_: t.into(),
                        status: "True".into(),
                        last_transition_time: "2026-11-26T03:36:31Z".into(),
                        ..Default::default()
                    })
                    .collect(),
                resource: ResourceIdentity {
                    group: "hypershift.openshift.io".into(),
                    kind: "HostedCluster".into(),
                    resource: "hostedclusters".into(),
                    namespace: "clusters".into(),
                    name: "prod-eu-1".into(),
                    ..Default::default()
                },
                values: BTreeMap::from([("status".to_owned(), status)]),
            }],
            ..ours()
        }
    }

    fn reasons(report: &Report) -> Vec<(&str, ConditionStatus, &str)> {
        report
            .conditions
            .iter()
            .map(|c| (c.type_.as_str(), c.status, c.reason.as_str()))
            .collect()
    }

    fn unavailable() -> WorkError {
        WorkError::Unavailable {
            message: "connection refused".into(),
        }
    }

    async fn never() {
        std::future::pending::<()>().await;
    }

    use ConditionStatus::{False, True, Unknown};

    #[tokio::test(start_paused = true)]
    async fn missing_work_is_created_with_our_labels_and_generation() {
        let fake = FakeWork::default();
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        assert_eq!(
            reasons(&report),
            [
                ("Applied", True, "ManifestWorkCreated"),
                ("Available", False, "Provisioning"),
                ("Health", True, "NoIssues"),
            ]
        );
        assert_eq!(fake.calls(), ["get", "create"]);
        let created = fake.created.lock().unwrap()[0].clone();
        assert_eq!(created["metadata"]["name"], format!("hostedcluster-{ID}"));
        assert_eq!(created["metadata"]["namespace"], "mgmt-1");
        assert_eq!(
            created["metadata"]["labels"]["hyperfleet.io/cluster-id"],
            ID
        );
        // generation from the cluster object (3) when --generation is absent
        assert_eq!(
            created["metadata"]["annotations"]["hyperfleet.io/generation"],
            "3"
        );
        assert_eq!(report.observed_generation, Some(3));
    }

    #[tokio::test(start_paused = true)]
    async fn flags_override_generation_and_secret_names() {
        let fake = FakeWork::default();
        let report = run(
            &args(&[
                "--generation",
                "7",
                "--pull-secret-name",
                "other-pull-secret",
            ]),
            &fake,
            cluster(),
            never(),
        )
        .await
        .unwrap();
        assert_eq!(report.observed_generation, Some(7));
        let created = fake.created.lock().unwrap()[0].clone();
        assert_eq!(
            created["spec"]["workload"]["manifests"][1]["spec"]["pullSecret"]["name"],
            "other-pull-secret"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn cluster_id_flag_must_match_the_object() {
        let fake = FakeWork::default();
        let err = run(
            &args(&["--cluster-id", "019a6f1f-0d2e-7c3b-a4f5-6e7d8c9b0a1f"]),
            &fake,
            cluster(),
            never(),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(err, ConfigError::ClusterIdMismatch { .. }),
            "{err}"
        );
        let mut bare = cluster();
        bare.id = None;
        let err = run(&args(&[]), &fake, bare, never()).await.unwrap_err();
        assert_eq!(err, ConfigError::NoClusterId);
        assert!(fake.calls().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn found_work_reports_its_feedback() {
        let fake = FakeWork::with(with_status(json!({
            "conditions": [
                {"type": "Available", "status": "True", "reason": "AsExpected", "message": ""},
                {"type": "Degraded", "status": "True", "reason": "Broken", "message": "etcd is sad"}
            ],
            "controlPlaneEndpoint": {"host": "api.example.com", "port": 443},
            "version": {"history": [{"state": "Completed", "version": "4.17.0"}]}
        })));
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        assert_eq!(
            reasons(&report),
            [
                ("Applied", True, "ManifestWorkApplied"),
                ("Available", True, "ControlPlaneReady"),
                ("Health", False, "Degraded"),
            ]
        );
        let data = report.data.unwrap();
        assert_eq!(
            data["control_plane_endpoint"],
            "https://api.example.com:443"
        );
        assert_eq!(data["version"], "4.17.0");
        assert_eq!(fake.calls(), ["get"]);
    }

    #[tokio::test(start_paused = true)]
    async fn observed_generation_is_the_generation_the_work_carries() {
        let mut work = with_status(json!({"conditions": []}));
        work.annotations
            .insert("hyperfleet.io/generation".into(), "2".into());
        let fake = FakeWork::with(work.clone());
        // This pulse is for generation 1; the management cluster holds generation 2's spec.
        let report = run(&args(&["--generation", "1"]), &fake, cluster(), never())
            .await
            .unwrap();
        assert_eq!(report.observed_generation, Some(2));
        assert_eq!(fake.calls(), ["get"]);
        // Without the annotation the work holds a spec of no known generation: the pulse brings
        // it to its own and reports that generation, not yet applied.
        work.annotations.clear();
        let fake = FakeWork::with(work);
        let report = run(&args(&["--generation", "5"]), &fake, cluster(), never())
            .await
            .unwrap();
        assert_eq!(report.observed_generation, Some(5));
        assert_eq!(fake.calls(), ["get", "update"]);
        assert_eq!(report.condition("Available").unwrap().status, False);
        // A work created now carries this pulse's generation.
        let fake = FakeWork::default();
        let report = run(&args(&["--generation", "5"]), &fake, cluster(), never())
            .await
            .unwrap();
        assert_eq!(report.observed_generation, Some(5));
    }

    #[tokio::test(start_paused = true)]
    async fn found_work_without_feedback_awaits_it() {
        let fake = FakeWork::with(ours());
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        assert_eq!(
            report.condition("Available").unwrap().reason,
            "AwaitingFeedback"
        );
        assert_eq!(fake.calls(), ["get"]);
    }

    #[tokio::test(start_paused = true)]
    async fn someone_elses_work_is_a_conflict_and_left_alone() {
        let mut theirs = ours();
        theirs
            .labels
            .insert("hyperfleet.io/adapter".into(), "nodepool".into());
        let fake = FakeWork::with(theirs);
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        assert_eq!(
            report.condition("Applied").unwrap().reason,
            "OwnershipConflict"
        );
        assert!(
            report
                .condition("Applied")
                .unwrap()
                .message
                .contains("nodepool")
        );
        assert_eq!(fake.calls(), ["get"]);
    }

    #[tokio::test(start_paused = true)]
    async fn invalid_spec_sends_nothing_and_names_the_fields() {
        let fake = FakeWork::default();
        let mut input = cluster();
        input
            .spec
            .insert("machine_network_cidr".into(), json!("10.0.0.0/99"));
        input.spec.remove("base_domain");
        let report = run(&args(&[]), &fake, input, never()).await.unwrap();
        let applied = report.condition("Applied").unwrap();
        assert_eq!(applied.reason, "InvalidClusterSpec");
        assert!(
            applied.message.contains("machine_network_cidr"),
            "{}",
            applied.message
        );
        assert!(
            applied.message.contains("base_domain"),
            "{}",
            applied.message
        );
        assert!(fake.calls().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn create_race_reads_the_work_again() {
        let fake = FakeWork::default().fail_creates([WorkError::AlreadyExists {
            message: "exists".into(),
        }]);
        let racing = RacingWork { inner: fake };
        let report = run(&args(&[]), &racing, cluster(), never()).await.unwrap();
        assert_eq!(racing.inner.calls(), ["get", "create", "get"]);
        assert_eq!(
            report.condition("Applied").unwrap().reason,
            "ManifestWorkExists"
        );
        assert_eq!(
            report.condition("Available").unwrap().reason,
            "AwaitingFeedback"
        );
    }

    /// Stores our work when `create` fails, as if another writer had created it first.
    struct RacingWork {
        inner: FakeWork,
    }

    impl WorkClient for RacingWork {
        async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
            self.inner.get(name).await
        }
        async fn create(&self, work: &Value) -> Result<(), WorkError> {
            let result = self.inner.create(work).await;
            *self.inner.stored.lock().unwrap() = Some(ours());
            result
        }
        async fn update(&self, work: &Value, current: &ExistingWork) -> Result<(), WorkError> {
            self.inner.update(work, current).await
        }
        async fn delete(&self, name: &str) -> Result<(), WorkError> {
            self.inner.delete(name).await
        }
    }

    #[tokio::test(start_paused = true)]
    async fn transient_failures_back_off_exponentially_then_succeed() {
        let fake = FakeWork::default().fail_gets([unavailable(), unavailable(), unavailable()]);
        let start = Instant::now();
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        let waited = start.elapsed();
        assert_eq!(
            report.condition("Applied").unwrap().reason,
            "ManifestWorkCreated"
        );
        assert_eq!(fake.calls(), ["get", "get", "get", "get", "create"]);
        // 1 s, 2 s, 4 s, each jittered into [d/2, d].
        assert!(waited >= Duration::from_millis(3500), "{waited:?}");
        assert!(waited <= Duration::from_secs(7), "{waited:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn transient_failures_past_the_budget_report_unavailable_within_it() {
        let fake = FakeWork {
            get_always: Some(unavailable()),
            ..Default::default()
        };
        let start = Instant::now();
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        let waited = start.elapsed();
        assert_eq!(
            reasons(&report),
            [
                ("Applied", False, "MaestroUnavailable"),
                ("Available", Unknown, "MaestroUnavailable"),
                ("Health", False, "MaestroUnavailable"),
            ]
        );
        assert!(
            report
                .condition("Applied")
                .unwrap()
                .message
                .contains("connection refused")
        );
        assert!(waited < Duration::from_secs(120), "{waited:?}");
        // Full delays 1, 2, 4, 8, 16, 32 reach 63 s and the next (60) would pass 120: 7 attempts.
        // Halved delays 0.5 … 16, 30, 30 reach 91.5 s, the next (30) passes: 9 attempts.
        let attempts = fake.calls().len();
        assert!((7..=9).contains(&attempts), "{attempts} attempts");
        assert!(!fake.calls().contains(&"create"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_hanging_backend_is_cut_at_the_budget() {
        let fake = FakeWork {
            hang: true,
            ..Default::default()
        };
        let start = Instant::now();
        let report = run(&args(&["--retry-budget", "3"]), &fake, cluster(), never())
            .await
            .unwrap();
        assert_eq!(
            report.condition("Applied").unwrap().reason,
            "MaestroUnavailable"
        );
        assert_eq!(start.elapsed(), Duration::from_secs(3));
    }

    #[tokio::test(start_paused = true)]
    async fn auth_failures_are_not_retried() {
        for error in [
            WorkError::Unauthenticated {
                message: "bad token".into(),
            },
            WorkError::Forbidden {
                message: "no".into(),
            },
        ] {
            let fake = FakeWork::default().fail_gets([error]);
            let start = Instant::now();
            let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
            assert_eq!(
                report.condition("Applied").unwrap().reason,
                "MaestroAuthFailed"
            );
            assert_eq!(fake.calls(), ["get"]);
            assert_eq!(start.elapsed(), Duration::ZERO);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn unknown_consumer_on_create() {
        let fake = FakeWork::default().fail_creates([WorkError::ConsumerNotFound {
            message: "maestro-7: consumer mgmt-1 not found".into(),
        }]);
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        assert_eq!(
            report.condition("Applied").unwrap().reason,
            "ConsumerNotFound"
        );
        assert_eq!(fake.calls(), ["get", "create"]);
    }

    #[tokio::test(start_paused = true)]
    async fn malformed_feedback_is_invalid_feedback() {
        let fake = FakeWork::default().fail_gets([WorkError::MalformedFeedback {
            manifest: "hypershift.openshift.io/hostedclusters clusters/prod-eu-1".into(),
            feedback: "status".into(),
            message: "expected value at line 1 column 1".into(),
        }]);
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        assert_eq!(
            reasons(&report),
            [
                ("Applied", True, "ManifestWorkExists"),
                ("Available", Unknown, "InvalidFeedback"),
                ("Health", Unknown, "InvalidFeedback"),
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn other_backend_errors_are_work_failures() {
        let fake = FakeWork::default().fail_creates([WorkError::Invalid {
            message: "manifests too large".into(),
        }]);
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        assert_eq!(
            report.condition("Applied").unwrap().reason,
            "ManifestWorkFailed"
        );
        let fake = FakeWork::default().fail_gets([WorkError::Config {
            message: "cannot read token file /t: No such file".into(),
        }]);
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        assert_eq!(
            report.condition("Applied").unwrap().reason,
            "AdapterMisconfigured"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_during_backoff_stops_retrying() {
        let fake = FakeWork {
            get_always: Some(unavailable()),
            ..Default::default()
        };
        let start = Instant::now();
        let shutdown = tokio::time::sleep(Duration::from_millis(1500));
        let report = run(&args(&[]), &fake, cluster(), shutdown).await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_millis(1500));
        let applied = report.condition("Applied").unwrap();
        assert_eq!(applied.reason, "MaestroUnavailable");
        assert!(applied.message.contains("stopped"), "{}", applied.message);
    }

    // ---- updates -------------------------------------------------------------------------

    /// The work a pulse of `generation` built from the fixture spec edited by `edit`, as the
    /// backend stores it (version 1), with a ready HostedCluster status.
    fn stored(
        generation: i64,
        edit: impl FnOnce(&mut serde_json::Map<String, Value>),
    ) -> ExistingWork {
        let spec = crate::hyperfleet::cluster::fixture::spec_with(edit);
        let work = super::super::manifest_work(&spec, "mgmt-1", Some(generation));
        let map = |key: &str| -> BTreeMap<String, String> {
            serde_json::from_value(work["metadata"][key].clone()).unwrap()
        };
        ExistingWork {
            labels: map("labels"),
            annotations: map("annotations"),
            workload: serde_json::from_value(work["spec"]["workload"]["manifests"].clone())
                .unwrap(),
            version: Some(1),
            ..with_status(json!({"conditions": [
                {"type": "Available", "status": "True", "reason": "AsExpected", "message": ""}
            ], "version": {"history": [{"state": "Completed", "version": "4.17.0"}]}}))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_newer_generation_updates_the_work_once() {
        let fake = FakeWork::with(stored(2, |s| {
            s.insert("openshift_version".into(), json!("4.16.9"));
        }));
        // The fixture cluster is generation 3 with openshift_version 4.17.0.
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        assert_eq!(fake.calls(), ["get", "update"]);
        assert_eq!(
            reasons(&report),
            [
                ("Applied", True, "ManifestWorkUpdated"),
                ("Available", False, "Updating"),
                ("Health", True, "NoIssues"),
            ]
        );
        // The report describes generation 3, not reflected yet (the agent has not applied it):
        // False at the new generation keeps HyperFleet's LastKnownReconciled (generations/b).
        assert_eq!(report.observed_generation, Some(3));
        let available = &report.condition("Available").unwrap().message;
        assert!(
            available.contains("generation 3")
                && available.contains("HostedCluster of generation 2")
                && available.contains("Available=True (ControlPlaneReady)"),
            "{available}"
        );
        let sent = fake.updated.lock().unwrap()[0].clone();
        assert_eq!(
            sent["metadata"]["annotations"]["hyperfleet.io/generation"],
            "3"
        );
        assert_eq!(
            sent["spec"]["workload"]["manifests"][1]["spec"]["release"]["image"],
            "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"
        );
        // Only what the adapter builds: no status, no defaulted fields.
        assert!(
            sent["spec"]["workload"]["manifests"][1]
                .get("status")
                .is_none()
        );
        assert!(
            sent.pointer("/spec/workload/manifests/1/spec/infraID")
                .is_none()
        );
        // The next pulse of the same generation sends nothing.
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        assert_eq!(fake.calls(), ["get", "update", "get"]);
        assert_eq!(
            report.condition("Applied").unwrap().reason,
            "ManifestWorkApplied"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_immutable_change_sends_nothing_and_names_old_and_new() {
        let fake = FakeWork::with(stored(2, |s| {
            s.insert("gcp_region".into(), json!("us-east1"));
        }));
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        assert_eq!(fake.calls(), ["get"]);
        assert_eq!(
            reasons(&report),
            [
                ("Applied", False, "ImmutableFieldChanged"),
                ("Available", False, "ImmutableFieldChanged"),
                ("Health", False, "ImmutableFieldChanged"),
            ]
        );
        // The refusal is reported at the refused generation (3), so that HyperFleet stores it
        // (an Unknown would be discarded by rule 13); the running control plane is named.
        assert_eq!(report.observed_generation, Some(3));
        assert!(
            report.condition("Available").unwrap().message.contains(
                "HostedCluster of generation 2 on the management cluster: Available=True"
            )
        );
        let applied = &report.condition("Applied").unwrap().message;
        assert!(
            applied.contains(r#"gcp_region (HostedCluster spec.platform.gcp.region): "us-east1" → "europe-west2""#),
            "{applied}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_older_generation_never_rolls_back() {
        let fake = FakeWork::with(stored(5, |_| {}));
        let report = run(&args(&["--generation", "4"]), &fake, cluster(), never())
            .await
            .unwrap();
        assert_eq!(fake.calls(), ["get"]);
        let applied = report.condition("Applied").unwrap();
        assert_eq!(applied.reason, "StaleGeneration");
        assert!(
            applied
                .message
                .contains("generation 4, older than generation 5"),
            "{}",
            applied.message
        );
        assert_eq!(report.observed_generation, Some(5));
    }

    /// Another writer bumps the stored version (and, with `generation`, its annotation) just
    /// before the first update lands.
    struct RacingUpdate {
        inner: FakeWork,
        generation: Option<&'static str>,
        raced: Mutex<bool>,
    }

    impl WorkClient for RacingUpdate {
        async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
            self.inner.get(name).await
        }
        async fn create(&self, work: &Value) -> Result<(), WorkError> {
            self.inner.create(work).await
        }
        async fn update(&self, work: &Value, current: &ExistingWork) -> Result<(), WorkError> {
            if !std::mem::replace(&mut *self.raced.lock().unwrap(), true) {
                let mut stored = self.inner.stored.lock().unwrap();
                let stored = stored.as_mut().unwrap();
                stored.version = Some(stored.version.unwrap() + 1);
                if let Some(g) = self.generation {
                    stored
                        .annotations
                        .insert("hyperfleet.io/generation".into(), g.into());
                }
            }
            self.inner.update(work, current).await
        }
        async fn delete(&self, name: &str) -> Result<(), WorkError> {
            self.inner.delete(name).await
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_stale_version_is_read_again_and_retried_once() {
        let racing = RacingUpdate {
            inner: FakeWork::with(stored(2, |_| {})),
            generation: None,
            raced: Mutex::new(false),
        };
        let report = run(&args(&[]), &racing, cluster(), never()).await.unwrap();
        assert_eq!(racing.inner.calls(), ["get", "update", "get", "update"]);
        assert_eq!(
            report.condition("Applied").unwrap().reason,
            "ManifestWorkUpdated"
        );
        assert_eq!(
            racing
                .inner
                .stored
                .lock()
                .unwrap()
                .as_ref()
                .unwrap()
                .version,
            Some(3)
        );
        // When the other writer already brought the work to this generation: nothing more.
        let racing = RacingUpdate {
            inner: FakeWork::with(stored(2, |_| {})),
            generation: Some("3"),
            raced: Mutex::new(false),
        };
        let report = run(&args(&[]), &racing, cluster(), never()).await.unwrap();
        assert_eq!(racing.inner.calls(), ["get", "update", "get"]);
        assert_eq!(
            report.condition("Applied").unwrap().reason,
            "ManifestWorkApplied"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_work_being_deleted_is_never_updated() {
        let fake = FakeWork::with(stored(2, |_| {}));
        // Under deletion: the update is refused and the re-read shows why.
        fake.stored.lock().unwrap().as_mut().unwrap().deleting =
            Some("2026-11-26T03:44:21Z".into());
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        // A work being deleted is never updated; the report describes the pulse's generation,
        // which the management cluster will never reflect.
        assert_eq!(fake.calls(), ["get"]);
        assert_eq!(report.observed_generation, Some(3));
        assert_eq!(report.condition("Available").unwrap().reason, "Deleting");
    }

    // ---- deletion ------------------------------------------------------------------------

    const DELETED_AT: &str = "2026-11-26T10:00:00Z";

    fn deleting_cluster() -> ClusterInput {
        let mut c = cluster();
        c.deleted_time = Some(DELETED_AT.into());
        c.generation = Some(4);
        c
    }

    fn inputs(pools: Result<&[&str], &str>, minutes_after: i64) -> PulseInputs {
        let nodepools = match pools {
            Ok(names) => Ok(NodePools::from_list(&json!({
                "items": names.iter().enumerate().map(|(i, n)| json!({"id": format!("019a6f20-0000-7000-8000-00000000000{i}"), "name": n})).collect::<Vec<_>>(),
                "total": names.len()
            })).unwrap()),
            Err(why) => Err(why.to_owned()),
        };
        let now = DELETED_AT.parse::<jiff::Timestamp>().unwrap()
            + jiff::SignedDuration::from_mins(minutes_after);
        PulseInputs { nodepools, now }
    }

    #[tokio::test(start_paused = true)]
    async fn deletion_requests_then_waits_then_confirms() {
        let fake = FakeWork::with(stored(3, |_| {}));
        let pulse = |minutes| {
            let fake = &fake;
            async move {
                run_with(
                    &args(&[]),
                    fake,
                    deleting_cluster(),
                    &inputs(Ok(&[]), minutes),
                    never(),
                )
                .await
                .unwrap()
            }
        };
        let report = pulse(1).await;
        assert_eq!(fake.calls(), ["get", "delete"]);
        assert_eq!(
            reasons(&report),
            [
                ("Applied", True, "DeletionRequested"),
                ("Available", False, "Deleting"),
                ("Health", True, "NoIssues"),
                ("Finalized", False, "DeletionRequested"),
            ]
        );
        // The deletion generation, not the work's.
        assert_eq!(report.observed_generation, Some(4));
        // Deleting twice is safe: the next pulse sees the deletion and sends nothing.
        {
            let mut stored = fake.stored.lock().unwrap();
            let manifest = &mut stored.as_mut().unwrap().manifests[0];
            manifest
                .values
                .insert("deletionTimestamp".into(), json!("2026-11-26T10:00:07Z"));
            manifest.values.insert(
                "finalizers".into(),
                json!(["hypershift.openshift.io/finalizer"]),
            );
        }
        let report = pulse(5).await;
        assert_eq!(fake.calls(), ["get", "delete", "get"]);
        let finalized = report.condition("Finalized").unwrap();
        assert_eq!(finalized.reason, "FinalizersRunning");
        assert!(
            finalized
                .message
                .contains("hypershift.openshift.io/finalizer")
        );
        // 31 minutes after deleted_time: stuck, with what holds the finalizer.
        let report = pulse(31).await;
        let health = report.condition("Health").unwrap();
        assert_eq!(
            (health.status, health.reason.as_str()),
            (False, "DeletionStuck")
        );
        assert!(
            health.message.contains("CAPI Cluster"),
            "{}",
            health.message
        );
        // Gone: Finalized=True; later pulses stay there and never create.
        *fake.stored.lock().unwrap() = None;
        for _ in 0..2 {
            let report = pulse(40).await;
            assert_eq!(
                reasons(&report),
                [
                    ("Applied", False, "CleanupConfirmed"),
                    ("Available", False, "Deleted"),
                    ("Health", True, "NoIssues"),
                    ("Finalized", True, "CleanupConfirmed"),
                ]
            );
        }
        assert_eq!(fake.calls(), ["get", "delete", "get", "get", "get", "get"]);
        assert!(fake.created.lock().unwrap().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn an_endless_nodepool_list_file_is_node_pools_unknown_naming_the_limit() {
        let why = load_nodepools(&args(&["--nodepools-file", "/dev/zero"]), None)
            .await
            .map(|_| ())
            .unwrap_err();
        assert!(
            why.contains("the NodePool list file /dev/zero is larger than 1 MiB")
                && why.contains("NODEPOOLS_FILE must name a file of at most 1 MiB"),
            "{why}"
        );
        let fake = FakeWork::with(stored(3, |_| {}));
        let report = run_with(
            &args(&[]),
            &fake,
            deleting_cluster(),
            &inputs(Err(&why), 1),
            never(),
        )
        .await
        .unwrap();
        assert_eq!(
            report.condition("Finalized").unwrap().reason,
            "NodePoolsUnknown"
        );
        let applied = report.condition("Applied").unwrap();
        assert_eq!(applied.reason, "NodePoolsUnknown");
        assert!(
            applied
                .message
                .contains("the NodePool list file /dev/zero is larger than 1 MiB"),
            "{}",
            applied.message
        );
        assert_eq!(fake.calls(), ["get"], "nothing deleted");
    }

    #[tokio::test(start_paused = true)]
    async fn node_pools_or_an_unknown_list_hold_the_deletion() {
        let fake = FakeWork::with(stored(3, |_| {}));
        let report = run_with(
            &args(&[]),
            &fake,
            deleting_cluster(),
            &inputs(Ok(&["workers-a", "workers-b"]), 1),
            never(),
        )
        .await
        .unwrap();
        assert_eq!(fake.calls(), ["get"]);
        assert_eq!(
            reasons(&report),
            [
                ("Applied", False, "NodePoolsExist"),
                ("Available", False, "NodePoolsExist"),
                ("Health", True, "NoIssues"),
                ("Finalized", False, "NodePoolsExist"),
            ]
        );
        // Never True about the deletion generation; the message says the control plane serves.
        assert_eq!(report.observed_generation, Some(4));
        assert!(
            report
                .condition("Available")
                .unwrap()
                .message
                .contains("Available=True (ControlPlaneReady)")
        );
        assert!(
            report
                .condition("Applied")
                .unwrap()
                .message
                .contains("workers-a")
        );
        let report = run_with(
            &args(&[]),
            &fake,
            deleting_cluster(),
            &inputs(Err("GET …/nodepools answered HTTP 503"), 1),
            never(),
        )
        .await
        .unwrap();
        assert_eq!(fake.calls(), ["get", "get"]);
        assert_eq!(
            report.condition("Finalized").unwrap().reason,
            "NodePoolsUnknown"
        );
        assert!(
            fake.stored
                .lock()
                .unwrap()
                .as_ref()
                .unwrap()
                .deleting
                .is_none()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_deletion_never_creates_nor_deletes_someone_elses_work() {
        // No work: nothing to delete, confirmed at once.
        let fake = FakeWork::default();
        let report = run_with(
            &args(&[]),
            &fake,
            deleting_cluster(),
            &inputs(Ok(&[]), 1),
            never(),
        )
        .await
        .unwrap();
        assert_eq!(fake.calls(), ["get"]);
        assert_eq!(report.condition("Finalized").unwrap().status, True);
        // Someone else's work with our name is left alone.
        let mut theirs = stored(3, |_| {});
        theirs
            .labels
            .insert("hyperfleet.io/adapter".into(), "nodepool".into());
        let fake = FakeWork::with(theirs);
        let report = run_with(
            &args(&[]),
            &fake,
            deleting_cluster(),
            &inputs(Ok(&[]), 1),
            never(),
        )
        .await
        .unwrap();
        assert_eq!(fake.calls(), ["get"]);
        assert_eq!(
            report.condition("Applied").unwrap().reason,
            "OwnershipConflict"
        );
        assert_eq!(report.condition("Finalized").unwrap().status, False);
        job_report::validate(&report).unwrap();
    }

    /// The work disappears between the read and the delete (hub 404; a racing pulse).
    struct VanishingWork {
        inner: FakeWork,
    }

    impl WorkClient for VanishingWork {
        async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
            self.inner.get(name).await
        }
        async fn create(&self, work: &Value) -> Result<(), WorkError> {
            self.inner.create(work).await
        }
        async fn update(&self, work: &Value, current: &ExistingWork) -> Result<(), WorkError> {
            self.inner.update(work, current).await
        }
        async fn delete(&self, name: &str) -> Result<(), WorkError> {
            *self.inner.stored.lock().unwrap() = None;
            self.inner.delete(name).await
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_work_gone_before_the_delete_is_confirmed() {
        let vanishing = VanishingWork {
            inner: FakeWork::with(stored(3, |_| {})),
        };
        let report = run_with(
            &args(&[]),
            &vanishing,
            deleting_cluster(),
            &inputs(Ok(&[]), 1),
            never(),
        )
        .await
        .unwrap();
        assert_eq!(vanishing.inner.calls(), ["get", "delete"]);
        assert_eq!(
            report.condition("Finalized").unwrap().reason,
            "CleanupConfirmed"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_create_racing_a_deletion_does_not_resurrect_the_work() {
        // A pulse that does not know about the deletion finds the work being deleted: it
        // neither creates nor updates it.
        let mut deleting = stored(3, |_| {});
        deleting.deleting = Some("2026-11-26T10:00:01Z".into());
        let fake = FakeWork::with(deleting);
        run(&args(&["--generation", "4"]), &fake, cluster(), never())
            .await
            .unwrap();
        assert_eq!(fake.calls(), ["get"]);
        // Its create losing to the deletion (Maestro: "already exists") reads the work again.
        let fake = FakeWork::default().fail_creates([WorkError::AlreadyExists {
            message: "maestro-6: This Resource already exists".into(),
        }]);
        let racing = RacingWork { inner: fake };
        let report = run(&args(&[]), &racing, cluster(), never()).await.unwrap();
        assert_eq!(racing.inner.calls(), ["get", "create", "get"]);
        assert_eq!(
            report.condition("Applied").unwrap().reason,
            "ManifestWorkExists"
        );
    }
}
