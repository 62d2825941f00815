//! What the fuzz targets (`fuzz_targets/`) share: the properties every target asserts beyond
//! "no panic", and the fixed world the fuzzed input is judged in (ids, a management cluster, the
//! control plane a NodePool joins, the real CRDs).
//!
//! Each target feeds its input to the function the binary calls on it (see `docs/fuzzing.md`);
//! the assertions here are the contract every outcome must keep:
//!
//! - a report the adapter or the status-reporter writes is one the status-reporter accepts
//!   ([`assert_writable`]): `job_report::validate` passes and it fits the report file limit, so
//!   a bad input never turns into "no report" (exit 1) or a generic row;
//! - a refused input gives the project's named reason ([`assert_reasons`]), with a message;
//! - an object the adapter would send passes the real CRD ([`Crds`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

use hypershift_adapter::hyperfleet::cluster::{ClusterInput, ClusterSpec};
use hypershift_adapter::work::{
    ExistingWork, ManifestStatus, ResourceIdentity, WorkClient, WorkCondition, WorkError,
};
use job_report::Report;
use serde_json::{Value, json};

/// The project's CRD validator (`testbed::openapi`), compiled from its one source file rather than
/// through the `testbed` crate: that crate brings the fake servers, the kit's harness and their
/// dependencies (axum, reqwest, tonic's server), which an instrumented build would compile for
/// nothing (docs/fuzzing.md#ci).
#[path = "../../tests/src/openapi/mod.rs"]
pub mod openapi;

/// The cluster id used when the input names none (a UUIDv7, as the HyperFleet API makes them).
pub const CLUSTER_ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
/// The NodePool id used when the input names none.
pub const NODEPOOL_ID: &str = "01a01e83-2b42-79c4-a5e8-d17b3a6f0c41";
/// The management cluster (Maestro consumer) of every pulse.
pub const CONSUMER: &str = "mgmt-euw2-01";
/// The clock of every judgement: the recordings' day.
pub const NOW: &str = "2026-11-26T12:00:00Z";
/// The HyperFleet cluster the NodePool target's control plane is built from (nested shape).
pub const CLUSTER_NESTED: &str = include_str!("../../adapter/tests/fixtures/cluster-nested.json");

/// The bytes as UTF-8, the way the adapter reads a spec or list file
/// (`input_file::Kind::read_text`); `None` when they are not (that read is refused with a named
/// message before any parsing).
pub fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// [`NOW`] as a timestamp.
pub fn now() -> jiff::Timestamp {
    static NOW_TS: LazyLock<jiff::Timestamp> = LazyLock::new(|| {
        NOW.parse()
            .unwrap_or_else(|e| panic!("NOW {NOW} is not a timestamp: {e}"))
    });
    *NOW_TS
}

/// A report the binaries would write must be one the status-reporter accepts: it validates,
/// serializes within [`job_report::MAX_REPORT_BYTES`], and every condition says why (a reason and
/// a message). `what` names the input in the panic.
#[track_caller]
pub fn assert_writable(report: &Report, what: &str) {
    assert_accepted(report, what);
    for c in &report.conditions {
        assert!(
            !c.reason.is_empty() && !c.message.trim().is_empty(),
            "{what}: condition {} has no reason or no message: {c:?}",
            c.type_
        );
    }
}

/// The part of [`assert_writable`] that holds for any report the status-reporter passes on,
/// including an adapter's own: it validates and fits the report file. The report contract makes
/// a condition's `message` optional (design.md), so a report read from the file may carry an
/// empty one (found by fuzzing `report_file`: the property had asked a message of the adapter's
/// conditions too).
#[track_caller]
pub fn assert_accepted(report: &Report, what: &str) {
    if let Err(violations) = job_report::validate(report) {
        panic!("{what}: the report would be refused by write_atomic: {violations:?}\n{report:#?}");
    }
    let size = serde_json::to_vec_pretty(report)
        .unwrap_or_else(|e| panic!("{what}: the report does not serialize: {e}"))
        .len()
        + 1;
    assert!(
        size as u64 <= job_report::MAX_REPORT_BYTES,
        "{what}: the report is {size} bytes, over the report file limit"
    );
}

