//! What HyperFleet concludes from our reports. Each report is built exactly as the framework
//! builds it — the project's real task config run through the framework emulation
//! (`hyperfleet_support::bridge`) — and PUT to the testbed's HyperFleet API
//! (`testbed::hyperfleet::fake_api`, which the recordings of the real API hold to its rules);
//! the tests then read the cluster's and NodePool's aggregated conditions back.
//!
//! The bridge tests use pulse Jobs written by the status-reporter's own functions
//! (`testbed::hyperfleet::outcomes`); the end-to-end tests run the real binaries against the fake
//! Kubernetes API server and fake Maestro ([`World`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(
    dead_code,
    reason = "the conformance test uses the rest of the emulation"
)]
mod hyperfleet_support;

use hyperfleet_support::bridge::{Adapter, Bridge};
use jiff::Timestamp;
use serde_json::{Value, json};
use testbed::hyperfleet::fake_api::{Clock, Config, FakeHyperfleetApi, PREFIX};
use testbed::hyperfleet::outcomes;
use testbed::kube_api::ApiServer;
use testbed::local_pulse::scenario::{Stage, VERSION, hosted_cluster_status};
use testbed::maestro::{FakeMaestro, FakeOptions};
use testbed::pulse_job::{controlplane_job_name, nodepool_job_name};
use testbed::real_pulse::{self, JobPulse};

/// The longest cluster name the recorded server allows (53).
const CLUSTER_NAME: &str = "prod-europe-west2-hosted-control-plane-0123456789-abc";
/// The longest NodePool name (15).
const NODEPOOL_NAME: &str = "workers-a-12345";
/// The other adapters HyperFleet requires for a cluster, and for a NodePool.
const OTHER_CLUSTER_ADAPTERS: [&str; 3] = ["validation", "dns", "pullsecret"];

fn start_time() -> Timestamp {
    "2026-11-26T14:14:42Z".parse().unwrap()
}

async fn fake_api() -> FakeHyperfleetApi {
    FakeHyperfleetApi::start(Config::recorded(), Clock::at(start_time()))
        .await
        .unwrap()
}

/// Creates a cluster with the longest name; returns its path.
fn create_cluster(api: &FakeHyperfleetApi, spec: &Value) -> String {
    let created = api.must(
        "POST",
        &format!("{PREFIX}/clusters"),
        Some(&json!({"kind": "Cluster", "name": CLUSTER_NAME, "labels": {"team": "platform"}, "spec": spec})),
    );
    created["href"].as_str().unwrap().to_owned()
}

/// Creates a NodePool of the cluster at `cluster`; returns its path.
fn create_nodepool(api: &FakeHyperfleetApi, cluster: &str, spec: &Value) -> String {
    let created = api.must(
        "POST",
        &format!("{cluster}/nodepools"),
        Some(&json!({"kind": "NodePool", "name": NODEPOOL_NAME, "spec": spec})),
    );
    created["href"].as_str().unwrap().to_owned()
}

/// Another adapter's report at the object's current generation, in the recordings' shape
/// (`real-api/15-17`, and `34`-`43` while deleting): `Available` as given, `Finalized=True` once
/// the object is deleted.
fn other_adapter_reports(
    api: &FakeHyperfleetApi,
    object: &str,
    adapter: &str,
    available: bool,
) -> u16 {
    let served = api.must("GET", object, None);
    let deleting = served.get("deleted_time").is_some();
    let word = |b: bool| if b { "True" } else { "False" };
    let body = json!({
        "adapter": adapter,
        "observed_generation": served["generation"],
        "observed_time": api.clock().now().to_string(),
        "conditions": [
            {"type": "Applied", "status": "True", "reason": "ManifestsApplied", "message": "resources applied"},
            {"type": "Available", "status": word(available), "reason": if available { "Ready" } else { "NotReady" }, "message": format!("available={}", word(available))},
            {"type": "Health", "status": "True", "reason": "Healthy", "message": "adapter healthy"},
            {"type": "Finalized", "status": word(deleting), "reason": if deleting { "Finalized" } else { "NotFinalizing" }, "message": format!("finalized={}", word(deleting))},
        ],
        "data": {},
    });
    api.call(
        "PUT",
        &format!("{object}/statuses"),
        Some(&body.to_string()),
    )
    .status
}

