//! The placement Lease of a management cluster (`coordination.k8s.io/v1`), as the Kubernetes API
//! answers its GET when the create found it there (kube-rs deserializing a `Lease`), through
//! `PlacementLock::acquire` (taken when free or expired, else held by its holder) and `release`.
//!
//! Properties: a lease held by someone else until after now is never taken and its holder is
//! named; a free or expired one is taken with this pod as holder, the transition counted when it
//! had a holder, without overflow; the release clears the holder.
#![no_main]

use std::sync::Mutex;
use std::time::Duration;

use hypershift_adapter::placement::lease::{
    Acquired, LEASE_DURATION_SECONDS, LeaseApi, LeaseError, PlacementLock,
};
use hypershift_fuzz::{CONSUMER, block_on};
use k8s_openapi::api::coordination::v1::Lease;
use libfuzzer_sys::fuzz_target;

const HOLDER: &str = "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-1-x7k2p";

/// A Lease API where the lease exists already and is `current`; every PUT is recorded.
struct Existing {
    current: Lease,
    replaced: Mutex<Vec<Lease>>,
}

impl LeaseApi for Existing {
    async fn get(&self, _name: &str) -> Result<Option<Lease>, LeaseError> {
        Ok(Some(self.current.clone()))
    }
    async fn create(&self, _lease: &Lease) -> Result<Lease, LeaseError> {
        Err(LeaseError::Conflict("HTTP 409 AlreadyExists".to_owned()))
    }
    async fn replace(&self, lease: &Lease) -> Result<Lease, LeaseError> {
        self.replaced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(lease.clone());
        Ok(lease.clone())
    }
}

/// Whether `lease` is held at `now`, when that is clear (not within a second of expiring).
fn held_at(lease: &Lease, now: jiff::Timestamp) -> Option<bool> {
    let spec = lease.spec.as_ref()?;
    let holder = spec.holder_identity.as_deref().unwrap_or_default();
    if holder.is_empty() {
        return Some(false);
    }
    let renewed = spec.renew_time.as_ref()?.0;
    let expires = renewed.as_second() + i64::from(spec.lease_duration_seconds.unwrap_or(0));
    let now = now.as_second();
    (expires.abs_diff(now) > 1).then_some(expires > now)
}

fuzz_target!(|data: &[u8]| {
    let Ok(current) = serde_json::from_slice::<Lease>(data) else {
        return;
    };
    let api = Existing {
        current: current.clone(),
        replaced: Mutex::new(Vec::new()),
    };
    let lock = PlacementLock {
        api: Ok(api),
        holder: HOLDER.to_owned(),
        wait: Duration::ZERO,
    };
    let before = jiff::Timestamp::now();
    let acquired = block_on(async {
        let mut shutdown = std::pin::pin!(std::future::pending::<()>());
        lock.acquire(CONSUMER, &mut shutdown).await
    });
    let held = held_at(&current, before);
    let api = lock.api.as_ref().unwrap_or_else(|e| panic!("{e}"));
    match acquired {
        Acquired::Held(taken) => {
            assert_ne!(
                held,
                Some(true),
                "a lease held by another was taken: {current:?}"
            );
            let put = api
                .replaced
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            let spec = put
                .last()
                .and_then(|l| l.spec.clone())
                .unwrap_or_else(|| panic!("taken without a PUT"));
            assert_eq!(spec.holder_identity.as_deref(), Some(HOLDER));
            assert_eq!(spec.lease_duration_seconds, Some(LEASE_DURATION_SECONDS));
            let previous = current.spec.as_ref();
            let had_holder = previous
                .and_then(|s| s.holder_identity.as_deref())
                .is_some_and(|h| !h.is_empty());
            let transitions = previous.and_then(|s| s.lease_transitions).unwrap_or(0);
            if had_holder {
                assert_eq!(spec.lease_transitions, Some(transitions.saturating_add(1)));
            }
            block_on(lock.release(taken));
            let put = api
                .replaced
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            let released = put.last().and_then(|l| l.spec.clone()).unwrap_or_default();
            assert_eq!(released.holder_identity.as_deref(), Some(""));
        }
        Acquired::Busy { holder, .. } => {
            assert_ne!(
                held,
                Some(false),
                "a free or expired lease was not taken: {current:?}"
            );
            let named = current
                .spec
                .as_ref()
                .and_then(|s| s.holder_identity.clone());
            assert_eq!(Some(holder), named, "the busy holder is not the lease's");
        }
        other => panic!("unexpected {other:?}"),
    }
});
