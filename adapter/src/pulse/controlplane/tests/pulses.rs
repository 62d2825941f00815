//! The static `controlplane` pulse, row by row, against an in-memory work backend.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use clap::Parser;
use job_report::ConditionStatus;
use serde_json::{Value, json};

use super::*;
use crate::hyperfleet::cluster::fixture::VALID;
use std::time::Duration;

use crate::work::{ExistingWork, WorkError};
use crate::work::{ManifestStatus, ResourceIdentity, WorkCondition};
use tokio::time::Instant;

const ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";

/// [`super::run`], with the pulse recorded in the oracle ([`crate::testing`]).
async fn run(
    args: &Args,
    work: &impl WorkClient,
    cluster: ClusterInput,
    shutdown: impl Future<Output = ()>,
) -> Result<Report, ConfigError> {
    let log = crate::testing::Log::start();
    let recorded = crate::testing::Recorded::new(work);
    let result = super::run(args, &recorded, cluster, shutdown).await;
    let outcome = result.as_ref().map_err(ToString::to_string);
    crate::testing::check("controlplane", outcome, &recorded.requests(), &log);
    result
}

/// [`super::run_with`], with the pulse recorded in the oracle.
async fn run_with(
    args: &Args,
    work: &impl WorkClient,
    cluster: ClusterInput,
    inputs: &PulseInputs,
    shutdown: impl Future<Output = ()>,
) -> Result<Report, ConfigError> {
    let log = crate::testing::Log::start();
    let recorded = crate::testing::Recorded::new(work);
    let result = super::run_with(args, &recorded, cluster, inputs, shutdown).await;
    let outcome = result.as_ref().map_err(ToString::to_string);
    crate::testing::check("controlplane", outcome, &recorded.requests(), &log);
    result
}

/// An in-memory backend: one optional work, scripted failures per verb, a call log.
#[derive(Default)]
struct FakeWork {
    stored: Mutex<Option<ExistingWork>>,
    get_failures: Mutex<VecDeque<WorkError>>,
    create_failures: Mutex<VecDeque<WorkError>>,
    /// Every get fails with this (after the scripted ones).
    get_always: Option<WorkError>,
    /// Calls never answer.
    hang: bool,
    calls: Mutex<Vec<&'static str>>,
    created: Mutex<Vec<Value>>,
    updated: Mutex<Vec<Value>>,
}

impl FakeWork {
    fn with(existing: ExistingWork) -> Self {
        FakeWork {
            stored: Mutex::new(Some(existing)),
            ..Default::default()
        }
    }
    fn fail_gets(self, errors: impl IntoIterator<Item = WorkError>) -> Self {
        self.get_failures.lock().unwrap().extend(errors);
        self
    }
    fn fail_creates(self, errors: impl IntoIterator<Item = WorkError>) -> Self {
        self.create_failures.lock().unwrap().extend(errors);
        self
    }
    fn calls(&self) -> Vec<&'static str> {
        self.calls.lock().unwrap().clone()
    }
}

impl WorkClient for FakeWork {
    type On<'a> = &'a Self;

    fn on(&self, _: &crate::work::WorkAt) -> &Self {
        self
    }

    async fn get(&self, _name: &str) -> Result<Option<ExistingWork>, WorkError> {
        self.calls.lock().unwrap().push("get");
        if self.hang {
            std::future::pending::<()>().await;
        }
        if let Some(e) = self.get_failures.lock().unwrap().pop_front() {
            return Err(e);
        }
        if let Some(e) = &self.get_always {
            return Err(e.clone());
        }
        Ok(self.stored.lock().unwrap().clone())
    }

    async fn create(&self, work: &Value) -> Result<(), WorkError> {
        self.calls.lock().unwrap().push("create");
        if let Some(e) = self.create_failures.lock().unwrap().pop_front() {
            return Err(e);
        }
        self.created.lock().unwrap().push(work.clone());
        Ok(())
    }

    /// Like the real backends: refused while deleting or when `current` is stale; otherwise the
    /// stored work takes the labels, annotations and manifests of `work` and its version bumps.
    async fn update(&self, work: &Value, current: &ExistingWork) -> Result<(), WorkError> {
        self.calls.lock().unwrap().push("update");
        let mut stored = self.stored.lock().unwrap();
        let Some(existing) = stored.as_mut() else {
            return Err(WorkError::NotFound {
                message: "no such work".into(),
            });
        };
        if existing.deleting.is_some() {
            return Err(WorkError::Conflict {
                message: "the resource is under deletion".into(),
            });
        }
        if existing.version != current.version {
            return Err(WorkError::Conflict {
                message: "the resource version is not the latest".into(),
            });
        }
        let map = |key: &str| -> BTreeMap<String, String> {
            serde_json::from_value(work["metadata"][key].clone()).unwrap_or_default()
        };
        existing.labels = map("labels");
        existing.annotations = map("annotations");
        existing.workload = serde_json::from_value(work["spec"]["workload"]["manifests"].clone())
            .unwrap_or_default();
        existing.version = Some(existing.version.unwrap_or(0) + 1);
        self.updated.lock().unwrap().push(work.clone());
        Ok(())
    }

