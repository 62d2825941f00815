//! Small helpers the bench binaries share: reading `/usr/bin/time` output and summarising runs.

pub mod fleet;
pub mod pulses;
pub mod real;

use std::time::Duration;

/// The `/usr/bin/time -f` format the benches use: peak RSS in KiB, user and system seconds.
pub const TIME_FORMAT: &str = "%M %U %S";

/// Parses a `/usr/bin/time -f "%M %U %S"` output file: peak RSS in KiB, and user + system CPU
/// time (10 ms resolution).
pub fn parse_time(text: &str) -> anyhow::Result<(u64, Duration)> {
    use anyhow::Context;
    let line = text.lines().last().context("empty /usr/bin/time output")?;
    let mut fields = line.split_whitespace();
    let rss: u64 = fields.next().context("no RSS")?.parse()?;
    let user: f64 = fields.next().context("no user time")?.parse()?;
    let sys: f64 = fields.next().context("no system time")?.parse()?;
    Ok((rss, Duration::from_secs_f64(user + sys)))
}

/// The `p`th percentile (0–100, nearest rank) of `values`, which must not be empty.
pub fn percentile<T: Copy + Ord>(values: &[T], p: f64) -> T {
    let mut sorted = values.to_vec();
    sorted.sort();
    let rank = ((p / 100.0) * (sorted.len().saturating_sub(1)) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// A program's own CPU time, from the `cpu_us` field of its closing JSON log line: the last one
/// that has it (both binaries log it, read from `/proc/self/task/*/schedstat`; the
/// status-reporter on its status line and again on its Event line, which closes the run).
pub fn closing_cpu(logs: &str) -> anyhow::Result<Duration> {
    use anyhow::Context;
    let line = logs
        .lines()
        .rev()
        .find(|l| l.contains("\"cpu_us\""))
        .context("no closing log line with cpu_us")?;
    let v: serde_json::Value = serde_json::from_str(line)?;
    let micros = v["cpu_us"].as_u64().context("cpu_us is not a number")?;
    Ok(Duration::from_micros(micros))
}

/// Prints the peak-RSS line every bench shows: p50 and max of `/usr/bin/time`'s KiB figures.
#[allow(clippy::print_stdout, reason = "bench output")]
pub fn print_rss(rss_kib: &[u64]) {
    println!(
        "peak RSS             p50 {:.1} MiB   max {:.1} MiB",
        percentile(rss_kib, 50.0) as f64 / 1024.0,
        percentile(rss_kib, 100.0) as f64 / 1024.0
    );
}

/// Prints the size line every bench ends with: the measured binary and its size in MB.
#[allow(clippy::print_stdout, reason = "bench output")]
pub fn print_binary(binary: &std::path::Path) -> anyhow::Result<()> {
    let size = std::fs::metadata(binary)?.len();
    println!(
        "binary               {} ({:.2} MB)",
        binary.display(),
        size as f64 / 1e6
    );
    Ok(())
}

/// Milliseconds, for printing.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// What one adapter run against the fake Maestro cost, and what it reported.
#[derive(Debug)]
pub struct AdapterRun {
    pub wall: Duration,
    pub max_rss_kib: u64,
    pub cpu: Duration,
    /// REST GETs and gRPC Publishes the fake counted during the run.
    pub gets: u64,
    pub publishes: u64,
    /// The spec actions published (`create_request`, `update_request`, `delete_request`).
    pub actions: Vec<String>,
    pub report: job_report::Report,
}

impl AdapterRun {
    /// The reason of condition `type_`, `""` when absent.
    pub fn reason(&self, type_: &str) -> String {
        self.report
            .condition(type_)
            .map(|c| c.reason.clone())
            .unwrap_or_default()
    }
}

/// Runs `binary subcommand` under `/usr/bin/time` with only `env` (plus the fake Maestro's URLs,
/// the consumer and `LOG_LEVEL=warn`), its report written to `run_dir/adapter-report.json`, and
/// measures it: wall time, peak RSS, CPU, and the requests the fake saw meanwhile.
pub async fn run_adapter(
    binary: &std::path::Path,
    subcommand: &str,
    maestro: &crate::maestro::FakeMaestro,
    consumer: &str,
    run_dir: &std::path::Path,
    env: &[(&str, &std::ffi::OsStr)],
) -> anyhow::Result<AdapterRun> {
    use anyhow::{Context, bail};
    let results = run_dir.join("adapter-report.json");
    let time_file = run_dir.join("time.txt");
    let (gets_before, publishes_before) = (maestro.rest_gets(), maestro.publishes());
    let events_before = maestro.received_events().len();
    let started = std::time::Instant::now();
    let status = tokio::process::Command::new("/usr/bin/time")
        .arg("-f")
        .arg(TIME_FORMAT)
        .arg("-o")
        .arg(&time_file)
        .arg(binary)
        .arg(subcommand)
        .env_clear()
        .envs(env.iter().copied())
        .env("RESULTS_OUTPUT_PATH", &results)
        .env("MANAGEMENT_CLUSTER_CONSUMER", consumer)
        .env("MAESTRO_API_URL", maestro.rest_url())
        .env("MAESTRO_GRPC_URL", maestro.grpc_url())
        .env("LOG_LEVEL", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .status();
    let status = tokio::time::timeout(Duration::from_secs(60), status)
        .await
        .context("the adapter did not exit within 60 s")?
        .context("starting /usr/bin/time (apt-get install time)")?;
    let wall = started.elapsed();
    if !status.success() {
        bail!("the adapter failed: {status}");
    }
    let report = job_report::parse(&std::fs::read(&results)?, "Available")?;
    let (max_rss_kib, cpu) = parse_time(&std::fs::read_to_string(&time_file)?)?;
    let actions = maestro.received_events()[events_before..]
        .iter()
        .filter_map(|e| e.ty.rsplit('.').next().map(str::to_owned))
        .collect();
    Ok(AdapterRun {
        wall,
        max_rss_kib,
        cpu,
        gets: maestro.rest_gets() - gets_before,
        publishes: maestro.publishes() - publishes_before,
        actions,
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_output_is_parsed() {
        let (rss, cpu) =
            parse_time("Command exited with non-zero status 1\n6400 0.01 0.02\n").unwrap();
        assert_eq!(rss, 6400);
        assert_eq!(cpu, Duration::from_millis(30));
        assert!(parse_time("").is_err());
    }

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let v = [5, 1, 4, 2, 3];
        assert_eq!(percentile(&v, 0.0), 1);
        assert_eq!(percentile(&v, 50.0), 3);
        assert_eq!(percentile(&v, 100.0), 5);
    }
}
