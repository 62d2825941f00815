//! The placement lock (docs/placement.md, "The placement lease"):
//! one Kubernetes `coordination.k8s.io/v1` Lease per Maestro consumer, in the Job's namespace,
//! serializes the count-and-publish of new control planes on that consumer so that concurrent
//! pulses cannot overshoot `max_hosted_clusters`.
//!
//! Standard Lease semantics only: create (409 when it exists), GET, PUT with the read
//! `metadata.resourceVersion` (409 when someone wrote it first). A lease is free when its
//! `spec.holderIdentity` is empty, expired when `spec.renewTime + spec.leaseDurationSeconds` is
//! before now (or it has no `renewTime`); a free or expired lease is taken with a PUT. Release is
//! client-go's idiom: a PUT with `holderIdentity` cleared; a failed release leaves the lease to
//! expire.

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use tokio::time::Instant;
use uuid::Uuid;

/// `spec.leaseDurationSeconds` of the placement lease.
pub const LEASE_DURATION_SECONDS: i32 = 15;
/// How long a pulse waits for a held lease before passing the candidate over (default of
/// `--placement-lock-wait`).
pub const DEFAULT_LOCK_WAIT: &str = "20s";
/// The jittered pause between two attempts on a held lease, in milliseconds.
const BACKOFF_MS: std::ops::RangeInclusive<u64> = 25..=250;
/// Prefix of every placement lease's name.
pub const LEASE_PREFIX: &str = "hypershift-placement-";
/// One lease request's own time limit.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The lease of `consumer`: `hypershift-placement-<UUIDv5 (namespace OID) of the consumer name>`
/// (57 characters whatever the consumer's name, a valid object name).
pub fn lease_name(consumer: &str) -> String {
    format!(
        "{LEASE_PREFIX}{}",
        Uuid::new_v5(&Uuid::NAMESPACE_OID, consumer.as_bytes())
    )
}

/// Half the lease duration: a holder that took longer than this between acquiring and
/// publishing does not publish (it could overlap a taker).
pub fn publish_guard() -> Duration {
    Duration::from_secs(u64::from(LEASE_DURATION_SECONDS.unsigned_abs())) / 2
}

/// Why a lease request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseError {
    /// 409: the lease exists (create) or was written since it was read (PUT).
    Conflict(String),
    /// 404.
    NotFound(String),
    /// Anything else (403, 401, unreachable, timed out, bad configuration): the lock cannot be
    /// used.
    Unusable(String),
}

/// The three Lease requests the lock makes.
pub trait LeaseApi: Send + Sync {
    /// `GET` the lease; `None` when there is none.
    fn get(&self, name: &str) -> impl Future<Output = Result<Option<Lease>, LeaseError>> + Send;
    /// `POST` the lease.
    fn create(&self, lease: &Lease) -> impl Future<Output = Result<Lease, LeaseError>> + Send;
    /// `PUT` the lease (its `metadata.resourceVersion` is the precondition).
    fn replace(&self, lease: &Lease) -> impl Future<Output = Result<Lease, LeaseError>> + Send;
}

/// The Kubernetes API's Leases in one namespace.
#[derive(Clone)]
pub struct KubeLeases {
    api: kube::Api<Lease>,
}

impl std::fmt::Debug for KubeLeases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeLeases").finish_non_exhaustive()
    }
}

impl KubeLeases {
    /// The Leases of `namespace`, through `kubeconfig` (`--kubeconfig` / `KUBECONFIG`), else
    /// `~/.kube/config`, else the in-cluster service account ([`crate::kubeconfig::load`]).
    pub async fn connect(
        kubeconfig: Option<&std::path::Path>,
        namespace: &str,
    ) -> Result<Self, String> {
        let mut config = crate::kubeconfig::load(kubeconfig)
            .await
            .map_err(|e| format!("kubeconfig: {e}"))?;
        crate::kubeconfig::tune(&mut config, REQUEST_TIMEOUT);
        let client = kube::Client::try_from(config)
            .map_err(|e| format!("kube client: {}", crate::kubeconfig::error_chain(&e)))?;
        Ok(Self {
            api: kube::Api::namespaced(client, namespace),
        })
    }

