//! The subcommands, one per kind of pulse, and the pipeline the two that ship a work share.
//!
//! One pulse is **inputs → plan → act → report**: the edge of a subcommand reads the HyperFleet
//! resource into a [`step::Pulse`]; [`plan`] (pure) says the next [`step::Step`] from what was
//! seen — read, write, or done with an [`step::Outcome`]; [`act`] answers each step (the only
//! code that talks to the work backend, the inventory and the placement lease) until the plan is
//! done; [`report`] (pure) turns the outcome into the report; [`log`] writes the pulse's one
//! event. Placement is a stage of the plan. The objects are two implementations of
//! [`object::Object`]:
//!
//! - [`controlplane`]: a cluster's HostedCluster;
//! - [`nodepool`]: a NodePool's NodePool, after its cluster's control plane;
//! - [`nodes`]: node and cluster health checks through the hosted cluster's API (its own pure
//!   judge).
//!
//! No subcommand imports another; what they share lives here (the pipeline, and the process
//! edge: exit codes, the shutdown signal, the termination message, writing the report).

use std::ffi::OsString;
use std::future::Future;
use std::path::{Path, PathBuf};

use job_report::Report;

pub mod act;
pub mod log;
pub mod object;
pub mod plan;
pub mod report;
pub mod step;
pub mod table;

pub mod controlplane;
pub mod nodepool;
pub mod nodes;

/// Exit code for bad flags or configuration (clap's own code for usage errors).
pub const EXIT_CONFIG: u8 = 2;
/// Exit code when no report could be written.
pub const EXIT_NO_REPORT: u8 = 1;

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Json,
    Plain,
}

/// The report path: the flag (or `RESULTS_OUTPUT_PATH`), else `results_path_env` (the value of
/// `RESULTS_PATH`, the status-reporter's name), else [`job_report::DEFAULT_RESULTS_PATH`].
pub fn results_path(flag: Option<&Path>, results_path_env: Option<OsString>) -> PathBuf {
    flag.map(Path::to_path_buf)
        .or_else(|| {
            results_path_env
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
        })
        .unwrap_or_else(|| PathBuf::from(job_report::DEFAULT_RESULTS_PATH))
}

/// One pulse of `O` on `deps`: the plan run to its outcome, its report, its log event.
pub async fn run<O, W, I, L>(
    deps: &act::Deps<'_, W, I, L>,
    pulse: &step::Pulse<O::Spec>,
    shutdown: impl Future<Output = ()>,
) -> Report
where
    O: object::Object,
    W: crate::work::WorkClient,
    I: crate::placement::inventory::Inventory + Sync,
    L: crate::placement::lease::LeaseApi,
{
    let outcome = act::drive::<O, W, I, L>(deps, pulse, shutdown).await;
    let report = report::report::<O>(pulse, &outcome);
    log::pulse::<O>(pulse, &outcome, &report);
    report
}

/// One pulse of `O` on the management cluster of the static mode (`--consumer`).
pub async fn run_static<O: object::Object>(
    work: &impl crate::work::WorkClient,
    pulse: &step::Pulse<O::Spec>,
    retry_budget: std::time::Duration,
    shutdown: impl Future<Output = ()>,
) -> Report {
    use crate::placement::{inventory::FileInventory, lease::KubeLeases};
    let deps: act::Deps<'_, _, FileInventory, KubeLeases> = act::Deps {
        work,
        inventory: None,
        lock: None,
        retry_budget,
    };
    run::<O, _, _, _>(&deps, pulse, shutdown).await
}

/// The process edge a subcommand's flags give: the work backend, the HyperFleet API (the
/// inventory of `--management-clusters-from-api`), the placement lease of a placing object, and
/// what the log lines name.
#[derive(Debug, Clone, Copy)]
pub struct Edge<'a> {
    pub work: &'a crate::work::backend::WorkArgs,
    /// The HyperFleet API URL and its credentials.
    pub api: (Option<&'a str>, &'a crate::hyperfleet::api::Auth),
    /// The placement lease's namespace, holder (`POD_NAME`) and wait; `None`: the object places
    /// nothing (a NodePool follows its control plane).
    pub lease: Option<(&'a str, Option<&'a str>, std::time::Duration)>,
    pub ids: LogIds<'a>,
    pub generation: Option<i64>,
}

