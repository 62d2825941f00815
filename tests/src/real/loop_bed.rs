//! The HyperFleet loop on the kit's real servers, set up for one test ([`LoopBed::start`]):
//!
//! - the project's RBAC as shipped (`manifests/hyperfleet/rbac.yaml` for the framework,
//!   `manifests/rbac.yaml` for the pulse Jobs) and the two Secrets the Jobs mount, in
//!   `hyperfleet-system` (the namespace the shipped task configs put the Jobs in);
//! - a Maestro consumer named after the suite (`prefix`), with its own work agent (the test's
//!   management cluster), whose HostedClusters and NodePools land in `clusters` on the kit's API
//!   server;
//! - per requested [`Deployment`], a framework instance ([`super::framework`]) with the shipped
//!   configs, its Kubernetes access a kubeconfig for the framework's ServiceAccount (token from
//!   the TokenRequest API, so the shipped Role is what it may do), subscribed to a topic of the
//!   test's own, and a Sentinel ([`super::sentinel`]) publishing the test's clusters or NodePools
//!   (those labelled [`LABEL`]`=<test id>`) to it;
//! - the kubelet, played ([`crate::kubelet::Kubelet::serve`]) for the pulse Jobs of the test's
//!   clusters;
//! - the pulse Jobs' TTL: the shipped Jobs delete themselves 60 s after they finish
//!   (`ttlSecondsAfterFinished`), and only then does the next event of the same generation create
//!   a fresh Job that looks at the management cluster again. The bed sets each of its Jobs' TTL to
//!   [`PULSE_JOB_TTL_SECONDS`] right after the framework creates it, so that the real TTL
//!   controller removes it sooner: the loop runs as in production, with a faster clock.
//!
//! When the bed is dropped, the consumer's works are deleted ([`Sweep`]).
//!
//! Every log (frameworks, Sentinels, played kubelet) lives in the bed's temporary directory;
//! [`LoopBed::diagnostics`] quotes their last lines and [`LoopBed::until`] puts them into a
//! failure's message. When the test fails the directory is kept and its path printed, and the
//! test's clusters are removed from the API (force-delete); everything the bed started is stopped
//! when it is dropped.

use std::collections::BTreeSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

use super::framework::{Deployment, Framework, FrameworkSpec, manifests_dir, write_api_token};
use super::hyperfleet_api::HyperfleetApi;
use super::kube_access::{apply, apply_file, ensure_namespace, service_account_kubeconfig};
use super::operator::{NAMESPACE as MANAGEMENT_NAMESPACE, Operator};
use super::sentinel::{Resources, Sentinel, SentinelSpec};
use super::wait::eventually;
use super::works::Sweep;
use super::{RealSystems, unique};

/// The label on every cluster and NodePool of a test (value: the test's id); Sentinel selects by
/// it. No `-` in the key (see [`super::sentinel`]).
pub const LABEL: &str = "testrun";
/// The namespace of the pulse Jobs (the shipped task configs').
pub const JOB_NAMESPACE: &str = "hyperfleet-system";
/// The framework's ServiceAccount (`manifests/hyperfleet/rbac.yaml`).
pub const FRAMEWORK_SERVICE_ACCOUNT: &str = "hypershift-adapter-framework";
/// `ttlSecondsAfterFinished` the bed gives its pulse Jobs (shipped: 60). Short is safe: the TTL
/// controller deletes a Job in the foreground (measured: the Job stays readable, with its status,
/// until the garbage collector removed its Pod, several seconds), while the framework reads it on
/// every event (every second, 2 s after each report); a finished Job it never read only means
/// the next event creates a fresh one that looks again.
pub const PULSE_JOB_TTL_SECONDS: i32 = 3;

