//! Watching a running Pod for its deletion, as the kubelet learns that the job controller (at the
//! Job's `activeDeadlineSeconds`) or a user deleted it.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{WatchEvent, WatchParams};
use tokio::sync::mpsc;

/// The Pod is going: its `deletionTimestamp` is set, or it is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deletion {
    /// `deletionGracePeriodSeconds`, when the Pod carried one.
    pub grace: Option<u64>,
}

/// The watch of one Pod; dropping it stops watching.
pub struct Deletions {
    rx: mpsc::Receiver<Deletion>,
    task: tokio::task::JoinHandle<()>,
}

impl Deletions {
    /// The Pod's deletion, when it comes.
    pub async fn recv(&mut self) -> Option<Deletion> {
        self.rx.recv().await
    }
}

impl Drop for Deletions {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Watches Pod `name` for its deletion.
pub fn watch(api: Api<Pod>, name: String) -> Deletions {
    let (tx, rx) = mpsc::channel(1);
    let task = tokio::spawn(async move {
        let params = WatchParams::default()
            .fields(&format!("metadata.name={name}"))
            .timeout(290);
        let mut version = "0".to_owned();
        loop {
            let stream = match api.watch(&params, &version).await {
                Ok(stream) => stream,
                Err(e) => {
                    tracing::debug!(pod = %name, error = %e, "watching the pod failed; retrying");
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    continue;
                }
            };
            let mut stream = std::pin::pin!(stream.into_stream());
            while let Some(Ok(event)) = stream.next().await {
                let (pod, gone) = match event {
                    WatchEvent::Added(pod) | WatchEvent::Modified(pod) => (pod, false),
                    WatchEvent::Deleted(pod) => (pod, true),
                    WatchEvent::Bookmark(b) => {
                        version = b.metadata.resource_version;
                        continue;
                    }
                    WatchEvent::Error(status) => {
                        if status.code == 410 {
                            version = "0".to_owned();
                        }
                        break;
                    }
                };
                if let Some(rv) = &pod.metadata.resource_version {
                    version.clone_from(rv);
                }
                if gone || pod.metadata.deletion_timestamp.is_some() {
                    let grace = pod
                        .metadata
                        .deletion_grace_period_seconds
                        .and_then(|g| u64::try_from(g).ok());
                    let _ = tx.send(Deletion { grace }).await;
                    return;
                }
            }
        }
    });
    Deletions { rx, task }
}
