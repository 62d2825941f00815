//! Placement across management clusters on the real servers (issue 24 item 3c): the built
//! `hypershift-adapter controlplane` in the HyperFleet inventory mode reads real
//! `ManagementCluster` entities (their health aggregated by the real HyperFleet API from the
//! `mgmt-health` reports the test PUTs), counts and publishes through the real Maestro, whose real
//! agents apply the HostedClusters to the real kube-apiserver, and takes its placement Leases on
//! that API server as the Job's ServiceAccount (`manifests/rbac.yaml`, the real RBAC).
//! `testbed::real::placement` has the world; each test has a region, a Maestro source id and a
//! namespace of its own, and stops only agents of consumers it made.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hypershift_adapter::placement::lease::lease_name;
use testbed::real::agents::{StoppedAgent, add_consumer_without_agent};
use testbed::real::lease_log::{LeaseLog, check_exclusion};
use testbed::real::operator::HostedClusterStage;
use testbed::real::placement::{
    AGENT, Cluster, PlacementBed, Pulse, applied_bundle, own_consumer, shared_consumers,
};
use testbed::real::wait::eventually;
use testbed::real::{RealSystems, unique};

const SUITE: &str = "real::placement";

/// Prints how long the test has run at `step` (shown with `--nocapture`).
macro_rules! step {
    ($started:expr, $what:expr) => {
        println!("{:>6.1}s {}", $started.elapsed().as_secs_f64(), $what)
    };
}
/// Capacity of each management cluster in the concurrency test, and its clusters.
const CAPACITY: u64 = 2;
const CLUSTERS: usize = 8;

/// Pulses `cluster` until one's `(type, (status, reason))` matches; that pulse.
async fn pulse_until(
    bed: &PlacementBed,
    cluster: &Cluster,
    type_: &str,
    want: (&str, &str),
) -> Pulse {
    eventually(AGENT, &format!("{type_}={want:?}"), || async {
        let pulse = bed.pulse(cluster).await?;
        let got = pulse.condition(type_);
        Ok(((got.0.as_str(), got.1.as_str()) == want).then_some(pulse))
    })
    .await
    .unwrap_or_else(|e| panic!("{e:#}"))
}

/// `(status, observed_generation, reason)` of HyperFleet's condition `type_` on `cluster`.
async fn concluded(bed: &PlacementBed, cluster: &Cluster, type_: &str) -> (String, i64, String) {
    let c = bed
        .api
        .conclusion(&cluster.href, type_)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("no {type_} on {}", cluster.href));
    (c.status, c.observed_generation, c.reason)
}