/// Every condition of `report` has one of the `allowed` reasons (the named rows of the table the
/// situation belongs to).
#[track_caller]
pub fn assert_reasons(report: &Report, allowed: &[&str], what: &str) {
    for c in &report.conditions {
        assert!(
            allowed.contains(&c.reason.as_str()),
            "{what}: condition {} has reason {:?}, expected one of {allowed:?}\n{report:#?}",
            c.type_,
            c.reason
        );
    }
}

/// The reason of condition `type_`, `""` when the report has none.
pub fn reason<'a>(report: &'a Report, type_: &str) -> &'a str {
    report.condition(type_).map_or("", |c| c.reason.as_str())
}

/// One single-threaded runtime for the targets that drive the binaries' async code (with a
/// clock: the retry loops take timeouts).
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap_or_else(|e| panic!("cannot start a runtime: {e}"))
    });
    RUNTIME.block_on(future)
}

/// A directory for the targets that hand their input to a function reading a file (the report,
/// a kubeconfig, the management clusters file); it lives as long as the process.
pub fn scratch() -> &'static Path {
    static DIR: LazyLock<tempfile::TempDir> = LazyLock::new(|| {
        tempfile::Builder::new()
            .prefix("hypershift-fuzz-")
            .tempdir()
            .unwrap_or_else(|e| panic!("cannot make a scratch directory: {e}"))
    });
    DIR.path()
}

/// Writes `data` to `name` in [`scratch`] and returns its path.
pub fn scratch_file(name: &str, data: &[u8]) -> PathBuf {
    let path = scratch().join(name);
    std::fs::write(&path, data).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    path
}

/// The real CRDs (`shared/fixtures/crds` of the team folder), when the team folder is beside the
/// checkout; `None` (after one line on stderr) otherwise, and the CRD round trips are skipped.
pub struct Crds {
    pub hosted_cluster: Value,
    pub node_pool: Value,
    pub manifest_work: Value,
}

impl Crds {
    /// The CRDs, loaded once.
    pub fn get() -> Option<&'static Crds> {
        static CRDS: LazyLock<Option<Crds>> = LazyLock::new(|| {
            let dir = job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/crds")?;
            let schema = |file: &str, version: &str| openapi::crd_schema(&dir.join(file), version);
            Some(Crds {
                hosted_cluster: schema(
                    "hostedclusters.hypershift.openshift.io-TechPreviewNoUpgrade.yaml",
                    "v1beta1",
                ),
                node_pool: schema(
                    "nodepools.hypershift.openshift.io-TechPreviewNoUpgrade.yaml",
                    "v1beta1",
                ),
                manifest_work: schema("manifestworks.work.open-cluster-management.io.yaml", "v1"),
            })
        });
        CRDS.as_ref()
    }
}

/// `object` passes `schema` (a CRD's `openAPIV3Schema`): no error, no CEL rule left unevaluated.
#[track_caller]
pub fn assert_conforms(schema: &Value, object: &Value, what: &str) {
    let outcome = openapi::validate(schema, object);
    assert!(
        outcome.errors.is_empty() && outcome.unevaluated.is_empty(),
        "{what}: refused by the CRD: {:#?} (unevaluated: {:#?})\n{object:#}",
        outcome.errors,
        outcome.unevaluated
    );
}

