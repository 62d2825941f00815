//! The kubelet's part of a pulse, played against an API server (the real one of the team
//! folder's kit, which has no kubelet, or the testbed's fake): for a Pod the Job controller (or a
//! test) created, run its containers as processes of this checkout's binaries and write the Pod's
//! status through the API server as a kubelet does, so the real job controller completes or fails
//! the Job.
//!
//! # Public API
//!
//! ```text
//! Kubelet::new(kubeconfig: kube::config::Kubeconfig, config: KubeletConfig) -> anyhow::Result<Kubelet>
//!     KubeletConfig { images: Images, root: Option<PathBuf>, isolation: Option<Isolation>,
//!                     verbose: bool, max_pod_runtime: Duration }      (Default: this checkout's images)
//!     Images::this_checkout()                      hypershift-adapter, status-reporter → target/<profile>/<binary>
//!     Images::default().with("name", Program { exe, args, user })    any other image → a program
//! kubelet.run(ns, pod).await -> anyhow::Result<PodRun>    run one Pod to its end
//! kubelet.start(ns, pod) -> RunningPod                    the same, in the background:
//!     running.container_ended("status-reporter").await -> Option<ContainerRun>
//!     running.wait().await -> anyhow::Result<PodRun>
//! kubelet.serve(ns, label_selector) -> Serving             run every Pod that appears (Pending, not yet run)
//!     serving.finished() -> Vec<PodRun>;  serving.wait_for(pod_name_prefix, timeout).await -> Option<PodRun>
//!     dropping it stops watching and kills what still runs
//! kubelet.isolation() -> Isolation;  kubelet.memory_cgroups() -> Option<cgroup::Version>
//! PodRun { namespace, name, uid, dir, deleted, containers: Vec<ContainerRun> }
//!     .container(name) -> Option<&ContainerRun>
//! ContainerRun { name, terminated: Option<Terminated>, killed, log }   .log_text() -> String
//! Terminated { exit_code, reason, message, started_at, finished_at }  (reason: Completed | Error | OOMKilled | StartError)
//! ```
//!
//! What it does, per Pod ([`pod`]): status `Pending` (containers `ContainerCreating`) with
//! `startTime`; the volumes ([`volumes`]: emptyDir, Secret, ConfigMap, downward API, projected
//! with the ServiceAccount token from the TokenRequest API, hostPath); each container's env
//! ([`env`]: values with `$(VAR)`, downward-API fieldRefs, Secret/ConfigMap keys, `limits.memory`,
//! and the `KUBERNETES_SERVICE_*` variables pointing at the API server); the containers started in
//! order ([`sandbox`]: a mount namespace with the volumes at their mount paths and the container's
//! user when root, else path rewriting), each in a memory cgroup with its `limits.memory`
//! ([`cgroup`]); `Running` with `startedAt`; each container `terminated` with its exit code, reason
//! and termination message ([`termination`], the kubelet's limits) as it ends; the phase
//! `Succeeded`/`Failed` when all ended. A Pod being deleted (the job controller at the Job's
//! `activeDeadlineSeconds`) gets `SIGTERM`, its grace period (at least 2 s, as the kubelet), then
//! `SIGKILL`. A missing Secret or key leaves the container waiting (`CreateContainerConfigError`),
//! a missing volume source the Pod `ContainerCreating`, as on a node, until the Pod is deleted or
//! `max_pod_runtime` (a test's guard) passes.
//!
//! OOM: with a memory cgroup the kernel enforces the limit and `OOMKilled` is what it counted.
//! Without one (not root, no writable controller) the documented stand-in applies: a container
//! with a memory limit that exits with code 137 is reported `OOMKilled`.
//!
//! Not played: image pulls (an image that is not one of [`Images`] waits in `ErrImagePull`),
//! probes, restarts (`restartPolicy: Never` is what the Jobs use), a node object and binding,
//! `emptyDir.sizeLimit`, token rotation (pulses are shorter than a token's life).

pub mod cgroup;
mod container;
mod deletion;
pub mod env;
mod pod;
mod process;
pub mod sandbox;
mod serve;
pub mod source;
pub mod status;
mod termination;
pub mod volumes;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::sync::watch;

pub use sandbox::Isolation;
pub use serve::Serving;
pub use status::Terminated;
pub use termination::{
    MAX_POD_TERMINATION_MESSAGE, MAX_TERMINATION_MESSAGE, MAX_TERMINATION_MESSAGE_LOG_LENGTH,
    MAX_TERMINATION_MESSAGE_LOG_LINES, TerminationMessage,
};

