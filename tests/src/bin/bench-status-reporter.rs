//! Benchmark of the real `status-reporter` binary against the fake API server on loopback.
//!
//! Per run: a fresh Job and Pod, the reporter started under `/usr/bin/time`, then either a
//! report renamed into place (inotify or poll mode) or the adapter container terminated
//! (termination mode). Measures the time until the PATCH reaches the server (and until the run's
//! Event, created after it, does), peak RSS, CPU time and API requests per run.
//!
//! ```text
//! cargo build --release --bins
//! target/release/bench-status-reporter --runs 50 --mode inotify
//! ```
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use http::Method;
use serde_json::json;
use testbed::bench::{closing_cpu, ms, parse_time, percentile, print_binary, print_rss};
use testbed::kube_api::ApiServer;
use testbed::pulse_job::PulseJob;

#[derive(Debug, Parser)]
struct Args {
    /// Runs to measure.
    #[arg(long, default_value_t = 50)]
    runs: usize,
    /// What ends each run.
    #[arg(long, value_enum, default_value = "inotify")]
    mode: Mode,
    /// Poll interval given to the reporter (matters in poll mode).
    #[arg(long, default_value = "2")]
    poll_interval: String,
    /// The reporter's RECORD_EVENTS: `false` measures it without its Event.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    record_events: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Mode {
    /// Report renamed into place; inotify notices it.
    Inotify,
    /// Report renamed into place; only the poll tick notices it.
    Poll,
    /// No report; the adapter container terminates with exit code 1.
    Termination,
}

struct Run {
    latency: Duration,
    /// To the Event's POST; `None` when the run sent none (RECORD_EVENTS=false).
    event_latency: Option<Duration>,
    max_rss_kib: u64,
    cpu: Duration,
    requests: usize,
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
    let binary = testbed::binaries::path("status-reporter");
    let server = ApiServer::start().await;
    let dir = tempfile::tempdir()?;
    let kubeconfig = server.write_kubeconfig(dir.path());
    let mut runs = Vec::with_capacity(args.runs);
    for i in 0..args.runs {
        runs.push(one_run(&args, &binary, &server, dir.path(), &kubeconfig, i).await?);
    }
    report(&args, &binary, &runs)
}

