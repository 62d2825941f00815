//! Placement across management clusters end to end (issue 17 item 7): real pulses (the built
//! `hypershift-adapter controlplane`/`nodepool` and `status-reporter` as the Job's two containers,
//! against the fake Kubernetes API server) in the HyperFleet inventory mode
//! (`MANAGEMENT_CLUSTERS_FROM_API=true`; one case the file inventory) over a
//! [`PlacementWorld`]: a fake Maestro with a consumer and a work agent per management cluster and
//! the fake HyperFleet API serving their `ManagementCluster` entities. Each Job goes through the
//! real task config to the API (`hyperfleet_support::bridge`), so what HyperFleet concludes
//! (`Reconciled`, `LastKnownReconciled`, `HypershiftSuccessful`) is asserted too.
//!
//! Covered: placement by region and load, capacity (full → next; all full →
//! `NoManagementClusterAvailable` naming every candidate's reason), cordoned and unhealthy and
//! unknown consumers passed over, sticky across update and delete (hard delete concluded),
//! NodePools on their control plane's consumer, failover before apply (once), no move after
//! apply (`ManagementClusterUnavailable`), two racing pulses ending with one bundle, and the
//! request counts of a create and of a steady-state pulse.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(
    dead_code,
    reason = "the conformance test uses the rest of the emulation"
)]
mod hyperfleet_support;

use hyperfleet_support::bridge::{Adapter, Bridge};
use hypershift_adapter::placement::lease::lease_name;
use serde_json::json;
use testbed::hyperfleet::fake_api::{FakeHyperfleetApi, PREFIX};
use testbed::kube_api::{ApiServer, RecordedRequest};
use testbed::local_pulse::scenario::{Stage, hosted_cluster_status};
use testbed::maestro::{MaestroCounts, Resource};
use testbed::placement::{McSpec, PlacementWorld};
use testbed::pulse_job::{controlplane_job_name, nodepool_job_name};
use testbed::real_pulse::{self, JobPulse};

const EAST: &str = "us-east1";
const WEST: &str = "europe-west2";
const EAST_A: &str = "mgmt-us-east1-a";
const EAST_B: &str = "mgmt-us-east1-b";
const EAST_C: &str = "mgmt-us-east1-c";
const EAST_D: &str = "mgmt-us-east1-d";
const EAST_E: &str = "mgmt-us-east1-e";
const WEST_A: &str = "mgmt-europe-west2-a";
/// The other adapters HyperFleet requires for a cluster.
const OTHER_CLUSTER_ADAPTERS: [&str; 3] = ["validation", "dns", "pullsecret"];
/// The longest NodePool name (15).
const NODEPOOL_NAME: &str = "workers-a-12345";

/// The fakes (the pulse Jobs run against the placement world's Kubernetes API, which holds the
/// placement leases), both task configs' bridges.
struct World {
    placement: PlacementWorld,
    controlplane: Bridge,
    nodepool: Bridge,
}

impl World {
    async fn start(mcs: &[McSpec]) -> World {
        let placement = PlacementWorld::start(mcs).await.unwrap();
        World {
            controlplane: Bridge::load(Adapter::ControlPlane, placement.api()),
            nodepool: Bridge::load(Adapter::NodePool, placement.api()),
            placement,
        }
    }

    fn api(&self) -> &FakeHyperfleetApi {
        self.placement.api()
    }

    fn maestro(&self) -> &testbed::maestro::FakeMaestro {
        self.placement.maestro()
    }

    fn generation(&self, object: &str) -> i64 {
        self.api().must("GET", object, None)["generation"]
            .as_i64()
            .unwrap()
    }

    /// One control-plane pulse of cluster `id` at its served generation, in the HyperFleet
    /// inventory mode (`env` replaces it when given); both containers must exit 0.
    async fn pulse(&self, id: &str) -> JobPulse {
        self.pulse_with(id, &self.placement.adapter_env(), self.placement.kube())
            .await
    }

    async fn pulse_with(&self, id: &str, env: &[(String, String)], server: &ApiServer) -> JobPulse {
        let generation = self.generation(&PlacementWorld::cluster_path(id));
        let mut env = env.to_vec();
        env.push(("CLUSTER_ID".into(), id.to_owned()));
        env.push(("GENERATION".into(), generation.to_string()));
        let job = controlplane_job_name(id, i32::try_from(generation).unwrap());
        env.push(("POD_NAME".into(), format!("{job}-x7k2p")));
        let pulse = real_pulse::run(
            server,
            &self.placement.dir().join(format!("cp-{id}")),
            &job,
            &env,
        )
        .await;
        assert!(pulse.ended_cleanly(), "{}", pulse.explain());
        pulse
    }

