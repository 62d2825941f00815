//! The fleet bench on the kit's real servers (issue 24 item 5): `bench-fleet`'s creates and
//! steady pulses, but through the real Maestro server (REST + gRPC, PostgreSQL behind it) and its
//! real work agents, the real HyperFleet API (the clusters and `ManagementCluster` entities) and
//! the placement lease on the real kube-apiserver under the shipped RBAC.
//!
//! It measures a kit brought up for it alone (`docs/benchmarks.md`: other tests on a shared kit
//! would be in the servers' CPU figures):
//!
//! ```text
//! ../shared/real-systems/real-systems up --state /tmp/rs-bench --consumers c1,c2,c3
//! cargo build --release -p hypershift-adapter
//! cargo build --release -p testbed --bin bench-real-fleet
//! target/release/bench-real-fleet --state /tmp/rs-bench --clusters 300 --concurrency 8
//! ../shared/real-systems/real-systems down --state /tmp/rs-bench
//! ```
//!
//! Set-up (not measured): one `ManagementCluster` per consumer of the kit (each with its own real
//! agent), all in `--region`, capacities as `bench-fleet` gives them (one fills up, the others
//! never do), reported available by `mgmt-health`; `--clusters` clusters `POST`ed in that region
//! (53-character names); one ServiceAccount per concurrency slot bound to the shipped Role of
//! `manifests/rbac.yaml` in `hyperfleet-system`, its token from the TokenRequest API.
//!
//! 1. **Creates**: one pulse per cluster, `--concurrency` at a time (the release adapter under
//!    `/usr/bin/time`, `MANAGEMENT_CLUSTERS_FROM_API=true`): it reads the cluster, the candidates,
//!    counts each consumer's works in Maestro, takes the placement lease, publishes over gRPC.
//! 2. The real agents apply the HostedClusters to the kube-apiserver; the HyperShift operator is
//!    played (`testbed::real::operator`: takeover, then the recorded available status) on
//!    `--steady` of them; the bench waits until every one's status is fed back into Maestro.
//! 3. **Steady state**: one pulse each for those clusters: cluster GET, the management cluster's
//!    record, one Maestro search, the report `ControlPlaneReady`.
//!
//! Requests per pulse: HyperFleet and Maestro REST through each slot's counting proxy, as in
//! `bench-fleet`; Kubernetes requests from the API server's audit log (a slot's ServiceAccount
//! names the slot, the request time the pulse); gRPC publishes from Maestro's own
//! `grpc_server_processed_total`. Server CPU: `/proc/<pid>/stat` of the kit's recorded PIDs
//! (process trees: a PostgreSQL backend is a child of the postmaster) before and after each phase,
//! against an idle baseline measured first.
#![allow(clippy::print_stdout)]

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use clap::Parser;
use futures::StreamExt;
use serde_json::{Value, json};
use testbed::bench::fleet::{
    MC_PLURAL, Sniffer, capacities, classify, cluster_body, management_cluster_body,
    mgmt_health_report, padded_name,
};
use testbed::bench::pulses::{Phase, Pulse, Slot, print_phase};
use testbed::bench::real::{
    AuditEvent, CpuSample, LogTail, clock_ticks, cpu_between, kit_pids, label, metric_changes,
    parse_audit_line, parse_metrics, postgres_by_database,
};
use testbed::bench::{ms, percentile};
use testbed::real::RealSystems;
use testbed::real::hyperfleet_api::{HyperfleetApi, PREFIX};
use testbed::real::kube_access::{apply, apply_file, ensure_namespace, service_account_kubeconfig};
use testbed::real::operator::{HostedClusterStage, NAMESPACE as HOSTED_CLUSTERS, Operator};

/// The pulse Jobs' namespace in the shipped manifests, where the placement leases live.
const JOB_NAMESPACE: &str = "hyperfleet-system";
/// The longest cluster name the recorded API allows (as `bench-fleet`).
const CLUSTER_NAME_LENGTH: usize = 53;
/// How long the agents and the played operator may take for the whole fleet.
const SETTLE: Duration = Duration::from_secs(600);
/// Set-up requests in flight at once (cluster creates, operator writes).
const SETUP_CONCURRENCY: usize = 8;

