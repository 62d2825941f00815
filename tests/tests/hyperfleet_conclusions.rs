//! What HyperFleet concludes from our reports. Each report is built exactly as the framework
//! builds it — the project's real task config run through the framework emulation
//! (`hyperfleet_support::bridge`) — and PUT to the testbed's HyperFleet API
//! (`testbed::hyperfleet::fake_api`, which the recordings of the real API hold to its rules);
//! the tests then read the cluster's and NodePool's aggregated conditions back.
//!
//! The bridge tests use pulse Jobs written by the status-reporter's own functions
//! (`testbed::hyperfleet::outcomes`); the end-to-end tests run the real binaries against the fake
//! Kubernetes API server and fake Maestro ([`World`]), through create, update, upgrade, a stale
//! pulse, failure rows, refusals and deletion, for the control plane and a NodePool; after every
//! PUT [`World::check_invariants`] holds HyperFleet's conclusion to two rules: once
//! `LastKnownReconciled` is True it stays True, and `Reconciled` is True at a generation only when
//! the management cluster reflects that generation.

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
use testbed::nodepool::NodePoolStatus;
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
    /// The objects HyperFleet has concluded `LastKnownReconciled=True` for: from then on it
    /// must stay True ([`World::put`]).
    served: std::sync::Mutex<Vec<String>>,
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
            served: std::sync::Mutex::default(),
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

    /// The adapter container's environment: it reads its object from the HyperFleet API; `extra`
    /// adds variables or replaces the ones set here.
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
        .filter(|(k, _)| extra.iter().all(|(e, _)| e != k))
        .chain(extra.iter().cloned())
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        env.sort();
        env
    }

    /// One control-plane pulse of the Job the API's generation names.
    async fn controlplane_pulse(&self) -> JobPulse {
        let generation = generation(&self.api, &self.cluster);
        let pulse = self.controlplane_pulse_with(generation, &[]).await;
        assert!(pulse.ended_cleanly(), "{}", pulse.explain());
        pulse
    }

    /// One control-plane pulse of the Job for `generation`, `extra` added to (or replacing) the
    /// adapter's environment; whatever its containers' exit codes.
    async fn controlplane_pulse_with(&self, generation: i64, extra: &[(&str, String)]) -> JobPulse {
        let mut vars = vec![
            ("CLUSTER_ID", self.cluster_id.clone()),
            ("GENERATION", generation.to_string()),
        ];
        vars.extend(extra.iter().cloned());
        real_pulse::run(
            &self.server,
            &self.dir.path().join("controlplane"),
            &controlplane_job_name(&self.cluster_id, i32::try_from(generation).unwrap()),
            &self.env(&vars),
        )
        .await
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

/// Create to available: the first report (provisioning) is stored without a reconciled
/// conclusion; once available HyperFleet concludes `Reconciled=True`, `LastKnownReconciled=True`
/// and `HypershiftSuccessful=True` at the cluster's generation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_plane_from_create_to_available_is_reconciled() {
    let world = World::start().await;
    world.control_plane_serves().await;
    world.assert_reconciled(&world.cluster);
    assert_eq!(generation(&world.api, &world.cluster), 1);
}