    /// Every stored control-plane bundle of cluster `id` (soft-deleted ones included).
    fn works(&self, id: &str) -> Vec<Resource> {
        self.maestro()
            .resources()
            .into_iter()
            .filter(|r| {
                r.metadata["labels"]["hyperfleet.io/cluster-id"] == id
                    && r.metadata["labels"]["hyperfleet.io/adapter"] == "controlplane"
            })
            .collect()
    }

    /// The one live control-plane bundle of cluster `id`.
    fn live_work(&self, id: &str) -> Resource {
        let live: Vec<Resource> = self
            .works(id)
            .into_iter()
            .filter(|r| r.deleted_at.is_none())
            .collect();
        assert_eq!(live.len(), 1, "live works of {id}: {live:?}");
        live.into_iter().next().unwrap()
    }

    /// The agent of the live work's consumer feeds back the HostedCluster at `stage`.
    fn hosted_cluster(&self, id: &str, stage: Stage) {
        let work = self.live_work(id);
        assert!(
            self.maestro()
                .set_feedback(&work.id, &hosted_cluster_status(stage)),
            "the agent of {} reports",
            work.consumer
        );
    }

    /// The pulse's Job through the task config of `object` to the API, a second after the last
    /// report; the API's answer.
    fn report(&self, object: &str, pulse: &JobPulse) -> Option<u16> {
        self.api()
            .clock()
            .advance(jiff::SignedDuration::from_secs(1));
        let bridge = if object.contains("/nodepools/") {
            &self.nodepool
        } else {
            &self.controlplane
        };
        let job = pulse.job.clone();
        bridge
            .report(self.api(), object, &|_| job.clone())
            .answer
            .map(|reply| reply.status)
    }

    /// Every other adapter HyperFleet requires for the cluster reports (`Finalized=True` once it
    /// is deleted).
    fn others_report(&self, object: &str) {
        for adapter in OTHER_CLUSTER_ADAPTERS {
            let served = self.api().must("GET", object, None);
            let deleting = served.get("deleted_time").is_some();
            self.api()
                .clock()
                .advance(jiff::SignedDuration::from_secs(1));
            let word = |b: bool| if b { "True" } else { "False" };
            let body = json!({
                "adapter": adapter,
                "observed_generation": served["generation"],
                "observed_time": self.api().clock().now().to_string(),
                "conditions": [
                    {"type": "Applied", "status": "True", "reason": "ManifestsApplied", "message": "resources applied"},
                    {"type": "Available", "status": word(!deleting), "reason": "Ready", "message": "available"},
                    {"type": "Health", "status": "True", "reason": "Healthy", "message": "adapter healthy"},
                    {"type": "Finalized", "status": word(deleting), "reason": "Finalized", "message": "finalized"},
                ],
                "data": {},
            });
            let status = self
                .api()
                .call(
                    "PUT",
                    &format!("{object}/statuses"),
                    Some(&body.to_string()),
                )
                .status;
            assert_eq!(status, 201, "{adapter}");
        }
    }

