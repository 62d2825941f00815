//! The NodePool condition table, row by row, through [`super::run`] with an in-memory backend
//! holding the control plane's work and the NodePool's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::type_complexity)]

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use clap::Parser;
use job_report::ConditionStatus::{self, False, True, Unknown};
use job_report::Report;
use serde_json::{Value, json};

use super::*;
use crate::hyperfleet::cluster::fixture as cluster_fixture;
use crate::hyperfleet::nodepool::NodePoolInput;
use crate::hyperfleet::nodepool::fixture::{CLUSTER_ID, ID, NAME, raw};
use crate::work::{ManifestStatus, ResourceIdentity, WorkClient, WorkCondition, WorkError};

const NOW: &str = "2026-11-26T12:00:00Z";
const CP_WORK: &str = "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
const NP_WORK: &str = "nodepool-01a01e83-2b42-79c4-a5e8-d17b3a6f0c41";
const NP_NAME: &str = "workers-europe2-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";

/// An in-memory backend: works by name, scripted failures, a call log.
#[derive(Default)]
struct FakeWorks {
    stored: Mutex<BTreeMap<String, ExistingWork>>,
    get_failures: Mutex<VecDeque<WorkError>>,
    calls: Mutex<Vec<String>>,
    created: Mutex<Vec<Value>>,
    updated: Mutex<Vec<Value>>,
    deleted: Mutex<Vec<String>>,
    race: Mutex<Option<(&'static str, ExistingWork)>>,
}

impl FakeWorks {
    fn with(works: impl IntoIterator<Item = (&'static str, ExistingWork)>) -> Self {
        let fake = FakeWorks::default();
        fake.stored
            .lock()
            .unwrap()
            .extend(works.into_iter().map(|(k, v)| (k.to_owned(), v)));
        fake
    }
    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }
}

impl FakeWorks {
    /// Makes `create` fail with AlreadyExists after storing `work` under `name`, as if another
    /// writer had created it first.
    fn race_create_with(self, name: &'static str, work: ExistingWork) -> Self {
        *self.race.lock().unwrap() = Some((name, work));
        self
    }
}

impl WorkClient for FakeWorks {
    type On<'a> = &'a Self;

    fn on(&self, _: &crate::work::WorkAt) -> &Self {
        self
    }

    async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
        self.calls.lock().unwrap().push(format!("get {name}"));
        if let Some(e) = self.get_failures.lock().unwrap().pop_front() {
            return Err(e);
        }
        Ok(self.stored.lock().unwrap().get(name).cloned())
    }
    async fn create(&self, work: &Value) -> Result<(), WorkError> {
        let name = work["metadata"]["name"].as_str().unwrap().to_owned();
        self.calls.lock().unwrap().push(format!("create {name}"));
        if let Some((key, existing)) = self.race.lock().unwrap().take() {
            self.stored.lock().unwrap().insert(key.to_owned(), existing);
            return Err(WorkError::AlreadyExists {
                message: "exists".into(),
            });
        }
        self.created.lock().unwrap().push(work.clone());
        Ok(())
    }
    async fn update(&self, work: &Value, current: &ExistingWork) -> Result<(), WorkError> {
        let name = work["metadata"]["name"].as_str().unwrap().to_owned();
        self.calls.lock().unwrap().push(format!("update {name}"));
        let stored = self.stored.lock().unwrap();
        let existing = stored.get(&name).ok_or_else(|| WorkError::NotFound {
            message: "no such work".into(),
        })?;
        if existing.version != current.version {
            return Err(WorkError::Conflict {
                message: "stale version".into(),
            });
        }
        self.updated.lock().unwrap().push(work.clone());
        Ok(())
    }
    async fn delete(&self, name: &str) -> Result<(), WorkError> {
        self.calls.lock().unwrap().push(format!("delete {name}"));
        self.deleted.lock().unwrap().push(name.to_owned());
        Ok(())
    }
}

fn args(extra: &[&str]) -> Args {
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }
    let mut argv = vec![
        "x",
        "--consumer",
        "mgmt-1",
        "--nodepool-spec",
        "/unused.json",
        "--maestro-api-url",
        "http://r",
        "--maestro-grpc-url",
        "http://g",
    ];
    argv.extend(extra);
    Cli::try_parse_from(argv).unwrap().args
}

