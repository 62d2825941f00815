//! The report file: noticing it (inotify, with polling as the fallback) and judging it.
//!
//! A file that does not parse, or breaks the contract, may be one a non-atomic writer has not
//! finished. It is judged invalid only once the adapter has ended or the file has stayed the same
//! for the settle time.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use job_report::{ParseError, ReadError, Report};
use notify::{RecursiveMode, Watcher};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// What one look at the file found.
#[derive(Debug)]
pub enum Look {
    /// No file yet.
    Absent,
    /// A valid report.
    Ready(Report),
    /// A file that is not (yet) a valid report. `settled` once it can be judged final.
    Broken { why: String, settled: bool },
}

/// Identity of one version of the file: a rename or a write changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fingerprint {
    inode: u64,
    len: u64,
    mtime_ns: i128,
}

fn fingerprint(path: &Path) -> Option<Fingerprint> {
    let m = std::fs::metadata(path).ok()?;
    Some(Fingerprint {
        inode: m.ino(),
        len: m.len(),
        mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    })
}

/// The report file and what has been seen of it.
#[derive(Debug)]
pub struct ResultsFile {
    path: PathBuf,
    legacy_type: String,
    settle: Duration,
    /// A broken version seen before, and since when it has not changed.
    broken_since: Option<(Fingerprint, Instant)>,
}

impl ResultsFile {
    pub fn new(path: PathBuf, legacy_type: String, settle: Duration) -> ResultsFile {
        ResultsFile {
            path,
            legacy_type,
            settle,
            broken_since: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// When a broken file will have settled, if one is waiting.
    pub fn settles_at(&self) -> Option<Instant> {
        self.broken_since.map(|(_, since)| since + self.settle)
    }

    /// Looks at the file now.
    pub fn look(&mut self) -> Look {
        let before = fingerprint(&self.path);
        let why = match job_report::read_bounded(&self.path) {
            Ok(None) => {
                self.broken_since = None;
                return Look::Absent;
            }
            Ok(Some(bytes)) => match job_report::parse(&bytes, &self.legacy_type) {
                Ok(report) => {
                    self.broken_since = None;
                    return Look::Ready(report);
                }
                Err(ParseError::Syntax(e)) => format!("not valid JSON ({e})"),
                Err(e @ ParseError::Invalid(_)) => e.to_string(),
            },
            Err(e @ ReadError::TooLarge { .. }) => e.to_string(),
            Err(e @ ReadError::Io { .. }) => e.to_string(),
        };
        let now = Instant::now();
        let settled = match (before, self.broken_since) {
            (Some(fp), Some((seen, since))) if fp == seen => {
                now.duration_since(since) >= self.settle
            }
            (Some(fp), _) => {
                self.broken_since = Some((fp, now));
                self.settle.is_zero()
            }
            (None, _) => false,
        };
        Look::Broken { why, settled }
    }
}

/// Starts an inotify watch on the file's directory; each event there sends a wake-up. Returns
/// `None` (and the caller relies on polling) when inotify is unavailable.
pub fn watch_directory(path: &Path, wake: mpsc::Sender<()>) -> Option<notify::RecommendedWatcher> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
    let name = path.file_name()?.to_owned();
    let handler = move |event: notify::Result<notify::Event>| {
        let relevant = match &event {
            // Our file, or a temp file being renamed onto it.
            Ok(e) => e.paths.is_empty() || e.paths.iter().any(|p| p.file_name() == Some(&name)),
            Err(_) => true,
        };
        if relevant {
            // A full channel already holds a wake-up; one is enough.
            let _ = wake.try_send(());
        }
    };
    let mut watcher = match notify::recommended_watcher(handler) {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!(error = %e, "inotify is unavailable; polling the results file");
            return None;
        }
    };
    match watcher.watch(dir, RecursiveMode::NonRecursive) {
        Ok(()) => Some(watcher),
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot watch the results directory; polling the results file");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const GOOD: &str = r#"{"conditions":[{"type":"Available","status":"True","reason":"Ready"}]}"#;

    #[tokio::test]
    async fn absent_then_ready() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let mut f = ResultsFile::new(path.clone(), "Available".into(), Duration::from_secs(1));
        assert!(matches!(f.look(), Look::Absent));
        std::fs::write(&path, GOOD).unwrap();
        assert!(matches!(f.look(), Look::Ready(_)));
    }

    #[tokio::test]
    async fn broken_file_settles_only_after_staying_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let mut f = ResultsFile::new(path.clone(), "Available".into(), Duration::from_millis(50));
        std::fs::write(&path, "{\"conditions\":").unwrap();
        assert!(matches!(f.look(), Look::Broken { settled: false, .. }));
        assert!(f.settles_at().is_some());
        tokio::time::sleep(Duration::from_millis(60)).await;
        match f.look() {
            Look::Broken { settled, why } => {
                assert!(settled);
                assert!(why.contains("not valid JSON"), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_change_restarts_the_settle_clock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let mut f = ResultsFile::new(path.clone(), "Available".into(), Duration::from_millis(80));
        std::fs::write(&path, "{").unwrap();
        assert!(matches!(f.look(), Look::Broken { settled: false, .. }));
        tokio::time::sleep(Duration::from_millis(100)).await;
        std::fs::write(&path, "{\"conditions\"").unwrap();
        assert!(matches!(f.look(), Look::Broken { settled: false, .. }));
    }

    #[tokio::test]
    async fn inotify_wakes_on_rename_into_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        let (tx, mut rx) = mpsc::channel(1);
        let _watcher = watch_directory(&path, tx).unwrap();
        let report: Report = job_report::parse(GOOD.as_bytes(), "Available").unwrap();
        job_report::write_atomic(&path, &report).unwrap();
        tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .unwrap()
            .unwrap();
    }
}
