//! Loading a kube-rs client configuration the way kubectl does: an explicit `KUBECONFIG` (a
//! `:`-separated list, merged), else `~/.kube/config`, else the in-cluster service account.

use std::path::Path;

use kube::config::{KubeConfigOptions, Kubeconfig};

/// The client configuration for `kubeconfig` (or inferred when `None`). The error is a readable
/// chain of causes.
pub async fn load(kubeconfig: Option<&Path>) -> Result<kube::Config, String> {
    match kubeconfig {
        Some(path) => {
            let mut merged: Option<Kubeconfig> = None;
            for part in std::env::split_paths(path).filter(|p| !p.as_os_str().is_empty()) {
                let next = Kubeconfig::read_from(&part).map_err(|e| error_chain(&e))?;
                merged = Some(match merged {
                    Some(first) => first.merge(next).map_err(|e| error_chain(&e))?,
                    None => next,
                });
            }
            let kubeconfig = merged.ok_or_else(|| "the kubeconfig path is empty".to_owned())?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| error_chain(&e))
        }
        None => kube::Config::infer().await.map_err(|e| error_chain(&e)),
    }
}

/// The client settings the check relies on: a read timeout per call, and no kube-rs retries —
/// it would retry 429/503/504 up to 15 times, hiding the server's answer behind our timeout;
/// the Job runs again on the next pulse (~10 s), so one attempt per call and a report carrying
/// the server's message is the better trade.
pub fn tune(config: &mut kube::Config, timeout: std::time::Duration) {
    config.read_timeout = Some(timeout);
    config.default_retry = false;
}

/// `err` and its sources, joined with `: `, skipping causes already quoted by their parent.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut message = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}