    /// Marks the stored work as deleting (idempotent); `NotFound` without one.
    async fn delete(&self, _name: &str) -> Result<(), WorkError> {
        self.calls.lock().unwrap().push("delete");
        match self.stored.lock().unwrap().as_mut() {
            None => Err(WorkError::NotFound {
                message: "no such work".into(),
            }),
            Some(existing) => {
                existing
                    .deleting
                    .get_or_insert_with(|| "2026-11-26T03:44:21Z".to_owned());
                Ok(())
            }
        }
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
        "--cluster-spec",
        "/unused.json",
        "--maestro-api-url",
        "http://r",
        "--maestro-grpc-url",
        "http://g",
    ];
    argv.extend(extra);
    Cli::try_parse_from(argv).unwrap().args
}

fn cluster() -> ClusterInput {
    ClusterInput::from_json(VALID).unwrap()
}

fn ours() -> ExistingWork {
    ExistingWork {
        labels: BTreeMap::from([
            ("hyperfleet.io/cluster-id".to_owned(), ID.to_owned()),
            (
                "hyperfleet.io/adapter".to_owned(),
                "controlplane".to_owned(),
            ),
        ]),
        // Built by a pulse of the fixture cluster's generation.
        annotations: BTreeMap::from([("hyperfleet.io/generation".to_owned(), "3".to_owned())]),
        ..Default::default()
    }
}

fn with_status(status: Value) -> ExistingWork {
    ExistingWork {
        manifests: vec![ManifestStatus {
            // As the real agent reports a HostedCluster it applied and reads status from.
            conditions: ["Applied", "Available", "StatusFeedbackSynced"]
                .into_iter()
                .map(|t| WorkCondition {
                    type_: t.into(),
                    status: "True".into(),
                    last_transition_time: "2026-11-26T03:36:31Z".into(),
                    ..Default::default()
                })
                .collect(),
            resource: ResourceIdentity {
                group: "hypershift.openshift.io".into(),
                kind: "HostedCluster".into(),
                resource: "hostedclusters".into(),
                namespace: "clusters".into(),
                name: "prod-eu-1".into(),
                ..Default::default()
            },
            values: BTreeMap::from([("status".to_owned(), status)]),
        }],
        ..ours()
    }
}

fn reasons(report: &Report) -> Vec<(&str, ConditionStatus, &str)> {
    report
        .conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.status, c.reason.as_str()))
        .collect()
}

fn unavailable() -> WorkError {
    WorkError::Unavailable {
        message: "connection refused".into(),
    }
}

async fn never() {
    std::future::pending::<()>().await;
}

use ConditionStatus::{False, True, Unknown};

#[tokio::test(start_paused = true)]
async fn missing_work_is_created_with_our_labels_and_generation() {
    let fake = FakeWork::default();
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    assert_eq!(
        reasons(&report),
        [
            ("Applied", True, "ManifestWorkCreated"),
            ("Available", False, "Provisioning"),
            ("Health", True, "NoIssues"),
        ]
    );
    assert_eq!(fake.calls(), ["get", "create"]);
    let created = fake.created.lock().unwrap()[0].clone();
    assert_eq!(created["metadata"]["name"], format!("hostedcluster-{ID}"));
    assert_eq!(created["metadata"]["namespace"], "mgmt-1");
    assert_eq!(
        created["metadata"]["labels"]["hyperfleet.io/cluster-id"],
        ID
    );
    // generation from the cluster object (3) when --generation is absent
    assert_eq!(
        created["metadata"]["annotations"]["hyperfleet.io/generation"],
        "3"
    );
    assert_eq!(report.observed_generation, Some(3));
}

#[tokio::test(start_paused = true)]
async fn flags_override_generation_and_secret_names() {
    let fake = FakeWork::default();
    let report = run(
        &args(&[
            "--generation",
            "7",
            "--pull-secret-name",
            "other-pull-secret",
        ]),
        &fake,
        cluster(),
        never(),
    )
    .await
    .unwrap();
    assert_eq!(report.observed_generation, Some(7));
    let created = fake.created.lock().unwrap()[0].clone();
    assert_eq!(
        created["spec"]["workload"]["manifests"][1]["spec"]["pullSecret"]["name"],
        "other-pull-secret"
    );
}

