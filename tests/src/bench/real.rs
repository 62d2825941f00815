//! What the benches on the kit's real servers read from the servers themselves: the CPU time of
//! their processes (`/proc/<pid>/stat` of the PIDs the kit records in `$STATE/pids/`), the
//! Kubernetes API server's audit log (every request at level Metadata: who, what, when), and a
//! Prometheus metrics page (Maestro's `/metrics`: gRPC calls by type, REST requests by path,
//! per-resource latencies).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use serde_json::Value;

use super::fleet::SeenRequest;

/// One process as `/proc/<pid>/stat` shows it: parent and CPU ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub ppid: u32,
    /// `utime + stime`: the process's own CPU (all its threads).
    pub own: u64,
    /// `cutime + cstime`: CPU of children it has waited for.
    pub reaped: u64,
}

/// Parses one `/proc/<pid>/stat` line. The command name may hold spaces and parentheses, so the
/// fields are counted from its closing `)`.
pub fn parse_stat(line: &str) -> Option<ProcStat> {
    let rest = &line[line.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After `)`: state (field 3), ppid (4), … utime (14), stime (15), cutime (16), cstime (17).
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    Some(ProcStat {
        ppid: u32::try_from(field(4)?).ok()?,
        own: field(14)? + field(15)?,
        reaped: field(16)? + field(17)?,
    })
}

/// Every process of the machine at one moment: pid → stat, and pid → command line.
#[derive(Debug, Clone, Default)]
pub struct ProcTable {
    pub stats: BTreeMap<u32, ProcStat>,
    pub cmdlines: BTreeMap<u32, String>,
}

impl ProcTable {
    /// Reads `/proc` (processes that end while it is read are skipped).
    pub fn read() -> ProcTable {
        let mut table = ProcTable::default();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return table;
        };
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            let Some(stat) = std::fs::read_to_string(entry.path().join("stat"))
                .ok()
                .and_then(|l| parse_stat(&l))
            else {
                continue;
            };
            table.stats.insert(pid, stat);
            if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
                let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                table.cmdlines.insert(pid, text.trim().to_owned());
            }
        }
        table
    }

    /// `root` and every live process below it.
    pub fn tree(&self, root: u32) -> Vec<u32> {
        let mut out = vec![root];
        let mut i = 0;
        while i < out.len() {
            let parent = out[i];
            out.extend(
                self.stats
                    .iter()
                    .filter(|(pid, s)| s.ppid == parent && **pid != parent)
                    .map(|(pid, _)| *pid),
            );
            i += 1;
        }
        out.retain(|pid| self.stats.contains_key(pid));
        out
    }

    /// CPU ticks of `root`'s tree: every live process's own time and what each has reaped (a
    /// PostgreSQL backend that ended is in the postmaster's `cutime`). The difference of two
    /// readings is the tree's CPU between them.
    pub fn tree_ticks(&self, root: u32) -> u64 {
        self.tree(root)
            .iter()
            .filter_map(|pid| self.stats.get(pid))
            .map(|s| s.own + s.reaped)
            .sum()
    }
}

/// Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`; 100 when it cannot be asked).
pub fn clock_ticks() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .filter(|&t| t > 0)
        .unwrap_or(100)
}

/// The kit's recorded processes (`$STATE/pids/<name>.pid`) that still run, by name.
///
/// # Errors
/// When the directory cannot be read.
pub fn kit_pids(state: &Path) -> Result<BTreeMap<String, u32>> {
    let dir = state.join("pids");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("read {}", dir.display()))? {
        let path = entry?.path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".pid"))
        else {
            continue;
        };
        let Some(pid) = std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            out.insert(name.to_owned(), pid);
        }
    }
    Ok(out)
}

/// The database a PostgreSQL backend serves, from its process title
/// (`postgres: <user> <database> <host>(<port>) <activity>`); `None` for the postmaster and the
/// background processes (`postgres: checkpointer`, …).
pub fn postgres_database(cmdline: &str) -> Option<&str> {
    let rest = cmdline.strip_prefix("postgres: ")?;
    let mut words = rest.split_whitespace();
    let (_user, database, client) = (words.next()?, words.next()?, words.next()?);
    client.contains('(').then_some(database)
}

/// CPU used by the kit's processes between two readings.
#[derive(Debug, Clone)]
pub struct CpuSample {
    pub at: std::time::Instant,
    pub table: ProcTable,
}

impl CpuSample {
    /// Reads every process now.
    pub fn now() -> CpuSample {
        CpuSample {
            at: std::time::Instant::now(),
            table: ProcTable::read(),
        }
    }
}

