//! Container processes: started with exactly their environment, output to a log file (and, when
//! verbose, echoed to stderr line by line with the container's name), stopped with a signal.

use std::fs::File;
use std::path::Path;
use std::process::Stdio;

use anyhow::Context;
use tokio::process::{Child, Command};

/// A started container process and, with `--verbose`, the tasks copying its output to stderr.
pub struct Container {
    pub child: Child,
    echo: Echo,
}

/// The tasks copying a container's output.
pub struct Echo(Vec<tokio::task::JoinHandle<()>>);

impl Echo {
    /// Waits until the output copied so far is printed (the process has ended).
    pub async fn flush(self) {
        for task in self.0 {
            let _ = task.await;
        }
    }
}

impl Container {
    /// The process and its output's copying tasks, apart.
    pub fn into_parts(self) -> (Child, Echo) {
        (self.child, self.echo)
    }
}

/// Starts `cmd` (its program, arguments and environment already set) as container `name`, output
/// to `log` (and echoed with `verbose`); stdin is closed and the process is killed if the handle
/// is dropped.
///
/// # Errors
/// When the log cannot be created or the program cannot start.
pub fn spawn_command(
    name: &str,
    mut cmd: Command,
    log: &Path,
    verbose: bool,
) -> anyhow::Result<Container> {
    cmd.stdin(Stdio::null()).kill_on_drop(true);
    let file = File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    if verbose {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    } else {
        cmd.stdout(file.try_clone()?).stderr(file.try_clone()?);
    }
    let mut child = cmd.spawn()?;
    let mut echo = Vec::new();
    // With `verbose` the log file is kept too: the kubelet's log fallback for the termination
    // message reads it.
    if let Some(out) = child.stdout.take() {
        echo.push(tokio::spawn(copy_lines(
            name.to_owned(),
            out,
            file.try_clone()?,
        )));
    }
    if let Some(err) = child.stderr.take() {
        echo.push(tokio::spawn(copy_lines(name.to_owned(), err, file)));
    }
    Ok(Container {
        child,
        echo: Echo(echo),
    })
}

async fn copy_lines(name: String, stream: impl tokio::io::AsyncRead + Unpin, mut log: File) {
    use std::io::Write;
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(stream).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        eprintln!("   [{name}] {line}");
        let _ = writeln!(log, "{line}");
    }
}

/// Sends `signal` (`TERM`, `KILL`) to process `pid` (the container's main process), as the
/// runtime does when the kubelet stops a container. Through `kill(1)`: the workspace forbids
/// `unsafe`, and the process may belong to a task that is waiting for it.
pub async fn signal(pid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
}