#[tokio::test(start_paused = true)]
async fn cluster_id_flag_must_match_the_object() {
    let fake = FakeWork::default();
    let err = run(
        &args(&["--cluster-id", "019a6f1f-0d2e-7c3b-a4f5-6e7d8c9b0a1f"]),
        &fake,
        cluster(),
        never(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, ConfigError::ClusterIdMismatch { .. }),
        "{err}"
    );
    let mut bare = cluster();
    bare.id = None;
    let err = run(&args(&[]), &fake, bare, never()).await.unwrap_err();
    assert_eq!(err, ConfigError::NoClusterId);
    assert!(fake.calls().is_empty());
}

#[tokio::test(start_paused = true)]
async fn found_work_reports_its_feedback() {
    let fake = FakeWork::with(with_status(json!({
        "conditions": [
            {"type": "Available", "status": "True", "reason": "AsExpected", "message": ""},
            {"type": "Degraded", "status": "True", "reason": "Broken", "message": "etcd is sad"}
        ],
        "controlPlaneEndpoint": {"host": "api.example.com", "port": 443},
        "version": {"history": [{"state": "Completed", "version": "4.17.0"}]}
    })));
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    assert_eq!(
        reasons(&report),
        [
            ("Applied", True, "ManifestWorkApplied"),
            ("Available", True, "ControlPlaneReady"),
            ("Health", False, "Degraded"),
        ]
    );
    let data = report.data.unwrap();
    assert_eq!(
        data["control_plane_endpoint"],
        "https://api.example.com:443"
    );
    assert_eq!(data["version"], "4.17.0");
    assert_eq!(fake.calls(), ["get"]);
}

#[tokio::test(start_paused = true)]
async fn observed_generation_is_the_generation_the_work_carries() {
    let mut work = with_status(json!({"conditions": []}));
    work.annotations
        .insert("hyperfleet.io/generation".into(), "2".into());
    let fake = FakeWork::with(work.clone());
    // This pulse is for generation 1; the management cluster holds generation 2's spec.
    let report = run(&args(&["--generation", "1"]), &fake, cluster(), never())
        .await
        .unwrap();
    assert_eq!(report.observed_generation, Some(2));
    assert_eq!(fake.calls(), ["get"]);
    // Without the annotation the work holds a spec of no known generation: the pulse brings
    // it to its own and reports that generation, not yet applied.
    work.annotations.clear();
    let fake = FakeWork::with(work);
    let report = run(&args(&["--generation", "5"]), &fake, cluster(), never())
        .await
        .unwrap();
    assert_eq!(report.observed_generation, Some(5));
    assert_eq!(fake.calls(), ["get", "update"]);
    assert_eq!(report.condition("Available").unwrap().status, False);
    // A work created now carries this pulse's generation.
    let fake = FakeWork::default();
    let report = run(&args(&["--generation", "5"]), &fake, cluster(), never())
        .await
        .unwrap();
    assert_eq!(report.observed_generation, Some(5));
}

#[tokio::test(start_paused = true)]
async fn found_work_without_feedback_awaits_it() {
    let fake = FakeWork::with(ours());
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    assert_eq!(
        report.condition("Available").unwrap().reason,
        "AwaitingFeedback"
    );
    assert_eq!(fake.calls(), ["get"]);
}

#[tokio::test(start_paused = true)]
async fn someone_elses_work_is_a_conflict_and_left_alone() {
    let mut theirs = ours();
    theirs
        .labels
        .insert("hyperfleet.io/adapter".into(), "nodepool".into());
    let fake = FakeWork::with(theirs);
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "OwnershipConflict"
    );
    assert!(
        report
            .condition("Applied")
            .unwrap()
            .message
            .contains("nodepool")
    );
    assert_eq!(fake.calls(), ["get"]);
}

#[tokio::test(start_paused = true)]
async fn invalid_spec_sends_nothing_and_names_the_fields() {
    let fake = FakeWork::default();
    let mut input = cluster();
    input
        .spec
        .insert("machine_network_cidr".into(), json!("10.0.0.0/99"));
    input.spec.remove("base_domain");
    let report = run(&args(&[]), &fake, input, never()).await.unwrap();
    let applied = report.condition("Applied").unwrap();
    assert_eq!(applied.reason, "InvalidClusterSpec");
    assert!(
        applied.message.contains("machine_network_cidr"),
        "{}",
        applied.message
    );
    assert!(
        applied.message.contains("base_domain"),
        "{}",
        applied.message
    );
    assert!(fake.calls().is_empty());
}