    /// `(status, observed_generation, reason)` of `type_` on `object`.
    fn conclusion(&self, object: &str, type_: &str) -> Option<(String, i64, String)> {
        let reply = self.api().call("GET", object, None);
        if reply.status != 200 {
            return None;
        }
        reply.body["status"]["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == type_)
            .map(|c| {
                (
                    c["status"].as_str().unwrap().to_owned(),
                    c["observed_generation"].as_i64().unwrap(),
                    c["reason"].as_str().unwrap_or_default().to_owned(),
                )
            })
    }

    /// HyperFleet concludes the cluster reconciled at its generation.
    fn assert_reconciled(&self, object: &str) {
        let g = self.generation(object);
        assert_eq!(
            self.conclusion(object, "Reconciled"),
            Some(("True".into(), g, "ReconciledAll".into()))
        );
        assert_eq!(
            self.conclusion(object, "LastKnownReconciled"),
            Some(("True".into(), g, "AllAdaptersReconciled".into()))
        );
        assert_eq!(
            self.conclusion(object, "HypershiftSuccessful")
                .map(|c| (c.0, c.1)),
            Some(("True".into(), g))
        );
    }

    /// Create → provisioning → available for cluster `id`, each Job reported: HyperFleet
    /// concludes it reconciled. Returns the consumer it lives on.
    async fn serve(&self, id: &str) -> String {
        let object = PlacementWorld::cluster_path(id);
        self.others_report(&object);
        let created = self.pulse(id).await;
        assert_eq!(
            condition(&created, "Applied"),
            ("True".into(), "ManifestWorkCreated".into()),
            "{}",
            created.explain()
        );
        assert_eq!(self.report(&object, &created), Some(201));
        self.hosted_cluster(id, Stage::Ready);
        let ready = self.pulse(id).await;
        assert_eq!(
            condition(&ready, "Available"),
            ("True".into(), "ControlPlaneReady".into()),
            "{}",
            ready.explain()
        );
        assert_eq!(self.report(&object, &ready), Some(201));
        self.assert_reconciled(&object);
        placed_on(&ready)
    }
}

/// `(status, reason)` of the Job's condition `type_`.
fn condition(pulse: &JobPulse, type_: &str) -> (String, String) {
    pulse
        .conditions()
        .into_iter()
        .find(|(t, _, _)| t == type_)
        .map(|(_, s, r)| (s, r))
        .unwrap_or_else(|| panic!("no {type_} on the Job: {}", pulse.explain()))
}

/// `data.management_cluster` of the pulse's report.
fn placed_on(pulse: &JobPulse) -> String {
    pulse.report_data()["management_cluster"]
        .as_str()
        .unwrap_or_else(|| panic!("no data.management_cluster: {}", pulse.explain()))
        .to_owned()
}

/// Two healthy, empty management clusters in us-east1 and one in europe-west2: the first
/// cluster in us-east1 goes to one of them, the second to the other (the least loaded), the one
/// in europe-west2 to its region's; every report names the consumer in `data` and in Applied's
/// message, and HyperFleet concludes the first reconciled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clusters_are_placed_by_region_and_load() {
    let world = World::start(&[
        McSpec::new(EAST_A, EAST, 200),
        McSpec::new(EAST_B, EAST, 200),
        McSpec::new(WEST_A, WEST, 200),
    ])
    .await;
    let first = world.placement.create_cluster(EAST, 1);
    let on = world.serve(&first).await;
    assert!(on == EAST_A || on == EAST_B, "{on}");
    assert_eq!(world.live_work(&first).consumer, on);

    let second = world.placement.create_cluster(EAST, 2);
    let pulse = world.pulse(&second).await;
    let other = if on == EAST_A { EAST_B } else { EAST_A };
    assert_eq!(placed_on(&pulse), other, "the least loaded");
    assert!(
        pulse.message("Applied").contains(other),
        "{}",
        pulse.message("Applied")
    );
    assert_eq!(world.live_work(&second).consumer, other);

    let west = world.placement.create_cluster(WEST, 1);
    let pulse = world.pulse(&west).await;
    assert_eq!(placed_on(&pulse), WEST_A);
    assert_eq!(
        world.placement.load_per_consumer(),
        [
            (EAST_A.to_owned(), 1),
            (EAST_B.to_owned(), 1),
            (WEST_A.to_owned(), 1)
        ]
        .into_iter()
        .collect()
    );
}

