//! The status-reporter sidecar: waits for an adapter's report (or the adapter's end), then puts
//! the outcome on the Job's status in one PATCH.
//!
//! [`run`] takes its Kubernetes client and shutdown signal as parameters so tests drive it
//! against a fake API server; `main.rs` only wires the real ones.

pub mod adapter_pod;
pub mod config;
pub mod event;
pub mod job_status;
pub mod logging;
pub mod outcome;
pub mod results;
mod retry;

use std::future::Future;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use job_report::Report;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::events::v1::Event;
use kube::api::Api;
use tokio::sync::mpsc;
use tokio::time::{Instant, MissedTickBehavior, interval, sleep_until};
use tracing::Instrument;

use crate::adapter_pod::PodEvent;
use crate::config::{Config, DEFAULT_MAX_WAIT, FileWatch};
use crate::job_status::{JobError, JobStatus, JobView, Written};
use crate::outcome::{Outcome, Termination};
use crate::results::{Look, ResultsFile};

/// How the process ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The Job says what happened (whatever the conditions say).
    Written = 0,
    /// The Job could not be written.
    NotWritten = 1,
    /// The configuration is wrong.
    BadConfig = 2,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit as u8)
    }
}

/// Time kept in hand before the Job's own deadline, to write the timeout before the Job
/// controller stops the Pod.
const DEADLINE_MARGIN: Duration = Duration::from_secs(10);
/// Budget for the first read of the Job; past it the reporter waits anyway and reads again
/// when it writes.
const FIRST_READ_BUDGET: Duration = Duration::from_secs(10);
/// Budget for writing after SIGTERM, well inside the default 30 s grace period.
const SHUTDOWN_WRITE_BUDGET: Duration = Duration::from_secs(10);

/// The whole program: parse `args` (flags and environment), install the rustls ring provider,
/// start logging, run on a single-threaded runtime until SIGTERM or the outcome is written.
pub fn main_from<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args = <config::Args as clap::Parser>::parse_from(args);
    logging::init(args.log_format, &args.log_level);
    let kubeconfig = args.kubeconfig.clone();
    let config = match Config::from_args(args) {
        Ok(config) => config,
        Err(e) => {
            tracing::error!(error = %e, "bad configuration");
            return Exit::BadConfig.into();
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the async runtime");
            return Exit::NotWritten.into();
        }
    };
    runtime
        .block_on(async {
            // First, so that no SIGTERM after this point is lost.
            let shutdown = shutdown_signal();
            let client = match kube_client(kubeconfig.as_deref()).await {
                Ok(client) => client,
                Err(e) => {
                    tracing::error!(error = %e, "cannot build a Kubernetes client from the kubeconfig or the in-cluster service account");
                    return Exit::BadConfig;
                }
            };
            run(config, client, shutdown).await
        })
        .into()
}

/// Resolves on SIGTERM (the kubelet stopping the Pod) or SIGINT (Ctrl-C). The handlers are
/// installed when this is called, not when the future is first polled: a SIGTERM that arrives
/// while the reporter is still reading the Job or starting its watches is then a shutdown to
/// handle (one last look at the report), not the default action that kills the process before it
/// writes anything.
pub fn shutdown_signal() -> impl Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    async move {
        match (term, int) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            (Ok(mut only), Err(_)) | (Err(_), Ok(mut only)) => {
                only.recv().await;
            }
            (Err(_), Err(_)) => std::future::pending().await,
        }
    }
}

