//! Pulses run directly against a kit's real Maestro server and agent (no framework, no Job): the
//! real `hypershift-adapter` binary with the production flags (the cluster or NodePool object as
//! a file, or the cluster read from the kit's HyperFleet API as the shipped Job does; Maestro's
//! REST and gRPC endpoints; a consumer of the test with its own agent), the HyperShift operator
//! played on the kit's API server (`testbed::real::operator`). The report file is what the
//! status-reporter would put on the Job.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use testbed::nodepool::{gcp_spec, nodepool_object};
use testbed::real::operator::{HostedClusterStage, Operator};
use testbed::real::works::Sweep;
use testbed::real::{RealSystems, kube_access, unique};

/// How long the real agent may take to apply a work and feed its status back (its status sync
/// runs every 10 s).
pub const AGENT: Duration = Duration::from_secs(90);
pub const VERSION: &str = "4.17.0";
pub const UPGRADE: &str = "4.17.1";
pub const NODEPOOL_NAME: &str = "workers-euw2-a1";
/// The adapter's retry budget for Maestro in these pulses (shipped: 240 s).
pub const RETRY_BUDGET: Duration = Duration::from_secs(20);

/// One cluster of a test on a kit: its ids, its consumer, the played operator, a directory.
pub struct Bed {
    pub real: &'static RealSystems,
    pub consumer: String,
    /// The HyperFleet cluster id (the API's, when the cluster was created there).
    pub cluster_id: String,
    pub nodepool_id: String,
    pub name: String,
    pub operator: Operator,
    dir: tempfile::TempDir,
    pulses: AtomicU32,
    /// The consumer's works, deleted when the test ends.
    _works: Sweep,
}

/// Where a pulse reads its cluster or NodePool from.
pub enum Source<'a> {
    /// The object, written to a file and named by this variable (`CLUSTER_SPEC_FILE`, …).
    File(&'static str, &'a Value),
    /// `GET {HYPERFLEET_API_URL}/api/hyperfleet/v1/clusters/{CLUSTER_ID}`, as the shipped Job
    /// does, at this generation (`GENERATION`, the framework's).
    Api(i64),
}

/// A finished pulse: how the adapter exited, its report (if it wrote one), how long it took.
#[derive(Debug)]
pub struct Ran {
    pub code: Option<i32>,
    pub report: Option<Value>,
    pub stderr: String,
    pub took: Duration,
}

impl Ran {
    /// The report of a pulse that exited 0 (it always writes one then).
    ///
    /// # Panics
    /// When it did not.
    pub fn report(self) -> Value {
        assert!(
            self.code == Some(0),
            "the adapter exited {:?}: {}",
            self.code,
            self.stderr
        );
        self.report.expect("exit 0 without a report")
    }
}