/// Capacity 1 each on two management clusters, a cordoned one, an unavailable one and one whose
/// consumer Maestro does not know: two clusters fill the two (a create on the unknown consumer is
/// answered `maestro-9` and the next candidate taken); the third is refused
/// `NoManagementClusterAvailable` (Applied, Available, Health False, nothing published) with every
/// candidate's reason, and HyperFleet stores that report. From the file inventory the other
/// region's management cluster is listed as passed over too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_cordoned_unhealthy_and_unknown_are_passed_over_and_none_left_is_refused() {
    let world = World::start(&[
        McSpec::new(EAST_A, EAST, 1),
        McSpec::new(EAST_B, EAST, 1),
        McSpec::new(EAST_C, EAST, 200).cordoned(),
        McSpec::new(EAST_D, EAST, 200).unhealthy(),
        McSpec::new(EAST_E, EAST, 200).unknown_to_maestro(),
        McSpec::new(WEST_A, WEST, 200),
    ])
    .await;
    let first = world.placement.create_cluster(EAST, 1);
    let second = world.placement.create_cluster(EAST, 2);
    let on_first = placed_on(&world.pulse(&first).await);
    let on_second = placed_on(&world.pulse(&second).await);
    let mut both = [on_first, on_second];
    both.sort();
    assert_eq!(both, [EAST_A, EAST_B], "one each: capacity 1");

    let third = world.placement.create_cluster(EAST, 3);
    let before = world.maestro().counts();
    let refused = world.pulse(&third).await;
    for type_ in ["Applied", "Available", "Health"] {
        assert_eq!(
            condition(&refused, type_),
            ("False".into(), "NoManagementClusterAvailable".into()),
            "{type_}: {}",
            refused.explain()
        );
    }
    let message = refused.message("Applied");
    for expected in [
        format!("{EAST_A}: full: 1/1"),
        format!("{EAST_B}: full: 1/1"),
        format!("{EAST_C}: cordoned"),
        format!("{EAST_D}: unhealthy:"),
        format!("{EAST_E}: unknown consumer"),
    ] {
        assert!(message.contains(&expected), "{expected} in {message}");
    }
    assert!(
        !message.contains(WEST_A),
        "the API search filters by region: {message}"
    );
    assert_eq!(
        world.maestro().counts().since(before).publish_create,
        1,
        "only the unknown consumer was tried"
    );
    assert!(world.works(&third).is_empty());
    // HyperFleet stores the refusal (the task config's preconditions need the other adapters).
    let object = PlacementWorld::cluster_path(&third);
    world.others_report(&object);
    assert_eq!(world.report(&object, &refused), Some(201));
    assert_eq!(
        world
            .conclusion(&object, "HypershiftSuccessful")
            .map(|c| (c.0, c.2)),
        Some(("False".into(), "NoManagementClusterAvailable".into()))
    );

    let from_file = world
        .pulse_with(
            &third,
            &world.placement.file_inventory_env().unwrap(),
            world.placement.kube(),
        )
        .await;
    assert_eq!(
        condition(&from_file, "Applied"),
        ("False".into(), "NoManagementClusterAvailable".into())
    );
    assert!(
        from_file
            .message("Applied")
            .contains(&format!("{WEST_A}: region {WEST}")),
        "{}",
        from_file.message("Applied")
    );
}

/// Placed, served, then updated (generation 2) while its management cluster is cordoned: the
/// update goes to the same bundle on the same consumer (no create, nothing elsewhere). Deleted:
/// the work is found and deleted on its consumer, the agent finishes, the pulse reports
/// `Finalized=True`, and HyperFleet hard-deletes the cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn placement_is_sticky_across_update_and_delete() {
    let world = World::start(&[
        McSpec::new(EAST_A, EAST, 200),
        McSpec::new(EAST_B, EAST, 200),
    ])
    .await;
    let id = world.placement.create_cluster(EAST, 1);
    let object = PlacementWorld::cluster_path(&id);
    let on = world.serve(&id).await;
    let work = world.live_work(&id);
    let mc = if on == EAST_A { EAST_A } else { EAST_B };
    world.placement.cordon(mc, true);

    let mut spec = world.api().must("GET", &object, None)["spec"].clone();
    spec["sshKey"]["name"] = "prod-eu-1-ssh-key-rotated".into();
    world
        .api()
        .must("PATCH", &object, Some(&json!({"spec": spec})));
    assert_eq!(world.generation(&object), 2);
    let before = world.maestro().counts();
    let updated = world.pulse(&id).await;
    assert_eq!(
        condition(&updated, "Applied"),
        ("True".into(), "ManifestWorkUpdated".into()),
        "{}",
        updated.explain()
    );
    assert_eq!(placed_on(&updated), on);
    let cost = world.maestro().counts().since(before);
    assert_eq!(
        (cost.publish_update, cost.publish_create),
        (1, 0),
        "{cost:?}"
    );
    assert_eq!(world.live_work(&id).id, work.id, "the same bundle");
    assert_eq!(world.works(&id).len(), 1);
    world.others_report(&object);

    assert_eq!(world.api().call("DELETE", &object, None).status, 202);
    let mut finalized = false;
    for _ in 0..4 {
        let pulse = world.pulse(&id).await;
        assert_eq!(
            world.report(&object, &pulse),
            Some(201),
            "{}",
            pulse.explain()
        );
        if pulse
            .conditions()
            .iter()
            .any(|(t, s, _)| t == "Finalized" && s == "True")
        {
            finalized = true;
            break;
        }
        let deleting = world.maestro().resource(&work.id);
        if let Some(deleting) = deleting {
            assert_eq!(deleting.consumer, on, "deleted where it lives");
        }
        world.maestro().apply(&work.id);
        world.maestro().ack_delete(&work.id);
    }
    assert!(finalized, "the pulses never said Finalized=True");
    assert!(world.works(&id).is_empty(), "hard-deleted in Maestro");
    world.others_report(&object);
    assert_eq!(
        world.api().call("GET", &object, None).status,
        404,
        "hard-deleted"
    );
}