#[tokio::test(start_paused = true)]
async fn create_race_reads_the_work_again() {
    let fake = FakeWork::default().fail_creates([WorkError::AlreadyExists {
        message: "exists".into(),
    }]);
    let racing = RacingWork { inner: fake };
    let report = run(&args(&[]), &racing, cluster(), never()).await.unwrap();
    assert_eq!(racing.inner.calls(), ["get", "create", "get"]);
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "ManifestWorkExists"
    );
    assert_eq!(
        report.condition("Available").unwrap().reason,
        "AwaitingFeedback"
    );
}

/// Stores our work when `create` fails, as if another writer had created it first.
struct RacingWork {
    inner: FakeWork,
}

impl WorkClient for RacingWork {
    type On<'a> = &'a Self;

    fn on(&self, _: &crate::work::WorkAt) -> &Self {
        self
    }

    async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
        self.inner.get(name).await
    }
    async fn create(&self, work: &Value) -> Result<(), WorkError> {
        let result = self.inner.create(work).await;
        *self.inner.stored.lock().unwrap() = Some(ours());
        result
    }
    async fn update(&self, work: &Value, current: &ExistingWork) -> Result<(), WorkError> {
        self.inner.update(work, current).await
    }
    async fn delete(&self, name: &str) -> Result<(), WorkError> {
        self.inner.delete(name).await
    }
}

#[tokio::test(start_paused = true)]
async fn transient_failures_back_off_exponentially_then_succeed() {
    let fake = FakeWork::default().fail_gets([unavailable(), unavailable(), unavailable()]);
    let start = Instant::now();
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    let waited = start.elapsed();
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "ManifestWorkCreated"
    );
    assert_eq!(fake.calls(), ["get", "get", "get", "get", "create"]);
    // 1 s, 2 s, 4 s, each jittered into [d/2, d].
    assert!(waited >= Duration::from_millis(3500), "{waited:?}");
    assert!(waited <= Duration::from_secs(7), "{waited:?}");
}

#[tokio::test(start_paused = true)]
async fn transient_failures_past_the_budget_report_unavailable_within_it() {
    let fake = FakeWork {
        get_always: Some(unavailable()),
        ..Default::default()
    };
    let start = Instant::now();
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    let waited = start.elapsed();
    assert_eq!(
        reasons(&report),
        [
            ("Applied", False, "MaestroUnavailable"),
            ("Available", Unknown, "MaestroUnavailable"),
            ("Health", False, "MaestroUnavailable"),
        ]
    );
    assert!(
        report
            .condition("Applied")
            .unwrap()
            .message
            .contains("connection refused")
    );
    assert!(waited < Duration::from_secs(120), "{waited:?}");
    // Full delays 1, 2, 4, 8, 16, 32 reach 63 s and the next (60) would pass 120: 7 attempts.
    // Halved delays 0.5 … 16, 30, 30 reach 91.5 s, the next (30) passes: 9 attempts.
    let attempts = fake.calls().len();
    assert!((7..=9).contains(&attempts), "{attempts} attempts");
    assert!(!fake.calls().contains(&"create"));
}

#[tokio::test(start_paused = true)]
async fn a_hanging_backend_is_cut_at_the_budget() {
    let fake = FakeWork {
        hang: true,
        ..Default::default()
    };
    let start = Instant::now();
    let report = run(&args(&["--retry-budget", "3"]), &fake, cluster(), never())
        .await
        .unwrap();
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "MaestroUnavailable"
    );
    assert_eq!(start.elapsed(), Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn auth_failures_are_not_retried() {
    for error in [
        WorkError::Unauthenticated {
            message: "bad token".into(),
        },
        WorkError::Forbidden {
            message: "no".into(),
        },
    ] {
        let fake = FakeWork::default().fail_gets([error]);
        let start = Instant::now();
        let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
        assert_eq!(
            report.condition("Applied").unwrap().reason,
            "MaestroAuthFailed"
        );
        assert_eq!(fake.calls(), ["get"]);
        assert_eq!(start.elapsed(), Duration::ZERO);
    }
}

#[tokio::test(start_paused = true)]
async fn unknown_consumer_on_create() {
    let fake = FakeWork::default().fail_creates([WorkError::ConsumerNotFound {
        message: "maestro-7: consumer mgmt-1 not found".into(),
    }]);
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "ConsumerNotFound"
    );
    assert_eq!(fake.calls(), ["get", "create"]);
}

