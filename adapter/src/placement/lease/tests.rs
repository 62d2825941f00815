//! The placement lease against the in-memory store, on a paused tokio clock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use super::fake::{FakeLeases, bump, free, held_by};
use super::*;

const CONSUMER: &str = "mgmt-europe-west2-a-0123456789-abcdefghij-0123456789-abcdefghij";
const ME: &str = "hyperfleet-hypershift-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-1-x7k2p";
const OTHER: &str = "hyperfleet-hypershift-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6c-1-q9w3e";

fn lock(api: &FakeLeases) -> PlacementLock<&FakeLeases> {
    PlacementLock {
        api: Ok(api),
        holder: ME.to_owned(),
        wait: Duration::from_secs(20),
    }
}

fn holder(api: &FakeLeases) -> String {
    api.lease(&lease_name(CONSUMER))
        .unwrap()
        .spec
        .unwrap()
        .holder_identity
        .unwrap_or_default()
}

async fn acquire(lock: &PlacementLock<&FakeLeases>) -> Acquired {
    lock.acquire(CONSUMER, &mut std::future::pending()).await
}

#[test]
fn the_lease_name_has_a_fixed_length_and_is_a_valid_object_name_for_any_consumer() {
    let long = lease_name(CONSUMER);
    let short = lease_name("a");
    assert_eq!(long.len(), 57);
    assert_eq!(short.len(), 57);
    assert_ne!(long, short);
    assert!(long.starts_with("hypershift-placement-"));
    assert!(
        long.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    );
    assert_eq!(long, lease_name(CONSUMER), "deterministic");
}

#[tokio::test(start_paused = true)]
async fn a_fresh_lease_is_created_held_by_this_pod_for_15s() {
    let api = FakeLeases::default();
    let lock = lock(&api);
    let Acquired::Held(held) = acquire(&lock).await else {
        panic!("not acquired")
    };
    assert_eq!(api.requests(), [format!("create {}", lease_name(CONSUMER))]);
    let spec = api.lease(&lease_name(CONSUMER)).unwrap().spec.unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some(ME));
    assert_eq!(spec.lease_duration_seconds, Some(15));
    assert!(spec.renew_time.is_some() && spec.acquire_time.is_some());
    lock.release(held).await;
    assert_eq!(holder(&api), "", "released: holder cleared");
}

#[tokio::test(start_paused = true)]
async fn a_free_lease_is_taken_with_a_put_on_its_resource_version() {
    let api = FakeLeases::default();
    let mut released = held_by(&lease_name(CONSUMER), "", 1);
    released.spec.as_mut().unwrap().holder_identity = Some(String::new());
    api.seed(released);
    let Acquired::Held(_held) = acquire(&lock(&api)).await else {
        panic!("not acquired")
    };
    let name = lease_name(CONSUMER);
    assert_eq!(
        api.requests(),
        [
            format!("create {name}"),
            format!("get {name}"),
            format!("replace {name}")
        ]
    );
    assert_eq!(holder(&api), ME);
}

#[tokio::test(start_paused = true)]
async fn an_expired_lease_of_a_dead_holder_is_taken_over() {
    let api = FakeLeases::default();
    api.seed(held_by(&lease_name(CONSUMER), OTHER, 16));
    let Acquired::Held(_held) = acquire(&lock(&api)).await else {
        panic!("not acquired")
    };
    assert_eq!(holder(&api), ME);
    let spec = api.lease(&lease_name(CONSUMER)).unwrap().spec.unwrap();
    assert_eq!(spec.lease_transitions, Some(1));
}

#[tokio::test(start_paused = true)]
async fn a_held_lease_is_waited_for_and_taken_once_its_holder_releases_it() {
    let api = FakeLeases::default();
    let name = lease_name(CONSUMER);
    api.seed(held_by(&name, OTHER, 0));
    // The holder releases while the third GET is on its way.
    api.on_next("get", |_| None);
    api.on_next("get", |_| None);
    let n = name.clone();
    api.on_next("get", move |leases| {
        free(leases, &n);
        None
    });
    let started = tokio::time::Instant::now();
    let Acquired::Held(_held) = acquire(&lock(&api)).await else {
        panic!("not acquired")
    };
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(50) && waited <= Duration::from_millis(500),
        "two jittered pauses of 25-250 ms: {waited:?}"
    );
    assert_eq!(holder(&api), ME);
    assert_eq!(
        api.requests()
            .iter()
            .filter(|r| r.starts_with("get"))
            .count(),
        3
    );
}

