//! The fleet bench (issue 17 item 6): thousands of clusters over several regions and management
//! clusters, placed by the real `hypershift-adapter controlplane` binary against the fake Maestro
//! and the fake HyperFleet API, with concurrent pulses.
//!
//! Set-up (not measured): the fake HyperFleet API holds `--clusters` clusters (UUIDv7 ids given
//! by the API, 53-character names, the GCP spec of `local-pulse` with the region set), spread round
//! robin over `--regions` real GCP regions; in the inventory modes it also serves
//! `--per-region` `ManagementCluster` entities per region, each reported healthy by `mgmt-health`,
//! whose capacities make the region's clusters fit with one of them full
//! ([`testbed::bench::fleet::capacities`]). The fake Maestro has a consumer and an automatic work
//! agent per management cluster.
//!
//! 1. **Creates**: one pulse per cluster, `--concurrency` at a time. Each pulse is the release
//!    binary under `/usr/bin/time` (as `testbed::bench::run_adapter` runs it: a real process per
//!    pulse, so start-up, the token file read and connection set-up are in the figures) with
//!    `CLUSTER_ID` and `HYPERFLEET_API_URL`: it reads the cluster, finds no work, selects a
//!    management cluster and publishes. The placement (`data.management_cluster` of the report) is
//!    recorded as the fleet grows, for the plot.
//! 2. **Steady state**: `--steady` clusters sampled evenly over the placed fleet get a ready
//!    HostedCluster status fed back (not measured), then one pulse each, concurrently: it reads
//!    the cluster, finds its work and reports it.
//!
//! Requests are attributed to the pulse that sent them exactly, not averaged: each concurrency
//! slot runs its pulses one after another behind its own counting proxies for the HyperFleet API
//! and the Maestro REST API ([`testbed::bench::fleet::Sniffer`]). gRPC publishes are counted by
//! the fake Maestro for the whole phase.
//!
//! In the inventory modes the adapter takes its placement leases (docs/placement.md, "The placement
//! lease") from the testbed's fake Kubernetes API server (`KUBECONFIG`, `JOB_NAMESPACE`, a
//! `POD_NAME` per pulse), also behind a counting proxy per slot; after the creates the bench stops
//! if any management cluster holds more than its `max_hosted_clusters`.
//!
//! Inventory modes (`--inventory`): `static` (`MANAGEMENT_CLUSTER_CONSUMER`: one consumer, the
//! plumbing check), `api` (`MANAGEMENT_CLUSTERS_FROM_API=true`) and `file`
//! (`MANAGEMENT_CLUSTERS_FILE`, written from the API's entities).
//!
//! Results and the machine they were measured on: `docs/benchmarks.md`.
//!
//! ```text
//! cargo build --release -p hypershift-adapter
//! cargo build --release -p testbed --bin bench-fleet
//! target/release/bench-fleet --clusters 10000 --regions 3 --per-region 4 --concurrency 16
//! ```
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use serde_json::{Value, json};
use testbed::bench::fleet::{
    MC_PLURAL, RequestKind, Series, Sniffer, capacities, cluster_body, management_cluster_body,
    mgmt_health_report, padded_name, spread, svg,
};
use testbed::bench::pulses::{Phase, Slot, print_phase};
use testbed::hyperfleet::fake_api::{Clock, Config, FakeHyperfleetApi, PREFIX};
use testbed::kube_api::ApiServer;
use testbed::maestro::{FakeMaestro, FakeOptions};

/// Real GCP regions, taken in order by `--regions`.
const REGIONS: [&str; 6] = [
    "us-east1",
    "europe-west2",
    "asia-southeast1",
    "us-central1",
    "europe-west4",
    "us-west1",
];
/// The consumer of the static mode.
const STATIC_CONSUMER: &str = "mgmt-static-00";
/// The HyperFleet API's bearer token.
const TOKEN: &str = "fleet-bench-token";
/// The Jobs' namespace, where the placement leases live (`JOB_NAMESPACE`).
const JOB_NAMESPACE: &str = "hyperfleet";
/// The longest cluster name the recorded API allows.
const CLUSTER_NAME_LENGTH: usize = 53;

