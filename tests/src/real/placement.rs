//! Placement across management clusters on the kit's real servers (issue 24 item 3c): one test's
//! world ([`PlacementBed::start`]):
//!
//! - a region of its own (`spec.region` of its `ManagementCluster` entities and
//!   `platform.gcp.region` of its clusters, so the adapter's candidate search
//!   `spec.region='<r>'` on the real HyperFleet API finds this test's entities only);
//! - `ManagementCluster` entities created through the real API, each naming a Maestro consumer
//!   with its own real work agent, whose health is what the real API aggregates from the
//!   `mgmt-health` reports the test PUTs ([`PlacementBed::report_health`]);
//! - a Maestro source id of its own (`MAESTRO_SOURCE_ID`), so that the control planes counted on
//!   a consumer (`source='<s>' and consumer_name=…`) are this test's even on consumers several
//!   tests share ([`shared_consumers`]);
//! - a namespace of its own for the pulse Jobs, holding `manifests/rbac.yaml` as shipped (the
//!   namespace substituted), and the adapter's kubeconfig: a token of that ServiceAccount from the
//!   real TokenRequest API, so the placement Leases are taken on the real API server with exactly
//!   the Role's grants.
//!
//! A pulse ([`PlacementBed::pulse`]) is the built `hypershift-adapter controlplane` with the Job's
//! environment in the HyperFleet inventory mode (`MANAGEMENT_CLUSTERS_FROM_API=true`): it reads
//! the cluster and the candidates from the real API, counts and publishes through the real Maestro
//! and takes the Lease on the real API server. [`PlacementBed::report`] hands its report to the
//! real API as the framework's `statusPayload` would (the shipped task config: the Job's
//! Applied/Available/Health, Finalized False while not deleting, the `data` keys).
//!
//! The HostedClusters the real agents apply land in `clusters` on the kit's API server (every
//! agent applies there); which bundle applied one is its ownerReference, the agent's
//! AppliedManifestWork `<hub hash>-<bundle id>` ([`applied_bundle`]).

use hypershift_adapter::hyperfleet::{ADAPTER_LABEL, CLUSTER_ID_LABEL, CONTROLPLANE_ADAPTER};
use hypershift_adapter::work::maestro::rest::label_search;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use anyhow::{Context, bail};
use hypershift_adapter::work::maestro::bundle::ResourceBundle;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use serde_json::{Map, Value, json};

use super::agents::add_consumers;
use super::hyperfleet_api::{HyperfleetApi, PREFIX};
use super::kube_access::{apply, ensure_namespace, service_account_kubeconfig};
use super::operator::Operator;
use super::works::{Sweep, bundles};
use super::{RealSystems, unique};
use crate::hyperfleet::fake_api::management::{HEALTH_ADAPTER, PLURAL, health_report};

/// The ServiceAccount of the pulse Jobs (`manifests/rbac.yaml`).
pub const JOB_SERVICE_ACCOUNT: &str = "hypershift-adapter";
/// The namespace `manifests/rbac.yaml` (and `rbac-diagnose.yaml`) name, substituted per test.
pub const SHIPPED_NAMESPACE: &str = "hyperfleet-system";
/// The other adapters HyperFleet requires for a cluster (the test plays them).
pub const OTHER_CLUSTER_ADAPTERS: [&str; 3] = ["validation", "dns", "pullsecret"];
/// The adapter's `RETRY_BUDGET_SECONDS` in these pulses.
const RETRY_BUDGET_SECONDS: &str = "20";

/// How long the real agents may take to apply a work or feed a status change back.
pub const AGENT: Duration = Duration::from_secs(60);

/// How many consumers with agents a test may stop ([`own_consumer`]) per test binary run.
pub const OWN_CONSUMERS: usize = 2;

/// The consumers with their own agents the placement suites use: three `shared` ones, the kit's
/// base consumers, on which tests keep apart by their Maestro source ids and regions and never
/// stop an agent, and [`OWN_CONSUMERS`] handed out one per test that stops its agent, all
/// registered in one `up` on first use (each `up` takes the kit's lock and checks every
/// component, 10–40 s on a loaded machine, and every agent keeps running until the kit's `down`).
#[derive(Debug)]
pub struct SuiteConsumers {
    pub shared: [String; 3],
    own: Mutex<Vec<String>>,
}

