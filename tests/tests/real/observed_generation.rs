//! Issue 23 on the real servers: the real Maestro server and agent apply the adapter's work to
//! the real kube-apiserver, whose HostedCluster/NodePool CRDs bump `metadata.generation` on a
//! spec change; the HyperShift operator is played on that API server
//! (`testbed::real::operator`), writing its status when the test says so. In the window between
//! the agent's apply of an update and the operator's next status write, the pulse at the new
//! generation must report `Available=False AwaitingOperator` (never True, which is what it said
//! before the fix), and True again once the operator's status observes the new generation and the
//! rollout completes.
//!
//! The pulses are the real `hypershift-adapter` binary with the production flags (the cluster or
//! NodePool object as a file; Maestro's REST and gRPC endpoints; a consumer of this test with its
//! own agent); the report file is what the status-reporter would put on the Job.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use testbed::nodepool::{NodePoolStatus, gcp_spec, nodepool_object};
use testbed::real::operator::{HostedClusterStage, Operator};
use testbed::real::{RealSystems, kube_access, unique};

const SUITE: &str = "real::observed_generation";
/// How long the real agent may take to apply a work and feed its status back (its status sync
/// runs every 10 s).
const AGENT: Duration = Duration::from_secs(90);
const VERSION: &str = "4.17.0";
const UPGRADE: &str = "4.17.1";
const NODEPOOL_NAME: &str = "workers-euw2-a1";

/// One cluster of this test on the kit: its ids, its consumer, the played operator, a directory.
struct Bed {
    real: &'static RealSystems,
    consumer: String,
    cluster_id: String,
    nodepool_id: String,
    name: String,
    operator: Operator,
    dir: tempfile::TempDir,
}

/// `(type, status, reason)` of a report's conditions, in order.
fn summary(report: &Value) -> Vec<(String, String, String)> {
    report["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (s("type"), s("status"), s("reason"))
        })
        .collect()
}