#[derive(Debug, Parser)]
struct Args {
    /// The state directory of a running kit of this bench's own (`real-systems up --state`).
    #[arg(long, env = "REAL_SYSTEMS_STATE")]
    state: PathBuf,
    /// Clusters in the fleet (one create pulse each).
    #[arg(long, default_value_t = 300)]
    clusters: usize,
    /// Pulses running at the same time.
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    /// Clusters in the steady-state pass (evenly sampled; 0 = none).
    #[arg(long, default_value_t = 300)]
    steady: usize,
    /// The GCP region of the fleet and its management clusters (one run per region on a kit:
    /// the bench refuses a region that already has management clusters).
    #[arg(long, default_value = "us-east1")]
    region: String,
    /// The Maestro consumers to use as management clusters (default: every consumer of the kit).
    #[arg(long, value_delimiter = ',')]
    consumers: Vec<String>,
    /// Seconds of idle servers measured before the creates (their background CPU).
    #[arg(long, default_value_t = 20)]
    idle_seconds: u64,
    /// The adapter binary (default: `hypershift-adapter` next to this bench, same profile).
    #[arg(long)]
    adapter: Option<PathBuf>,
}

/// One management cluster of the fleet.
#[derive(Debug, Clone)]
struct Mc {
    consumer: String,
    /// `max_hosted_clusters`: what this run places on it, by `bench-fleet`'s rule, plus
    /// `existing`.
    max: u64,
    /// Control-plane works it held before this run (an earlier run on the same kit).
    existing: u64,
}

/// The kit and what the set-up made in it.
struct Bed {
    real: RealSystems,
    kube: kube::Client,
    http: reqwest::Client,
    mcs: Vec<Mc>,
    /// Cluster ids (as the API gave them) and names, in creation order.
    ids: Vec<String>,
    names: Vec<String>,
    dir: tempfile::TempDir,
    /// The kit's processes whose CPU is reported, by name.
    pids: BTreeMap<String, u32>,
    metrics_url: String,
    ticks: u64,
}