impl Edge<'_> {
    /// The pulse of `O` (`pulse` builds it for where its works live) on the backend the flags
    /// choose: in a placement mode (Maestro with an inventory) wherever placement finds or puts
    /// the work, else on the static management cluster. A backend client that cannot be built is
    /// reported `AdapterMisconfigured`.
    pub async fn run<O: object::Object, C>(
        &self,
        pulse: impl FnOnce(step::Where) -> Result<step::Pulse<O::Spec>, C>,
        shutdown: impl Future<Output = ()>,
    ) -> Result<Report, C> {
        use crate::work::backend::AnyWorkClient;
        let budget = self.work.retry_budget;
        let fixed = || step::Where::Static(self.work.static_consumer().to_owned());
        let (cluster_id, nodepool_id) = self.ids;
        Ok(match self.work.connect().await {
            Ok(AnyWorkClient::Maestro(maestro)) => match inventory(self.work, self.api) {
                Some(inventory) => {
                    let lock = match self.lease {
                        Some(lease) => Some(self.placement_lock(lease).await),
                        None => None,
                    };
                    let deps = act::Deps {
                        work: &maestro,
                        inventory: Some(&inventory),
                        lock: lock.as_ref(),
                        retry_budget: budget,
                    };
                    run::<O, _, _, _>(&deps, &pulse(step::Where::Placed)?, shutdown).await
                }
                None => run_static::<O>(&maestro, &pulse(fixed())?, budget, shutdown).await,
            },
            Ok(AnyWorkClient::Hub(hub)) => {
                run_static::<O>(&hub, &pulse(fixed())?, budget, shutdown).await
            }
            Err(e) => {
                let generation = self.generation;
                tracing::error!(cluster_id, nodepool_id, generation, decision = "AdapterMisconfigured", error = %e, "cannot build the work backend client");
                let conditions = crate::work::failure::adapter_misconfigured(&e.to_string());
                O::report(generation, conditions, None)
            }
        })
    }

    /// The placement lease client of the inventory modes (no request is made until a new
    /// placement needs it; a client that cannot be built is reported then, as
    /// `PlacementLockUnavailable`).
    async fn placement_lock(
        &self,
        (namespace, pod_name, wait): (&str, Option<&str>, std::time::Duration),
    ) -> crate::placement::lease::PlacementLock<crate::placement::lease::KubeLeases> {
        use crate::placement::lease::{KubeLeases, PlacementLock, holder_identity};
        let api = KubeLeases::connect(self.work.kubeconfig.as_deref(), namespace).await;
        let holder = holder_identity(pod_name);
        tracing::debug!(namespace, holder, "placement lease settings");
        PlacementLock { api, holder, wait }
    }

    /// Writes the subcommand's `report` to `path` (see [`finish`]).
    pub fn finish<C: std::error::Error>(
        &self,
        path: &Path,
        report: Report,
    ) -> Result<(), RunError<C>> {
        finish(path, report, self.work.static_consumer(), self.ids)
    }
}

/// Why a subcommand's HyperFleet resource could not be read.
#[derive(Debug)]
pub enum Unread {
    /// File unreadable, API unreachable or refusing: retry next pulse.
    Unavailable(String),
    /// The input is not the resource's object or spec.
    Invalid(String),
}

impl From<crate::hyperfleet::api::FetchError> for Unread {
    fn from(e: crate::hyperfleet::api::FetchError) -> Self {
        if e.is_bad_input() {
            Unread::Invalid(e.to_string())
        } else {
            Unread::Unavailable(e.to_string())
        }
    }
}