/// Eight clusters' first pulses at once over three management clusters of capacity 2: exactly two
/// placed on each (never more at any moment, sampled from Maestro while they run), the other two
/// refused `NoManagementClusterAvailable` naming every candidate full; every placed cluster has
/// one bundle, on the consumer its report names, whose real agent applied its HostedCluster (the
/// HostedCluster's owner is that bundle's AppliedManifestWork); every placement went through its
/// consumer's Lease on the real API server (its pod took that Lease), no Lease passed from one
/// pod to another without a release or expiry, and all are free at the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_never_exceed_capacity_and_place_each_cluster_once() {
    let t = std::time::Instant::now();
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let consumers = shared_consumers(real);
    let bed = PlacementBed::start(real, "pl-cap").await.unwrap();
    let mut mcs = Vec::new();
    for (i, consumer) in consumers.iter().enumerate() {
        let mc = bed
            .add_management_cluster(&format!("mc{i}"), consumer, CAPACITY)
            .await
            .unwrap();
        bed.report_health(&mc, true).await.unwrap();
        mcs.push(mc);
    }
    let mut clusters = Vec::new();
    for i in 0..CLUSTERS {
        clusters.push(bed.create_cluster(&format!("c{i}")).await.unwrap());
    }
    let leases = LeaseLog::start(bed.kube.clone(), &bed.namespace)
        .await
        .unwrap();
    step!(t, "set up");

    let done = AtomicBool::new(false);
    let all = async {
        let pulses = futures::future::join_all(clusters.iter().map(|c| bed.pulse(c))).await;
        done.store(true, Ordering::SeqCst);
        pulses
    };
    let sample = async {
        let mut peak: BTreeMap<&str, usize> = BTreeMap::new();
        loop {
            let last = done.load(Ordering::SeqCst);
            for consumer in consumers {
                let load = bed.load(consumer).await.unwrap();
                let slot = peak.entry(consumer.as_str()).or_default();
                *slot = (*slot).max(load);
            }
            if last {
                return peak;
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    };
    let (pulses, peak) = tokio::join!(all, sample);
    let pulses: Vec<Pulse> = pulses.into_iter().map(|p| p.unwrap()).collect();
    step!(t, "pulsed");

    let expected: BTreeMap<&str, usize> = consumers.iter().map(|c| (c.as_str(), 2)).collect();
    assert_eq!(
        peak, expected,
        "the most control planes seen on each consumer"
    );
    let (placed, refused): (Vec<_>, Vec<_>) = clusters
        .iter()
        .zip(&pulses)
        .partition(|(_, p)| p.condition("Applied").0 == "True");
    assert_eq!(
        (placed.len(), refused.len()),
        (6, 2),
        "{:#?}",
        pulses
            .iter()
            .map(|p| (p.condition("Applied"), p.placed_on()))
            .collect::<Vec<_>>()
    );
    for (cluster, pulse) in &refused {
        for type_ in ["Applied", "Available", "Health"] {
            assert_eq!(
                pulse.condition(type_),
                ("False".into(), "NoManagementClusterAvailable".into()),
                "{type_}: {}",
                pulse.explain()
            );
        }
        let message = pulse.message("Applied");
        for mc in &mcs {
            assert!(
                message.contains(&format!("{}: full: 2/2", mc.name)),
                "{message}"
            );
        }
        assert!(bed.works(cluster).await.unwrap().is_empty());
        assert!(bed.hosted_cluster(cluster).await.unwrap().is_none());
    }
    let mut per_consumer: BTreeMap<String, usize> = BTreeMap::new();
    for (cluster, pulse) in &placed {
        assert_eq!(
            pulse.condition("Applied"),
            ("True".into(), "ManifestWorkCreated".into()),
            "{}",
            pulse.explain()
        );
        let works = bed.works(cluster).await.unwrap();
        assert_eq!(
            works.len(),
            1,
            "one bundle ever stored for {}: {works:?}",
            cluster.name
        );
        let work = &works[0];
        assert_eq!(work.consumer_name, pulse.placed_on());
        assert!(work.deleted_at.is_none());
        *per_consumer.entry(work.consumer_name.clone()).or_default() += 1;
        let holders = leases.holders(&lease_name(&work.consumer_name));
        assert!(
            holders.contains(&pulse.pod),
            "{} placed on {} without holding its Lease; holders {holders:?}",
            pulse.pod,
            work.consumer_name
        );
    }
    assert_eq!(
        per_consumer,
        consumers
            .iter()
            .map(|c| (c.clone(), 2))
            .collect::<BTreeMap<_, _>>()
    );
    for (cluster, pulse) in &placed {
        let work = bed.works(cluster).await.unwrap().remove(0);
        let hc = bed.applied_by(cluster, &work.id).await.unwrap();
        assert_eq!(
            hc["metadata"]["labels"]["hyperfleet.io/cluster-id"],
            cluster.id.as_str(),
            "{}",
            pulse.pod
        );
    }
    step!(t, "applied");
    assert!(leases.errors().is_empty(), "{:?}", leases.errors());
    let states = leases.states();
    check_exclusion(&states).unwrap();
    for consumer in consumers {
        let lease = bed
            .lease(consumer)
            .await
            .unwrap()
            .expect("a Lease per consumer used");
        let spec = lease.spec.unwrap_or_default();
        assert_eq!(
            spec.holder_identity.as_deref(),
            Some(""),
            "released: {consumer}"
        );
        assert!(
            leases.holders(&lease_name(consumer)).len() >= 2,
            "{states:#?}"
        );
    }

    // What HyperFleet concludes for a refused cluster: its report reaches the real API.
    let (cluster, pulse) = refused[0];
    bed.others_report(cluster).await.unwrap();
    assert_eq!(bed.report(cluster, pulse).await.unwrap(), 201);
    assert_eq!(
        concluded(&bed, cluster, "HypershiftSuccessful").await,
        ("False".into(), 1, "NoManagementClusterAvailable".into())
    );
    assert_eq!(concluded(&bed, cluster, "Reconciled").await.0, "False");
    assert_eq!(
        concluded(&bed, cluster, "LastKnownReconciled").await.0,
        "False"
    );
}

/// The management cluster chosen for a new control plane has no work agent (its consumer is
/// registered in Maestro, no agent ever connected): the first pulse publishes there and nothing
/// applies it; once `mgmt-health` reports that management cluster unavailable, the next pulse
/// withdraws the work (soft-deleted, never acknowledged) and places the cluster on the other one
/// (`FailedOverBeforeApply`), whose real agent applies it; later pulses stay there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_not_applied_before_its_agent_went_down_fails_over() {
    let t = std::time::Instant::now();
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let elsewhere = shared_consumers(real)[0].clone();
    let down = unique("place-noagent");
    add_consumer_without_agent(real, &down).await.unwrap();
    let bed = PlacementBed::start(real, "pl-fo").await.unwrap();
    let mc_down = bed.add_management_cluster("down", &down, 10).await.unwrap();
    bed.report_health(&mc_down, true).await.unwrap();
    // Not reported yet: passed over (Reconciled False) for the first placement.
    let mc_else = bed
        .add_management_cluster("else", &elsewhere, 10)
        .await
        .unwrap();
    let cluster = bed.create_cluster("c0").await.unwrap();

    let first = bed.pulse(&cluster).await.unwrap();
    step!(t, "first pulse");
    assert_eq!(
        first.condition("Applied"),
        ("True".into(), "ManifestWorkCreated".into()),
        "{}",
        first.explain()
    );
    assert_eq!(first.placed_on(), down);
    let works = bed.works(&cluster).await.unwrap();
    assert_eq!(works.len(), 1, "{works:?}");
    let withdrawn = works[0].clone();
    assert_eq!(withdrawn.consumer_name, down);

    bed.report_health(&mc_down, false).await.unwrap();
    bed.report_health(&mc_else, true).await.unwrap();
    let failover = bed.pulse(&cluster).await.unwrap();
    assert_eq!(
        failover.condition("Applied"),
        ("True".into(), "FailedOverBeforeApply".into()),
        "{}",
        failover.explain()
    );
    assert_eq!(
        failover.condition("Health").0,
        "True",
        "{}",
        failover.explain()
    );
    let message = failover.message("Applied");
    assert!(
        message.contains(&down) && message.contains(&elsewhere),
        "{message}"
    );
    assert!(
        message.contains("LastKnownReconciled"),
        "the deciding condition: {message}"
    );
    assert_eq!(failover.placed_on(), elsewhere);
    let works = bed.works(&cluster).await.unwrap();
    let (live, gone): (Vec<_>, Vec<_>) = works.iter().partition(|w| w.deleted_at.is_none());
    assert_eq!(live.len(), 1, "{works:?}");
    assert_eq!(live[0].consumer_name, elsewhere);
    assert_eq!(
        gone.len(),
        1,
        "the withdrawn one stays soft-deleted, its agent down: {works:?}"
    );
    assert_eq!(gone[0].id, withdrawn.id);
    let placed = live[0].clone();
    step!(t, "failed over");
    bed.applied_by(&cluster, &placed.id).await.unwrap();
    step!(t, "applied elsewhere");

    let after = bed.pulse(&cluster).await.unwrap();
    assert_eq!(after.condition("Applied").0, "True", "{}", after.explain());
    assert_ne!(after.condition("Applied").1, "FailedOverBeforeApply");
    assert_eq!(after.placed_on(), elsewhere);

    let hc = bed.hosted_cluster(&cluster).await.unwrap().unwrap();
    assert_eq!(
        applied_bundle(&hc).as_deref(),
        Some(placed.id.as_str()),
        "{hc}"
    );
    step!(t, "stays");
}

