//! Benchmark of the real `hypershift-adapter nodes` binary against the fake API server on
//! loopback: a synthetic cluster (default 5,000 realistic Nodes with 50 images each, their
//! Leases, and 200 kubelet CertificateSigningRequests with real PKCS#10 requests, some pending) is
//! put into the testbed `ApiServer` once, then the binary checks it `--runs` times.
//!
//! Per run: the binary under `/usr/bin/time -f "%M %U %S"` (peak RSS; user+system CPU in 10 ms
//! ticks), its own CPU time from the `cpu_us` field of its `report written` log line
//! (`/proc/self/task/*/schedstat`, nanosecond precision), wall time from spawn to exit, and the
//! LIST pages it requested.
//!
//! ```text
//! cargo build --release -p hypershift-adapter          # alone, as the Dockerfile builds it
//! cargo build --release -p testbed --bin bench-nodes
//! target/release/bench-nodes --runs 10
//! ```
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use hypershift_adapter::pulse::nodes::testing;
use testbed::bench::{closing_cpu, ms, parse_time, percentile, print_binary, print_rss};
use testbed::csr::KubeletCsr;
use testbed::kube_api::ApiServer;

#[derive(Debug, Parser)]
struct Args {
    /// Runs to measure.
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Nodes in the synthetic cluster.
    #[arg(long, default_value_t = 5000)]
    nodes: usize,
    /// Container images per Node status (the kubelet reports up to 50; 50 makes a Node ~13 KB
    /// of JSON).
    #[arg(long, default_value_t = 50)]
    images: u16,
    /// `--page-size` given to the adapter.
    #[arg(long, default_value_t = 250)]
    page_size: u32,
    /// Kubelet certificate signing requests in the cluster (mostly approved, one in 5 pending;
    /// the API server deletes decided ones after an hour, so a cluster holds few).
    #[arg(long, default_value_t = 200)]
    csrs: usize,
}

struct Run {
    wall: Duration,
    /// From the adapter's own log line (schedstat, ns precision).
    cpu: Duration,
    /// From `/usr/bin/time` (10 ms ticks).
    cpu_ticks: Duration,
    max_rss_kib: u64,
    pages: usize,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    runtime.block_on(bench(args))
}

async fn bench(args: Args) -> Result<()> {
    let binary = testbed::binaries::path("hypershift-adapter");
    let server = ApiServer::start().await;
    let now = jiff::Timestamp::now();
    let cluster = testing::synthetic_cluster(args.nodes, 42, now);
    let mut node_bytes = 0usize;
    for node in &cluster {
        let object =
            serde_json::to_value(testing::node_object_with_images(&node.summary, args.images))?;
        node_bytes += serde_json::to_vec(&object)?.len();
        server.put_node(object);
        server.put_lease(
            "kube-node-lease",
            serde_json::to_value(testing::lease_object(&node.lease))?,
        );
    }
    for csr in testing::synthetic_csrs(args.csrs, 42, now) {
        let object = KubeletCsr {
            name: &csr.name,
            created: csr.created,
            signer: csr.signer,
            username: &csr.username,
            node: &csr.node,
            conditions: &csr.conditions,
        }
        .object()?;
        server.put_csr(object);
    }
    let dir = tempfile::tempdir()?;
    let kubeconfig = server.write_kubeconfig(dir.path());
    let mut runs = Vec::with_capacity(args.runs);
    for i in 0..args.runs {
        runs.push(one_run(&args, &binary, &server, dir.path(), &kubeconfig, i).await?);
    }
    report(&args, &binary, node_bytes, &runs)
}

async fn one_run(
    args: &Args,
    binary: &Path,
    server: &ApiServer,
    dir: &Path,
    kubeconfig: &Path,
    i: usize,
) -> Result<Run> {
    let results = dir.join(format!("report-{i}.json"));
    let time_file = dir.join(format!("time-{i}.txt"));
    let before = server.requests().len();
    let started = Instant::now();
    let out = tokio::process::Command::new("/usr/bin/time")
        .arg("-f")
        .arg(testbed::bench::TIME_FORMAT)
        .arg("-o")
        .arg(&time_file)
        .arg(binary)
        .arg("nodes")
        .env_clear()
        .env("KUBECONFIG", kubeconfig)
        .env("RESULTS_OUTPUT_PATH", &results)
        .env("PAGE_SIZE", args.page_size.to_string())
        .env("VERIFICATION_TAINTS", testing::SYNTHETIC_TAINT)
        .env("LOG_FORMAT", "json")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), out)
        .await
        .context("the adapter did not exit within 120 s")?
        .context("starting /usr/bin/time (apt-get install time)")?;
    let wall = started.elapsed();
    let logs = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!("the adapter failed: {}\n{logs}", out.status);
    }
    let report = job_report::parse(&std::fs::read(&results)?, "Available")?;
    let applied = report.condition("Applied").context("no Applied")?;
    if applied.reason != "ChecksExecuted" {
        bail!("run {i}: Applied {}: {}", applied.reason, applied.message);
    }
    let checked = format!("Checked {} nodes", args.nodes);
    if !applied.message.starts_with(&checked) {
        bail!("run {i}: {:?} is not {checked:?}…", applied.message);
    }
    let pages = server.requests()[before..]
        .iter()
        .filter(|r| {
            r.path.ends_with("/nodes")
                || r.path.ends_with("/leases")
                || r.path.ends_with("/certificatesigningrequests")
        })
        .count();
    let (max_rss_kib, cpu_ticks) = parse_time(&std::fs::read_to_string(&time_file)?)?;
    Ok(Run {
        wall,
        cpu: closing_cpu(&logs)?,
        cpu_ticks,
        max_rss_kib,
        pages,
    })
}

fn report(args: &Args, binary: &Path, node_bytes: usize, runs: &[Run]) -> Result<()> {
    if runs.is_empty() {
        bail!("--runs must be at least 1");
    }
    let cpu: Vec<Duration> = runs.iter().map(|r| r.cpu).collect();
    let ticks: Vec<Duration> = runs.iter().map(|r| r.cpu_ticks).collect();
    let rss: Vec<u64> = runs.iter().map(|r| r.max_rss_kib).collect();
    let wall: Vec<Duration> = runs.iter().map(|r| r.wall).collect();
    let pages: Vec<usize> = runs.iter().map(|r| r.pages).collect();
    println!(
        "cluster              {} nodes + {} leases + {} CSRs, {} images/node, {:.1} MB of Node JSON; --page-size {} ({} runs)",
        args.nodes,
        args.nodes,
        args.csrs,
        args.images,
        node_bytes as f64 / 1e6,
        args.page_size,
        runs.len()
    );
    println!(
        "CPU (schedstat)      p50 {:.1} ms   max {:.1} ms",
        ms(percentile(&cpu, 50.0)),
        ms(percentile(&cpu, 100.0))
    );
    println!(
        "CPU (/usr/bin/time)  p50 {:.0} ms   max {:.0} ms   (user+sys, 10 ms ticks)",
        ms(percentile(&ticks, 50.0)),
        ms(percentile(&ticks, 100.0))
    );
    print_rss(&rss);
    println!(
        "wall time            p50 {:.0} ms   max {:.0} ms   (spawn to exit, server on the same machine)",
        ms(percentile(&wall, 50.0)),
        ms(percentile(&wall, 100.0))
    );
    println!(
        "LIST pages per run   p50 {}   max {}   (nodes + leases + CSRs)",
        percentile(&pages, 50.0),
        percentile(&pages, 100.0)
    );
    print_binary(binary)?;
    Ok(())
}