/// `(status, observed_generation, reason)` of the object's condition `type_` (`None` if absent
/// or the object is gone).
fn conclusion(api: &FakeHyperfleetApi, object: &str, type_: &str) -> Option<(String, i64, String)> {
    let reply = api.call("GET", object, None);
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

fn generation(api: &FakeHyperfleetApi, object: &str) -> i64 {
    api.must("GET", object, None)["generation"]
        .as_i64()
        .unwrap()
}

/// The adapter's report when all is well: Applied, Available, Health True.
fn success_report(generation: i64) -> job_report::Report {
    use job_report::{Condition, ConditionStatus::True};
    job_report::Report {
        observed_generation: Some(generation),
        ..job_report::Report::new(vec![
            Condition::new(
                "Applied",
                True,
                "ManifestWorkApplied",
                "ManifestWork applied",
            ),
            Condition::new("Available", True, "HostedClusterAvailable", "available"),
            Condition::new("Health", True, "Healthy", "ok"),
        ])
    }
}

/// The pulse Job as discovery finds it once the status-reporter wrote `report` and the pod
/// ended.
fn reported_job(manifest: &Value, report: &job_report::Report) -> Value {
    let now = start_time();
    let job = outcomes::running(&outcomes::created(manifest, now), now);
    outcomes::finished(&outcomes::reported(&job, report, now), true, now)
}

#[tokio::test]
async fn the_bridge_puts_the_task_configs_body_and_hyperfleet_concludes_reconciled() {
    let api = fake_api().await;
    let bridge = Bridge::load(Adapter::ControlPlane, &api);
    let cluster = create_cluster(&api, &json!({}));
    // Before the other adapters report Available=True, the preconditions hold the event: no
    // Job, no PUT.
    let held = bridge.report(&api, &cluster, &|m| reported_job(m, &success_report(1)));
    assert!(held.answer.is_none(), "{:?}", held.run.sent);
    for adapter in OTHER_CLUSTER_ADAPTERS {
        assert_eq!(other_adapter_reports(&api, &cluster, adapter, true), 201);
    }
    let reported = bridge.report(&api, &cluster, &|m| reported_job(m, &success_report(1)));
    let answer = reported
        .answer
        .expect("the config PUTs the Job's conditions");
    assert_eq!(answer.status, 201, "{}", answer.body);
    // The stored report is the body the config built.
    let sent: Value = serde_json::from_str(reported.run.sent[0].body.as_deref().unwrap()).unwrap();
    assert_eq!(answer.body["adapter"], sent["adapter"]);
    assert_eq!(
        answer.body["observed_generation"],
        sent["observed_generation"]
    );
    assert_eq!(
        answer.body["conditions"].as_array().unwrap().len(),
        sent["conditions"].as_array().unwrap().len()
    );
    let at = |t| conclusion(&api, &cluster, t);
    assert_eq!(at("HypershiftSuccessful").unwrap().0, "True");
    assert_eq!(
        at("Reconciled").unwrap(),
        ("True".into(), 1, "ReconciledAll".into())
    );
    assert_eq!(
        at("LastKnownReconciled").unwrap(),
        ("True".into(), 1, "AllAdaptersReconciled".into())
    );
}

#[tokio::test]
async fn a_job_without_a_report_is_stored_once_and_then_discarded_by_rule_13() {
    let api = fake_api().await;
    let bridge = Bridge::load(Adapter::ControlPlane, &api);
    let cluster = create_cluster(&api, &json!({}));
    for adapter in OTHER_CLUSTER_ADAPTERS {
        other_adapter_reports(&api, &cluster, adapter, true);
    }
    // The Job just created: Available=Unknown (JobRunning). First-ever report: stored, no
    // conclusion drawn from it.
    let first = bridge.report(&api, &cluster, &|m| outcomes::created(m, start_time()));
    assert_eq!(first.answer.unwrap().status, 201);
    assert_eq!(conclusion(&api, &cluster, "HypershiftSuccessful"), None);
    api.clock().advance(jiff::SignedDuration::from_secs(1));
    let done = bridge.report(&api, &cluster, &|m| reported_job(m, &success_report(1)));
    assert_eq!(done.answer.unwrap().status, 201);
    api.clock().advance(jiff::SignedDuration::from_secs(1));
    let again = bridge.report(&api, &cluster, &|m| outcomes::created(m, start_time()));
    assert_eq!(
        again.answer.unwrap().status,
        204,
        "a later Unknown is discarded"
    );
    assert_eq!(
        conclusion(&api, &cluster, "HypershiftSuccessful")
            .unwrap()
            .0,
        "True"
    );
}

#[tokio::test]
async fn the_nodepool_bridge_reports_under_the_cluster() {
    let api = fake_api().await;
    let bridge = Bridge::load(Adapter::NodePool, &api);
    let cluster = create_cluster(&api, &json!({}));
    let nodepool = create_nodepool(&api, &cluster, &json!({"replicas": 3}));
    assert_eq!(
        other_adapter_reports(&api, &nodepool, "validation", true),
        201
    );
    let reported = bridge.report(&api, &nodepool, &|m| reported_job(m, &success_report(1)));
    assert_eq!(reported.answer.unwrap().status, 201);
    assert_eq!(
        conclusion(&api, &nodepool, "Reconciled").unwrap(),
        ("True".into(), 1, "ReconciledAll".into())
    );
    assert_eq!(generation(&api, &nodepool), 1);
}

// -------------------------------------------------------------------------------------------
// End to end: the real binaries' pulses, their Jobs through the bridge, HyperFleet's conclusion
// -------------------------------------------------------------------------------------------

/// The cluster the adapter accepts (the adapter's own fixture): its `spec` and `labels` are
/// POSTed to the API, which assigns the id and generation.
const CLUSTER_FIXTURE: &str = include_str!("../../adapter/tests/fixtures/cluster-valid.json");
const CONSUMER: &str = "mgmt-1";
const TOKEN: &str = "hf-conclusions-token";

/// Everything one end-to-end case needs: the fake Kubernetes API server the pulse Jobs live in,
/// the fake Maestro (its agent reports only when told), the HyperFleet API, both task configs'
/// bridges, and the Pods' directory. Helpers run a pulse, PUT its Job as the framework would,
/// make the other adapters report, and read what HyperFleet concludes.
struct World {
    server: ApiServer,
    maestro: FakeMaestro,
    api: FakeHyperfleetApi,
    controlplane: Bridge,
    nodepool: Bridge,
    dir: tempfile::TempDir,
    token_file: std::path::PathBuf,
    /// The cluster's path on the API and its id.
    cluster: String,
    cluster_id: String,
}

impl World {
    /// The fakes, and a cluster created on the API (generation 1, its 53-character name).
    async fn start() -> World {
        let server = ApiServer::start().await;
        let maestro = FakeMaestro::start(FakeOptions {
            consumers: vec![CONSUMER.to_owned()],
            ..FakeOptions::default()
        })
        .await
        .unwrap();
        maestro.set_agent_delay(None);
        // The API's clock is the wall clock at the start (the adapter compares deleted_time
        // with its own clock), moved on by hand between reports.
        let api = FakeHyperfleetApi::start(
            Config::recorded().with_token(TOKEN),
            Clock::at(Timestamp::now()),
        )
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("hyperfleet-token");
        std::fs::write(&token_file, TOKEN).unwrap();
        let fixture: Value = serde_json::from_str(CLUSTER_FIXTURE).unwrap();
        let cluster = create_cluster(&api, &fixture["spec"]);
        let cluster_id = cluster.rsplit('/').next().unwrap().to_owned();
        World {
            controlplane: Bridge::load(Adapter::ControlPlane, &api),
            nodepool: Bridge::load(Adapter::NodePool, &api),
            server,
            maestro,
            api,
            dir,
            token_file,
            cluster,
            cluster_id,
        }
    }

    /// A NodePool of the cluster on the API (the longest name; 3 × n2-standard-8).
    fn create_nodepool(&self) -> String {
        create_nodepool(
            &self.api,
            &self.cluster,
            &testbed::nodepool::gcp_spec(3, VERSION),
        )
    }

    fn work(&self) -> String {
        format!("hostedcluster-{}", self.cluster_id)
    }

    /// The adapter container's environment: it reads its object from the HyperFleet API.
    fn env(&self, extra: &[(&str, String)]) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = [
            ("HYPERFLEET_API_URL", self.api.url().to_owned()),
            (
                "HYPERFLEET_API_TOKEN_FILE",
                self.token_file.display().to_string(),
            ),
            ("MANAGEMENT_CLUSTER_CONSUMER", CONSUMER.to_owned()),
            ("MAESTRO_API_URL", self.maestro.rest_url()),
            ("MAESTRO_GRPC_URL", self.maestro.grpc_url()),
            ("LOG_FORMAT", "json".to_owned()),
        ]
        .into_iter()
        .chain(extra.iter().cloned())
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        env.sort();
        env
    }

    /// One control-plane pulse of the Job the API's generation names.
    async fn controlplane_pulse(&self) -> JobPulse {
        let generation = generation(&self.api, &self.cluster);
        let env = self.env(&[
            ("CLUSTER_ID", self.cluster_id.clone()),
            ("GENERATION", generation.to_string()),
        ]);
        let pulse = real_pulse::run(
            &self.server,
            &self.dir.path().join("controlplane"),
            &controlplane_job_name(&self.cluster_id, i32::try_from(generation).unwrap()),
            &env,
        )
        .await;
        assert!(pulse.ended_cleanly(), "{}", pulse.explain());
        pulse
    }

    /// One pulse of the NodePool at `nodepool` (its generation from the API).
    async fn nodepool_pulse(&self, nodepool: &str) -> JobPulse {
        let generation = generation(&self.api, nodepool);
        let id = nodepool.rsplit('/').next().unwrap().to_owned();
        let env = self.env(&[
            ("CLUSTER_ID", self.cluster_id.clone()),
            ("NODEPOOL_ID", id.clone()),
            ("GENERATION", generation.to_string()),
        ]);
        let pulse = real_pulse::run_nodepool(
            &self.server,
            &self.dir.path().join("nodepool"),
            &nodepool_job_name(&id, i32::try_from(generation).unwrap()),
            &env,
        )
        .await;
        assert!(pulse.ended_cleanly(), "{}", pulse.explain());
        pulse
    }

    /// The pulse's Job through the task config of `object` (the cluster's or a NodePool's) to
    /// the API, a second after the last report; the API's answer (`None`: nothing PUT).
    fn report(&self, object: &str, pulse: &JobPulse) -> Option<u16> {
        self.api.clock().advance(jiff::SignedDuration::from_secs(1));
        let bridge = if object.contains("/nodepools/") {
            &self.nodepool
        } else {
            &self.controlplane
        };
        let job = pulse.job.clone();
        bridge
            .report(&self.api, object, &|_| job.clone())
            .answer
            .map(|reply| reply.status)
    }

    /// Every other adapter HyperFleet requires for `object` reports (`Available` as given;
    /// `Finalized=True` once the object is deleted), a second after the last report.
    fn others_report(&self, object: &str, available: bool) {
        let others: &[&str] = if object.contains("/nodepools/") {
            &["validation"]
        } else {
            &OTHER_CLUSTER_ADAPTERS
        };
        for adapter in others {
            self.api.clock().advance(jiff::SignedDuration::from_secs(1));
            assert_eq!(
                other_adapter_reports(&self.api, object, adapter, available),
                201,
                "{adapter}"
            );
        }
    }

    /// The management cluster's agent feeds back the HostedCluster at `stage`.
    fn hosted_cluster(&self, stage: Stage) {
        assert!(
            self.maestro
                .set_feedback(&self.work(), &hosted_cluster_status(stage))
        );
    }

    /// Reported, the three conclusions at the cluster's generation.
    fn assert_reconciled(&self, object: &str) {
        let g = generation(&self.api, object);
        let at = |t| conclusion(&self.api, object, t);
        assert_eq!(
            at("Reconciled"),
            Some(("True".into(), g, "ReconciledAll".into()))
        );
        assert_eq!(
            at("LastKnownReconciled"),
            Some(("True".into(), g, "AllAdaptersReconciled".into()))
        );
        assert_eq!(
            at("HypershiftSuccessful").map(|c| (c.0, c.1)),
            Some(("True".into(), g))
        );
    }

    /// The control plane from create to available, every pulse reported: the other adapters
    /// first (the task config waits for them), then pulses until the HostedCluster is available.
    async fn control_plane_available(&self) {
        self.others_report(&self.cluster, true);
        let created = self.controlplane_pulse().await;
        assert_eq!(self.report(&self.cluster, &created), Some(201));
        self.hosted_cluster(Stage::Ready);
        let available = self.controlplane_pulse().await;
        assert!(
            available.conditions().contains(&(
                "Available".into(),
                "True".into(),
                "ControlPlaneReady".into()
            )),
            "{}",
            available.explain()
        );
        assert_eq!(self.report(&self.cluster, &available), Some(201));
    }

    /// Whether `object` is still served.
    fn exists(&self, object: &str) -> bool {
        match self.api.call("GET", object, None).status {
            200 => true,
            404 => false,
            other => panic!("GET {object}: {other}"),
        }
    }
}