/// `(type, status, reason)` of a report's conditions, in order.
pub fn summary(report: &Value) -> Vec<(String, String, String)> {
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

pub fn condition<'a>(report: &'a Value, type_: &str) -> &'a Value {
    report["conditions"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

pub fn available(report: &Value) -> (String, String) {
    let c = condition(report, "Available");
    (
        c["status"].as_str().unwrap_or_default().to_owned(),
        c["reason"].as_str().unwrap_or_default().to_owned(),
    )
}

/// `[(type, status, reason)]` from literals.
pub fn expect(rows: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    rows.iter()
        .map(|(t, s, r)| ((*t).to_owned(), (*s).to_owned(), (*r).to_owned()))
        .collect()
}

/// Fails unless the report's first conditions are `rows`.
pub fn assert_leads(report: &Value, rows: &[(&str, &str, &str)]) {
    let got = summary(report);
    assert_eq!(got[..rows.len().min(got.len())], expect(rows), "{report}");
}

/// Fails when a report says Available=True.
pub fn never_true(report: &Value) {
    assert_ne!(
        available(report).0,
        "True",
        "Available=True before the management cluster reflected the generation: {report}"
    );
}

impl Bed {
    /// A bed on `real` with a consumer (and agent) of its own.
    pub async fn start(real: &'static RealSystems, prefix: &str) -> Bed {
        let consumer = real.consumer(&unique(prefix));
        let kube = real.kube_client().await.unwrap();
        kube_access::ensure_namespace(&kube, testbed::real::operator::NAMESPACE)
            .await
            .unwrap();
        Bed {
            real,
            cluster_id: testbed::ids::cluster_id(fastrand::u64(..)),
            nodepool_id: testbed::ids::cluster_id(fastrand::u64(..)),
            name: unique(prefix),
            operator: Operator::new(kube),
            dir: tempfile::tempdir().unwrap(),
            pulses: AtomicU32::new(0),
            _works: Sweep::consumer(real, &consumer),
            consumer,
        }
    }

    /// The HyperFleet cluster at `generation` running `version` (the fixture's spec).
    pub fn cluster(&self, generation: i64, version: &str) -> Value {
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
    pub fn nodepool_name(&self) -> String {
        format!("{NODEPOOL_NAME}-{}", self.cluster_id)
    }

    /// The adapter's command for one pulse of `subcommand` reading `source`, with Maestro retry
    /// budget `budget`, and the report file it writes.
    pub fn command(
        &self,
        subcommand: &str,
        source: &Source<'_>,
        budget: Duration,
    ) -> (Command, PathBuf) {
        let n = self.pulses.fetch_add(1, Ordering::Relaxed);
        let results = self.dir.path().join(format!("report-{n}.json"));
        let mut cmd = Command::new(testbed::binaries::path("hypershift-adapter"));
        cmd.arg(subcommand)
            .env_clear()
            .env("MAESTRO_API_URL", self.real.var("MAESTRO_API_URL"))
            .env("MAESTRO_GRPC_URL", self.real.var("MAESTRO_GRPC_URL"))
            .env("MANAGEMENT_CLUSTER_CONSUMER", &self.consumer)
            .env("RESULTS_OUTPUT_PATH", &results)
            .env("RETRY_BUDGET_SECONDS", budget.as_secs().to_string())
            .env("LOG_FORMAT", "plain");
        match source {
            Source::File(var, object) => {
                let file = self.dir.path().join(format!("{subcommand}-{n}.json"));
                std::fs::write(&file, object.to_string()).unwrap();
                cmd.env(var, &file)
                    .env("GENERATION", object["generation"].to_string());
            }
            Source::Api(generation) => {
                cmd.env("HYPERFLEET_API_URL", self.real.var("HYPERFLEET_API_URL"))
                    .env("CLUSTER_ID", &self.cluster_id)
                    .env("GENERATION", generation.to_string());
            }
        }
        if subcommand == "nodepool" {
            cmd.env("CLUSTER_ID", &self.cluster_id);
        }
        (cmd, results)
    }

    /// Runs one pulse to its end.
    pub fn run(&self, subcommand: &str, source: &Source<'_>, budget: Duration) -> Ran {
        let (cmd, results) = self.command(subcommand, source, budget);
        finish(cmd, results)
    }

    /// One pulse of `subcommand` for `object` (passed as a file in `file_var`): the report.
    pub fn pulse(&self, subcommand: &str, file_var: &'static str, object: &Value) -> Value {
        self.run(subcommand, &Source::File(file_var, object), RETRY_BUDGET)
            .report()
    }

    pub fn controlplane(&self, generation: i64, version: &str) -> Value {
        self.pulse(
            "controlplane",
            "CLUSTER_SPEC_FILE",
            &self.cluster(generation, version),
        )
    }

    pub fn nodepool(&self, generation: i64, replicas: i64) -> Value {
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
    pub async fn until(
        &self,
        what: &str,
        want: (&str, &str),
        pulse: impl FnMut() -> Value,
        each: impl Fn(&Value),
    ) -> Value {
        self.until_saying(what, want, &[], pulse, each).await
    }

    /// [`Bed::until`], and Available's message contains every one of `parts` (the agent feeds
    /// back an apply on its next status sync: until then the report may have the right reason
    /// for an older reading).
    pub async fn until_saying(
        &self,
        what: &str,
        want: (&str, &str),
        parts: &[String],
        mut pulse: impl FnMut() -> Value,
        each: impl Fn(&Value),
    ) -> Value {
        let deadline = tokio::time::Instant::now() + AGENT;
        let mut seen = Vec::new();
        loop {
            let report = pulse();
            each(&report);
            let got = available(&report);
            let message = condition(&report, "Available")["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if (got.0.as_str(), got.1.as_str()) == want
                && parts.iter().all(|part| message.contains(part.as_str()))
            {
                return report;
            }
            seen.push(summary(&report));
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what}: no Available={want:?} saying {parts:?} within {AGENT:?}; saw {seen:?}; \
                 the last message: {message}; agent log:\n{}",
                self.real
                    .log_tail(&format!("maestro-agent-{}", self.consumer), 20)
            );
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }

    /// Waits until the management cluster's object of `get` passes `ok`.
    pub async fn object_until<F, Fut>(
        &self,
        what: &str,
        get: F,
        ok: impl Fn(&Value) -> bool,
    ) -> Value
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

    pub async fn hosted_cluster(&self) -> Option<Value> {
        self.operator.hosted_cluster(&self.name).await.unwrap()
    }

    /// The HostedCluster's release image contains `version`.
    pub async fn hosted_cluster_at(&self, version: &str) -> Value {
        self.object_until(
            &format!("the HostedCluster at {version}"),
            || self.hosted_cluster(),
            |hc| {
                hc["spec"]["release"]["image"]
                    .as_str()
                    .is_some_and(|i| i.contains(version))
            },
        )
        .await
    }

    /// Create, the operator takes the HostedCluster over and reports it available: the pulse at
    /// generation 1 says `ControlPlaneReady`.
    pub async fn control_plane_serves(&self) {
        let created = self.controlplane(1, VERSION);
        assert_eq!(available(&created).1, "Provisioning", "{created}");
        self.control_plane_available(1, VERSION, |_| {}).await;
    }

    /// Once the HostedCluster is applied, the operator reports it available, and pulses at
    /// `generation` (`version`) go on until `ControlPlaneReady`; every report on the way passes
    /// `each`. The last report.
    pub async fn control_plane_available(
        &self,
        generation: i64,
        version: &str,
        each: impl Fn(&Value),
    ) -> Value {
        self.hosted_cluster_at(version).await;
        self.operator_completes(generation, version, each).await
    }

    /// The operator reports the HostedCluster available with its release completed; pulses at
    /// `generation` (`version`) go on until `ControlPlaneReady`, each report passing `each`. The
    /// last report, whose `data.version` is `version`.
    pub async fn operator_completes(
        &self,
        generation: i64,
        version: &str,
        each: impl Fn(&Value),
    ) -> Value {
        self.operator
            .write_hosted_cluster(&self.name, HostedClusterStage::Available)
            .await
            .unwrap();
        let ready = self
            .until(
                &format!("generation {generation} available"),
                ("True", "ControlPlaneReady"),
                || self.controlplane(generation, version),
                each,
            )
            .await;
        assert_eq!(ready["data"]["version"], version, "{ready}");
        ready
    }

    /// The Maestro resource bundles of this bed's consumer, as the REST API lists them.
    pub async fn bundles(&self) -> Vec<Value> {
        let url = format!(
            "{}/api/maestro/v1/resource-bundles?search=consumer_name='{}'",
            self.real.var("MAESTRO_API_URL"),
            self.consumer
        );
        let list: Value = reqwest::get(url).await.unwrap().json().await.unwrap();
        list["items"].as_array().cloned().unwrap_or_default()
    }
}

/// Runs a prepared pulse and reads its report.
pub fn finish(mut cmd: Command, results: PathBuf) -> Ran {
    let started = Instant::now();
    let Output { status, stderr, .. } = cmd.output().unwrap();
    let took = started.elapsed();
    let report = std::fs::read_to_string(&results)
        .ok()
        .map(|text| serde_json::from_str(&text).unwrap());
    Ran {
        code: status.code(),
        report,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        took,
    }
}