/// A NodePool's work goes to the consumer its control plane lives on, with the standard id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_pools_follow_their_control_plane() {
    let world = World::start(&[
        McSpec::new(WEST_A, WEST, 200),
        McSpec::new("mgmt-europe-west2-b", WEST, 200),
    ])
    .await;
    let id = world.placement.create_cluster(WEST, 1);
    let on = world.serve(&id).await;
    let created = world.api().must(
        "POST",
        &format!("{}/nodepools", PlacementWorld::cluster_path(&id)),
        Some(&json!({"kind": "NodePool", "name": NODEPOOL_NAME,
                      "spec": testbed::nodepool::gcp_spec(3, testbed::local_pulse::scenario::VERSION)})),
    );
    let nodepool_id = created["id"].as_str().unwrap().to_owned();
    let mut env = world.placement.adapter_env();
    env.extend([
        ("CLUSTER_ID".to_owned(), id.clone()),
        ("NODEPOOL_ID".to_owned(), nodepool_id.clone()),
        ("GENERATION".to_owned(), "1".to_owned()),
    ]);
    let pulse = real_pulse::run_nodepool(
        world.placement.kube(),
        &world.placement.dir().join("nodepool"),
        &nodepool_job_name(&nodepool_id, 1),
        &env,
    )
    .await;
    assert!(pulse.ended_cleanly(), "{}", pulse.explain());
    assert_eq!(
        condition(&pulse, "Applied"),
        ("True".into(), "ManifestWorkCreated".into()),
        "{}",
        pulse.explain()
    );
    let nodepool_work = world
        .maestro()
        .resource(&format!("nodepool-{nodepool_id}"))
        .expect("the NodePool's work");
    assert_eq!(nodepool_work.consumer, on);
    assert_eq!(world.maestro().live_works(&on, "nodepool"), 1);
}

/// The agent of the chosen management cluster never reports and the entity is reported
/// unavailable: the next pulse withdraws the work (it stays soft-deleted: the agent is down) and
/// places it on the other management cluster, reported `FailedOverBeforeApply` (Applied True,
/// Available False, Health True) naming both; the pulse after that stays there (once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_never_applied_fails_over_once() {
    let world = World::start(&[
        McSpec::new(EAST_A, EAST, 200),
        McSpec::new(EAST_B, EAST, 200),
    ])
    .await;
    let id = world.placement.create_cluster(EAST, 1);
    let first = world.pulse(&id).await;
    let from = placed_on(&first);
    let withdrawn = world.live_work(&id);
    let to = if from == EAST_A { EAST_B } else { EAST_A };
    world.placement.outage(&from);

    let failover = world.pulse(&id).await;
    assert_eq!(
        condition(&failover, "Applied"),
        ("True".into(), "FailedOverBeforeApply".into()),
        "{}",
        failover.explain()
    );
    assert_eq!(condition(&failover, "Available").0, "False");
    assert_eq!(condition(&failover, "Health").0, "True");
    let message = failover.message("Applied");
    assert!(message.contains(&from) && message.contains(to), "{message}");
    assert!(
        message.contains("LastKnownReconciled"),
        "the deciding condition: {message}"
    );
    assert_eq!(placed_on(&failover), to);
    assert!(
        world.maestro().is_deleting(&withdrawn.id),
        "withdrawn, its agent down"
    );
    let placed = world.live_work(&id);
    assert_eq!(placed.consumer, to);
    assert_ne!(placed.id, withdrawn.id);

    let before = world.maestro().counts();
    let after = world.pulse(&id).await;
    assert_ne!(condition(&after, "Applied").1, "FailedOverBeforeApply");
    assert_eq!(placed_on(&after), to);
    let cost = world.maestro().counts().since(before);
    assert_eq!(
        (cost.publish_create, cost.publish_delete, cost.rest_delete),
        (0, 0, 0),
        "{cost:?}"
    );
    assert_eq!(
        world.works(&id).len(),
        2,
        "the withdrawn one stays soft-deleted"
    );
}