fn main() -> Result<()> {
    let args = Args::parse();
    ensure!(
        args.clusters > 0 && args.concurrency > 0,
        "--clusters and --concurrency must be at least 1"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(bench(args))
}

async fn bench(args: Args) -> Result<()> {
    let binary = match &args.adapter {
        Some(path) if path.is_file() => path.clone(),
        Some(path) => bail!("--adapter {}: no such file", path.display()),
        None => testbed::binaries::path("hypershift-adapter"),
    };
    let setup = Instant::now();
    let bed = Bed::start(&args).await?;
    let slots = bed.slots(args.concurrency).await?;
    println!(
        "fleet                {} clusters in {}, management clusters {}, concurrency {}; set-up {:.1} s",
        args.clusters,
        args.region,
        bed.mcs
            .iter()
            .map(|m| format!("{} (max {}, {} held before)", m.consumer, m.max, m.existing))
            .collect::<Vec<_>>()
            .join(", "),
        args.concurrency,
        setup.elapsed().as_secs_f64()
    );
    println!("kit                  {}", bed.real.state_dir().display());
    let phase = Phase {
        binary: binary.clone(),
        slots,
        ids: Arc::new(bed.ids.clone()),
        env: Arc::new(bed.adapter_env()?),
    };

    let idle = bed.idle(Duration::from_secs(args.idle_seconds)).await?;

    // Phase 1: creates.
    let watch = bed.watch().await?;
    let metrics_before_creates = watch.metrics.clone();
    let mut placed_on: Vec<Option<String>> = vec![None; args.clusters];
    let mut creates = Vec::with_capacity(args.clusters);
    let consumers: BTreeSet<&str> = bed.mcs.iter().map(|m| m.consumer.as_str()).collect();
    let elapsed = phase
        .run((0..args.clusters).collect(), |p| {
            ensure!(
                p.applied.ends_with(" ManifestWorkCreated"),
                "create pulse of cluster {} reported Applied {:?} (Available {:?}, Health {:?})",
                bed.ids[p.cluster],
                p.applied,
                p.available,
                p.health
            );
            let mc = p.management_cluster.clone().unwrap_or_default();
            ensure!(
                consumers.contains(mc.as_str()),
                "cluster {} was placed on {mc:?}, not one of {consumers:?}",
                bed.ids[p.cluster]
            );
            placed_on[p.cluster] = Some(mc);
            creates.push(p);
            Ok(())
        })
        .await?;
    let servers = watch.finish(&bed, &mut creates).await?;
    servers.print("create", &creates, elapsed, &idle);
    bed.check_placement(&placed_on).await?;

    if args.steady == 0 {
        return Ok(());
    }
    let every = (args.clusters / args.steady.min(args.clusters)).max(1);
    let sample: Vec<usize> = (0..args.clusters)
        .step_by(every)
        .take(args.steady)
        .collect();
    let settle = Instant::now();
    bed.operator_reports_available(&sample).await?;
    bed.first_status_latency(&metrics_before_creates).await?;
    bed.wait_for_feedback(&sample).await?;
    println!(
        "\nsteady set-up        the operator played on {} HostedClusters, their status fed back: {:.1} s",
        sample.len(),
        settle.elapsed().as_secs_f64()
    );

    // Phase 2: steady state.
    let watch = bed.watch().await?;
    let mut steady = Vec::with_capacity(sample.len());
    let elapsed = phase
        .run(sample, |p| {
            ensure!(
                p.applied.ends_with(" ManifestWorkApplied"),
                "steady pulse of cluster {} reported Applied {:?} (Available {:?}, Health {:?})",
                bed.ids[p.cluster],
                p.applied,
                p.available,
                p.health
            );
            ensure!(
                p.management_cluster == placed_on[p.cluster],
                "steady pulse of cluster {} reports {:?}, created on {:?}",
                bed.ids[p.cluster],
                p.management_cluster,
                placed_on[p.cluster]
            );
            steady.push(p);
            Ok(())
        })
        .await?;
    let servers = watch.finish(&bed, &mut steady).await?;
    ensure!(
        steady
            .iter()
            .all(|p| !p.requests.keys().any(|k| k.is_kube())),
        "a steady pulse made Kubernetes requests (the placement lease is for creates only)"
    );
    servers.print("steady", &steady, elapsed, &idle);
    testbed::bench::print_binary(&binary)?;
    Ok(())
}

impl Bed {
    async fn start(args: &Args) -> Result<Bed> {
        let real = RealSystems::attach(&args.state)?;
        let consumers: Vec<String> = if args.consumers.is_empty() {
            real.var("MAESTRO_CONSUMERS")
                .split(',')
                .map(str::to_owned)
                .collect()
        } else {
            args.consumers.clone()
        };
        let kube = real.kube_client().await?;
        let api = HyperfleetApi::new(&real);
        let search = format!(
            "{PREFIX}/{MC_PLURAL}?search={}",
            percent_encode(&format!("spec.region='{}'", args.region))
        );
        let existing = api.must("GET", &search, None).await?;
        ensure!(
            existing["total"].as_u64() == Some(0),
            "the kit already has management clusters in {} (an earlier run): use another --region or a fresh kit",
            args.region
        );
        let run = format!("rf{:06x}", fastrand::u32(..0x0100_0000));
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()?;
        let mut mcs = Vec::with_capacity(consumers.len());
        for (consumer, max) in consumers
            .iter()
            .zip(capacities(args.clusters as u64, consumers.len()))
        {
            let existing = bundles(&http, real.var("MAESTRO_API_URL"), consumer)
                .await?
                .len() as u64;
            mcs.push(Mc {
                consumer: consumer.clone(),
                max: max + existing,
                existing,
            });
        }
        for mc in &mcs {
            register(&api, &format!("{run}-{}", mc.consumer), &args.region, mc).await?;
        }
        let names: Vec<String> = (0..args.clusters)
            .map(|i| {
                padded_name(
                    &format!("{run}-{}-hcp-", args.region),
                    i,
                    CLUSTER_NAME_LENGTH,
                )
            })
            .collect();
        let ids = create_clusters(&api, &names, &args.region).await?;
        ensure_namespace(&kube, HOSTED_CLUSTERS).await?;
        let manifests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../manifests/rbac.yaml");
        apply_file(&kube, &manifests).await?;
        let mut pids = kit_pids(&args.state)?;
        pids.retain(|name, _| {
            name.starts_with("maestro-")
                || matches!(
                    name.as_str(),
                    "postgres"
                        | "kube-apiserver"
                        | "etcd"
                        | "hyperfleet-api"
                        | "kube-controller-manager"
                )
        });
        let ports = std::fs::read_to_string(args.state.join("ports"))?;
        let metrics_port = ports
            .lines()
            .find_map(|l| l.strip_prefix("maestro-metrics="))
            .context("the kit's ports file has no maestro-metrics")?;
        Ok(Bed {
            kube,
            http,
            mcs,
            ids,
            names,
            dir: tempfile::Builder::new()
                .prefix("bench-real-fleet-")
                .tempdir()?,
            pids,
            metrics_url: format!("http://127.0.0.1:{}/metrics", metrics_port.trim()),
            ticks: clock_ticks(),
            real,
        })
    }

    /// The adapter's environment except the per-pulse and per-slot settings.
    fn adapter_env(&self) -> Result<Vec<(String, String)>> {
        let token = self.dir.path().join("hyperfleet-token");
        // The kit's API runs with JWT off: any token passes.
        std::fs::write(&token, "bench-real-fleet\n")?;
        Ok([
            ("HYPERFLEET_API_TOKEN_FILE", token.display().to_string()),
            (
                "MAESTRO_GRPC_URL",
                self.real.var("MAESTRO_GRPC_URL").to_owned(),
            ),
            ("MANAGEMENT_CLUSTERS_FROM_API", "true".to_owned()),
            ("JOB_NAMESPACE", JOB_NAMESPACE.to_owned()),
            ("LOG_LEVEL", "warn".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect())
    }

    /// One slot per pulse at a time: counting proxies for the HyperFleet API and Maestro REST,
    /// and a kubeconfig of a ServiceAccount of its own, bound to the shipped Role.
    async fn slots(&self, concurrency: usize) -> Result<Vec<Arc<Slot>>> {
        let hyperfleet = socket_of(self.real.var("HYPERFLEET_API_URL"))?;
        let maestro = socket_of(self.real.var("MAESTRO_API_URL"))?;
        let accounts: Vec<String> = (0..concurrency).map(slot_account).collect();
        for account in &accounts {
            apply(
                &self.kube,
                &json!({"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": account, "namespace": JOB_NAMESPACE}}),
            )
            .await?;
        }
        let subjects: Vec<Value> = accounts
            .iter()
            .map(|a| json!({"kind": "ServiceAccount", "name": a, "namespace": JOB_NAMESPACE}))
            .collect();
        apply(
            &self.kube,
            &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "bench-real-fleet-slots", "namespace": JOB_NAMESPACE},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                    "name": "hypershift-adapter-job-status"},
                "subjects": subjects}),
        )
        .await?;
        let mut slots = Vec::with_capacity(concurrency);
        for (index, account) in accounts.iter().enumerate() {
            let dir = self.dir.path().join(format!("slot-{index:02}"));
            std::fs::create_dir_all(&dir)?;
            let kubeconfig = service_account_kubeconfig(
                &self.real,
                &self.kube,
                JOB_NAMESPACE,
                account,
                3600,
                &dir.join("kubeconfig"),
            )
            .await?;
            slots.push(Arc::new(Slot {
                index,
                hyperfleet: Sniffer::start(hyperfleet).await?,
                maestro_rest: Sniffer::start(maestro).await?,
                kube: None,
                kubeconfig,
                dir,
            }));
        }
        Ok(slots)
    }

    async fn metrics(&self) -> Result<BTreeMap<String, f64>> {
        let text = self
            .http
            .get(&self.metrics_url)
            .send()
            .await?
            .error_for_status()?
            .text()
            .await?;
        Ok(parse_metrics(&text))
    }

    /// The servers' background CPU, per second, over `window` with nothing sent to them.
    async fn idle(&self, window: Duration) -> Result<BTreeMap<String, f64>> {
        let before = CpuSample::now();
        tokio::time::sleep(window).await;
        let after = CpuSample::now();
        let seconds = after.at.duration_since(before.at).as_secs_f64();
        Ok(cpu_between(&self.pids, &before, &after, self.ticks)
            .into_iter()
            .map(|(name, cpu)| (name, cpu.as_secs_f64() / seconds))
            .collect())
    }

    async fn watch(&self) -> Result<Watch> {
        Ok(Watch {
            metrics: self.metrics().await?,
            audit: LogTail::at_end(&self.real.state_dir().join("logs/kube-audit.log")),
            cpu: CpuSample::now(),
            load: load_average(),
        })
    }

    /// Every cluster's work is on the consumer its create report named, and no management cluster
    /// holds more than its `max_hosted_clusters`.
    async fn check_placement(&self, placed_on: &[Option<String>]) -> Result<()> {
        let mut held: BTreeMap<String, String> = BTreeMap::new();
        for mc in &self.mcs {
            for bundle in
                bundles(&self.http, self.real.var("MAESTRO_API_URL"), &mc.consumer).await?
            {
                if let Some(name) = bundle["metadata"]["name"].as_str() {
                    held.insert(name.to_owned(), mc.consumer.clone());
                }
            }
        }
        let mut load: BTreeMap<&str, u64> = BTreeMap::new();
        for (n, id) in self.ids.iter().enumerate() {
            let on = held.get(&format!("hostedcluster-{id}"));
            ensure!(
                on == placed_on[n].as_ref(),
                "cluster {id}: reported on {:?}, Maestro holds it on {on:?}",
                placed_on[n]
            );
            *load.entry(on.map_or("", String::as_str)).or_default() += 1;
        }
        println!("\n== load per management cluster after the creates (Maestro's bundles)");
        for mc in &self.mcs {
            let l = load.get(mc.consumer.as_str()).copied().unwrap_or(0) + mc.existing;
            println!(
                "  {:<20} {l} / {} ({} from earlier runs)",
                mc.consumer, mc.max, mc.existing
            );
            ensure!(
                l <= mc.max,
                "{} holds {l}, over its {}",
                mc.consumer,
                mc.max
            );
        }
        Ok(())
    }

    /// The played operator takes over each sampled HostedCluster once its agent applied it, and
    /// reports it available (the recorded status).
    async fn operator_reports_available(&self, sample: &[usize]) -> Result<()> {
        let operator = Operator::new(self.kube.clone());
        let deadline = Instant::now() + SETTLE;
        let writes = futures::stream::iter(sample.iter().map(|&n| {
            let (operator, name) = (operator.clone(), self.names[n].clone());
            async move {
                while operator.hosted_cluster(&name).await?.is_none() {
                    ensure!(
                        Instant::now() < deadline,
                        "HostedCluster {name} not applied within {SETTLE:?}"
                    );
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                operator
                    .write_hosted_cluster(&name, HostedClusterStage::Available)
                    .await
                    .map(|_| ())
            }
        }))
        .buffer_unordered(SETUP_CONCURRENCY)
        .collect::<Vec<_>>()
        .await;
        writes.into_iter().collect()
    }

    /// Maestro's `resource_first_status_latency_seconds` of the works made since `before`: from
    /// the create to the agent's first status.
    async fn first_status_latency(&self, before: &BTreeMap<String, f64>) -> Result<()> {
        let after = self.metrics().await?;
        let mut latencies: Vec<Duration> = metric_changes(before, &after, |n| {
            n == "resource_first_status_latency_seconds_sum"
        })
        .values()
        .map(|s| Duration::from_secs_f64(s.max(0.0)))
        .collect();
        latencies.sort();
        if latencies.is_empty() {
            println!("first agent status   (Maestro reported no first-status latency)");
        } else {
            println!(
                "first agent status   after the create, {} works: p50 {:.0} ms   p99 {:.0} ms   max {:.0} ms (Maestro's resource_first_status_latency_seconds)",
                latencies.len(),
                ms(percentile(&latencies, 50.0)),
                ms(percentile(&latencies, 99.0)),
                ms(percentile(&latencies, 100.0))
            );
        }
        Ok(())
    }

    /// Waits until every sampled work's status feedback says `Available=True`.
    async fn wait_for_feedback(&self, sample: &[usize]) -> Result<()> {
        let wanted: BTreeSet<String> = sample
            .iter()
            .map(|&n| format!("hostedcluster-{}", self.ids[n]))
            .collect();
        let deadline = Instant::now() + SETTLE;
        loop {
            let mut ready = 0;
            for mc in &self.mcs {
                ready += bundles(&self.http, self.real.var("MAESTRO_API_URL"), &mc.consumer)
                    .await?
                    .iter()
                    .filter(|b| {
                        b["metadata"]["name"]
                            .as_str()
                            .is_some_and(|n| wanted.contains(n))
                            && feedback_available(b)
                    })
                    .count();
            }
            if ready == wanted.len() {
                return Ok(());
            }
            ensure!(
                Instant::now() < deadline,
                "{ready} of {} works have their HostedCluster's available status fed back after {SETTLE:?}",
                wanted.len()
            );
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }
}

/// What the servers did during a phase.
struct Watch {
    metrics: BTreeMap<String, f64>,
    audit: LogTail,
    cpu: CpuSample,
    load: f64,
}

/// A phase's server-side figures.
struct Servers {
    cpu: BTreeMap<String, Duration>,
    postgres: BTreeMap<String, Duration>,
    seconds: f64,
    counters: BTreeMap<String, f64>,
    audit: Vec<AuditEvent>,
    unattributed: usize,
    /// Load average at the start and the end.
    load: (f64, f64),
}

impl Watch {
    /// Reads the servers after a phase and adds each slot's Kubernetes requests (audit log) to
    /// the pulse that made them.
    async fn finish(mut self, bed: &Bed, pulses: &mut [Pulse]) -> Result<Servers> {
        let cpu = CpuSample::now();
        let metrics = bed.metrics().await?;
        // The audit log is written when a request completes; give the last ones a moment.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let audit: Vec<AuditEvent> = self
            .audit
            .new_lines()?
            .iter()
            .filter_map(|l| parse_audit_line(l))
            .collect();
        let mut unattributed = 0;
        for event in &audit {
            let Some(slot) = slot_of(&event.username) else {
                continue;
            };
            match pulses.iter_mut().find(|p| {
                p.slot == slot && p.started_at <= event.received && event.received <= p.ended_at
            }) {
                Some(p) => *p.requests.entry(classify(&event.as_request())).or_default() += 1,
                None => unattributed += 1,
            }
        }
        let postmaster = bed.pids.get("postgres").copied();
        Ok(Servers {
            cpu: cpu_between(&bed.pids, &self.cpu, &cpu, bed.ticks),
            postgres: postmaster
                .map(|pid| postgres_by_database(pid, &self.cpu, &cpu, bed.ticks))
                .unwrap_or_default(),
            seconds: cpu.at.duration_since(self.cpu.at).as_secs_f64(),
            counters: metric_changes(&self.metrics, &metrics, |n| {
                n == "grpc_server_processed_total" || n == "rest_api_inbound_request_count"
            }),
            audit,
            unattributed,
            load: (self.load, load_average()),
        })
    }
}

impl Servers {
    fn publishes(&self) -> u64 {
        self.counters
            .iter()
            .filter(|(s, _)| {
                s.starts_with("grpc_server_processed_total") && label(s, "type") == Some("Publish")
            })
            .map(|(_, v)| *v as u64)
            .sum()
    }

    fn print(&self, name: &str, pulses: &[Pulse], elapsed: Duration, idle: &BTreeMap<String, f64>) {
        print_phase(name, pulses, elapsed, self.publishes());
        if self.unattributed > 0 {
            println!(
                "  ({} slot requests in the audit log fell outside every pulse)",
                self.unattributed
            );
        }
        let n = pulses.len() as f64;
        println!(
            "server CPU           {:.1} s phase; CPU s (share of one core), per pulse, idle share before",
            self.seconds
        );
        for (process, cpu) in &self.cpu {
            let secs = cpu.as_secs_f64();
            println!(
                "  {process:<26} {secs:>7.2} s ({:>5.1} %)  {:>7.1} ms/pulse   idle {:>4.1} %",
                100.0 * secs / self.seconds,
                1000.0 * secs / n,
                100.0 * idle.get(process).copied().unwrap_or(0.0)
            );
        }
        let live: Vec<String> = self
            .postgres
            .iter()
            .map(|(db, d)| format!("{db} {:.2} s", d.as_secs_f64()))
            .collect();
        println!(
            "  postgres backends alive at the end, by database: {}",
            live.join(", ")
        );
        let adapters: f64 = pulses.iter().map(|p| p.cpu.as_secs_f64()).sum();
        println!(
            "  {:<26} {adapters:>7.2} s ({:>5.1} %)  {:>7.1} ms/pulse (/usr/bin/time, 10 ms ticks)",
            "adapters",
            100.0 * adapters / self.seconds,
            1000.0 * adapters / n
        );
        println!("Maestro's counters   (server side, whole phase)");
        for (series, change) in &self.counters {
            println!("  {series:<100} {change}");
        }
        print_audit(&self.audit);
        println!(
            "machine              load average (1 min) {:.1} at the start, {:.1} at the end",
            self.load.0, self.load.1
        );
    }
}

/// The API server's requests during a phase by client, and each client's most frequent kinds.
fn print_audit(audit: &[AuditEvent]) {
    let mut by_client: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for event in audit {
        let who = if slot_of(&event.username).is_some() {
            "adapters (slot ServiceAccounts)".to_owned()
        } else {
            let agent = event.user_agent.split('/').next().unwrap_or_default();
            format!("{} as {}", agent, event.username)
        };
        let kind = classify(&event.as_request()).to_string();
        *by_client.entry(who).or_default().entry(kind).or_default() += 1;
    }
    println!("kube-apiserver       requests during the phase (audit log), by client");
    for (who, kinds) in by_client {
        println!("  {who:<70} {}", kinds.values().sum::<u64>());
        let mut top: Vec<(&String, &u64)> = kinds.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1));
        for (kind, count) in top.into_iter().take(6) {
            println!("    {kind:<96} {count}");
        }
    }
}