#[tokio::test(start_paused = true)]
async fn a_lease_held_for_the_whole_wait_passes_the_candidate_over_as_busy_naming_the_holder() {
    let api = FakeLeases::default();
    api.seed(held_by(&lease_name(CONSUMER), OTHER, 0));
    let started = tokio::time::Instant::now();
    let Acquired::Busy {
        holder: who,
        waited,
    } = acquire(&lock(&api)).await
    else {
        panic!("not busy")
    };
    assert_eq!(who, OTHER);
    assert_eq!(waited, Duration::from_secs(20));
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(20),
        "bounded by the wait"
    );
    assert_eq!(holder(&api), OTHER, "never taken");
}

#[tokio::test(start_paused = true)]
async fn the_wait_ends_at_shutdown() {
    let api = FakeLeases::default();
    api.seed(held_by(&lease_name(CONSUMER), OTHER, 0));
    let lock = lock(&api);
    let mut shutdown = Box::pin(tokio::time::sleep(Duration::from_secs(1)));
    let got = lock.acquire(CONSUMER, &mut shutdown).await;
    assert!(matches!(got, Acquired::Interrupted), "{got:?}");
}

#[tokio::test(start_paused = true)]
async fn losing_the_takeover_put_to_another_pod_waits_for_that_pod() {
    let api = FakeLeases::default();
    let name = lease_name(CONSUMER);
    api.seed(held_by(&name, OTHER, 30));
    // Another pod takes the expired lease between our GET and our PUT: our PUT is a 409.
    let n = name.clone();
    api.on_next("replace", move |leases| {
        let winner = held_by(&n, "the-winner", 0);
        let spec = winner.spec.clone();
        leases.get_mut(&n).unwrap().spec = spec;
        bump(leases, &n);
        None
    });
    let Acquired::Busy { holder: who, .. } = acquire(&lock(&api)).await else {
        panic!("not busy")
    };
    assert_eq!(who, "the-winner");
    assert_eq!(holder(&api), "the-winner", "the winner keeps it");
}

#[tokio::test(start_paused = true)]
async fn a_forbidden_create_makes_the_lock_unavailable_with_the_servers_words() {
    let api = FakeLeases::default();
    api.on_next("create", |_| {
        Some(LeaseError::Unusable(
            "HTTP 403 Forbidden: leases.coordination.k8s.io is forbidden: User \"system:serviceaccount:hyperfleet:hypershift-adapter\" cannot create resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"hyperfleet\"".into(),
        ))
    });
    let Acquired::Unavailable(e) = acquire(&lock(&api)).await else {
        panic!("not unavailable")
    };
    assert!(e.contains("403 Forbidden"), "{e}");
    assert_eq!(api.requests().len(), 1, "no retry on a refusal");
}

#[tokio::test(start_paused = true)]
async fn a_release_that_conflicts_is_logged_and_ignored() {
    let api = FakeLeases::default();
    let name = lease_name(CONSUMER);
    let lock = lock(&api);
    let Acquired::Held(held) = acquire(&lock).await else {
        panic!("not acquired")
    };
    // It expired and someone took it before we released.
    let n = name.clone();
    api.on_next("replace", move |leases| {
        let taker = held_by(&n, OTHER, 0);
        leases.get_mut(&n).unwrap().spec = taker.spec.clone();
        bump(leases, &n);
        None
    });
    lock.release(held).await;
    assert_eq!(holder(&api), OTHER, "the taker's lease is not cleared");
}

#[tokio::test(start_paused = true)]
async fn a_holder_slower_than_half_the_lease_may_not_publish() {
    let api = FakeLeases::default();
    let Acquired::Held(held) = acquire(&lock(&api)).await else {
        panic!("not acquired")
    };
    assert!(!held.too_old_to_publish());
    tokio::time::advance(Duration::from_millis(7_400)).await;
    assert!(!held.too_old_to_publish());
    tokio::time::advance(Duration::from_millis(200)).await;
    assert!(held.too_old_to_publish());
}

#[test]
fn the_holder_is_the_pod_name_when_given() {
    assert_eq!(holder_identity(Some(ME)), ME);
    assert!(!holder_identity(None).is_empty());
    assert!(!holder_identity(Some("")).is_empty());
}
