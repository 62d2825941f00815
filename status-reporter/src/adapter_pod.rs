//! Watching our own Pod: the Job's name (from its label) and the adapter container's end.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, WatchEvent, WatchParams};
use tokio::sync::mpsc;

use crate::outcome::Termination;
use crate::retry::Backoff;

/// The label the Job controller puts on its Pods.
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
/// Older clusters only set this one.
const LEGACY_JOB_NAME_LABEL: &str = "job-name";

/// What the Pod says, each time it changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodEvent {
    /// The Pod as it is now.
    Seen {
        job_name: Option<String>,
        adapter: Option<Termination>,
    },
    /// The Pod was deleted.
    Deleted,
    /// The Pod cannot be watched (RBAC, gone before we started); the file and the deadline still work.
    Unwatchable(String),
}

/// Reads what matters from a Pod.
pub fn observe(pod: &Pod, container: &str) -> PodEvent {
    let labels = pod.metadata.labels.as_ref();
    let job_name = labels
        .and_then(|l| {
            l.get(JOB_NAME_LABEL)
                .or_else(|| l.get(LEGACY_JOB_NAME_LABEL))
        })
        .cloned();
    let adapter = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|statuses| statuses.iter().find(|s| s.name == container))
        .and_then(|s| s.state.as_ref())
        .and_then(|state| state.terminated.as_ref())
        .map(|t| Termination {
            exit_code: t.exit_code,
            reason: t.reason.clone(),
            message: t.message.clone(),
        });
    PodEvent::Seen { job_name, adapter }
}

/// Watches Pod `name` and sends a [`PodEvent`] for every change, until the receiver is dropped.
///
/// The watch starts at resourceVersion "0", so its first event is the Pod as it is now; it
/// reconnects after the server closes it, and starts over after 410 Gone.
pub async fn watch(api: Api<Pod>, name: String, container: String, tx: mpsc::Sender<PodEvent>) {
    let params = WatchParams::default()
        .fields(&format!("metadata.name={name}"))
        .timeout(290);
    let mut version = "0".to_owned();
    let mut backoff = Backoff::new();
    loop {
        let stream = match api.watch(&params, &version).await {
            Ok(stream) => stream,
            Err(kube::Error::Api(status)) if matches!(status.code, 401 | 403 | 404) => {
                let _ = tx
                    .send(PodEvent::Unwatchable(format!(
                        "watch pods {name}: {} {}: {}",
                        status.code, status.reason, status.message
                    )))
                    .await;
                return;
            }
            Err(e) => {
                tracing::warn!(pod = %name, error = %e, "watching the pod failed; retrying");
                tokio::time::sleep(backoff.next_delay()).await;
                continue;
            }
        };
        let mut stream = std::pin::pin!(stream.into_stream());
        while let Some(item) = stream.next().await {
            let event = match item {
                Ok(WatchEvent::Added(pod)) | Ok(WatchEvent::Modified(pod)) => {
                    if let Some(rv) = &pod.metadata.resource_version {
                        version.clone_from(rv);
                    }
                    backoff = Backoff::new();
                    observe(&pod, &container)
                }
                Ok(WatchEvent::Deleted(_)) => PodEvent::Deleted,
                Ok(WatchEvent::Bookmark(b)) => {
                    version = b.metadata.resource_version;
                    continue;
                }
                Ok(WatchEvent::Error(status)) => {
                    if status.code == 410 {
                        version = "0".to_owned();
                    }
                    tracing::debug!(pod = %name, code = status.code, message = %status.message, "pod watch ended by the server");
                    break;
                }
                Err(e) => {
                    tracing::debug!(pod = %name, error = %e, "pod watch stream broke");
                    break;
                }
            };
            if tx.send(event).await.is_err() {
                return;
            }
        }
        // Closed by the server (timeout) or broken: reconnect after a short pause.
        tokio::time::sleep(backoff.next_delay().min(Duration::from_secs(1))).await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn pod(state: serde_json::Value) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "p", "labels": {"batch.kubernetes.io/job-name": "job-1"}},
            "status": {"containerStatuses": [
                {"name": "status-reporter", "image": "x", "imageID": "", "ready": true, "restartCount": 0, "state": {"running": {}}},
                {"name": "adapter", "image": "x", "imageID": "", "ready": false, "restartCount": 0, "state": state}
            ]}
        }))
        .unwrap()
    }

    #[test]
    fn running_adapter_has_no_termination() {
        assert_eq!(
            observe(&pod(json!({"running": {}})), "adapter"),
            PodEvent::Seen {
                job_name: Some("job-1".into()),
                adapter: None
            }
        );
    }

    #[test]
    fn terminated_adapter_is_read_with_code_reason_and_message() {
        let p =
            pod(json!({"terminated": {"exitCode": 137, "reason": "OOMKilled", "message": "m"}}));
        let PodEvent::Seen {
            adapter: Some(t), ..
        } = observe(&p, "adapter")
        else {
            panic!("no termination");
        };
        assert!(t.oom_killed());
        assert_eq!((t.exit_code, t.message.as_deref()), (137, Some("m")));
        // Another container's end is not the adapter's.
        assert!(matches!(
            observe(&p, "status-reporter"),
            PodEvent::Seen { adapter: None, .. }
        ));
    }
}
