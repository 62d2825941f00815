//! The `controlplane` decision and its wiring: validate the spec, get the work, create it when
//! missing, map what was seen to a report; retry transient backend failures with jittered
//! exponential backoff (1 s → 60 s) within `--retry-budget`.
//!
//! [`run`] takes the work client and the shutdown signal as parameters and returns the report;
//! [`execute`] is the edge: it reads the cluster, builds the backend client from the flags,
//! listens for SIGTERM, runs and writes the report.

use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;

use job_report::Report;
use tokio::time::Instant;

use super::args::{Args, Backend, ConfigError};
use super::{
    FeedbackError, WorkRef, report_adapter_misconfigured, report_cluster_unavailable,
    report_consumer_not_found, report_created, report_invalid_feedback, report_invalid_spec,
    report_maestro_auth_failed, report_maestro_unavailable, report_observed,
    report_ownership_conflict, report_work_failed,
};
use crate::cli::{EXIT_CONFIG, EXIT_NO_REPORT};
use crate::cluster::{ClusterInput, ClusterSpec, SpecViolation};
use crate::hostedcluster;
use crate::hub::HubWorkClient;
use crate::maestro::{MaestroConfig, MaestroWorkClient, TokenSource};
use crate::manifestwork::{self, Ownership};
use crate::work::{ExistingWork, WorkClient, WorkError};

/// First backoff delay after a transient failure.
pub const INITIAL_BACKOFF: Duration = Duration::from_secs(1);
/// Longest backoff delay.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// Why `execute` could not end with a written report.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad configuration (exit 2).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The report could not be written (exit 1).
    #[error("cannot write the report {path}: {source}")]
    Write {
        path: std::path::PathBuf,
        #[source]
        source: job_report::WriteError,
    },
}

/// What the backend said, once it answered.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per pulse, moved once
enum Seen {
    Created,
    Found(ExistingWork),
}