/// Deletion: DELETE the cluster (cascaded to its NodePool), the NodePool's pulses to
/// `Finalized=True` with its other adapter: the NodePool is hard-deleted; then the control
/// plane's pulses to `Finalized=True` with the other adapters: the cluster is hard-deleted.
/// Every pulse's PUT is checked against the invariants ([`World::check_invariants`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_cluster_and_its_node_pool_are_hard_deleted() {
    let world = World::start().await;
    let nodepool = world.create_nodepool();
    world.control_plane_serves().await;
    assert_eq!(world.api.call("DELETE", &world.cluster, None).status, 202);
    assert_eq!(generation(&world.api, &world.cluster), 2);
    assert_eq!(generation(&world.api, &nodepool), 2, "cascaded");

    // The NodePool goes first: its pulses until Finalized=True, each reported.
    let mut done = false;
    for _ in 0..3 {
        let pulse = world.nodepool_pulse(&nodepool).await;
        assert_eq!(
            world.put(&nodepool, &pulse).0,
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
            world.put(&world.cluster, &pulse).0,
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

// -------------------------------------------------------------------------------------------
// Through every kind of pulse: what HyperFleet concludes after each PUT, and two invariants
// -------------------------------------------------------------------------------------------

/// `Reconciled`, `LastKnownReconciled` and `HypershiftSuccessful` of an object: `(status,
/// observed_generation, reason)` each, `None` while absent.
type Conclusions = [Option<(String, i64, String)>; 3];

const UPGRADE_VERSION: &str = "4.17.1";
/// A closed port: the Maestro URLs of an unreachable Maestro.
const CLOSED: &str = "http://127.0.0.1:9";

/// The values (the strings) of every `hyperfleet.io/generation` key anywhere in `value`.
fn generation_stamps(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "hyperfleet.io/generation" {
                    out.push(v.as_str().map_or_else(|| v.to_string(), str::to_owned));
                } else {
                    generation_stamps(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| generation_stamps(v, out)),
        _ => {}
    }
}

/// Whether condition `type_` of a fed-back `.status` is True.
fn fed_back_true(status: &Value, type_: &str) -> bool {
    status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == type_ && c["status"] == "True")
}

impl World {
    fn conclusions(&self, object: &str) -> Conclusions {
        ["Reconciled", "LastKnownReconciled", "HypershiftSuccessful"]
            .map(|t| conclusion(&self.api, object, t))
    }

    /// Whether the management cluster reflects `object` at generation `n`: its ManifestWork is
    /// stamped `n`, the operator's status observes the object's `metadata.generation`, and the
    /// object the agent feeds back is available at what the spec asks for
    /// (the HostedCluster `Available=True`, its newest history entry `Completed` at the spec's
    /// release and no other desired; the NodePool `Ready=True` with the spec's replicas).
    fn reflects(&self, object: &str, n: i64) -> bool {
        let served = self.api.must("GET", object, None);
        let spec = &served["spec"];
        let nodepool = object.contains("/nodepools/");
        let Some(resource) = self.maestro.resource(&self.work_of(object)) else {
            return false;
        };
        let mut stamps = Vec::new();
        generation_stamps(&resource.to_rest(), &mut stamps);
        if stamps.is_empty() || stamps.iter().any(|g| *g != n.to_string()) {
            return false;
        }
        let Some(status) = resource
            .feedback_raw
            .as_deref()
            .and_then(|raw| serde_json::from_str::<Value>(raw).ok())
        else {
            return false;
        };
        // The operator has observed the spec the agent applied: every condition of its status
        // stamped with the object's metadata.generation.
        let applied = resource.object_generation();
        let observed = status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|c| {
                c["observedGeneration"]
                    .as_i64()
                    .is_some_and(|g| g >= applied)
            });
        if !observed {
            return false;
        }
        if nodepool {
            fed_back_true(&status, "Ready") && status["replicas"] == spec["replicas"]
        } else {
            // The release the spec asks for, in either shape the adapter accepts.
            let wanted = spec["openshift_version"]
                .as_str()
                .or_else(|| spec.pointer("/release/version").and_then(Value::as_str))
                .expect("the cluster's spec names its release version");
            let newest = &status["version"]["history"][0];
            let desired = status["version"]["desired"]["version"]
                .as_str()
                .unwrap_or(wanted);
            fed_back_true(&status, "Available")
                && newest["state"] == "Completed"
                && newest["version"] == wanted
                && desired == wanted
        }
    }

    /// After every PUT: once HyperFleet concluded `LastKnownReconciled=True` for `object` it
    /// stays True; `Reconciled=True` only at the object's generation and only when the
    /// management cluster reflects it.
    fn check_invariants(&self, object: &str, after: &str) -> Conclusions {
        let concluded = self.conclusions(object);
        let [reconciled, last_known, _] = &concluded;
        let known = last_known.as_ref().is_some_and(|c| c.0 == "True");
        let mut served = self
            .served
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if served.iter().any(|o| o == object) {
            assert!(
                known,
                "after {after}: LastKnownReconciled dropped: {concluded:?}"
            );
        } else if known {
            served.push(object.to_owned());
        }
        if let Some((status, n, _)) = reconciled
            && status == "True"
        {
            assert_eq!(
                *n,
                generation(&self.api, object),
                "after {after}: Reconciled=True at another generation: {concluded:?}"
            );
            assert!(
                self.reflects(object, *n),
                "after {after}: Reconciled=True at {n}, which the management cluster does not reflect: {concluded:?}"
            );
        }
        concluded
    }

    /// The pulse through the task config to the API (see [`World::report`]), then the
    /// invariants: the API's answer and what it concludes.
    fn put(&self, object: &str, pulse: &JobPulse) -> (Option<u16>, Conclusions) {
        let answer = self.report(object, pulse);
        let concluded = self.check_invariants(object, &pulse.explain());
        (answer, concluded)
    }

    /// [`World::others_report`] (Available=True), the invariants checked after each PUT.
    fn others_put(&self, object: &str) {
        let others: &[&str] = if object.contains("/nodepools/") {
            &["validation"]
        } else {
            &OTHER_CLUSTER_ADAPTERS
        };
        for adapter in others {
            self.api.clock().advance(jiff::SignedDuration::from_secs(1));
            assert_eq!(
                other_adapter_reports(&self.api, object, adapter, true),
                201,
                "{adapter}"
            );
            self.check_invariants(object, adapter);
        }
    }

    /// PATCHes `object`'s spec as `change` makes it; the other adapters report at the new
    /// generation, which is returned.
    fn patch_spec(&self, object: &str, change: impl FnOnce(&mut Value)) -> i64 {
        let mut spec = self.api.must("GET", object, None)["spec"].clone();
        change(&mut spec);
        let before = generation(&self.api, object);
        let patched = self
            .api
            .must("PATCH", object, Some(&json!({ "spec": spec })));
        let after = patched["generation"].as_i64().unwrap();
        assert_eq!(after, before + 1, "{patched}");
        self.others_put(object);
        after
    }

    /// The agent applies the work `object`'s update; the HyperShift operator has not reconciled
    /// it yet (its status still stamped with the object's previous `metadata.generation`): the
    /// pulse says `AwaitingOperator`, HyperFleet stores it, and concludes Reconciled False at the
    /// new generation, LastKnownReconciled True at the previous one. The pulse is returned.
    async fn operator_lags(&self, object: &str) -> JobPulse {
        let work = self.work_of(object);
        let before = self.maestro.resource(&work).unwrap().object_generation();
        assert!(self.maestro.apply(&work));
        let applied = self.maestro.resource(&work).unwrap().object_generation();
        assert_eq!(
            applied,
            before + 1,
            "the spec change bumps metadata.generation"
        );
        let g = generation(&self.api, object);
        let awaiting = self.pulse_saying(object, "False", "AwaitingOperator").await;
        assert!(
            awaiting
                .message("Available")
                .contains(&format!("the object is at metadata.generation {applied}"))
                && awaiting
                    .message("Available")
                    .contains(&format!("its status describes generation {before}")),
            "{}",
            awaiting.explain()
        );
        assert!(
            awaiting
                .conditions()
                .contains(&("Health".into(), "True".into(), "NoIssues".into())),
            "within the bound the lag alone is no health problem: {}",
            awaiting.explain()
        );
        assert_eq!(self.put(object, &awaiting).0, Some(201));
        self.assert_not_yet(object, g - 1, ("False", "AwaitingOperator"));
        awaiting
    }

    /// The work of `object` (a cluster's or a NodePool's path on the API).
    fn work_of(&self, object: &str) -> String {
        if object.contains("/nodepools/") {
            format!("nodepool-{}", object.rsplit('/').next().unwrap())
        } else {
            self.work()
        }
    }

    /// A pulse at the object's generation whose Job says `Available` `status` `reason`.
    async fn pulse_saying(&self, object: &str, status: &str, reason: &str) -> JobPulse {
        let pulse = if object.contains("/nodepools/") {
            self.nodepool_pulse(object).await
        } else {
            self.controlplane_pulse().await
        };
        assert!(
            pulse
                .conditions()
                .contains(&("Available".into(), status.into(), reason.into())),
            "{}",
            pulse.explain()
        );
        pulse
    }

    /// The three conclusions at the object's current generation: Reconciled False,
    /// LastKnownReconciled True at `last_known`, HypershiftSuccessful `successful`.
    fn assert_not_yet(&self, object: &str, last_known: i64, successful: (&str, &str)) {
        let g = generation(&self.api, object);
        let [reconciled, known, ours] = self.conclusions(object);
        assert_eq!(reconciled.map(|c| (c.0, c.1)), Some(("False".into(), g)));
        assert_eq!(known.map(|c| (c.0, c.1)), Some(("True".into(), last_known)));
        assert_eq!(
            ours,
            Some((successful.0.into(), g, successful.1.into())),
            "HypershiftSuccessful"
        );
    }

    /// Create → provisioning → available at generation 1, every PUT checked.
    async fn control_plane_serves(&self) {
        self.others_put(&self.cluster);
        let created = self
            .pulse_saying(&self.cluster, "False", "Provisioning")
            .await;
        let (answer, [reconciled, known, _]) = self.put(&self.cluster, &created);
        assert_eq!(answer, Some(201));
        assert_eq!(reconciled.map(|c| (c.0, c.1)), Some(("False".into(), 1)));
        assert_ne!(known.map(|c| c.0), Some("True".into()));
        self.hosted_cluster(Stage::Ready);
        let available = self
            .pulse_saying(&self.cluster, "True", "ControlPlaneReady")
            .await;
        assert_eq!(self.put(&self.cluster, &available).0, Some(201));
        self.assert_reconciled(&self.cluster);
    }
}

