//! Phase times of the whole HyperFleet loop on the real servers (issue 24 item 5): for each of
//! `--clusters` control planes, one after the other, from `POST /clusters` to `Reconciled`, through
//! Sentinel, RabbitMQ, the framework (serve mode, the shipped task config), the pulse Job on the real
//! API server run by the played kubelet, Maestro and a real agent, with the HyperShift operator
//! played as in `real::loop_controlplane` (`LoopBed`, the same loop the tests use).
//!
//! Each milestone is seen by polling every 50 ms, one after the other, from the moment before the
//! `POST` (the client's clock), except Sentinel's publish, read from its log (its own
//! `timestamp`, on the same machine), and the HostedCluster's apply, watched beside the pulse:
//!
//! 1. `POST /clusters` answered; the other required adapters (`validation`, `dns`, `pullsecret`)
//!    report at once;
//! 2. Sentinel publishes the cluster's event (first `Published event` line naming it);
//! 3. the framework's pulse Job exists (`hs-cp-<id>-g1`);
//! 4. the Job carries the report (the status-reporter's `Applied` condition on it);
//! 5. the API stores `hypershift`'s report at generation 1, the adapter's (its
//!    `data.management_cluster`; Available False: no status yet);
//! 6. the agent applied the HostedCluster; the played operator writes it `Available` at once;
//! 7. `Reconciled=True` at generation 1 (a later pulse read the fed-back status).
//!
//! Needs a running kit: `real-systems up --state <dir>` (the bench attaches, starts nothing but
//! its own framework, Sentinel and consumer agent). Results and the command: `docs/benchmarks.md`.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use k8s_openapi::api::batch::v1::Job;
use kube::api::Api;
use serde_json::Value;
use testbed::real::RealSystems;
use testbed::real::framework::Deployment;
use testbed::real::hyperfleet_api::condition;
use testbed::real::loop_bed::{JOB_NAMESPACE, LoopBed, cluster_spec};
use testbed::real::operator::HostedClusterStage;

#[derive(Parser, Debug)]
#[command(about = "Phase times of the HyperFleet loop on the real servers")]
struct Args {
    /// The kit's state directory (`real-systems up --state <dir>`).
    #[arg(long)]
    state: std::path::PathBuf,
    /// Control planes to take from POST to Reconciled, one after the other.
    #[arg(long, default_value_t = 5)]
    clusters: usize,
    /// Longest wait for one cluster's milestones.
    #[arg(long, default_value_t = 300)]
    timeout_secs: u64,
}

/// The milestones after the POST, in order (see the module doc).
const PHASES: [&str; 6] = [
    "Sentinel published",
    "pulse Job created",
    "report on the Job",
    "report stored in the API",
    "HostedCluster applied",
    "Reconciled",
];

