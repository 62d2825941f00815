//! `hypershift-adapter diagnose cluster <id>` / `diagnose nodepool <id> --cluster-id <id>`: where
//! a cluster (or NodePool) is stuck, and why, read across every system it passes through.
//!
//! It only reads (GET and LIST, nothing else), each system under its own timeout
//! (`--timeout-per-system`), and never stops at a system it cannot read: that link is `?` with
//! the reason (401, 403, 404, timed out, connection refused, not JSON). Every line is bounded and
//! has credentials removed ([`chain::line`]).
//!
//! The chain, in order (link ids are stable; `-o json` uses them):
//!
//! | link | read from | ✗ when |
//! |---|---|---|
//! | `hyperfleet.object` | `GET …/clusters/{id}` (or `…/nodepools/{id}`): generation, `deleted_time`, `Reconciled`, `LastKnownReconciled`, `<Adapter>Successful` | — (`?` when unreadable) |
//! | `hyperfleet.preconditions` | the object's `<Name>Successful` for each `--precondition`, and `GET …/statuses` | one is not True at the object's generation (not while deleting) |
//! | `framework.job` | LIST Jobs labelled for the object in `--namespace` | no Job for the generation and no stored report at it |
//! | `job.report` | the newest Job's conditions and annotations, its Pods' container states | a status-reporter failure (crash, OOM, timeout, invalid report), a Job failed without a report (deadline), a container that cannot start (image pull), a refusal (`Applied=False` for a reason that is not the transport's) |
//! | `maestro.work` | Maestro REST, the work by its labels under `--maestro-source-id`, on any consumer | no work (with the pulse's `ConsumerNotFound`/`MaestroUnavailable`), a work older than the object's generation |
//! | `agent.applied` | the work's status | no `Applied` for longer than `--agent-stale-after` (agent down), `Applied=False` (the admission message), an old version applied for that long |
//! | `hypershift.hostedcluster` / `hypershift.nodepool` | the fed-back status, read with the adapter's own condition tables; while deleting, NodePools listed, finalizers | Health False (the operator's condition and message), not available past `--machines-stuck-after`, a deletion held past `--deletion-stuck-after`, the operator not observing the applied spec past `--operator-stuck-after` (… before) |
//! | `hyperfleet.status` | this adapter's stored status in `…/statuses` | none stored although the Job reported; the Job's report discarded (older generation, or `Available=Unknown`) |
//!
//! Marks: ✓ holds, ✗ broken, ? could not be read, … in progress and not late. The verdict is the
//! first ✗ or ?, else the first …; exit codes [`chain::EXIT_HEALTHY`] (0, every link ✓),
//! [`chain::EXIT_STUCK`] (1, a ✗ first), [`chain::EXIT_BAD_FLAGS`] (2),
//! [`chain::EXIT_UNREADABLE`] (3, a ? first), [`chain::EXIT_IN_PROGRESS`] (4, only … and ✓).

pub mod chain;
pub mod judge;
pub mod judge_work;
pub mod plan;
pub mod read;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use jiff::Timestamp;
use serde_json::Value;

use crate::duration::parse_budget;
use crate::hyperfleet::{ADAPTER_LABEL, CLUSTER_ID_LABEL, NODEPOOL_ID_LABEL};
use crate::work::backend::DEFAULT_SOURCE_ID;
use crate::work::maestro::{MaestroConfig, MaestroTlsArgs};
use chain::Diagnosis;
use judge::{Kind, Observations, Settings};
use judge_work::Work;
use read::{HyperfleetReader, Read};

/// `--namespace` default: where the task configs create the pulse Jobs.
pub const DEFAULT_NAMESPACE: &str = "hyperfleet-system";
/// `--adapter` default: the adapter's name in HyperFleet (`adapter-config.yaml`).
pub const DEFAULT_ADAPTER: &str = "hypershift";
/// The preconditions of the shipped control-plane task config.
pub const CLUSTER_PRECONDITIONS: [&str; 3] = ["validation", "dns", "pullsecret"];
/// The precondition of the shipped NodePool task config.
pub const NODEPOOL_PRECONDITIONS: [&str; 1] = ["validation"];