/// Create, update (a mutable field: generation 2), upgrade (`openshift_version`: generation 3),
/// then an older generation's pulse: `LastKnownReconciled` never drops, `Reconciled` is True at a
/// generation only once the management cluster reflects it, and the stale pulse regresses
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_update_upgrade_and_a_stale_pulse_hyperfleet_concludes_what_the_cluster_runs() {
    let world = World::start().await;
    let cluster = world.cluster.clone();
    world.control_plane_serves().await;

    // Update: the SSH key secret (mutable) → generation 2, the work updated, not reflected yet.
    let g = world.patch_spec(&cluster, |spec| {
        spec["ssh_key_secret_name"] = "prod-eu-1-ssh-key-rotated".into();
    });
    assert_eq!(g, 2);
    let updating = world.pulse_saying(&cluster, "False", "Updating").await;
    assert_eq!(world.put(&cluster, &updating).0, Some(201));
    world.assert_not_yet(&cluster, 1, ("False", "Updating"));
    // The agent applies generation 2's spec (the HostedCluster's metadata.generation 1 → 2); the
    // HyperShift operator has not reconciled it yet, so its status (Available=True) still
    // describes generation 1's spec: not reflected (issue 23). Reconciled stays False at 2,
    // LastKnownReconciled True at 1.
    world.operator_lags(&cluster).await;
    world.hosted_cluster(Stage::Ready);
    let reflected = world
        .pulse_saying(&cluster, "True", "ControlPlaneReady")
        .await;
    assert_eq!(world.put(&cluster, &reflected).0, Some(201));
    world.assert_reconciled(&cluster);

    // Upgrade: release 4.17.1 → generation 3; rolled out while 4.17.0 serves, then completed.
    let g = world.patch_spec(&cluster, |spec| {
        spec["openshift_version"] = UPGRADE_VERSION.into();
    });
    assert_eq!(g, 3);
    let updating = world.pulse_saying(&cluster, "False", "Updating").await;
    assert_eq!(world.put(&cluster, &updating).0, Some(201));
    world.assert_not_yet(&cluster, 2, ("False", "Updating"));
    // The new release applied, the operator not there yet.
    world.operator_lags(&cluster).await;
    world.hosted_cluster(Stage::Upgrading {
        from: VERSION,
        to: UPGRADE_VERSION,
    });
    let upgrading = world.pulse_saying(&cluster, "False", "Upgrading").await;
    assert_eq!(world.put(&cluster, &upgrading).0, Some(201));
    world.assert_not_yet(&cluster, 2, ("False", "Upgrading"));
    world.hosted_cluster(Stage::Upgraded(UPGRADE_VERSION));
    let upgraded = world
        .pulse_saying(&cluster, "True", "ControlPlaneReady")
        .await;
    assert_eq!(world.put(&cluster, &upgraded).0, Some(201));
    world.assert_reconciled(&cluster);

    // Stale: generation 2's pulse after generation 3's reports the work's generation (3,
    // Applied `StaleGeneration`, nothing sent): stored, and it regresses nothing.
    let before = world.conclusions(&cluster);
    let stale = world.controlplane_pulse_with(2, &[]).await;
    assert!(stale.ended_cleanly(), "{}", stale.explain());
    assert!(
        stale
            .conditions()
            .contains(&("Applied".into(), "True".into(), "StaleGeneration".into())),
        "{}",
        stale.explain()
    );
    assert_eq!(
        stale
            .annotation("hyperfleet.io/observed-generation")
            .as_deref(),
        Some("3")
    );
    let (answer, after) = world.put(&cluster, &stale);
    assert_eq!(answer, Some(201), "{}", stale.explain());
    assert_eq!(after, before, "{}", stale.explain());
}

