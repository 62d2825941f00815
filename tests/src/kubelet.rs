//! The kubelet's part of a pulse, for runners that start the Job's two containers as local
//! processes (`local-pulse`, [`crate::real_pulse`]): start a container with exactly its env and
//! its output in a log file, mark the adapter container terminated with its exit code when it
//! exits, and stop the pulse when the status-reporter is done.

use std::ffi::OsStr;
use std::fs::File;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;
use tokio::process::{Child, Command};

use crate::kube_api::ApiServer;
use crate::pulse_job::PulseJob;

/// A pulse that takes longer than this is stopped and counted as failed.
pub const PULSE_TIMEOUT: Duration = Duration::from_secs(120);

/// Waits for both containers like the kubelet: when the adapter exits, its container is marked
/// terminated with its exit code; when the status-reporter is done, a still running adapter is
/// killed (in the cluster, `activeDeadlineSeconds` would end it), or with `let_adapter_finish`
/// awaited (the reporter may finish as soon as the report is written, before the adapter
/// process has exited). Exit codes, `None` if killed.
pub async fn play_kubelet(
    server: &ApiServer,
    job: &PulseJob,
    adapter: &mut Child,
    reporter: &mut Child,
    let_adapter_finish: bool,
) -> (Option<i32>, Option<i32>) {
    let mut adapter_code: Option<Option<i32>> = None;
    let reporter_code;
    let timeout = tokio::time::sleep(PULSE_TIMEOUT);
    tokio::pin!(timeout);
    loop {
        tokio::select! {
            status = adapter.wait(), if adapter_code.is_none() => {
                let code = status.ok().and_then(|s| s.code());
                let exit = code.unwrap_or(137);
                let reason = if exit == 0 { "Completed" } else { "Error" };
                server.terminate_container(&job.namespace, &job.pod, "adapter", exit, reason, None);
                adapter_code = Some(code);
            }
            status = reporter.wait() => {
                reporter_code = status.ok().and_then(|s| s.code());
                break;
            }
            () = &mut timeout => {
                println!("   ! the pulse did not finish within {} s; stopping it", PULSE_TIMEOUT.as_secs());
                let _ = reporter.kill().await;
                reporter_code = None;
                break;
            }
        }
    }
    let adapter_code = match adapter_code {
        Some(code) => code,
        None if let_adapter_finish && reporter_code.is_some() => {
            match tokio::time::timeout(PULSE_TIMEOUT, adapter.wait()).await {
                Ok(status) => status.ok().and_then(|s| s.code()),
                Err(_) => {
                    let _ = adapter.kill().await;
                    None
                }
            }
        }
        None => {
            let _ = adapter.kill().await;
            None
        }
    };
    (adapter_code, reporter_code)
}

/// A started container process and, with `--verbose`, the tasks copying its output to stderr.
pub struct Container {
    pub child: Child,
    echo: Vec<tokio::task::JoinHandle<()>>,
}

impl Container {
    /// Waits until the output copied so far is printed (the process has ended).
    pub async fn flush(self) {
        for task in self.echo {
            let _ = task.await;
        }
    }
}

/// Starts `exe args` as container `name` with exactly `env`; its stdout and stderr go to `log`,
/// or with `verbose` to stderr, each line prefixed with the container's name.
pub fn spawn(
    name: &'static str,
    exe: &Path,
    args: &[&str],
    env: impl IntoIterator<Item = (impl AsRef<OsStr>, impl AsRef<OsStr>)>,
    log: &Path,
    verbose: bool,
) -> anyhow::Result<Container> {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    if verbose {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    } else {
        let file = File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
        cmd.stdout(file.try_clone()?).stderr(file);
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {} {}", exe.display(), args.join(" ")))?;
    let mut echo = Vec::new();
    if let Some(out) = child.stdout.take() {
        echo.push(tokio::spawn(copy_lines(name, out)));
    }
    if let Some(err) = child.stderr.take() {
        echo.push(tokio::spawn(copy_lines(name, err)));
    }
    Ok(Container { child, echo })
}

async fn copy_lines(name: &'static str, stream: impl tokio::io::AsyncRead + Unpin) {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(stream).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        eprintln!("   [{name}] {line}");
    }
}