fn input(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> NodePoolInput {
    let mut spec = raw();
    edit(&mut spec);
    NodePoolInput::from_value(json!({
        "id": ID,
        "name": NAME,
        "generation": 2,
        "owner_references": {"id": CLUSTER_ID, "kind": "Cluster", "href": "/x"},
        "spec": spec,
    }))
    .unwrap()
}

fn now() -> jiff::Timestamp {
    NOW.parse().unwrap()
}

/// [`super::run`], with the pulse recorded in the oracle ([`crate::testing`]).
async fn run(
    args: &Args,
    work: &impl WorkClient,
    input: NodePoolInput,
    now: jiff::Timestamp,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<Report, ConfigError> {
    let log = crate::testing::Log::start();
    let recorded = crate::testing::Recorded::new(work);
    let result = super::run(args, &recorded, input, now, shutdown).await;
    let outcome = result.as_ref().map_err(ToString::to_string);
    crate::testing::check("nodepool", outcome, &recorded.requests(), &log);
    result
}

async fn never() {
    std::future::pending::<()>().await;
}

fn condition(type_: &str, status: &str) -> WorkCondition {
    WorkCondition {
        type_: type_.into(),
        status: status.into(),
        reason: format!("{type_}Reason"),
        message: format!("{type_} says {status}"),
        last_transition_time: "2026-11-26T11:00:00Z".into(),
        ..Default::default()
    }
}

/// A manifest the agent applied and feeds `status` back for.
fn manifest(
    group: &str,
    kind: &str,
    resource: &str,
    name: &str,
    status: Option<Value>,
) -> ManifestStatus {
    ManifestStatus {
        resource: ResourceIdentity {
            group: group.into(),
            kind: kind.into(),
            resource: resource.into(),
            namespace: "clusters".into(),
            name: name.into(),
            ..Default::default()
        },
        conditions: ["Applied", "Available", "StatusFeedbackSynced"]
            .into_iter()
            .map(|t| condition(t, "True"))
            .collect(),
        values: status
            .map(|s| BTreeMap::from([("status".to_owned(), s)]))
            .unwrap_or_default(),
    }
}

/// The control plane's work as the controlplane adapter builds it, with the HostedCluster's status
/// `hc_status` fed back.
fn control_plane(hc_status: Option<Value>) -> ExistingWork {
    // As the controlplane adapter ships it: the Namespace, then the HostedCluster.
    let hc = crate::hypershift::hostedcluster::hosted_cluster(&cluster_fixture::spec());
    let work =
        json!({"spec": {"workload": {"manifests": [manifestwork::namespace("clusters"), hc]}}});
    ExistingWork {
        labels: BTreeMap::from([
            ("hyperfleet.io/cluster-id".into(), CLUSTER_ID.into()),
            ("hyperfleet.io/adapter".into(), "controlplane".into()),
        ]),
        annotations: BTreeMap::from([("hyperfleet.io/generation".into(), "1".into())]),
        workload: work["spec"]["workload"]["manifests"]
            .as_array()
            .unwrap()
            .clone(),
        manifests: vec![manifest(
            "hypershift.openshift.io",
            "HostedCluster",
            "hostedclusters",
            "prod-eu-1",
            hc_status,
        )],
        version: Some(1),
        ..Default::default()
    }
}

fn hc_available(version: &str) -> Value {
    json!({
        "conditions": [{"type": "Available", "status": "True", "reason": "AsExpected", "message": "ok"}],
        "version": {"history": [{"state": "Completed", "version": version}]},
    })
}

fn available_control_plane() -> ExistingWork {
    control_plane(Some(hc_available("4.17.0")))
}

/// The NodePool's work as this adapter builds it from `spec`, at `generation`, with `status` fed
/// back.
fn node_pool_work(
    edit: impl FnOnce(&mut serde_json::Map<String, Value>),
    generation: i64,
    status: Option<Value>,
) -> ExistingWork {
    let spec = crate::hyperfleet::nodepool::fixture::spec_with(edit);
    let placement = Placement {
        namespace: "clusters",
        cluster_name: "prod-eu-1",
        default_subnet: Some("hcp-psc-subnet"),
        region: Some("europe-west2"),
        release_image: Some("quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"),
    };
    let work = manifest_work(&spec, &placement, "mgmt-1", Some(generation));
    ExistingWork {
        labels: BTreeMap::from([
            ("hyperfleet.io/cluster-id".into(), CLUSTER_ID.into()),
            ("hyperfleet.io/nodepool-id".into(), ID.into()),
            ("hyperfleet.io/adapter".into(), "nodepool".into()),
        ]),
        annotations: BTreeMap::from([("hyperfleet.io/generation".into(), generation.to_string())]),
        workload: work["spec"]["workload"]["manifests"]
            .as_array()
            .unwrap()
            .clone(),
        manifests: vec![manifest(
            "hypershift.openshift.io",
            "NodePool",
            "nodepools",
            NP_NAME,
            status,
        )],
        version: Some(generation),
        ..Default::default()
    }
}

fn ready_status(replicas: i64) -> Value {
    json!({
        "replicas": replicas,
        "version": "4.17.0",
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "AsExpected", "message": "", "lastTransitionTime": "2026-11-26T11:00:00Z"},
            {"type": "AllMachinesReady", "status": "True", "reason": "AsExpected", "message": "", "lastTransitionTime": "2026-11-26T11:00:00Z"},
        ],
        "nodesInfo": {"nodeVersions": [{"ocpVersion": "4.17.0", "kubeletVersion": "v1.30.4", "readyNodeCount": 3, "unreadyNodeCount": 0}]},
    })
}

type Row = [(&'static str, ConditionStatus, &'static str); 3];

fn rows(report: &Report) -> Vec<(&str, ConditionStatus, &str)> {
    report
        .conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.status, c.reason.as_str()))
        .collect()
}

/// Every report passes the contract and carries every `data` key.
#[track_caller]
fn valid(report: &Report) {
    job_report::validate(report).unwrap();
    assert_eq!(report.adapter.as_deref(), Some(ADAPTER_NAME));
    let data = report.data.as_ref().unwrap();
    for key in [
        DATA_DESIRED_REPLICAS,
        DATA_CURRENT_REPLICAS,
        DATA_AUTOSCALING_MIN,
        DATA_AUTOSCALING_MAX,
        DATA_VERSION,
        DATA_NODE_VERSIONS,
        DATA_READY_NODES,
        DATA_UNREADY_NODES,
    ] {
        assert!(data.contains_key(key), "{key} missing in {data:?}");
    }
}

async fn pulse(fake: &FakeWorks, input: NodePoolInput) -> Report {
    pulse_with(fake, input, &[]).await
}

async fn pulse_with(fake: &FakeWorks, input: NodePoolInput, extra: &[&str]) -> Report {
    let report = run(&args(extra), fake, input, now(), never())
        .await
        .unwrap();
    valid(&report);
    report
}

const WAITING: Row = [
    ("Applied", False, WAITING_FOR_CONTROL_PLANE),
    ("Available", False, WAITING_FOR_CONTROL_PLANE),
    ("Health", True, "NoIssues"),
];

#[tokio::test(start_paused = true)]
async fn without_a_control_plane_nothing_is_sent() {
    let fake = FakeWorks::default();
    let report = pulse(&fake, input(|_| {})).await;
    assert_eq!(rows(&report), WAITING);
    assert!(
        report.conditions[0].message.contains(CP_WORK),
        "{}",
        report.conditions[0].message
    );
    assert_eq!(
        fake.calls(),
        [format!("get {NP_WORK}"), format!("get {CP_WORK}")]
    );
    assert_eq!(report.observed_generation, Some(2));
    assert_eq!(report.data.as_ref().unwrap()[DATA_DESIRED_REPLICAS], 3);
}

#[tokio::test(start_paused = true)]
async fn a_control_plane_that_is_not_available_holds_the_node_pool() {
    let cases: [(&str, ExistingWork, &str); 5] = [
        ("no status yet", control_plane(None), "AwaitingFeedback"),
        (
            "provisioning",
            control_plane(Some(
                json!({"conditions": [{"type": "Available", "status": "False", "reason": "WaitingForAvailable", "message": "etcd"}]}),
            )),
            "Available=False (WaitingForAvailable): etcd",
        ),
        (
            "deleting",
            ExistingWork {
                deleting: Some("2026-11-26T11:00:00Z".into()),
                ..available_control_plane()
            },
            "is being deleted",
        ),
        (
            "someone else's",
            ExistingWork {
                labels: BTreeMap::from([("hyperfleet.io/adapter".into(), "other".into())]),
                ..available_control_plane()
            },
            "hyperfleet.io/adapter=other",
        ),
        (
            "no HostedCluster",
            ExistingWork {
                workload: vec![],
                ..available_control_plane()
            },
            "carries no HostedCluster",
        ),
    ];
    for (case, cp, words) in cases {
        let fake = FakeWorks::with([(CP_WORK, cp)]);
        let report = pulse(&fake, input(|_| {})).await;
        assert_eq!(rows(&report), WAITING, "{case}");
        let message = &report.conditions[0].message;
        assert!(message.contains(words), "{case}: {message}");
        assert!(fake.created.lock().unwrap().is_empty(), "{case}");
    }
}