/// CPU of each named process tree between `before` and `after`, in `ticks` per second.
pub fn cpu_between(
    pids: &BTreeMap<String, u32>,
    before: &CpuSample,
    after: &CpuSample,
    ticks: u64,
) -> BTreeMap<String, Duration> {
    pids.iter()
        .map(|(name, &pid)| {
            let used = after
                .table
                .tree_ticks(pid)
                .saturating_sub(before.table.tree_ticks(pid));
            (name.clone(), ticks_to_duration(used, ticks))
        })
        .collect()
}

/// CPU of the live backends below `postmaster` between two readings, by database (a backend
/// not in `before` counts from zero; one that ended before `after` is not here: it is in the
/// postmaster's `cutime`).
pub fn postgres_by_database(
    postmaster: u32,
    before: &CpuSample,
    after: &CpuSample,
    ticks: u64,
) -> BTreeMap<String, Duration> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for pid in after.table.tree(postmaster) {
        let Some(database) = after
            .table
            .cmdlines
            .get(&pid)
            .and_then(|c| postgres_database(c))
        else {
            continue;
        };
        let now = after.table.stats.get(&pid).map_or(0, |s| s.own);
        let then = before.table.stats.get(&pid).map_or(0, |s| s.own);
        *out.entry(database.to_owned()).or_default() += now.saturating_sub(then);
    }
    out.into_iter()
        .map(|(db, t)| (db, ticks_to_duration(t, ticks)))
        .collect()
}

fn ticks_to_duration(ticks_used: u64, ticks: u64) -> Duration {
    Duration::from_secs_f64(ticks_used as f64 / ticks.max(1) as f64)
}

/// One request in the API server's audit log (stage `ResponseComplete`).
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEvent {
    pub username: String,
    pub user_agent: String,
    pub verb: String,
    pub request_uri: String,
    pub code: u16,
    pub received: SystemTime,
}

impl AuditEvent {
    /// The request as an HTTP request line, for [`super::fleet::classify`].
    pub fn as_request(&self) -> SeenRequest {
        let method = match self.verb.as_str() {
            "create" => "POST",
            "update" => "PUT",
            "patch" => "PATCH",
            "delete" | "deletecollection" => "DELETE",
            _ => "GET",
        };
        SeenRequest {
            method: method.to_owned(),
            target: self.request_uri.clone(),
        }
    }
}

/// Parses one audit log line; `None` for other stages and lines that are not audit events.
pub fn parse_audit_line(line: &str) -> Option<AuditEvent> {
    let v: Value = serde_json::from_str(line).ok()?;
    if v["stage"] != "ResponseComplete" {
        return None;
    }
    let text = |p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let received: jiff::Timestamp = v["requestReceivedTimestamp"].as_str()?.parse().ok()?;
    Some(AuditEvent {
        username: text("/user/username"),
        user_agent: text("/userAgent"),
        verb: text("/verb"),
        request_uri: text("/requestURI"),
        code: v
            .pointer("/responseStatus/code")
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok())
            .unwrap_or(0),
        received: SystemTime::from(received),
    })
}

/// Reads an append-only log from a byte offset.
#[derive(Debug, Clone)]
pub struct LogTail {
    pub path: PathBuf,
    pub offset: u64,
}

impl LogTail {
    /// Starts at the log's current end.
    pub fn at_end(path: &Path) -> LogTail {
        let offset = std::fs::metadata(path).map_or(0, |m| m.len());
        LogTail {
            path: path.to_owned(),
            offset,
        }
    }

    /// The whole lines appended since the last call (a partial last line is left for the next).
    ///
    /// # Errors
    /// When the log cannot be read.
    pub fn new_lines(&mut self) -> Result<Vec<String>> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = std::fs::File::open(&self.path)
            .with_context(|| format!("open {}", self.path.display()))?;
        file.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        self.offset += complete as u64;
        Ok(String::from_utf8_lossy(&bytes[..complete])
            .lines()
            .map(str::to_owned)
            .collect())
    }
}

/// A Prometheus text page as `series → value` (`name{labels}` as written; comments skipped).
pub fn parse_metrics(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let (series, value) = l.trim().rsplit_once(' ')?;
            Some((series.to_owned(), value.parse().ok()?))
        })
        .collect()
}

/// The series whose value changed from `before` to `after` (new ones from zero), with the
/// change, for counters whose name passes `keep`.
pub fn metric_changes(
    before: &BTreeMap<String, f64>,
    after: &BTreeMap<String, f64>,
    keep: impl Fn(&str) -> bool,
) -> BTreeMap<String, f64> {
    after
        .iter()
        .filter(|(series, _)| keep(series.split('{').next().unwrap_or_default()))
        .filter_map(|(series, value)| {
            let change = value - before.get(series).copied().unwrap_or(0.0);
            (change != 0.0).then(|| (series.clone(), change))
        })
        .collect()
}