/// Where a cluster or NodePool is stuck, and why: reads HyperFleet, the pulse Jobs, Maestro and
/// the fed-back HostedCluster/NodePool (GET/LIST only). Exit 0 healthy, 1 stuck (a ✗ link
/// first), 2 bad flags, 3 a link that decides could not be read (a ? first), 4 in progress (only
/// … and ✓).
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub target: Target,
}

/// The exit codes, as `--help` shows them.
pub const EXIT_HELP: &str = "Exit codes: 0 healthy (every link ✓), 1 stuck (a ✗ link comes first), 2 bad flags, 3 could not read a link that decides (a ? comes first), 4 in progress (only … and ✓ links).";

/// What to diagnose.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Target {
    /// A cluster's control plane: `diagnose cluster <cluster-id>`.
    #[command(after_help = EXIT_HELP)]
    Cluster {
        /// The HyperFleet cluster id.
        #[arg(value_parser = parse_id)]
        id: String,
        #[command(flatten)]
        common: Common,
    },
    /// One NodePool: `diagnose nodepool <nodepool-id> --cluster-id <cluster-id>`.
    #[command(after_help = EXIT_HELP)]
    Nodepool {
        /// The HyperFleet NodePool id.
        #[arg(value_parser = parse_id)]
        id: String,
        /// The NodePool's cluster (the API serves NodePools under their cluster).
        #[arg(long, env = "CLUSTER_ID", value_parser = parse_id)]
        cluster_id: String,
        #[command(flatten)]
        common: Common,
    },
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    Text,
    Json,
}

/// The flags of both targets; the adapter's names where it has them.
#[derive(Debug, Clone, clap::Args)]
pub struct Common {
    /// HyperFleet API base URL.
    #[arg(long, env = "HYPERFLEET_API_URL", value_name = "URL", value_parser = parse_url)]
    pub hyperfleet_api: String,

    /// The HyperFleet API token and its scheme.
    #[command(flatten)]
    pub hyperfleet_auth: crate::hyperfleet::api::Auth,

    /// Kubeconfig of the framework's cluster (where the pulse Jobs run); without it
    /// `~/.kube/config` or in-cluster.
    #[arg(long, env = "KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,

    /// Namespace of the pulse Jobs (the task config's).
    #[arg(long, env = "JOB_NAMESPACE", default_value = DEFAULT_NAMESPACE)]
    pub namespace: String,

    /// The adapter's name in HyperFleet (its statuses' `adapter`).
    #[arg(long, env = "DIAGNOSE_ADAPTER", default_value = DEFAULT_ADAPTER)]
    pub adapter: String,

    /// Adapters the task config waits on (repeat, or a comma list); default the shipped task
    /// config's: validation, dns, pullsecret for a cluster; validation for a NodePool.
    #[arg(
        long = "precondition",
        env = "DIAGNOSE_PRECONDITIONS",
        value_delimiter = ','
    )]
    pub preconditions: Vec<String>,

    /// Maestro REST base URL (`http://` or `https://`).
    #[arg(long, env = "MAESTRO_API_URL", value_name = "URL", value_parser = parse_url)]
    pub maestro_api_url: String,

    /// Maestro source id of the adapter's works.
    #[arg(long, env = "MAESTRO_SOURCE_ID", default_value = DEFAULT_SOURCE_ID)]
    pub maestro_source_id: String,

    #[command(flatten)]
    pub maestro_tls: MaestroTlsArgs,

    /// How long each system (HyperFleet, Kubernetes, Maestro) may take, all its reads together:
    /// seconds or a duration (`5s`).
    #[arg(long, env = "DIAGNOSE_TIMEOUT_PER_SYSTEM", default_value = "5s", value_parser = parse_budget)]
    pub timeout_per_system: Duration,

    /// A work with no `Applied` from the agent (or an older version applied) for longer than
    /// this means the agent is not applying.
    #[arg(long, env = "AGENT_STALE_AFTER", default_value = "5m", value_parser = parse_budget)]
    pub agent_stale_after: Duration,

    /// A deletion not finished this long after `deleted_time` is held (✗), not in progress.
    #[arg(long, env = "DELETION_STUCK_AFTER", default_value = "30m", value_parser = parse_budget)]
    pub deletion_stuck_after: Duration,

    /// An object not available this long after the agent's last status is stuck (✗), not in
    /// progress; also the NodePool's machines limit.
    #[arg(long, env = "MACHINES_STUCK_AFTER", default_value = "15m", value_parser = parse_budget)]
    pub machines_stuck_after: Duration,

    /// A spec the agent applied that the HyperShift operator has not observed (its conditions'
    /// `observedGeneration` behind the object's `metadata.generation`) this long after is held (✗)
    /// on the operator, not in progress (…).
    #[arg(long, env = "OPERATOR_STUCK_AFTER", default_value = crate::work::observed::DEFAULT_STUCK_AFTER, value_parser = parse_budget)]
    pub operator_stuck_after: Duration,

    /// `text` (the chain and the verdict) or `json` (one document).
    #[arg(short = 'o', long, env = "DIAGNOSE_OUTPUT", value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

