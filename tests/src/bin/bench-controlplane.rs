//! Benchmark of the real `hypershift-adapter controlplane` binary against the fake Maestro on
//! loopback.
//!
//! Per pulse: the adapter started under `/usr/bin/time` with a cluster spec file, until it exits
//! with its report written. Measures wall time, peak RSS, CPU time, and the REST GETs and gRPC
//! Publishes each pulse cost (happy path target: 1 GET + at most 1 Publish).
//!
//! Modes: `create` — every pulse is a new cluster (GET 404 + Publish); `steady` — one cluster,
//! the first pulse creates, the agent then feeds back a ready HostedCluster status and every
//! later pulse only reads it (1 GET, 0 Publishes); `update` — per measured pulse a new cluster
//! whose work was created (unmeasured) at generation 3, the pulse at generation 4 with a new
//! OpenShift version (1 GET + 1 update Publish); `delete` — per cluster a work created and
//! applied (unmeasured) whose HostedCluster has a finalizer, then three measured pulses with
//! `deleted_time` set: the one that requests the deletion (1 GET + 1 delete Publish), one while
//! the finalizer holds it (1 GET), one after it is gone (1 GET, 404).
//!
//! `update` and `delete` need an adapter binary that publishes updates and deletes (issue 10);
//! with one that does not, they stop with a message saying so instead of printing numbers.
//!
//! Results and the machine they were measured on: `docs/benchmarks.md`.
//!
//! ```text
//! cargo build --release -p hypershift-adapter          # alone, as the Dockerfile builds it
//! cargo build --release -p testbed --bin bench-controlplane
//! target/release/bench-controlplane --pulses 50 --mode steady
//! target/release/bench-controlplane --pulses 50 --mode create
//! target/release/bench-controlplane --pulses 50 --mode update
//! target/release/bench-controlplane --pulses 50 --mode delete
//! ```
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::{Parser, ValueEnum};
use serde_json::{Value, json};
use testbed::bench::{ms, percentile, print_binary, print_rss, run_adapter};
use testbed::maestro::{FakeMaestro, FakeOptions};

const CLUSTER: &str = include_str!("../../../adapter/tests/fixtures/cluster-valid.json");
const CONSUMER: &str = "bench-mgmt";

#[derive(Debug, Parser)]
struct Args {
    /// Pulses to measure.
    #[arg(long, default_value_t = 50)]
    pulses: usize,
    /// What each pulse finds.
    #[arg(long, value_enum, default_value = "steady")]
    mode: Mode,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Mode {
    /// A new cluster every pulse: GET (404) + Publish.
    Create,
    /// One cluster: created once, then read with feedback on every pulse.
    Steady,
    /// A work at an older generation: GET + update Publish.
    Update,
    /// A deleting cluster: GET + delete Publish, then GET while deleting, then GET after it is gone.
    Delete,
}

/// The stages of a deletion, each measured once per cluster in `delete` mode.
const DELETE_STAGES: [&str; 3] = ["requested", "in progress", "gone"];

struct Pulse {
    /// Which pulse of the mode this was (`delete` mode has three per cluster).
    stage: &'static str,
    wall: Duration,
    max_rss_kib: u64,
    cpu: Duration,
    gets: u64,
    publishes: u64,
    /// The spec actions published (`create_request`, `update_request`, `delete_request`).
    actions: Vec<String>,
    reason: String,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(bench(args))
}

async fn bench(args: Args) -> Result<()> {
    let binary = testbed::binaries::path("hypershift-adapter");
    let maestro = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.to_owned()],
        ..FakeOptions::default()
    })
    .await?;
    let dir = tempfile::tempdir()?;
    let mut pulses = Vec::with_capacity(args.pulses);
    if let Mode::Steady = args.mode {
        // Pulse 0 (not measured) creates the work; the agent then reports a ready control plane.
        let warmup = one_pulse(&binary, &maestro, dir.path(), &cluster(0), "warmup").await?;
        if warmup.reason != "ManifestWorkCreated" {
            bail!("warm-up pulse reported {}", warmup.reason);
        }
        let id = cluster_id(0);
        if !maestro.set_feedback(&format!("hostedcluster-{id}"), &ready_status()) {
            bail!("the warm-up work is not stored");
        }
    }
    match args.mode {
        Mode::Create | Mode::Steady => {
            for i in 0..args.pulses {
                let n = match args.mode {
                    Mode::Create => i + 1,
                    _ => 0,
                };
                let pulse =
                    one_pulse(&binary, &maestro, dir.path(), &cluster(n), &i.to_string()).await?;
                let expected = match args.mode {
                    Mode::Create => "ManifestWorkCreated",
                    _ => "ManifestWorkApplied",
                };
                if pulse.reason != expected {
                    bail!(
                        "pulse {i} reported Applied {} instead of {expected}",
                        pulse.reason
                    );
                }
                pulses.push(pulse);
            }
        }
        Mode::Update => {
            for i in 0..args.pulses {
                let n = i + 1;
                created_and_ready(&binary, &maestro, dir.path(), n).await?;
                let mut next = cluster(n);
                next["generation"] = json!(4);
                next["spec"]["openshift_version"] = json!("4.17.1");
                let pulse = one_pulse(&binary, &maestro, dir.path(), &next, &i.to_string()).await?;
                if !pulse.actions.iter().any(|a| a == "update_request") {
                    bail!(
                        "the adapter binary did not publish an update for a generation-4 pulse on a work built at generation 3 (published {:?}, Applied {}): it does not update works yet (issue 10), so there are no update numbers to report",
                        pulse.actions,
                        pulse.reason
                    );
                }
                pulses.push(pulse);
            }
        }
        Mode::Delete => {
            for i in 0..args.pulses {
                let n = i + 1;
                created_and_ready(&binary, &maestro, dir.path(), n).await?;
                let work = format!("hostedcluster-{}", cluster_id(n));
                maestro.hold_delete(&work, &["hypershift.openshift.io/finalizer"]);
                let mut deleting = cluster(n);
                deleting["generation"] = json!(4);
                deleting["deleted_time"] = json!(jiff::Timestamp::now().to_string());
                for stage in DELETE_STAGES {
                    if stage == "gone" {
                        maestro.release_delete(&work);
                    }
                    let label = format!("{i}-{}", stage.replace(' ', "-"));
                    let mut pulse =
                        one_pulse(&binary, &maestro, dir.path(), &deleting, &label).await?;
                    pulse.stage = stage;
                    if stage == "requested" && !maestro.is_deleting(&work) {
                        bail!(
                            "the adapter binary did not request the deletion of a cluster with deleted_time set (published {:?}, Applied {}): it does not delete works yet (issue 10), so there are no delete numbers to report",
                            pulse.actions,
                            pulse.reason
                        );
                    }
                    pulses.push(pulse);
                }
            }
        }
    }
    report(&args, &binary, &pulses)
}

