//! End-to-end, day two: the real `hypershift-adapter controlplane` binary through a cluster's
//! life after creation, on both backends (fake Maestro; fake Kubernetes API server as the OCM
//! hub): a generation bump updates the work, an immutable change and an older generation send
//! nothing, an upgrade is followed to completion or failure, and a deletion goes from
//! `NodePoolsExist` through `DeletionRequested` (and `DeletionStuck`) to `Finalized=True`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use job_report::Report;
use serde_json::{Value, json};
use testbed::kube_api::ApiServer;
use testbed::maestro::{FakeMaestro, FakeOptions};
use tokio::process::Command;

const CLUSTER: &str = include_str!("../../adapter/tests/fixtures/cluster-valid.json");
const ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
const NODEPOOL_ID: &str = "019a6f20-3c4d-7e5f-8a9b-0c1d2e3f4a5b";
const CONSUMER: &str = "mgmt-1";
const WORKS: &str = "/apis/work.open-cluster-management.io/v1";

fn work_name() -> String {
    format!("hostedcluster-{ID}")
}

/// The fixture cluster at `generation`, with `edit` applied to the whole object.
fn cluster(generation: i64, edit: impl FnOnce(&mut Value)) -> String {
    let mut c: Value = serde_json::from_str(CLUSTER).unwrap();
    c["generation"] = generation.into();
    edit(&mut c);
    c.to_string()
}

fn deleting(generation: i64, deleted_time: &str) -> String {
    cluster(generation, |c| {
        c["deleted_time"] = deleted_time.into();
        c["deleted_by"] = "jdoe@example.com".into();
    })
}

/// `deleted_time` this many minutes ago, as the API writes it.
fn minutes_ago(minutes: i64) -> String {
    (jiff::Timestamp::now() - jiff::SignedDuration::from_mins(minutes)).to_string()
}

/// One Job's emptyDir and inputs; the cluster file and the NodePool list are rewritten per pulse.
struct Pod {
    dir: tempfile::TempDir,
    results: PathBuf,
    spec: PathBuf,
    nodepools: PathBuf,
}

impl Pod {
    fn new() -> Pod {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results").join("adapter-report.json");
        std::fs::create_dir_all(results.parent().unwrap()).unwrap();
        let spec = dir.path().join("cluster.json");
        let nodepools = dir.path().join("nodepools.json");
        Pod {
            dir,
            results,
            spec,
            nodepools,
        }
    }

    fn env(&self, backend: &Backend) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = [
            ("CLUSTER_SPEC_FILE", self.spec.display().to_string()),
            ("NODEPOOLS_FILE", self.nodepools.display().to_string()),
            ("RESULTS_OUTPUT_PATH", self.results.display().to_string()),
            ("MANAGEMENT_CLUSTER_CONSUMER", CONSUMER.to_owned()),
            ("LOG_FORMAT", "json".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        match backend {
            Backend::Maestro(m) => {
                env.push(("MAESTRO_API_URL".into(), m.rest_url()));
                env.push(("MAESTRO_GRPC_URL".into(), m.grpc_url()));
            }
            Backend::Hub(server) => {
                let kubeconfig = server.write_kubeconfig(self.dir.path());
                env.push(("WORK_BACKEND".into(), "hub".into()));
                env.push(("KUBECONFIG".into(), kubeconfig.display().to_string()));
            }
        }
        env
    }

    /// Runs one pulse of `cluster` (with `nodepools` listed) and reads the report.
    async fn pulse(
        &self,
        backend: &Backend,
        cluster: &str,
        nodepools: &[&str],
        extra: &[(&str, &str)],
    ) -> Pulse {
        std::fs::write(&self.spec, cluster).unwrap();
        let items: Vec<Value> = nodepools
            .iter()
            .map(|n| {
                json!({"id": NODEPOOL_ID, "kind": "NodePool", "name": n,
                            "owner_references": {"id": ID, "kind": "Cluster"}})
            })
            .collect();
        let list = json!({"items": items, "page": 1, "size": items.len(), "total": items.len()});
        std::fs::write(&self.nodepools, list.to_string()).unwrap();
        let _ = std::fs::remove_file(&self.results);
        let mut env = self.env(backend);
        env.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let out = Command::new(testbed::binaries::path("hypershift-adapter"))
            .arg("controlplane")
            .env_clear()
            .envs(env)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(Duration::from_secs(60), out)
            .await
            .expect("the adapter did not exit within 60 s")
            .unwrap();
        let logs = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{logs}");
        let bytes = std::fs::read(&self.results).unwrap();
        let report = job_report::parse(&bytes, "Available").unwrap();
        job_report::validate(&report).unwrap();
        Pulse { report, logs }
    }
}

struct Pulse {
    report: Report,
    logs: String,
}

impl Pulse {
    fn reasons(&self) -> Vec<(String, String, String)> {
        self.report
            .conditions
            .iter()
            .map(|c| {
                (
                    c.type_.clone(),
                    c.status.as_str().to_owned(),
                    c.reason.clone(),
                )
            })
            .collect()
    }

