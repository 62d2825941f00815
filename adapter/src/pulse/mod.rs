//! The subcommands, one per kind of pulse. Each wires its input (`crate::hyperfleet`), its
//! object (`crate::hypershift`) and the work transport (`crate::work`) into one report, and owns
//! its condition table:
//!
//! - [`controlplane`]: a cluster's HostedCluster;
//! - [`nodepool`]: a NodePool's NodePool, after its cluster's control plane;
//! - [`nodes`]: node and cluster health checks through the hosted cluster's API.
//!
//! No subcommand imports another; what they share lives below them (or here, for the process
//! edge: the shutdown signal and writing the report).

use std::future::Future;
use std::path::Path;

use job_report::Report;

pub mod controlplane;
pub mod nodepool;

pub mod nodes;

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
    crate::work::outcome::refusal_conditions(reason, applied, other)
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