/// The failure rows and refusals on a serving control plane: Maestro unreachable and an
/// adapter crash at the reconciled generation (Available=Unknown: discarded, nothing changes),
/// an immutable change (generation 2) and an invalid spec (generation 3) refused and stored,
/// then a crash at a new valid generation (4): stored as False. `LastKnownReconciled` stays
/// True at generation 1 throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_and_refusals_are_stored_or_discarded_and_never_drop_last_known_reconciled() {
    let world = World::start().await;
    let cluster = world.cluster.clone();
    world.control_plane_serves().await;
    let reconciled = world.conclusions(&cluster);

    // Maestro unreachable at the reconciled generation: Unknown, discarded (rule 13).
    let down = world
        .controlplane_pulse_with(
            1,
            &[
                ("MAESTRO_API_URL", CLOSED.to_owned()),
                ("MAESTRO_GRPC_URL", CLOSED.to_owned()),
                ("RETRY_BUDGET_SECONDS", "1".to_owned()),
            ],
        )
        .await;
    assert!(down.ended_cleanly(), "{}", down.explain());
    assert!(
        down.conditions()
            .iter()
            .any(|(t, s, _)| t == "Available" && s == "Unknown"),
        "{}",
        down.explain()
    );
    let (answer, after) = world.put(&cluster, &down);
    assert_eq!(answer, Some(204), "{}", down.explain());
    assert_eq!(after, reconciled);

    // The adapter crashes (its report cannot be written) at the reconciled generation: the
    // reporter's AdapterExitedWithError, sent as Unknown since HypershiftSuccessful is True
    // there: discarded.
    let crash_env = |world: &World| {
        let not_a_dir = world.dir.path().join("results-is-a-file");
        std::fs::write(&not_a_dir, "").unwrap();
        [(
            "RESULTS_OUTPUT_PATH",
            not_a_dir.join("adapter-report.json").display().to_string(),
        )]
    };
    let crashed = world.controlplane_pulse_with(1, &crash_env(&world)).await;
    assert_eq!(crashed.adapter_code, Some(1), "{}", crashed.explain());
    assert!(
        crashed.conditions().contains(&(
            "Available".into(),
            "False".into(),
            "AdapterExitedWithError".into()
        )),
        "{}",
        crashed.explain()
    );
    let (answer, after) = world.put(&cluster, &crashed);
    assert_eq!(answer, Some(204), "{}", crashed.explain());
    assert_eq!(after, reconciled);

    // An immutable change (the region) at generation 2: refused, stored.
    let fixture: Value = serde_json::from_str(CLUSTER_FIXTURE).unwrap();
    let g = world.patch_spec(&cluster, |spec| {
        spec["gcp_region"] = "europe-west3".into();
    });
    assert_eq!(g, 2);
    let immutable = world
        .pulse_saying(&cluster, "False", "ImmutableFieldChanged")
        .await;
    assert_eq!(world.put(&cluster, &immutable).0, Some(201));
    world.assert_not_yet(&cluster, 1, ("False", "ImmutableFieldChanged"));

    // An invalid spec at generation 3 (the region set back, the cluster network not a CIDR):
    // refused, stored.
    let g = world.patch_spec(&cluster, |spec| {
        spec["gcp_region"] = fixture["spec"]["gcp_region"].clone();
        spec["cluster_network_cidr"] = "10.132.0.0/33".into();
    });
    assert_eq!(g, 3);
    let invalid = world
        .pulse_saying(&cluster, "False", "InvalidClusterSpec")
        .await;
    assert_eq!(world.put(&cluster, &invalid).0, Some(201));
    world.assert_not_yet(&cluster, 1, ("False", "InvalidClusterSpec"));

    // The spec set back (generation 4), and the adapter crashes: HypershiftSuccessful is not
    // True at 4, so the reporter's False is sent and stored.
    let g = world.patch_spec(&cluster, |spec| *spec = fixture["spec"].clone());
    assert_eq!(g, 4);
    let crashed = world.controlplane_pulse_with(4, &crash_env(&world)).await;
    assert_eq!(crashed.adapter_code, Some(1), "{}", crashed.explain());
    let (answer, _) = world.put(&cluster, &crashed);
    assert_eq!(answer, Some(201), "{}", crashed.explain());
    world.assert_not_yet(&cluster, 1, ("False", "AdapterExitedWithError"));
}