/// A HyperFleet id: letters, digits and `-`, 1 to 64 characters (it goes into URLs, label
/// selectors and Maestro searches).
pub fn parse_id(s: &str) -> Result<String, String> {
    let ok =
        (1..=64).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if ok {
        Ok(s.to_owned())
    } else {
        Err(format!(
            "{:?} is not a HyperFleet id: use 1 to 64 letters, digits and '-' (e.g. 019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b)",
            crate::message::truncate(s.to_owned(), 80)
        ))
    }
}

/// An `http://` or `https://` URL.
pub fn parse_url(s: &str) -> Result<String, String> {
    if s.starts_with("http://") || s.starts_with("https://") {
        Ok(s.to_owned())
    } else {
        Err(format!("{s:?} must start with http:// or https://"))
    }
}

/// Runs the diagnosis and prints it on stdout; the exit code says healthy / stuck / could not read.
pub async fn execute(args: Args) -> ExitCode {
    let diagnosis = run(&args, Timestamp::now()).await;
    match target(&args).3.output {
        Output::Text => print!("{}", diagnosis.text()),
        Output::Json => println!("{}", diagnosis.json()),
    }
    ExitCode::from(diagnosis.exit_code)
}

/// What `args` diagnose: the kind, the object's id, its cluster's id, and the flags.
fn target(args: &Args) -> (Kind, &str, &str, &Common) {
    match &args.target {
        Target::Cluster { id, common } => (Kind::Cluster, id, id, common),
        Target::Nodepool {
            id,
            cluster_id,
            common,
        } => (Kind::NodePool, id, cluster_id, common),
    }
}

/// Reads every system (concurrently, each under `--timeout-per-system`) and judges the chain at
/// `now`.
pub async fn run(args: &Args, now: Timestamp) -> Diagnosis {
    // The TLS provider of every client (kept when already installed).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (kind, id, cluster_id, common) = target(args);
    let (labels, object_path) = match kind {
        Kind::Cluster => (
            [(ADAPTER_LABEL, "controlplane"), (CLUSTER_ID_LABEL, id)],
            format!("/{id}"),
        ),
        Kind::NodePool => (
            [(ADAPTER_LABEL, "nodepool"), (NODEPOOL_ID_LABEL, id)],
            format!("/{cluster_id}/nodepools/{id}"),
        ),
    };
    let selector = labels.map(|(k, v)| format!("{k}={v}")).join(",");
    let timeout = common.timeout_per_system.max(Duration::from_millis(100));
    let hyperfleet = HyperfleetReader {
        base_url: common.hyperfleet_api.clone(),
        auth: common.hyperfleet_auth.clone(),
        timeout,
    };
    // A deleting cluster's NodePools hold its deletion.
    let nodepools = (kind == Kind::Cluster).then(|| format!("/{id}/nodepools"));
    let kubeconfig = common.kubeconfig.as_deref();
    let hyperfleet = read_hyperfleet(&hyperfleet, &object_path, nodepools);
    let jobs = read::pulses(kubeconfig, &common.namespace, &selector, timeout);
    let maestro = read::works(maestro_config(common), &labels, timeout);
    let (hyperfleet, pulses, works) = tokio::join!(
        read::within(timeout, hyperfleet),
        read::within(timeout, jobs),
        read::within(timeout, maestro),
    );
    let (object, statuses, nodepools) =
        hyperfleet.unwrap_or_else(|failure| (Err(failure.clone()), Err(failure), None));
    let observations = Observations {
        object,
        statuses,
        nodepools,
        pulses,
        works,
    };
    let settings = settings((kind, id, cluster_id), common, selector, now);
    judge_all(&settings, &observations)
}