#[tokio::test(start_paused = true)]
async fn malformed_feedback_is_invalid_feedback() {
    let fake = FakeWork::default().fail_gets([WorkError::MalformedFeedback {
        manifest: "hypershift.openshift.io/hostedclusters clusters/prod-eu-1".into(),
        feedback: "status".into(),
        message: "expected value at line 1 column 1".into(),
    }]);
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    assert_eq!(
        reasons(&report),
        [
            ("Applied", True, "ManifestWorkExists"),
            ("Available", Unknown, "InvalidFeedback"),
            ("Health", Unknown, "InvalidFeedback"),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn other_backend_errors_are_work_failures() {
    let fake = FakeWork::default().fail_creates([WorkError::Invalid {
        message: "manifests too large".into(),
    }]);
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "ManifestWorkFailed"
    );
    let fake = FakeWork::default().fail_gets([WorkError::Config {
        message: "cannot read token file /t: No such file".into(),
    }]);
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "AdapterMisconfigured"
    );
}

#[tokio::test(start_paused = true)]
async fn shutdown_during_backoff_stops_retrying() {
    let fake = FakeWork {
        get_always: Some(unavailable()),
        ..Default::default()
    };
    let start = Instant::now();
    let shutdown = tokio::time::sleep(Duration::from_millis(1500));
    let report = run(&args(&[]), &fake, cluster(), shutdown).await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(1500));
    let applied = report.condition("Applied").unwrap();
    assert_eq!(applied.reason, "MaestroUnavailable");
    assert!(applied.message.contains("stopped"), "{}", applied.message);
}

// ---- updates -------------------------------------------------------------------------

/// The work a pulse of `generation` built from the fixture spec edited by `edit`, as the
/// backend stores it (version 1), with a ready HostedCluster status.
fn stored(generation: i64, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> ExistingWork {
    let spec = crate::hyperfleet::cluster::fixture::spec_with(edit);
    let work = super::super::manifest_work(&spec, "mgmt-1", Some(generation));
    let map = |key: &str| -> BTreeMap<String, String> {
        serde_json::from_value(work["metadata"][key].clone()).unwrap()
    };
    ExistingWork {
        labels: map("labels"),
        annotations: map("annotations"),
        workload: serde_json::from_value(work["spec"]["workload"]["manifests"].clone()).unwrap(),
        version: Some(1),
        ..with_status(json!({"conditions": [
            {"type": "Available", "status": "True", "reason": "AsExpected", "message": ""}
        ], "version": {"history": [{"state": "Completed", "version": "4.17.0"}]}}))
    }
}

#[tokio::test(start_paused = true)]
async fn a_newer_generation_updates_the_work_once() {
    let fake = FakeWork::with(stored(2, |s| {
        s.insert("openshift_version".into(), json!("4.16.9"));
    }));
    // The fixture cluster is generation 3 with openshift_version 4.17.0.
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    assert_eq!(fake.calls(), ["get", "update"]);
    assert_eq!(
        reasons(&report),
        [
            ("Applied", True, "ManifestWorkUpdated"),
            ("Available", False, "Updating"),
            ("Health", True, "NoIssues"),
        ]
    );
    // The report describes generation 3, not reflected yet (the agent has not applied it):
    // False at the new generation keeps HyperFleet's LastKnownReconciled (generations/b).
    assert_eq!(report.observed_generation, Some(3));
    let available = &report.condition("Available").unwrap().message;
    assert!(
        available.contains("generation 3")
            && available.contains("HostedCluster of generation 2")
            && available.contains("Available=True (ControlPlaneReady)"),
        "{available}"
    );
    let sent = fake.updated.lock().unwrap()[0].clone();
    assert_eq!(
        sent["metadata"]["annotations"]["hyperfleet.io/generation"],
        "3"
    );
    assert_eq!(
        sent["spec"]["workload"]["manifests"][1]["spec"]["release"]["image"],
        "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"
    );
    // Only what the adapter builds: no status, no defaulted fields.
    assert!(
        sent["spec"]["workload"]["manifests"][1]
            .get("status")
            .is_none()
    );
    assert!(
        sent.pointer("/spec/workload/manifests/1/spec/infraID")
            .is_none()
    );
    // The next pulse of the same generation sends nothing.
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    assert_eq!(fake.calls(), ["get", "update", "get"]);
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "ManifestWorkApplied"
    );
}

