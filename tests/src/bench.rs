//! Small helpers the bench binaries share: reading `/usr/bin/time` output and summarising runs.

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

/// A program's own CPU time, from the `cpu_us` field of its closing JSON log line (both binaries
/// log it, read from `/proc/self/task/*/schedstat`).
pub fn closing_cpu(logs: &str) -> anyhow::Result<Duration> {
    use anyhow::Context;
    let line = logs
        .lines()
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
