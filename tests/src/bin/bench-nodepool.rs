//! Benchmark of the real `hypershift-adapter nodepool` binary against the fake Maestro on
//! loopback.
//!
//! Set-up (not measured): the cluster's control plane as production puts it there — one real
//! `hypershift-adapter controlplane` pulse creates its work, then the agent feeds back the
//! HostedCluster `Available=True` — so every NodePool pulse that gates on the control plane reads
//! a real control-plane work.
//!
//! Per pulse: the adapter started under `/usr/bin/time` with a HyperFleet NodePool file (a GCP
//! NodePool, production-shaped: UUIDv7 ids, a 15-character name), until it exits with its report
//! written. Measures wall time, peak RSS, CPU time, and the REST GETs and gRPC Publishes each
//! pulse costs.
//!
//! Modes: `steady` — one NodePool, created and reported ready before the measured pulses, each
//! of which only reads its work (target 1 GET, 0 Publishes); `create` — a new NodePool every
//! pulse: its work is missing, the control plane's is read (the gate), the work is created
//! (2 GETs + 1 Publish); `update` — per measured pulse a new NodePool created (unmeasured) at
//! generation 1 with 3 replicas and reported ready, the pulse at generation 2 with 5 (2 GETs: its
//! work and the control plane's, + 1 update Publish); `delete` — per NodePool a work created and
//! reported ready (unmeasured) with the NodePool's finalizer held, then three measured pulses with
//! `deleted_time` set: the one that requests the deletion (1 GET + 1 delete Publish), one while
//! the finalizer holds it (1 GET), one after it is gone (1 GET, 404).
//!
//! Results and the machine they were measured on: `docs/benchmarks.md`.
//!
//! ```text
//! cargo build --release -p hypershift-adapter          # alone, as the Dockerfile builds it
//! cargo build --release -p testbed --bin bench-nodepool
//! target/release/bench-nodepool --pulses 50 --mode steady
//! target/release/bench-nodepool --pulses 50 --mode create
//! target/release/bench-nodepool --pulses 50 --mode update
//! target/release/bench-nodepool --pulses 50 --mode delete
//! ```
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::{Parser, ValueEnum};
use serde_json::{Value, json};
use testbed::bench::{ms, percentile, print_binary, print_rss, run_adapter};
use testbed::ids::{CLUSTER_ID, LONGEST_CLUSTER_NAME, LONGEST_NODEPOOL_NAME};
use testbed::local_pulse::scenario::{Stage, VERSION, hosted_cluster_status};
use testbed::maestro::{FakeMaestro, FakeOptions};
use testbed::nodepool::{NodePoolStatus, gcp_spec, nodepool_object, soft_delete};

const CLUSTER: &str = include_str!("../../../adapter/tests/fixtures/cluster-valid.json");
const CONSUMER: &str = "bench-mgmt";
/// The NodePool's finalizer held in `delete` mode (`hypershift-api.md` §5).
const FINALIZER: &str = "hypershift.openshift.io/finalizer";

#[derive(Debug, Parser)]
struct Args {
    /// Pulses to measure (`delete`: NodePools, three pulses each).
    #[arg(long, default_value_t = 50)]
    pulses: usize,
    /// What each pulse finds.
    #[arg(long, value_enum, default_value = "steady")]
    mode: Mode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// One NodePool: created and ready once, then read with feedback on every pulse.
    Steady,
    /// A new NodePool every pulse: GET (404) + GET of the control plane's work + Publish.
    Create,
    /// A work at generation 1: GET + GET of the control plane's work + update Publish.
    Update,
    /// A deleting NodePool: GET + delete Publish, then GET while deleting, then GET once gone.
    Delete,
}

/// The stages of a deletion, each measured once per NodePool in `delete` mode.
const DELETE_STAGES: [&str; 3] = ["requested", "in progress", "gone"];

struct Pulse {
    /// Which pulse of the mode this was (`delete` mode has three per NodePool).
    stage: &'static str,
    wall: Duration,
    max_rss_kib: u64,
    cpu: Duration,
    gets: u64,
    publishes: u64,
    /// The spec actions published (`create_request`, `update_request`, `delete_request`).
    actions: Vec<String>,
    /// Applied's and Available's reasons.
    applied: String,
    available: String,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(bench(args))
}

/// A distinct UUIDv7 NodePool id per `n`.
fn nodepool_id(n: usize) -> String {
    format!(
        "019a6f2b-8d13-7a64-b5c2-{:012x}",
        n as u64 & 0xffff_ffff_ffff
    )
}

fn work_of(n: usize) -> String {
    format!("nodepool-{}", nodepool_id(n))
}