#[tokio::test(start_paused = true)]
async fn an_immutable_change_sends_nothing_and_names_old_and_new() {
    let fake = FakeWork::with(stored(2, |s| {
        s.insert("gcp_region".into(), json!("us-east1"));
    }));
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    assert_eq!(fake.calls(), ["get"]);
    assert_eq!(
        reasons(&report),
        [
            ("Applied", False, "ImmutableFieldChanged"),
            ("Available", False, "ImmutableFieldChanged"),
            ("Health", False, "ImmutableFieldChanged"),
        ]
    );
    // The refusal is reported at the refused generation (3), so that HyperFleet stores it
    // (an Unknown would be discarded by rule 13); the running control plane is named.
    assert_eq!(report.observed_generation, Some(3));
    assert!(
        report
            .condition("Available")
            .unwrap()
            .message
            .contains("HostedCluster of generation 2 on the management cluster: Available=True")
    );
    let applied = &report.condition("Applied").unwrap().message;
    assert!(
        applied.contains(
            r#"gcp_region (HostedCluster spec.platform.gcp.region): "us-east1" → "europe-west2""#
        ),
        "{applied}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_older_generation_never_rolls_back() {
    let fake = FakeWork::with(stored(5, |_| {}));
    let report = run(&args(&["--generation", "4"]), &fake, cluster(), never())
        .await
        .unwrap();
    assert_eq!(fake.calls(), ["get"]);
    let applied = report.condition("Applied").unwrap();
    assert_eq!(applied.reason, "StaleGeneration");
    assert!(
        applied
            .message
            .contains("generation 4, older than generation 5"),
        "{}",
        applied.message
    );
    assert_eq!(report.observed_generation, Some(5));
}

/// Another writer bumps the stored version (and, with `generation`, its annotation) just
/// before the first update lands.
struct RacingUpdate {
    inner: FakeWork,
    generation: Option<&'static str>,
    raced: Mutex<bool>,
}

impl WorkClient for RacingUpdate {
    type On<'a> = &'a Self;

    fn on(&self, _: &crate::work::WorkAt) -> &Self {
        self
    }

    async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
        self.inner.get(name).await
    }
    async fn create(&self, work: &Value) -> Result<(), WorkError> {
        self.inner.create(work).await
    }
    async fn update(&self, work: &Value, current: &ExistingWork) -> Result<(), WorkError> {
        if !std::mem::replace(&mut *self.raced.lock().unwrap(), true) {
            let mut stored = self.inner.stored.lock().unwrap();
            let stored = stored.as_mut().unwrap();
            stored.version = Some(stored.version.unwrap() + 1);
            if let Some(g) = self.generation {
                stored
                    .annotations
                    .insert("hyperfleet.io/generation".into(), g.into());
            }
        }
        self.inner.update(work, current).await
    }
    async fn delete(&self, name: &str) -> Result<(), WorkError> {
        self.inner.delete(name).await
    }
}

#[tokio::test(start_paused = true)]
async fn a_stale_version_is_read_again_and_retried_once() {
    let racing = RacingUpdate {
        inner: FakeWork::with(stored(2, |_| {})),
        generation: None,
        raced: Mutex::new(false),
    };
    let report = run(&args(&[]), &racing, cluster(), never()).await.unwrap();
    assert_eq!(racing.inner.calls(), ["get", "update", "get", "update"]);
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "ManifestWorkUpdated"
    );
    assert_eq!(
        racing
            .inner
            .stored
            .lock()
            .unwrap()
            .as_ref()
            .unwrap()
            .version,
        Some(3)
    );
    // When the other writer already brought the work to this generation: nothing more.
    let racing = RacingUpdate {
        inner: FakeWork::with(stored(2, |_| {})),
        generation: Some("3"),
        raced: Mutex::new(false),
    };
    let report = run(&args(&[]), &racing, cluster(), never()).await.unwrap();
    assert_eq!(racing.inner.calls(), ["get", "update", "get"]);
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "ManifestWorkApplied"
    );
}

#[tokio::test(start_paused = true)]
async fn a_work_being_deleted_is_never_updated() {
    let fake = FakeWork::with(stored(2, |_| {}));
    // Under deletion: the update is refused and the re-read shows why.
    fake.stored.lock().unwrap().as_mut().unwrap().deleting = Some("2026-11-26T03:44:21Z".into());
    let report = run(&args(&[]), &fake, cluster(), never()).await.unwrap();
    // A work being deleted is never updated; the report describes the pulse's generation,
    // which the management cluster will never reflect.
    assert_eq!(fake.calls(), ["get"]);
    assert_eq!(report.observed_generation, Some(3));
    assert_eq!(report.condition("Available").unwrap().reason, "Deleting");
}

// ---- deletion ------------------------------------------------------------------------

const DELETED_AT: &str = "2026-11-26T10:00:00Z";

fn deleting_cluster() -> ClusterInput {
    let mut c = cluster();
    c.deleted_time = Some(DELETED_AT.into());
    c.generation = Some(4);
    c
}

