//! Issue 11 end to end: `hypershift-adapter nodepool` and the `status-reporter` as the real
//! processes of a NodePool's pulse Job ([`testbed::real_pulse::run_nodepool`]), on both work
//! backends: `maestro` (the fake Maestro and its simulated agent) and `hub` (ManifestWorks on the
//! fake API server, their status written by the same simulated agent, [`testbed::hub_agent`]).
//! The checks are on what HyperFleet reads: the Job's conditions, its
//! `data.hyperfleet.io/<key>` annotations and `hyperfleet.io/observed-generation`; plus the
//! NodePool the published work carries and the work requests each pulse costs.
//!
//! The control plane is put in place as in production: a real `controlplane` pulse creates its
//! work, then the agent feeds back the HostedCluster's status, so the NodePool's gate reads a real
//! control-plane work. Ids and names are production-shaped: UUIDv7 ids, a NodePool name of 15
//! characters (the API's longest) and a cluster name of 53.
//!
//! The rows of the NodePool condition table (`adapter/src/pulse/nodepool/mod.rs`) covered here:
//! waiting for the control plane, created, awaiting feedback, GCP provisioning /
//! scaling / ready / updating / not ready, None payload ready (fetched or not), the Health rows,
//! ApplyFailed (admission denial, missing namespace), NodePoolMissing, FeedbackNotSynced,
//! InvalidFeedback, InvalidNodePoolSpec (alone and against the HostedCluster), the update rows
//! (updated, immutable change, stale, waiting), OwnershipConflict, the deletion stages through
//! `Finalized=True` and DeletionStuck, a NodePool of a cluster being deleted, MaestroUnavailable,
//! AdapterMisconfigured and NodePoolSpecUnavailable. Not here (the adapter's unit tests have
//! them): MaestroAuthFailed, ConsumerNotFound and ManifestWorkFailed, which a NodePool pulse meets
//! only when it publishes (a wrong consumer reads as "no control plane on management cluster
//! <consumer> yet" while nothing is sent).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, Ordering};

use hypershift_adapter::pulse::nodepool;
use serde_json::{Value, json};
use testbed::hub_agent::{HubAgent, WORKS};
use testbed::ids::{CLUSTER_ID, LONGEST_CLUSTER_NAME, LONGEST_NODEPOOL_NAME, NODEPOOL_ID};
use testbed::kube_api::ApiServer;
use testbed::local_pulse::scenario::{Stage, VERSION, hosted_cluster_status};
use testbed::maestro::{FakeMaestro, FakeOptions};
use testbed::nodepool::{
    NodePoolStatus, gcp_spec, nodepool_object, none_spec, release_image, soft_delete,
};
use testbed::pulse_job::{controlplane_job_name, nodepool_job_name};
use testbed::real_pulse::{self, JobPulse};

const CLUSTER: &str = include_str!("../../adapter/tests/fixtures/cluster-valid.json");
const CONSUMER: &str = "mgmt-1";
/// The generation of the fixture cluster.
const CP_GENERATION: i64 = 3;
/// The HostedCluster's Private Service Connect subnet (the fixture's `psc_subnet_name`): a GCP
/// NodePool's default subnet.
const PSC_SUBNET: &str = "hcp-psc-subnet";
/// The HostedCluster's finalizer and the NodePool's (`hypershift-api.md` §5).
const HYPERSHIFT_FINALIZER: &str = "hypershift.openshift.io/finalizer";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Maestro,
    Hub,
}

/// Who holds the works and reports on them.
enum Agent {
    /// Maestro, its agent reporting only when told.
    Maestro(FakeMaestro),
    /// The hub's simulated agent.
    Hub(HubAgent),
}

/// The fakes of one case and the Pods' directory.
struct Bed {
    server: ApiServer,
    agent: Agent,
    dir: tempfile::TempDir,
    /// On the hub, write the agent's reports into the hub's works before each pulse (off when a
    /// case writes a work's status itself).
    hub_reports: AtomicBool,
}

/// What the backend stores of a work.
struct StoredWork {
    metadata: Value,
    manifests: Vec<Value>,
    configs: Value,
}

fn cp_work() -> String {
    format!("hostedcluster-{CLUSTER_ID}")
}

fn np_work() -> String {
    format!("nodepool-{NODEPOOL_ID}")
}

/// The HyperShift NodePool's name: `<nodepool name>-<cluster id>`.
fn np_name() -> String {
    format!("{LONGEST_NODEPOOL_NAME}-{CLUSTER_ID}")
}

/// The HyperFleet NodePool at `generation` with `spec`.
fn np(generation: i64, spec: Value) -> Value {
    nodepool_object(
        NODEPOOL_ID,
        LONGEST_NODEPOOL_NAME,
        CLUSTER_ID,
        generation,
        spec,
    )
}

/// The NodePool of `generation` soft-deleted `minutes` ago (its generation bumped by the DELETE).
fn deleted(generation: i64, spec: Value, minutes: i64) -> Value {
    let mut object = np(generation, spec);
    let at = jiff::Timestamp::now() - jiff::SignedDuration::from_mins(minutes);
    soft_delete(
        &mut object,
        &at.round(jiff::Unit::Second).unwrap().to_string(),
    );
    object
}

/// The fixture cluster under the longest name the API accepts, at `generation`, deleted when
/// `deleted_time` is given.
fn cluster(generation: i64, deleted_time: Option<&str>) -> Value {
    let mut cluster: Value = serde_json::from_str(CLUSTER).unwrap();
    assert_eq!(cluster["id"], CLUSTER_ID);
    cluster["name"] = json!(LONGEST_CLUSTER_NAME);
    cluster["generation"] = json!(generation);
    if let Some(at) = deleted_time {
        cluster["deleted_time"] = json!(at);
        cluster["deleted_by"] = json!("jdoe@example.com");
    }
    cluster
}

impl Bed {
    async fn start(backend: Backend) -> Bed {
        let server = ApiServer::start().await;
        let agent = match backend {
            Backend::Maestro => {
                let maestro = FakeMaestro::start(FakeOptions {
                    consumers: vec![CONSUMER.to_owned()],
                    ..FakeOptions::default()
                })
                .await
                .unwrap();
                // The agent reports, and finishes deletions, only when told.
                maestro.set_agent_delay(None);
                Agent::Maestro(maestro)
            }
            Backend::Hub => Agent::Hub(HubAgent::start(CONSUMER).await.unwrap()),
        };
        Bed {
            server,
            agent,
            dir: tempfile::tempdir().unwrap(),
            hub_reports: AtomicBool::new(true),
        }
    }

    /// The fake whose agent reports, for knobs that hold before it applies a work.
    fn maestro(&self) -> &FakeMaestro {
        match &self.agent {
            Agent::Maestro(maestro) => maestro,
            Agent::Hub(hub) => &hub.maestro,
        }
    }

    /// The management cluster's agent holding `work` (on the hub it is handed the hub's
    /// ManifestWork the first time, and applies it). Its knobs take effect on the next pulse.
    async fn agent(&self, work: &str) -> &FakeMaestro {
        match &self.agent {
            Agent::Maestro(maestro) => maestro,
            Agent::Hub(hub) => {
                hub.receive(&self.server, work).await.unwrap();
                &hub.maestro
            }
        }
    }

    /// The work backend's part of an adapter container's environment.
    fn backend_env(&self) -> Vec<(String, String)> {
        match &self.agent {
            Agent::Maestro(maestro) => vec![
                ("MAESTRO_API_URL".to_owned(), maestro.rest_url()),
                ("MAESTRO_GRPC_URL".to_owned(), maestro.grpc_url()),
            ],
            Agent::Hub(_) => vec![
                ("WORK_BACKEND".to_owned(), "hub".to_owned()),
                (
                    "KUBECONFIG".to_owned(),
                    self.server
                        .write_kubeconfig(self.dir.path())
                        .display()
                        .to_string(),
                ),
            ],
        }
    }

    /// On the hub, the agent's last report on each work it holds is written into the hub's
    /// ManifestWork, as the agent would have by now (nothing for a work gone from the hub).
    fn sync_hub(&self) {
        if !self.hub_reports.load(Ordering::Relaxed) {
            return;
        }
        if let Agent::Hub(hub) = &self.agent {
            for work in [cp_work(), np_work()] {
                if hub.maestro.resource(&work).is_some() {
                    hub.report(&self.server, &work);
                }
            }
        }
    }