#[tokio::test(start_paused = true)]
async fn an_available_control_plane_gets_its_node_pool() {
    let fake = FakeWorks::with([(CP_WORK, available_control_plane())]);
    let report = pulse(&fake, input(|_| {})).await;
    assert_eq!(
        rows(&report),
        [
            ("Applied", True, "ManifestWorkCreated"),
            ("Available", False, "Provisioning"),
            ("Health", True, "NoIssues"),
        ]
    );
    assert_eq!(
        fake.calls(),
        [
            format!("get {NP_WORK}"),
            format!("get {CP_WORK}"),
            format!("create {NP_WORK}"),
        ]
    );
    let created = fake.created.lock().unwrap()[0].clone();
    assert_eq!(created["metadata"]["namespace"], "mgmt-1");
    assert_eq!(
        created["metadata"]["annotations"]["hyperfleet.io/generation"],
        "2"
    );
    assert_eq!(
        created["metadata"]["labels"]["hyperfleet.io/nodepool-id"],
        ID
    );
    let np = &created["spec"]["workload"]["manifests"][0];
    assert_eq!(np["metadata"]["namespace"], "clusters");
    assert_eq!(np["metadata"]["name"], NP_NAME);
    assert_eq!(np["spec"]["clusterName"], "prod-eu-1");
    // The HostedCluster's Private Service Connect subnet, as the upstream CLI defaults it.
    assert_eq!(np["spec"]["platform"]["gcp"]["subnet"], "hcp-psc-subnet");
    assert_eq!(report.observed_generation, Some(2));
    let data = report.data.as_ref().unwrap();
    assert_eq!(data[DATA_DESIRED_REPLICAS], 3);
    assert_eq!(data[DATA_CURRENT_REPLICAS], 0);
    assert_eq!(data[DATA_AUTOSCALING_MIN], Value::Null);
}

#[tokio::test(start_paused = true)]
async fn what_the_hosted_cluster_does_not_allow_is_refused_by_field() {
    let cases: [(
        &str,
        Box<dyn Fn(&mut serde_json::Map<String, Value>)>,
        ExistingWork,
        &str,
    ); 3] = [
        (
            "zone outside the region",
            Box::new(|s| {
                s["platform"]["gcp"]["zone"] = json!("us-central1-a");
            }),
            available_control_plane(),
            "platform.gcp.zone",
        ),
        (
            "newer than the control plane",
            Box::new(|s| {
                s["release"]["image"] =
                    json!("quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64");
            }),
            available_control_plane(),
            "release.image",
        ),
        (
            "older than the skew allows",
            Box::new(|_| {}),
            control_plane(Some(hc_available("4.21.0"))),
            "release.image",
        ),
    ];
    for (case, edit, cp, field) in cases {
        let fake = FakeWorks::with([(CP_WORK, cp)]);
        let report = pulse(&fake, input(|s| edit(s))).await;
        assert_eq!(
            rows(&report),
            [
                ("Applied", False, INVALID_NODE_POOL_SPEC),
                ("Available", False, INVALID_NODE_POOL_SPEC),
                ("Health", False, INVALID_NODE_POOL_SPEC),
            ],
            "{case}"
        );
        assert!(
            report.conditions[0].message.contains(field),
            "{case}: {}",
            report.conditions[0].message
        );
        assert!(fake.created.lock().unwrap().is_empty(), "{case}");
    }
}