/// The 1-minute load average (`/proc/loadavg`; 0 when unreadable).
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// Whether a bundle's fed-back HostedCluster status (`statusFeedback` `status`) has
/// `Available=True`.
fn feedback_available(bundle: &Value) -> bool {
    bundle["status"]["resourceStatus"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| {
            r["statusFeedback"]["values"]
                .as_array()
                .into_iter()
                .flatten()
        })
        .filter(|v| v["name"] == "status")
        .filter_map(|v| v["fieldValue"]["jsonRaw"].as_str())
        .filter_map(|raw| serde_json::from_str::<Value>(raw).ok())
        .any(|status| {
            status["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Available" && c["status"] == "True")
        })
}

/// Every resource bundle of `consumer` in the Maestro at `base` (all pages).
async fn bundles(http: &reqwest::Client, base: &str, consumer: &str) -> Result<Vec<Value>> {
    let search = percent_encode(&format!("consumer_name='{consumer}'"));
    let mut out = Vec::new();
    for page in 1.. {
        let url =
            format!("{base}/api/maestro/v1/resource-bundles?search={search}&page={page}&size=400");
        let list: Value = http
            .get(&url)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let items = list["items"].as_array().cloned().unwrap_or_default();
        let short = items.len() < 400;
        out.extend(items);
        if short {
            break;
        }
    }
    Ok(out)
}