/// The suites' consumers (see [`SuiteConsumers`]).
///
/// # Panics
/// When the kit cannot add them.
pub fn suite_consumers(real: &RealSystems) -> &'static SuiteConsumers {
    static SUITE: OnceLock<SuiteConsumers> = OnceLock::new();
    SUITE.get_or_init(|| {
        // The kit's base consumers, whose agents run anyway: every extra agent on the one API
        // server adds to the eviction marks on every other agent's AppliedManifestWorks (see
        // `works`), which slow the owners' status writes.
        let shared: [String; 3] = super::BASE_CONSUMERS
            .split(',')
            .map(str::to_owned)
            .collect::<Vec<_>>()
            .try_into()
            .unwrap_or_else(|base| panic!("three base consumers, not {base:?}"));
        let own: Vec<String> = (0..OWN_CONSUMERS).map(|_| unique("place-own")).collect();
        let own_refs: Vec<&str> = own.iter().map(String::as_str).collect();
        add_consumers(real, &own_refs).unwrap_or_else(|e| panic!("{e:#}"));
        SuiteConsumers {
            shared,
            own: Mutex::new(own),
        }
    })
}

/// The three shared consumers ([`SuiteConsumers`]).
pub fn shared_consumers(real: &RealSystems) -> &'static [String; 3] {
    &suite_consumers(real).shared
}

/// A consumer with its own agent that no other test uses: the calling test may stop its agent.
///
/// # Panics
/// When more than [`OWN_CONSUMERS`] are asked for in one run (raise it).
pub fn own_consumer(real: &RealSystems) -> String {
    lock(&suite_consumers(real).own).pop().unwrap_or_else(|| {
        panic!(
            "more than {OWN_CONSUMERS} tests asked for a consumer of their own; raise OWN_CONSUMERS"
        )
    })
}

/// A region name of its own that the adapter's cluster spec rules accept (`^[a-z]+-[a-z]+[0-9]+$`).
pub fn unique_region() -> String {
    let letters: String = (0..10).map(|_| fastrand::lowercase()).collect();
    format!("place-{letters}{}", fastrand::u32(1..1000))
}

/// A `ManagementCluster` entity of a test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McEntity {
    pub name: String,
    pub consumer: String,
    pub href: String,
}

/// A cluster of a test on the real API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    pub id: String,
    /// Also the HostedCluster's name.
    pub name: String,
    pub href: String,
}

/// One pulse's outcome: the report the adapter wrote (what the status-reporter puts on the Job),
/// and its log.
#[derive(Debug, Clone)]
pub struct Pulse {
    pub pod: String,
    pub report: Value,
    pub log: String,
}

impl Pulse {
    /// `(status, reason)` of condition `type_` (empty strings when absent).
    pub fn condition(&self, type_: &str) -> (String, String) {
        let c = report_condition(&self.report, type_);
        let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
        (text("status"), text("reason"))
    }

