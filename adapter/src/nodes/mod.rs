//! `hypershift-adapter nodes`: judges the Nodes of a cluster (through its API) and writes the
//! adapter report.
//!
//! - [`judge`] — pure: node summaries + lease renew times + now + thresholds → findings → report.
//! - [`source`] — the [`NodeSource`] trait and its kube-rs implementation (paginated LISTs).
//! - [`args`] — the flags.
//! - [`run`] — wiring: collect through a source, judge, write the report atomically.

pub mod args;
pub mod judge;
pub mod source;
pub mod testing;

use std::collections::HashMap;
use std::path::Path;

use jiff::Timestamp;
use job_report::{Condition, ConditionStatus, Report};

pub use args::{Args, LogFormat};
pub use judge::{Findings, Judge, NodeSummary, Problem, Thresholds};
pub use source::{KubeNodeSource, LeaseRenewal, NodeSource, Page, SourceError};

/// Pages a source will be asked for before the list is considered endless (a server that keeps
/// handing out continue tokens); 5 000 nodes at 500 per page is 10.
const MAX_PAGES: usize = 10_000;

/// Reads every node lease, then streams the nodes page by page through a [`Judge`].
/// At most one page of nodes is held at a time. A list whose continue token expired (410) is
/// restarted once from the beginning.
pub async fn collect(
    source: &impl NodeSource,
    now: Timestamp,
    thresholds: &Thresholds,
) -> Result<Findings, SourceError> {
    let leases = retry_expired_once(|| read_leases(source)).await?;
    retry_expired_once(|| judge_nodes(source, now, thresholds, &leases)).await
}

async fn retry_expired_once<T, F, Fut>(mut f: F) -> Result<T, SourceError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, SourceError>>,
{
    match f().await {
        Err(SourceError::Expired { .. }) => f().await,
        other => other,
    }
}

async fn read_leases(source: &impl NodeSource) -> Result<HashMap<String, Timestamp>, SourceError> {
    let mut leases = HashMap::new();
    let mut token: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let page = source.lease_page(token.as_deref()).await?;
        for lease in page.items {
            if let Some(renewed) = lease.renewed {
                leases.insert(lease.node, renewed);
            }
        }
        token = page.continue_token;
        if token.is_none() {
            return Ok(leases);
        }
    }
    Err(endless(source::Resource::Leases))
}

async fn judge_nodes(
    source: &impl NodeSource,
    now: Timestamp,
    thresholds: &Thresholds,
    leases: &HashMap<String, Timestamp>,
) -> Result<Findings, SourceError> {
    let mut judge = Judge::new(now, thresholds, leases);
    let mut token: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let page = source.node_page(token.as_deref()).await?;
        for node in &page.items {
            judge.observe(node);
        }
        token = page.continue_token;
        if token.is_none() {
            return Ok(judge.finish());
        }
    }
    Err(endless(source::Resource::Nodes))
}

fn endless(resource: source::Resource) -> SourceError {
    SourceError::Unreachable {
        resource,
        message: format!("the API server returned more than {MAX_PAGES} pages"),
    }
}

/// The report when the API could not be read: Applied=False with the error's reason and
/// message; Available and Health Unknown with the same reason, since nothing was checked.
pub fn failure_report(err: &SourceError, generation: Option<i64>) -> Report {
    let reason = err.reason();
    let message = err.to_string();
    let mut report = Report::new(vec![
        Condition::new("Applied", ConditionStatus::False, reason, message.clone()),
        Condition::new(
            "Available",
            ConditionStatus::Unknown,
            reason,
            format!("Nodes were not checked: {message}"),
        ),
        Condition::new(
            "Health",
            ConditionStatus::Unknown,
            reason,
            format!("Nodes were not checked: {message}"),
        ),
    ]);
    report.adapter = Some(judge::ADAPTER_NAME.to_owned());
    report.observed_generation = generation;
    report
}

/// Why `run` could not finish: only a report that could not be written is an error.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct RunError(#[from] pub job_report::WriteError);

/// Checks the nodes `source` serves as of `now` and writes the report to `results_path`.
/// API failures become a report (Applied=False), not an error.
pub async fn run(
    args: &Args,
    results_path: &Path,
    source: Result<impl NodeSource, SourceError>,
    now: Timestamp,
) -> Result<Report, RunError> {
    // Destructured so a new flag cannot be silently ignored here.
    let Args {
        results_path: _,
        cluster_id,
        generation,
        log_format: _,
        kubeconfig: _,
        not_ready_grace: _,
        stuck_terminating_after: _,
        stale_heartbeat_after: _,
        verification_taints: _,
        verification_grace: _,
        min_ready_nodes: _,
        expected_nodes: _,
        page_size: _,
        request_timeout: _,
    } = args;
    let cluster_id = cluster_id.as_deref().unwrap_or("");
    let thresholds = args.thresholds();
    let outcome = match source {
        Ok(source) => collect(&source, now, &thresholds).await,
        Err(e) => Err(e),
    };
    let report = match outcome {
        Ok(findings) => {
            let report = judge::report(&findings, &thresholds, *generation);
            let health = report.condition("Health").map_or("", |c| c.reason.as_str());
            tracing::info!(
                cluster_id,
                generation,
                nodes = findings.total,
                ready = findings.ready,
                leases = findings.leases,
                health,
                "nodes checked"
            );
            report
        }
        Err(err) => {
            tracing::warn!(
                cluster_id,
                generation,
                reason = err.reason(),
                error = %err,
                "cannot read nodes"
            );
            failure_report(&err, *generation)
        }
    };
    job_report::write_atomic(results_path, &report)?;
    tracing::info!(cluster_id, generation, path = %results_path.display(), "report written");
    Ok(report)
}

/// The real thing: connects with `--kubeconfig` (or in-cluster), checks, writes the report.
pub async fn run_with_kube(args: Args) -> anyhow::Result<()> {
    let results_path = args.results_path(std::env::var_os("RESULTS_PATH"));
    let source = KubeNodeSource::connect(
        args.kubeconfig.as_deref(),
        args.page_size,
        args.request_timeout_std(),
    )
    .await;
    run(&args, &results_path, source, Timestamp::now()).await?;
    Ok(())
}