/// The pulse runners' guard ([`KubeletConfig::max_pod_runtime`] of `local-pulse` and
/// [`crate::real_pulse`]): a pulse still running after this is stopped and counts as failed.
pub const PULSE_TIMEOUT: Duration = Duration::from_secs(120);

/// The uid and gid of this project's images (`USER 65532:65532` in the Dockerfile).
pub const IMAGE_USER: (u32, u32) = (65532, 65532);

/// What runs for an image: a host program, the arguments it needs before the container's, and
/// the image's user (used when the Pod sets no `runAsUser`).
#[derive(Debug, Clone)]
pub struct Program {
    pub exe: PathBuf,
    pub args: Vec<String>,
    pub user: Option<(u32, u32)>,
}

/// Images by repository name (the last path element, without tag or digest).
#[derive(Debug, Clone, Default)]
pub struct Images {
    programs: BTreeMap<String, Program>,
}

impl Images {
    /// `hypershift-adapter` and `status-reporter`: this checkout's built binaries, as user 65532.
    ///
    /// # Panics
    /// When a binary is not built (the message names the command to build it).
    pub fn this_checkout() -> Images {
        ["hypershift-adapter", "status-reporter"].into_iter().fold(
            Images::default(),
            |images, name| {
                images.with(
                    name,
                    Program {
                        exe: crate::binaries::path(name),
                        args: Vec::new(),
                        user: Some(IMAGE_USER),
                    },
                )
            },
        )
    }

    /// These images and `name` run as `program`.
    pub fn with(mut self, name: &str, program: Program) -> Images {
        self.programs.insert(name.to_owned(), program);
        self
    }

    /// The program for an image reference (`quay.io/x/status-reporter:v1`, `status-reporter@sha256:…`).
    pub fn program(&self, image: &str) -> Option<(&str, &Program)> {
        self.programs
            .get_key_value(repository(image))
            .map(|(name, program)| (name.as_str(), program))
    }
}

/// `status-reporter` of `quay.io/x/status-reporter:v1@sha256:…`.
fn repository(image: &str) -> &str {
    let without_digest = image.split('@').next().unwrap_or(image);
    let last = without_digest.rsplit('/').next().unwrap_or(without_digest);
    last.split(':').next().unwrap_or(last)
}

/// How the kubelet runs.
#[derive(Debug, Clone)]
pub struct KubeletConfig {
    pub images: Images,
    /// Where pod directories go (volumes, logs, container roots); a temporary directory when
    /// `None`, removed with the kubelet.
    pub root: Option<PathBuf>,
    /// `None`: [`Isolation::detect`].
    pub isolation: Option<Isolation>,
    /// Echo the containers' output to stderr.
    pub verbose: bool,
    /// A test's guard: a Pod still running after this is stopped as if deleted.
    pub max_pod_runtime: Duration,
}

impl Default for KubeletConfig {
    fn default() -> Self {
        KubeletConfig {
            images: Images::this_checkout(),
            root: None,
            isolation: None,
            verbose: false,
            max_pod_runtime: Duration::from_secs(600),
        }
    }
}

/// A kubelet for one API server; cheap to clone.
#[derive(Clone)]
pub struct Kubelet {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Kubelet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kubelet")
            .field("server", &self.inner.server)
            .field("isolation", &self.inner.isolation)
            .finish_non_exhaustive()
    }
}