/// An applied control plane whose management cluster goes down stays there: the report keeps
/// the feedback's Available, Health False `ManagementClusterUnavailable` names the management
/// cluster and what to do, nothing is published or deleted; HyperFleet keeps
/// `LastKnownReconciled`. Restored, Health recovers by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_applied_control_plane_is_never_moved() {
    let world = World::start(&[
        McSpec::new(EAST_A, EAST, 200),
        McSpec::new(EAST_B, EAST, 200),
    ])
    .await;
    let id = world.placement.create_cluster(EAST, 1);
    let object = PlacementWorld::cluster_path(&id);
    let on = world.serve(&id).await;
    let work = world.live_work(&id);
    world.placement.outage(&on);

    let before = world.maestro().counts();
    let pulse = world.pulse(&id).await;
    assert_eq!(
        condition(&pulse, "Health"),
        ("False".into(), "ManagementClusterUnavailable".into()),
        "{}",
        pulse.explain()
    );
    assert_eq!(
        condition(&pulse, "Available"),
        ("True".into(), "ControlPlaneReady".into())
    );
    let message = pulse.message("Health");
    assert!(message.contains(&on), "{message}");
    assert!(
        message.contains("restore the management cluster"),
        "{message}"
    );
    assert_eq!(placed_on(&pulse), on);
    let cost = world.maestro().counts().since(before);
    assert_eq!(
        (
            cost.publish_create,
            cost.publish_update,
            cost.publish_delete,
            cost.rest_delete
        ),
        (0, 0, 0, 0),
        "{cost:?}"
    );
    assert_eq!(world.live_work(&id).id, work.id, "the work stays");
    assert_eq!(world.report(&object, &pulse), Some(201));
    assert_eq!(
        world
            .conclusion(&object, "LastKnownReconciled")
            .map(|c| c.0),
        Some("True".into())
    );

    world.placement.restore(&on);
    let recovered = world.pulse(&id).await;
    assert_eq!(
        condition(&recovered, "Health").0,
        "True",
        "{}",
        recovered.explain()
    );
}

/// Two pulses of the same cluster at once (two Pods, each with its own Kubernetes API server;
/// every Maestro call slowed so both look before either creates): one bundle exists afterwards,
/// both Jobs name its consumer, and no other bundle of the cluster was ever stored (the loser's
/// create, if any, was refused by the placement id).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_racing_pulses_end_with_one_work() {
    let world = World::start(&[
        McSpec::new(EAST_A, EAST, 200),
        McSpec::new(EAST_B, EAST, 200),
    ])
    .await;
    let id = world.placement.create_cluster(EAST, 1);
    let other_server = ApiServer::start().await;
    world
        .maestro()
        .set_latency(std::time::Duration::from_millis(300));
    let env = world.placement.adapter_env();
    let generation = world.generation(&PlacementWorld::cluster_path(&id));
    let mut env_b = env.clone();
    env_b.push(("CLUSTER_ID".into(), id.clone()));
    env_b.push(("GENERATION".into(), generation.to_string()));
    let racer_dir = world.placement.dir().join("racer");
    let job = controlplane_job_name(&id, i32::try_from(generation).unwrap());
    let (a, b) = tokio::join!(
        world.pulse_with(&id, &env, world.placement.kube()),
        real_pulse::run(&other_server, &racer_dir, &job, &env_b)
    );
    world.maestro().set_latency(std::time::Duration::ZERO);
    assert!(b.ended_cleanly(), "{}", b.explain());
    let works = world.works(&id);
    assert_eq!(works.len(), 1, "one bundle: {works:?}");
    for pulse in [&a, &b] {
        assert_eq!(condition(pulse, "Applied").0, "True", "{}", pulse.explain());
        assert_eq!(placed_on(pulse), works[0].consumer);
    }
    let creates = world.maestro().counts().publish_create;
    assert!((1..=2).contains(&creates), "{creates}");
}