/// A label's value in a series (`name{a="x",b="y"}`).
pub fn label<'a>(series: &'a str, name: &str) -> Option<&'a str> {
    let labels = series.split_once('{')?.1.strip_suffix('}')?;
    labels.split(',').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == name).then(|| v.trim_matches('"'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_read_after_the_command_name() {
        let line = "4242 (postgres: maestro (x)) S 4200 4242 4242 0 -1 4194560 311 0 0 0 \
                    17 9 5 3 20 0 1 0 1234 100000 200 18446744073709551615";
        let stat = parse_stat(line).unwrap();
        assert_eq!(
            stat,
            ProcStat {
                ppid: 4200,
                own: 26,
                reaped: 8
            }
        );
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn a_tree_counts_live_descendants_and_what_they_reaped() {
        let mut table = ProcTable::default();
        let p = |ppid, own, reaped| ProcStat { ppid, own, reaped };
        table.stats.insert(10, p(1, 100, 40));
        table.stats.insert(11, p(10, 7, 0));
        table.stats.insert(12, p(11, 3, 2));
        table.stats.insert(20, p(1, 1000, 0));
        let mut tree = table.tree(10);
        tree.sort();
        assert_eq!(tree, vec![10, 11, 12]);
        assert_eq!(table.tree_ticks(10), 100 + 40 + 7 + 3 + 2);
        assert!(table.tree(99).is_empty(), "a process that is gone");
    }

    #[test]
    fn postgres_backends_name_their_database() {
        assert_eq!(
            postgres_database("postgres: maestro maestro 127.0.0.1(40112) idle"),
            Some("maestro")
        );
        assert_eq!(
            postgres_database("postgres: hyperfleet hyperfleet 127.0.0.1(40200) SELECT"),
            Some("hyperfleet")
        );
        assert_eq!(postgres_database("postgres: checkpointer "), None);
        assert_eq!(postgres_database("postgres: walwriter"), None);
        assert_eq!(
            postgres_database("/usr/lib/postgresql/15/bin/postgres -D x"),
            None
        );
    }

    #[test]
    fn audit_events_become_request_lines() {
        let line = r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a","stage":"ResponseComplete","requestURI":"/apis/coordination.k8s.io/v1/namespaces/hyperfleet-system/leases","verb":"create","user":{"username":"system:serviceaccount:hyperfleet-system:bench-slot-03","groups":[]},"sourceIPs":["127.0.0.1"],"userAgent":"kube-rs/5","responseStatus":{"metadata":{},"code":409},"requestReceivedTimestamp":"2026-11-28T05:49:44.536901Z","stageTimestamp":"2026-11-28T05:49:44.555415Z"}"#;
        let event = parse_audit_line(line).unwrap();
        assert_eq!(event.code, 409);
        assert_eq!(
            event.username,
            "system:serviceaccount:hyperfleet-system:bench-slot-03"
        );
        let request = event.as_request();
        assert_eq!(request.method, "POST");
        assert_eq!(
            super::super::fleet::classify(&request),
            super::super::fleet::RequestKind::LeaseCreate
        );
        let at = jiff::Timestamp::try_from(event.received).unwrap();
        assert_eq!(at.to_string(), "2026-11-28T05:49:44.536901Z");
        let started = line.replace("ResponseComplete", "RequestReceived");
        assert!(parse_audit_line(&started).is_none());
    }

    #[test]
    fn a_log_tail_returns_whole_new_lines_once() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "old\n").unwrap();
        let mut tail = LogTail::at_end(&path);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        write!(file, "one\ntw").unwrap();
        assert_eq!(tail.new_lines().unwrap(), vec!["one"]);
        writeln!(file, "o").unwrap();
        assert_eq!(tail.new_lines().unwrap(), vec!["two"]);
        assert!(tail.new_lines().unwrap().is_empty());
    }

    #[test]
    fn metric_changes_keep_the_counters_asked_for() {
        let before = parse_metrics(
            "# HELP x\ngrpc_server_processed_total{code=\"OK\",source=\"a\",type=\"Publish\"} 3\ngo_goroutines 10\n",
        );
        let after = parse_metrics(
            "grpc_server_processed_total{code=\"OK\",source=\"a\",type=\"Publish\"} 10\ngo_goroutines 12\nrest_api_inbound_request_count{code=\"200\",method=\"GET\",path=\"/x\"} 4\n",
        );
        let changes = metric_changes(&before, &after, |n| !n.starts_with("go_"));
        assert_eq!(changes.len(), 2);
        let publish = "grpc_server_processed_total{code=\"OK\",source=\"a\",type=\"Publish\"}";
        assert_eq!(changes[publish], 7.0);
        assert_eq!(label(publish, "type"), Some("Publish"));
        assert_eq!(label(publish, "nope"), None);
    }
}