    /// A pulse of the control plane (`hypershift-adapter controlplane`) for `cluster`, the
    /// cluster's NodePools listed as `nodepools`.
    async fn controlplane(&self, cluster: &Value, nodepools: &[Value]) -> JobPulse {
        self.sync_hub();
        let dir = self.dir.path();
        std::fs::write(dir.join("cluster.json"), cluster.to_string()).unwrap();
        let list = json!({"items": nodepools, "page": 1, "size": nodepools.len(), "total": nodepools.len()});
        std::fs::write(dir.join("nodepools.json"), list.to_string()).unwrap();
        let generation = cluster["generation"].as_i64().unwrap();
        let mut env = vec![
            ("CLUSTER_ID".to_owned(), CLUSTER_ID.to_owned()),
            ("GENERATION".to_owned(), generation.to_string()),
            (
                "CLUSTER_SPEC_FILE".to_owned(),
                dir.join("cluster.json").display().to_string(),
            ),
            (
                "NODEPOOLS_FILE".to_owned(),
                dir.join("nodepools.json").display().to_string(),
            ),
            (
                "MANAGEMENT_CLUSTER_CONSUMER".to_owned(),
                CONSUMER.to_owned(),
            ),
            ("LOG_FORMAT".to_owned(), "json".to_owned()),
        ];
        env.extend(self.backend_env());
        let pulse = real_pulse::run(
            &self.server,
            &dir.join("controlplane"),
            &controlplane_job_name(CLUSTER_ID, i32::try_from(generation).unwrap()),
            &env,
        )
        .await;
        assert!(pulse.ended_cleanly(), "{}", pulse.explain());
        pulse
    }

    /// The control plane as production puts it there: its pulse creates the work, then the
    /// agent reports the HostedCluster `Available=True` at [`VERSION`].
    async fn control_plane_ready(&self) {
        let created = self.controlplane(&cluster(CP_GENERATION, None), &[]).await;
        assert_eq!(
            created.conditions(),
            triples(&[
                ("Applied", "True", "ManifestWorkCreated"),
                ("Available", "False", "Provisioning"),
                ("Health", "True", "NoIssues"),
            ]),
            "{}",
            created.explain()
        );
        self.hosted_cluster(Stage::Ready).await;
    }

    /// The agent feeds back the HostedCluster's status at `stage`.
    async fn hosted_cluster(&self, stage: Stage) {
        assert!(
            self.agent(&cp_work())
                .await
                .set_feedback(&cp_work(), &hosted_cluster_status(stage))
        );
    }

    /// The agent feeds back the NodePool's `status`.
    async fn node_pool(&self, status: &NodePoolStatus) {
        assert!(
            self.agent(&np_work())
                .await
                .set_feedback(&np_work(), &status.to_json())
        );
    }

    /// One pulse of the NodePool `object` (read from the mounted file), `extra` added to the
    /// adapter container's environment.
    async fn nodepool_with(&self, object: &Value, extra: &[(&str, &str)]) -> JobPulse {
        let file = self.dir.path().join("nodepool.json");
        std::fs::write(&file, object.to_string()).unwrap();
        let generation = object["generation"].as_i64().unwrap();
        let mut env = pairs(&[
            ("CLUSTER_ID", CLUSTER_ID),
            ("NODEPOOL_ID", NODEPOOL_ID),
            ("GENERATION", &generation.to_string()),
            ("NODEPOOL_SPEC_FILE", &file.display().to_string()),
        ]);
        env.extend(pairs(extra));
        self.nodepool_pulse(generation, &env).await
    }

    /// One pulse of the NodePool's Job of `generation`, the adapter container's environment the
    /// consumer, the backend's and `env` (later entries win).
    async fn nodepool_pulse(&self, generation: i64, env: &[(String, String)]) -> JobPulse {
        self.sync_hub();
        let mut all = pairs(&[
            ("MANAGEMENT_CLUSTER_CONSUMER", CONSUMER),
            ("LOG_FORMAT", "json"),
        ]);
        all.extend(self.backend_env());
        all.extend(env.iter().cloned());
        let pulse = real_pulse::run_nodepool(
            &self.server,
            &self.dir.path().join("nodepool"),
            &nodepool_job_name(NODEPOOL_ID, i32::try_from(generation).unwrap()),
            &all,
        )
        .await;
        assert!(pulse.ended_cleanly(), "{}", pulse.explain());
        assert_eq!(
            pulse.job["metadata"]["name"],
            format!("hs-np-{NODEPOOL_ID}-g{generation}")
        );
        pulse
    }

    async fn nodepool(&self, object: &Value) -> JobPulse {
        self.nodepool_with(object, &[]).await
    }

    /// `(reads, writes)` of works so far: Maestro REST GETs and gRPC Publishes; on the hub, the
    /// GETs and the other requests on ManifestWorks.
    fn requests(&self) -> (u64, u64) {
        match &self.agent {
            Agent::Maestro(m) => (m.rest_gets(), m.publishes()),
            Agent::Hub(_) => {
                let works: Vec<_> = self
                    .server
                    .requests()
                    .into_iter()
                    .filter(|r| r.path.contains("/manifestworks"))
                    .collect();
                let gets = works
                    .iter()
                    .filter(|r| r.method == http::Method::GET)
                    .count();
                (gets as u64, (works.len() - gets) as u64)
            }
        }
    }

