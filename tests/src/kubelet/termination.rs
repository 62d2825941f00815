//! The container's termination message, read the way the kubelet reads it.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The kubelet's bound on what it reads of a container's termination message file: the last
/// 4096 bytes (`MaxContainerTerminationMessageLength`, kubernetes `pkg/kubelet/container`, read
/// with `tail.ReadAtMost` in `pkg/kubelet/kuberuntime/kuberuntime_container.go`).
pub const MAX_TERMINATION_MESSAGE: u64 = 4096;
/// With `FallbackToLogsOnError`: at most this many last log lines …
pub const MAX_TERMINATION_MESSAGE_LOG_LINES: usize = 80;
/// … and of those at most the last 2048 bytes (`MaxContainerTerminationMessageLogLength`).
pub const MAX_TERMINATION_MESSAGE_LOG_LENGTH: usize = 2048;
/// All containers' termination messages of a pod together (`MaxPodTerminationMessageLogLength`):
/// the kubelet's status manager cuts each to this divided by the number of containers, keeping
/// the start (`normalizeStatus`).
pub const MAX_POD_TERMINATION_MESSAGE: usize = 12 * 1024;

/// Where the kubelet gets a container's `state.terminated.message`: the file it created empty
/// and mounted at the container's `terminationMessagePath` (here handed to the adapter as
/// `TERMINATION_MESSAGE_PATH`), and with `terminationMessagePolicy: FallbackToLogsOnError` (both
/// Job templates) the container's log when the file is empty and the exit code is not 0.
#[derive(Debug, Clone)]
pub struct TerminationMessage {
    pub file: PathBuf,
    pub log: PathBuf,
    pub fallback_to_logs: bool,
    /// Containers in the pod (the 12 KiB are shared among them).
    pub containers: usize,
}

impl TerminationMessage {
    /// Creates `dir/<container>-termination-log` empty (as the kubelet does before each start)
    /// for a container of the two-container pulse pod logging to `log`, with
    /// `FallbackToLogsOnError` as in the Job templates.
    ///
    /// # Errors
    /// When the file cannot be created.
    pub fn prepare(dir: &Path, container: &str, log: &Path) -> std::io::Result<Self> {
        let file = dir.join(format!("{container}-termination-log"));
        File::create(&file)?;
        Ok(TerminationMessage {
            file,
            log: log.to_owned(),
            fallback_to_logs: true,
            containers: 2,
        })
    }

    /// The container's environment entry that points it at the file.
    pub fn env(&self) -> (String, String) {
        (
            "TERMINATION_MESSAGE_PATH".to_owned(),
            self.file.display().to_string(),
        )
    }

    /// The message the kubelet reports for a container that exited with `exit_code`: the last
    /// 4096 bytes of the file; when that is empty (or missing), the exit code is not 0 and the
    /// policy is `FallbackToLogsOnError`, the last 80 log lines, at most their last 2048 bytes;
    /// then the pod's share of 12 KiB, from the start. Invalid UTF-8 becomes U+FFFD, as the API
    /// server's JSON does. `None` when empty.
    pub fn read(&self, exit_code: i32) -> Option<String> {
        let fallback = self.fallback_to_logs && exit_code != 0;
        let from_file = tail_bytes(&self.file, MAX_TERMINATION_MESSAGE).unwrap_or_default();
        let mut message = if from_file.is_empty() && fallback {
            log_tail(&self.log)
        } else {
            from_file
        };
        message.truncate(MAX_POD_TERMINATION_MESSAGE / self.containers.max(1));
        let message = String::from_utf8_lossy(&message).into_owned();
        (!message.is_empty()).then_some(message)
    }
}

/// The last `max` bytes of `path` (empty when missing).
fn tail_bytes(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let mut file = File::open(path)?;
    let size = file.metadata()?.len();
    file.seek(SeekFrom::Start(size.saturating_sub(max)))?;
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The last [`MAX_TERMINATION_MESSAGE_LOG_LINES`] lines of the log, of which the last
/// [`MAX_TERMINATION_MESSAGE_LOG_LENGTH`] bytes.
fn log_tail(log: &Path) -> Vec<u8> {
    let Ok(bytes) = std::fs::read(log) else {
        return Vec::new();
    };
    let mut start = bytes.len();
    let mut lines = 0;
    // Walk back over line ends; the final newline does not start a line.
    let body_end = bytes.strip_suffix(b"\n").map_or(bytes.len(), <[u8]>::len);
    for (i, b) in bytes[..body_end].iter().enumerate().rev() {
        if *b == b'\n' {
            lines += 1;
            if lines == MAX_TERMINATION_MESSAGE_LOG_LINES {
                break;
            }
        }
        start = i;
    }
    let tail = &bytes[start..];
    tail[tail
        .len()
        .saturating_sub(MAX_TERMINATION_MESSAGE_LOG_LENGTH)..]
        .to_vec()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn termination(dir: &Path) -> TerminationMessage {
        TerminationMessage::prepare(dir, "adapter", &dir.join("adapter.log")).unwrap()
    }

    #[test]
    fn the_file_wins_and_only_its_last_4096_bytes_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let t = termination(dir.path());
        std::fs::write(&t.log, "a log line\n").unwrap();
        std::fs::write(&t.file, format!("{}the end", "x".repeat(5000))).unwrap();
        let message = t.read(1).unwrap();
        assert_eq!(message.len(), 4096);
        assert!(message.ends_with("the end"));
    }

    #[test]
    fn an_empty_file_falls_back_to_the_last_80_log_lines_only_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let t = termination(dir.path());
        let log: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&t.log, log).unwrap();
        let message = t.read(1).unwrap();
        assert!(
            message.starts_with("line 21\n") && message.ends_with("line 100\n"),
            "{message}"
        );
        assert_eq!(t.read(0), None, "exit 0: no fallback");
        let file_only = TerminationMessage {
            fallback_to_logs: false,
            ..t.clone()
        };
        assert_eq!(file_only.read(1), None, "policy File: no fallback");
    }

    #[test]
    fn the_log_fallback_keeps_the_last_2048_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let t = termination(dir.path());
        std::fs::write(&t.log, format!("{}\nlast\n", "y".repeat(10_000))).unwrap();
        let message = t.read(137).unwrap();
        assert_eq!(message.len(), 2048);
        assert!(message.ends_with("\nlast\n"));
    }
}