/// The HyperFleet reads: the object at `object_path`, its statuses, and when it is being deleted
/// the NodePools at `nodepools` (a cluster's).
async fn read_hyperfleet(
    hyperfleet: &HyperfleetReader,
    object_path: &str,
    nodepools: Option<String>,
) -> Read<(Read<Value>, Read<Value>, Option<Read<Value>>)> {
    let object = hyperfleet.get(object_path).await;
    let statuses = hyperfleet.get(&format!("{object_path}/statuses")).await;
    let deleting = object.as_ref().ok().and_then(judge::deleted_time).is_some();
    let nodepools = match nodepools.filter(|_| deleting) {
        Some(path) => Some(hyperfleet.get(&path).await),
        None => None,
    };
    Ok((object, statuses, nodepools))
}

/// The settings of the diagnosis of `(kind, id, cluster_id)` with `common`'s flags.
fn settings(
    (kind, id, cluster_id): (Kind, &str, &str),
    common: &Common,
    selector: String,
    now: Timestamp,
) -> Settings {
    let defaults: &[&str] = match kind {
        Kind::Cluster => &CLUSTER_PRECONDITIONS,
        Kind::NodePool => &NODEPOOL_PRECONDITIONS,
    };
    let preconditions = match common.preconditions.is_empty() {
        true => defaults.iter().map(|s| (*s).to_owned()).collect(),
        false => common.preconditions.clone(),
    };
    Settings {
        kind,
        id: id.to_owned(),
        cluster_id: cluster_id.to_owned(),
        adapter: common.adapter.clone(),
        preconditions,
        namespace: common.namespace.clone(),
        selector,
        source: common.maestro_source_id.clone(),
        agent_stale_after: common.agent_stale_after,
        deletion_stuck_after: common.deletion_stuck_after,
        machines_stuck_after: common.machines_stuck_after,
        operator_stuck_after: common.operator_stuck_after,
        now,
    }
}

/// The Maestro REST settings of `common` (no gRPC: diagnose publishes nothing).
fn maestro_config(common: &Common) -> MaestroConfig {
    let mut config = MaestroConfig::new(
        String::new(),
        common.maestro_api_url.clone(),
        common.maestro_source_id.clone(),
        String::new(),
    );
    common.maestro_tls.apply_to(&mut config);
    config
}

/// Every link, in order, and the diagnosis.
pub fn judge_all(s: &Settings, obs: &Observations) -> Diagnosis {
    let work = Work::of(s, obs);
    let preconditions = judge::preconditions_link(s, obs);
    let job = judge::job_link(s, obs, &preconditions);
    let report = judge::report_link(s, obs, &job);
    let work_link = judge_work::work_link(s, obs, work.as_ref(), &report);
    let links = vec![
        judge::object_link(s, obs),
        preconditions,
        job,
        report,
        work_link,
        judge_work::agent_link(s, obs, work.as_ref()),
        judge_work::object_link(s, obs, work.as_ref()),
        judge_work::status_link(s, obs),
    ];
    let consumer = work.map(|w| w.bundle.consumer_name.clone());
    Diagnosis::new(
        s.kind.name(),
        &s.id,
        &s.cluster_id,
        obs.generation(),
        consumer,
        links,
    )
}

#[cfg(test)]
mod tests;