    /// The message of condition `type_`.
    pub fn message(&self, type_: &str) -> String {
        report_condition(&self.report, type_)["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// `data.management_cluster`: the consumer the work lives on ("" when none).
    pub fn placed_on(&self) -> String {
        self.report["data"]["management_cluster"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The report's conditions and the log's last lines, for a failed assertion.
    pub fn explain(&self) -> String {
        format!(
            "pod {}: report {}\n--- adapter log (last lines):\n{}",
            self.pod,
            self.report,
            super::process::tail(&self.log, 12)
        )
    }
}

/// Condition `type_` of a report (`Null` when absent).
pub fn report_condition<'a>(report: &'a Value, type_: &str) -> &'a Value {
    report["conditions"]
        .as_array()
        .and_then(|l| l.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

/// The body the shipped task config's `statusPayload` PUTs for a Job that reported `conditions`
/// (type, status, reason, message) at `observed_generation` with `data` (its `data.hyperfleet.io/`
/// annotations): Applied/Available/Health copied, Finalized False with reason and message `""`
/// (the cluster is not being deleted), the four `data` keys as strings (`""` when absent).
pub fn status_payload(
    conditions: &[(String, String, String, String)],
    observed_generation: i64,
    data: &Map<String, Value>,
) -> anyhow::Result<Value> {
    let mut out = Vec::new();
    for type_ in ["Applied", "Available", "Health"] {
        let (_, status, reason, message) = conditions
            .iter()
            .find(|c| c.0 == type_)
            .with_context(|| format!("the Job has no {type_}"))?;
        out.push(json!({"type": type_, "status": status, "reason": reason, "message": message}));
    }
    out.push(json!({"type": "Finalized", "status": "False", "reason": "", "message": ""}));
    let key = |k: &str| {
        data.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Ok(json!({
        "adapter": "hypershift",
        "observed_generation": observed_generation,
        "observed_time": jiff::Timestamp::now().round(jiff::Unit::Second)?.to_string(),
        "conditions": out,
        "data": {
            "control_plane_endpoint": key("control_plane_endpoint"),
            "version": key("version"),
            "desired_version": key("desired_version"),
            "management_cluster": key("management_cluster"),
        },
    }))
}

/// The bundle id whose AppliedManifestWork owns `object` (`<hub hash>-<bundle id>`), if any.
pub fn applied_bundle(object: &Value) -> Option<String> {
    object["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .filter(|r| r["kind"] == "AppliedManifestWork")
        .filter_map(|r| r["name"].as_str())
        .find_map(|name| name.split_once('-').map(|(_, bundle)| bundle.to_owned()))
}

/// One test's placement world on the kit (see the module doc).
pub struct PlacementBed {
    pub real: &'static RealSystems,
    /// The test's id (names, source id).
    pub id: String,
    pub region: String,
    /// The pulse Jobs' namespace (the placement Leases live here).
    pub namespace: String,
    /// `MAESTRO_SOURCE_ID` of this test's pulses.
    pub source: String,
    pub api: HyperfleetApi,
    pub kube: kube::Client,
    pub operator: Operator,
    http: reqwest::Client,
    dir: Option<tempfile::TempDir>,
    adapter_kubeconfig: PathBuf,
    mcs: Mutex<Vec<McEntity>>,
    clusters: Mutex<Vec<Cluster>>,
    /// Every work this test's pulses published (its source id), deleted when the bed drops
    /// (`works::Sweep`: works left beside the kit's other agents keep them busy).
    _works: Sweep,
}

impl std::fmt::Debug for PlacementBed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlacementBed")
            .field("id", &self.id)
            .field("region", &self.region)
            .finish_non_exhaustive()
    }
}

impl PlacementBed {
    /// A world under a fresh test id with `prefix` (see the module doc).
    ///
    /// # Errors
    /// When the RBAC is refused or no token can be minted.
    pub async fn start(real: &'static RealSystems, prefix: &str) -> anyhow::Result<PlacementBed> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let id = unique(prefix);
        let kube = real.kube_client().await?;
        let namespace = id.clone();
        ensure_namespace(&kube, &namespace).await?;
        apply_shipped(&kube, "rbac.yaml", &namespace).await?;
        let dir = tempfile::Builder::new().prefix("placement-").tempdir()?;
        let adapter_kubeconfig = service_account_kubeconfig(
            real,
            &kube,
            &namespace,
            JOB_SERVICE_ACCOUNT,
            3600,
            &dir.path().join("adapter.kubeconfig"),
        )
        .await?;
        let source = format!("hyperfleet-hypershift-adapter-{id}");
        Ok(PlacementBed {
            real,
            region: unique_region(),
            _works: Sweep::source(real, &source),
            source,
            api: HyperfleetApi::new(real),
            operator: Operator::new(kube.clone()),
            kube,
            namespace,
            id,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(15))
                .build()?,
            dir: Some(dir),
            adapter_kubeconfig,
            mcs: Mutex::new(Vec::new()),
            clusters: Mutex::new(Vec::new()),
        })
    }

    /// The bed's directory (reports, logs, kubeconfigs).
    pub fn dir(&self) -> &Path {
        self.dir.as_ref().map_or(Path::new("."), |d| d.path())
    }

    /// The kubeconfig of the Job's ServiceAccount (`hypershift-adapter`, a TokenRequest token).
    pub fn adapter_kubeconfig(&self) -> &Path {
        &self.adapter_kubeconfig
    }

    /// `POST /managementclusters`: an entity of this test's region on `consumer` holding `max`
    /// control planes. Not reported yet: `Reconciled` False, so placement passes it over until
    /// [`PlacementBed::report_health`].
    ///
    /// # Errors
    /// When the API refuses it.
    pub async fn add_management_cluster(
        &self,
        tag: &str,
        consumer: &str,
        max: u64,
    ) -> anyhow::Result<McEntity> {
        let name = format!("{}-{tag}", self.id);
        let body = json!({
            "kind": "ManagementCluster",
            "name": name,
            "labels": {"region": self.region},
            "spec": {"region": self.region, "maestro_consumer": consumer, "max_hosted_clusters": max},
        });
        let created = self
            .api
            .must("POST", &format!("{PREFIX}/{PLURAL}"), Some(&body))
            .await?;
        let mc = McEntity {
            name,
            consumer: consumer.to_owned(),
            href: created["href"].as_str().context("no href")?.to_owned(),
        };
        lock(&self.mcs).push(mc.clone());
        Ok(mc)
    }

    /// The `mgmt-health` adapter reports `mc` available or not at its current generation (the
    /// recorded report's shape): `Reconciled` True (healthy) or `LastKnownReconciled` False (an
    /// outage), as the real API aggregates it.
    ///
    /// # Errors
    /// When the API does not store it (201).
    pub async fn report_health(&self, mc: &McEntity, available: bool) -> anyhow::Result<()> {
        let served = self
            .api
            .get(&mc.href)
            .await?
            .with_context(|| format!("{} is gone", mc.href))?;
        self.after_stored_report(&mc.href, HEALTH_ADAPTER).await?;
        let now = jiff::Timestamp::now()
            .round(jiff::Unit::Second)?
            .to_string();
        let body = health_report(
            served["generation"].as_i64().unwrap_or(1),
            &now,
            available,
            served.get("deleted_time").is_some(),
        );
        let (code, answer) = self.api.put_status(&mc.href, &body).await?;
        if code != 201 {
            bail!("{HEALTH_ADAPTER} report for {}: {code} {answer}", mc.name);
        }
        Ok(())
    }

    /// `POST /clusters` in this test's region: the cluster spec of
    /// [`crate::local_pulse::cluster_object`] with `platform.gcp.region`/`zone` set, named
    /// `<test id>-<tag>`.
    ///
    /// # Errors
    /// When the API refuses it.
    pub async fn create_cluster(&self, tag: &str) -> anyhow::Result<Cluster> {
        let name = format!("{}-{tag}", self.id);
        let mut spec = crate::local_pulse::cluster_object()["spec"].clone();
        spec["platform"]["gcp"]["region"] = self.region.clone().into();
        spec["platform"]["gcp"]["zone"] = format!("{}-b", self.region).into();
        let created = self
            .api
            .create_cluster(&name, &json!({"testrun": self.id}), &spec)
            .await?;
        let cluster = Cluster {
            id: created["id"].as_str().context("no id")?.to_owned(),
            name,
            href: created["href"].as_str().context("no href")?.to_owned(),
        };
        lock(&self.clusters).push(cluster.clone());
        Ok(cluster)
    }

    /// The other adapters HyperFleet requires report `Available=True` at the cluster's generation.
    ///
    /// # Errors
    /// When the API does not store a report.
    pub async fn others_report(&self, cluster: &Cluster) -> anyhow::Result<()> {
        for adapter in OTHER_CLUSTER_ADAPTERS {
            let code = self.api.report_as(&cluster.href, adapter, true).await?;
            if code != 201 {
                bail!("{adapter}'s report for {}: {code}", cluster.name);
            }
        }
        Ok(())
    }

    /// The cluster's generation as the API serves it.
    ///
    /// # Errors
    /// When it cannot be read.
    pub async fn generation(&self, cluster: &Cluster) -> anyhow::Result<i64> {
        let served = self
            .api
            .get(&cluster.href)
            .await?
            .with_context(|| format!("{} is gone", cluster.href))?;
        served["generation"].as_i64().context("no generation")
    }

    /// The adapter container's environment in a pulse Job of `cluster` at `generation` run by
    /// pod `pod` (`manifests/job.yaml` switched to the HyperFleet inventory as its comments say),
    /// writing its report to `results`.
    pub fn pulse_env(
        &self,
        cluster: &Cluster,
        generation: i64,
        pod: &str,
        results: &Path,
    ) -> Vec<(String, String)> {
        [
            ("CLUSTER_ID", cluster.id.clone()),
            ("GENERATION", generation.to_string()),
            (
                "HYPERFLEET_API_URL",
                self.real.var("HYPERFLEET_API_URL").to_owned(),
            ),
            ("WORK_BACKEND", "maestro".to_owned()),
            ("MANAGEMENT_CLUSTERS_FROM_API", "true".to_owned()),
            ("JOB_NAMESPACE", self.namespace.clone()),
            ("POD_NAME", pod.to_owned()),
            ("KUBECONFIG", self.adapter_kubeconfig.display().to_string()),
            ("MAESTRO_SOURCE_ID", self.source.clone()),
            (
                "MAESTRO_API_URL",
                self.real.var("MAESTRO_API_URL").to_owned(),
            ),
            (
                "MAESTRO_GRPC_URL",
                self.real.var("MAESTRO_GRPC_URL").to_owned(),
            ),
            ("RETRY_BUDGET_SECONDS", RETRY_BUDGET_SECONDS.to_owned()),
            ("RESULTS_OUTPUT_PATH", results.display().to_string()),
            ("LOG_FORMAT", "json".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// One pulse of `cluster` at its served generation, as pod `<Job name>-<5 letters>` (see
    /// the module doc). Several may run at once.
    ///
    /// # Errors
    /// When the adapter cannot be run, exits non-zero or writes no report.
    pub async fn pulse(&self, cluster: &Cluster) -> anyhow::Result<Pulse> {
        let generation = self.generation(cluster).await?;
        let job = crate::pulse_job::controlplane_job_name(&cluster.id, i32::try_from(generation)?);
        let suffix: String = (0..5).map(|_| fastrand::lowercase()).collect();
        let pod = format!("{job}-{suffix}");
        let dir = self.dir().join(&pod);
        std::fs::create_dir_all(&dir)?;
        let results = dir.join("adapter-report.json");
        let out = tokio::process::Command::new(crate::binaries::path("hypershift-adapter"))
            .arg("controlplane")
            .env_clear()
            .envs(self.pulse_env(cluster, generation, &pod, &results))
            .output()
            .await
            .context("cannot run hypershift-adapter")?;
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::write(dir.join("adapter.log"), &log)?;
        if !out.status.success() {
            bail!(
                "pod {pod}: the adapter exited {:?}:\n{log}",
                out.status.code()
            );
        }
        let text = std::fs::read_to_string(&results)
            .with_context(|| format!("pod {pod}: no report; log:\n{log}"))?;
        Ok(Pulse {
            pod,
            report: serde_json::from_str(&text)?,
            log,
        })
    }

    /// The framework's `statusPayload` for the Job that reported `pulse`, PUT to the real API:
    /// its answer's status code.
    ///
    /// # Errors
    /// When the report lacks a condition or the API cannot be reached.
    pub async fn report(&self, cluster: &Cluster, pulse: &Pulse) -> anyhow::Result<u16> {
        let conditions: Vec<(String, String, String, String)> = pulse.report["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
                (s("type"), s("status"), s("reason"), s("message"))
            })
            .collect();
        let generation = match pulse.report["observed_generation"].as_i64() {
            Some(g) => g,
            None => self.generation(cluster).await?,
        };
        let data = pulse.report["data"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        self.after_stored_report(&cluster.href, "hypershift")
            .await?;
        let body = status_payload(&conditions, generation, &data)?;
        Ok(self.api.put_status(&cluster.href, &body).await?.0)
    }

    /// Waits until a report made now is later, at the API's one-second precision, than the
    /// stored report of `adapter` on `href`. Of two reports of one adapter at one generation within the same
    /// second the API keeps the first and answers 201 to both (`hyperfleet-framework.md` §7.4);
    /// the framework's events are seconds apart, the tests' reports may not be (seen in CI: the
    /// outage report after the ready one, in the same second, left `Health=True` stored; and a
    /// management cluster reported unavailable in the second it was reported available stayed
    /// available).
    ///
    /// # Errors
    /// When the API cannot be read.
    pub async fn after_stored_report(&self, href: &str, adapter: &str) -> anyhow::Result<()> {
        let Some(stored) = self.api.status_of(href, adapter).await? else {
            return Ok(());
        };
        let Some(last) = stored["last_report_time"]
            .as_str()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        else {
            return Ok(());
        };
        while jiff::Timestamp::now().round(jiff::Unit::Second)? <= last {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    /// Every control-plane bundle of `cluster` under this test's source, on any consumer
    /// (soft-deleted ones included), from Maestro's REST API.
    ///
    /// # Errors
    /// When Maestro cannot be read.
    pub async fn works(&self, cluster: &Cluster) -> anyhow::Result<Vec<ResourceBundle>> {
        let labels = [
            (ADAPTER_LABEL, CONTROLPLANE_ADAPTER),
            (CLUSTER_ID_LABEL, &cluster.id),
        ];
        let search =
            label_search(&self.source, None, &labels).map_err(|e| anyhow::anyhow!("{e}"))?;
        self.bundles(&search).await
    }

    /// The live (not soft-deleted) control planes of this test's source on `consumer`.
    ///
    /// # Errors
    /// When Maestro cannot be read.
    pub async fn load(&self, consumer: &str) -> anyhow::Result<usize> {
        let labels = [(ADAPTER_LABEL, CONTROLPLANE_ADAPTER)];
        let search = label_search(&self.source, Some(consumer), &labels)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(self
            .bundles(&search)
            .await?
            .iter()
            .filter(|b| b.deleted_at.is_none())
            .count())
    }

    async fn bundles(&self, search: &str) -> anyhow::Result<Vec<ResourceBundle>> {
        bundles(&self.http, self.real.var("MAESTRO_API_URL"), search)
            .await?
            .into_iter()
            .map(|b| Ok(serde_json::from_value(b)?))
            .collect()
    }

    /// The placement Lease of `consumer` in this test's namespace, as stored.
    ///
    /// # Errors
    /// When the API server cannot be read.
    pub async fn lease(&self, consumer: &str) -> anyhow::Result<Option<Lease>> {
        let leases: Api<Lease> = Api::namespaced(self.kube.clone(), &self.namespace);
        Ok(leases
            .get_opt(&hypershift_adapter::placement::lease::lease_name(consumer))
            .await?)
    }

    /// The HostedCluster of `cluster` once the agent of bundle `bundle` applied it (its
    /// AppliedManifestWork owns it), waiting up to [`AGENT`].
    ///
    /// # Errors
    /// When it is not so within [`AGENT`].
    pub async fn applied_by(&self, cluster: &Cluster, bundle: &str) -> anyhow::Result<Value> {
        super::wait::eventually(
            AGENT,
            &format!("HostedCluster {} applied by bundle {bundle}", cluster.name),
            || async {
                let hc = self.hosted_cluster(cluster).await?;
                Ok(hc.filter(|hc| applied_bundle(hc).as_deref() == Some(bundle)))
            },
        )
        .await
    }

    /// The HostedCluster of `cluster` on the kit's API server, if an agent applied it.
    ///
    /// # Errors
    /// When the API server cannot be read.
    pub async fn hosted_cluster(&self, cluster: &Cluster) -> anyhow::Result<Option<Value>> {
        self.operator.hosted_cluster(&cluster.name).await
    }
}

impl Drop for PlacementBed {
    fn drop(&mut self) {
        let panicking = std::thread::panicking();
        if panicking && let Some(dir) = self.dir.take() {
            eprintln!(
                "placement bed {}: files kept in {}",
                self.id,
                dir.keep().display()
            );
        }
        // The entities go (DELETE, then mgmt-health's Finalized=True: the hard delete), so no
        // later test's listing meets them; a failed test's clusters are force-removed too.
        let mcs = std::mem::take(&mut *lock(&self.mcs));
        let clusters = if panicking {
            std::mem::take(&mut *lock(&self.clusters))
        } else {
            Vec::new()
        };
        let api = self.api.clone();
        super::on_own_runtime(async move {
            for mc in mcs {
                remove_management_cluster(&api, &mc).await;
            }
            for cluster in clusters {
                api.force_remove(&cluster.href).await;
            }
        });
    }
}

/// DELETE, then `mgmt-health` reports `Finalized=True` at the bumped generation: the API's hard
/// delete. Best effort.
async fn remove_management_cluster(api: &HyperfleetApi, mc: &McEntity) {
    let Ok(deleted) = api.must("DELETE", &mc.href, None).await else {
        return;
    };
    let generation = deleted["generation"].as_i64().unwrap_or(1);
    let Ok(now) = jiff::Timestamp::now().round(jiff::Unit::Second) else {
        return;
    };
    let body = health_report(generation, &now.to_string(), false, true);
    let _ = api.put_status(&mc.href, &body).await;
}

/// Applies `manifests/<file>` as shipped, its namespace `hyperfleet-system` replaced by
/// `namespace` (every document).
///
/// # Errors
/// When the file cannot be read or a document is refused.
pub async fn apply_shipped(kube: &kube::Client, file: &str, namespace: &str) -> anyhow::Result<()> {
    let path = super::framework::manifests_dir().join(file);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("read {}", path.display()))?;
    let documents: Vec<Value> =
        serde_saphyr::from_multiple(&text).with_context(|| format!("parse {}", path.display()))?;
    for mut document in documents.into_iter().filter(Value::is_object) {
        substitute_namespace(&mut document, namespace);
        apply(kube, &document)
            .await
            .with_context(|| format!("apply {}", path.display()))?;
    }
    Ok(())
}

/// Replaces every `namespace: hyperfleet-system` in `value` (metadata, subjects) by `namespace`.
fn substitute_namespace(value: &mut Value, namespace: &str) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "namespace" && v == SHIPPED_NAMESPACE {
                    *v = namespace.into();
                } else {
                    substitute_namespace(v, namespace);
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| substitute_namespace(v, namespace)),
        _ => {}
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unique_region_passes_the_adapters_region_rule() {
        let pattern = regex::Regex::new(r"^[a-z]+-[a-z]+[0-9]+$").unwrap();
        for _ in 0..100 {
            let region = unique_region();
            assert!(pattern.is_match(&region), "{region}");
        }
        assert_ne!(unique_region(), unique_region());
    }

    #[test]
    fn the_namespace_is_substituted_in_metadata_and_subjects_only() {
        let mut binding = json!({"kind": "RoleBinding",
            "metadata": {"name": "x", "namespace": "hyperfleet-system"},
            "subjects": [{"kind": "ServiceAccount", "name": "hypershift-adapter", "namespace": "hyperfleet-system"}],
            "roleRef": {"name": "hyperfleet-system"}});
        substitute_namespace(&mut binding, "t-1");
        assert_eq!(binding["metadata"]["namespace"], "t-1");
        assert_eq!(binding["subjects"][0]["namespace"], "t-1");
        assert_eq!(binding["roleRef"]["name"], "hyperfleet-system");
    }

    #[test]
    fn the_applying_bundle_is_read_from_the_owner_reference() {
        let object = json!({"metadata": {"ownerReferences": [{"kind": "AppliedManifestWork",
            "name": "dcc3ddbc7201a670747af24bab840749d2171a6ffb13ab41140c8b53ab9ecab5-a9185a61-cf8a-5b51-a7a5-9a6376ff14b8"}]}});
        assert_eq!(
            applied_bundle(&object).as_deref(),
            Some("a9185a61-cf8a-5b51-a7a5-9a6376ff14b8")
        );
        assert_eq!(applied_bundle(&json!({"metadata": {}})), None);
    }
}