/// What every pod run shares.
struct Inner {
    client: kube::Client,
    /// The API server's URL, host and port.
    server: String,
    host: String,
    port: u16,
    config: KubeletConfig,
    isolation: Isolation,
    cgroups: Option<cgroup::MemoryCgroups>,
    root: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl Kubelet {
    /// A kubelet that reads and writes through the API server of `kubeconfig` (its credentials
    /// need pods, pods/status, secrets, configmaps and serviceaccounts/token in the namespaces it
    /// serves).
    ///
    /// # Errors
    /// When the kubeconfig is unusable or the root directory cannot be made.
    pub async fn new(
        kubeconfig: kube::config::Kubeconfig,
        config: KubeletConfig,
    ) -> anyhow::Result<Kubelet> {
        let client_config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .context("the kubelet's kubeconfig")?;
        let url = client_config.cluster_url.clone();
        let host = url
            .host()
            .context("the API server URL has no host")?
            .to_owned();
        let port = url
            .port_u16()
            .unwrap_or(if url.scheme_str() == Some("http") {
                80
            } else {
                443
            });
        let client = kube::Client::try_from(client_config)?;
        let (root, temp) = match &config.root {
            Some(root) => (root.clone(), None),
            None => {
                let temp = tempfile::Builder::new()
                    .prefix("testbed-kubelet-")
                    .tempdir()?;
                (temp.path().to_owned(), Some(temp))
            }
        };
        std::fs::create_dir_all(&root)?;
        let isolation = config.isolation.unwrap_or_else(Isolation::detect);
        let cgroups = match isolation {
            Isolation::MountNamespace => cgroup::MemoryCgroups::detect(),
            Isolation::PathRewrite => None,
        };
        let inner = Inner {
            client,
            server: url.to_string().trim_end_matches('/').to_owned(),
            host,
            port,
            config,
            isolation,
            cgroups,
            root,
            _temp: temp,
        };
        Ok(Kubelet {
            inner: Arc::new(inner),
        })
    }

    /// How container processes are isolated.
    pub fn isolation(&self) -> Isolation {
        self.inner.isolation
    }

    /// The cgroup hierarchy memory limits are enforced in (`None`: the OOM stand-in).
    pub fn memory_cgroups(&self) -> Option<cgroup::Version> {
        self.inner
            .cgroups
            .as_ref()
            .map(cgroup::MemoryCgroups::version)
    }

    /// Where pod directories are made.
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// Runs Pod `ns/name` to its end.
    ///
    /// # Errors
    /// When the Pod cannot be read or its directory made.
    pub async fn run(&self, ns: &str, name: &str) -> anyhow::Result<PodRun> {
        self.start(ns, name).wait().await
    }

    /// Runs Pod `ns/name` in the background.
    pub fn start(&self, ns: &str, name: &str) -> RunningPod {
        let (publish, ended) = watch::channel(Vec::new());
        let inner = Arc::clone(&self.inner);
        let (ns, name) = (ns.to_owned(), name.to_owned());
        let task = tokio::spawn(async move { pod::run(inner, ns, name, publish).await });
        RunningPod {
            ended,
            task: Some(task),
        }
    }

    /// Runs every Pod in `ns` matching `label_selector` that appears not yet started, until the
    /// returned handle is dropped.
    pub fn serve(&self, ns: &str, label_selector: &str) -> Serving {
        serve::serve(self.clone(), ns, label_selector)
    }
}

/// A Pod being run ([`Kubelet::start`]); dropping it before [`RunningPod::wait`] kills its
/// containers.
pub struct RunningPod {
    ended: watch::Receiver<Vec<ContainerRun>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<PodRun>>>,
}

impl Drop for RunningPod {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

impl RunningPod {
    /// Waits until container `name` has ended; `None` if the run ended without it.
    pub async fn container_ended(&mut self, name: &str) -> Option<ContainerRun> {
        let found = self
            .ended
            .wait_for(|ended| ended.iter().any(|c| c.name == name))
            .await
            .ok()?;
        found.iter().find(|c| c.name == name).cloned()
    }

    /// Waits for the run's end.
    ///
    /// # Errors
    /// As [`Kubelet::run`].
    pub async fn wait(mut self) -> anyhow::Result<PodRun> {
        let task = self
            .task
            .take()
            .context("the pod's run was already awaited")?;
        task.await.context("the pod's run panicked")?
    }
}

/// A Pod's run: how each container ended.
#[derive(Debug, Clone)]
pub struct PodRun {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// The pod's directory (volumes, logs, setup scripts).
    pub dir: PathBuf,
    /// The Pod was deleted (or the run's time limit passed) while containers ran.
    pub deleted: bool,
    pub containers: Vec<ContainerRun>,
}

impl PodRun {
    pub fn container(&self, name: &str) -> Option<&ContainerRun> {
        self.containers.iter().find(|c| c.name == name)
    }
}

/// One container's run.
#[derive(Debug, Clone)]
pub struct ContainerRun {
    pub name: String,
    /// As written to the Pod; `None` if it never started.
    pub terminated: Option<Terminated>,
    /// Stopped by the kubelet (the Pod was deleted, or the time limit).
    pub killed: bool,
    pub log: PathBuf,
}

impl ContainerRun {
    /// The container's output so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The exit code, `None` if killed by the kubelet or never started.
    pub fn exit_code(&self) -> Option<i32> {
        self.terminated
            .as_ref()
            .filter(|_| !self.killed)
            .map(|t| t.exit_code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_found_by_repository_name() {
        assert_eq!(repository("hypershift-adapter:dev"), "hypershift-adapter");
        assert_eq!(
            repository("quay.io/org/status-reporter:v1@sha256:ab"),
            "status-reporter"
        );
        assert_eq!(
            repository("localhost:5000/status-reporter"),
            "status-reporter"
        );
        let images = Images::default().with(
            "status-reporter",
            Program {
                exe: "/bin/true".into(),
                args: vec![],
                user: None,
            },
        );
        assert!(images.program("quay.io/org/status-reporter:v1").is_some());
        assert!(images.program("hypershift-adapter:dev").is_none());
    }
}