/// NodePool `n` at `generation` with `replicas`.
fn nodepool(n: usize, generation: i64, replicas: i64) -> Value {
    nodepool_object(
        &nodepool_id(n),
        LONGEST_NODEPOOL_NAME,
        CLUSTER_ID,
        generation,
        gcp_spec(replicas, VERSION),
    )
}

async fn bench(args: Args) -> Result<()> {
    let binary = testbed::binaries::path("hypershift-adapter");
    let maestro = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.to_owned()],
        ..FakeOptions::default()
    })
    .await?;
    // The agent reports, and finishes deletions, only when told.
    maestro.set_agent_delay(None);
    let dir = tempfile::tempdir()?;
    control_plane(&binary, &maestro, dir.path()).await?;

    let mut pulses = Vec::with_capacity(args.pulses);
    match args.mode {
        Mode::Steady => {
            created_and_ready(&binary, &maestro, dir.path(), 0).await?;
            for i in 0..args.pulses {
                let pulse = one_pulse(
                    &binary,
                    &maestro,
                    dir.path(),
                    &nodepool(0, 1, 3),
                    &i.to_string(),
                )
                .await?;
                expect(&pulse, "ManifestWorkApplied", "NodePoolReady", i)?;
                pulses.push(pulse);
            }
        }
        Mode::Create => {
            for i in 0..args.pulses {
                let pulse = one_pulse(
                    &binary,
                    &maestro,
                    dir.path(),
                    &nodepool(i + 1, 1, 3),
                    &i.to_string(),
                )
                .await?;
                expect(&pulse, "ManifestWorkCreated", "Provisioning", i)?;
                pulses.push(pulse);
            }
        }
        Mode::Update => {
            for i in 0..args.pulses {
                let n = i + 1;
                created_and_ready(&binary, &maestro, dir.path(), n).await?;
                let pulse = one_pulse(
                    &binary,
                    &maestro,
                    dir.path(),
                    &nodepool(n, 2, 5),
                    &i.to_string(),
                )
                .await?;
                expect(&pulse, "ManifestWorkUpdated", "NodePoolReady", i)?;
                if pulse.actions != ["update_request"] {
                    bail!("pulse {i} published {:?}, not one update", pulse.actions);
                }
                pulses.push(pulse);
            }
        }
        Mode::Delete => {
            for i in 0..args.pulses {
                let n = i + 1;
                created_and_ready(&binary, &maestro, dir.path(), n).await?;
                if !maestro.hold_delete(&work_of(n), &[FINALIZER]) {
                    bail!("the work of NodePool {n} is not stored");
                }
                let mut deleting = nodepool(n, 1, 3);
                soft_delete(&mut deleting, &jiff::Timestamp::now().to_string());
                for stage in DELETE_STAGES {
                    if stage == "gone" && !maestro.release_delete(&work_of(n)) {
                        bail!("the work of NodePool {n} was not being deleted");
                    }
                    let label = format!("{i}-{}", stage.replace(' ', "-"));
                    let mut pulse =
                        one_pulse(&binary, &maestro, dir.path(), &deleting, &label).await?;
                    pulse.stage = stage;
                    let applied = if stage == "gone" {
                        "CleanupConfirmed"
                    } else {
                        "DeletionRequested"
                    };
                    let available = if stage == "gone" {
                        "Deleted"
                    } else {
                        "Deleting"
                    };
                    expect(&pulse, applied, available, i)?;
                    pulses.push(pulse);
                }
            }
        }
    }
    report(&args, &binary, &pulses)
}

fn expect(pulse: &Pulse, applied: &str, available: &str, i: usize) -> Result<()> {
    if pulse.applied != applied || pulse.available != available {
        bail!(
            "pulse {i} reported Applied {} / Available {} instead of {applied} / {available}",
            pulse.applied,
            pulse.available
        );
    }
    Ok(())
}