async fn one_run(
    args: &Args,
    binary: &Path,
    server: &ApiServer,
    dir: &Path,
    kubeconfig: &Path,
    i: usize,
) -> Result<Run> {
    let job = PulseJob::seed(
        server,
        "bench",
        &testbed::pulse_job::controlplane_job_name(&testbed::ids::cluster_id(i as u64), 1),
        None,
    );
    let results_dir = dir.join(format!("run-{i}"));
    std::fs::create_dir_all(&results_dir)?;
    let results = results_dir.join("adapter-report.json");
    let time_file = results_dir.join("time.txt");
    let watch = match args.mode {
        Mode::Poll => "poll",
        Mode::Inotify | Mode::Termination => "inotify",
    };
    let child = tokio::process::Command::new("/usr/bin/time")
        .arg("-f")
        .arg(testbed::bench::TIME_FORMAT)
        .arg("-o")
        .arg(&time_file)
        .arg(binary)
        .env_clear()
        .envs(job.reporter_env(kubeconfig, &results))
        .env("FILE_WATCH", watch)
        .env("POLL_INTERVAL_SECONDS", &args.poll_interval)
        .env("LOG_LEVEL", "info")
        .env("RECORD_EVENTS", args.record_events.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("starting /usr/bin/time (apt-get install time)")?;

    wait_until_waiting(server, &job).await?;
    if let Mode::Poll = args.mode {
        // Land the report at a random phase of the poll tick, as a real adapter would.
        let interval = status_reporter::config::parse_duration(&args.poll_interval)
            .map_err(anyhow::Error::msg)?;
        tokio::time::sleep(interval.mul_f64(fastrand::f64())).await;
    }
    let started = match args.mode {
        Mode::Inotify | Mode::Poll => {
            let tmp = results_dir.join(".adapter-report.json.tmp");
            std::fs::write(&tmp, report_json().to_string())?;
            std::fs::rename(&tmp, &results)?;
            SystemTime::now()
        }
        Mode::Termination => {
            let now = SystemTime::now();
            server.terminate_container(&job.namespace, &job.pod, "adapter", 1, "Error", None);
            now
        }
    };
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .context("the reporter did not exit")??;
    if !out.status.success() {
        bail!("the reporter failed: {}", out.status);
    }
    let cpu = closing_cpu(&String::from_utf8_lossy(&out.stderr))?;
    let patched = server
        .requests()
        .into_iter()
        .find(|r| r.method == Method::PATCH && r.path.contains(&job.job))
        .context("no PATCH reached the server")?;
    let latency = patched.time.duration_since(started).unwrap_or_default();
    // The run's Event: a POST to the namespace's events whose name starts with the Job's.
    let event_prefix = format!("{}.", job.job);
    let is_event = |r: &testbed::kube_api::RecordedRequest| {
        r.method == Method::POST
            && r.path.ends_with("/events")
            && r.body_json().is_some_and(|b| {
                b["metadata"]["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with(&event_prefix))
            })
    };
    let event_latency = server
        .requests()
        .into_iter()
        .find(|r| is_event(r))
        .map(|r| r.time.duration_since(started).unwrap_or_default());
    let requests = server
        .requests()
        .iter()
        .filter(|r| {
            r.path.contains(&job.job)
                || r.path.ends_with("/pods") && r.query.as_deref().unwrap_or("").contains(&job.pod)
                || is_event(r)
        })
        .count();
    let (max_rss_kib, _) = parse_time(&std::fs::read_to_string(&time_file)?)?;
    Ok(Run {
        latency,
        event_latency,
        max_rss_kib,
        cpu,
        requests,
    })
}

async fn wait_until_waiting(server: &ApiServer, job: &PulseJob) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let requests = server.requests();
        let read = requests
            .iter()
            .any(|r| r.method == Method::GET && r.path.contains(&job.job));
        let watching = requests.iter().any(|r| {
            r.query.as_deref().unwrap_or("").contains(&job.pod)
                && r.query.as_deref().unwrap_or("").contains("watch")
        });
        if read && watching {
            // The watch request has arrived; give the reporter a moment to enter its loop.
            tokio::time::sleep(Duration::from_millis(20)).await;
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    bail!("the reporter never started waiting")
}

fn report_json() -> serde_json::Value {
    json!({
        "version": 1, "adapter": "hypershift-controlplane", "observed_generation": 1,
        "conditions": [
            {"type": "Applied", "status": "True", "reason": "ManifestWorkCreated", "message": "sent"},
            {"type": "Available", "status": "False", "reason": "Provisioning", "message": "in progress"},
            {"type": "Health", "status": "True", "reason": "NoIssues", "message": "fine"}
        ],
        "data": {"control_plane_endpoint": "", "version": ""}
    })
}

fn report(args: &Args, binary: &Path, runs: &[Run]) -> Result<()> {
    let latencies: Vec<Duration> = runs.iter().map(|r| r.latency).collect();
    let rss: Vec<u64> = runs.iter().map(|r| r.max_rss_kib).collect();
    let cpu: Vec<Duration> = runs.iter().map(|r| r.cpu).collect();
    let requests: Vec<usize> = runs.iter().map(|r| r.requests).collect();
    println!("mode                 {:?} ({} runs)", args.mode, runs.len());
    println!(
        "latency to PATCH     p50 {:.2} ms   p95 {:.2} ms   max {:.2} ms",
        ms(percentile(&latencies, 50.0)),
        ms(percentile(&latencies, 95.0)),
        ms(percentile(&latencies, 100.0))
    );
    let events: Vec<Duration> = runs.iter().filter_map(|r| r.event_latency).collect();
    if events.is_empty() {
        println!("latency to Event     none sent");
    } else {
        println!(
            "latency to Event     p50 {:.2} ms   p95 {:.2} ms   max {:.2} ms   ({} of {} runs)",
            ms(percentile(&events, 50.0)),
            ms(percentile(&events, 95.0)),
            ms(percentile(&events, 100.0)),
            events.len(),
            runs.len()
        );
    }
    print_rss(&rss);
    println!(
        "CPU (all threads)    p50 {:.2} ms   max {:.2} ms",
        ms(percentile(&cpu, 50.0)),
        ms(percentile(&cpu, 100.0))
    );
    println!(
        "API requests per run p50 {}   max {}   (Job GET + PATCH + pod watch + Event POST)",
        percentile(&requests, 50.0),
        percentile(&requests, 100.0)
    );
    print_binary(binary)?;
    Ok(())
}