/// A NodePool of a serving control plane: created → ready (Reconciled True @1), scaled to 5
/// (generation 2: Updating, then Scaling 3 of 5, both stored with `LastKnownReconciled` True at
/// 1, then ready: True @2), then an invalid spec (generation 3: negative replicas) refused and
/// stored with `LastKnownReconciled` still True at 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_pool_through_scale_and_an_invalid_spec_keeps_last_known_reconciled() {
    let world = World::start().await;
    world.control_plane_serves().await;
    let nodepool = world.create_nodepool();
    let work = format!("nodepool-{}", nodepool.rsplit('/').next().unwrap());
    world.others_put(&nodepool);

    let created = world.pulse_saying(&nodepool, "False", "Provisioning").await;
    let (answer, [reconciled, known, _]) = world.put(&nodepool, &created);
    assert_eq!(answer, Some(201));
    assert_eq!(reconciled.map(|c| (c.0, c.1)), Some(("False".into(), 1)));
    assert_ne!(known.map(|c| c.0), Some("True".into()));
    let ready = |replicas: i64| NodePoolStatus::gcp_ready(replicas, VERSION).to_json();
    assert!(world.maestro.set_feedback(&work, &ready(3)));
    let available = world.pulse_saying(&nodepool, "True", "NodePoolReady").await;
    assert_eq!(world.put(&nodepool, &available).0, Some(201));
    world.assert_reconciled(&nodepool);

    // Scale to 5: generation 2.
    let g = world.patch_spec(&nodepool, |spec| spec["replicas"] = 5.into());
    assert_eq!(g, 2);
    let updating = world.pulse_saying(&nodepool, "False", "Updating").await;
    assert_eq!(world.put(&nodepool, &updating).0, Some(201));
    world.assert_not_yet(&nodepool, 1, ("False", "Updating"));
    world.operator_lags(&nodepool).await;
    let scaling = NodePoolStatus::gcp_ready(5, VERSION)
        .with_available(3)
        .set(
            "Ready",
            "False",
            "WaitingForAvailableMachines",
            "Minimum availability requires 5 replicas, current 3 available",
        )
        .to_json();
    assert!(world.maestro.set_feedback(&work, &scaling));
    let scaling = world.pulse_saying(&nodepool, "False", "Scaling").await;
    assert_eq!(world.put(&nodepool, &scaling).0, Some(201));
    world.assert_not_yet(&nodepool, 1, ("False", "Scaling"));
    assert!(world.maestro.set_feedback(&work, &ready(5)));
    let scaled = world.pulse_saying(&nodepool, "True", "NodePoolReady").await;
    assert_eq!(world.put(&nodepool, &scaled).0, Some(201));
    world.assert_reconciled(&nodepool);

    // An invalid spec at generation 3: refused, stored.
    let g = world.patch_spec(&nodepool, |spec| spec["replicas"] = (-1).into());
    assert_eq!(g, 3);
    let invalid = world
        .pulse_saying(&nodepool, "False", "InvalidNodePoolSpec")
        .await;
    assert_eq!(world.put(&nodepool, &invalid).0, Some(201));
    world.assert_not_yet(&nodepool, 2, ("False", "InvalidNodePoolSpec"));
    // The control plane's conclusions are untouched by its NodePool's reports.
    world.assert_reconciled(&world.cluster);
}