/// Why a subcommand's `execute` could not end with a written report: its configuration error
/// `C` (exit 2) or the report could not be written (exit 1).
#[derive(Debug, thiserror::Error)]
pub enum RunError<C: std::error::Error + 'static> {
    /// Bad configuration (exit 2).
    #[error(transparent)]
    Config(#[from] C),
    /// The report could not be written (exit 1).
    #[error("cannot write the report {path}: {source}")]
    Write {
        path: std::path::PathBuf,
        #[source]
        source: job_report::WriteError,
    },
}

/// The ids a subcommand's log lines name: the cluster's and the NodePool's.
pub type LogIds<'a> = (Option<&'a str>, Option<&'a str>);

/// The exit code of a subcommand that ended with `result`: 0 once a report is written, 1 when
/// none could be, 2 on bad configuration (the cause logged and written as the container's
/// termination message).
pub fn exit_code<C: std::error::Error>(
    result: Result<(), RunError<C>>,
    (cluster_id, nodepool_id): LogIds<'_>,
    generation: Option<i64>,
) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(RunError::Config(e)) => {
            tracing::error!(cluster_id, nodepool_id, generation, error = %e, "bad configuration; no report written");
            write_termination_message(&format!("bad configuration: {e}"));
            std::process::ExitCode::from(EXIT_CONFIG)
        }
        Err(e @ RunError::Write { .. }) => {
            tracing::error!(cluster_id, nodepool_id, generation, error = %e, "no report written");
            write_termination_message(&e.to_string());
            std::process::ExitCode::from(EXIT_NO_REPORT)
        }
    }
}