    /// The NodePool's work as the backend stores it (`None` once gone).
    fn stored(&self) -> Option<StoredWork> {
        match &self.agent {
            Agent::Maestro(m) => m.resource(&np_work()).map(|r| {
                let bundle = r.bundle();
                StoredWork {
                    metadata: r.metadata.clone(),
                    manifests: bundle["manifests"].as_array().cloned().unwrap_or_default(),
                    configs: bundle["manifestConfigs"].clone(),
                }
            }),
            Agent::Hub(_) => self
                .server
                .object(WORKS, "manifestworks", Some(CONSUMER), &np_work())
                .map(|w| StoredWork {
                    metadata: w["metadata"].clone(),
                    manifests: w["spec"]["workload"]["manifests"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default(),
                    configs: w["spec"]["manifestConfigs"].clone(),
                }),
        }
    }

    /// The NodePool manifest of the stored work.
    fn stored_node_pool(&self) -> Value {
        let work = self.stored().expect("the NodePool's work is stored");
        assert_eq!(work.manifests.len(), 1, "{:?}", work.manifests);
        work.manifests[0].clone()
    }

    /// The `hyperfleet.io/generation` of the stored work.
    fn stored_generation(&self) -> String {
        self.stored()
            .expect("the NodePool's work is stored")
            .metadata["annotations"]["hyperfleet.io/generation"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Runs `pulse` and returns it with the `(reads, writes)` of works it cost.
async fn counted(bed: &Bed, pulse: impl Future<Output = JobPulse>) -> (JobPulse, (u64, u64)) {
    let before = bed.requests();
    let pulse = pulse.await;
    let after = bed.requests();
    (pulse, (after.0 - before.0, after.1 - before.1))
}

fn triples(items: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = items
        .iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect();
    out.sort();
    out
}

/// The Job's conditions are exactly `want` (any order).
#[track_caller]
fn assert_conditions(pulse: &JobPulse, want: &[(&str, &str, &str)]) {
    assert_eq!(pulse.conditions(), triples(want), "{}", pulse.explain());
}

/// Applied and Health False, Available Unknown, all with `reason`: a row where the adapter
/// could not observe (backend or input unreadable).
fn error_row(reason: &str) -> [(&str, &str, &str); 3] {
    [
        ("Applied", "False", reason),
        ("Available", "Unknown", reason),
        ("Health", "False", reason),
    ]
}

/// Applied, Available and Health False `reason`.
fn all_false(reason: &str) -> [(&str, &str, &str); 3] {
    [
        ("Applied", "False", reason),
        ("Available", "False", reason),
        ("Health", "False", reason),
    ]
}

const WAITING: [(&str, &str, &str); 3] = [
    ("Applied", "False", "WaitingForControlPlane"),
    ("Available", "False", "WaitingForControlPlane"),
    ("Health", "True", "NoIssues"),
];

const CREATED: [(&str, &str, &str); 3] = [
    ("Applied", "True", "ManifestWorkCreated"),
    ("Available", "False", "Provisioning"),
    ("Health", "True", "NoIssues"),
];

const AWAITING: [(&str, &str, &str); 3] = [
    ("Applied", "True", "ManifestWorkExists"),
    ("Available", "False", "AwaitingFeedback"),
    ("Health", "True", "NoIssues"),
];

/// Applied True `ManifestWorkApplied`, Available `available`, Health `health`.
fn applied<'a>(
    available: (&'a str, &'a str),
    health: (&'a str, &'a str),
) -> [(&'a str, &'a str, &'a str); 3] {
    [
        ("Applied", "True", "ManifestWorkApplied"),
        ("Available", available.0, available.1),
        ("Health", health.0, health.1),
    ]
}

const NO_ISSUES: (&str, &str) = ("True", "NoIssues");
const READY: [(&str, &str, &str); 3] = [
    ("Applied", "True", "ManifestWorkApplied"),
    ("Available", "True", "NodePoolReady"),
    ("Health", "True", "NoIssues"),
];

/// Condition `type_`'s message contains every one of `parts`.
#[track_caller]
fn assert_says(pulse: &JobPulse, type_: &str, parts: &[&str]) {
    let message = pulse.message(type_);
    for part in parts {
        assert!(
            message.contains(part),
            "{type_} does not say {part:?}: {message}"
        );
    }
}

/// `data.<key>` as HyperFleet reads it: the per-key annotation (a string as itself, anything
/// else as JSON text) and the `report-data` value.
#[track_caller]
fn assert_data(pulse: &JobPulse, want: &[(&str, Value)]) {
    for (key, value) in want {
        let annotation = pulse
            .annotation(&format!("data.hyperfleet.io/{key}"))
            .unwrap_or_else(|| panic!("no data.hyperfleet.io/{key}\n{}", pulse.explain()));
        match value {
            Value::String(s) => assert_eq!(&annotation, s, "data.hyperfleet.io/{key}"),
            other => assert_eq!(
                serde_json::from_str::<Value>(&annotation).ok().as_ref(),
                Some(other),
                "data.hyperfleet.io/{key} = {annotation}"
            ),
        }
        assert_eq!(&pulse.report_data()[key], value, "report-data {key}");
    }
}

/// The data of a NodePool that runs nothing yet, asked for `replicas`.
fn nothing_running(replicas: i64) -> Vec<(&'static str, Value)> {
    vec![
        ("desired_replicas", json!(replicas)),
        ("current_replicas", json!(0)),
        ("autoscaling_min", Value::Null),
        ("autoscaling_max", Value::Null),
        ("version", json!("")),
        ("node_versions", json!([])),
        ("ready_nodes", json!(0)),
        ("unready_nodes", json!(0)),
    ]
}

#[track_caller]
fn assert_observed_generation(pulse: &JobPulse, generation: i64) {
    assert_eq!(
        pulse.annotation("hyperfleet.io/observed-generation"),
        Some(generation.to_string()),
        "{}",
        pulse.explain()
    );
}

/// A control plane, a NodePool of 3 created at generation 1 (at `version`), its agent reporting
/// it ready.
async fn a_ready_node_pool(bed: &Bed, version: &str) -> Value {
    bed.control_plane_ready().await;
    let first = np(1, gcp_spec(3, version));
    assert_conditions(&bed.nodepool(&first).await, &CREATED);
    bed.node_pool(&NodePoolStatus::gcp_ready(3, version)).await;
    assert_conditions(&bed.nodepool(&first).await, &READY);
    first
}

/// No control plane, then one that is not available yet, then one that is: nothing is sent
/// until the HostedCluster reports `Available=True`; then the work is created with the NodePool
/// in the HostedCluster's namespace, named after the NodePool and the cluster, joined to the
/// HostedCluster, on its subnet; the next pulse awaits the agent.
async fn waits_for_the_control_plane_then_creates(backend: Backend) {
    let bed = Bed::start(backend).await;
    let first = np(1, gcp_spec(3, VERSION));

    let (none, requests) = counted(&bed, bed.nodepool(&first)).await;
    assert_conditions(&none, &WAITING);
    assert_says(
        &none,
        "Applied",
        &[
            "Nothing was sent",
            &format!("ManifestWork {} does not exist", cp_work()),
        ],
    );
    // One read of the NodePool's work, one of the control plane's; nothing written.
    assert_eq!(requests, (2, 0), "{backend:?}");
    assert_data(&none, &nothing_running(3));
    assert_observed_generation(&none, 1);
    assert!(bed.stored().is_none());

    // The control plane's work exists but its agent has reported nothing.
    bed.controlplane(&cluster(CP_GENERATION, None), &[]).await;
    let unreported = bed.nodepool(&first).await;
    assert_conditions(&unreported, &WAITING);
    assert_says(
        &unreported,
        "Applied",
        &["is not available yet", "AwaitingFeedback"],
    );

    // The HostedCluster is coming up.
    bed.hosted_cluster(Stage::Progressing).await;
    let progressing = bed.nodepool(&first).await;
    assert_conditions(&progressing, &WAITING);
    assert_says(
        &progressing,
        "Applied",
        &[
            &format!("HostedCluster clusters/{LONGEST_CLUSTER_NAME} is not available yet"),
            "Available=False (WaitingForAvailable)",
        ],
    );
    assert!(bed.stored().is_none());

    // Available: the work is created.
    bed.hosted_cluster(Stage::Ready).await;
    let (created, requests) = counted(&bed, bed.nodepool(&first)).await;
    assert_conditions(&created, &CREATED);
    assert_eq!(requests, (2, 1), "{backend:?}");
    assert_data(&created, &nothing_running(3));
    assert_observed_generation(&created, 1);
    let work = bed.stored().unwrap();
    let labels = &work.metadata["labels"];
    assert_eq!(labels["hyperfleet.io/cluster-id"], CLUSTER_ID);
    assert_eq!(labels["hyperfleet.io/nodepool-id"], NODEPOOL_ID);
    assert_eq!(labels["hyperfleet.io/adapter"], "nodepool");
    assert_eq!(
        work.metadata["annotations"]["hyperfleet.io/generation"],
        "1"
    );
    let pool = bed.stored_node_pool();
    assert_eq!(pool["kind"], "NodePool");
    assert_eq!(pool["apiVersion"], "hypershift.openshift.io/v1beta1");
    assert_eq!(pool["metadata"]["namespace"], "clusters");
    assert_eq!(pool["metadata"]["name"], np_name());
    assert_eq!(np_name().len(), 52);
    assert_eq!(
        pool["metadata"]["labels"]["hyperfleet.io/nodepool-id"],
        NODEPOOL_ID
    );
    assert_eq!(pool["spec"]["clusterName"], LONGEST_CLUSTER_NAME);
    assert_eq!(pool["spec"]["replicas"], 3);
    assert_eq!(pool["spec"]["release"]["image"], release_image(VERSION));
    assert_eq!(pool["spec"]["management"]["upgradeType"], "Replace");
    let gcp = &pool["spec"]["platform"]["gcp"];
    assert_eq!(pool["spec"]["platform"]["type"], "GCP");
    assert_eq!(gcp["subnet"], PSC_SUBNET);
    assert_eq!(gcp["zone"], "europe-west2-a");
    assert_eq!(gcp["machineType"], "n2-standard-8");
    assert_eq!(gcp["bootDisk"]["diskSizeGB"], 128);
    // Fed back: status, generation, finalizers, deletionTimestamp; applied server-side.
    let config = &work.configs[0];
    assert_eq!(config["resourceIdentifier"]["resource"], "nodepools");
    assert_eq!(config["resourceIdentifier"]["namespace"], "clusters");
    assert_eq!(config["resourceIdentifier"]["name"], np_name());
    let rules: Vec<&str> = config["feedbackRules"][0]["jsonPaths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    match backend {
        Backend::Maestro => assert_eq!(
            rules,
            ["status", "generation", "finalizers", "deletionTimestamp"]
        ),
        // A standard hub carries scalars only: one rule per value the adapter reads.
        Backend::Hub => {
            let mut want: Vec<String> = nodepool::SCALAR_STATUS
                .all()
                .iter()
                .map(|v| v.name())
                .collect();
            want.extend([
                "generation".to_owned(),
                "finalizers".to_owned(),
                "deletionTimestamp".to_owned(),
            ]);
            assert_eq!(rules, want);
        }
    }
    assert_eq!(config["updateStrategy"]["type"], "ServerSideApply");

    // The agent has not reported on it yet: one read, nothing sent.
    let (next, requests) = counted(&bed, bed.nodepool(&first)).await;
    assert_conditions(&next, &AWAITING);
    assert_eq!(requests, (1, 0), "{backend:?}");
}

/// A GCP NodePool from machines being created to ready, then rolling out a configuration and
/// not ready: Available says which, the data follows the fed-back status.
async fn a_gcp_node_pool_from_provisioning_to_ready(backend: Backend) {
    let bed = Bed::start(backend).await;
    bed.control_plane_ready().await;
    let first = np(1, gcp_spec(3, VERSION));
    bed.nodepool(&first).await;

    bed.node_pool(&NodePoolStatus::gcp_provisioning(VERSION))
        .await;
    let provisioning = bed.nodepool(&first).await;
    assert_conditions(
        &provisioning,
        &applied(("False", "Provisioning"), NO_ISSUES),
    );
    assert_says(
        &provisioning,
        "Available",
        &["Machines are being created: 0 of 3 replicas available (3 desired)"],
    );
    assert_data(&provisioning, &nothing_running(3));

    let some = NodePoolStatus::gcp_ready(3, VERSION).with_available(1).set(
        "Ready",
        "False",
        "WaitingForAvailableMachines",
        "Minimum availability requires 3 replicas, current 1 available",
    );
    bed.node_pool(&some).await;
    let scaling = bed.nodepool(&first).await;
    assert_conditions(&scaling, &applied(("False", "Scaling"), NO_ISSUES));
    assert_says(&scaling, "Available", &["1 of 3 replicas available"]);
    assert_data(&scaling, &[("current_replicas", json!(1))]);

    bed.node_pool(&NodePoolStatus::gcp_ready(3, VERSION)).await;
    let (ready, requests) = counted(&bed, bed.nodepool(&first)).await;
    assert_conditions(&ready, &READY);
    assert_says(
        &ready,
        "Available",
        &["3 of 3 replicas available", "version 4.17.0"],
    );
    assert_eq!(requests, (1, 0), "{backend:?}: a steady pulse");
    assert_data(
        &ready,
        &[
            ("desired_replicas", json!(3)),
            ("current_replicas", json!(3)),
            ("version", json!(VERSION)),
            (
                "node_versions",
                json!([{"ocp_version": VERSION, "kubelet_version": "v1.30.5", "ready_nodes": 3, "unready_nodes": 0}]),
            ),
            ("ready_nodes", json!(3)),
            ("unready_nodes", json!(0)),
        ],
    );
    assert_observed_generation(&ready, 1);

    let rolling = NodePoolStatus::gcp_ready(3, VERSION)
        .set("Ready", "False", "WaitingForAvailableMachines", "")
        .set(
            "UpdatingConfig",
            "True",
            "AsExpected",
            "Updating config in progress. Target config: 5d2f8a7c",
        );
    bed.node_pool(&rolling).await;
    let updating = bed.nodepool(&first).await;
    assert_conditions(&updating, &applied(("False", "Updating"), NO_ISSUES));
    assert_says(
        &updating,
        "Available",
        &["a configuration update", "5d2f8a7c"],
    );

    let unhealthy = NodePoolStatus::gcp_ready(3, VERSION)
        .with_nodes(&[(VERSION, 2, 1)])
        .set(
            "Ready",
            "False",
            "MinimumReplicasUnavailable",
            "1 node is not ready",
        )
        .set(
            "AllNodesHealthy",
            "False",
            "NodeConditionsFailed",
            "Node workers-euw2-a1-7kq2m: NodeNotReady",
        );
    bed.node_pool(&unhealthy).await;
    let not_ready = bed.nodepool(&first).await;
    assert_conditions(&not_ready, &applied(("False", "NotReady"), NO_ISSUES));
    assert_says(
        &not_ready,
        "Available",
        &[
            "Ready=False (MinimumReplicasUnavailable)",
            "AllMachinesReady=True",
            "NodeNotReady",
        ],
    );
    assert_data(
        &not_ready,
        &[("ready_nodes", json!(2)), ("unready_nodes", json!(1))],
    );
}

/// Health names what needs a person, worst first, with the NodePool's own words: machines that
/// do not become ready for longer than the limit, a refused spec, an unsupported version skew,
/// a CIDR conflict, paused reconciliation.
async fn health_names_what_needs_a_person(backend: Backend) {
    let bed = Bed::start(backend).await;
    let first = a_ready_node_pool(&bed, VERSION).await;

    let quota = "Machine workers-euw2-a1-x9z: googleapi: Error 403: Quota 'N2_CPUS' exceeded. Limit: 24.0 in region europe-west2";
    let stuck = NodePoolStatus::gcp_ready(3, VERSION)
        .with_available(1)
        .set("Ready", "False", "WaitingForAvailableMachines", "")
        .set(
            "AllMachinesReady",
            "False",
            "InstanceProvisionFailed",
            quota,
        )
        .since("AllMachinesReady", 20);
    bed.node_pool(&stuck).await;
    let pulse = bed.nodepool(&first).await;
    assert_conditions(
        &pulse,
        &applied(("False", "Scaling"), ("False", "MachinesStuck")),
    );
    assert_says(&pulse, "Health", &["longer than 15m", quota]);
    // A longer limit: still progress.
    let patient = bed
        .nodepool_with(&first, &[("MACHINES_STUCK_AFTER", "1h")])
        .await;
    assert_conditions(&patient, &applied(("False", "Scaling"), NO_ISSUES));

    let cases = [
        (
            "ValidMachineConfig",
            "False",
            "ValidationFailed",
            "ConfigMap \"workers-config\" not found",
            "ValidationFailed",
        ),
        (
            "SupportedVersionSkew",
            "False",
            "UnsupportedSkew",
            "NodePool minor version 4.13 is more than 3 versions behind the control plane 4.17",
            "UnsupportedVersionSkew",
        ),
        (
            "ClusterNetworkCIDRConflict",
            "True",
            "CIDRConflict",
            "machine 10.132.0.7 is in the cluster network 10.132.0.0/14",
            "ClusterNetworkCIDRConflict",
        ),
        (
            "ReconciliationActive",
            "False",
            "ReconciliationPaused",
            "Reconciliation paused until: 2026-12-01T00:00:00Z",
            "ReconciliationPaused",
        ),
    ];
    for (type_, status, reason, message, health) in cases {
        let status = NodePoolStatus::gcp_ready(3, VERSION).set(type_, status, reason, message);
        bed.node_pool(&status).await;
        let pulse = bed.nodepool(&first).await;
        assert_conditions(
            &pulse,
            &applied(("True", "NodePoolReady"), ("False", health)),
        );
        assert_says(&pulse, "Health", &[message]);
    }
}

/// A `platform.type: none` NodePool: no machines; ready once the ignition payload is generated,
/// saying whether a machine fetched it.
async fn a_none_node_pool_is_ready_with_its_payload(backend: Backend) {
    let bed = Bed::start(backend).await;
    bed.control_plane_ready().await;
    let first = np(1, none_spec(2, VERSION));
    let created = bed.nodepool(&first).await;
    assert_conditions(&created, &CREATED);
    assert_says(&created, "Available", &["ignition payload"]);
    let pool = bed.stored_node_pool();
    assert_eq!(pool["spec"]["platform"], json!({"type": "None"}));
    assert_eq!(pool["spec"]["management"]["upgradeType"], "InPlace");

    let pending = NodePoolStatus::none_payload("").set(
        "ValidGeneratedPayload",
        "False",
        "WaitingForPayload",
        "Waiting for the token secret to be reconciled",
    );
    bed.node_pool(&pending).await;
    let provisioning = bed.nodepool(&first).await;
    assert_conditions(
        &provisioning,
        &applied(("False", "Provisioning"), NO_ISSUES),
    );
    assert_says(
        &provisioning,
        "Available",
        &[
            "The ignition payload is not generated yet",
            "WaitingForPayload",
        ],
    );

    bed.node_pool(&NodePoolStatus::none_payload(VERSION)).await;
    let unfetched = bed.nodepool(&first).await;
    assert_conditions(&unfetched, &READY);
    assert_says(
        &unfetched,
        "Available",
        &[
            "release 4.17.0 is generated",
            "no machine has fetched it yet",
        ],
    );
    assert_data(
        &unfetched,
        &[
            ("desired_replicas", json!(2)),
            ("current_replicas", json!(0)),
            ("version", json!(VERSION)),
        ],
    );

    let fetched = NodePoolStatus::none_payload(VERSION).set(
        "ReachedIgnitionEndpoint",
        "True",
        "AsExpected",
        "",
    );
    bed.node_pool(&fetched).await;
    let pulse = bed.nodepool(&first).await;
    assert_conditions(&pulse, &READY);
    assert_says(
        &pulse,
        "Available",
        &["at least one machine has fetched it"],
    );
}

/// What the management cluster's API server answers when an admission policy refuses the
/// NodePool (the shape of recording `06-apply-failure.json`, for a NodePool).
fn nodepool_denial() -> String {
    format!(
        "nodepools.hypershift.openshift.io \"{name}\" is forbidden: ValidatingAdmissionPolicy 'deny-np' with binding 'deny-np' denied request: NodePool {name} refused by an admission policy of this management cluster",
        name = np_name()
    )
}

/// The agent's reports: an admission denial (its words on the Job), the NodePool deleted behind
/// it with the old feedback kept (not available, no stale data), its feedback sync failing, and
/// a feedback that is not a NodePool status.
async fn what_the_agent_reports(backend: Backend) {
    let bed = Bed::start(backend).await;
    let first = a_ready_node_pool(&bed, VERSION).await;
    let agent = bed.agent(&np_work()).await;

    assert!(agent.fail_apply(&np_work(), Some(&nodepool_denial())));
    let denied = bed.nodepool(&first).await;
    assert_conditions(&denied, &all_false("ApplyFailed"));
    assert_says(
        &denied,
        "Applied",
        &[&format!("Failed to apply manifest: {}", nodepool_denial())],
    );
    assert_data(&denied, &nothing_running(3));
    assert!(agent.fail_apply(&np_work(), None));
    assert_conditions(&bed.nodepool(&first).await, &READY);

    assert!(agent.delete_on_cluster(&np_work(), true));
    let status = agent.resource(&np_work()).unwrap().status.unwrap();
    assert!(
        status.to_string().contains("readyNodeCount"),
        "no stale feedback: {status}"
    );
    let gone = bed.nodepool(&first).await;
    assert_conditions(
        &gone,
        &applied(("False", "NodePoolMissing"), ("False", "NodePoolMissing")),
    );
    assert_data(&gone, &nothing_running(3));
    assert!(agent.delete_on_cluster(&np_work(), false));
    assert_conditions(&bed.nodepool(&first).await, &AWAITING);

    bed.node_pool(&NodePoolStatus::gcp_ready(3, VERSION)).await;
    let words = (
        "PlaceholderSyncFailure",
        "placeholder: the status feedback could not be read",
    );
    assert!(agent.fail_feedback_sync(&np_work(), Some(words)));
    let unsynced = bed.nodepool(&first).await;
    assert_conditions(
        &unsynced,
        &applied(
            ("Unknown", "FeedbackNotSynced"),
            ("Unknown", "FeedbackNotSynced"),
        ),
    );
    assert_says(
        &unsynced,
        "Available",
        &[&format!("{}: {}", words.0, words.1)],
    );
    assert_data(&unsynced, &[("current_replicas", json!(0))]);
    assert!(agent.fail_feedback_sync(&np_work(), None));
    assert_conditions(&bed.nodepool(&first).await, &READY);

    match backend {
        Backend::Maestro => {
            assert!(agent.set_feedback_raw(&np_work(), r#"{"replicas": "three", "conditions": ["#));
        }
        // A hub's agent sends scalars, never malformed JSON: a value of the wrong type it can.
        Backend::Hub => {
            assert!(agent.set_feedback(&np_work(), &json!({"replicas": "three"})));
        }
    }
    let invalid = bed.nodepool(&first).await;
    assert_conditions(
        &invalid,
        &[
            ("Applied", "True", "ManifestWorkExists"),
            ("Available", "Unknown", "InvalidFeedback"),
            ("Health", "Unknown", "InvalidFeedback"),
        ],
    );
}

/// On a management cluster without the `clusters` namespace the control plane's work creates
/// it and the NodePool uses it; once it is removed behind the agents, the NodePool cannot be
/// applied and the Job carries the agent's words (recording `07`).
async fn a_missing_namespace_fails_with_the_agents_words(backend: Backend) {
    let bed = Bed::start(backend).await;
    bed.maestro()
        .set_cluster_namespaces(&["default", "kube-system"]);
    let first = a_ready_node_pool(&bed, VERSION).await;

    bed.maestro()
        .set_cluster_namespaces(&["default", "kube-system"]);
    assert!(bed.agent(&np_work()).await.apply(&np_work()));
    let pulse = bed.nodepool(&first).await;
    assert_conditions(&pulse, &all_false("ApplyFailed"));
    assert_says(
        &pulse,
        "Applied",
        &[
            &format!("could not apply ManifestWork {}", np_work()),
            r#"Failed to apply manifest: namespaces "clusters" not found"#,
        ],
    );
}

/// Specs the adapter refuses before sending: invalid fields (no request at all), and fields
/// that do not fit the cluster's HostedCluster (the control plane's work read, nothing sent); a
/// newer generation that does not fit is refused while the running NodePool keeps serving.
async fn specs_that_cannot_be_sent(backend: Backend) {
    let bed = Bed::start(backend).await;
    let mut spec = gcp_spec(-1, VERSION);
    spec["platform"]["gcp"]["zones"] = json!(["europe-west2"]);
    let mut bad = np(1, spec);
    bad["name"] = json!("workers-euw2-a12");
    let (pulse, requests) = counted(&bed, bed.nodepool(&bad)).await;
    assert_conditions(&pulse, &all_false("InvalidNodePoolSpec"));
    assert_says(
        &pulse,
        "Applied",
        &["platform.gcp.zones", "replicas", "name", "nothing was sent"],
    );
    assert_eq!(requests, (0, 0), "{backend:?}");

    bed.control_plane_ready().await;
    let against = |edit: &dyn Fn(&mut Value)| {
        let mut spec = gcp_spec(3, VERSION);
        edit(&mut spec);
        np(1, spec)
    };
    let cases: [(&str, Value, &str); 3] = [
        (
            "a zone of another region",
            against(&|s| s["platform"]["gcp"]["zones"] = json!(["us-east1-b"])),
            "\"us-east1-b\" is not in the cluster's region europe-west2",
        ),
        (
            "a release newer than the control plane",
            against(&|s| s["release"]["image"] = json!(release_image("4.18.0"))),
            "4.18.0 is newer than the control plane, which runs 4.17.0",
        ),
        (
            "a release too far behind",
            against(&|s| s["release"]["image"] = json!(release_image("4.13.0"))),
            "more than 3 minor versions older than the control plane's 4.17.0",
        ),
    ];
    for (case, object, says) in cases {
        let (pulse, requests) = counted(&bed, bed.nodepool(&object)).await;
        assert_conditions(&pulse, &all_false("InvalidNodePoolSpec"));
        assert_says(&pulse, "Applied", &[says]);
        assert_eq!(requests, (2, 0), "{backend:?}: {case}");
    }
    assert!(bed.stored().is_none());

    let first = np(1, gcp_spec(3, VERSION));
    assert_conditions(&bed.nodepool(&first).await, &CREATED);
    bed.node_pool(&NodePoolStatus::gcp_ready(3, VERSION)).await;
    let mut spec = gcp_spec(3, VERSION);
    spec["platform"]["gcp"]["zones"] = json!(["us-east1-b"]);
    let (refused, requests) = counted(&bed, bed.nodepool(&np(2, spec))).await;
    // The refusal reaches HyperFleet: False at the refused generation (an Unknown would be
    // discarded by rule 13); the message says the NodePool of generation 1 still serves.
    assert_conditions(&refused, &all_false("InvalidNodePoolSpec"));
    assert_observed_generation(&refused, 2);
    assert_says(
        &refused,
        "Available",
        &["NodePool of generation 1 on the management cluster: Available=True (NodePoolReady)"],
    );
    assert_says(
        &refused,
        "Applied",
        &["Generation 2 was not sent", "platform.gcp.zones"],
    );
    assert_eq!(requests, (2, 0), "{backend:?}");
    assert_eq!(bed.stored_generation(), "1");
}

/// Generation bumps update the work: more replicas, autoscaling, a release upgrade within the
/// supported skew. Each update pulse reads both works and publishes once; until the agent
/// applies it the Job reports the new generation as not yet available (Available False
/// `Updating`, saying what runs).
async fn generation_bumps_update_the_work(backend: Backend) {
    let bed = Bed::start(backend).await;
    let older = "4.16.3";
    let first = a_ready_node_pool(&bed, older).await;
    assert_eq!(first["generation"], 1);

    let five = np(2, gcp_spec(5, older));
    let (updated, requests) = counted(&bed, bed.nodepool(&five)).await;
    assert_conditions(
        &updated,
        &[
            ("Applied", "True", "ManifestWorkUpdated"),
            ("Available", "False", "Updating"),
            ("Health", "True", "NoIssues"),
        ],
    );
    assert_says(
        &updated,
        "Available",
        &["NodePool of generation 1", "NodePoolReady"],
    );
    assert_eq!(requests, (2, 1), "{backend:?}");
    assert_observed_generation(&updated, 2);
    assert_eq!(bed.stored_generation(), "2");
    assert_eq!(bed.stored_node_pool()["spec"]["replicas"], 5);

    // The agent applies the scale (the NodePool's metadata.generation 1 → 2); the HyperShift
    // operator has not reconciled it: its status (Ready, 3 of 3) still describes generation 1.
    // Not available at generation 2 whatever that status says (issue 23), on either backend.
    let agent = bed.agent(&np_work()).await;
    assert!(agent.apply(&np_work()));
    assert_eq!(agent.resource(&np_work()).unwrap().object_generation(), 2);
    let (lagging, requests) = counted(&bed, bed.nodepool(&five)).await;
    assert_conditions(&lagging, &applied(("False", "AwaitingOperator"), NO_ISSUES));
    assert_says(
        &lagging,
        "Available",
        &[
            "is not yet observed by the HyperShift operator",
            "the object is at metadata.generation 2",
            "its status describes generation 1",
        ],
    );
    assert_observed_generation(&lagging, 2);
    assert_eq!(requests, (1, 0), "{backend:?}");

    let scaling = NodePoolStatus::gcp_ready(5, older).with_available(3).set(
        "Ready",
        "False",
        "WaitingForAvailableMachines",
        "",
    );
    bed.node_pool(&scaling).await;
    let (pulse, requests) = counted(&bed, bed.nodepool(&five)).await;
    assert_conditions(&pulse, &applied(("False", "Scaling"), NO_ISSUES));
    assert_says(&pulse, "Available", &["3 of 5 replicas available"]);
    assert_data(
        &pulse,
        &[
            ("desired_replicas", json!(5)),
            ("current_replicas", json!(3)),
        ],
    );
    assert_observed_generation(&pulse, 2);
    assert_eq!(requests, (1, 0), "{backend:?}");

    let mut spec = gcp_spec(5, older);
    spec.as_object_mut().unwrap().remove("replicas");
    spec["autoscaling"] = json!({"enabled": true, "minNodes": 2, "maxNodes": 6});
    let autoscaled = np(3, spec);
    let (pulse, requests) = counted(&bed, bed.nodepool(&autoscaled)).await;
    assert_eq!(
        pulse.conditions()[0].2,
        "ManifestWorkUpdated",
        "{}",
        pulse.explain()
    );
    assert_eq!(requests, (2, 1), "{backend:?}");
    let pool = bed.stored_node_pool();
    assert_eq!(pool["spec"]["autoScaling"], json!({"min": 2, "max": 6}));
    assert!(pool["spec"].get("replicas").is_none(), "{pool}");
    let autoscaling =
        NodePoolStatus::gcp_ready(5, older).set("AutoscalingEnabled", "True", "AsExpected", "");
    bed.node_pool(&autoscaling).await;
    let pulse = bed.nodepool(&autoscaled).await;
    assert_conditions(&pulse, &READY);
    assert_says(&pulse, "Available", &["autoscaling 2–6"]);
    assert_data(
        &pulse,
        &[
            ("desired_replicas", Value::Null),
            ("autoscaling_min", json!(2)),
            ("autoscaling_max", json!(6)),
            ("current_replicas", json!(5)),
        ],
    );

    let mut spec = autoscaled["spec"].clone();
    spec["release"]["image"] = json!(release_image(VERSION));
    let upgraded = np(4, spec);
    let (pulse, requests) = counted(&bed, bed.nodepool(&upgraded)).await;
    assert_eq!(
        pulse.conditions()[0].2,
        "ManifestWorkUpdated",
        "{}",
        pulse.explain()
    );
    assert_eq!(requests, (2, 1), "{backend:?}");
    assert_eq!(
        bed.stored_node_pool()["spec"]["release"]["image"],
        release_image(VERSION)
    );
    let rolling = autoscaling
        .clone()
        .with_nodes(&[(older, 3, 0), (VERSION, 2, 0)])
        .set(
            "UpdatingVersion",
            "True",
            "AsExpected",
            "Updating version in progress. Target version: 4.17.0",
        );
    bed.node_pool(&rolling).await;
    let pulse = bed.nodepool(&upgraded).await;
    // Ready, but not at generation 4's release yet: Available False `Updating`.
    assert_conditions(&pulse, &applied(("False", "Updating"), NO_ISSUES));
    assert_says(
        &pulse,
        "Available",
        &["rolling out a version update", "Target version: 4.17.0"],
    );
    assert_observed_generation(&pulse, 4);
    // A hub feeds back the first `nodesInfo.nodeVersions` entry only (docs/controlplane.md,
    // "Status feedback on a hub").
    let ready_nodes = match backend {
        Backend::Maestro => 5,
        Backend::Hub => 3,
    };
    assert_data(
        &pulse,
        &[
            ("version", json!(older)),
            ("ready_nodes", json!(ready_nodes)),
        ],
    );
    bed.node_pool(
        &autoscaling
            .with_version(VERSION)
            .with_nodes(&[(VERSION, 5, 0)]),
    )
    .await;
    let pulse = bed.nodepool(&upgraded).await;
    assert_conditions(&pulse, &READY);
    assert_data(&pulse, &[("version", json!(VERSION))]);
    assert_observed_generation(&pulse, 4);
}

/// What a newer or older generation must not do: an immutable field change and a pulse older
/// than the work send nothing, and neither does an update while the control plane is not
/// available; the running NodePool's Available stays on the Job.
async fn what_a_generation_must_not_send(backend: Backend) {
    let bed = Bed::start(backend).await;
    a_ready_node_pool(&bed, VERSION).await;
    let second = np(2, gcp_spec(4, VERSION));
    assert_eq!(
        bed.nodepool(&second).await.conditions()[0].2,
        "ManifestWorkUpdated"
    );
    bed.node_pool(&NodePoolStatus::gcp_ready(4, VERSION)).await;

    let (stale, requests) = counted(&bed, bed.nodepool(&np(1, gcp_spec(3, VERSION)))).await;
    assert_conditions(
        &stale,
        &[
            ("Applied", "True", "StaleGeneration"),
            ("Available", "True", "NodePoolReady"),
            ("Health", "True", "NoIssues"),
        ],
    );
    assert_says(
        &stale,
        "Applied",
        &["generation 1, older than generation 2"],
    );
    assert_observed_generation(&stale, 2);
    assert_eq!(requests, (1, 0), "{backend:?}");
    assert_eq!(bed.stored_node_pool()["spec"]["replicas"], 4);

    let mut spec = gcp_spec(4, VERSION);
    spec["arch"] = json!("arm64");
    spec["management"] = json!({"upgradeType": "InPlace"});
    let (immutable, requests) = counted(&bed, bed.nodepool(&np(3, spec))).await;
    assert_conditions(
        &immutable,
        &[
            ("Applied", "False", "ImmutableFieldChanged"),
            ("Available", "False", "ImmutableFieldChanged"),
            ("Health", "False", "ImmutableFieldChanged"),
        ],
    );
    assert_says(
        &immutable,
        "Applied",
        &[
            "nothing was sent",
            r#"arch (NodePool spec.arch): "amd64" → "arm64""#,
            r#"management.upgradeType (NodePool spec.management.upgradeType): "Replace" → "InPlace""#,
        ],
    );
    // The refusal is stored by HyperFleet only at the refused generation.
    assert_observed_generation(&immutable, 3);
    // One read: the change needs a person whatever the control plane does, so it is not read.
    assert_eq!(requests, (1, 0), "{backend:?}");
    assert_eq!(bed.stored_generation(), "2");

    // The control plane stops being available: a newer generation waits.
    bed.hosted_cluster(Stage::Progressing).await;
    let fourth = np(4, gcp_spec(6, VERSION));
    let (waiting, requests) = counted(&bed, bed.nodepool(&fourth)).await;
    assert_conditions(
        &waiting,
        &[
            ("Applied", "False", "WaitingForControlPlane"),
            ("Available", "False", "WaitingForControlPlane"),
            ("Health", "True", "NoIssues"),
        ],
    );
    assert_says(
        &waiting,
        "Applied",
        &["Generation 4 was not sent", "keeps the spec it has"],
    );
    assert_eq!(requests, (2, 0), "{backend:?}");
    assert_observed_generation(&waiting, 4);
    bed.hosted_cluster(Stage::Ready).await;
    let (sent, requests) = counted(&bed, bed.nodepool(&fourth)).await;
    assert_eq!(
        sent.conditions()[0].2,
        "ManifestWorkUpdated",
        "{}",
        sent.explain()
    );
    assert_eq!(requests, (2, 1), "{backend:?}");
    assert_eq!(bed.stored_node_pool()["spec"]["replicas"], 6);
}

/// A work of the NodePool's name that another owner labelled is never touched, neither updated
/// nor deleted.
async fn someone_elses_work_is_left_alone(backend: Backend) {
    let bed = Bed::start(backend).await;
    let other = "019a6f2b-8d13-7a64-b5c2-000000000002";
    let foreign = json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": np_work(), "namespace": CONSUMER,
                     "labels": {"hyperfleet.io/cluster-id": CLUSTER_ID,
                                "hyperfleet.io/nodepool-id": other,
                                "hyperfleet.io/adapter": "nodepool"}},
        "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "x", "namespace": "default"}, "data": {}}]}}
    });
    match &bed.agent {
        Agent::Maestro(maestro) => {
            use hypershift_adapter::work::WorkClient;
            use hypershift_adapter::work::maestro::{MaestroConfig, MaestroWorkClient};
            let config = MaestroConfig::new(
                maestro.grpc_url(),
                maestro.rest_url(),
                hypershift_adapter::work::backend::DEFAULT_SOURCE_ID,
                CONSUMER,
            );
            MaestroWorkClient::new(config)
                .unwrap()
                .create(&foreign)
                .await
                .unwrap();
        }
        Agent::Hub(_) => {
            bed.server.put_object(WORKS, Some(CONSUMER), foreign);
        }
    }
    let first = np(1, gcp_spec(3, VERSION));
    let (pulse, requests) = counted(&bed, bed.nodepool(&first)).await;
    assert_conditions(&pulse, &all_false("OwnershipConflict"));
    assert_says(
        &pulse,
        "Applied",
        &[&format!("hyperfleet.io/nodepool-id={other}")],
    );
    assert_eq!(requests, (1, 0), "{backend:?}");

    let (deleting, requests) =
        counted(&bed, bed.nodepool(&deleted(1, gcp_spec(3, VERSION), 1))).await;
    let mut want = all_false("OwnershipConflict").to_vec();
    want.push(("Finalized", "False", "OwnershipConflict"));
    assert_conditions(&deleting, &want);
    assert_eq!(requests, (1, 0), "{backend:?}");
    assert!(bed.stored().is_some());
}

const DELETION_REQUESTED: [(&str, &str, &str); 4] = [
    ("Applied", "True", "DeletionRequested"),
    ("Available", "False", "Deleting"),
    ("Health", "True", "NoIssues"),
    ("Finalized", "False", "DeletionRequested"),
];

const CLEANUP_CONFIRMED: [(&str, &str, &str); 4] = [
    ("Applied", "False", "CleanupConfirmed"),
    ("Available", "False", "Deleted"),
    ("Health", "True", "NoIssues"),
    ("Finalized", "True", "CleanupConfirmed"),
];

/// The cluster is deleted with its NodePool (a cascaded soft delete): the control plane waits
/// for it (`NodePoolsExist`); the NodePool's pulse deletes its work once, the NodePool's
/// finalizer holds it (Maestro), then it is gone and every later pulse says `Finalized=True`
/// without sending anything; once HyperFleet removes the NodePool, the control plane's deletion
/// goes ahead.
async fn a_deletion_goes_to_finalized_and_frees_the_control_plane(backend: Backend) {
    let bed = Bed::start(backend).await;
    a_ready_node_pool(&bed, VERSION).await;
    let deleted_time = jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap()
        .to_string();
    let mut gone = np(1, gcp_spec(3, VERSION));
    soft_delete(&mut gone, &deleted_time);
    let doomed = cluster(CP_GENERATION + 1, Some(&deleted_time));

    let held = bed.controlplane(&doomed, std::slice::from_ref(&gone)).await;
    assert_eq!(
        held.conditions(),
        triples(&[
            ("Applied", "False", "NodePoolsExist"),
            ("Available", "False", "NodePoolsExist"),
            ("Health", "True", "NoIssues"),
            ("Finalized", "False", "NodePoolsExist"),
        ]),
        "{}",
        held.explain()
    );
    assert_says(
        &held,
        "Applied",
        &[&format!("{LONGEST_NODEPOOL_NAME} ({NODEPOOL_ID}")],
    );

    if backend == Backend::Maestro {
        assert!(
            bed.maestro()
                .hold_delete(&np_work(), &[HYPERSHIFT_FINALIZER])
        );
    }
    let (requested, requests) = counted(&bed, bed.nodepool(&gone)).await;
    assert_conditions(&requested, &DELETION_REQUESTED);
    assert_says(
        &requested,
        "Applied",
        &[&format!(
            "Deletion of ManifestWork {} on management cluster {CONSUMER} requested by this pulse",
            np_work()
        )],
    );
    assert_says(
        &requested,
        "Available",
        &[&format!("deleted in HyperFleet at {deleted_time}")],
    );
    assert_eq!(requests, (1, 1), "{backend:?}");
    assert_observed_generation(&requested, 2);
    assert_data(
        &requested,
        &[
            ("desired_replicas", Value::Null),
            ("current_replicas", json!(0)),
        ],
    );

    if let Agent::Maestro(maestro) = &bed.agent {
        // The agent reports the work deleting; the finalizer holds it. Nothing is sent again.
        assert!(maestro.apply(&np_work()));
        let (again, requests) = counted(&bed, bed.nodepool(&gone)).await;
        assert_conditions(&again, &DELETION_REQUESTED);
        assert_says(&again, "Applied", &["was requested; it is still there"]);
        assert_eq!(requests, (1, 0), "{backend:?}");
        assert!(maestro.release_delete(&np_work()));
    }
    for _ in 0..2 {
        let (done, requests) = counted(&bed, bed.nodepool(&gone)).await;
        assert_conditions(&done, &CLEANUP_CONFIRMED);
        assert_says(
            &done,
            "Finalized",
            &[&format!(
                "NodePool clusters/{} and ManifestWork {} are gone from management cluster {CONSUMER}",
                np_name(),
                np_work()
            )],
        );
        assert_eq!(requests, (1, 0), "{backend:?}");
        assert_observed_generation(&done, 2);
    }
    assert!(bed.stored().is_none());

    // HyperFleet hard-deletes the finalized NodePool: the control plane is no longer held.
    let freed = bed.controlplane(&doomed, &[]).await;
    assert_eq!(
        freed.conditions(),
        triples(&DELETION_REQUESTED),
        "{}",
        freed.explain()
    );
}

/// A deletion that takes longer than the limit: Health says `DeletionStuck` and what holds it
/// (Maestro: the agent feeds nothing back while deleting, so how to read the finalizers; hub:
/// the fed-back finalizer and what HyperShift waits for); a longer limit is not stuck.
async fn a_stuck_deletion_names_what_holds_it(backend: Backend) {
    let bed = Bed::start(backend).await;
    a_ready_node_pool(&bed, VERSION).await;
    let gone = deleted(1, gcp_spec(3, VERSION), 45);
    match &bed.agent {
        Agent::Maestro(maestro) => {
            assert!(maestro.hold_delete(&np_work(), &[HYPERSHIFT_FINALIZER]));
        }
        Agent::Hub(_) => {
            // An earlier pulse's DELETE is held by the agent's finalizer on the hub work (the fake
            // API server deletes at once, so the held state is written directly), and the agent
            // feeds back the NodePool's deletionTimestamp and finalizer (assumed as in
            // tests/lifecycle.rs: not recorded).
            let mut work = bed
                .server
                .object(WORKS, "manifestworks", Some(CONSUMER), &np_work())
                .unwrap();
            work["metadata"]["finalizers"] =
                json!(["cluster.open-cluster-management.io/manifest-work-cleanup"]);
            work["metadata"]["deletionTimestamp"] = json!("2026-11-26T10:00:02Z");
            let values =
                &mut work["status"]["resourceStatus"]["manifests"][0]["statusFeedback"]["values"];
            let list = values.as_array_mut().unwrap();
            list.push(json!({"name": "deletionTimestamp", "fieldValue": {"type": "String", "string": "2026-11-26T10:00:07Z"}}));
            list.push(json!({"name": "finalizers", "fieldValue": {"type": "JsonRaw", "jsonRaw": json!([HYPERSHIFT_FINALIZER]).to_string()}}));
            bed.server.put_object(WORKS, Some(CONSUMER), work);
            // The hub work stays as the agent left it: no report over it.
            bed.hub_reports.store(false, Ordering::Relaxed);
        }
    }
    let (stuck, requests) = counted(&bed, bed.nodepool(&gone)).await;
    assert_eq!(
        stuck
            .conditions()
            .iter()
            .find(|c| c.0 == "Health")
            .unwrap()
            .2,
        "DeletionStuck",
        "{}",
        stuck.explain()
    );
    match backend {
        Backend::Maestro => {
            assert_conditions(
                &stuck,
                &[
                    ("Applied", "True", "DeletionRequested"),
                    ("Available", "False", "Deleting"),
                    ("Health", "False", "DeletionStuck"),
                    ("Finalized", "False", "DeletionRequested"),
                ],
            );
            assert_says(
                &stuck,
                "Health",
                &[
                    &format!("kubectl get nodepool -n clusters {}", np_name()),
                    HYPERSHIFT_FINALIZER,
                    "all its Machines are gone",
                ],
            );
            assert_eq!(requests, (1, 1), "{backend:?}: one delete");
        }
        Backend::Hub => {
            assert_conditions(
                &stuck,
                &[
                    ("Applied", "True", "DeletionRequested"),
                    ("Available", "False", "Deleting"),
                    ("Health", "False", "DeletionStuck"),
                    ("Finalized", "False", "FinalizersRunning"),
                ],
            );
            assert_says(
                &stuck,
                "Finalized",
                &[HYPERSHIFT_FINALIZER, "2026-11-26T10:00:07Z"],
            );
            assert_says(
                &stuck,
                "Health",
                &[
                    &format!(
                        "NodePool clusters/{} on management cluster {CONSUMER} still has finalizers",
                        np_name()
                    ),
                    "all its Machines are gone",
                ],
            );
            assert_eq!(requests, (1, 0), "{backend:?}: already being deleted");
        }
    }
    let patient = bed
        .nodepool_with(&gone, &[("DELETION_STUCK_AFTER", "2h")])
        .await;
    assert_eq!(
        patient
            .conditions()
            .iter()
            .find(|c| c.0 == "Health")
            .unwrap()
            .2,
        "NoIssues",
        "{}",
        patient.explain()
    );
}

/// A NodePool deleted before its work was ever created: nothing to delete, finalized at once.
async fn a_node_pool_deleted_before_its_work_is_finalized_at_once(backend: Backend) {
    let bed = Bed::start(backend).await;
    let (pulse, requests) = counted(&bed, bed.nodepool(&deleted(1, gcp_spec(3, VERSION), 1))).await;
    assert_conditions(&pulse, &CLEANUP_CONFIRMED);
    assert_eq!(requests, (1, 0), "{backend:?}");
    assert_observed_generation(&pulse, 2);
}

/// A NodePool pulse while its cluster's control plane is being deleted sends nothing: the gate
/// holds (Maestro keeps the deleting work until its agent finishes; the fake hub API server
/// removes a deleted work at once, so there it is gone).
async fn a_node_pool_of_a_deleting_cluster_waits(backend: Backend) {
    let bed = Bed::start(backend).await;
    bed.control_plane_ready().await;
    let now = jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap()
        .to_string();
    let doomed = bed
        .controlplane(&cluster(CP_GENERATION + 1, Some(&now)), &[])
        .await;
    assert_eq!(
        doomed.conditions(),
        triples(&DELETION_REQUESTED),
        "{}",
        doomed.explain()
    );
    let (pulse, requests) = counted(&bed, bed.nodepool(&np(1, gcp_spec(3, VERSION)))).await;
    assert_conditions(&pulse, &WAITING);
    let why = match backend {
        Backend::Maestro => format!(
            "the cluster's control plane (ManifestWork {} on management cluster {CONSUMER}) is being deleted",
            cp_work()
        ),
        Backend::Hub => format!("ManifestWork {} does not exist", cp_work()),
    };
    assert_says(&pulse, "Applied", &[&why]);
    assert_eq!(requests, (2, 0), "{backend:?}");
    assert!(bed.stored().is_none());
}

/// Each case as one test per backend: `maestro::<case>` and `hub::<case>`.
macro_rules! on_both_backends {
    ($($name:ident => $case:expr;)*) => {
        mod maestro {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    ($case)(Backend::Maestro).await;
                }
            )*
        }
        mod hub {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    ($case)(Backend::Hub).await;
                }
            )*
        }
    };
}