#[derive(Debug, Parser)]
struct Args {
    /// Clusters in the fleet (one create pulse each).
    #[arg(long, default_value_t = 10_000)]
    clusters: usize,
    /// Regions the clusters are spread over (round robin), 1–6.
    #[arg(long, default_value_t = 3)]
    regions: usize,
    /// Management clusters per region (inventory modes).
    #[arg(long, default_value_t = 4)]
    per_region: usize,
    /// Pulses running at the same time.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Clusters in the steady-state pass (sampled evenly over the fleet; 0 = none).
    #[arg(long, default_value_t = 1000)]
    steady: usize,
    /// Where the management clusters come from.
    #[arg(long, value_enum, default_value = "api")]
    inventory: Inventory,
    /// The adapter binary (default: `hypershift-adapter` next to this bench, same profile).
    #[arg(long)]
    adapter: Option<PathBuf>,
    /// Where the plot of load per management cluster goes.
    #[arg(long, default_value = "docs/fleet-load.svg")]
    svg: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Inventory {
    /// `MANAGEMENT_CLUSTER_CONSUMER`: every control plane on one consumer.
    Static,
    /// `MANAGEMENT_CLUSTERS_FROM_API=true`: the HyperFleet API's ManagementCluster entities.
    Api,
    /// `MANAGEMENT_CLUSTERS_FILE`: a file with the API's entities.
    File,
}

/// One management cluster of the fleet.
#[derive(Debug, Clone)]
struct Mc {
    name: String,
    region: String,
    consumer: String,
    /// `max_hosted_clusters` (`None` in static mode).
    max: Option<u64>,
}

/// The fakes and the fleet in them.
struct World {
    maestro: FakeMaestro,
    api: FakeHyperfleetApi,
    /// The Kubernetes API of the Jobs' namespace (the placement leases).
    kube: ApiServer,
    dir: tempfile::TempDir,
    mcs: Vec<Mc>,
    /// Cluster ids (as the API gave them) and regions, in creation order.
    clusters: Vec<(String, String)>,
    /// The adapter's environment except the per-pulse and per-slot settings.
    env: Vec<(String, String)>,
}

impl World {
    async fn start(args: &Args) -> Result<World> {
        let regions = &REGIONS[..args.regions];
        let per_region_clusters = |r: usize| {
            (args.clusters / args.regions + usize::from(r < args.clusters % args.regions)) as u64
        };
        let mcs: Vec<Mc> = match args.inventory {
            Inventory::Static => vec![Mc {
                name: STATIC_CONSUMER.into(),
                region: "(any)".into(),
                consumer: STATIC_CONSUMER.into(),
                max: None,
            }],
            Inventory::Api | Inventory::File => regions
                .iter()
                .enumerate()
                .flat_map(|(r, region)| {
                    capacities(per_region_clusters(r), args.per_region)
                        .into_iter()
                        .enumerate()
                        .map(move |(i, max)| Mc {
                            name: format!("mgmt-{region}-{i:02}"),
                            region: (*region).to_owned(),
                            consumer: format!("mgmt-{region}-{i:02}"),
                            max: Some(max),
                        })
                })
                .collect(),
        };
        let maestro = FakeMaestro::start(FakeOptions {
            consumers: mcs.iter().map(|m| m.consumer.clone()).collect(),
            agent_delay: Some(Duration::ZERO),
            ..FakeOptions::default()
        })
        .await?;
        let api = FakeHyperfleetApi::start(
            Config::recorded().with_token(TOKEN),
            Clock::at(jiff::Timestamp::now()),
        )
        .await?;
        let kube = ApiServer::start().await;
        let dir = tempfile::tempdir()?;
        let token_file = dir.path().join("hyperfleet-token");
        std::fs::write(&token_file, TOKEN)?;
        let mut env = vec![
            (
                "HYPERFLEET_API_TOKEN_FILE".to_owned(),
                path_text(&token_file),
            ),
            ("MAESTRO_GRPC_URL".to_owned(), maestro.grpc_url()),
            ("LOG_LEVEL".to_owned(), "warn".to_owned()),
        ];
        match args.inventory {
            Inventory::Static => {
                env.push((
                    "MANAGEMENT_CLUSTER_CONSUMER".to_owned(),
                    STATIC_CONSUMER.to_owned(),
                ));
            }
            Inventory::Api => {
                register_management_clusters(&api, &mcs)?;
                env.push(("MANAGEMENT_CLUSTERS_FROM_API".to_owned(), "true".to_owned()));
                env.push(("JOB_NAMESPACE".to_owned(), JOB_NAMESPACE.to_owned()));
            }
            Inventory::File => {
                register_management_clusters(&api, &mcs)?;
                env.push(("JOB_NAMESPACE".to_owned(), JOB_NAMESPACE.to_owned()));
                let file = dir.path().join("management-clusters.json");
                let list = api.call("GET", &format!("{PREFIX}/{MC_PLURAL}"), None);
                if list.status != 200 {
                    bail!(
                        "listing the management clusters: {} {}",
                        list.status,
                        list.body
                    );
                }
                let items = list.body["items"].clone();
                std::fs::write(&file, json!({ "items": items }).to_string())?;
                env.push(("MANAGEMENT_CLUSTERS_FILE".to_owned(), path_text(&file)));
            }
        }
        let mut clusters = Vec::with_capacity(args.clusters);
        for n in 0..args.clusters {
            let region = regions[n % regions.len()];
            let id = create_cluster(&api, region, n / regions.len())?;
            clusters.push((id, region.to_owned()));
        }
        Ok(World {
            maestro,
            api,
            kube,
            dir,
            mcs,
            clusters,
            env,
        })
    }

