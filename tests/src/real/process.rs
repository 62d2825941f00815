//! A long-running program a test starts beside the kit (the framework, Sentinel, forwarders):
//! [`Daemon`] runs it in a process group of its own with its output in a log file, stops the
//! whole group when dropped, and leaves a detached watcher that kills the group if the test
//! process dies first (a crashed or killed test binary must not leave daemons behind).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

/// How long [`Daemon::stop`] waits after SIGTERM before it sends SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// A program started by a test, in its own process group; stopped (the group: TERM, then KILL)
/// on [`Daemon::stop`] or drop.
#[derive(Debug)]
pub struct Daemon {
    name: String,
    child: Child,
    log: PathBuf,
    stopped: bool,
}

impl Daemon {
    /// Starts `command` in a new process group, stdin from `/dev/null`, stdout and stderr appended
    /// to `log`. `name` labels it in messages.
    ///
    /// # Errors
    /// When the log cannot be created or the program cannot be started.
    pub fn spawn(name: &str, mut command: Command, log: &Path) -> anyhow::Result<Daemon> {
        use std::os::unix::process::CommandExt as _;
        let out = File::options()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let err = out.try_clone()?;
        command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        let child = command
            .spawn()
            .with_context(|| format!("cannot start {name} ({command:?})"))?;
        watch_for_test_exit(child.id())?;
        Ok(Daemon {
            name: name.to_owned(),
            child,
            log: log.to_owned(),
            stopped: false,
        })
    }

    /// The name given at [`Daemon::spawn`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The process id of the group leader (= the process group id).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The log file.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// The whole log so far (lossy UTF-8; empty when unreadable).
    pub fn log(&self) -> String {
        std::fs::read(&self.log)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// The last `lines` lines of the log, for an assertion's message.
    pub fn log_tail(&self, lines: usize) -> String {
        tail(&self.log(), lines)
    }

    /// `None` while the group leader runs, else its exit status (as text).
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("cannot be waited for: {e}")),
        }
    }

    /// Stops the whole process group: SIGTERM, then SIGKILL after [`STOP_GRACE`]. Idempotent.
    pub fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        let group = self.child.id();
        signal_group(group, "TERM");
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) && !group_alive(group) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        signal_group(group, "KILL");
        let _ = self.child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The last `lines` lines of `text`.
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Sends `signal` to every process of group `group` (one the test created).
fn signal_group(group: u32, signal: &str) {
    let _ = Command::new("kill")
        .args(["-s", signal, "--", &format!("-{group}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Whether any process of group `group` still exists.
fn group_alive(group: u32) -> bool {
    Command::new("kill")
        .args(["-0", "--", &format!("-{group}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A detached watcher that kills process group `group` once this test process is gone, and exits
/// once the group's leader is gone (a normal [`Daemon::stop`]).
fn watch_for_test_exit(group: u32) -> anyhow::Result<()> {
    let script = r#"while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done; kill -0 "$1" 2>/dev/null || kill -s KILL -- "-$2" 2>/dev/null; exit 0"#;
    Command::new("setsid")
        .args(["sh", "-c", script, "real-daemon-watcher"])
        .arg(std::process::id().to_string())
        .arg(group.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start the watcher of a test daemon")?;
    Ok(())
}

/// A free TCP port on 127.0.0.1 (bound and released; the kit's ports lie in 20000–31999, these
/// come from the kernel's ephemeral range).
///
/// # Errors
/// When no port can be bound.
pub fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("bind 127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_daemon_and_its_children_stop_with_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("child.pid");
        let mut command = Command::new("sh");
        command.args([
            "-c",
            r#"sleep 300 & echo $! > "$1"; echo started; wait"#,
            "sh",
        ]);
        command.arg(&marker);
        let mut daemon = Daemon::spawn("sleeper", command, &dir.path().join("log")).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !daemon.log().contains("started") {
            assert!(Instant::now() < deadline, "never started");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(daemon.exited().is_none());
        let child: u32 = std::fs::read_to_string(&marker)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        daemon.stop();
        assert!(daemon.exited().is_some());
        let alive = Command::new("kill")
            .args(["-0", &child.to_string()])
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(!alive, "the group's other process {child} survived");
        assert_eq!(tail("a\nb\nc", 2), "b\nc");
    }
}