/// How the retry loop ended without an answer.
#[derive(Debug)]
enum Failure {
    /// A failure retrying cannot fix.
    Permanent(WorkError),
    /// Still transient when the budget ran out.
    GaveUp {
        error: WorkError,
        attempts: u32,
        elapsed: Duration,
    },
    /// Shutdown was requested first.
    Interrupted { last: Option<WorkError> },
}

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
    // Destructured so a new flag cannot be silently ignored here.
    let Args {
        cluster_id: cluster_id_flag,
        generation: generation_flag,
        cluster_spec: _,
        hyperfleet_api: _,
        hyperfleet_token_file: _,
        nodepools_file: _,
        deletion_stuck_after: _,
        results_path: _,
        backend,
        consumer,
        maestro_source_id: _,
        maestro_api_url,
        maestro_grpc_url,
        maestro_ca_file: _,
        maestro_client_cert: _,
        maestro_client_key: _,
        maestro_token_file: _,
        retry_budget,
        kubeconfig: _,
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
        deleted_time: _,
        mut spec,
    } = cluster;
    let cluster_id_flag = cluster_id_flag.as_ref().filter(|id| !id.is_empty());
    let object_id = object_id.filter(|id| !id.is_empty());
    let cluster_id = match (cluster_id_flag, object_id) {
        (Some(flag), Some(object)) if *flag != object => {
            return Err(ConfigError::ClusterIdMismatch {
                flag: flag.clone(),
                object,
            });
        }
        (Some(flag), _) => flag.clone(),
        (None, Some(object)) => object,
        (None, None) => return Err(ConfigError::NoClusterId),
    };
    let generation = generation_flag.or(object_generation.filter(|g| *g >= 1));
    for (key, value) in [
        ("pull_secret_name", pull_secret_name),
        ("ssh_key_secret_name", ssh_key_secret_name),
        (
            "service_account_signing_key_secret_name",
            service_account_signing_key_secret_name,
        ),
    ] {
        if let Some(value) = value {
            spec.insert(key.to_owned(), value.clone().into());
        }
    }

    let spec = match ClusterSpec::validate(&cluster_id, name.as_deref(), &spec) {
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
    let work_name = manifestwork::work_name(&spec.cluster_id);
    let manifest = manifestwork::manifest_work(&spec, consumer, generation);
    let work_ref = WorkRef {
        consumer,
        name: &work_name,
    };

    let log = LogContext {
        cluster_id: &cluster_id,
        generation,
    };
    let outcome = with_retry(*retry_budget, shutdown, log, || {
        get_or_create(work, &work_name, &manifest)
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
        Ok(Seen::Found(existing)) => match manifestwork::ownership(&existing.labels, &cluster_id) {
            Ownership::Ours => {
                let hc = hostedcluster::hosted_cluster_ref(&spec);
                // The management cluster holds the spec of the generation the work was built
                // from (the adapter never updates a work), not necessarily this pulse's.
                let held = manifestwork::work_generation(&existing.annotations);
                if held != generation {
                    tracing::info!(
                        cluster_id,
                        generation,
                        held_generation = held,
                        work = work_name,
                        "the work carries another generation than this pulse; reporting the work's"
                    );
                }
                let report = report_observed(work_ref, &existing, hc, held);
                let reason = |t: &str| report.condition(t).map_or("", |c| c.reason.as_str());
                tracing::info!(
                    cluster_id,
                    generation,
                    work = work_name,
                    consumer,
                    decision = "ManifestWorkFound",
                    applied = reason("Applied"),
                    available = reason("Available"),
                    health = reason("Health"),
                    deleting = existing.deleting.is_some(),
                    "work found"
                );
                report
            }
            found @ Ownership::NotOurs { .. } => {
                tracing::warn!(cluster_id, generation, work = work_name, consumer, decision = "OwnershipConflict", found = ?found, "work belongs to someone else; left untouched");
                report_ownership_conflict(work_ref, &cluster_id, &found, generation)
            }
        },
        Err(Failure::GaveUp {
            error,
            attempts,
            elapsed,
        }) => {
            tracing::warn!(cluster_id, generation, consumer, decision = "MaestroUnavailable", attempts, elapsed_ms = elapsed.as_millis() as u64, error = %error, "backend unavailable; retry budget spent");
            let mut detail = format!(
                "{error} ({attempts} attempts over {:.1} s, retry budget {} s)",
                elapsed.as_secs_f64(),
                retry_budget.as_secs()
            );
            if *backend == Backend::Maestro {
                let url = |u: &Option<String>| u.clone().unwrap_or_default();
                detail.push_str(&format!(
                    "; MAESTRO_API_URL {}, MAESTRO_GRPC_URL {} (a server with TLS needs https://)",
                    url(maestro_api_url),
                    url(maestro_grpc_url)
                ));
            }
            report_maestro_unavailable(consumer, &detail, generation)
        }
        Err(Failure::Interrupted { last }) => {
            tracing::warn!(
                cluster_id,
                generation,
                consumer,
                decision = "MaestroUnavailable",
                "stopped (SIGTERM) before the backend answered"
            );
            let detail = match last {
                Some(e) => format!(
                    "the adapter was stopped before the work backend answered; last error: {e}"
                ),
                None => "the adapter was stopped before the work backend answered".to_owned(),
            };
            report_maestro_unavailable(consumer, &detail, generation)
        }
        Err(Failure::Permanent(error)) => {
            report_for_error(&cluster_id, generation, work_ref, &error)
        }
    };
    Ok(report)
}

/// Reads the work; creates it when missing. A create that races another writer (AlreadyExists)
/// reads the work again.
async fn get_or_create(
    work: &impl WorkClient,
    name: &str,
    manifest: &serde_json::Value,
) -> Result<Seen, WorkError> {
    if let Some(existing) = work.get(name).await? {
        return Ok(Seen::Found(existing));
    }
    match work.create(manifest).await {
        Ok(()) => Ok(Seen::Created),
        Err(WorkError::AlreadyExists { message }) => match work.get(name).await? {
            Some(existing) => Ok(Seen::Found(existing)),
            None => Err(WorkError::Unavailable {
                message: format!(
                    "the work was reported as existing but cannot be read yet: {message}"
                ),
            }),
        },
        Err(e) => Err(e),
    }
}

/// Runs `attempt` until it succeeds, fails permanently, the budget is spent or `shutdown`
/// resolves. Each attempt is cut at the budget's end; between attempts the delay doubles from
/// [`INITIAL_BACKOFF`] up to [`MAX_BACKOFF`], each drawn from `[d/2, d]` (jitter).
async fn with_retry<T, Fut>(
    budget: Duration,
    shutdown: impl Future<Output = ()>,
    log: LogContext<'_>,
    mut attempt: impl FnMut() -> Fut,
) -> Result<T, Failure>
where
    Fut: Future<Output = Result<T, WorkError>>,
{
    let start = Instant::now();
    let deadline = start + budget;
    let mut backoff = INITIAL_BACKOFF;
    let mut attempts = 0u32;
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        attempts += 1;
        let result = tokio::select! {
            biased;
            () = &mut shutdown => return Err(Failure::Interrupted { last: None }),
            r = tokio::time::timeout_at(deadline, attempt()) => r.unwrap_or_else(|_| {
                Err(WorkError::Unavailable {
                    message: format!("no answer within the retry budget of {} s", budget.as_secs()),
                })
            }),
        };
        let error = match result {
            Ok(value) => return Ok(value),
            Err(e) if e.is_transient() => e,
            Err(e) => return Err(Failure::Permanent(e)),
        };
        let delay = jitter(backoff);
        let now = Instant::now();
        if now + delay >= deadline {
            return Err(Failure::GaveUp {
                error,
                attempts,
                elapsed: now - start,
            });
        }
        tracing::info!(
            cluster_id = log.cluster_id,
            generation = log.generation,
            attempt = attempts,
            delay_ms = delay.as_millis() as u64,
            error = %error,
            "transient backend failure; retrying"
        );
        tokio::select! {
            biased;
            () = &mut shutdown => return Err(Failure::Interrupted { last: Some(error) }),
            () = tokio::time::sleep(delay) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// The fields every log line of a decision carries.
#[derive(Debug, Clone, Copy)]
struct LogContext<'a> {
    cluster_id: &'a str,
    generation: Option<i64>,
}

/// A delay drawn uniformly from `[d/2, d]`.
fn jitter(d: Duration) -> Duration {
    let half = d / 2;
    let spread = u64::try_from(half.as_millis()).unwrap_or(u64::MAX);
    half + Duration::from_millis(fastrand::u64(0..=spread))
}

fn report_for_error(
    cluster_id: &str,
    generation: Option<i64>,
    work: WorkRef<'_>,
    error: &WorkError,
) -> Report {
    let consumer = work.consumer;
    let (decision, report) = match error {
        WorkError::Unauthenticated { .. } | WorkError::Forbidden { .. } => (
            "MaestroAuthFailed",
            report_maestro_auth_failed(&error.to_string(), generation),
        ),
        WorkError::ConsumerNotFound { .. } => (
            "ConsumerNotFound",
            report_consumer_not_found(consumer, generation),
        ),
        WorkError::MalformedFeedback {
            manifest,
            feedback,
            message,
        } => (
            "InvalidFeedback",
            report_invalid_feedback(
                work,
                &FeedbackError::Malformed {
                    manifest: manifest.clone(),
                    feedback: feedback.clone(),
                    message: message.clone(),
                },
                generation,
            ),
        ),
        WorkError::Config { .. } => (
            "AdapterMisconfigured",
            report_adapter_misconfigured(&error.to_string(), generation),
        ),
        WorkError::AlreadyExists { .. }
        | WorkError::Conflict { .. }
        | WorkError::NotFound { .. }
        | WorkError::Invalid { .. }
        | WorkError::Unavailable { .. }
        | WorkError::Protocol { .. }
        | WorkError::Internal { .. } => (
            "ManifestWorkFailed",
            report_work_failed(consumer, &error.to_string(), generation),
        ),
    };
    tracing::warn!(cluster_id, generation, consumer, work = work.name, decision, error = %error, "work backend failed");
    report
}

/// The whole subcommand: check the flags, read the cluster, build the backend client, run, write
/// the report. Exit 0 once a report is written, 1 when none could be, 2 on bad configuration.
pub async fn execute(args: Args) -> ExitCode {
    match execute_inner(&args, shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(RunError::Config(e)) => {
            tracing::error!(cluster_id = args.cluster_id, generation = args.generation, error = %e, "bad configuration; no report written");
            ExitCode::from(EXIT_CONFIG)
        }
        Err(e @ RunError::Write { .. }) => {
            tracing::error!(cluster_id = args.cluster_id, generation = args.generation, error = %e, "no report written");
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
        Ok(cluster) => match args.backend {
            Backend::Maestro => match MaestroWorkClient::new(maestro_config(args)) {
                Ok(client) => run(args, &client, cluster, shutdown).await?,
                Err(e) => misconfigured(args, &e),
            },
            Backend::Hub => {
                let timeout =
                    crate::hub::DEFAULT_TIMEOUT.min(args.retry_budget.max(Duration::from_secs(1)));
                match HubWorkClient::connect(args.kubeconfig.as_deref(), &args.consumer, timeout)
                    .await
                {
                    Ok(client) => run(args, &client, cluster, shutdown).await?,
                    Err(e) => misconfigured(args, &e),
                }
            }
        },
    };
    job_report::write_atomic(&results_path, &report).map_err(|source| RunError::Write {
        path: results_path.clone(),
        source,
    })?;
    let reasons: Vec<&str> = report
        .conditions
        .iter()
        .map(|c| c.reason.as_str())
        .collect();
    tracing::info!(cluster_id = args.cluster_id, generation = report.observed_generation, path = %results_path.display(), reasons = ?reasons, "report written");
    Ok(())
}

fn misconfigured(args: &Args, error: &WorkError) -> Report {
    tracing::error!(cluster_id = args.cluster_id, generation = args.generation, decision = "AdapterMisconfigured", error = %error, "cannot build the work backend client");
    report_adapter_misconfigured(&error.to_string(), args.generation)
}

fn maestro_config(args: &Args) -> MaestroConfig {
    let mut config = MaestroConfig::new(
        args.maestro_grpc_url.clone().unwrap_or_default(),
        args.maestro_api_url.clone().unwrap_or_default(),
        args.maestro_source_id.clone(),
        args.consumer.clone(),
    );
    config.ca_file.clone_from(&args.maestro_ca_file);
    config
        .client_cert_file
        .clone_from(&args.maestro_client_cert);
    config.client_key_file.clone_from(&args.maestro_client_key);
    if let Some(path) = &args.maestro_token_file {
        config.token = TokenSource::File(path.clone());
    }
    // One call never outlives the retry budget by much.
    config.timeout = config
        .timeout
        .min(args.retry_budget.max(Duration::from_secs(1)));
    config
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
        let text = tokio::fs::read_to_string(path).await.map_err(|e| {
            Input::Unavailable(format!(
                "cannot read the cluster spec file {}: {e}",
                path.display()
            ))
        })?;
        return ClusterInput::from_json(&text)
            .map_err(|e| Input::Invalid(format!("{}: {e}", path.display())));
    }
    let (Some(url), Some(cluster_id)) = (&args.hyperfleet_api, &args.cluster_id) else {
        return Err(Input::Unavailable(
            "neither --cluster-spec nor --hyperfleet-api with --cluster-id is set".to_owned(),
        ));
    };
    crate::hyperfleet::fetch_cluster(
        url,
        cluster_id,
        args.hyperfleet_token_file.as_deref(),
        crate::hyperfleet::TIMEOUT,
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

/// Resolves on SIGTERM or SIGINT; never when signals cannot be installed. The handlers are
/// installed when this is called, not when the future is first polled, so a SIGTERM that
/// arrives while the cluster is still being read is not lost (nor fatal).
fn shutdown_signal() -> impl Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    async move {
        match (term, int) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => std::future::pending().await,
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
    use crate::cluster::fixture::VALID;
    use crate::work::{ManifestStatus, ResourceIdentity, WorkCondition};

    const ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";

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
        // This pulse is for generation 5; the management cluster holds generation 2's spec.
        let report = run(&args(&["--generation", "5"]), &fake, cluster(), never())
            .await
            .unwrap();
        assert_eq!(report.observed_generation, Some(2));
        // Without the annotation the held generation is unknown: none is claimed.
        work.annotations.clear();
        let fake = FakeWork::with(work);
        let report = run(&args(&["--generation", "5"]), &fake, cluster(), never())
            .await
            .unwrap();
        assert_eq!(report.observed_generation, None);
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

    #[test]
    fn jitter_stays_within_half_to_full() {
        for _ in 0..1000 {
            let d = jitter(Duration::from_secs(8));
            assert!(
                d >= Duration::from_secs(4) && d <= Duration::from_secs(8),
                "{d:?}"
            );
        }
    }
}