/// Registers one management cluster and has `mgmt-health` report it available.
async fn register(api: &HyperfleetApi, name: &str, region: &str, mc: &Mc) -> Result<()> {
    let body = management_cluster_body(name, region, &mc.consumer, Some(mc.max));
    let created = api
        .must("POST", &format!("{PREFIX}/{MC_PLURAL}"), Some(&body))
        .await?;
    let href = created["href"].as_str().context("no href")?;
    let now = jiff::Timestamp::now()
        .round(jiff::Unit::Second)?
        .to_string();
    let report = mgmt_health_report(&created["generation"], &now, Some(mc.max));
    let (code, answer) = api.put_status(href, &report).await?;
    ensure!(
        code == 201,
        "mgmt-health report for {name}: {code} {answer}"
    );
    Ok(())
}

/// `POST`s every cluster, a few at a time; their ids in the order of `names`.
async fn create_clusters(
    api: &HyperfleetApi,
    names: &[String],
    region: &str,
) -> Result<Vec<String>> {
    let created = futures::stream::iter(names.iter().map(|name| {
        let body = cluster_body(name, region);
        async move {
            let cluster = api
                .must("POST", &format!("{PREFIX}/clusters"), Some(&body))
                .await?;
            cluster["id"]
                .as_str()
                .map(str::to_owned)
                .context("the created cluster has no id")
        }
    }))
    .buffered(SETUP_CONCURRENCY)
    .collect::<Vec<_>>()
    .await;
    created.into_iter().collect()
}

/// The ServiceAccount of slot `index`.
fn slot_account(index: usize) -> String {
    format!("bench-real-fleet-slot-{index:02}")
}

/// The slot whose ServiceAccount `username` is (`system:serviceaccount:<ns>:<account>`).
fn slot_of(username: &str) -> Option<usize> {
    username
        .strip_prefix(&format!("system:serviceaccount:{JOB_NAMESPACE}:"))?
        .strip_prefix("bench-real-fleet-slot-")?
        .parse()
        .ok()
}

fn socket_of(url: &str) -> Result<SocketAddr> {
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .with_context(|| format!("{url} is not http://<ip>:<port>"))
}

/// Percent-encodes a query value (everything but unreserved characters).
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