    fn mc_by_consumer(&self, consumer: &str) -> Option<&Mc> {
        self.mcs.iter().find(|m| m.consumer == consumer)
    }
}

/// Creates each management cluster's entity on the API (the spec docs/placement.md defines:
/// `region`, `maestro_consumer`, `max_hosted_clusters`, `cordoned`) and has `mgmt-health` report it
/// available at generation 1, in recording 49's shape, so its `Reconciled` is True.
fn register_management_clusters(api: &FakeHyperfleetApi, mcs: &[Mc]) -> Result<()> {
    for mc in mcs {
        let body = management_cluster_body(&mc.name, &mc.region, &mc.consumer, mc.max);
        let reply = api.call(
            "POST",
            &format!("{PREFIX}/{MC_PLURAL}"),
            Some(&body.to_string()),
        );
        if reply.status != 201 {
            bail!(
                "the API refused management cluster {}: {} {}",
                mc.name,
                reply.status,
                reply.body
            );
        }
        let id = reply.body["id"].as_str().context("no id")?;
        let report = mgmt_health_report(
            &reply.body["generation"],
            &api.clock().now().to_string(),
            mc.max,
        );
        let put = api.call(
            "PUT",
            &format!("{PREFIX}/{MC_PLURAL}/{id}/statuses"),
            Some(&report.to_string()),
        );
        if put.status != 201 {
            bail!(
                "mgmt-health report for {}: {} {}",
                mc.name,
                put.status,
                put.body
            );
        }
    }
    Ok(())
}

/// Creates a cluster in `region` on the API, as HyperFleet would (generation 1); returns its id.
fn create_cluster(api: &FakeHyperfleetApi, region: &str, index: usize) -> Result<String> {
    let body = cluster_body(&cluster_name(region, index), region);
    let reply = api.call(
        "POST",
        &format!("{PREFIX}/clusters"),
        Some(&body.to_string()),
    );
    if reply.status != 201 {
        bail!(
            "the API refused cluster {index} in {region}: {} {}",
            reply.status,
            reply.body
        );
    }
    reply.body["id"]
        .as_str()
        .map(str::to_owned)
        .context("the created cluster has no id")
}

/// A 53-character cluster name unique per region and index.
fn cluster_name(region: &str, index: usize) -> String {
    padded_name(&format!("prod-{region}-hcp-"), index, CLUSTER_NAME_LENGTH)
}

fn path_text(p: &Path) -> String {
    p.display().to_string()
}

fn socket_of(url: &str) -> Result<SocketAddr> {
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .with_context(|| format!("{url} is not http://<ip>:<port>"))
}

fn main() -> Result<()> {
    let args = Args::parse();
    if !(1..=REGIONS.len()).contains(&args.regions) {
        bail!(
            "--regions must be 1 to {} (the regions this bench knows: {REGIONS:?})",
            REGIONS.len()
        );
    }
    if args.per_region == 0 || args.concurrency == 0 || args.clusters == 0 {
        bail!("--clusters, --per-region and --concurrency must be at least 1");
    }
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
    let world = Arc::new(World::start(&args).await?);
    println!(
        "fleet                {} clusters over {} regions, {} management clusters ({:?} inventory), concurrency {}; set-up {:.1} s",
        args.clusters,
        args.regions,
        world.mcs.len(),
        args.inventory,
        args.concurrency,
        setup.elapsed().as_secs_f64()
    );
    let maestro_rest = socket_of(&world.maestro.rest_url())?;
    let hyperfleet = socket_of(world.api.url())?;
    let kube = socket_of(&world.kube.url())?;
    let mut slots = Vec::with_capacity(args.concurrency);
    for i in 0..args.concurrency {
        let dir = world.dir.path().join(format!("slot-{i:02}"));
        std::fs::create_dir_all(&dir)?;
        let kube = Sniffer::start(kube).await?;
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            world
                .kube
                .kubeconfig()
                .replace(&world.kube.url(), &kube.url()),
        )?;
        slots.push(Arc::new(Slot {
            index: i,
            hyperfleet: Sniffer::start(hyperfleet).await?,
            maestro_rest: Sniffer::start(maestro_rest).await?,
            kube: Some(kube),
            kubeconfig,
            dir,
        }));
    }
    let phase = Phase {
        binary: binary.clone(),
        slots,
        ids: Arc::new(world.clusters.iter().map(|(id, _)| id.clone()).collect()),
        env: Arc::new(world.env.clone()),
    };