/// The milestone each phase is measured from (`None`: the POST). The HostedCluster is applied
/// beside the pulse's report, so it is timed from the POST; `Reconciled` follows the later of the
/// stored report and the operator's answer to the apply.
fn previous(phase: usize, row: &[f64; 6]) -> f64 {
    match phase {
        0 | 4 => 0.0,
        5 => row[3].max(row[4]),
        p => row[p - 1],
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let real: &'static RealSystems = Box::leak(Box::new(RealSystems::attach(&args.state)?));
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(run(real, &args))
}

async fn run(real: &'static RealSystems, args: &Args) -> Result<()> {
    let bed = LoopBed::start(real, "bench-loop", &[Deployment::ControlPlane]).await?;
    let mut rows = Vec::new();
    for i in 0..args.clusters {
        let row = one_cluster(&bed, i, Duration::from_secs(args.timeout_secs)).await?;
        println!("cluster {i}: {}", format_row(&row));
        rows.push(row);
    }
    println!(
        "\nphase (since the milestone it follows): p50 / max over {} clusters",
        rows.len()
    );
    for (p, name) in PHASES.iter().enumerate() {
        let mut steps: Vec<f64> = rows.iter().map(|r| r[p] - previous(p, r)).collect();
        steps.sort_by(f64::total_cmp);
        println!(
            "  {name:<26} {:>6.2} s / {:>6.2} s",
            steps[steps.len() / 2],
            steps[steps.len() - 1]
        );
    }
    let mut totals: Vec<f64> = rows.iter().map(|r| r[PHASES.len() - 1]).collect();
    totals.sort_by(f64::total_cmp);
    println!(
        "  {:<26} {:>6.2} s / {:>6.2} s",
        "POST to Reconciled",
        totals[totals.len() / 2],
        totals[totals.len() - 1]
    );
    Ok(())
}

fn format_row(row: &[f64; 6]) -> String {
    PHASES
        .iter()
        .zip(row)
        .map(|(name, t)| format!("{name} {t:.2} s"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One control plane from POST to Reconciled: the seconds from the POST to each milestone.
async fn one_cluster(bed: &LoopBed, i: usize, timeout: Duration) -> Result<[f64; 6]> {
    let name = format!("{}-c{i}", bed.id);
    let posted_at = jiff::Timestamp::now();
    let start = Instant::now();
    let created = bed
        .create_cluster(&name, &bed.labels(&[]), &cluster_spec(&name))
        .await?;
    let id = created["id"].as_str().context("no id")?.to_owned();
    let href = created["href"].as_str().context("no href")?.to_owned();
    for adapter in ["validation", "dns", "pullsecret"] {
        let code = bed.api.report_as(&href, adapter, true).await?;
        anyhow::ensure!(code == 201, "{adapter}'s report: HTTP {code}");
    }
    let jobs: Api<Job> = Api::namespaced(bed.kube.clone(), JOB_NAMESPACE);
    let job_name = format!("hs-cp-{id}-g1");
    let seen = |what: &'static str| Milestone {
        what,
        start,
        timeout,
    };
    // The pulse's chain, one milestone after the other (each seen when the call that shows it
    // returns), beside the agent's apply and the played operator's answer to it.
    let chain = async {
        let job = seen("pulse Job created")
            .at(|| async { Ok(jobs.get_opt(&job_name).await?.is_some()) })
            .await?;
        let reported = seen("report on the Job")
            .at(|| reported_on_job(&jobs, &job_name))
            .await?;
        let stored = seen("report stored in the API")
            .at(|| async {
                Ok(bed
                    .api
                    .status_of(&href, "hypershift")
                    .await?
                    .is_some_and(|r| r["observed_generation"] == 1 && adapters_report(&r)))
            })
            .await?;
        let reconciled = seen("Reconciled")
            .at(|| async {
                Ok(bed
                    .api
                    .get(&href)
                    .await?
                    .and_then(|c| condition(&c, "Reconciled"))
                    .is_some_and(|c| c.status == "True" && c.observed_generation == 1))
            })
            .await?;
        Ok::<_, anyhow::Error>((job, reported, stored, reconciled))
    };
    let operator = async {
        let applied = seen("HostedCluster applied")
            .at(|| async { Ok(bed.operator.hosted_cluster(&name).await?.is_some()) })
            .await?;
        bed.operator
            .write_hosted_cluster(&name, HostedClusterStage::Available)
            .await?;
        Ok::<_, anyhow::Error>(applied)
    };
    let ((job, reported, stored, reconciled), applied) =
        tokio::try_join!(chain, operator).with_context(|| format!("cluster {id}"))?;
    let published = published_at(&bed.sentinel_logs(), &id)
        .map(|t| t.duration_since(posted_at).as_secs_f64().clamp(0.0, job));
    if published.is_none() {
        eprintln!("cluster {id}: no Sentinel publish line found; counted with the Job's creation");
    }
    Ok([
        published.unwrap_or(job),
        job,
        reported,
        stored,
        applied,
        reconciled,
    ])
}

/// A milestone of one cluster, seen by polling (every 50 ms) from `start`.
struct Milestone {
    what: &'static str,
    start: Instant,
    timeout: Duration,
}

impl Milestone {
    /// The seconds since `start` when `holds` first answered true.
    async fn at<F, Fut>(&self, mut holds: F) -> Result<f64>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<bool>>,
    {
        loop {
            if holds().await? {
                return Ok(self.start.elapsed().as_secs_f64());
            }
            if self.start.elapsed() > self.timeout {
                bail!("{} not seen within {:?}", self.what, self.timeout);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Whether a stored `hypershift` status is the adapter's report carried over from the Job (its
/// `data.management_cluster`), not what the framework stores on its own before the Job reported.
fn adapters_report(stored: &Value) -> bool {
    stored["data"]["management_cluster"].is_string()
}

/// Whether the Job carries the status-reporter's report (its `Applied` condition).
async fn reported_on_job(jobs: &Api<Job>, name: &str) -> Result<bool> {
    Ok(jobs.get_opt(name).await?.is_some_and(|job| {
        job.status
            .and_then(|s| s.conditions)
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Applied"))
    }))
}

/// The time of Sentinel's first `Published event resource_id=<id>` line (its JSON log's
/// `timestamp`).
fn published_at(log: &str, id: &str) -> Option<jiff::Timestamp> {
    log.lines()
        .filter(|l| l.contains("Published event") && l.contains(id))
        .find_map(|l| {
            let line: Value = serde_json::from_str(l).ok()?;
            line["timestamp"].as_str()?.parse().ok()
        })
}