/// Why no Kubernetes client could be built.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot load kubeconfig: {0}")]
    Kubeconfig(#[from] kube::config::KubeconfigError),
    /// A kubeconfig, a file it names, or the in-cluster token or CA is unreadable or over its
    /// limit (the message names the file and the limit).
    #[error("{0}")]
    File(String),
    #[error("no kubeconfig and not in a cluster: {0}")]
    Infer(#[from] kube::config::InferConfigError),
    #[error("cannot build the client: {0}")]
    Build(#[from] kube::Error),
}

/// Builds a Kubernetes client from a kubeconfig file, or `$KUBECONFIG`/in-cluster when `None`.
pub async fn kube_client(kubeconfig: Option<&Path>) -> Result<kube::Client, ClientError> {
    let mut config = match kubeconfig {
        // A single file; a `:`-separated list is left to the standard inference.
        Some(path) if !path.as_os_str().to_string_lossy().contains(':') => {
            let file = read_kubeconfig(path)?;
            kube::Config::from_custom_kubeconfig(file, &Default::default()).await?
        }
        _ => {
            check_in_cluster_files(
                Path::new(SERVICE_ACCOUNT_TOKEN),
                Path::new(SERVICE_ACCOUNT_CA),
            )?;
            kube::Config::infer().await?
        }
    };
    config.connect_timeout = Some(Duration::from_secs(5));
    Ok(kube::Client::try_from(config)?)
}

/// Where the kubelet mounts the service-account token in a pod.
const SERVICE_ACCOUNT_TOKEN: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";
/// Where the kubelet mounts the service-account CA in a pod.
const SERVICE_ACCOUNT_CA: &str = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";

/// `path` read with a limit, naming the file, the limit and `setting` when over it.
fn read_limited(
    path: &Path,
    limit: u64,
    what: &str,
    setting: &str,
) -> Result<Vec<u8>, ClientError> {
    job_report::read_limited(path, limit).map_err(|e| {
        ClientError::File(match e {
            job_report::LimitedReadError::TooLarge { path, limit } => format!(
                "the {what} {} is larger than {limit} bytes; {setting} must name a file of at most {limit} bytes (not a device, a pipe or a different file)",
                path.display()
            ),
            job_report::LimitedReadError::Io { path, source } => {
                format!("cannot read the {what} {} ({setting}): {source}", path.display())
            }
        })
    })
}

/// The kubeconfig at `path`, read with its limit ([`job_report::MAX_KUBECONFIG_BYTES`]); the
/// files it names (relative to its directory, as kubectl takes them) are checked against theirs
/// before kube-rs reads them.
pub fn read_kubeconfig(path: &Path) -> Result<kube::config::Kubeconfig, ClientError> {
    let bytes = read_limited(
        path,
        job_report::MAX_KUBECONFIG_BYTES,
        "kubeconfig",
        "KUBECONFIG",
    )?;
    let text = String::from_utf8(bytes).map_err(|e| {
        ClientError::File(format!(
            "the kubeconfig {} is not UTF-8 text ({}); check what KUBECONFIG names",
            path.display(),
            e.utf8_error()
        ))
    })?;
    let mut config = kube::config::Kubeconfig::from_yaml(&text)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let absolute = |file: &mut String| {
        if Path::new(file.as_str()).is_relative() {
            *file = dir.join(file.as_str()).display().to_string();
        }
    };
    let pem = job_report::MAX_PEM_FILE_BYTES;
    let token = job_report::MAX_TOKEN_FILE_BYTES;
    for cluster in config
        .clusters
        .iter_mut()
        .filter_map(|c| c.cluster.as_mut())
    {
        if let Some(file) = cluster.certificate_authority.as_mut() {
            absolute(file);
            read_limited(
                Path::new(file),
                pem,
                "certificate-authority file",
                "the kubeconfig's certificate-authority",
            )?;
        }
    }
    for user in config
        .auth_infos
        .iter_mut()
        .filter_map(|u| u.auth_info.as_mut())
    {
        for (file, limit, what) in [
            (user.client_certificate.as_mut(), pem, "client-certificate"),
            (user.client_key.as_mut(), pem, "client-key"),
            (user.token_file.as_mut(), token, "tokenFile"),
        ] {
            if let Some(file) = file {
                absolute(file);
                read_limited(
                    Path::new(file),
                    limit,
                    &format!("{what} file"),
                    &format!("the kubeconfig's {what}"),
                )?;
            }
        }
    }
    Ok(config)
}

/// The in-cluster token and CA, when present, are within their limits before kube-rs reads
/// them (files the kubelet writes).
fn check_in_cluster_files(token: &Path, ca: &Path) -> Result<(), ClientError> {
    let setting = "the pod's service-account token mount";
    if token.exists() {
        read_limited(
            token,
            job_report::MAX_TOKEN_FILE_BYTES,
            "service-account token",
            setting,
        )?;
    }
    if ca.exists() {
        read_limited(
            ca,
            job_report::MAX_PEM_FILE_BYTES,
            "service-account CA",
            setting,
        )?;
    }
    Ok(())
}

/// Waits for the outcome and writes it onto the Job.
pub async fn run(config: Config, client: kube::Client, shutdown: impl Future<Output = ()>) -> Exit {
    let namespace = config
        .namespace
        .clone()
        .unwrap_or_else(|| client.default_namespace().to_owned());
    let span = tracing::info_span!(
        "status_reporter",
        namespace = %namespace,
        pod = config.pod_name.as_deref().unwrap_or(""),
        job = tracing::field::Empty,
        cluster_id = config.cluster_id.as_deref().unwrap_or(""),
    );
    Reporter::new(config, client, namespace)
        .run(shutdown)
        .instrument(span)
        .await
}

/// What the reporter waits on: the report file, inotify's wake-ups, the Pod watch, and the
/// adapter's end once seen.
struct Watches {
    results: ResultsFile,
    wake: mpsc::Receiver<()>,
    pod_events: Option<mpsc::Receiver<PodEvent>>,
    adapter_end: Option<Termination>,
}

struct Reporter {
    config: Config,
    client: kube::Client,
    namespace: String,
    started: Instant,
}

impl Reporter {
    fn new(config: Config, client: kube::Client, namespace: String) -> Reporter {
        Reporter {
            config,
            client,
            namespace,
            started: Instant::now(),
        }
    }

    async fn run(self, shutdown: impl Future<Output = ()>) -> Exit {
        let mut shutdown = std::pin::pin!(shutdown);
        let results = ResultsFile::new(
            self.config.results_path.clone(),
            self.config.legacy_condition_type().to_owned(),
            self.config.settle_time,
        );
        let (wake_tx, wake) = mpsc::channel(1);
        let _watcher = match self.config.file_watch {
            FileWatch::Inotify => results::watch_directory(results.path(), wake_tx),
            FileWatch::Poll => None,
        };
        let mut watches = Watches {
            results,
            wake,
            pod_events: self.watch_pod(),
            adapter_end: None,
        };

        // The Job's name, from the configuration or the Pod's label.
        let job_name = match self.config.job_name.clone() {
            Some(name) => name,
            None => match self
                .job_name_from_pod(&mut watches.pod_events, &mut watches.adapter_end)
                .await
            {
                Some(name) => name,
                None => return Exit::NotWritten,
            },
        };
        tracing::Span::current().record("job", job_name.as_str());
        let job = JobStatus::new(self.client.clone(), &self.namespace, &job_name);

        let view = match job.read(Instant::now() + FIRST_READ_BUDGET).await {
            Ok(view) => Some(view),
            Err(e @ JobError::Refused { .. }) => {
                tracing::error!(error = %e, "cannot read the Job; nothing can be reported");
                return Exit::NotWritten;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the Job yet; waiting for the report anyway");
                None
            }
        };
        let deadline = self.wait_deadline(view.as_ref());
        tracing::info!(
            results_path = %watches.results.path().display(),
            wait_seconds = deadline.saturating_duration_since(Instant::now()).as_secs(),
            inotify = _watcher.is_some(),
            "waiting for the adapter's report"
        );

        let (outcome, write_budget) = self
            .wait_for_outcome(&mut watches, shutdown.as_mut(), deadline)
            .await;
        self.write_outcome(&job, &job_name, view, outcome, write_budget)
            .await
    }

    /// Waits until the outcome is known: a settled report, the adapter's end, the deadline or
    /// SIGTERM, whichever comes first. Returns it with the time allowed for writing it.
    async fn wait_for_outcome(
        &self,
        watches: &mut Watches,
        mut shutdown: std::pin::Pin<&mut impl Future<Output = ()>>,
        deadline: Instant,
    ) -> (Outcome, Duration) {
        let Watches {
            results,
            wake,
            pod_events,
            adapter_end,
        } = watches;
        let mut poll = interval(self.config.poll_interval);
        poll.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let far = || Instant::now() + Duration::from_secs(86_400);

        loop {
            if let Some(end) = adapter_end.take() {
                let outcome = final_outcome(results, || Outcome::ended(end));
                break (outcome, self.config.write_timeout);
            }
            let settles_at = results.settles_at().unwrap_or_else(far);
            tokio::select! {
                biased;
                () = &mut shutdown => {
                    tracing::info!("SIGTERM: one last look at the report");
                    let outcome = match results.look() {
                        Look::Ready(report) => Outcome::Report(report),
                        _ => Outcome::Terminated,
                    };
                    break (outcome, SHUTDOWN_WRITE_BUDGET.min(self.config.write_timeout));
                }
                Some(event) = recv(pod_events) => match event {
                    PodEvent::Seen { adapter: Some(end), .. } => *adapter_end = Some(end),
                    PodEvent::Seen { adapter: None, .. } => {}
                    PodEvent::Deleted => tracing::info!("the pod is being deleted; waiting for SIGTERM"),
                    PodEvent::Unwatchable(why) => {
                        tracing::warn!(error = %why, "cannot watch the pod; the adapter's end will not be noticed, only its report or the deadline");
                        *pod_events = None;
                    }
                },
                () = sleep_until(deadline) => {
                    tracing::info!("deadline reached: one last look at the report");
                    let waited = deadline.duration_since(self.started);
                    let outcome = final_outcome(results, || Outcome::Timeout(waited));
                    break (outcome, self.config.write_timeout);
                }
                _ = wake.recv() => if let Some(outcome) = settled_outcome(results) { break (outcome, self.config.write_timeout) },
                _ = poll.tick() => if let Some(outcome) = settled_outcome(results) { break (outcome, self.config.write_timeout) },
                () = sleep_until(settles_at) => if let Some(outcome) = settled_outcome(results) { break (outcome, self.config.write_timeout) },
            }
        }
    }

    /// Writes `outcome` on the Job within `write_budget`, then records the run's Event (best
    /// effort: it never changes the exit code).
    async fn write_outcome(
        &self,
        job: &JobStatus,
        job_name: &str,
        view: Option<JobView>,
        outcome: Outcome,
        write_budget: Duration,
    ) -> Exit {
        tracing::info!(outcome = outcome.reason(), "writing the outcome to the Job");
        let own_failure = outcome.is_own_failure();
        let report = outcome.into_report(&self.config.condition_types);
        let deadline = Instant::now() + write_budget;
        match job.write_from(view, &report, deadline).await {
            Ok((written, view)) => {
                tracing::info!(
                    unchanged = written == Written::Unchanged,
                    cpu_us = job_report::usage::cpu_micros(),
                    peak_rss_kib = job_report::usage::peak_rss_kib(),
                    conditions = %report.conditions.iter().map(|c| format!("{}={}/{}", c.type_, c.status, c.reason)).collect::<Vec<_>>().join(","),
                    "the Job's status is written"
                );
                self.record_event(job_name, &view, &report, own_failure, deadline)
                    .await;
                Exit::Written
            }
            Err(e) => {
                tracing::error!(error = %e, "the Job's status could not be written");
                Exit::NotWritten
            }
        }
    }

    /// The run's one Event on the Job ([`event`]), unless `--record-events` is off; within what
    /// is left of the write budget, at most [`event::TIMEOUT`].
    async fn record_event(
        &self,
        job_name: &str,
        view: &JobView,
        report: &Report,
        own_failure: bool,
        deadline: Instant,
    ) {
        if !self.config.record_events {
            tracing::debug!("RECORD_EVENTS is off: no Event");
            return;
        }
        let Some(verdict) = event::decide(report, own_failure, &self.config.condition_types) else {
            return;
        };
        let Some(uid) = view.uid.as_deref() else {
            tracing::warn!("the Job as read has no uid; no Event is recorded");
            return;
        };
        let budget = deadline
            .saturating_duration_since(Instant::now())
            .min(event::TIMEOUT);
        if budget.is_zero() {
            tracing::warn!("no time left of the write budget; no Event is recorded");
            return;
        }
        let job = event::JobRef {
            namespace: &self.namespace,
            name: job_name,
            uid,
        };
        let instance = self.config.pod_name.as_deref().unwrap_or(job_name);
        let built = event::build(&job, &verdict, instance, jiff::Timestamp::now());
        let api: Api<Event> = Api::namespaced(self.client.clone(), &self.namespace);
        let recorded = event::record(&api, &built, budget).await;
        event::log(&recorded, &built);
    }

    fn watch_pod(&self) -> Option<mpsc::Receiver<PodEvent>> {
        let pod = self.config.pod_name.clone()?;
        let (tx, rx) = mpsc::channel(8);
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        tokio::spawn(adapter_pod::watch(
            api,
            pod,
            self.config.adapter_container.clone(),
            tx,
        ));
        Some(rx)
    }

    async fn job_name_from_pod(
        &self,
        pod_events: &mut Option<mpsc::Receiver<PodEvent>>,
        adapter_end: &mut Option<Termination>,
    ) -> Option<String> {
        let budget = self.config.max_wait.unwrap_or(DEFAULT_MAX_WAIT);
        let wait = async {
            if pod_events.is_none() {
                return Err("POD_NAME is not set".to_owned());
            }
            match recv(pod_events).await {
                Some(PodEvent::Seen { job_name, adapter }) => {
                    *adapter_end = adapter;
                    job_name.ok_or_else(|| {
                        "the pod has no batch.kubernetes.io/job-name label; set JOB_NAME".to_owned()
                    })
                }
                Some(PodEvent::Deleted) => Err("the pod was deleted".to_owned()),
                Some(PodEvent::Unwatchable(why)) => {
                    Err(format!("{why}; set JOB_NAME or allow get/watch on pods"))
                }
                None => Err("the pod watch ended".to_owned()),
            }
        };
        match tokio::time::timeout(budget, wait).await {
            Ok(Ok(name)) => Some(name),
            Ok(Err(why)) => {
                tracing::error!(error = %why, "cannot tell which Job to write");
                None
            }
            Err(_) => {
                tracing::error!(
                    "the pod was not seen within the wait; cannot tell which Job to write (set JOB_NAME)"
                );
                None
            }
        }
    }

    /// The moment to stop waiting: `--max-wait` from start, capped by the Job's own deadline
    /// less a margin; 300 s when neither is known.
    fn wait_deadline(&self, view: Option<&JobView>) -> Instant {
        let from_flag = self.config.max_wait.map(|d| self.started + d);
        let from_job = view.and_then(JobView::deadline).map(|end| {
            let left = jiff::Timestamp::now().duration_until(end);
            let left = Duration::try_from(left).unwrap_or(Duration::ZERO);
            Instant::now() + left.saturating_sub(DEADLINE_MARGIN)
        });
        match (from_flag, from_job) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => self.started + DEFAULT_MAX_WAIT,
        }
    }
}

/// Receives from an optional channel; pends forever when there is none (or it closed).
async fn recv(rx: &mut Option<mpsc::Receiver<PodEvent>>) -> Option<PodEvent> {
    match rx {
        Some(r) => match r.recv().await {
            Some(event) => Some(event),
            None => {
                *rx = None;
                std::future::pending().await
            }
        },
        None => std::future::pending().await,
    }
}

/// A look while the adapter may still be writing: only a valid or settled-broken file decides.
pub fn settled_outcome(results: &mut ResultsFile) -> Option<Outcome> {
    match results.look() {
        Look::Ready(report) => Some(Outcome::Report(report)),
        Look::Broken { why, settled: true } => Some(Outcome::InvalidResultFormat(why)),
        Look::Broken { settled: false, .. } | Look::Absent => None,
    }
}

/// The last look, once the adapter can no longer write: whatever is there is final; `absent`
/// says what no file means.
pub fn final_outcome(results: &mut ResultsFile, absent: impl FnOnce() -> Outcome) -> Outcome {
    match results.look() {
        Look::Ready(report) => Outcome::Report(report),
        Look::Broken { why, .. } => Outcome::InvalidResultFormat(why),
        Look::Absent => absent(),
    }
}

#[cfg(test)]
mod client_file_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn an_endless_kubeconfig_is_refused_naming_kubeconfig_and_the_limit() {
        let err = read_kubeconfig(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("/dev/zero")
                && err.contains("KUBECONFIG must name a file of at most 1048576 bytes"),
            "{err}"
        );
    }

    #[test]
    fn an_oversized_token_file_named_by_the_kubeconfig_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token"), vec![b'a'; 64 * 1024 + 1]).unwrap();
        let path = dir.path().join("config");
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:6443\"}\nusers:\n- name: u\n  user: {tokenFile: token}\n",
        )
        .unwrap();
        let err = read_kubeconfig(&path).unwrap_err().to_string();
        assert!(
            err.contains("tokenFile file")
                && err.contains("65536 bytes")
                && err.contains(&dir.path().join("token").display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn oversized_in_cluster_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("token");
        std::fs::write(&ok, "t").unwrap();
        assert!(check_in_cluster_files(&ok, &ok).is_ok());
        let err = check_in_cluster_files(Path::new("/dev/zero"), &ok).unwrap_err();
        assert!(err.to_string().contains("service-account token"), "{err}");
        let err = check_in_cluster_files(&ok, Path::new("/dev/zero")).unwrap_err();
        assert!(err.to_string().contains("service-account CA"), "{err}");
    }
}