on_both_backends! {
    waits_for_the_control_plane_then_creates_the_node_pool => waits_for_the_control_plane_then_creates;
    a_gcp_node_pool_is_followed_from_provisioning_to_ready => a_gcp_node_pool_from_provisioning_to_ready;
    health_names_what_needs_a_person_with_the_node_pools_words => health_names_what_needs_a_person;
    a_none_node_pool_is_ready_once_its_payload_is_generated => a_none_node_pool_is_ready_with_its_payload;
    the_agents_reports_reach_the_job => what_the_agent_reports;
    a_missing_namespace_is_apply_failed_with_the_agents_words => a_missing_namespace_fails_with_the_agents_words;
    invalid_or_unfitting_specs_send_nothing => specs_that_cannot_be_sent;
    generation_bumps_update_the_work_and_the_job_follows => generation_bumps_update_the_work;
    immutable_stale_and_waiting_generations_send_nothing => what_a_generation_must_not_send;
    someone_elses_work_is_an_ownership_conflict => someone_elses_work_is_left_alone;
    a_deletion_is_finalized_and_frees_the_control_plane => a_deletion_goes_to_finalized_and_frees_the_control_plane;
    a_stuck_deletion_is_reported => a_stuck_deletion_names_what_holds_it;
    a_node_pool_without_a_work_is_finalized_at_once => a_node_pool_deleted_before_its_work_is_finalized_at_once;
    a_node_pool_of_a_cluster_being_deleted_waits => a_node_pool_of_a_deleting_cluster_waits;
}