/// Writes the subcommand's `report` to `path`, naming the static management cluster `consumer`
/// in its `data` unless it names one.
pub fn finish<C: std::error::Error>(
    path: &Path,
    mut report: Report,
    consumer: &str,
    ids: LogIds<'_>,
) -> Result<(), RunError<C>> {
    crate::placement::set_management_cluster(&mut report, consumer);
    write_report(path, &report, ids).map_err(|source| RunError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The management cluster inventory of `work`'s placement mode (`api`, `auth`: the
/// HyperFleet API's); `None` in static mode.
pub fn inventory(
    work: &crate::work::backend::WorkArgs,
    (api, auth): (Option<&str>, &crate::hyperfleet::api::Auth),
) -> Option<crate::placement::inventory::AnyInventory> {
    use crate::placement::inventory::{AnyInventory, ApiInventory, FileInventory};
    use crate::work::backend::Placement;
    match work.placement() {
        Ok(Placement::File(path)) => Some(AnyInventory::File(FileInventory {
            path: path.to_owned(),
        })),
        Ok(Placement::FromApi) => Some(AnyInventory::Api(ApiInventory {
            base_url: api.unwrap_or_default().to_owned(),
            auth: auth.clone(),
        })),
        Ok(Placement::Static(_)) | Err(_) => None,
    }
}

/// Applied False, Available False, Health False with `reason`: the `source` (`cluster`,
/// `NodePool`) spec breaks rules; nothing was sent. A refusal, so Available is False (an
/// `Unknown` would be discarded by the HyperFleet API once the adapter has reported before). Every violation is listed, by field.
pub fn invalid_spec_conditions(
    violations: &[crate::hyperfleet::spec::SpecViolation],
    source: &str,
    reason: &str,
) -> crate::message::Conditions {
    let mut fields: Vec<&str> = Vec::new();
    for v in violations {
        if !fields.contains(&v.field) {
            fields.push(v.field);
        }
    }
    let details: String = violations.iter().map(|v| format!("\n- {v}")).collect();
    let noun = match source.split_at_checked(1) {
        Some((first, rest)) => format!("{}{rest}", first.to_uppercase()),
        None => String::new(),
    };
    let applied = format!(
        "{noun} spec is invalid, nothing was sent to the management cluster. Fix these fields in the HyperFleet {source} spec and update the {source}:{details}"
    );
    let other = format!(
        "Not applied: the {source} spec is invalid (fields: {}); see the Applied condition",
        fields.join(", ")
    );
    crate::message::refusal_conditions(reason, applied, other)
}

/// Resolves on SIGTERM or SIGINT; never when signals cannot be installed. The handlers are
/// installed when this is called, not when the future is first polled, so a SIGTERM that
/// arrives while the input is still being read is not lost (nor fatal).
pub fn shutdown_signal() -> impl Future<Output = ()> {
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

/// Where the kubelet reads a container's termination message (`terminationMessagePath`'s
/// default); `TERMINATION_MESSAGE_PATH` names another file (the Job template's
/// `terminationMessagePath`, if it sets one, or a test's).
pub const DEFAULT_TERMINATION_MESSAGE_PATH: &str = "/dev/termination-log";

/// The termination message file: `TERMINATION_MESSAGE_PATH`, else
/// [`DEFAULT_TERMINATION_MESSAGE_PATH`].
pub fn termination_message_path() -> PathBuf {
    std::env::var_os("TERMINATION_MESSAGE_PATH")
        .filter(|p| !p.is_empty())
        .map_or_else(
            || PathBuf::from(DEFAULT_TERMINATION_MESSAGE_PATH),
            PathBuf::from,
        )
}

/// Writes `cause`, why the process exits non-zero, as the container's termination message, so
/// the kubelet puts it in the container's `state.terminated.message` and the status-reporter
/// quotes it: one line, credentials redacted, at most 4096 bytes (all the kubelet keeps)
/// ([`job_report::termination_message`]). Never fails: outside a pod there is no such file, and
/// it is not created (the kubelet creates and mounts it, writable, even on a read-only root
/// file system); any error is only logged at debug level.
pub fn write_termination_message(cause: &str) {
    let path = termination_message_path();
    if let Err(e) = write_termination_message_to(&path, cause) {
        tracing::debug!(path = %path.display(), error = %e, "no termination message written");
    }
}

/// [`write_termination_message`] to `path`: truncates and writes an existing file, never creates one.
pub fn write_termination_message_to(path: &Path, cause: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?;
    file.write_all(job_report::termination_message(cause).as_bytes())?;
    file.flush()
}

/// Writes `report` atomically to `path` and logs its reasons.
pub fn write_report(
    path: &Path,
    report: &Report,
    log_id: (Option<&str>, Option<&str>),
) -> Result<(), job_report::WriteError> {
    job_report::write_atomic(path, report)?;
    let reasons: Vec<&str> = report
        .conditions
        .iter()
        .map(|c| c.reason.as_str())
        .collect();
    let (cluster_id, nodepool_id) = log_id;
    tracing::info!(cluster_id, nodepool_id, generation = report.observed_generation, path = %path.display(), reasons = ?reasons, "report written");
    Ok(())
}

#[cfg(test)]
mod termination_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_fatal_error_is_written_to_an_existing_termination_log_one_line_redacted_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("termination-log");
        std::fs::write(
            &path,
            "an earlier run's message that is longer than the new one",
        )
        .unwrap();
        let cause = format!(
            "cannot write the report /results/adapter-report.json: Read-only file system (os error 30)\nAuthorization: Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln {}",
            "é".repeat(3000)
        );
        write_termination_message_to(&path, &cause).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(written.starts_with(
            "cannot write the report /results/adapter-report.json: Read-only file system (os error 30) Authorization: Bearer [REDACTED]"
        ), "{written}");
        assert!(written.len() <= 4096, "{}", written.len());
        assert!(!written.contains('\n') && !written.contains("eyJhbGci"));
    }

    #[test]
    fn a_missing_termination_log_is_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("termination-log");
        let err = write_termination_message_to(&path, "boom").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
        assert!(!path.exists());
        // And the public entry point does not fail outside a pod.
        write_termination_message("boom");
    }
}