/// An applied, ready control plane whose management cluster's agent stops (and `mgmt-health`
/// reports it unavailable) is not moved although another management cluster is healthy: the pulse
/// keeps the last status fed back (Available True) with `Health=False
/// ManagementClusterUnavailable` naming the management cluster, publishes nothing, and HyperFleet
/// (the report through the framework's payload) still concludes `Reconciled`; the stored report
/// carries the outage. The agent back, Health recovers by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_applied_control_plane_is_not_moved_by_its_agents_outage() {
    let t = std::time::Instant::now();
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let elsewhere = shared_consumers(real)[1].clone();
    let out = own_consumer(real);
    step!(t, "consumer added");
    let bed = PlacementBed::start(real, "pl-out").await.unwrap();
    let mc_out = bed.add_management_cluster("out", &out, 10).await.unwrap();
    bed.report_health(&mc_out, true).await.unwrap();
    let mc_else = bed
        .add_management_cluster("else", &elsewhere, 10)
        .await
        .unwrap();
    let cluster = bed.create_cluster("c0").await.unwrap();
    bed.others_report(&cluster).await.unwrap();

    let first = bed.pulse(&cluster).await.unwrap();
    assert_eq!(first.placed_on(), out, "{}", first.explain());
    let work = bed.works(&cluster).await.unwrap().remove(0);
    bed.applied_by(&cluster, &work.id).await.unwrap();
    step!(t, "applied");
    bed.operator
        .write_hosted_cluster(&cluster.name, HostedClusterStage::Available)
        .await
        .unwrap();
    let ready = pulse_until(&bed, &cluster, "Available", ("True", "ControlPlaneReady")).await;
    step!(t, "ready");
    assert_eq!(bed.report(&cluster, &ready).await.unwrap(), 201);
    for type_ in ["Reconciled", "LastKnownReconciled", "HypershiftSuccessful"] {
        assert_eq!(concluded(&bed, &cluster, type_).await.0, "True", "{type_}");
    }

    step!(t, "stopping");
    let stopped = StoppedAgent::stop(real, &out).unwrap();
    bed.report_health(&mc_out, false).await.unwrap();
    bed.report_health(&mc_else, true).await.unwrap();
    step!(t, "agent stopped");
    let outage = bed.pulse(&cluster).await.unwrap();
    assert_eq!(
        outage.condition("Health"),
        ("False".into(), "ManagementClusterUnavailable".into()),
        "{}",
        outage.explain()
    );
    assert_eq!(
        outage.condition("Available"),
        ("True".into(), "ControlPlaneReady".into())
    );
    assert_eq!(outage.condition("Applied").0, "True");
    let message = outage.message("Health");
    assert!(
        message.contains(&out) && message.contains("restore the management cluster"),
        "{message}"
    );
    assert_eq!(outage.placed_on(), out);
    let works = bed.works(&cluster).await.unwrap();
    assert_eq!(works.len(), 1, "nothing published elsewhere: {works:?}");
    assert_eq!(
        (works[0].id.as_str(), works[0].version),
        (work.id.as_str(), work.version)
    );

    step!(t, "outage pulse");
    // What HyperFleet concludes: its aggregation reads Available only, so the cluster stays
    // Reconciled; the outage is in the stored report's Health.
    assert_eq!(bed.report(&cluster, &outage).await.unwrap(), 201);
    for type_ in ["Reconciled", "LastKnownReconciled", "HypershiftSuccessful"] {
        assert_eq!(concluded(&bed, &cluster, type_).await.0, "True", "{type_}");
    }
    let stored = bed
        .api
        .status_of(&cluster.href, "hypershift")
        .await
        .unwrap()
        .unwrap();
    let health = stored["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Health")
        .unwrap();
    assert_eq!(
        (&health["status"], &health["reason"]),
        (&"False".into(), &"ManagementClusterUnavailable".into()),
        "{stored}"
    );

    step!(t, "outage concluded");
    stopped.restart().unwrap();
    step!(t, "agent restarted");
    bed.report_health(&mc_out, true).await.unwrap();
    let recovered = bed.pulse(&cluster).await.unwrap();
    assert_eq!(
        recovered.condition("Health").0,
        "True",
        "{}",
        recovered.explain()
    );
    assert_eq!(recovered.placed_on(), out);
    assert_eq!(bed.works(&cluster).await.unwrap().len(), 1);
    step!(t, "recovered");
}