#[tokio::test(start_paused = true)]
async fn an_invalid_spec_sends_nothing_and_reads_nothing() {
    let fake = FakeWorks::default();
    let report = pulse(
        &fake,
        input(|s| {
            s.remove("replicas");
            s["platform"]["gcp"]["boot_disk_size_gb"] = json!(8);
        }),
    )
    .await;
    let applied = report.condition("Applied").unwrap();
    assert_eq!(applied.reason, INVALID_NODE_POOL_SPEC);
    assert!(applied.message.contains("replicas"), "{}", applied.message);
    assert!(
        applied.message.contains("platform.gcp.boot_disk_size_gb"),
        "{}",
        applied.message
    );
    assert!(fake.calls().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_found_node_pool_reports_its_status_with_one_read() {
    let fake = FakeWorks::with([(NP_WORK, node_pool_work(|_| {}, 2, Some(ready_status(3))))]);
    let report = pulse(&fake, input(|_| {})).await;
    assert_eq!(
        rows(&report),
        [
            ("Applied", True, "ManifestWorkApplied"),
            ("Available", True, "NodePoolReady"),
            ("Health", True, "NoIssues"),
        ]
    );
    assert_eq!(fake.calls(), [format!("get {NP_WORK}")]);
    let data = report.data.as_ref().unwrap();
    assert_eq!(data[DATA_CURRENT_REPLICAS], 3);
    assert_eq!(data[DATA_VERSION], "4.17.0");
    assert_eq!(data[DATA_READY_NODES], 3);
    assert_eq!(
        data[DATA_NODE_VERSIONS],
        json!([{"ocp_version": "4.17.0", "kubelet_version": "v1.30.4", "ready_nodes": 3, "unready_nodes": 0}])
    );
}

#[tokio::test(start_paused = true)]
async fn the_agents_view_comes_first() {
    let mut missing = node_pool_work(|_| {}, 2, Some(ready_status(3)));
    missing.manifests[0].conditions[1] = condition("Available", "False");
    let mut not_synced = node_pool_work(|_| {}, 2, Some(ready_status(3)));
    not_synced.manifests[0].conditions[2] = condition("StatusFeedbackSynced", "False");
    let mut apply_failed = node_pool_work(|_| {}, 2, None);
    apply_failed.manifests[0].conditions[0] = condition("Applied", "False");
    let cases: [(&str, ExistingWork, Row); 5] = [
        (
            "no feedback",
            node_pool_work(|_| {}, 2, None),
            [
                ("Applied", True, "ManifestWorkExists"),
                ("Available", False, "AwaitingFeedback"),
                ("Health", True, "NoIssues"),
            ],
        ),
        (
            "missing",
            missing,
            [
                ("Applied", True, "ManifestWorkApplied"),
                ("Available", False, NODE_POOL_MISSING),
                ("Health", False, NODE_POOL_MISSING),
            ],
        ),
        (
            "not synced",
            not_synced,
            [
                ("Applied", True, "ManifestWorkApplied"),
                ("Available", Unknown, "FeedbackNotSynced"),
                ("Health", Unknown, "FeedbackNotSynced"),
            ],
        ),
        (
            "apply failed",
            apply_failed,
            [
                ("Applied", False, "ApplyFailed"),
                ("Available", False, "ApplyFailed"),
                ("Health", False, "ApplyFailed"),
            ],
        ),
        (
            "not a NodePool status",
            node_pool_work(|_| {}, 2, Some(json!("not json"))),
            [
                ("Applied", True, "ManifestWorkExists"),
                ("Available", Unknown, "InvalidFeedback"),
                ("Health", Unknown, "InvalidFeedback"),
            ],
        ),
    ];
    for (case, work, row) in cases {
        let fake = FakeWorks::with([(NP_WORK, work)]);
        let report = pulse(&fake, input(|_| {})).await;
        assert_eq!(rows(&report), row, "{case}");
    }
}

#[tokio::test(start_paused = true)]
async fn gcp_and_none_status_rows() {
    let progressing = json!({"replicas": 0, "conditions": [
        {"type": "Ready", "status": "False", "reason": "WaitingForNodeRef", "message": "0 of 3"},
        {"type": "AllMachinesReady", "status": "False", "reason": "Creating", "message": "creating", "lastTransitionTime": "2026-11-26T11:58:00Z"}]});
    let stuck = json!({"replicas": 0, "conditions": [
        {"type": "Ready", "status": "False", "reason": "WaitingForNodeRef", "message": "0 of 3"},
        {"type": "AllMachinesReady", "status": "False", "reason": "QuotaExceeded", "message": "CPUS quota", "lastTransitionTime": "2026-11-26T11:00:00Z"}]});
    let scaling = json!({"replicas": 1, "conditions": [{"type": "Ready", "status": "False", "reason": "x", "message": "1 of 3"}]});
    let updating = json!({"replicas": 2, "conditions": [
        {"type": "Ready", "status": "False", "reason": "x", "message": ""},
        {"type": "UpdatingVersion", "status": "True", "reason": "AsExpected", "message": "4.17.0 to 4.17.1"}]});
    let not_ready = json!({"replicas": 3, "conditions": [{"type": "Ready", "status": "False", "reason": "TooManyUnhealthy", "message": "2 unhealthy"}]});
    let refused = json!({"replicas": 3, "conditions": [
        {"type": "Ready", "status": "True", "reason": "AsExpected"},
        {"type": "ValidMachineConfig", "status": "False", "reason": "ValidationFailed", "message": "bad MachineConfig"}]});
    let skew = json!({"replicas": 3, "conditions": [
        {"type": "Ready", "status": "True", "reason": "AsExpected"},
        {"type": "SupportedVersionSkew", "status": "False", "reason": "UnsupportedSkew", "message": "too old"}]});
    let cidr = json!({"replicas": 3, "conditions": [
        {"type": "Ready", "status": "True", "reason": "AsExpected"},
        {"type": "ClusterNetworkCIDRConflict", "status": "True", "reason": "CIDRConflict", "message": "10.132.0.5"}]});
    let paused = json!({"replicas": 3, "conditions": [
        {"type": "Ready", "status": "True", "reason": "AsExpected"},
        {"type": "ReconciliationActive", "status": "False", "reason": "ReconciliationPaused", "message": "paused"}]});
    let cases: [(
        &str,
        Value,
        (ConditionStatus, &str),
        (ConditionStatus, &str),
    ); 9] = [
        (
            "progressing",
            progressing,
            (False, "Provisioning"),
            (True, "NoIssues"),
        ),
        (
            "stuck",
            stuck,
            (False, "Provisioning"),
            (False, "MachinesStuck"),
        ),
        ("scaling", scaling, (False, "Scaling"), (True, "NoIssues")),
        (
            "updating",
            updating,
            (False, "Updating"),
            (True, "NoIssues"),
        ),
        (
            "not ready",
            not_ready,
            (False, "NotReady"),
            (True, "NoIssues"),
        ),
        (
            "refused",
            refused,
            (True, "NodePoolReady"),
            (False, "ValidationFailed"),
        ),
        (
            "skew",
            skew,
            (True, "NodePoolReady"),
            (False, "UnsupportedVersionSkew"),
        ),
        (
            "cidr",
            cidr,
            (True, "NodePoolReady"),
            (False, "ClusterNetworkCIDRConflict"),
        ),
        (
            "paused",
            paused,
            (True, "NodePoolReady"),
            (False, "ReconciliationPaused"),
        ),
    ];
    for (case, status, available, health) in cases {
        let fake = FakeWorks::with([(NP_WORK, node_pool_work(|_| {}, 2, Some(status)))]);
        let report = pulse(&fake, input(|_| {})).await;
        let a = report.condition("Available").unwrap();
        let h = report.condition("Health").unwrap();
        assert_eq!(
            (a.status, a.reason.as_str()),
            available,
            "{case}: {}",
            a.message
        );
        assert_eq!(
            (h.status, h.reason.as_str()),
            health,
            "{case}: {}",
            h.message
        );
    }
    let none = |s: &mut serde_json::Map<String, Value>| {
        s.insert("platform".into(), json!({"type": "none"}));
    };
    let payload = json!({"replicas": 0, "version": "4.17.0", "conditions": [
        {"type": "ValidGeneratedPayload", "status": "True", "reason": "AsExpected"},
        {"type": "AllMachinesReady", "status": "False", "reason": "NotFound", "message": "No Machines are created", "lastTransitionTime": "2026-11-26T08:00:00Z"}]});
    let fake = FakeWorks::with([(NP_WORK, node_pool_work(none, 2, Some(payload)))]);
    let report = pulse(&fake, input(none)).await;
    assert_eq!(
        rows(&report),
        [
            ("Applied", True, "ManifestWorkApplied"),
            ("Available", True, "NodePoolReady"),
            ("Health", True, "NoIssues"),
        ]
    );
    // The machines-stuck limit is a flag.
    let stuck = json!({"replicas": 0, "conditions": [
        {"type": "AllMachinesReady", "status": "False", "reason": "QuotaExceeded", "message": "CPUS quota", "lastTransitionTime": "2026-11-26T11:00:00Z"}]});
    let fake = FakeWorks::with([(NP_WORK, node_pool_work(|_| {}, 2, Some(stuck)))]);
    let report = pulse_with(&fake, input(|_| {}), &["--machines-stuck-after", "2h"]).await;
    assert_eq!(report.condition("Health").unwrap().reason, "NoIssues");
}

#[tokio::test(start_paused = true)]
async fn someone_elses_work_is_left_alone() {
    let mut theirs = node_pool_work(|_| {}, 2, None);
    theirs
        .labels
        .insert("hyperfleet.io/nodepool-id".into(), "other".into());
    let fake = FakeWorks::with([(NP_WORK, theirs)]);
    let report = pulse(&fake, input(|_| {})).await;
    assert_eq!(
        rows(&report),
        [
            ("Applied", False, "OwnershipConflict"),
            ("Available", False, "OwnershipConflict"),
            ("Health", False, "OwnershipConflict"),
        ]
    );
    assert!(
        report.conditions[0]
            .message
            .contains("hyperfleet.io/nodepool-id=other"),
        "{}",
        report.conditions[0].message
    );
    assert_eq!(fake.calls(), [format!("get {NP_WORK}")]);
}

#[tokio::test(start_paused = true)]
async fn a_newer_generation_scales_the_running_node_pool() {
    let fake = FakeWorks::with([
        (NP_WORK, node_pool_work(|_| {}, 1, Some(ready_status(3)))),
        (CP_WORK, available_control_plane()),
    ]);
    let report = pulse(&fake, input(|s| s["replicas"] = json!(5))).await;
    assert_eq!(
        rows(&report),
        [
            ("Applied", True, "ManifestWorkUpdated"),
            ("Available", False, "Updating"),
            ("Health", True, "NoIssues"),
        ]
    );
    // HyperFleet must not count generation 2 as reconciled from the old NodePool's status: the
    // report describes generation 2 as not yet reflected, and says what runs meanwhile.
    assert_eq!(report.observed_generation, Some(2));
    let available = &report.condition("Available").unwrap().message;
    assert!(
        available.contains("NodePool of generation 1") && available.contains("NodePoolReady"),
        "{available}"
    );
    let updated = fake.updated.lock().unwrap()[0].clone();
    assert_eq!(
        updated["spec"]["workload"]["manifests"][0]["spec"]["replicas"],
        5
    );
    assert_eq!(
        updated["metadata"]["annotations"]["hyperfleet.io/generation"],
        "2"
    );
    assert_eq!(
        fake.calls(),
        [
            format!("get {NP_WORK}"),
            format!("get {CP_WORK}"),
            format!("update {NP_WORK}")
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn an_immutable_change_is_refused_with_the_field_named() {
    let fake = FakeWorks::with([
        (NP_WORK, node_pool_work(|_| {}, 1, Some(ready_status(3)))),
        (CP_WORK, available_control_plane()),
    ]);
    let report = pulse(
        &fake,
        input(|s| {
            s.insert("arch".into(), json!("arm64"));
            s.insert("management".into(), json!({"upgrade_type": "InPlace"}));
        }),
    )
    .await;
    assert_eq!(
        rows(&report),
        [
            ("Applied", False, "ImmutableFieldChanged"),
            ("Available", False, "ImmutableFieldChanged"),
            ("Health", False, "ImmutableFieldChanged"),
        ]
    );
    let message = &report.conditions[0].message;
    assert!(
        message.contains(r#"arch (NodePool spec.arch): "amd64" → "arm64""#),
        "{message}"
    );
    assert!(message.contains("management.upgrade_type"), "{message}");
    assert!(fake.updated.lock().unwrap().is_empty());
    // The refusal is reported at the refused generation, so that HyperFleet stores it.
    assert_eq!(report.observed_generation, Some(2));
    // Said without reading the control plane: it could not make the change possible.
    assert_eq!(fake.calls(), [format!("get {NP_WORK}")]);
    let unavailable =
        FakeWorks::with([(NP_WORK, node_pool_work(|_| {}, 1, Some(ready_status(3))))]);
    let report = pulse(
        &unavailable,
        input(|s| {
            s.insert("arch".into(), json!("arm64"));
        }),
    )
    .await;
    assert_eq!(report.conditions[0].reason, "ImmutableFieldChanged");
}

#[tokio::test(start_paused = true)]
async fn a_newer_generation_waits_for_the_control_plane_and_keeps_the_running_status() {
    let fake = FakeWorks::with([
        (NP_WORK, node_pool_work(|_| {}, 1, Some(ready_status(3)))),
        (CP_WORK, control_plane(None)),
    ]);
    let report = pulse(&fake, input(|s| s["replicas"] = json!(5))).await;
    assert_eq!(
        rows(&report),
        [
            ("Applied", False, WAITING_FOR_CONTROL_PLANE),
            ("Available", False, WAITING_FOR_CONTROL_PLANE),
            ("Health", True, "NoIssues"),
        ]
    );
    // Generation 2 is not reflected (not even sent); the running NodePool is named.
    assert_eq!(report.observed_generation, Some(2));
    assert!(report.condition("Available").unwrap().message.contains(
        "NodePool of generation 1 on the management cluster: Available=True (NodePoolReady)"
    ));
    assert!(fake.updated.lock().unwrap().is_empty());
    // A release the control plane does not run yet is refused, and the NodePool keeps running.
    let fake = FakeWorks::with([
        (NP_WORK, node_pool_work(|_| {}, 1, Some(ready_status(3)))),
        (CP_WORK, available_control_plane()),
    ]);
    let report = pulse(
        &fake,
        input(|s| {
            s["release"]["image"] = json!("quay.io/openshift-release-dev/ocp-release:4.17.5-x86_64")
        }),
    )
    .await;
    assert_eq!(
        rows(&report),
        [
            ("Applied", False, INVALID_NODE_POOL_SPEC),
            ("Available", False, INVALID_NODE_POOL_SPEC),
            ("Health", False, INVALID_NODE_POOL_SPEC),
        ]
    );
    // The refusal reaches HyperFleet at the refused generation (an Unknown would be discarded).
    assert_eq!(report.observed_generation, Some(2));
    assert!(fake.updated.lock().unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_older_generation_never_rolls_back() {
    let fake = FakeWorks::with([(NP_WORK, node_pool_work(|_| {}, 3, Some(ready_status(3))))]);
    let report = pulse(&fake, input(|s| s["replicas"] = json!(1))).await;
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "StaleGeneration"
    );
    assert_eq!(report.observed_generation, Some(3));
    assert_eq!(fake.calls(), [format!("get {NP_WORK}")]);
}

fn deleting(mut input: NodePoolInput, at: &str) -> NodePoolInput {
    input.deleted_time = Some(at.to_owned());
    input.generation = Some(3);
    input
}

#[tokio::test(start_paused = true)]
async fn deletion_requests_then_waits_then_confirms() {
    let fake = FakeWorks::with([(NP_WORK, node_pool_work(|_| {}, 2, Some(ready_status(3))))]);
    let report = pulse(&fake, deleting(input(|_| {}), "2026-11-26T11:50:00Z")).await;
    assert_eq!(
        rows(&report),
        [
            ("Applied", True, "DeletionRequested"),
            ("Available", False, "Deleting"),
            ("Health", True, "NoIssues"),
            ("Finalized", False, "DeletionRequested"),
        ]
    );
    assert_eq!(report.observed_generation, Some(3));
    assert_eq!(*fake.deleted.lock().unwrap(), [NP_WORK]);

    // Deleting, the NodePool's finalizer fed back: no second delete.
    let mut held = node_pool_work(|_| {}, 2, Some(ready_status(3)));
    held.deleting = Some("2026-11-26T11:51:00Z".into());
    held.manifests[0]
        .values
        .insert("deletionTimestamp".into(), json!("2026-11-26T11:51:00Z"));
    held.manifests[0].values.insert(
        "finalizers".into(),
        json!(["hypershift.openshift.io/finalizer"]),
    );
    let fake = FakeWorks::with([(NP_WORK, held.clone())]);
    let report = pulse(&fake, deleting(input(|_| {}), "2026-11-26T11:50:00Z")).await;
    assert_eq!(report.conditions[3].reason, "FinalizersRunning");
    assert!(fake.deleted.lock().unwrap().is_empty());

    // Stuck after --deletion-stuck-after: Health names the finalizer and what holds it.
    let fake = FakeWorks::with([(NP_WORK, held)]);
    let report = pulse(&fake, deleting(input(|_| {}), "2026-11-26T11:00:00Z")).await;
    let health = report.condition("Health").unwrap();
    assert_eq!(
        (health.status, health.reason.as_str()),
        (False, "DeletionStuck")
    );
    assert!(health.message.contains("Machines"), "{}", health.message);

    // Gone: Finalized=True, and Available is never Unknown.
    let fake = FakeWorks::default();
    let report = pulse(&fake, deleting(input(|_| {}), "2026-11-26T11:50:00Z")).await;
    assert_eq!(
        rows(&report),
        [
            ("Applied", False, "CleanupConfirmed"),
            ("Available", False, "Deleted"),
            ("Health", True, "NoIssues"),
            ("Finalized", True, "CleanupConfirmed"),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_deletion_never_deletes_someone_elses_work_nor_claims_finalized() {
    let mut theirs = node_pool_work(|_| {}, 2, None);
    theirs
        .labels
        .insert("hyperfleet.io/adapter".into(), "other".into());
    let fake = FakeWorks::with([(NP_WORK, theirs)]);
    let report = pulse(&fake, deleting(input(|_| {}), "2026-11-26T11:50:00Z")).await;
    assert_eq!(report.conditions[0].reason, "OwnershipConflict");
    assert_eq!(
        (
            report.conditions[3].status,
            report.conditions[3].reason.as_str()
        ),
        (False, "OwnershipConflict")
    );
    assert!(fake.deleted.lock().unwrap().is_empty());
    // A deleted NodePool's spec is not validated: a spec that became invalid cannot hold it.
    let fake = FakeWorks::default();
    let report = pulse(
        &fake,
        deleting(
            input(|s| {
                s.remove("replicas");
            }),
            "2026-11-26T11:50:00Z",
        ),
    )
    .await;
    assert_eq!(report.conditions[3].reason, "CleanupConfirmed");
}

#[tokio::test(start_paused = true)]
async fn the_backend_failing_is_reported_with_finalized_while_deleting() {
    let fake = FakeWorks::default();
    fake.get_failures
        .lock()
        .unwrap()
        .extend([WorkError::Forbidden {
            message: "403".into(),
        }]);
    let report = pulse(&fake, deleting(input(|_| {}), "2026-11-26T11:50:00Z")).await;
    assert_eq!(
        rows(&report),
        [
            ("Applied", False, "MaestroAuthFailed"),
            ("Available", Unknown, "MaestroAuthFailed"),
            ("Health", False, "MaestroAuthFailed"),
            ("Finalized", False, "MaestroAuthFailed"),
        ]
    );
    let fake = FakeWorks::default();
    fake.get_failures
        .lock()
        .unwrap()
        .extend([WorkError::ConsumerNotFound {
            message: "x".into(),
        }]);
    let report = pulse(&fake, input(|_| {})).await;
    assert_eq!(report.conditions[0].reason, "ConsumerNotFound");
    assert!(
        report.conditions[0]
            .message
            .contains("NodePool cannot be placed"),
        "{}",
        report.conditions[0].message
    );
    for (error, reason) in [
        (
            WorkError::Internal {
                message: "database is locked".into(),
            },
            "ManifestWorkFailed",
        ),
        (
            WorkError::Config {
                message: "cannot read MAESTRO_CA_FILE".into(),
            },
            "AdapterMisconfigured",
        ),
    ] {
        let fake = FakeWorks::default();
        fake.get_failures.lock().unwrap().push_back(error);
        let report = pulse(&fake, input(|_| {})).await;
        assert_eq!(
            rows(&report),
            [
                ("Applied", False, reason),
                ("Available", Unknown, reason),
                ("Health", False, reason),
            ]
        );
    }
}

#[tokio::test(start_paused = true)]
async fn transient_failures_past_the_budget_are_maestro_unavailable() {
    let fake = FakeWorks::default();
    fake.get_failures
        .lock()
        .unwrap()
        .extend((0..100).map(|_| WorkError::Unavailable {
            message: "connection refused".into(),
        }));
    let start = tokio::time::Instant::now();
    let report = pulse_with(&fake, input(|_| {}), &["--retry-budget", "10"]).await;
    assert!(start.elapsed() <= Duration::from_secs(10));
    assert_eq!(report.conditions[0].reason, "MaestroUnavailable");
    assert!(
        report.conditions[0]
            .message
            .contains("MAESTRO_API_URL http://r"),
        "{}",
        report.conditions[0].message
    );
}

/// With `--backend hub` every backend failure is reported in the hub's words, naming the hub
/// kubeconfig; Maestro's reasons and wording are for the Maestro backend only.
#[tokio::test(start_paused = true)]
async fn the_hub_backend_fails_in_its_own_words() {
    let hub = [
        "--backend",
        "hub",
        "--kubeconfig",
        "/var/run/secrets/hub/kubeconfig",
    ];
    for (error, reason, says) in [
        (
            WorkError::Unauthenticated {
                message: "GET manifestwork mgmt-1/x on hub https://hub.example.com:6443: HTTP 401: Unauthorized".into(),
            },
            "HubAuthFailed",
            "manifestworks (work.open-cluster-management.io) in namespace mgmt-1",
        ),
        (
            WorkError::Forbidden {
                message: "HTTP 403".into(),
            },
            "HubAuthFailed",
            "KUBECONFIG=/var/run/secrets/hub/kubeconfig",
        ),
        (
            WorkError::ConsumerNotFound {
                message: "namespace \"mgmt-1\" does not exist on the hub".into(),
            },
            "HubNamespaceNotFound",
            "the NodePool cannot be placed. MANAGEMENT_CLUSTER_CONSUMER must name a managed cluster registered with the hub",
        ),
        (
            WorkError::Internal {
                message: "HTTP 418".into(),
            },
            "ManifestWorkFailed",
            "on the OCM hub: backend error: HTTP 418",
        ),
    ] {
        let fake = FakeWorks::default();
        fake.get_failures.lock().unwrap().push_back(error);
        let report = pulse_with(&fake, input(|_| {}), &hub).await;
        assert_eq!(
            rows(&report),
            [
                ("Applied", False, reason),
                ("Available", Unknown, reason),
                ("Health", False, reason),
            ]
        );
        let message = &report.conditions[0].message;
        assert!(message.contains(says), "{reason}: {message}");
        assert!(!message.contains("Maestro"), "{reason}: {message}");
    }
    let fake = FakeWorks::default();
    fake.get_failures.lock().unwrap().extend((0..100).map(|_| {
        WorkError::Unavailable {
            message:
                "GET manifestwork mgmt-1/x on hub https://hub.example.com:6443: connection refused"
                    .into(),
        }
    }));
    let report = pulse_with(
        &fake,
        input(|_| {}),
        &[hub.as_slice(), &["--retry-budget", "10"]].concat(),
    )
    .await;
    assert_eq!(report.conditions[0].reason, "HubUnavailable");
    let message = &report.conditions[0].message;
    assert!(
        message.contains("on hub https://hub.example.com:6443")
            && message.contains("KUBECONFIG=/var/run/secrets/hub/kubeconfig")
            && !message.contains("Maestro"),
        "{message}"
    );
}

#[tokio::test(start_paused = true)]
async fn ids_come_from_the_flags_or_the_object_and_must_agree() {
    let fake = FakeWorks::default();
    let err = run(
        &args(&["--nodepool-id", "other"]),
        &fake,
        input(|_| {}),
        now(),
        never(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, ConfigError::Mismatch { field: "id", .. }),
        "{err}"
    );
    let err = run(
        &args(&["--cluster-id", "other"]),
        &fake,
        input(|_| {}),
        now(),
        never(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("owner_references.id"), "{err}");
    let bare = NodePoolInput::from_value(Value::Object(raw())).unwrap();
    let err = run(&args(&[]), &fake, bare.clone(), now(), never())
        .await
        .unwrap_err();
    assert!(matches!(err, ConfigError::Missing { .. }), "{err}");
    // A bare spec with both ids still needs the NodePool's name.
    let report = run(
        &args(&["--nodepool-id", ID, "--cluster-id", CLUSTER_ID]),
        &fake,
        bare,
        now(),
        never(),
    )
    .await
    .unwrap();
    assert_eq!(report.conditions[0].reason, INVALID_NODE_POOL_SPEC);
    assert!(
        report.conditions[0].message.contains("name: is required"),
        "{}",
        report.conditions[0].message
    );
}

#[test]
fn report_snapshots() {
    let work = WorkRef {
        consumer: "us-east-mgmt-01",
        name: NP_WORK,
    };
    let desired = desired_of(&crate::hyperfleet::nodepool::fixture::spec());
    insta::assert_json_snapshot!("report_created", report_created(work, &desired, Some(1)));
    let status: NodePoolStatus = serde_json::from_value(ready_status(3)).unwrap();
    let clock = MachinesClock {
        now: now(),
        stuck_after: Duration::from_secs(900),
    };
    insta::assert_json_snapshot!(
        "report_ready",
        report_status(work, &status, &desired, clock, Some(2))
    );
}

#[tokio::test(start_paused = true)]
async fn a_create_race_reads_the_work_and_checks_whose_it_is() {
    let fake = FakeWorks::with([(CP_WORK, available_control_plane())])
        .race_create_with(NP_WORK, node_pool_work(|_| {}, 2, None));
    let report = pulse(&fake, input(|_| {})).await;
    assert_eq!(report.conditions[0].reason, "ManifestWorkExists");
    let mut theirs = node_pool_work(|_| {}, 2, None);
    theirs
        .labels
        .insert("hyperfleet.io/adapter".into(), "other".into());
    let fake =
        FakeWorks::with([(CP_WORK, available_control_plane())]).race_create_with(NP_WORK, theirs);
    let report = pulse(&fake, input(|_| {})).await;
    assert_eq!(report.conditions[0].reason, "OwnershipConflict");
    assert_eq!(
        fake.calls(),
        [
            format!("get {NP_WORK}"),
            format!("get {CP_WORK}"),
            format!("create {NP_WORK}"),
            format!("get {NP_WORK}"),
        ]
    );
}

/// Every row of the NodePool table through the pulse, with the generation it must carry and what
/// its Available may say (docs/report.md "Which generation a report describes"):
/// `observed_generation` = G, the newest of the pulse's (2 here) and the work's; Available True
/// only when the work carries G, the agent applied it and the NodePool is ready with no rollout;
/// Unknown only where the adapter could not observe; False otherwise, refusals included (the API
/// discards an Unknown once the adapter has reported, rule 13, and keeps LastKnownReconciled on a
/// False at a newer generation, generations/b).
#[tokio::test(start_paused = true)]
async fn every_row_obeys_the_generation_rule() {
    let rollout = {
        let mut s = ready_status(3);
        s["conditions"].as_array_mut().unwrap().push(json!(
            {"type": "UpdatingVersion", "status": "True", "reason": "AsExpected", "message": "4.17.0 → 4.17.1", "lastTransitionTime": "2026-11-26T11:00:00Z"}));
        s
    };
    let theirs = {
        let mut w = node_pool_work(|_| {}, 2, None);
        w.labels
            .insert("hyperfleet.io/nodepool-id".into(), "other".into());
        w
    };
    let np = |generation, status| (NP_WORK, node_pool_work(|_| {}, generation, status));
    let fit = |s: &mut serde_json::Map<String, Value>| {
        s["release"]["image"] = json!("quay.io/openshift-release-dev/ocp-release:4.17.5-x86_64");
    };
    let cases: Vec<(&str, FakeWorks, NodePoolInput, i64, ConditionStatus)> = vec![
        (
            "created now",
            FakeWorks::with([(CP_WORK, available_control_plane())]),
            input(|_| {}),
            2,
            False,
        ),
        (
            "waiting for the control plane",
            FakeWorks::default(),
            input(|_| {}),
            2,
            False,
        ),
        (
            "current, ready",
            FakeWorks::with([np(2, Some(ready_status(3)))]),
            input(|_| {}),
            2,
            True,
        ),
        (
            "current, rolling out",
            FakeWorks::with([np(2, Some(rollout))]),
            input(|_| {}),
            2,
            False,
        ),
        (
            "current, no feedback",
            FakeWorks::with([np(2, None)]),
            input(|_| {}),
            2,
            False,
        ),
        (
            "newer, updated",
            FakeWorks::with([
                np(1, Some(ready_status(3))),
                (CP_WORK, available_control_plane()),
            ]),
            input(|s| s["replicas"] = json!(5)),
            2,
            False,
        ),
        (
            "newer, waits for the control plane",
            FakeWorks::with([np(1, Some(ready_status(3)))]),
            input(|s| s["replicas"] = json!(5)),
            2,
            False,
        ),
        (
            "newer, immutable change",
            FakeWorks::with([np(1, Some(ready_status(3)))]),
            input(|s| {
                s.insert("arch".into(), json!("arm64"));
            }),
            2,
            False,
        ),
        (
            "newer, does not fit the HostedCluster",
            FakeWorks::with([
                np(1, Some(ready_status(3))),
                (CP_WORK, available_control_plane()),
            ]),
            input(fit),
            2,
            False,
        ),
        (
            "older pulse, the work's generation ready",
            FakeWorks::with([np(3, Some(ready_status(3)))]),
            input(|_| {}),
            3,
            True,
        ),
        (
            "invalid spec",
            FakeWorks::default(),
            input(|s| {
                s.remove("replicas");
            }),
            2,
            False,
        ),
        (
            "someone else's work",
            FakeWorks::with([(NP_WORK, theirs)]),
            input(|_| {}),
            2,
            False,
        ),
        (
            "deleted, work gone",
            FakeWorks::default(),
            deleting(input(|_| {}), "2026-11-26T11:59:00Z"),
            3,
            False,
        ),
        (
            "deleted, deletion requested",
            FakeWorks::with([np(2, Some(ready_status(3)))]),
            deleting(input(|_| {}), "2026-11-26T11:59:00Z"),
            3,
            False,
        ),
    ];
    for (row, fake, input, generation, want) in cases {
        let report = pulse(&fake, input).await;
        assert_eq!(report.observed_generation, Some(generation), "{row}");
        let available = report.condition("Available").unwrap();
        assert_eq!(available.status, want, "{row}: {}", available.message);
    }
    // Could not observe: Unknown (the API keeps its last conclusion).
    let fake = FakeWorks::default();
    fake.get_failures
        .lock()
        .unwrap()
        .push_back(WorkError::Unauthenticated {
            message: "401 Unauthorized".into(),
        });
    let report = pulse(&fake, input(|_| {})).await;
    assert_eq!(report.observed_generation, Some(2));
    assert_eq!(report.condition("Available").unwrap().status, Unknown);
}

fn hyperfleet_input(spec: Value) -> NodePoolInput {
    NodePoolInput::from_value(json!({
        "id": ID,
        "name": NAME,
        "generation": 1,
        "owner_references": {"id": CLUSTER_ID, "kind": "Cluster", "href": "/x"},
        "spec": spec,
    }))
    .unwrap()
}

/// HyperFleet's minimal NodePool (the model's required keys, its e2e suite's `clusterName`) is
/// created with what the control plane's work says: the HostedCluster's name, a zone of its
/// region, its release image; a `clusterName` of another cluster is refused naming both and
/// nothing is sent.
#[tokio::test(start_paused = true)]
async fn a_hyperfleet_spec_takes_its_defaults_from_the_hosted_cluster() {
    let fake = FakeWorks::with([(CP_WORK, available_control_plane())]);
    let spec =
        json!({"clusterName": "prod-eu-1", "platform": {"type": "gcp", "gcp": {}}, "nodeCount": 2});
    let report = pulse(&fake, hyperfleet_input(spec)).await;
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "ManifestWorkCreated"
    );
    let created = fake.created.lock().unwrap()[0].clone();
    let np = &created["spec"]["workload"]["manifests"][0];
    let hc = crate::hypershift::hostedcluster::hosted_cluster(&cluster_fixture::spec());
    assert_eq!(np["spec"]["clusterName"], hc["metadata"]["name"]);
    assert_eq!(
        np["spec"]["release"]["image"],
        hc["spec"]["release"]["image"]
    );
    let region = hc["spec"]["platform"]["gcp"]["region"].as_str().unwrap();
    assert_eq!(np["spec"]["platform"]["gcp"]["zone"], format!("{region}-a"));
    assert_eq!(
        np["spec"]["platform"]["gcp"]["machineType"],
        "n2-standard-4"
    );
    assert_eq!(np["spec"]["replicas"], 2);

    let fake = FakeWorks::with([(CP_WORK, available_control_plane())]);
    let spec =
        json!({"clusterName": "prod-us-1", "platform": {"type": "gcp", "gcp": {}}, "nodeCount": 2});
    let report = pulse(&fake, hyperfleet_input(spec)).await;
    let applied = report.condition("Applied").unwrap();
    assert_eq!(applied.reason, INVALID_NODE_POOL_SPEC);
    assert!(
        applied.message.contains("clusterName")
            && applied.message.contains("\"prod-us-1\"")
            && applied.message.contains("\"prod-eu-1\""),
        "{}",
        applied.message
    );
    assert!(fake.created.lock().unwrap().is_empty());
}