/// Unmeasured: the control plane's real pulse creates its work; the agent reports the
/// HostedCluster available.
async fn control_plane(binary: &Path, maestro: &FakeMaestro, dir: &Path) -> Result<()> {
    let run_dir = dir.join("controlplane");
    std::fs::create_dir_all(&run_dir)?;
    let mut cluster: Value = serde_json::from_str(CLUSTER)?;
    cluster["name"] = json!(LONGEST_CLUSTER_NAME);
    let spec = run_dir.join("cluster.json");
    std::fs::write(&spec, cluster.to_string())?;
    let results = run_dir.join("adapter-report.json");
    let status = tokio::process::Command::new(binary)
        .arg("controlplane")
        .env_clear()
        .env("CLUSTER_SPEC_FILE", &spec)
        .env("RESULTS_OUTPUT_PATH", &results)
        .env("MANAGEMENT_CLUSTER_CONSUMER", CONSUMER)
        .env("MAESTRO_API_URL", maestro.rest_url())
        .env("MAESTRO_GRPC_URL", maestro.grpc_url())
        .env("LOG_LEVEL", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .status()
        .await?;
    if !status.success() {
        bail!("the control plane's pulse failed: {status}");
    }
    let work = format!("hostedcluster-{CLUSTER_ID}");
    if !maestro.set_feedback(&work, &hosted_cluster_status(Stage::Ready)) {
        bail!("the control plane's pulse did not create {work}");
    }
    Ok(())
}

/// Unmeasured: NodePool `n`'s work is created at generation 1 and the agent reports it ready.
async fn created_and_ready(
    binary: &Path,
    maestro: &FakeMaestro,
    dir: &Path,
    n: usize,
) -> Result<()> {
    let label = format!("setup-{n}");
    let created = one_pulse(binary, maestro, dir, &nodepool(n, 1, 3), &label).await?;
    expect(&created, "ManifestWorkCreated", "Provisioning", n)?;
    if !maestro.set_feedback(
        &work_of(n),
        &NodePoolStatus::gcp_ready(3, VERSION).to_json(),
    ) {
        bail!("the set-up work {n} is not stored");
    }
    Ok(())
}

async fn one_pulse(
    binary: &Path,
    maestro: &FakeMaestro,
    dir: &Path,
    nodepool: &Value,
    label: &str,
) -> Result<Pulse> {
    let run_dir = dir.join(format!("pulse-{label}"));
    std::fs::create_dir_all(&run_dir)?;
    let spec = run_dir.join("nodepool.json");
    std::fs::write(&spec, nodepool.to_string())?;
    let run = run_adapter(
        binary,
        "nodepool",
        maestro,
        CONSUMER,
        &run_dir,
        &[("NODEPOOL_SPEC_FILE", spec.as_os_str())],
    )
    .await?;
    Ok(Pulse {
        stage: "",
        wall: run.wall,
        max_rss_kib: run.max_rss_kib,
        cpu: run.cpu,
        gets: run.gets,
        publishes: run.publishes,
        applied: run.reason("Applied"),
        available: run.reason("Available"),
        actions: run.actions,
    })
}

fn report(args: &Args, binary: &Path, pulses: &[Pulse]) -> Result<()> {
    if pulses.is_empty() {
        bail!("no pulses measured");
    }
    let wall: Vec<Duration> = pulses.iter().map(|p| p.wall).collect();
    let rss: Vec<u64> = pulses.iter().map(|p| p.max_rss_kib).collect();
    let cpu: Vec<Duration> = pulses.iter().map(|p| p.cpu).collect();
    println!(
        "mode                 {:?} ({} pulses)",
        args.mode,
        pulses.len()
    );
    println!(
        "wall time per pulse  p50 {:.2} ms   p95 {:.2} ms   max {:.2} ms",
        ms(percentile(&wall, 50.0)),
        ms(percentile(&wall, 95.0)),
        ms(percentile(&wall, 100.0))
    );
    print_rss(&rss);
    println!(
        "CPU (user+sys)       p50 {:.0} ms   max {:.0} ms   (/usr/bin/time has 10 ms resolution)",
        ms(percentile(&cpu, 50.0)),
        ms(percentile(&cpu, 100.0))
    );
    let stages: &[&str] = match args.mode {
        Mode::Delete => &DELETE_STAGES,
        _ => &[""],
    };
    for &stage in stages {
        let of_stage: Vec<&Pulse> = pulses.iter().filter(|p| p.stage == stage).collect();
        let gets: Vec<u64> = of_stage.iter().map(|p| p.gets).collect();
        let publishes: Vec<u64> = of_stage.iter().map(|p| p.publishes).collect();
        let (gets_target, publishes_target) = match (args.mode, stage) {
            (Mode::Steady, _) | (Mode::Delete, "in progress" | "gone") => ("1", "0"),
            (Mode::Delete, _) => ("1", "1"),
            // The control plane's work is read before anything is sent.
            (Mode::Create | Mode::Update, _) => ("2", "1"),
        };
        let label = if stage.is_empty() {
            String::new()
        } else {
            format!(" [{stage}]")
        };
        println!(
            "REST GETs per pulse{label}  min {}   max {}   (target {gets_target})",
            percentile(&gets, 0.0),
            percentile(&gets, 100.0)
        );
        println!(
            "Publishes per pulse{label}  min {}   max {}   (target {publishes_target})",
            percentile(&publishes, 0.0),
            percentile(&publishes, 100.0)
        );
    }
    print_binary(binary)?;
    Ok(())
}