    fn reason(&self, type_: &str) -> String {
        self.report
            .condition(type_)
            .map(|c| c.reason.clone())
            .unwrap_or_else(|| panic!("no {type_} in {:?}\n{}", self.reasons(), self.logs))
    }

    fn message(&self, type_: &str) -> String {
        self.report.condition(type_).unwrap().message.clone()
    }

    fn data(&self, key: &str) -> Value {
        self.report.data.as_ref().unwrap()[key].clone()
    }
}

fn triples(items: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    items
        .iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect()
}

#[allow(clippy::large_enum_variant)] // one per test
enum Backend {
    Maestro(FakeMaestro),
    Hub(ApiServer),
}

impl Backend {
    async fn maestro() -> Backend {
        let maestro = FakeMaestro::start(FakeOptions {
            consumers: vec![CONSUMER.to_owned()],
            ..FakeOptions::default()
        })
        .await
        .unwrap();
        // The agent reports and acknowledges deletions only when told.
        maestro.set_agent_delay(None);
        Backend::Maestro(maestro)
    }

    async fn hub() -> Backend {
        Backend::Hub(ApiServer::start().await)
    }

    /// The stored work: `(labels+annotations metadata, manifests)`, `None` when gone.
    fn work(&self) -> Option<(Value, Vec<Value>)> {
        match self {
            Backend::Maestro(m) => m.resource(&work_name()).map(|r| {
                let mut meta = r.metadata.clone();
                if r.deleted_at.is_some() {
                    meta["deletionTimestamp"] = json!("set");
                }
                (
                    meta,
                    r.bundle()["manifests"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default(),
                )
            }),
            Backend::Hub(s) => s
                .object(WORKS, "manifestworks", Some(CONSUMER), &work_name())
                .map(|w| {
                    (
                        w["metadata"].clone(),
                        w["spec"]["workload"]["manifests"]
                            .as_array()
                            .cloned()
                            .unwrap(),
                    )
                }),
        }
    }

    fn hosted_cluster(&self) -> Value {
        let (_, manifests) = self.work().expect("the work exists");
        manifests
            .into_iter()
            .find(|m| m["kind"] == "HostedCluster")
            .unwrap()
    }

    /// Publishes (Maestro) or writes (hub POST/PUT/PATCH/DELETE on the work) so far.
    fn writes(&self) -> usize {
        match self {
            Backend::Maestro(m) => usize::try_from(m.publishes()).unwrap(),
            Backend::Hub(s) => s
                .requests()
                .iter()
                .filter(|r| r.path.contains("/manifestworks") && r.method != http::Method::GET)
                .count(),
        }
    }

    /// The agent reports the HostedCluster `status` (and, on the hub, its finalizers and
    /// deletion timestamp when given).
    fn feedback(&self, status: &Value, metadata: Option<(&str, &[&str])>) {
        match self {
            Backend::Maestro(m) => {
                assert!(m.set_feedback(&work_name(), status));
            }
            Backend::Hub(s) => {
                let mut work = s
                    .object(WORKS, "manifestworks", Some(CONSUMER), &work_name())
                    .unwrap();
                let mut values = vec![
                    json!({"name": "status", "fieldValue": {"type": "JsonRaw", "jsonRaw": status.to_string()}}),
                ];
                if let Some((since, finalizers)) = metadata {
                    values.push(json!({"name": "deletionTimestamp", "fieldValue": {"type": "String", "string": since}}));
                    values.push(json!({"name": "finalizers", "fieldValue": {"type": "JsonRaw", "jsonRaw": json!(finalizers).to_string()}}));
                }
                work["status"] = hub_status(&values);
                s.put_object(WORKS, Some(CONSUMER), work);
            }
        }
    }

    /// The work agent finished deleting (Maestro: `Deleted` then the row is gone; hub: the
    /// agent's finalizer is removed).
    fn finish_deletion(&self) {
        match self {
            Backend::Maestro(m) => assert!(m.ack_delete(&work_name())),
            Backend::Hub(s) => {
                s.delete_object(WORKS, "manifestworks", Some(CONSUMER), &work_name());
            }
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Backend::Maestro(_) => "maestro",
            Backend::Hub(_) => "hub",
        }
    }
}

/// A hub work status as the agent writes it: work Applied/Available True, the HostedCluster
/// manifest applied, available and synced, with `values` as its feedback.
fn hub_status(values: &[Value]) -> Value {
    let t0 = "2026-11-26T03:36:31Z";
    let ok = |t: &str, reason: &str| json!({"type": t, "status": "True", "reason": reason, "message": "", "lastTransitionTime": t0});
    json!({
        "conditions": [ok("Applied", "AppliedManifestWorkComplete"), ok("Available", "ResourcesAvailable")],
        "resourceStatus": {"manifests": [{
            "resourceMeta": {"ordinal": 1, "group": "hypershift.openshift.io", "version": "v1beta1",
                             "kind": "HostedCluster", "resource": "hostedclusters",
                             "namespace": "clusters", "name": "prod-eu-1"},
            "statusFeedback": {"values": values},
            "conditions": [ok("Applied", "AppliedManifestComplete"), ok("Available", "ResourceAvailable"),
                           ok("StatusFeedbackSynced", "StatusFeedbackSynced")]
        }]}
    })
}

/// A serving HostedCluster at `completed`, rolling out `desired`, plus `extra` conditions.
fn hc_status(completed: &str, desired: &str, extra: &[Value]) -> Value {
    let mut conditions = vec![
        json!({"type": "Available", "status": "True", "reason": "AsExpected", "message": "The hosted control plane is available"}),
        json!({"type": "Progressing", "status": if completed == desired { "False" } else { "True" }, "reason": "AsExpected", "message": ""}),
        json!({"type": "Degraded", "status": "False", "reason": "AsExpected", "message": ""}),
    ];
    conditions.extend_from_slice(extra);
    let mut history = vec![];
    if completed != desired {
        history.push(json!({"state": "Partial", "version": desired, "image": format!("quay.io/openshift-release-dev/ocp-release:{desired}-x86_64")}));
    }
    history.push(json!({"state": "Completed", "version": completed, "image": format!("quay.io/openshift-release-dev/ocp-release:{completed}-x86_64")}));
    json!({
        "conditions": conditions,
        "controlPlaneEndpoint": {"host": "api.prod-eu-1.hcp.example.com", "port": 443},
        "version": {"desired": {"version": desired, "image": format!("quay.io/openshift-release-dev/ocp-release:{desired}-x86_64")},
                    "history": history}
    })
}

async fn both(test: impl AsyncFn(Backend)) {
    test(Backend::maestro().await).await;
    test(Backend::hub().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generation_bump_updates_the_work_and_the_report_follows_the_upgrade() {
    both(async |backend: Backend| {
        let b = backend.name();
        let pod = Pod::new();
        let first = pod.pulse(&backend, &cluster(3, |_| {}), &[], &[]).await;
        assert_eq!(first.reason("Applied"), "ManifestWorkCreated", "{b}");
        backend.feedback(&hc_status("4.17.0", "4.17.0", &[]), None);
        assert_eq!(backend.writes(), 1, "{b}");

        // Generation 4 changes the release: one update, only what the adapter builds.
        let v4 = cluster(4, |c| c["spec"]["openshift_version"] = "4.17.1".into());
        let updated = pod.pulse(&backend, &v4, &[], &[]).await;
        assert_eq!(
            updated.reasons(),
            triples(&[
                ("Applied", "True", "ManifestWorkUpdated"),
                ("Available", "False", "Updating"),
                ("Health", "True", "NoIssues"),
            ]),
            "{b}: {}",
            updated.logs
        );
        // The report describes generation 4, not reflected yet: the management cluster still
        // runs generation 3's control plane, which the message names. (HyperFleet keeps
        // LastKnownReconciled at 3 on a False about 4: generations/b.)
        assert_eq!(updated.report.observed_generation, Some(4), "{b}");
        assert!(
            updated
                .message("Available")
                .contains("HostedCluster of generation 3 on the management cluster: Available=True"),
            "{b}: {}",
            updated.message("Available")
        );
        assert_eq!(backend.writes(), 2, "{b}");
        let (meta, _) = backend.work().unwrap();
        assert_eq!(meta["annotations"]["hyperfleet.io/generation"], "4", "{b}");
        let hc = backend.hosted_cluster();
        assert_eq!(
            hc["spec"]["release"]["image"],
            "quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64",
            "{b}"
        );
        assert!(hc.get("status").is_none(), "{b}");
        assert!(hc["spec"].get("infraID").is_none(), "{b}");

        // Upgrade in progress: generation 4 (4.17.1) is not available yet, the control plane
        // still serves 4.17.0; nothing is wrong (Health True).
        backend.feedback(&hc_status("4.17.0", "4.17.1", &[]), None);
        let upgrading = pod.pulse(&backend, &v4, &[], &[]).await;
        assert_eq!(
            upgrading.reasons(),
            triples(&[
                ("Applied", "True", "ManifestWorkApplied"),
                ("Available", "False", "Upgrading"),
                ("Health", "True", "NoIssues"),
            ]),
            "{b}"
        );
        assert_eq!(upgrading.report.observed_generation, Some(4), "{b}");
        assert!(
            upgrading
                .message("Available")
                .contains("Upgrading from 4.17.0 to 4.17.1: the control plane still serves release 4.17.0"),
            "{b}: {}",
            upgrading.message("Available")
        );
        assert_eq!(upgrading.data("version"), "4.17.0", "{b}");
        assert_eq!(upgrading.data("desired_version"), "4.17.1", "{b}");
        assert_eq!(backend.writes(), 2, "{b}: a pulse of the same generation sends nothing");

        // Failed: Health carries the HostedCluster's message.
        let failing = json!({"type": "ClusterVersionSucceeding", "status": "False", "reason": "FromClusterVersion",
                             "message": "Could not update deployment openshift-apiserver/apiserver"});
        backend.feedback(&hc_status("4.17.0", "4.17.1", &[failing]), None);
        let failed = pod.pulse(&backend, &v4, &[], &[]).await;
        assert_eq!(failed.reason("Health"), "UpgradeFailed", "{b}");
        assert!(
            failed
                .message("Health")
                .contains("Could not update deployment openshift-apiserver/apiserver"),
            "{b}"
        );
        assert_eq!(failed.reason("Available"), "Upgrading", "{b}");

        // Complete.
        backend.feedback(&hc_status("4.17.1", "4.17.1", &[]), None);
        let done = pod.pulse(&backend, &v4, &[], &[]).await;
        assert_eq!(done.reason("Health"), "NoIssues", "{b}");
        assert_eq!(done.reason("Available"), "ControlPlaneReady", "{b}");
        assert_eq!(done.report.observed_generation, Some(4), "{b}");
        assert_eq!(done.data("version"), "4.17.1", "{b}");
        assert_eq!(done.data("desired_version"), "4.17.1", "{b}");
        assert_eq!(backend.writes(), 2, "{b}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_immutable_change_and_an_older_generation_send_nothing() {
    both(async |backend: Backend| {
        let b = backend.name();
        let pod = Pod::new();
        pod.pulse(&backend, &cluster(3, |_| {}), &[], &[]).await;
        backend.feedback(&hc_status("4.17.0", "4.17.0", &[]), None);
        let before = backend.hosted_cluster();

        let moved = cluster(4, |c| c["spec"]["gcp_region"] = "us-east1".into());
        let refused = pod.pulse(&backend, &moved, &[], &[]).await;
        assert_eq!(
            refused.reasons(),
            triples(&[
                ("Applied", "False", "ImmutableFieldChanged"),
                ("Available", "False", "ImmutableFieldChanged"),
                ("Health", "False", "ImmutableFieldChanged"),
            ]),
            "{b}"
        );
        assert!(
            refused.message("Applied").contains(
                r#"gcp_region (HostedCluster spec.platform.gcp.region): "europe-west2" → "us-east1""#
            ),
            "{b}: {}",
            refused.message("Applied")
        );
        assert_eq!(refused.report.observed_generation, Some(4), "{b}");
        assert_eq!(backend.writes(), 1, "{b}");
        assert_eq!(backend.hosted_cluster(), before, "{b}");

        // Generation 5 puts the region back and changes the release: updated.
        let v5 = cluster(5, |c| c["spec"]["openshift_version"] = "4.17.1".into());
        let updated = pod.pulse(&backend, &v5, &[], &[]).await;
        assert_eq!(updated.reason("Applied"), "ManifestWorkUpdated", "{b}");
        assert_eq!(backend.writes(), 2, "{b}");

        // A late pulse of generation 4 never rolls back.
        let late = pod.pulse(&backend, &cluster(4, |_| {}), &[], &[]).await;
        assert_eq!(late.reason("Applied"), "StaleGeneration", "{b}");
        assert!(
            late.message("Applied").contains("generation 4, older than generation 5"),
            "{b}"
        );
        assert_eq!(late.report.observed_generation, Some(5), "{b}");
        assert_eq!(backend.writes(), 2, "{b}");
        assert_eq!(
            backend.hosted_cluster()["spec"]["release"]["image"],
            "quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64",
            "{b}"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_waits_for_node_pools_then_deletes_then_is_finalized() {
    both(async |backend: Backend| {
        let b = backend.name();
        let pod = Pod::new();
        pod.pulse(&backend, &cluster(3, |_| {}), &[], &[]).await;
        backend.feedback(&hc_status("4.17.0", "4.17.0", &[]), None);
        let deleted_at = minutes_ago(1);
        let gone = deleting(4, &deleted_at);

        // NodePools listed: nothing deleted.
        let held = pod.pulse(&backend, &gone, &["workers-a"], &[]).await;
        assert_eq!(
            held.reasons(),
            triples(&[
                ("Applied", "False", "NodePoolsExist"),
                ("Available", "False", "NodePoolsExist"),
                ("Health", "True", "NoIssues"),
                ("Finalized", "False", "NodePoolsExist"),
            ]),
            "{b}"
        );
        assert!(
            held.message("Applied")
                .contains(&format!("workers-a ({NODEPOOL_ID})")),
            "{b}"
        );
        assert_eq!(held.report.observed_generation, Some(4), "{b}");
        assert_eq!(backend.writes(), 1, "{b}");
        assert!(
            backend.work().unwrap().0.get("deletionTimestamp").is_none(),
            "{b}"
        );

        // Without NodePools: one delete.
        let requested = pod.pulse(&backend, &gone, &[], &[]).await;
        assert_eq!(
            requested.reasons(),
            triples(&[
                ("Applied", "True", "DeletionRequested"),
                ("Available", "False", "Deleting"),
                ("Health", "True", "NoIssues"),
                ("Finalized", "False", "DeletionRequested"),
            ]),
            "{b}: {}",
            requested.logs
        );
        assert_eq!(backend.writes(), 2, "{b}");

        if let Backend::Maestro(_) = &backend {
            // In progress (the agent holds it: a HostedCluster finalizer): deleting twice is
            // safe, nothing more is sent.
            let again = pod.pulse(&backend, &gone, &[], &[]).await;
            assert_eq!(again.reason("Finalized"), "DeletionRequested", "{b}");
            assert!(again.message("Applied").contains("still there"), "{b}");
            assert_eq!(backend.writes(), 2, "{b}");
            backend.finish_deletion();
        }
        // Gone: Finalized, and every later pulse says so without sending anything.
        for _ in 0..2 {
            let done = pod.pulse(&backend, &gone, &[], &[]).await;
            assert_eq!(
                done.reasons(),
                triples(&[
                    ("Applied", "False", "CleanupConfirmed"),
                    ("Available", "False", "Deleted"),
                    ("Health", "True", "NoIssues"),
                    ("Finalized", "True", "CleanupConfirmed"),
                ]),
                "{b}"
            );
            assert_eq!(done.report.observed_generation, Some(4), "{b}");
        }
        assert!(backend.work().is_none(), "{b}");
        assert_eq!(backend.writes(), 2, "{b}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_deletion_names_its_finalizers_and_what_holds_them() {
    both(async |backend: Backend| {
        let b = backend.name();
        let pod = Pod::new();
        pod.pulse(&backend, &cluster(3, |_| {}), &[], &[]).await;
        backend.feedback(&hc_status("4.17.0", "4.17.0", &[]), None);
        // On the hub, an earlier pulse's DELETE is held by the agent's finalizer (the fake API
        // server deletes at once, so the held state is written directly).
        if let Backend::Hub(s) = &backend {
            let mut work = s
                .object(WORKS, "manifestworks", Some(CONSUMER), &work_name())
                .unwrap();
            work["metadata"]["finalizers"] =
                json!(["cluster.open-cluster-management.io/manifest-work-cleanup"]);
            work["metadata"]["deletionTimestamp"] = json!("2026-11-26T10:00:02Z");
            s.put_object(WORKS, Some(CONSUMER), work);
        }
        let gone = deleting(4, &minutes_ago(45));
        let first = pod.pulse(&backend, &gone, &[], &[]).await;
        assert_eq!(first.reason("Finalized"), "DeletionRequested", "{b}");
        // 45 minutes after deleted_time (default limit 30 min): stuck.
        assert_eq!(first.reason("Health"), "DeletionStuck", "{b}");
        match &backend {
            Backend::Maestro(_) => {
                // The recorded agent feeds nothing back while deleting: say how to read them.
                let health = first.message("Health");
                assert!(
                    health.contains("kubectl get hostedcluster -n clusters prod-eu-1"),
                    "{b}: {health}"
                );
                assert!(
                    health.contains("hypershift.io/gcp-oidc-discovery"),
                    "{b}: {health}"
                );
            }
            Backend::Hub(_) => {
                backend.feedback(
                    &hc_status("4.17.0", "4.17.0", &[]),
                    Some((
                        "2026-11-26T10:00:07Z",
                        &["hypershift.openshift.io/finalizer"],
                    )),
                );
                let stuck = pod.pulse(&backend, &gone, &[], &[]).await;
                assert_eq!(stuck.reason("Finalized"), "FinalizersRunning", "{b}");
                assert!(
                    stuck
                        .message("Finalized")
                        .contains("hypershift.openshift.io/finalizer"),
                    "{b}"
                );
                let health = stuck.message("Health");
                assert!(health.contains("CAPI Cluster"), "{b}: {health}");
            }
        }
        // A longer limit: not stuck.
        let patient = pod
            .pulse(&backend, &gone, &[], &[("DELETION_STUCK_AFTER", "2h")])
            .await;
        assert_eq!(patient.reason("Health"), "NoIssues", "{b}");
        // One delete on Maestro; none on the hub, whose work was already being deleted.
        let deletes = usize::from(matches!(backend, Backend::Maestro(_)));
        assert_eq!(backend.writes(), 1 + deletes, "{b}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleting_cluster_from_a_file_without_a_node_pool_list_is_held() {
    let backend = Backend::maestro().await;
    let pod = Pod::new();
    pod.pulse(&backend, &cluster(3, |_| {}), &[], &[]).await;
    std::fs::write(&pod.spec, deleting(4, &minutes_ago(1))).unwrap();
    let env: Vec<(String, String)> = pod
        .env(&backend)
        .into_iter()
        .filter(|(k, _)| k != "NODEPOOLS_FILE")
        .collect();
    let _ = std::fs::remove_file(&pod.results);
    let out = Command::new(testbed::binaries::path("hypershift-adapter"))
        .arg("controlplane")
        .env_clear()
        .envs(env)
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report = job_report::parse(&std::fs::read(&pod.results).unwrap(), "Available").unwrap();
    assert_eq!(
        report.condition("Applied").unwrap().reason,
        "NodePoolsUnknown"
    );
    assert_eq!(
        report.condition("Finalized").unwrap().reason,
        "NodePoolsUnknown"
    );
    assert!(
        report
            .condition("Health")
            .unwrap()
            .message
            .contains("NODEPOOLS_FILE")
    );
    assert_eq!(backend.writes(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_pools_are_read_from_the_hyperfleet_api() {
    use axum::extract::{Path as UrlPath, State};
    use axum::routing::get;
    use std::sync::{Arc, Mutex};

    type Shared = Arc<Mutex<(String, Vec<Value>)>>;
    async fn one(
        State(s): State<Shared>,
        UrlPath(id): UrlPath<String>,
    ) -> (http::StatusCode, String) {
        if id != ID {
            return (http::StatusCode::NOT_FOUND, "{}".into());
        }
        (http::StatusCode::OK, s.lock().unwrap().0.clone())
    }
    async fn pools(
        State(s): State<Shared>,
        UrlPath(id): UrlPath<String>,
    ) -> (http::StatusCode, String) {
        if id != ID {
            return (http::StatusCode::NOT_FOUND, "{}".into());
        }
        let items = s.lock().unwrap().1.clone();
        let total = items.len();
        (
            http::StatusCode::OK,
            json!({"items": items, "page": 1, "size": total, "total": total}).to_string(),
        )
    }
    let deleted_at = minutes_ago(1);
    let shared: Shared = Arc::new(Mutex::new((
        deleting(4, &deleted_at),
        vec![
            json!({"id": NODEPOOL_ID, "kind": "NodePool", "name": "workers-a", "deleted_time": deleted_at}),
        ],
    )));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .route("/api/hyperfleet/v1/clusters/{id}", get(one))
        .route("/api/hyperfleet/v1/clusters/{id}/nodepools", get(pools))
        .with_state(Arc::clone(&shared));
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let backend = Backend::maestro().await;
    let pod = Pod::new();
    pod.pulse(&backend, &cluster(3, |_| {}), &[], &[]).await;
    let env: Vec<(String, String)> = pod
        .env(&backend)
        .into_iter()
        .filter(|(k, _)| k != "CLUSTER_SPEC_FILE" && k != "NODEPOOLS_FILE")
        .chain([
            ("HYPERFLEET_API_URL".to_owned(), api.clone()),
            ("CLUSTER_ID".to_owned(), ID.to_owned()),
        ])
        .collect();
    let run = || async {
        let _ = std::fs::remove_file(&pod.results);
        let out = Command::new(testbed::binaries::path("hypershift-adapter"))
            .arg("controlplane")
            .env_clear()
            .envs(env.clone())
            .output()
            .await
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        job_report::parse(&std::fs::read(&pod.results).unwrap(), "Available").unwrap()
    };
    let held = run().await;
    assert_eq!(held.condition("Applied").unwrap().reason, "NodePoolsExist");
    assert!(
        held.condition("Applied")
            .unwrap()
            .message
            .contains(&format!(
                "workers-a ({NODEPOOL_ID}, deleting since {deleted_at})"
            ))
    );
    assert_eq!(backend.writes(), 1);
    shared.lock().unwrap().1.clear();
    let requested = run().await;
    assert_eq!(
        requested.condition("Finalized").unwrap().reason,
        "DeletionRequested"
    );
    assert_eq!(backend.writes(), 2);
    server.abort();
}

/// Runs the status-reporter of a pulse Job for `generation` while `pulse` runs the adapter, and
/// returns the Job's `(type, status, reason)` conditions, sorted, and the Job.
async fn with_reporter(
    server: &ApiServer,
    pod: &Pod,
    generation: i32,
    pulse: impl Future<Output = Pulse>,
) -> (Vec<(String, String, String)>, testbed::pulse_job::PulseJob) {
    // The reporter must not find the previous pulse's report.
    let _ = std::fs::remove_file(&pod.results);
    let job = testbed::pulse_job::PulseJob::seed(
        server,
        "hyperfleet",
        &testbed::pulse_job::controlplane_job_name(ID, generation),
        Some(600),
    );
    let kubeconfig = server.write_kubeconfig(pod.dir.path());
    let reporter = Command::new(testbed::binaries::path("status-reporter"))
        .env_clear()
        .envs(job.reporter_env(&kubeconfig, &pod.results))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    pulse.await;
    let out = tokio::time::timeout(Duration::from_secs(30), reporter.wait_with_output())
        .await
        .expect("the reporter did not exit")
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut conditions: Vec<(String, String, String)> = job
        .conditions(server)
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (s("type"), s("status"), s("reason"))
        })
        .collect();
    conditions.sort();
    (conditions, job)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_reporter_puts_the_upgrade_and_finalized_on_the_job() {
    let backend = Backend::maestro().await;
    let jobs = ApiServer::start().await;
    let pod = Pod::new();
    pod.pulse(&backend, &cluster(3, |_| {}), &[], &[]).await;
    backend.feedback(&hc_status("4.17.0", "4.17.1", &[]), None);
    let (conditions, job) = with_reporter(
        &jobs,
        &pod,
        3,
        pod.pulse(&backend, &cluster(3, |_| {}), &[], &[]),
    )
    .await;
    // The work carries generation 3, whose spec asks for 4.17.0 while the HostedCluster rolls
    // out 4.17.1: a rollout in progress is not available at the generation reported.
    assert_eq!(
        conditions,
        triples(&[
            ("Applied", "True", "ManifestWorkApplied"),
            ("Available", "False", "Upgrading"),
            ("Health", "True", "NoIssues"),
        ])
    );
    assert_eq!(
        job.annotation(&jobs, "data.hyperfleet.io/desired_version")
            .as_deref(),
        Some("4.17.1")
    );
    assert_eq!(
        job.annotation(&jobs, "data.hyperfleet.io/version")
            .as_deref(),
        Some("4.17.0")
    );

    let gone = deleting(4, &minutes_ago(1));
    let (conditions, _) = with_reporter(&jobs, &pod, 4, pod.pulse(&backend, &gone, &[], &[])).await;
    assert_eq!(
        conditions,
        triples(&[
            ("Applied", "True", "DeletionRequested"),
            ("Available", "False", "Deleting"),
            ("Finalized", "False", "DeletionRequested"),
            ("Health", "True", "NoIssues"),
        ])
    );
    backend.finish_deletion();
    // The framework renders the next pulse at the same (deletion) generation; a fresh Job here.
    jobs.delete_job(
        "hyperfleet",
        &testbed::pulse_job::controlplane_job_name(ID, 4),
    );
    let (conditions, job) =
        with_reporter(&jobs, &pod, 4, pod.pulse(&backend, &gone, &[], &[])).await;
    assert_eq!(
        conditions,
        triples(&[
            ("Applied", "False", "CleanupConfirmed"),
            ("Available", "False", "Deleted"),
            ("Finalized", "True", "CleanupConfirmed"),
            ("Health", "True", "NoIssues"),
        ])
    );
    assert_eq!(
        job.annotation(&jobs, "hyperfleet.io/observed-generation")
            .as_deref(),
        Some("4")
    );
}