/// Maestro unreachable: after the retry budget the Job says `MaestroUnavailable`; the REST URL
/// at the gRPC port is a setting to fix (`AdapterMisconfigured`), reported without retrying.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maestro_down_and_a_wrong_maestro_url_are_reported() {
    let bed = Bed::start(Backend::Maestro).await;
    let first = np(1, gcp_spec(3, VERSION));
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let down = bed
        .nodepool_with(
            &first,
            &[
                ("MAESTRO_API_URL", &closed),
                ("MAESTRO_GRPC_URL", &closed),
                ("RETRY_BUDGET_SECONDS", "2"),
            ],
        )
        .await;
    assert_conditions(&down, &error_row("MaestroUnavailable"));
    assert_says(&down, "Applied", &["attempts"]);
    assert_observed_generation(&down, 1);

    let Agent::Maestro(maestro) = &bed.agent else {
        unreachable!()
    };
    let (wrong, requests) = counted(
        &bed,
        bed.nodepool_with(
            &first,
            &[
                ("MAESTRO_API_URL", &maestro.grpc_url()),
                ("RETRY_BUDGET_SECONDS", "30"),
            ],
        ),
    )
    .await;
    assert_conditions(&wrong, &error_row("AdapterMisconfigured"));
    assert_says(
        &wrong,
        "Applied",
        &[
            &format!("MAESTRO_API_URL {}", maestro.grpc_url()),
            "does not answer HTTP/1.1",
        ],
    );
    assert!(
        !wrong.adapter_log.contains("retrying"),
        "{}",
        wrong.adapter_log
    );
    assert_eq!(requests.1, 0);
}

