//! Serving a namespace: every Pod that appears there (matching a label selector), not deleted and
//! not yet run, is run — the way a node's kubelet picks up the Pods bound to it.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{WatchEvent, WatchParams};

use super::{Kubelet, PodRun};

/// A served namespace ([`Kubelet::serve`]); dropping it stops watching and kills the containers
/// still running.
pub struct Serving {
    watcher: tokio::task::JoinHandle<()>,
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    finished: Vec<PodRun>,
    runs: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.watcher.abort();
        for run in &lock(&self.state).runs {
            run.abort();
        }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Serving {
    /// The runs that have ended so far.
    pub fn finished(&self) -> Vec<PodRun> {
        lock(&self.state).finished.clone()
    }

    /// Waits (at most `timeout`) for the run of a Pod whose name starts with `prefix` (a Job's
    /// Pods are `<job name>-<5 random characters>`) to end.
    pub async fn wait_for(&self, prefix: &str, timeout: Duration) -> Option<PodRun> {
        let until = tokio::time::Instant::now() + timeout;
        loop {
            let found = lock(&self.state)
                .finished
                .iter()
                .find(|r| r.name.starts_with(prefix))
                .cloned();
            if found.is_some() || tokio::time::Instant::now() >= until {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Starts serving `ns`.
pub fn serve(kubelet: Kubelet, ns: &str, label_selector: &str) -> Serving {
    let state = Arc::new(Mutex::new(State::default()));
    let api: Api<Pod> = Api::namespaced(kubelet.inner.client.clone(), ns);
    let params = WatchParams::default().labels(label_selector).timeout(290);
    let shared = Arc::clone(&state);
    let watcher = tokio::spawn(async move {
        let mut seen = HashSet::new();
        let mut version = "0".to_owned();
        loop {
            let Ok(stream) = api.watch(&params, &version).await else {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            };
            let mut stream = std::pin::pin!(stream.into_stream());
            while let Some(Ok(event)) = stream.next().await {
                let pod = match event {
                    WatchEvent::Added(pod) | WatchEvent::Modified(pod) => pod,
                    WatchEvent::Deleted(_) => continue,
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
                if runnable(&pod) && seen.insert(pod.metadata.uid.clone().unwrap_or_default()) {
                    start(&kubelet, &pod, &shared);
                }
            }
        }
    });
    Serving { watcher, state }
}

/// Not being deleted and not yet run by a kubelet (no phase, or `Pending` with no container
/// started).
fn runnable(pod: &Pod) -> bool {
    let status = pod.status.as_ref();
    pod.metadata.deletion_timestamp.is_none()
        && status
            .and_then(|s| s.phase.as_deref())
            .is_none_or(|p| p == "Pending")
        && status.and_then(|s| s.start_time.as_ref()).is_none()
}

fn start(kubelet: &Kubelet, pod: &Pod, state: &Arc<Mutex<State>>) {
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let running = kubelet.start(&ns, &name);
    let shared = Arc::clone(state);
    let task = tokio::spawn(async move {
        match running.wait().await {
            Ok(run) => lock(&shared).finished.push(run),
            Err(e) => {
                tracing::warn!(pod = %name, error = %format!("{e:#}"), "the testbed kubelet could not run the pod")
            }
        }
    });
    lock(state).runs.push(task);
}