/// What a create and a steady-state pulse cost: the create reads the cluster and the region's
/// candidates from HyperFleet, and from Maestro one search, a count per candidate and one
/// publish (nothing read back); once placed, a pulse costs one Maestro search and two HyperFleet
/// GETs (the cluster and its management cluster's record).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_and_a_steady_state_pulse_cost_what_the_design_says() {
    let world = World::start(&[
        McSpec::new(EAST_A, EAST, 200),
        McSpec::new(EAST_B, EAST, 200),
        McSpec::new(WEST_A, WEST, 200),
    ])
    .await;
    let id = world.placement.create_cluster(EAST, 1);
    let (maestro_before, api_before) = (world.maestro().counts(), world.api().requests().len());
    let kube_before = world.placement.kube().requests().len();
    let created = world.pulse(&id).await;
    assert_eq!(
        world.maestro().counts().since(maestro_before),
        MaestroCounts {
            list_find: 1,
            list_count: 3,
            publish_create: 1,
            ..MaestroCounts::default()
        },
        "a count per candidate, and the chosen one's again under its lease"
    );
    // The placement lease of the chosen management cluster: created (first placement there),
    // released with a PUT; each a verb manifests/rbac.yaml grants.
    let on = placed_on(&created);
    let lease = lease_requests(&world.placement.kube().requests()[kube_before..]);
    assert_eq!(
        lease,
        [
            ("create".to_owned(), String::new()),
            ("update".to_owned(), lease_name(&on))
        ],
        "{}",
        created.explain()
    );
    assert_granted(&lease);
    assert_eq!(
        world.placement.lease(&on).unwrap()["spec"]["holderIdentity"],
        "",
        "released"
    );
    let create_requests: Vec<String> = world.api().requests()[api_before..].to_vec();
    assert_eq!(create_requests.len(), 2, "{create_requests:?}");
    assert!(create_requests[0].starts_with(&format!("GET {PREFIX}/clusters/{id}")));
    assert!(
        create_requests[1].contains("managementclusters?search="),
        "{create_requests:?}"
    );

    world.hosted_cluster(&id, Stage::Ready);
    world.pulse(&id).await;
    let (maestro_before, api_before) = (world.maestro().counts(), world.api().requests().len());
    let steady = world.pulse(&id).await;
    assert_eq!(condition(&steady, "Available").1, "ControlPlaneReady");
    assert_eq!(
        world.maestro().counts().since(maestro_before),
        MaestroCounts {
            list_find: 1,
            ..MaestroCounts::default()
        }
    );
    let steady_requests: Vec<String> = world.api().requests()[api_before..].to_vec();
    assert_eq!(steady_requests.len(), 2, "{steady_requests:?}");
    assert!(
        lease_requests(&world.placement.kube().requests()).len() == 2,
        "a steady pulse never touches the lease"
    );
    assert!(
        steady_requests
            .iter()
            .any(|r| r.contains("managementclusters?search=spec.maestro_consumer")),
        "{steady_requests:?}"
    );
}

/// `(verb as RBAC names it, lease name)` of every placement-lease request (`create` has no name
/// in its path).
fn lease_requests(requests: &[RecordedRequest]) -> Vec<(String, String)> {
    let prefix = format!(
        "/apis/coordination.k8s.io/v1/namespaces/{}/leases",
        real_pulse::NAMESPACE
    );
    requests
        .iter()
        .filter_map(|r| {
            let rest = r.path.strip_prefix(&prefix)?;
            let verb = match r.method.as_str() {
                "GET" => "get",
                "POST" => "create",
                "PUT" => "update",
                other => panic!("the adapter sent {other} {}", r.path),
            };
            Some((verb.to_owned(), rest.trim_start_matches('/').to_owned()))
        })
        .collect()
}

/// Every lease request's verb is granted on `coordination.k8s.io` `leases` by the Role of
/// `manifests/rbac.yaml`.
fn assert_granted(lease: &[(String, String)]) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../manifests/rbac.yaml"
    ))
    .unwrap();
    let role: serde_json::Value =
        serde_saphyr::from_str(text.split("\n---\n").nth(2).unwrap()).unwrap();
    // (tests/tests/manifests.rs holds the Role to the Jobs' namespace.)
    assert_eq!(role["kind"], "Role");
    let rule = role["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["apiGroups"] == json!(["coordination.k8s.io"]) && r["resources"] == json!(["leases"])
        })
        .expect("a leases rule");
    for (verb, _) in lease {
        assert!(
            rule["verbs"].as_array().unwrap().contains(&json!(verb)),
            "{verb} leases is not granted: {rule}"
        );
    }
}

