//! The pulse runners' former kubelet: it marks the adapter container terminated in the fake API
//! server's store directly. Kept only until `local-pulse` and `real_pulse` run their pods with
//! [`super::Kubelet`].

use std::time::Duration;

use tokio::process::Child;

use super::TerminationMessage;
use crate::kube_api::ApiServer;
use crate::pulse_job::PulseJob;

/// A pulse that takes longer than this is stopped and counted as failed.
pub const PULSE_TIMEOUT: Duration = Duration::from_secs(120);

/// Waits for both containers like the kubelet: when the adapter exits, its container is marked
/// terminated with its exit code (and the termination message of `termination`, if given); when the status-reporter is done, a still running adapter is
/// killed (in the cluster, `activeDeadlineSeconds` would end it), or with `let_adapter_finish`
/// awaited (the reporter may finish as soon as the report is written, before the adapter
/// process has exited). Exit codes, `None` if killed.
pub async fn play_kubelet(
    server: &ApiServer,
    job: &PulseJob,
    adapter: &mut Child,
    reporter: &mut Child,
    let_adapter_finish: bool,
    termination: Option<&TerminationMessage>,
) -> (Option<i32>, Option<i32>) {
    play_kubelet_as(
        server,
        job,
        adapter,
        reporter,
        let_adapter_finish,
        termination,
        false,
    )
    .await
}

/// [`play_kubelet`]; with `oom_killed` the adapter's exit code 137 is marked with the reason
/// `OOMKilled`, as the kubelet marks a container the kernel killed at its memory limit (a stand-in
/// process cannot be OOM-killed on demand, so it exits 137 and this kubelet says why).
pub async fn play_kubelet_as(
    server: &ApiServer,
    job: &PulseJob,
    adapter: &mut Child,
    reporter: &mut Child,
    let_adapter_finish: bool,
    termination: Option<&TerminationMessage>,
    oom_killed: bool,
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
                let reason = match exit {
                    0 => "Completed",
                    137 if oom_killed => "OOMKilled",
                    _ => "Error",
                };
                let message = termination.and_then(|t| t.read(exit));
                server.terminate_container(&job.namespace, &job.pod, "adapter", exit, reason, message.as_deref());
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