fn condition<'a>(report: &'a Value, type_: &str) -> &'a Value {
    report["conditions"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

fn available(report: &Value) -> (String, String) {
    let c = condition(report, "Available");
    (
        c["status"].as_str().unwrap_or_default().to_owned(),
        c["reason"].as_str().unwrap_or_default().to_owned(),
    )
}

impl Bed {
    async fn start(real: &'static RealSystems, prefix: &str) -> Bed {
        let consumer = real.consumer(&unique(prefix));
        let kube = real.kube_client().await.unwrap();
        kube_access::ensure_namespace(&kube, testbed::real::operator::NAMESPACE)
            .await
            .unwrap();
        Bed {
            real,
            consumer,
            cluster_id: testbed::ids::cluster_id(fastrand::u64(..)),
            nodepool_id: testbed::ids::cluster_id(fastrand::u64(..)),
            name: unique(prefix),
            operator: Operator::new(kube),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// The HyperFleet cluster at `generation` running `version` (the fixture's spec).
    fn cluster(&self, generation: i64, version: &str) -> Value {
        let mut cluster: Value = serde_json::from_str(include_str!(
            "../../../adapter/tests/fixtures/cluster-valid.json"
        ))
        .unwrap();
        cluster["id"] = self.cluster_id.clone().into();
        cluster["name"] = self.name.clone().into();
        cluster["generation"] = generation.into();
        cluster["spec"]["openshift_version"] = version.into();
        cluster["spec"]["issuer_url"] = format!(
            "https://storage.googleapis.com/hyperfleet-oidc-{}",
            self.cluster_id
        )
        .into();
        cluster
    }

    /// The NodePool's HyperShift name: `<nodepool name>-<cluster id>`.
    fn nodepool_name(&self) -> String {
        format!("{NODEPOOL_NAME}-{}", self.cluster_id)
    }

    fn env(&self, results: &Path) -> Vec<(&'static str, String)> {
        vec![
            (
                "MAESTRO_API_URL",
                self.real.var("MAESTRO_API_URL").to_owned(),
            ),
            (
                "MAESTRO_GRPC_URL",
                self.real.var("MAESTRO_GRPC_URL").to_owned(),
            ),
            ("MANAGEMENT_CLUSTER_CONSUMER", self.consumer.clone()),
            ("RESULTS_OUTPUT_PATH", results.display().to_string()),
            ("RETRY_BUDGET_SECONDS", "20".to_owned()),
            ("LOG_FORMAT", "plain".to_owned()),
        ]
    }

    /// One pulse of `subcommand` (`controlplane`, `nodepool`) for `object` (written to a file and
    /// passed with `file_var`): the report it wrote.
    fn pulse(&self, subcommand: &str, file_var: &str, object: &Value) -> Value {
        let file = self.dir.path().join(format!("{subcommand}.json"));
        std::fs::write(&file, object.to_string()).unwrap();
        let results: PathBuf = self.dir.path().join("adapter-report.json");
        let _ = std::fs::remove_file(&results);
        let mut cmd = Command::new(testbed::binaries::path("hypershift-adapter"));
        cmd.arg(subcommand)
            .env_clear()
            .envs(self.env(&results))
            .env(file_var, &file)
            .env("GENERATION", object["generation"].to_string());
        if subcommand == "nodepool" {
            cmd.env("CLUSTER_ID", &self.cluster_id);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{subcommand} exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap()
    }

    fn controlplane(&self, generation: i64, version: &str) -> Value {
        self.pulse(
            "controlplane",
            "CLUSTER_SPEC_FILE",
            &self.cluster(generation, version),
        )
    }

    fn nodepool(&self, generation: i64, replicas: i64) -> Value {
        let object = nodepool_object(
            &self.nodepool_id,
            NODEPOOL_NAME,
            &self.cluster_id,
            generation,
            gcp_spec(replicas, VERSION),
        );
        self.pulse("nodepool", "NODEPOOL_SPEC_FILE", &object)
    }

    /// Pulses (`pulse`) until one's Available is `want`; every report on the way must pass
    /// `each` (e.g. never True in the operator's window). The last report.
    async fn until(
        &self,
        what: &str,
        want: (&str, &str),
        mut pulse: impl FnMut() -> Value,
        each: impl Fn(&Value),
    ) -> Value {
        let deadline = tokio::time::Instant::now() + AGENT;
        let mut seen = Vec::new();
        loop {
            let report = pulse();
            each(&report);
            let got = available(&report);
            if (got.0.as_str(), got.1.as_str()) == want {
                return report;
            }
            seen.push(summary(&report));
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what}: no Available={want:?} within {AGENT:?}; saw {seen:?}; agent log:\n{}",
                self.real
                    .log_tail(&format!("maestro-agent-{}", self.consumer), 20)
            );
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }

    /// Waits until the management cluster's object of `get` passes `ok`.
    async fn object_until<F, Fut>(&self, what: &str, get: F, ok: impl Fn(&Value) -> bool) -> Value
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Option<Value>>,
    {
        let deadline = tokio::time::Instant::now() + AGENT;
        loop {
            if let Some(object) = get().await
                && ok(&object)
            {
                return object;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what} within {AGENT:?}"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    async fn hosted_cluster(&self) -> Option<Value> {
        self.operator.hosted_cluster(&self.name).await.unwrap()
    }

    /// Create, the operator takes the HostedCluster over and reports it available: the pulse at
    /// generation 1 says `ControlPlaneReady`.
    async fn control_plane_serves(&self) {
        let created = self.controlplane(1, VERSION);
        assert_eq!(available(&created).1, "Provisioning", "{created}");
        self.object_until(
            "the HostedCluster applied",
            || self.hosted_cluster(),
            |_| true,
        )
        .await;
        self.operator
            .write_hosted_cluster(&self.name, HostedClusterStage::Available)
            .await
            .unwrap();
        self.until(
            "generation 1 available",
            ("True", "ControlPlaneReady"),
            || self.controlplane(1, VERSION),
            |_| {},
        )
        .await;
    }
}

fn never_true(report: &Value) {
    assert_ne!(
        available(report).0,
        "True",
        "Available=True before the operator observed the applied spec: {report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_the_operator_has_not_observed_is_not_available_until_it_completes() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::start(real, "obsgen-cp").await;
    bed.control_plane_serves().await;
    let before = bed.hosted_cluster().await.unwrap();
    let generation_before = before["metadata"]["generation"].as_i64().unwrap();

    // HyperFleet bumps the cluster to generation 2 (release 4.17.1): the work is updated.
    let updated = bed.controlplane(2, UPGRADE);
    assert_eq!(
        summary(&updated)[..2],
        [
            (
                "Applied".into(),
                "True".into(),
                "ManifestWorkUpdated".into()
            ),
            ("Available".into(), "False".into(), "Updating".into()),
        ],
        "{updated}"
    );
    // The real agent applies it: the real API server bumps the HostedCluster's generation; the
    // operator's status still says the previous one.
    let applied = bed
        .object_until(
            "the update applied",
            || bed.hosted_cluster(),
            |hc| {
                hc["spec"]["release"]["image"]
                    .as_str()
                    .is_some_and(|i| i.contains(UPGRADE))
            },
        )
        .await;
    let generation_applied = applied["metadata"]["generation"].as_i64().unwrap();
    assert_eq!(generation_applied, generation_before + 1, "{applied}");

    let awaiting = bed
        .until(
            "the operator's window",
            ("False", "AwaitingOperator"),
            || bed.controlplane(2, UPGRADE),
            never_true,
        )
        .await;
    assert_eq!(awaiting["observed_generation"], 2);
    let message = condition(&awaiting, "Available")["message"]
        .as_str()
        .unwrap();
    for part in [
        format!("the object is at metadata.generation {generation_applied}"),
        format!("its status describes generation {generation_before}"),
        "the HyperShift operator".to_owned(),
    ] {
        assert!(message.contains(&part), "{part:?} not in {message}");
    }
    assert_eq!(
        condition(&awaiting, "Health")["status"],
        "True",
        "within the bound: {awaiting}"
    );

    // The operator reconciles: rolling 4.17.1 out (Upgrading), then completed (ready).
    bed.operator
        .write_hosted_cluster(&bed.name, HostedClusterStage::RollingOut)
        .await
        .unwrap();
    bed.until(
        "the rollout",
        ("False", "Upgrading"),
        || bed.controlplane(2, UPGRADE),
        never_true,
    )
    .await;
    bed.operator
        .write_hosted_cluster(&bed.name, HostedClusterStage::Available)
        .await
        .unwrap();
    let ready = bed
        .until(
            "generation 2 available",
            ("True", "ControlPlaneReady"),
            || bed.controlplane(2, UPGRADE),
            |_| {},
        )
        .await;
    assert_eq!(ready["data"]["version"], UPGRADE, "{ready}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nodepool_scale_the_operator_has_not_observed_is_not_available() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::start(real, "obsgen-np").await;
    bed.control_plane_serves().await;
    let np = bed.nodepool_name();
    let get = || async { bed.operator.nodepool(&np).await.unwrap() };

    let created = bed.nodepool(1, 3);
    assert_eq!(available(&created).1, "Provisioning", "{created}");
    bed.object_until("the NodePool applied", get, |_| true)
        .await;
    bed.operator
        .write_nodepool(&np, NodePoolStatus::gcp_ready(3, VERSION).to_json())
        .await
        .unwrap();
    bed.until(
        "3 replicas ready",
        ("True", "NodePoolReady"),
        || bed.nodepool(1, 3),
        |_| {},
    )
    .await;

    // Scale to 5 at generation 2; applied by the real agent; the operator has not looked yet
    // (its status: Ready, 3 of 3, observedGeneration 1).
    let updated = bed.nodepool(2, 5);
    assert_eq!(available(&updated).1, "Updating", "{updated}");
    bed.object_until("the scale applied", get, |o| o["spec"]["replicas"] == 5)
        .await;
    let awaiting = bed
        .until(
            "the operator's window",
            ("False", "AwaitingOperator"),
            || bed.nodepool(2, 5),
            never_true,
        )
        .await;
    let message = condition(&awaiting, "Available")["message"]
        .as_str()
        .unwrap();
    assert!(
        message.contains("the object is at metadata.generation 2")
            && message.contains("its status describes generation 1"),
        "{message}"
    );
    bed.operator
        .write_nodepool(&np, NodePoolStatus::gcp_ready(5, VERSION).to_json())
        .await
        .unwrap();
    bed.until(
        "5 replicas ready",
        ("True", "NodePoolReady"),
        || bed.nodepool(2, 5),
        |_| {},
    )
    .await;
}
