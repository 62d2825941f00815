//! Concurrent adapter pulses with every request attributed to the pulse that sent it: the runner
//! of the fleet benches (`bench-fleet` against the fakes, `bench-real-fleet` against the kit's
//! real servers).
//!
//! A phase runs one pulse per cluster, `slots.len()` at a time. Each [`Slot`] runs its pulses one
//! after another behind its own counting proxies ([`Sniffer`]) for the HyperFleet API and the
//! Maestro REST API (and, against the fake Kubernetes API, for the placement leases), so the
//! requests a slot's proxies saw between a pulse's start and its exit are exactly that pulse's.
//! Each pulse is the adapter binary under `/usr/bin/time`: a real process per pulse, so start-up,
//! the token file read and connection set-up are in the figures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::fleet::{RequestKind, Sniffer, count_kinds};
use super::{TIME_FORMAT, ms, parse_time, percentile};

/// A concurrency slot: its own proxies and run directory; its pulses run one after another.
#[derive(Debug)]
pub struct Slot {
    /// Its place among the slots (0-based).
    pub index: usize,
    pub hyperfleet: Sniffer,
    pub maestro_rest: Sniffer,
    /// In front of a plain-HTTP Kubernetes API (the placement leases), when there is one;
    /// against a TLS API server the requests are counted from its audit log instead.
    pub kube: Option<Sniffer>,
    /// The slot's kubeconfig (`KUBECONFIG` of its pulses).
    pub kubeconfig: PathBuf,
    pub dir: PathBuf,
}

/// What one pulse cost and reported.
#[derive(Debug, Clone)]
pub struct Pulse {
    /// Index of the cluster in the phase's list of ids.
    pub cluster: usize,
    /// The slot that ran it.
    pub slot: usize,
    /// Wall-clock start and end (to match server-side records such as an audit log).
    pub started_at: SystemTime,
    pub ended_at: SystemTime,
    pub wall: Duration,
    pub rss_kib: u64,
    /// User + system CPU of the adapter process (`/usr/bin/time`, 10 ms resolution).
    pub cpu: Duration,
    pub requests: BTreeMap<RequestKind, u64>,
    /// `"<status> <reason>"` of the report's conditions.
    pub applied: String,
    pub available: String,
    pub health: String,
    /// `data.management_cluster` of the report.
    pub management_cluster: Option<String>,
}