/// Whether the Job says `Finalized=True`.
fn finalized(pulse: &JobPulse) -> bool {
    pulse
        .conditions()
        .iter()
        .any(|(t, s, _)| t == "Finalized" && s == "True")
}

/// Create to available: HyperFleet concludes `Reconciled=True`, `LastKnownReconciled=True` and
/// `HypershiftSuccessful=True` at the cluster's generation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_plane_from_create_to_available_is_reconciled() {
    let world = World::start().await;
    world.control_plane_available().await;
    world.assert_reconciled(&world.cluster);
    assert_eq!(generation(&world.api, &world.cluster), 1);
}

/// Deletion: DELETE the cluster (cascaded to its NodePool), the NodePool's pulses to
/// `Finalized=True` with its other adapter: the NodePool is hard-deleted; then the control
/// plane's pulses to `Finalized=True` with the other adapters: the cluster is hard-deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_cluster_and_its_node_pool_are_hard_deleted() {
    let world = World::start().await;
    let nodepool = world.create_nodepool();
    world.control_plane_available().await;
    assert_eq!(world.api.call("DELETE", &world.cluster, None).status, 202);
    assert_eq!(generation(&world.api, &world.cluster), 2);
    assert_eq!(generation(&world.api, &nodepool), 2, "cascaded");

    // The NodePool goes first: its pulses until Finalized=True, each reported.
    let mut done = false;
    for _ in 0..3 {
        let pulse = world.nodepool_pulse(&nodepool).await;
        assert_eq!(
            world.report(&nodepool, &pulse),
            Some(201),
            "{}",
            pulse.explain()
        );
        if finalized(&pulse) {
            done = true;
            break;
        }
    }
    assert!(done, "the NodePool's pulses never said Finalized=True");
    assert!(world.exists(&nodepool), "validation has not finalized yet");
    world.others_report(&nodepool, false);
    assert!(
        !world.exists(&nodepool),
        "every required adapter finalized: hard-deleted"
    );

    // Then the control plane: pulses until Finalized=True (the agent completes the work's
    // deletion when asked), each reported.
    let mut done = false;
    for _ in 0..4 {
        let pulse = world.controlplane_pulse().await;
        assert_eq!(
            world.report(&world.cluster, &pulse),
            Some(201),
            "{}",
            pulse.explain()
        );
        if finalized(&pulse) {
            done = true;
            break;
        }
        world.maestro.apply(&world.work());
        world.maestro.release_delete(&world.work());
    }
    assert!(done, "the control plane's pulses never said Finalized=True");
    assert!(
        world.exists(&world.cluster),
        "the other adapters have not finalized yet"
    );
    world.others_report(&world.cluster, false);
    assert!(
        !world.exists(&world.cluster),
        "every required adapter finalized: hard-deleted"
    );
    let list = world.api.must("GET", &format!("{PREFIX}/clusters"), None);
    assert_eq!(list["total"], 0);
}