/// Capacity honoured under concurrency: six clusters' pulses started at once against a region
/// whose two management clusters take 2 and 1 (every Maestro call slowed so that all of them
/// count before any creates): exactly 2 and 1 are placed, the other three are refused
/// `NoManagementClusterAvailable` naming each candidate full, HyperFleet stores both kinds of
/// report, and every lease is released afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_never_exceed_a_management_clusters_capacity() {
    let world = World::start(&[McSpec::new(EAST_A, EAST, 2), McSpec::new(EAST_B, EAST, 1)]).await;
    let ids: Vec<String> = (1..=6)
        .map(|i| world.placement.create_cluster(EAST, i))
        .collect();
    world
        .maestro()
        .set_latency(std::time::Duration::from_millis(100));
    let pulses = futures::future::join_all(ids.iter().map(|id| world.pulse(id))).await;
    world.maestro().set_latency(std::time::Duration::ZERO);

    assert_eq!(
        world.placement.load_per_consumer(),
        [(EAST_A.to_owned(), 2), (EAST_B.to_owned(), 1)]
            .into_iter()
            .collect(),
        "exactly max_hosted_clusters on each"
    );
    let (placed, refused): (Vec<_>, Vec<_>) = ids
        .iter()
        .zip(&pulses)
        .partition(|(_, p)| condition(p, "Applied").0 == "True");
    assert_eq!(placed.len(), 3);
    assert_eq!(refused.len(), 3);
    for (id, pulse) in &refused {
        for type_ in ["Applied", "Available", "Health"] {
            assert_eq!(
                condition(pulse, type_),
                ("False".into(), "NoManagementClusterAvailable".into()),
                "{type_}: {}",
                pulse.explain()
            );
        }
        let message = pulse.message("Applied");
        assert!(
            message.contains(&format!("{EAST_A}: full: 2/2"))
                && message.contains(&format!("{EAST_B}: full: 1/1")),
            "{message}"
        );
        assert!(world.works(id).is_empty());
    }
    // HyperFleet's conclusion for both kinds.
    let (id, pulse) = placed[0];
    let object = PlacementWorld::cluster_path(id);
    world.others_report(&object);
    assert_eq!(world.report(&object, pulse), Some(201));
    world.hosted_cluster(id, Stage::Ready);
    let ready = world.pulse(id).await;
    assert_eq!(
        condition(&ready, "Available"),
        ("True".into(), "ControlPlaneReady".into()),
        "{}",
        ready.explain()
    );
    assert_eq!(world.report(&object, &ready), Some(201));
    world.assert_reconciled(&object);
    let (id, pulse) = refused[0];
    let object = PlacementWorld::cluster_path(id);
    world.others_report(&object);
    assert_eq!(world.report(&object, pulse), Some(201));
    assert_eq!(
        world
            .conclusion(&object, "HypershiftSuccessful")
            .map(|c| (c.0, c.2)),
        Some(("False".into(), "NoManagementClusterAvailable".into()))
    );
    for consumer in [EAST_A, EAST_B] {
        let lease = world.placement.lease(consumer).unwrap();
        assert_eq!(lease["spec"]["holderIdentity"], "", "{lease}");
    }
    assert_granted(&lease_requests(&world.placement.kube().requests()));
}

/// A lease left held by a pod that died (renewed a minute ago, 15 s duration) does not block:
/// the next placement takes it over and places the cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_left_by_a_dead_holder_does_not_block_placement() {
    let world = World::start(&[McSpec::new(EAST_A, EAST, 200)]).await;
    let dead = "hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6c-g1-q9w3e";
    let renewed = (jiff::Timestamp::now() - jiff::SignedDuration::from_secs(60))
        .strftime("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string();
    world.placement.kube().put_lease(
        real_pulse::NAMESPACE,
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
               "metadata": {"name": lease_name(EAST_A), "namespace": real_pulse::NAMESPACE},
               "spec": {"holderIdentity": dead, "leaseDurationSeconds": 15,
                        "acquireTime": renewed, "renewTime": renewed}}),
    );
    let id = world.placement.create_cluster(EAST, 1);
    let pulse = world.pulse(&id).await;
    assert_eq!(
        condition(&pulse, "Applied"),
        ("True".into(), "ManifestWorkCreated".into()),
        "{}",
        pulse.explain()
    );
    let lease = world.placement.lease(EAST_A).unwrap();
    assert_eq!(lease["spec"]["holderIdentity"], "", "released: {lease}");
    assert_eq!(lease["spec"]["leaseTransitions"], 1, "{lease}");
}