/// Checks a ManifestWork the adapter would send against the ManifestWork CRD, and every manifest
/// of `kind` in it against `kind_schema`.
pub fn assert_work_conforms(work: &Value, kind: &str, kind_schema: &Value, what: &str) {
    let Some(crds) = Crds::get() else { return };
    assert_conforms(&crds.manifest_work, work, &format!("{what}: ManifestWork"));
    let manifests = work
        .pointer("/spec/workload/manifests")
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{what}: the work has no manifests\n{work:#}"));
    let mut found = false;
    for manifest in manifests.iter().filter(|m| m["kind"] == kind) {
        found = true;
        assert_conforms(kind_schema, manifest, &format!("{what}: {kind}"));
    }
    assert!(found, "{what}: the work carries no {kind}\n{work:#}");
}

/// An in-memory work backend: `get` answers the control plane's work for any
/// `hostedcluster-<id>` name when [`FakeWorks::control_plane`] is set (built for the id asked),
/// nothing otherwise; `create` and `update` record what the adapter would send.
#[derive(Default)]
pub struct FakeWorks {
    /// Answer the control plane's work (a NodePool pulse reads it first).
    pub control_plane: bool,
    /// Every work created or updated, in order.
    pub sent: Mutex<Vec<Value>>,
    /// Every work deleted.
    pub deleted: Mutex<Vec<String>>,
}

impl FakeWorks {
    /// What was sent, taking it.
    pub fn take_sent(&self) -> Vec<Value> {
        std::mem::take(&mut *self.sent.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl WorkClient for FakeWorks {
    type On<'a> = &'a Self;

    fn on(&self, _: &hypershift_adapter::work::WorkAt) -> &Self {
        self
    }

    async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
        match name.strip_prefix("hostedcluster-") {
            Some(cluster_id) if self.control_plane => Ok(Some(control_plane(cluster_id))),
            _ => Ok(None),
        }
    }

    async fn create(&self, work: &Value) -> Result<(), WorkError> {
        self.sent
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(work.clone());
        Ok(())
    }

    async fn update(&self, work: &Value, _current: &ExistingWork) -> Result<(), WorkError> {
        self.create(work).await
    }

    async fn delete(&self, name: &str) -> Result<(), WorkError> {
        self.deleted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(name.to_owned());
        Ok(())
    }
}

/// The control plane of cluster `cluster_id` as the controlplane adapter ships it (built from
/// [`CLUSTER_NESTED`]), applied, its HostedCluster available at 4.17.0: what a NodePool joins.
pub fn control_plane(cluster_id: &str) -> ExistingWork {
    static BASE: LazyLock<ExistingWork> = LazyLock::new(|| {
        let input = ClusterInput::from_json(CLUSTER_NESTED)
            .unwrap_or_else(|e| panic!("the nested cluster fixture: {e}"));
        let spec = ClusterSpec::validate(CLUSTER_ID, input.name.as_deref(), &input.spec)
            .unwrap_or_else(|v| panic!("the nested cluster fixture is invalid: {v:?}"));
        let work = hypershift_adapter::pulse::controlplane::manifest_work(&spec, CONSUMER, Some(1));
        let workload = work["spec"]["workload"]["manifests"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let (namespace, name) =
            hypershift_adapter::hypershift::hostedcluster::hosted_cluster_ref(&spec);
        let condition = |type_: &str| WorkCondition {
            type_: type_.to_owned(),
            status: "True".to_owned(),
            reason: format!("{type_}AsExpected"),
            message: String::new(),
            observed_generation: Some(1),
            last_transition_time: "2026-11-26T11:00:00Z".to_owned(),
        };
        let status = json!({
            "conditions": [{"type": "Available", "status": "True", "reason": "AsExpected",
                            "message": "The hosted control plane is available",
                            "lastTransitionTime": "2026-11-26T11:00:00Z", "observedGeneration": 1}],
            "version": {"desired": {"version": "4.17.0"},
                        "history": [{"state": "Completed", "version": "4.17.0",
                                     "image": "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64",
                                     "startedTime": "2026-11-26T10:00:00Z",
                                     "completionTime": "2026-11-26T10:30:00Z"}]},
        });
        ExistingWork {
            labels: work["metadata"]["labels"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                        .collect()
                })
                .unwrap_or_default(),
            annotations: BTreeMap::from([("hyperfleet.io/generation".to_owned(), "1".to_owned())]),
            manifests: vec![ManifestStatus {
                resource: ResourceIdentity {
                    group: "hypershift.openshift.io".to_owned(),
                    version: "v1beta1".to_owned(),
                    kind: "HostedCluster".to_owned(),
                    resource: "hostedclusters".to_owned(),
                    namespace: namespace.to_owned(),
                    name: name.to_owned(),
                },
                conditions: ["Applied", "Available", "StatusFeedbackSynced"]
                    .into_iter()
                    .map(condition)
                    .collect(),
                values: BTreeMap::from([("status".to_owned(), status)]),
            }],
            conditions: ["Applied", "Available"]
                .into_iter()
                .map(condition)
                .collect(),
            version: Some(1),
            observed_version: Some(1),
            workload,
            ..ExistingWork::default()
        }
    });
    let mut work = BASE.clone();
    work.labels.insert(
        hypershift_adapter::hyperfleet::CLUSTER_ID_LABEL.to_owned(),
        cluster_id.to_owned(),
    );
    work
}

/// Parses flags the way the binary does (a flattened `clap::Args` struct).
pub fn parse_args<A: clap::Args>(argv: &[&str]) -> A {
    #[derive(clap::Parser)]
    struct Cli<A: clap::Args> {
        #[command(flatten)]
        args: A,
    }
    <Cli<A> as clap::Parser>::try_parse_from(argv)
        .unwrap_or_else(|e| panic!("flags {argv:?}: {e}"))
        .args
}

/// The operator's clock of a pulse with the binaries' default `--operator-stuck-after`.
pub fn operator_clock() -> hypershift_adapter::work::observed::OperatorClock {
    let stuck_after = hypershift_adapter::duration::parse_budget(
        hypershift_adapter::work::observed::DEFAULT_STUCK_AFTER,
    )
    .unwrap_or_else(|e| panic!("DEFAULT_STUCK_AFTER: {e}"));
    hypershift_adapter::work::observed::OperatorClock {
        now: now(),
        stuck_after,
    }
}

/// The default clock and one already past its bound (every lag is stuck), to reach both the
/// `AwaitingOperator` and the `OperatorNotReconciling` rows.
pub fn operator_clocks() -> [hypershift_adapter::work::observed::OperatorClock; 2] {
    let default = operator_clock();
    let past = hypershift_adapter::work::observed::OperatorClock {
        stuck_after: std::time::Duration::ZERO,
        ..default
    };
    [default, past]
}

/// The reasons of the controlplane condition table (`pulse/controlplane/mod.rs`) and of its
/// deletion stages (`pulse/controlplane/deletion.rs`).
pub const CONTROLPLANE_REASONS: &[&str] = &[
    "ManifestWorkCreated",
    "Provisioning",
    "NoIssues",
    "ManifestWorkExists",
    "AwaitingFeedback",
    "ApplyFailed",
    "ManifestWorkUpdated",
    "Updating",
    "Deleting",
    "ImmutableFieldChanged",
    "StaleGeneration",
    "AwaitingOperator",
    "OperatorNotReconciling",
    "ManifestWorkApplied",
    "HostedClusterMissing",
    "FeedbackNotSynced",
    "ControlPlaneReady",
    "Upgrading",
    "Blocked",
    "NotReady",
    "Degraded",
    "UpgradeFailed",
    "ClusterVersionFailing",
    "UnsupportedHostedCluster",
    "InvalidConfiguration",
    "UpgradeBlocked",
    "ReleaseImageInvalid",
    "InvalidWorkloadIdentity",
    "PlatformCredentialsNotFound",
    "InvalidGCPCredentials",
    "InvalidFeedback",
    "InvalidClusterSpec",
    "OwnershipConflict",
    "MaestroUnavailable",
    "MaestroAuthFailed",
    "ConsumerNotFound",
    "NoManagementClusterAvailable",
    "InventoryUnavailable",
    "PlacementLockUnavailable",
    "FailedOverBeforeApply",
    "ManagementClusterUnavailable",
    "DoublePlacement",
    "HubUnavailable",
    "HubAuthFailed",
    "HubNamespaceNotFound",
    "ClusterSpecUnavailable",
    "ManifestWorkFailed",
    "AdapterMisconfigured",
    "NodePoolsExist",
    "NodePoolsUnknown",
    "DeletionRequested",
    "FinalizersRunning",
    "DeletionStuck",
    "CleanupConfirmed",
    "Deleted",
];

/// The reasons of the nodepool condition table (`pulse/nodepool/mod.rs`) and of the deletion
/// stages (`work/deletion.rs`).
pub const NODEPOOL_REASONS: &[&str] = &[
    "ManifestWorkCreated",
    "Provisioning",
    "NoIssues",
    "WaitingForControlPlane",
    "ManifestWorkExists",
    "AwaitingFeedback",
    "ApplyFailed",
    "ManifestWorkApplied",
    "NodePoolMissing",
    "FeedbackNotSynced",
    "ManifestWorkUpdated",
    "Updating",
    "Deleting",
    "ImmutableFieldChanged",
    "StaleGeneration",
    "AwaitingOperator",
    "OperatorNotReconciling",
    "NodePoolReady",
    "Scaling",
    "Blocked",
    "NotReady",
    "ValidationFailed",
    "UnsupportedVersionSkew",
    "ClusterNetworkCIDRConflict",
    "MachinesStuck",
    "ReconciliationPaused",
    "InvalidFeedback",
    "InvalidNodePoolSpec",
    "OwnershipConflict",
    "MaestroUnavailable",
    "MaestroAuthFailed",
    "ConsumerNotFound",
    "ManagementClusterUnavailable",
    "HubUnavailable",
    "HubAuthFailed",
    "HubNamespaceNotFound",
    "NodePoolSpecUnavailable",
    "ManifestWorkFailed",
    "AdapterMisconfigured",
    "DeletionRequested",
    "FinalizersRunning",
    "DeletionStuck",
    "CleanupConfirmed",
    "Deleted",
];

/// A report of three conditions (an error or refusal row), as the pulses assemble them.
pub fn report_of(conditions: hypershift_adapter::message::Conditions) -> Report {
    let mut report = Report::new(conditions.into());
    report.adapter = Some("hypershift-controlplane".to_owned());
    report
}

/// The NodePool a work for [`NODEPOOL_ID`] of [`CLUSTER_ID`] was asked for when its workload
/// carries none: the repository's NodePool example.
pub fn default_desired() -> hypershift_adapter::hypershift::nodepool::status::Desired {
    hypershift_adapter::hypershift::nodepool::status::Desired {
        platform_none: false,
        replicas: Some(3),
        autoscaling: None,
    }
}

/// Judges a work as both pulses do once they found it theirs (`report_observed`, with the place
/// of its object and the generation it carries), as a deleting cluster does (the stages read
/// from its feedback), and as an update does (the held HostedCluster against the one the
/// pulse would send). Every report must be writable and carry only its table's reasons.
pub fn judge_existing(existing: &ExistingWork, what: &str) {
    use hypershift_adapter::hypershift::nodepool::status::{Desired, MachinesClock};
    use hypershift_adapter::hypershift::{find_in, hostedcluster, nodepool as np, place_in};
    use hypershift_adapter::pulse::{controlplane, nodepool};
    use hypershift_adapter::work::feedback::ObjectDeletion;
    use hypershift_adapter::work::manifestwork::work_generation;
    use hypershift_adapter::work::outcome::{self, WorkRef};

    let held = work_generation(&existing.annotations);
    let work = WorkRef {
        consumer: CONSUMER,
        name: "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
    };
    let (namespace, name) = place_in(
        &existing.workload,
        hostedcluster::KIND,
        ("clusters", "prod-eu-1"),
    );
    // Within the operator's bound and past it (an applied spec the operator has not observed).
    for clock in operator_clocks() {
        let report =
            controlplane::report_observed(work, existing, (&namespace, &name), held, clock);
        assert_writable(&report, what);
        assert_reasons(&report, CONTROLPLANE_REASONS, what);
    }
    let report =
        controlplane::report_observed(work, existing, (&namespace, &name), held, operator_clock());
    // A pulse older and one newer than the work.
    let stale = outcome::stale_generation(work, report.clone(), 1, held.unwrap_or(2).max(2));
    assert_writable(&stale, what);
    let updated = outcome::updated(
        work,
        &controlplane::hosted_cluster_object(("", "")),
        report,
        held,
        Some(held.unwrap_or(0).saturating_add(1)),
    );
    assert_writable(&updated, what);
    assert_reasons(&updated, CONTROLPLANE_REASONS, what);

    // The update of a work holding a HostedCluster: its immutable fields against the pulse's.
    if let Some(old) = find_in(&existing.workload, hostedcluster::KIND) {
        let (new, names) = pulse_hosted_cluster();
        let changes = hostedcluster::immutable::immutable_changes(old, new, names);
        if !changes.is_empty() {
            let observed = controlplane::report_observed(
                work,
                existing,
                (&namespace, &name),
                held,
                operator_clock(),
            );
            let lines: Vec<String> = changes.iter().map(ToString::to_string).collect();
            let fields: Vec<&str> = changes.iter().map(|c| c.field).collect();
            let refused = outcome::immutable_change(
                work,
                &controlplane::hosted_cluster_object(("", "")),
                observed,
                (&lines, &fields),
                Some(9),
                held,
            );
            assert_writable(&refused, what);
            assert_eq!(
                reason(&refused, "Applied"),
                "ImmutableFieldChanged",
                "{what}"
            );
        }
    }

    // Deleting: what the agent fed back of the HostedCluster's deletion.
    let hc = ObjectDeletion::from_manifest(existing.manifest(
        hostedcluster::GROUP,
        hostedcluster::RESOURCE,
        &namespace,
        &name,
    ));
    let stage = controlplane::deletion::Stage::Requested { now: false, hc };
    for stuck in [false, true] {
        let report = controlplane::deletion::report_deletion(
            work,
            (&namespace, &name),
            &stage,
            None,
            "2026-11-26T11:00:00Z",
            stuck,
            Some(3),
        );
        assert_writable(&report, what);
        assert_reasons(&report, CONTROLPLANE_REASONS, what);
    }

    let work = WorkRef {
        consumer: CONSUMER,
        name: "nodepool-01a01e83-2b42-79c4-a5e8-d17b3a6f0c41",
    };
    let (namespace, name) = place_in(
        &existing.workload,
        np::KIND,
        ("clusters", "workers-europe2"),
    );
    let desired = find_in(&existing.workload, np::KIND).map_or_else(default_desired, Desired::of);
    let clock = MachinesClock {
        now: now(),
        stuck_after: std::time::Duration::from_secs(900),
    };
    for operator in operator_clocks() {
        let report = nodepool::report_observed(
            work,
            existing,
            (&namespace, &name),
            &desired,
            (clock, operator),
            held,
        );
        assert_writable(&report, what);
        assert_reasons(&report, NODEPOOL_REASONS, what);
    }
}

/// The HostedCluster a pulse of the nested cluster fixture sends, and its spec's field names.
fn pulse_hosted_cluster() -> (
    &'static Value,
    &'static hypershift_adapter::hyperfleet::cluster::SpecNames,
) {
    static HC: LazyLock<(Value, ClusterSpec)> = LazyLock::new(|| {
        let input = ClusterInput::from_json(CLUSTER_NESTED)
            .unwrap_or_else(|e| panic!("the nested cluster fixture: {e}"));
        let spec = ClusterSpec::validate(CLUSTER_ID, input.name.as_deref(), &input.spec)
            .unwrap_or_else(|v| panic!("the nested cluster fixture is invalid: {v:?}"));
        (
            hypershift_adapter::hypershift::hostedcluster::hosted_cluster(&spec),
            spec,
        )
    });
    (&HC.0, HC.1.names)
}

/// The report a pulse writes when its work backend failed with `failure`, for the Maestro or the
/// hub backend: every condition carries `expected`, except in the row of feedback that cannot be
/// read, where the work was found and `Applied` says so (`ManifestWorkExists`; docs/controlplane.md
/// and docs/nodepool.md, "feedback is not a … status").
pub fn failure_report(
    hub: bool,
    failure: hypershift_adapter::work::Failure,
    expected: &str,
) -> Report {
    use hypershift_adapter::work::failure::{BackendRef, FailureContext};
    use hypershift_adapter::work::outcome::WorkRef;
    let backend = if hub {
        BackendRef::Hub {
            kubeconfig: Some(Path::new("/etc/hub/kubeconfig")),
        }
    } else {
        BackendRef::Maestro {
            api: "http://maestro:8000",
            grpc: "http://maestro-grpc:8090",
        }
    };
    let ctx = FailureContext {
        work: WorkRef {
            consumer: CONSUMER,
            name: "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
        },
        object_kind: "HostedCluster",
        retry_budget: std::time::Duration::from_secs(120),
        backend,
    };
    let report = report_of(hypershift_adapter::work::failure::failure(&ctx, &failure).1);
    assert_writable(&report, expected);
    for c in &report.conditions {
        let row = match (expected, c.type_.as_str()) {
            ("InvalidFeedback", "Applied") => "ManifestWorkExists",
            _ => expected,
        };
        assert_eq!(
            c.reason, row,
            "{expected}: condition {}\n{report:#?}",
            c.type_
        );
    }
    report
}

/// [`failure_report`] of a Maestro error the adapter does not retry.
pub fn maestro_failure_report(error: WorkError, expected: &str) -> Report {
    failure_report(
        false,
        hypershift_adapter::work::Failure::Permanent(error),
        expected,
    )
}

/// The row a work backend error becomes (`work::outcome::failure`): transient errors are retried
/// until the budget is spent (`MaestroUnavailable` / `HubUnavailable`), the others are reported
/// at once by kind.
pub fn expected_failure_reason(hub: bool, error: &WorkError) -> &'static str {
    match (error, hub) {
        (WorkError::Unavailable { .. }, false) => "MaestroUnavailable",
        (WorkError::Unavailable { .. }, true) => "HubUnavailable",
        (WorkError::Unauthenticated { .. } | WorkError::Forbidden { .. }, false) => {
            "MaestroAuthFailed"
        }
        (WorkError::Unauthenticated { .. } | WorkError::Forbidden { .. }, true) => "HubAuthFailed",
        (WorkError::ConsumerNotFound { .. }, false) => "ConsumerNotFound",
        (WorkError::ConsumerNotFound { .. }, true) => "HubNamespaceNotFound",
        (WorkError::MalformedFeedback { .. }, _) => "InvalidFeedback",
        (WorkError::Config { .. }, _) => "AdapterMisconfigured",
        (
            WorkError::AlreadyExists { .. }
            | WorkError::Conflict { .. }
            | WorkError::NotFound { .. }
            | WorkError::Invalid { .. }
            | WorkError::Protocol { .. }
            | WorkError::Internal { .. },
            _,
        ) => "ManifestWorkFailed",
    }
}