/// One pulse of `binary controlplane` for `cluster_id` in `slot`, with `env` plus the slot's
/// settings (`CLUSTER_ID`, the proxies' URLs, `RESULTS_OUTPUT_PATH`, `KUBECONFIG`, a `POD_NAME`
/// as a Job controller names the Pod of the cluster's first pulse Job).
///
/// # Errors
/// When the adapter cannot start, fails, takes more than 60 s, or writes no valid report.
pub async fn one_pulse(
    binary: &Path,
    slot: &Slot,
    env: &[(String, String)],
    cluster_id: &str,
    cluster: usize,
) -> Result<Pulse> {
    let results = slot.dir.join("adapter-report.json");
    let time_file = slot.dir.join("time.txt");
    let _ = std::fs::remove_file(&results);
    // Requests left over from an earlier pulse's closing connection are not this pulse's.
    let _ = slot.hyperfleet.take();
    let _ = slot.maestro_rest.take();
    if let Some(kube) = &slot.kube {
        let _ = kube.take();
    }
    let pod_name = format!(
        "{}-{}",
        crate::pulse_job::controlplane_job_name(cluster_id, 1),
        pod_suffix(cluster)
    );
    let started_at = SystemTime::now();
    let started = Instant::now();
    let status = tokio::process::Command::new("/usr/bin/time")
        .arg("-f")
        .arg(TIME_FORMAT)
        .arg("-o")
        .arg(&time_file)
        .arg(binary)
        .arg("controlplane")
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("CLUSTER_ID", cluster_id)
        .env("HYPERFLEET_API_URL", slot.hyperfleet.url())
        .env("MAESTRO_API_URL", slot.maestro_rest.url())
        .env("RESULTS_OUTPUT_PATH", &results)
        .env("KUBECONFIG", &slot.kubeconfig)
        .env("POD_NAME", &pod_name)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .status();
    let status = tokio::time::timeout(Duration::from_secs(60), status)
        .await
        .context("the adapter did not exit within 60 s")?
        .context("starting /usr/bin/time (apt-get install time)")?;
    let wall = started.elapsed();
    let ended_at = SystemTime::now();
    if !status.success() {
        bail!("the adapter failed for cluster {cluster_id}: {status}");
    }
    let mut seen = slot.hyperfleet.take();
    seen.extend(slot.maestro_rest.take());
    if let Some(kube) = &slot.kube {
        seen.extend(kube.take());
    }
    let report = job_report::parse(&std::fs::read(&results)?, "Available")?;
    let (rss_kib, cpu) = parse_time(&std::fs::read_to_string(&time_file)?)?;
    let reason = |t: &str| {
        report
            .condition(t)
            .map(|c| format!("{} {}", c.status.as_str(), c.reason))
            .unwrap_or_default()
    };
    Ok(Pulse {
        cluster,
        slot: slot.index,
        started_at,
        ended_at,
        wall,
        rss_kib,
        cpu,
        requests: count_kinds(&seen),
        applied: reason("Applied"),
        available: reason("Available"),
        health: reason("Health"),
        management_cluster: report
            .data
            .as_ref()
            .and_then(|d| d.get("management_cluster"))
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// Five lowercase base-36 characters of `n` (a Job controller's Pod suffix).
pub fn pod_suffix(n: usize) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut rest = n;
    let mut out = [b'0'; 5];
    for place in out.iter_mut().rev() {
        *place = DIGITS[rest % 36];
        rest /= 36;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What every pulse of a phase shares: the binary, the slots, the cluster ids and the adapter's
/// environment (without the per-pulse and per-slot settings).
#[derive(Debug, Clone)]
pub struct Phase {
    pub binary: PathBuf,
    pub slots: Vec<Arc<Slot>>,
    pub ids: Arc<Vec<String>>,
    pub env: Arc<Vec<(String, String)>>,
}

impl Phase {
    /// Runs one pulse per entry of `clusters` (indices into `ids`), one per slot at a time;
    /// calls `done` with each in completion order. Stops at the first failure. Returns the
    /// phase's wall time.
    ///
    /// # Errors
    /// The first failed pulse, or the first error of `done`.
    pub async fn run(
        &self,
        clusters: Vec<usize>,
        mut done: impl FnMut(Pulse) -> Result<()>,
    ) -> Result<Duration> {
        let clusters = Arc::new(clusters);
        let next = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Result<Pulse>>();
        let started = Instant::now();
        for slot in &self.slots {
            let (slot, clusters, next, stop, tx) = (
                Arc::clone(slot),
                Arc::clone(&clusters),
                Arc::clone(&next),
                Arc::clone(&stop),
                tx.clone(),
            );
            let (binary, ids, env) = (
                self.binary.clone(),
                Arc::clone(&self.ids),
                Arc::clone(&self.env),
            );
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&n) = clusters.get(i) else { break };
                    let result = one_pulse(&binary, &slot, &env, &ids[n], n).await;
                    let failed = result.is_err();
                    if tx.send(result).is_err() || failed {
                        break;
                    }
                }
            });
        }
        drop(tx);
        while let Some(result) = rx.recv().await {
            if let Err(e) = result.and_then(&mut done) {
                stop.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(started.elapsed())
    }
}

/// Prints a phase: throughput, wall time per pulse (and its first and last tenth), peak RSS,
/// requests per pulse by kind (min / mean / max and total), the phase's publishes (counted by
/// the server), the most any pulse sent to each API, and the reports.
pub fn print_phase(name: &str, pulses: &[Pulse], elapsed: Duration, publishes: u64) {
    if pulses.is_empty() {
        return;
    }
    let n = pulses.len() as f64;
    let wall: Vec<Duration> = pulses.iter().map(|p| p.wall).collect();
    let rss: Vec<u64> = pulses.iter().map(|p| p.rss_kib).collect();
    println!();
    println!(
        "== {name}: {} pulses in {:.1} s ({:.1} pulses/s)",
        pulses.len(),
        elapsed.as_secs_f64(),
        n / elapsed.as_secs_f64()
    );
    println!(
        "wall time per pulse  p50 {:.1} ms   p99 {:.1} ms   max {:.1} ms",
        ms(percentile(&wall, 50.0)),
        ms(percentile(&wall, 99.0)),
        ms(percentile(&wall, 100.0))
    );
    if pulses.len() >= 20 {
        // Whether pulses slow down as the servers fill.
        let tenth = pulses.len() / 10;
        let first: Vec<Duration> = wall[..tenth].to_vec();
        let last: Vec<Duration> = wall[wall.len() - tenth..].to_vec();
        println!(
            "  first / last tenth p50 {:.1} ms / {:.1} ms   p99 {:.1} ms / {:.1} ms",
            ms(percentile(&first, 50.0)),
            ms(percentile(&last, 50.0)),
            ms(percentile(&first, 99.0)),
            ms(percentile(&last, 99.0))
        );
    }
    println!(
        "peak RSS             p50 {:.1} MiB   max {:.1} MiB",
        percentile(&rss, 50.0) as f64 / 1024.0,
        percentile(&rss, 100.0) as f64 / 1024.0
    );
    print_requests(pulses, publishes);
    let mut outcomes: BTreeMap<(&str, &str, &str), usize> = BTreeMap::new();
    for p in pulses {
        *outcomes
            .entry((p.applied.as_str(), p.available.as_str(), p.health.as_str()))
            .or_default() += 1;
    }
    for ((applied, available, health), count) in outcomes {
        println!(
            "reports              {count} × Applied {applied}, Available {available}, Health {health}"
        );
    }
}

fn print_requests(pulses: &[Pulse], publishes: u64) {
    let n = pulses.len() as f64;
    let mut kinds: Vec<RequestKind> = pulses
        .iter()
        .flat_map(|p| p.requests.keys().cloned())
        .collect();
    kinds.sort();
    kinds.dedup();
    println!("requests per pulse   kind: min / mean / max (total)");
    for kind in &kinds {
        let per: Vec<u64> = pulses
            .iter()
            .map(|p| p.requests.get(kind).copied().unwrap_or(0))
            .collect();
        let total: u64 = per.iter().sum();
        println!(
            "  {kind:<34} {} / {:.3} / {} ({total})",
            percentile(&per, 0.0),
            total as f64 / n,
            percentile(&per, 100.0)
        );
    }
    let (mut hyperfleet_max, mut maestro_rest_max, mut kube_max) = (0, 0, 0);
    for p in pulses {
        let sum = |keep: &dyn Fn(&RequestKind) -> bool| {
            p.requests
                .iter()
                .filter(|(k, _)| keep(k))
                .map(|(_, c)| *c)
                .sum::<u64>()
        };
        hyperfleet_max = hyperfleet_max.max(sum(&|k| !k.is_maestro() && !k.is_kube()));
        maestro_rest_max = maestro_rest_max.max(sum(&RequestKind::is_maestro));
        kube_max = kube_max.max(sum(&RequestKind::is_kube));
    }
    println!(
        "  {:<34} total {publishes}, {:.3} per pulse (counted by the server for the phase)",
        RequestKind::MaestroPublish.to_string(),
        publishes as f64 / n
    );
    println!(
        "  per pulse at most: HyperFleet {hyperfleet_max}, Maestro REST {maestro_rest_max} (+ publishes), Kubernetes {kube_max}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_suffixes_are_five_base36_characters() {
        assert_eq!(pod_suffix(0), "00000");
        assert_eq!(pod_suffix(35), "0000z");
        assert_eq!(pod_suffix(36), "00010");
        assert_eq!(pod_suffix(36usize.pow(5) + 1), "00001", "wraps");
    }
}