    // Phase 1: creates, the load recorded as the fleet grows.
    let mut load: BTreeMap<String, u64> =
        world.mcs.iter().map(|m| (m.consumer.clone(), 0)).collect();
    let step = (args.clusters / 250).max(1) as u64;
    let mut history: Vec<(u64, BTreeMap<String, u64>)> = vec![(0, load.clone())];
    let mut placed_on: Vec<Option<String>> = vec![None; args.clusters];
    let mut creates = Vec::with_capacity(args.clusters);
    let publishes_before = world.maestro.publishes();
    let static_mode = args.inventory == Inventory::Static;
    let create_time = phase.run((0..args.clusters).collect(), |p| {
        if !p.applied.ends_with(" ManifestWorkCreated") {
            bail!(
                "create pulse of cluster {} reported Applied {:?} (Available {:?}, Health {:?})",
                world.clusters[p.cluster].0,
                p.applied,
                p.available,
                p.health
            );
        }
        let consumer = match (&p.management_cluster, static_mode) {
            (Some(c), _) => c.clone(),
            // Before issue 17 the static mode's report has no data.management_cluster.
            (None, true) => STATIC_CONSUMER.to_owned(),
            (None, false) => bail!(
                "the create report of cluster {} has no data.management_cluster",
                world.clusters[p.cluster].0
            ),
        };
        if let Some(mc) = world.mc_by_consumer(&consumer)
            && !static_mode
            && mc.region != world.clusters[p.cluster].1
        {
            bail!(
                "cluster {} in {} was placed on {} in {}",
                world.clusters[p.cluster].0,
                world.clusters[p.cluster].1,
                mc.name,
                mc.region
            );
        }
        *load.entry(consumer.clone()).or_default() += 1;
        placed_on[p.cluster] = Some(consumer);
        creates.push(p);
        let placed = creates.len() as u64;
        if placed.is_multiple_of(step) || placed == args.clusters as u64 {
            history.push((placed, load.clone()));
        }
        Ok(())
    })
    .await?;
    let create_publishes = world.maestro.publishes() - publishes_before;
    print_phase("create", &creates, create_time, create_publishes);

    // Where the works are, as the fake Maestro holds them, against what the reports said.
    let mut mismatches = 0;
    for (n, (id, _)) in world.clusters.iter().enumerate() {
        let held = world
            .maestro
            .resource(&format!("hostedcluster-{id}"))
            .map(|r| r.consumer);
        if held != placed_on[n] {
            mismatches += 1;
            if mismatches <= 3 {
                println!(
                    "MISMATCH             cluster {id}: reported {:?}, Maestro holds {held:?}",
                    placed_on[n]
                );
            }
        }
    }
    if mismatches > 0 {
        bail!("{mismatches} clusters are not where their create reports said");
    }
    let over = print_spread(&world, &load);
    if over > 0 {
        bail!("{over} management clusters hold more than their max_hosted_clusters");
    }