fn inputs(pools: Result<&[&str], &str>, minutes_after: i64) -> PulseInputs {
    let nodepools = match pools {
        Ok(names) => Ok(NodePools::from_list(&json!({
            "items": names.iter().enumerate().map(|(i, n)| json!({"id": format!("019a6f20-0000-7000-8000-00000000000{i}"), "name": n})).collect::<Vec<_>>(),
            "total": names.len()
        })).unwrap()),
        Err(why) => Err(why.to_owned()),
    };
    let now = DELETED_AT.parse::<jiff::Timestamp>().unwrap()
        + jiff::SignedDuration::from_mins(minutes_after);
    PulseInputs { nodepools, now }
}

#[tokio::test(start_paused = true)]
async fn deletion_requests_then_waits_then_confirms() {
    let fake = FakeWork::with(stored(3, |_| {}));
    let pulse = |minutes| {
        let fake = &fake;
        async move {
            run_with(
                &args(&[]),
                fake,
                deleting_cluster(),
                &inputs(Ok(&[]), minutes),
                never(),
            )
            .await
            .unwrap()
        }
    };
    let report = pulse(1).await;
    assert_eq!(fake.calls(), ["get", "delete"]);
    assert_eq!(
        reasons(&report),
        [
            ("Applied", True, "DeletionRequested"),
            ("Available", False, "Deleting"),
            ("Health", True, "NoIssues"),
            ("Finalized", False, "DeletionRequested"),
        ]
    );
    // The deletion generation, not the work's.
    assert_eq!(report.observed_generation, Some(4));
    // Deleting twice is safe: the next pulse sees the deletion and sends nothing.
    {
        let mut stored = fake.stored.lock().unwrap();
        let manifest = &mut stored.as_mut().unwrap().manifests[0];
        manifest
            .values
            .insert("deletionTimestamp".into(), json!("2026-11-26T10:00:07Z"));
        manifest.values.insert(
            "finalizers".into(),
            json!(["hypershift.openshift.io/finalizer"]),
        );
    }
    let report = pulse(5).await;
    assert_eq!(fake.calls(), ["get", "delete", "get"]);
    let finalized = report.condition("Finalized").unwrap();
    assert_eq!(finalized.reason, "FinalizersRunning");
    assert!(
        finalized
            .message
            .contains("hypershift.openshift.io/finalizer")
    );
    // 31 minutes after deleted_time: stuck, with what holds the finalizer.
    let report = pulse(31).await;
    let health = report.condition("Health").unwrap();
    assert_eq!(
        (health.status, health.reason.as_str()),
        (False, "DeletionStuck")
    );
    assert!(
        health.message.contains("CAPI Cluster"),
        "{}",
        health.message
    );
    // Gone: Finalized=True; later pulses stay there and never create.
    *fake.stored.lock().unwrap() = None;
    for _ in 0..2 {
        let report = pulse(40).await;
        assert_eq!(
            reasons(&report),
            [
                ("Applied", False, "CleanupConfirmed"),
                ("Available", False, "Deleted"),
                ("Health", True, "NoIssues"),
                ("Finalized", True, "CleanupConfirmed"),
            ]
        );
    }
    assert_eq!(fake.calls(), ["get", "delete", "get", "get", "get", "get"]);
    assert!(fake.created.lock().unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_endless_nodepool_list_file_is_node_pools_unknown_naming_the_limit() {
    let why = load_nodepools(&args(&["--nodepools-file", "/dev/zero"]), None)
        .await
        .map(|_| ())
        .unwrap_err();
    assert!(
        why.contains("the NodePool list file /dev/zero is larger than 1 MiB")
            && why.contains("NODEPOOLS_FILE must name a file of at most 1 MiB"),
        "{why}"
    );
    let fake = FakeWork::with(stored(3, |_| {}));
    let report = run_with(
        &args(&[]),
        &fake,
        deleting_cluster(),
        &inputs(Err(&why), 1),
        never(),
    )
    .await
    .unwrap();
    assert_eq!(
        report.condition("Finalized").unwrap().reason,
        "NodePoolsUnknown"
    );
    let applied = report.condition("Applied").unwrap();
    assert_eq!(applied.reason, "NodePoolsUnknown");
    assert!(
        applied
            .message
            .contains("the NodePool list file /dev/zero is larger than 1 MiB"),
        "{}",
        applied.message
    );
    assert_eq!(fake.calls(), ["get"], "nothing deleted");
}

#[tokio::test(start_paused = true)]
async fn node_pools_or_an_unknown_list_hold_the_deletion() {
    let fake = FakeWork::with(stored(3, |_| {}));
    let report = run_with(
        &args(&[]),
        &fake,
        deleting_cluster(),
        &inputs(Ok(&["workers-a", "workers-b"]), 1),
        never(),
    )
    .await
    .unwrap();
    assert_eq!(fake.calls(), ["get"]);
    assert_eq!(
        reasons(&report),
        [
            ("Applied", False, "NodePoolsExist"),
            ("Available", False, "NodePoolsExist"),
            ("Health", True, "NoIssues"),
            ("Finalized", False, "NodePoolsExist"),
        ]
    );
    // Never True about the deletion generation; the message says the control plane serves.
    assert_eq!(report.observed_generation, Some(4));
    assert!(
        report
            .condition("Available")
            .unwrap()
            .message
            .contains("Available=True (ControlPlaneReady)")
    );
    assert!(
        report
            .condition("Applied")
            .unwrap()
            .message
            .contains("workers-a")
    );
    let report = run_with(
        &args(&[]),
        &fake,
        deleting_cluster(),
        &inputs(Err("GET …/nodepools answered HTTP 503"), 1),
        never(),
    )
    .await
    .unwrap();
    assert_eq!(fake.calls(), ["get", "get"]);
    assert_eq!(
        report.condition("Finalized").unwrap().reason,
        "NodePoolsUnknown"
    );
    assert!(
        fake.stored
            .lock()
            .unwrap()
            .as_ref()
            .unwrap()
            .deleting
            .is_none()
    );
}

#[tokio::test(start_paused = true)]
async fn a_deletion_never_creates_nor_deletes_someone_elses_work() {
    // No work: nothing to delete, confirmed at once.
    let fake = FakeWork::default();
    let report = run_with(
        &args(&[]),
        &fake,
        deleting_cluster(),
        &inputs(Ok(&[]), 1),
        never(),
    )
    .await
    .unwrap();
    assert_eq!(fake.calls(), ["get"]);
    assert_eq!(report.condition("Finalized").unwrap().status, True);
    // Someone else's work with our name is left alone.
    let mut theirs = stored(3, |_| {});
    theirs
        .labels
        .insert("hyperfleet.io/adapter".into(), "nodepool".into());
    let fake = FakeWork::with(theirs);
    let report = run_with(
        &args(&[]),
        &fake,
        deleting_cluster(),
        &inputs(Ok(&[]), 1),
        never(),
    )
    .await
    .unwrap();
    assert_eq!(fake.calls(), ["get"]);
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "OwnershipConflict"
    );
    assert_eq!(report.condition("Finalized").unwrap().status, False);
    job_report::validate(&report).unwrap();
}

/// The work disappears between the read and the delete (hub 404; a racing pulse).
struct VanishingWork {
    inner: FakeWork,
}

impl WorkClient for VanishingWork {
    type On<'a> = &'a Self;

    fn on(&self, _: &crate::work::WorkAt) -> &Self {
        self
    }

    async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
        self.inner.get(name).await
    }
    async fn create(&self, work: &Value) -> Result<(), WorkError> {
        self.inner.create(work).await
    }
    async fn update(&self, work: &Value, current: &ExistingWork) -> Result<(), WorkError> {
        self.inner.update(work, current).await
    }
    async fn delete(&self, name: &str) -> Result<(), WorkError> {
        *self.inner.stored.lock().unwrap() = None;
        self.inner.delete(name).await
    }
}