/// The NodePool read as the Job reads it: `GET …/clusters/{cid}/nodepools/{nid}` of the HyperFleet
/// API with a bearer token, its generation the object's; a PATCH is the next generation. Asked
/// under another cluster the API answers 404 and the Job says `NodePoolSpecUnavailable` without a
/// work request; so does a refused token, which never reaches the logs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_pool_is_read_from_the_hyperfleet_api() {
    use testbed::local_pulse::hyperfleet_api::FakeHyperfleetApi;

    let bed = Bed::start(Backend::Maestro).await;
    let token = "hf-s3cr3t-token";
    let api = FakeHyperfleetApi::start(cluster(CP_GENERATION, None), token)
        .await
        .unwrap();
    api.set_nodepools(vec![np(1, gcp_spec(3, VERSION))]);
    let token_file = bed.dir.path().join("hf-token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let env = |cluster_id: &str| {
        pairs(&[
            ("HYPERFLEET_API_URL", api.url()),
            (
                "HYPERFLEET_API_TOKEN_FILE",
                &token_file.display().to_string(),
            ),
            ("CLUSTER_ID", cluster_id),
            ("NODEPOOL_ID", NODEPOOL_ID),
        ])
    };

    let waiting = bed.nodepool_pulse(1, &env(CLUSTER_ID)).await;
    assert_conditions(&waiting, &WAITING);
    assert_observed_generation(&waiting, 1);
    bed.control_plane_ready().await;
    assert_conditions(&bed.nodepool_pulse(1, &env(CLUSTER_ID)).await, &CREATED);
    assert_eq!(bed.stored_node_pool()["spec"]["replicas"], 3);

    assert_eq!(
        api.patch_nodepool_spec(NODEPOOL_ID, &json!({"replicas": 5})),
        Some(2)
    );
    let updated = bed.nodepool_pulse(2, &env(CLUSTER_ID)).await;
    assert_eq!(
        updated.conditions()[0].2,
        "ManifestWorkUpdated",
        "{}",
        updated.explain()
    );
    assert_eq!(bed.stored_node_pool()["spec"]["replicas"], 5);
    assert_eq!(bed.stored_generation(), "2");

    let other = testbed::ids::cluster_id(7);
    let (elsewhere, requests) = counted(&bed, bed.nodepool_pulse(2, &env(&other))).await;
    assert_conditions(&elsewhere, &error_row("NodePoolSpecUnavailable"));
    assert_says(
        &elsewhere,
        "Applied",
        &[
            &format!("/clusters/{other}/nodepools/{NODEPOOL_ID}"),
            "404",
            "HYPERFLEET-NTF-001",
        ],
    );
    assert_eq!(requests, (0, 0));

    std::fs::write(&token_file, "not-the-token").unwrap();
    let refused = bed.nodepool_pulse(2, &env(CLUSTER_ID)).await;
    assert_conditions(&refused, &error_row("NodePoolSpecUnavailable"));
    assert_says(&refused, "Applied", &["401"]);
    for pulse in [&waiting, &updated, &refused] {
        assert!(!pulse.adapter_log.contains(token), "token in the log");
        assert!(
            !pulse.adapter_log.contains("not-the-token"),
            "token in the log"
        );
        assert!(!pulse.job.to_string().contains(token), "token on the Job");
    }
}