    // Phase 2: the steady state over a sample.
    let sample: Vec<usize> = if args.steady == 0 {
        Vec::new()
    } else {
        let every = (args.clusters / args.steady.min(args.clusters)).max(1);
        (0..args.clusters)
            .step_by(every)
            .take(args.steady)
            .collect()
    };
    if !sample.is_empty() {
        for &n in &sample {
            let work = format!("hostedcluster-{}", world.clusters[n].0);
            if !world.maestro.set_feedback(&work, &ready_status()) {
                bail!("the work {work} is not stored");
            }
        }
        let mut steady = Vec::with_capacity(sample.len());
        let publishes_before = world.maestro.publishes();
        let steady_time = phase.run(sample, |p| {
            if !p.applied.ends_with(" ManifestWorkApplied") {
                bail!(
                    "steady pulse of cluster {} reported Applied {:?} (Available {:?}, Health {:?})",
                    world.clusters[p.cluster].0,
                    p.applied,
                    p.available,
                    p.health
                );
            }
            if p.requests.keys().any(RequestKind::is_kube) {
                bail!(
                    "steady pulse of cluster {} made Kubernetes requests (the placement lease is for creates only): {:?}",
                    world.clusters[p.cluster].0,
                    p.requests
                );
            }
            if let Some(mc) = &p.management_cluster
                && Some(mc) != placed_on[p.cluster].as_ref()
            {
                bail!(
                    "steady pulse of cluster {} reports management cluster {mc}, created on {:?}",
                    world.clusters[p.cluster].0,
                    placed_on[p.cluster]
                );
            }
            steady.push(p);
            Ok(())
        })
        .await?;
        let steady_publishes = world.maestro.publishes() - publishes_before;
        print_phase("steady", &steady, steady_time, steady_publishes);
    }

    println!(
        "bench process        peak RSS {:.0} MiB (the fakes holding the fleet, and the proxies)",
        own_peak_rss_kib().unwrap_or(0) as f64 / 1024.0
    );
    testbed::bench::print_binary(&binary)?;

    let series: Vec<Series> = world
        .mcs
        .iter()
        .map(|mc| Series {
            name: mc.name.clone(),
            region: mc.region.clone(),
            capacity: mc.max,
            points: history
                .iter()
                .map(|(placed, l)| (*placed, l.get(&mc.consumer).copied().unwrap_or(0)))
                .collect(),
        })
        .collect();
    let title = "Control planes per management cluster as the fleet is placed";
    let subtitle = format!(
        "{} clusters over {} regions, {} per region ({:?} inventory), {} pulses at a time; dotted: max_hosted_clusters",
        args.clusters, args.regions, args.per_region, args.inventory, args.concurrency
    );
    if let Some(parent) = args.svg.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&args.svg, svg(title, &subtitle, &series))
        .with_context(|| format!("writing {}", args.svg.display()))?;
    println!("plot                 {}", args.svg.display());
    Ok(())
}

fn ready_status() -> Value {
    json!({
        "conditions": [
            {"type": "Available", "status": "True", "reason": "AsExpected", "message": ""},
            {"type": "Degraded", "status": "False", "reason": "AsExpected", "message": ""}
        ],
        "controlPlaneEndpoint": {"host": "api.bench.example.com", "port": 443},
        "version": {"history": [{"state": "Completed", "version": "4.17.0"}]}
    })
}

/// Prints the load per management cluster; returns how many hold more than their capacity.
fn print_spread(world: &World, load: &BTreeMap<String, u64>) -> usize {
    let mut over = 0;
    let mut regions: Vec<&str> = world.mcs.iter().map(|m| m.region.as_str()).collect();
    regions.dedup();
    println!();
    println!("== load per management cluster after the creates");
    for region in regions {
        let mcs: Vec<&Mc> = world.mcs.iter().filter(|m| m.region == region).collect();
        let loads: Vec<u64> = mcs
            .iter()
            .map(|m| load.get(&m.consumer).copied().unwrap_or(0))
            .collect();
        let not_full: Vec<u64> = mcs
            .iter()
            .zip(&loads)
            .filter(|(m, l)| m.max.is_none_or(|max| **l < max))
            .map(|(_, l)| *l)
            .collect();
        let (max, min) = spread(&loads);
        let (nf_max, nf_min) = spread(&not_full);
        let detail: Vec<String> = mcs
            .iter()
            .zip(&loads)
            .map(|(m, l)| match m.max {
                Some(max) => format!("{} {l}/{max}", m.name),
                None => format!("{} {l}", m.name),
            })
            .collect();
        println!("{region:<20} {}", detail.join(", "));
        println!(
            "{:<20} spread max/min {max}/{min}; among those not full {nf_max}/{nf_min}",
            ""
        );
        for (m, l) in mcs.iter().zip(&loads) {
            if let Some(cap) = m.max
                && *l > cap
            {
                println!("{:<20} OVER CAPACITY: {} holds {l}, max {cap}", "", m.name);
                over += 1;
            }
        }
    }
    let unknown: u64 = load
        .iter()
        .filter(|(c, _)| world.mc_by_consumer(c).is_none())
        .map(|(_, l)| *l)
        .sum();
    if unknown > 0 {
        println!("(and {unknown} on consumers outside the inventory)");
    }
    over
}

/// This process's peak RSS (`VmHWM`), in KiB.
fn own_peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