    async fn timed<T>(call: impl Future<Output = Result<T, kube::Error>>) -> Result<T, LeaseError> {
        match tokio::time::timeout(REQUEST_TIMEOUT, call).await {
            Err(_) => Err(LeaseError::Unusable(format!(
                "the Kubernetes API did not answer within {}s",
                REQUEST_TIMEOUT.as_secs()
            ))),
            Ok(Ok(value)) => Ok(value),
            Ok(Err(kube::Error::Api(status))) => {
                let text = format!("HTTP {} {}: {}", status.code, status.reason, status.message);
                Err(match status.code {
                    409 => LeaseError::Conflict(text),
                    404 => LeaseError::NotFound(text),
                    _ => LeaseError::Unusable(text),
                })
            }
            Ok(Err(e)) => Err(LeaseError::Unusable(crate::kubeconfig::error_chain(&e))),
        }
    }
}

impl LeaseApi for KubeLeases {
    async fn get(&self, name: &str) -> Result<Option<Lease>, LeaseError> {
        match Self::timed(self.api.get(name)).await {
            Ok(lease) => Ok(Some(lease)),
            Err(LeaseError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn create(&self, lease: &Lease) -> Result<Lease, LeaseError> {
        Self::timed(self.api.create(&kube::api::PostParams::default(), lease)).await
    }

    async fn replace(&self, lease: &Lease) -> Result<Lease, LeaseError> {
        let name = lease.metadata.name.clone().unwrap_or_default();
        Self::timed(
            self.api
                .replace(&name, &kube::api::PostParams::default(), lease),
        )
        .await
    }
}

/// The placement lock of one pulse.
#[derive(Debug)]
pub struct PlacementLock<L> {
    /// The Leases (an error: why they cannot be used, reported when a placement needs them).
    pub api: Result<L, String>,
    /// `spec.holderIdentity`: this pod's name.
    pub holder: String,
    /// How long to wait for a held lease.
    pub wait: Duration,
}

/// A lease this pulse holds.
#[derive(Debug)]
pub struct Held {
    lease: Lease,
    since: Instant,
}

impl Held {
    /// True when more than [`publish_guard`] passed since the lease was acquired.
    pub fn too_old_to_publish(&self) -> bool {
        self.since.elapsed() > publish_guard()
    }

    /// The lease's name.
    pub fn name(&self) -> &str {
        self.lease.metadata.name.as_deref().unwrap_or_default()
    }
}

/// The outcome of [`PlacementLock::acquire`].
#[derive(Debug)]
pub enum Acquired {
    /// The lease is ours until released.
    Held(Box<Held>),
    /// Another holder kept it for the whole wait.
    Busy { holder: String, waited: Duration },
    /// The Lease API cannot be used (the error, not redacted yet).
    Unavailable(String),
    /// The pulse is shutting down.
    Interrupted,
}

/// The holder of a lease that is neither free nor expired at `now`; `None` when it can be taken.
fn current_holder(lease: &Lease, now: jiff::Timestamp) -> Option<String> {
    let spec = lease.spec.as_ref()?;
    let holder = spec.holder_identity.as_deref().unwrap_or_default();
    if holder.is_empty() {
        return None;
    }
    let renewed = spec.renew_time.as_ref()?.0;
    let duration = i64::from(spec.lease_duration_seconds.unwrap_or(0));
    let expires = renewed
        .checked_add(jiff::SignedDuration::from_secs(duration))
        .unwrap_or(renewed);
    (expires >= now).then(|| holder.to_owned())
}

impl<L: LeaseApi> PlacementLock<L> {
    /// Takes `consumer`'s lease, waiting (jittered 25–250 ms pauses) while another pulse holds
    /// it, at most [`Self::wait`] or until `shutdown`.
    pub async fn acquire(
        &self,
        consumer: &str,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> Acquired {
        let api = match &self.api {
            Ok(api) => api,
            Err(e) => return Acquired::Unavailable(e.clone()),
        };
        let name = lease_name(consumer);
        let deadline = Instant::now() + self.wait;
        loop {
            let holder = match self.try_take(api, &name).await {
                Ok(Ok(held)) => {
                    tracing::debug!(
                        management_cluster = consumer,
                        lease = name,
                        "placement lease acquired"
                    );
                    return Acquired::Held(Box::new(held));
                }
                Ok(Err(holder)) => holder,
                Err(e) => return Acquired::Unavailable(e),
            };
            let now = Instant::now();
            if now >= deadline {
                tracing::warn!(
                    management_cluster = consumer,
                    lease = name,
                    holder,
                    waited_s = self.wait.as_secs_f64(),
                    "the placement lease stayed held for the whole wait"
                );
                return Acquired::Busy {
                    holder,
                    waited: self.wait,
                };
            }
            let pause = Duration::from_millis(fastrand::u64(BACKOFF_MS)).min(deadline - now);
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = &mut *shutdown => return Acquired::Interrupted,
            }
        }
    }

    /// One attempt: `Ok(Ok)` taken, `Ok(Err(holder))` held by someone else (or lost a race),
    /// `Err` the API cannot be used.
    async fn try_take(&self, api: &L, name: &str) -> Result<Result<Held, String>, String> {
        let now = jiff::Timestamp::now();
        let since = Instant::now();
        let fresh = Lease {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(self.holder.clone()),
                lease_duration_seconds: Some(LEASE_DURATION_SECONDS),
                acquire_time: Some(MicroTime(now)),
                renew_time: Some(MicroTime(now)),
                ..LeaseSpec::default()
            }),
        };
        match api.create(&fresh).await {
            Ok(lease) => return Ok(Ok(Held { lease, since })),
            Err(LeaseError::Conflict(_)) => {}
            Err(LeaseError::NotFound(e) | LeaseError::Unusable(e)) => return Err(e),
        }
        let current = match api.get(name).await {
            Ok(Some(current)) => current,
            // Deleted since: the next attempt creates it.
            Ok(None) => return Ok(Err(String::new())),
            Err(LeaseError::Conflict(e) | LeaseError::NotFound(e) | LeaseError::Unusable(e)) => {
                return Err(e);
            }
        };
        if let Some(holder) = current_holder(&current, now) {
            return Ok(Err(holder));
        }
        let previous = current
            .spec
            .as_ref()
            .and_then(|s| s.holder_identity.clone())
            .unwrap_or_default();
        let mut take = current;
        let spec = take.spec.get_or_insert_with(LeaseSpec::default);
        if !previous.is_empty() {
            tracing::info!(
                lease = name,
                previous_holder = previous,
                "taking over an expired placement lease"
            );
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
        }
        spec.holder_identity = Some(self.holder.clone());
        spec.lease_duration_seconds = Some(LEASE_DURATION_SECONDS);
        spec.acquire_time = Some(MicroTime(now));
        spec.renew_time = Some(MicroTime(now));
        match api.replace(&take).await {
            Ok(lease) => Ok(Ok(Held { lease, since })),
            Err(LeaseError::Conflict(_) | LeaseError::NotFound(_)) => Ok(Err(previous)),
            Err(LeaseError::Unusable(e)) => Err(e),
        }
    }

    /// Gives `held` back (holder cleared); a failure is logged and the lease left to expire.
    pub async fn release(&self, held: Box<Held>) {
        let Ok(api) = &self.api else { return };
        let name = held.name().to_owned();
        let mut lease = held.lease;
        if let Some(spec) = lease.spec.as_mut() {
            spec.holder_identity = Some(String::new());
        }
        match api.replace(&lease).await {
            Ok(_) => tracing::debug!(lease = name, "placement lease released"),
            Err(LeaseError::Conflict(e) | LeaseError::NotFound(e)) => {
                tracing::warn!(lease = name, error = %crate::message::redact(&e), "the placement lease was taken or removed before its release (it had expired); going on");
            }
            Err(LeaseError::Unusable(e)) => {
                tracing::warn!(lease = name, error = %crate::message::redact(&e), "cannot release the placement lease; it expires by itself");
            }
        }
    }
}

/// This pod's name for `spec.holderIdentity`: `POD_NAME` (downward API), else `HOSTNAME` (a
/// container's hostname is its pod's name), else `hypershift-adapter-<process id>`.
pub fn holder_identity(pod_name: Option<&str>) -> String {
    pod_name
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()))
        .unwrap_or_else(|| format!("hypershift-adapter-{}", std::process::id()))
}

#[cfg(test)]
pub mod fake;
#[cfg(test)]
mod tests;

#[cfg(test)]
impl LeaseApi for &fake::FakeLeases {
    async fn get(&self, name: &str) -> Result<Option<Lease>, LeaseError> {
        (*self).get(name).await
    }
    async fn create(&self, lease: &Lease) -> Result<Lease, LeaseError> {
        (*self).create(lease).await
    }
    async fn replace(&self, lease: &Lease) -> Result<Lease, LeaseError> {
        (*self).replace(lease).await
    }
}