/// One test's loop.
pub struct LoopBed {
    /// The test's id: label value, topic prefix.
    pub id: String,
    /// The test's Maestro consumer (management cluster).
    pub consumer: String,
    /// The kit's Maestro REST URL (`MAESTRO_API_URL`).
    pub maestro_api_url: String,
    /// The kit API server's audit log (every request at level Metadata: who did what).
    pub audit_log: PathBuf,
    pub api: HyperfleetApi,
    pub kube: kube::Client,
    pub operator: Operator,
    dir: Option<tempfile::TempDir>,
    frameworks: Vec<Framework>,
    sentinels: Vec<Sentinel>,
    clusters: Arc<Mutex<BTreeSet<String>>>,
    ttl: tokio::task::JoinHandle<()>,
    kubelet: crate::kubelet::Kubelet,
    serving: Mutex<Vec<crate::kubelet::Serving>>,
    started: Instant,
    /// The consumer's works, deleted when the bed is dropped (after its frameworks stopped).
    _works: Sweep,
    real: &'static RealSystems,
}

impl std::fmt::Debug for LoopBed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopBed")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// The cluster spec in HyperFleet's nested shape with the adapter's extension keys (README "The
/// cluster spec": `testbed::local_pulse::cluster_object`), its Secrets named after `name`.
pub fn cluster_spec(name: &str) -> Value {
    let mut spec = crate::local_pulse::cluster_object()["spec"].clone();
    spec["pullSecret"]["name"] = format!("{name}-pull-secret").into();
    spec["sshKey"]["name"] = format!("{name}-ssh-key").into();
    spec["serviceAccountSigningKey"]["name"] = format!("{name}-sa-signing-key").into();
    spec
}

impl LoopBed {
    /// Sets up the loop for `deployments` (see the module doc) under a fresh test id with
    /// `prefix`.
    ///
    /// # Errors
    /// When a manifest is refused, or a framework or Sentinel does not start (the message has its
    /// log).
    pub async fn start(
        real: &'static RealSystems,
        prefix: &str,
        deployments: &[Deployment],
    ) -> anyhow::Result<LoopBed> {
        let started = Instant::now();
        let id = unique(prefix);
        let dir = tempfile::Builder::new().prefix("loop-").tempdir()?;
        let kube = real.kube_client().await?;
        apply_file(&kube, &manifests_dir().join("hyperfleet/rbac.yaml")).await?;
        apply_file(&kube, &manifests_dir().join("rbac.yaml")).await?;
        apply_job_secrets(real, &kube).await?;
        ensure_namespace(&kube, MANAGEMENT_NAMESPACE).await?;
        // One consumer (and agent) per suite, not per run: every agent on the kit's one API
        // server reconciles every AppliedManifestWork there, so agents are not multiplied.
        let consumer = real.consumer(prefix);
        let kubeconfig = service_account_kubeconfig(
            real,
            &kube,
            JOB_NAMESPACE,
            FRAMEWORK_SERVICE_ACCOUNT,
            3600,
            &dir.path().join("framework.kubeconfig"),
        )
        .await?;
        let token = write_api_token(dir.path())?;
        let mut frameworks = Vec::new();
        let mut sentinels = Vec::new();
        for deployment in deployments {
            let resources = match deployment {
                Deployment::ControlPlane => Resources::Clusters,
                Deployment::NodePool => Resources::NodePools,
            };
            let topic = format!("{id}-{}", resources.plural());
            let spec =
                FrameworkSpec::shipped(*deployment, real, &topic, &consumer, &kubeconfig, &token);
            let own = dir.path().join(deployment.name());
            frameworks.push(Framework::start(real, spec, &own).await?);
            let sentinel = SentinelSpec::new(resources, &topic, (LABEL, &id));
            sentinels.push(Sentinel::start(real, sentinel, &own).await?);
        }
        let clusters = Arc::new(Mutex::new(BTreeSet::new()));
        let ttl = tokio::spawn(shorten_pulse_job_ttls(kube.clone(), clusters.clone()));
        let kubelet = crate::kubelet::Kubelet::new(
            kube::config::Kubeconfig::read_from(real.kubeconfig())?,
            crate::kubelet::KubeletConfig {
                root: Some(dir.path().join("kubelet")),
                ..Default::default()
            },
        )
        .await?;
        Ok(LoopBed {
            real,
            id,
            _works: Sweep::consumer(real, &consumer),
            consumer,
            maestro_api_url: real.var("MAESTRO_API_URL").to_owned(),
            audit_log: real.state_dir().join("logs/kube-audit.log"),
            api: HyperfleetApi::new(real),
            operator: Operator::new(kube.clone()),
            kube,
            dir: Some(dir),
            frameworks,
            sentinels,
            clusters,
            ttl,
            kubelet,
            serving: Mutex::new(Vec::new()),
            started,
        })
    }