/// Unmeasured: the work of cluster `n` is created at generation 3 and the agent reports a ready
/// control plane.
async fn created_and_ready(
    binary: &Path,
    maestro: &FakeMaestro,
    dir: &Path,
    n: usize,
) -> Result<()> {
    let warmup = one_pulse(binary, maestro, dir, &cluster(n), &format!("setup-{n}")).await?;
    if warmup.reason != "ManifestWorkCreated" {
        bail!("set-up pulse {n} reported {}", warmup.reason);
    }
    if !maestro.set_feedback(&format!("hostedcluster-{}", cluster_id(n)), &ready_status()) {
        bail!("the set-up work {n} is not stored");
    }
    Ok(())
}

/// A distinct UUIDv7 cluster id per pulse.
fn cluster_id(n: usize) -> String {
    testbed::ids::cluster_id(n as u64)
}

fn cluster(n: usize) -> Value {
    let mut cluster: Value = serde_json::from_str(CLUSTER).unwrap_or_default();
    cluster["id"] = json!(cluster_id(n));
    cluster["name"] = json!(format!("bench-{n}"));
    cluster
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

async fn one_pulse(
    binary: &Path,
    maestro: &FakeMaestro,
    dir: &Path,
    cluster: &Value,
    label: &str,
) -> Result<Pulse> {
    let run_dir = dir.join(format!("pulse-{label}"));
    std::fs::create_dir_all(&run_dir)?;
    let spec = run_dir.join("cluster.json");
    std::fs::write(&spec, cluster.to_string())?;
    // The cluster comes from a file, so its NodePools do too: none (a deletion is not held).
    let nodepools = run_dir.join("nodepools.json");
    std::fs::write(&nodepools, r#"{"items":[],"page":1,"size":0,"total":0}"#)?;
    let run = run_adapter(
        binary,
        "controlplane",
        maestro,
        CONSUMER,
        &run_dir,
        &[
            ("CLUSTER_SPEC_FILE", spec.as_os_str()),
            ("NODEPOOLS_FILE", nodepools.as_os_str()),
        ],
    )
    .await?;
    Ok(Pulse {
        stage: "",
        wall: run.wall,
        max_rss_kib: run.max_rss_kib,
        cpu: run.cpu,
        gets: run.gets,
        publishes: run.publishes,
        reason: run.reason("Applied"),
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
            _ => ("1", "1"),
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