#[tokio::test(start_paused = true)]
async fn a_work_gone_before_the_delete_is_confirmed() {
    let vanishing = VanishingWork {
        inner: FakeWork::with(stored(3, |_| {})),
    };
    let report = run_with(
        &args(&[]),
        &vanishing,
        deleting_cluster(),
        &inputs(Ok(&[]), 1),
        never(),
    )
    .await
    .unwrap();
    assert_eq!(vanishing.inner.calls(), ["get", "delete"]);
    assert_eq!(
        report.condition("Finalized").unwrap().reason,
        "CleanupConfirmed"
    );
}

#[tokio::test(start_paused = true)]
async fn a_create_racing_a_deletion_does_not_resurrect_the_work() {
    // A pulse that does not know about the deletion finds the work being deleted: it
    // neither creates nor updates it.
    let mut deleting = stored(3, |_| {});
    deleting.deleting = Some("2026-11-26T10:00:01Z".into());
    let fake = FakeWork::with(deleting);
    run(&args(&["--generation", "4"]), &fake, cluster(), never())
        .await
        .unwrap();
    assert_eq!(fake.calls(), ["get"]);
    // Its create losing to the deletion (Maestro: "already exists") reads the work again.
    let fake = FakeWork::default().fail_creates([WorkError::AlreadyExists {
        message: "maestro-6: This Resource already exists".into(),
    }]);
    let racing = RacingWork { inner: fake };
    let report = run(&args(&[]), &racing, cluster(), never()).await.unwrap();
    assert_eq!(racing.inner.calls(), ["get", "create", "get"]);
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "ManifestWorkExists"
    );
}
