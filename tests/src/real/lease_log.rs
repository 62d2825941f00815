//! Every write of the placement Leases in one namespace, as the real API server's watch delivers
//! them (one event per write of an object, in order), so a test can check what the lock promised:
//! a Lease held by one pod is never taken by another before it is released or has expired
//! ([`check_exclusion`]), and which pods held each Lease ([`LeaseLog::holders`]).

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};

/// One stored state of a Lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseState {
    pub name: String,
    pub resource_version: String,
    /// `spec.holderIdentity` (`""` when free).
    pub holder: String,
    pub acquire_time: Option<jiff::Timestamp>,
    pub renew_time: Option<jiff::Timestamp>,
    pub duration_seconds: i64,
    pub transitions: i32,
}

impl LeaseState {
    fn of(lease: &Lease) -> LeaseState {
        let spec = lease.spec.clone().unwrap_or_default();
        LeaseState {
            name: lease.metadata.name.clone().unwrap_or_default(),
            resource_version: lease.metadata.resource_version.clone().unwrap_or_default(),
            holder: spec.holder_identity.unwrap_or_default(),
            acquire_time: spec.acquire_time.map(|t| t.0),
            renew_time: spec.renew_time.map(|t| t.0),
            duration_seconds: i64::from(spec.lease_duration_seconds.unwrap_or(0)),
            transitions: spec.lease_transitions.unwrap_or(0),
        }
    }

    /// When this holding expires (`renewTime + leaseDurationSeconds`).
    pub fn expires(&self) -> Option<jiff::Timestamp> {
        self.renew_time?
            .checked_add(jiff::SignedDuration::from_secs(self.duration_seconds))
            .ok()
    }
}

/// The watch of one namespace's Leases, running until dropped.
#[derive(Debug)]
pub struct LeaseLog {
    states: Arc<Mutex<Vec<LeaseState>>>,
    errors: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl LeaseLog {
    /// Starts watching the Leases of `namespace` from now (a list gives the resource version).
    ///
    /// # Errors
    /// When the Leases cannot be listed.
    pub async fn start(kube: kube::Client, namespace: &str) -> anyhow::Result<LeaseLog> {
        let api: Api<Lease> = Api::namespaced(kube, namespace);
        let listed = api.list(&ListParams::default()).await?;
        let states: Arc<Mutex<Vec<LeaseState>>> = Arc::new(Mutex::new(
            listed.items.iter().map(LeaseState::of).collect(),
        ));
        let errors = Arc::new(Mutex::new(Vec::new()));
        let version = listed.metadata.resource_version.unwrap_or_default();
        let task = tokio::spawn(watch(api, version, states.clone(), errors.clone()));
        Ok(LeaseLog {
            states,
            errors,
            task,
        })
    }

    /// Every state seen so far, in order.
    pub fn states(&self) -> Vec<LeaseState> {
        lock(&self.states).clone()
    }

    /// Watch errors (a gap in the log), if any.
    pub fn errors(&self) -> Vec<String> {
        lock(&self.errors).clone()
    }

    /// The pods that held Lease `name`, in order of taking it.
    pub fn holders(&self, name: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for state in self.states().into_iter().filter(|s| s.name == name) {
            if !state.holder.is_empty() && out.last() != Some(&state.holder) {
                out.push(state.holder);
            }
        }
        out
    }
}

impl Drop for LeaseLog {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn watch(
    api: Api<Lease>,
    mut version: String,
    states: Arc<Mutex<Vec<LeaseState>>>,
    errors: Arc<Mutex<Vec<String>>>,
) {
    loop {
        let params = WatchParams::default().timeout(290);
        let stream = match api.watch(&params, &version).await {
            Ok(stream) => stream,
            Err(e) => {
                lock(&errors).push(format!("watch: {e}"));
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                continue;
            }
        };
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            match event {
                Ok(WatchEvent::Added(lease) | WatchEvent::Modified(lease)) => {
                    let state = LeaseState::of(&lease);
                    version.clone_from(&state.resource_version);
                    lock(&states).push(state);
                }
                Ok(WatchEvent::Deleted(lease)) => {
                    version = lease.metadata.resource_version.unwrap_or(version);
                }
                Ok(WatchEvent::Bookmark(b)) => version = b.metadata.resource_version,
                Ok(WatchEvent::Error(e)) => lock(&errors).push(format!("watch event: {e:?}")),
                Err(e) => lock(&errors).push(format!("watch stream: {e}")),
            }
        }
    }
}

/// The lock's promise over `states` (in the order the API server stored them): whenever a Lease
/// goes from one holder to another without being released in between, the first holding had
/// expired when the second was acquired. `Err` names each violation.
pub fn check_exclusion(states: &[LeaseState]) -> Result<(), String> {
    let mut names: Vec<&str> = states.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let mut violations = Vec::new();
    for name in names {
        let mut last: Option<&LeaseState> = None;
        for state in states.iter().filter(|s| s.name == name) {
            if let Some(previous) = last
                && !previous.holder.is_empty()
                && !state.holder.is_empty()
                && previous.holder != state.holder
            {
                let expired = match (previous.expires(), state.acquire_time) {
                    (Some(expires), Some(acquired)) => expires < acquired,
                    _ => false,
                };
                if !expired {
                    violations.push(format!(
                        "{name}: {} took it from {} (renewed {:?}, {} s) at {:?} without a release",
                        state.holder,
                        previous.holder,
                        previous.renew_time,
                        previous.duration_seconds,
                        state.acquire_time
                    ));
                }
            }
            last = Some(state);
        }
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(violations.join("; "))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(holder: &str, renewed_at_s: i64, acquired_at_s: i64) -> LeaseState {
        let at = |s: i64| Some(jiff::Timestamp::from_second(1_800_000_000 + s).unwrap());
        LeaseState {
            name: "hypershift-placement-x".into(),
            resource_version: String::new(),
            holder: holder.into(),
            acquire_time: at(acquired_at_s),
            renew_time: at(renewed_at_s),
            duration_seconds: 15,
            transitions: 0,
        }
    }

    #[test]
    fn a_release_between_holders_is_exclusion() {
        let states = [state("pod-a", 0, 0), state("", 0, 0), state("pod-b", 1, 1)];
        assert_eq!(check_exclusion(&states), Ok(()));
    }

    #[test]
    fn a_takeover_is_allowed_only_after_expiry() {
        let expired = [state("pod-a", 0, 0), state("pod-b", 16, 16)];
        assert_eq!(check_exclusion(&expired), Ok(()));
        let stolen = [state("pod-a", 0, 0), state("pod-b", 5, 5)];
        let err = check_exclusion(&stolen).unwrap_err();
        assert!(err.contains("pod-b took it from pod-a"), "{err}");
    }
}
