//! An in-memory Lease store with Kubernetes' create/PUT preconditions, recorded requests and
//! one-shot hooks (tests only).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::Mutex;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};

use super::{LeaseApi, LeaseError};

/// A hook run on the next request of its verb: it may change the store and answer instead.
type Hook = Box<dyn FnOnce(&mut HashMap<String, Lease>) -> Option<LeaseError> + Send>;

#[derive(Default)]
struct State {
    leases: HashMap<String, Lease>,
    version: u64,
    requests: Vec<String>,
    hooks: Vec<(&'static str, Hook)>,
}

/// The fake; `requests()` lists `"<verb> <name>"`.
#[derive(Default)]
pub struct FakeLeases {
    state: Mutex<State>,
}

impl std::fmt::Debug for FakeLeases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeLeases").finish_non_exhaustive()
    }
}

/// A lease held by `holder`, renewed `age_s` seconds ago.
pub fn held_by(name: &str, holder: &str, age_s: i64) -> Lease {
    let renewed = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(age_s);
    Lease {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.to_owned()),
            lease_duration_seconds: Some(super::LEASE_DURATION_SECONDS),
            acquire_time: Some(MicroTime(renewed)),
            renew_time: Some(MicroTime(renewed)),
            ..LeaseSpec::default()
        }),
    }
}

/// Clears the holder of `name` in a store (what the holder's release does).
pub fn free(leases: &mut HashMap<String, Lease>, name: &str) {
    if let Some(spec) = leases.get_mut(name).and_then(|l| l.spec.as_mut()) {
        spec.holder_identity = Some(String::new());
    }
    bump(leases, name);
}

/// Gives `name` a new resourceVersion (someone wrote it).
pub fn bump(leases: &mut HashMap<String, Lease>, name: &str) {
    if let Some(lease) = leases.get_mut(name) {
        let next = lease
            .metadata
            .resource_version
            .as_deref()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
            + 1_000;
        lease.metadata.resource_version = Some(next.to_string());
    }
}

impl FakeLeases {
    /// Stores `lease` as it is (a new resourceVersion).
    pub fn seed(&self, mut lease: Lease) {
        let mut state = self.state.lock().unwrap();
        state.version += 1;
        lease.metadata.resource_version = Some(state.version.to_string());
        let name = lease.metadata.name.clone().unwrap();
        state.leases.insert(name, lease);
    }

    /// The stored lease.
    pub fn lease(&self, name: &str) -> Option<Lease> {
        self.state.lock().unwrap().leases.get(name).cloned()
    }

    /// Runs `hook` on the next `verb` (`get`, `create`, `replace`) request.
    pub fn on_next(
        &self,
        verb: &'static str,
        hook: impl FnOnce(&mut HashMap<String, Lease>) -> Option<LeaseError> + Send + 'static,
    ) {
        self.state
            .lock()
            .unwrap()
            .hooks
            .push((verb, Box::new(hook)));
    }

    /// Every request so far, `"<verb> <name>"`.
    pub fn requests(&self) -> Vec<String> {
        self.state.lock().unwrap().requests.clone()
    }

    fn enter(&self, verb: &'static str, name: &str) -> Option<LeaseError> {
        let mut state = self.state.lock().unwrap();
        state.requests.push(format!("{verb} {name}"));
        let at = state.hooks.iter().position(|(v, _)| *v == verb)?;
        let (_, hook) = state.hooks.remove(at);
        hook(&mut state.leases)
    }
}

fn name_of(lease: &Lease) -> String {
    lease.metadata.name.clone().unwrap_or_default()
}

impl LeaseApi for FakeLeases {
    async fn get(&self, name: &str) -> Result<Option<Lease>, LeaseError> {
        if let Some(e) = self.enter("get", name) {
            return Err(e);
        }
        Ok(self.lease(name))
    }

    async fn create(&self, lease: &Lease) -> Result<Lease, LeaseError> {
        let name = name_of(lease);
        if let Some(e) = self.enter("create", &name) {
            return Err(e);
        }
        let mut state = self.state.lock().unwrap();
        if state.leases.contains_key(&name) {
            return Err(LeaseError::Conflict(format!(
                "HTTP 409 AlreadyExists: leases.coordination.k8s.io \"{name}\" already exists"
            )));
        }
        state.version += 1;
        let mut stored = lease.clone();
        stored.metadata.resource_version = Some(state.version.to_string());
        state.leases.insert(name, stored.clone());
        Ok(stored)
    }

    async fn replace(&self, lease: &Lease) -> Result<Lease, LeaseError> {
        let name = name_of(lease);
        if let Some(e) = self.enter("replace", &name) {
            return Err(e);
        }
        let mut state = self.state.lock().unwrap();
        let Some(current) = state.leases.get(&name) else {
            return Err(LeaseError::NotFound(format!(
                "HTTP 404 NotFound: leases.coordination.k8s.io \"{name}\" not found"
            )));
        };
        if current.metadata.resource_version != lease.metadata.resource_version {
            return Err(LeaseError::Conflict(format!(
                "HTTP 409 Conflict: Operation cannot be fulfilled on leases.coordination.k8s.io \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
            )));
        }
        state.version += 1;
        let mut stored = lease.clone();
        stored.metadata.resource_version = Some(state.version.to_string());
        state.leases.insert(name, stored.clone());
        Ok(stored)
    }
}
