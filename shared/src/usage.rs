//! This process's own CPU time and peak memory, read from `/proc` (Linux), for the closing log
//! line of the programs that write and read reports, so benchmarks get nanosecond-precision CPU
//! time instead of `/usr/bin/time`'s 10 ms ticks.

/// CPU time of all live threads, in microseconds (`/proc/self/task/*/schedstat`, nanosecond
/// precision; threads that already exited are not counted).
pub fn cpu_micros() -> Option<u64> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    let mut total_ns: u64 = 0;
    for task in tasks.flatten() {
        // A thread may exit between listing and reading; it is simply not counted.
        let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        total_ns += stat
            .split_whitespace()
            .next()
            .and_then(|ns| ns.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Some(total_ns / 1000)
}

/// Peak resident set size in KiB (`VmHWM` of `/proc/self/status`).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        assert!(cpu_micros().is_some_and(|c| c > 0));
        assert!(peak_rss_kib().is_some_and(|r| r > 100));
    }
}