    /// The labels of every object of this test (`{LABEL: id}`), plus `extra`.
    pub fn labels(&self, extra: &[(&str, &str)]) -> Value {
        let mut labels = json!({ LABEL: self.id });
        for (k, v) in extra {
            labels[*k] = (*v).into();
        }
        labels
    }

    /// `POST /clusters` with this test's label: the created cluster. From now on its pulse Jobs
    /// run (the played kubelet) and get the short TTL.
    ///
    /// # Errors
    /// When the API refuses it.
    pub async fn create_cluster(
        &self,
        name: &str,
        labels: &Value,
        spec: &Value,
    ) -> anyhow::Result<Value> {
        let created = self.api.create_cluster(name, labels, spec).await?;
        let id = created["id"].as_str().context("no id")?.to_owned();
        self.lock_clusters().insert(id.clone());
        let serving = self
            .kubelet
            .serve(JOB_NAMESPACE, &format!("hyperfleet.io/cluster-id={id}"));
        self.serving
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(serving);
        Ok(created)
    }

    fn lock_clusters(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.clusters
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The logs of the bed's Sentinels so far, one after the other.
    pub fn sentinel_logs(&self) -> String {
        self.sentinels.iter().map(Sentinel::log).collect()
    }

    /// The bed's directory (logs, sockets, kubeconfig).
    pub fn dir(&self) -> &Path {
        self.dir.as_ref().map_or(Path::new("."), |d| d.path())
    }

    /// Time since [`LoopBed::start`] began.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// How many lines of the frameworks' logs contain every one of `needles`.
    pub fn framework_log_count(&self, needles: &[&str]) -> usize {
        self.frameworks
            .iter()
            .map(|f| {
                f.log()
                    .lines()
                    .filter(|l| needles.iter().all(|n| l.contains(n)))
                    .count()
            })
            .sum()
    }

    /// `(user, response code)` of every completed `verb` on `resource` named `name` in
    /// [`JOB_NAMESPACE`], from the API server's audit log.
    pub fn audited(&self, verb: &str, resource: &str, name: &str) -> Vec<(String, i64)> {
        use std::io::BufRead as _;
        let Ok(file) = std::fs::File::open(&self.audit_log) else {
            return Vec::new();
        };
        let quoted = format!("\"name\":\"{name}\"");
        std::io::BufReader::new(file)
            .lines()
            .map_while(Result::ok)
            .filter(|l| l.contains(&quoted))
            .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
            .filter(|e| {
                e["stage"] == "ResponseComplete"
                    && e["verb"] == verb
                    && e["objectRef"]["resource"] == resource
                    && e["objectRef"]["namespace"] == JOB_NAMESPACE
            })
            .map(|e| {
                let user = e["user"]["username"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                (
                    user,
                    e["responseStatus"]["code"].as_i64().unwrap_or_default(),
                )
            })
            .collect()
    }

    /// The framework instance of `deployment` (its log, health port).
    pub fn framework(&self, deployment: Deployment) -> Option<&Framework> {
        self.frameworks
            .iter()
            .find(|f| f.name() == deployment.name())
    }

    /// The last lines of every log of the bed, for a failure's message.
    pub fn diagnostics(&self) -> String {
        let mut out = String::new();
        for framework in &self.frameworks {
            out.push_str(&format!(
                "\n--- framework {} ({}), last lines:\n{}\n",
                framework.name(),
                framework.log_path().display(),
                interesting(&framework.log(), 25)
            ));
        }
        for sentinel in &self.sentinels {
            out.push_str(&format!(
                "\n--- {} ({} events published), last lines:\n{}\n",
                sentinel.config_path().display(),
                sentinel.published(),
                interesting(&sentinel.log(), 8)
            ));
        }
        let serving = self
            .serving
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for serving in serving.iter() {
            for run in serving.finished() {
                out.push_str(&format!("\n--- pod {} (played kubelet)\n", run.name));
                for container in &run.containers {
                    out.push_str(&format!(
                        "  {} {:?}: {}\n",
                        container.name,
                        container
                            .terminated
                            .as_ref()
                            .map(|t| (t.exit_code, &t.reason)),
                        super::process::tail(&container.log_text(), 4)
                    ));
                }
            }
        }
        out
    }

    /// Polls `probe` until it yields `Some` within `timeout`; on failure panics with `what`,
    /// the last probe error and [`LoopBed::diagnostics`].
    ///
    /// # Panics
    /// When the deadline passes.
    pub async fn until<T, F, Fut>(&self, timeout: Duration, what: &str, probe: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = anyhow::Result<Option<T>>>,
    {
        match eventually(timeout, what, probe).await {
            Ok(found) => found,
            Err(e) => panic!(
                "{e:#} (after {:.0?} of the test){}",
                self.elapsed(),
                self.diagnostics()
            ),
        }
    }
}

/// How long a work may stay soft-deleted before the bed restarts its agent
/// ([`LoopBed::until_hard_deleted`]): the interval at which a Maestro server newer than the kit's
/// sends the delete event of such a work again (`--delete-event-republish-interval`, default 60 s).
pub const REPUBLISH_INTERVAL: Duration = Duration::from_secs(60);

impl LoopBed {
    /// Waits (at most `timeout`) until the HyperFleet object `href` is hard-deleted by the API.
    ///
    /// The kit's Maestro (ab480c6, 2026-08-04) predates the server's re-sending of delete events
    /// for works stuck soft-deleted (merged 2026-08-12, `maestro-protocol.md`). Its agent was seen
    /// to miss its last step of a deletion: the NodePool deleted, its AppliedManifestWork
    /// finalized, but the work's own finalizer never removed (its last removal had failed on a
    /// conflict with its status update and nothing enqueued it again), so the work stayed
    /// `Deleting` and the adapter, rightly, never reported it finalized. When a work of the
    /// bed's consumer has been soft-deleted for longer than [`REPUBLISH_INTERVAL`], the bed does
    /// once what the newer server does: it makes the agent see the delete again, here by
    /// restarting the agent (it resyncs on start), and says so on stderr.
    ///
    /// # Panics
    /// When the deadline passes.
    pub async fn until_hard_deleted(&self, timeout: Duration, what: &str, href: &str) {
        let deadline = Instant::now() + timeout;
        let gone = || async { Ok(self.api.get(href).await?.is_none().then_some(())) };
        loop {
            let slice = deadline
                .saturating_duration_since(Instant::now())
                .min(REPUBLISH_INTERVAL);
            if slice.is_zero() {
                break;
            }
            if eventually(slice, what, gone).await.is_ok() {
                return;
            }
            let stuck = self.works_deleting_longer_than(REPUBLISH_INTERVAL).await;
            if stuck.is_empty() {
                continue;
            }
            eprintln!(
                "loop bed {}: works {stuck:?} of consumer {} soft-deleted for over {REPUBLISH_INTERVAL:?}: its agent is restarted (the kit's Maestro does not send their delete event again)",
                self.id, self.consumer
            );
            if let Err(e) = self.real.restart_agent(&self.consumer).await {
                eprintln!("loop bed {}: the agent's restart failed: {e:#}", self.id);
            }
            let remaining = deadline.saturating_duration_since(Instant::now());
            self.until(remaining.max(REPUBLISH_INTERVAL), what, gone)
                .await;
            return;
        }
        self.until(Duration::ZERO, what, gone).await;
    }

    /// The ids of the consumer's works whose `deletionTimestamp` is older than `age`.
    async fn works_deleting_longer_than(&self, age: Duration) -> Vec<String> {
        let search = format!("consumer_name='{}'", self.consumer);
        let list = super::works::bundles(&reqwest::Client::new(), &self.maestro_api_url, &search)
            .await
            .unwrap_or_default();
        let now = jiff::Timestamp::now();
        list.iter()
            .filter(|b| {
                b["metadata"]["deletionTimestamp"]
                    .as_str()
                    .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                    .is_some_and(|t| now.duration_since(t).unsigned_abs() > age)
            })
            .filter_map(|b| b["id"].as_str().map(str::to_owned))
            .collect()
    }
}

impl Drop for LoopBed {
    fn drop(&mut self) {
        self.ttl.abort();
        self.serving
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
        for sentinel in &mut self.sentinels {
            sentinel.stop();
        }
        for framework in &mut self.frameworks {
            framework.stop();
        }
        if std::thread::panicking() {
            if let Some(dir) = self.dir.take() {
                let kept: PathBuf = dir.keep();
                eprintln!("loop bed {}: logs kept in {}", self.id, kept.display());
            }
            let api = self.api.clone();
            let clusters: Vec<String> = self.lock_clusters().iter().cloned().collect();
            // The test's runtime may be shutting down: a runtime of its own.
            super::on_own_runtime(async move {
                for id in clusters {
                    api.force_remove(&format!("{}/clusters/{id}", super::hyperfleet_api::PREFIX))
                        .await;
                }
            });
        }
    }
}

/// The Secrets the pulse Jobs mount (`hypershift-adapter-maestro`: `ca.crt`, `token`;
/// `hypershift-adapter-hyperfleet-api`: `token`). The kit's Maestro and HyperFleet API run
/// without TLS or authentication: the CA is the kit's (never used over `http://`), the tokens
/// are placeholders they ignore.
async fn apply_job_secrets(real: &RealSystems, kube: &kube::Client) -> anyhow::Result<()> {
    let ca = std::fs::read_to_string(real.var("REAL_KUBE_CA_FILE"))?;
    for (name, data) in [
        (
            "hypershift-adapter-maestro",
            json!({"ca.crt": ca, "token": "real-loop-maestro-token\n"}),
        ),
        (
            "hypershift-adapter-hyperfleet-api",
            json!({"token": "real-loop-hyperfleet-api-token\n"}),
        ),
    ] {
        let secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": JOB_NAMESPACE}, "type": "Opaque", "stringData": data});
        apply(kube, &secret).await?;
    }
    Ok(())
}

/// Every 300 ms: each pulse Job of the test's clusters whose `ttlSecondsAfterFinished` is not
/// [`PULSE_JOB_TTL_SECONDS`] gets it (a merge patch of the Job; the TTL is mutable).
async fn shorten_pulse_job_ttls(kube: kube::Client, clusters: Arc<Mutex<BTreeSet<String>>>) {
    let jobs: Api<Job> = Api::namespaced(kube, JOB_NAMESPACE);
    let patch = json!({"spec": {"ttlSecondsAfterFinished": PULSE_JOB_TTL_SECONDS}});
    loop {
        let ids: Vec<String> = clusters
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        if !ids.is_empty() {
            let selector = format!("hyperfleet.io/cluster-id in ({})", ids.join(","));
            if let Ok(list) = jobs.list(&ListParams::default().labels(&selector)).await {
                for job in list.items {
                    let ttl = job.spec.as_ref().and_then(|s| s.ttl_seconds_after_finished);
                    if ttl != Some(PULSE_JOB_TTL_SECONDS)
                        && let Some(name) = job.metadata.name.as_deref()
                    {
                        let _ = jobs
                            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                            .await;
                    }
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The last `lines` log lines of a JSON log that are not debug lines (the framework also prints
/// its trace spans to stdout: not log lines).
fn interesting(log: &str, lines: usize) -> String {
    let kept: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(r#""msg":"#) || l.contains(r#""message":"#) || !l.starts_with('{'))
        .filter(|l| !l.contains(r#""level":"DEBUG""#) && !l.contains(r#""level":"debug""#))
        .collect();
    super::process::tail(&kept.join("\n"), lines)
}