/// The invariant check itself: a report claiming `Available=True` at a generation the
/// management cluster does not reflect yet, and then `Available=False` about the generation
/// HyperFleet last saw reconciled (`generations/a`), each make it fail, naming the broken
/// invariant.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_invariant_check_fails_on_an_unreflected_reconciled_and_a_dropped_last_known() {
    use job_report::{Condition, ConditionStatus::False};
    let world = World::start().await;
    let cluster = world.cluster.clone();
    world.control_plane_serves().await;
    world.patch_spec(&cluster, |spec| {
        spec["ssh_key_secret_name"] = "prod-eu-1-ssh-key-rotated".into();
    });
    let put = |report: job_report::Report| {
        world
            .api
            .clock()
            .advance(jiff::SignedDuration::from_secs(1));
        let reported = world
            .controlplane
            .report(&world.api, &cluster, &|m| reported_job(m, &report));
        assert_eq!(reported.answer.unwrap().status, 201);
    };
    let failure = |after: &str| -> String {
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            world.check_invariants(&cluster, after)
        }))
        .expect_err("the invariant check passed");
        caught.downcast_ref::<String>().cloned().unwrap_or_default()
    };

    // The work still carries generation 1: True at 2 is claimed too early.
    put(success_report(2));
    assert_eq!(
        conclusion(&world.api, &cluster, "Reconciled").map(|c| (c.0, c.1)),
        Some(("True".into(), 2))
    );
    let message = failure("a premature True");
    assert!(
        message.contains("which the management cluster does not reflect"),
        "{message}"
    );

    // False about the generation HyperFleet last saw reconciled drops LastKnownReconciled.
    put(job_report::Report {
        observed_generation: Some(2),
        ..job_report::Report::new(vec![
            Condition::new("Applied", False, "ApplyFailed", "apply failed"),
            Condition::new("Available", False, "ApplyFailed", "not available"),
            Condition::new("Health", False, "ApplyFailed", "apply failed"),
        ])
    });
    let message = failure("a False about the reconciled generation");
    assert!(message.contains("LastKnownReconciled dropped"), "{message}");
}
