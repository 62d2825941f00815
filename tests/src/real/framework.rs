//! The HyperFleet adapter framework (`adapter serve`, the kit's `HYPERFLEET_FRAMEWORK_BIN`) run
//! by a test: one instance per [`Framework::start`], in a private network namespace of its own
//! (it binds `:8080` and `:9090` on all interfaces with no flag to move them; see
//! [`super::netns`]), reaching the kit's servers on their usual loopback URLs, its health port
//! reached from the test through a unix socket, its output in a log file, stopped (with its
//! forwarders) when dropped.
//!
//! What it runs is a [`FrameworkSpec`]: a deployment config, a task config, extra `serve` arguments
//! and the environment, exactly as a Deployment would give them. The environment is only what the
//! spec holds (plus `PATH`): nothing leaks in from the test process. [`FrameworkSpec::shipped`] is
//! the project's own deployment (`manifests/hyperfleet/…`, unchanged) with the environment
//! docs/deploying.md "Deploying with HyperFleet" lists; a caller with other files (e.g. rendered by
//! the framework's Helm chart) builds the spec itself.
//!
//! ```no_run
//! # async fn demo(real: &testbed::real::RealSystems, kubeconfig: &std::path::Path) -> anyhow::Result<()> {
//! use testbed::real::framework::{Deployment, Framework, FrameworkSpec};
//! let dir = tempfile::tempdir()?;
//! let token = testbed::real::framework::write_api_token(dir.path())?;
//! let spec = FrameworkSpec::shipped(Deployment::ControlPlane, real, "loop-a1b2c3d4-clusters", "mgmt-a", kubeconfig, &token);
//! let framework = Framework::start(real, spec, dir.path()).await?; // waits for /readyz
//! // … events published to the topic now create pulse Jobs …
//! assert!(framework.log().contains("Adapter is ready"));
//! # Ok(()) }
//! ```
//!
//! The framework's `/readyz` answers 200 once its broker subscription is up (`hfa@3f746a5:
//! cmd/adapter/main.go:622-624`), so an event published after [`Framework::start`] returns reaches
//! it. Its subscription queue is `<topic>-<subscription_id>` (framework doc §3.3): a topic of its
//! own per test keeps tests apart.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::RealSystems;
use super::netns::{PrivateNet, http_get, url_port};
use super::process::Daemon;

/// The framework's fixed health port (`/healthz`, `/readyz`).
pub const HEALTH_PORT: u16 = 8080;
/// The framework's fixed metrics port (`/metrics`).
pub const METRICS_PORT: u16 = 9090;
/// How long [`Framework::start`] waits for `/readyz`.
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// The image tag the shipped specs give the pulse Jobs (`ADAPTER_IMAGE_TAG`): the played kubelet
/// runs this checkout's binaries whatever the tag says.
pub const IMAGE_TAG: &str = "real-loop";

/// One of the project's two framework deployments (`manifests/hyperfleet/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deployment {
    /// `adapter-config.yaml` + `adapter-task-config.yaml`: cluster events, `hs-cp-…` Jobs.
    ControlPlane,
    /// `nodepool/adapter-config.yaml` + `nodepool/adapter-task-config.yaml`: NodePool events,
    /// `hs-np-…` Jobs.
    NodePool,
}

impl Deployment {
    /// The deployment's directory in this checkout.
    pub fn dir(self) -> PathBuf {
        let hyperfleet = manifests_dir().join("hyperfleet");
        match self {
            Deployment::ControlPlane => hyperfleet,
            Deployment::NodePool => hyperfleet.join("nodepool"),
        }
    }

    /// The deployment config (`--config`).
    pub fn adapter_config(self) -> PathBuf {
        self.dir().join("adapter-config.yaml")
    }

    /// The task config (`--task-config`).
    pub fn task_config(self) -> PathBuf {
        self.dir().join("adapter-task-config.yaml")
    }

    /// A short name for logs and files.
    pub fn name(self) -> &'static str {
        match self {
            Deployment::ControlPlane => "controlplane",
            Deployment::NodePool => "nodepool",
        }
    }
}

/// This checkout's `manifests/`.
pub fn manifests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or(Path::new("."))
        .join("manifests")
}

/// What one framework instance runs: `adapter serve --config <config> --task-config
/// <task_config> <args…>` with exactly `env` (plus `PATH`).
#[derive(Debug, Clone)]
pub struct FrameworkSpec {
    /// Labels the instance in file names and messages.
    pub name: String,
    pub config: PathBuf,
    pub task_config: PathBuf,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
}

impl FrameworkSpec {
    /// The shipped `deployment`, unchanged, with the Deployment environment of docs/deploying.md
    /// "Deploying with HyperFleet" pointed at the kit: `HYPERFLEET_API_BASE_URL`, the Maestro URLs,
    /// `MANAGEMENT_CLUSTER_CONSUMER` = `consumer`, `ADAPTER_IMAGE_TAG` = [`IMAGE_TAG`],
    /// `HYPERFLEET_BROKER_TOPIC` = `topic`, the kit's `BROKER_CONFIG_FILE`, the Kubernetes client
    /// on `kubeconfig` (`HYPERFLEET_KUBERNETES_KUBE_CONFIG_PATH`: the Deployment would use its
    /// ServiceAccount in-cluster), the API token file `api_token` (the Deployment mounts it at the
    /// config's `/var/run/secrets/hyperfleet/token`), and `LOG_LEVEL=debug` so the log says what
    /// each event did.
    pub fn shipped(
        deployment: Deployment,
        real: &RealSystems,
        topic: &str,
        consumer: &str,
        kubeconfig: &Path,
        api_token: &Path,
    ) -> FrameworkSpec {
        let path = |p: &Path| p.to_string_lossy().into_owned();
        let env: BTreeMap<String, String> = [
            (
                "HYPERFLEET_API_BASE_URL",
                real.var("HYPERFLEET_API_URL").to_owned(),
            ),
            ("MANAGEMENT_CLUSTER_CONSUMER", consumer.to_owned()),
            ("MAESTRO_API_URL", real.var("MAESTRO_API_URL").to_owned()),
            ("MAESTRO_GRPC_URL", real.var("MAESTRO_GRPC_URL").to_owned()),
            ("ADAPTER_IMAGE_TAG", IMAGE_TAG.to_owned()),
            ("HYPERFLEET_BROKER_TOPIC", topic.to_owned()),
            (
                "BROKER_CONFIG_FILE",
                real.var("BROKER_CONFIG_FILE").to_owned(),
            ),
            ("HYPERFLEET_KUBERNETES_KUBE_CONFIG_PATH", path(kubeconfig)),
            ("HYPERFLEET_API_AUTH_TOKEN_PATH", path(api_token)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        FrameworkSpec {
            name: deployment.name().to_owned(),
            config: deployment.adapter_config(),
            task_config: deployment.task_config(),
            args: vec![],
            env,
        }
    }
}

/// Writes a HyperFleet API token file into `dir` (the kit's API runs with JWT off and ignores
/// it; the framework's config names a token file, which must exist) and returns its path.
///
/// # Errors
/// When the file cannot be written.
pub fn write_api_token(dir: &Path) -> anyhow::Result<PathBuf> {
    let path = dir.join("hyperfleet-api-token");
    std::fs::write(&path, "real-loop-token-unused-by-the-kit\n")
        .with_context(|| format!("write {}", path.display()))?;
    Ok(path)
}

/// The loopback ports of every server in the kit's env file (HyperFleet API, RabbitMQ, the kube
/// API server, Maestro REST and gRPC): what a framework instance may need to reach.
pub fn kit_ports(real: &RealSystems) -> Vec<u16> {
    [
        "HYPERFLEET_API_URL",
        "AMQP_URL",
        "REAL_KUBE_API_URL",
        "MAESTRO_API_URL",
        "MAESTRO_GRPC_URL",
    ]
    .into_iter()
    .filter_map(|name| real.env().get(name))
    .filter_map(|url| url_port(url).ok())
    .collect()
}

/// A running framework instance; stopped with its namespace and forwarders on drop.
#[derive(Debug)]
pub struct Framework {
    name: String,
    daemon: Daemon,
    net: PrivateNet,
}

impl Framework {
    /// Starts `spec` in a private network namespace whose sockets and log live in `dir` (give
    /// each instance its own directory with a short path), and waits up to [`READY_TIMEOUT`] for
    /// `/readyz` to answer 200.
    ///
    /// # Errors
    /// When it cannot be started, exits, or is not ready in time; the message has its log's
    /// last lines.
    pub async fn start(
        real: &RealSystems,
        spec: FrameworkSpec,
        dir: &Path,
    ) -> anyhow::Result<Framework> {
        std::fs::create_dir_all(dir)?;
        let net = PrivateNet::new(dir, &kit_ports(real), &[HEALTH_PORT, METRICS_PORT]);
        let mut args = vec![
            "serve".to_owned(),
            "--config".to_owned(),
            spec.config.to_string_lossy().into_owned(),
            "--task-config".to_owned(),
            spec.task_config.to_string_lossy().into_owned(),
        ];
        args.extend(spec.args.iter().cloned());
        let binary = PathBuf::from(real.var("HYPERFLEET_FRAMEWORK_BIN"));
        let mut command = net.command(&binary, &args);
        command.env_clear();
        command.env(
            "PATH",
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/sbin:/usr/bin:/sbin:/bin".into()),
        );
        command.envs(&spec.env);
        let log = dir.join(format!("framework-{}.log", spec.name));
        let daemon = Daemon::spawn(&format!("framework {}", spec.name), command, &log)?;
        let mut framework = Framework {
            name: spec.name,
            daemon,
            net,
        };
        framework.wait_ready().await?;
        Ok(framework)
    }

    async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.daemon.exited() {
                bail!(
                    "the framework {} exited ({status}) before it was ready; its log:\n{}",
                    self.name,
                    self.log_tail(40)
                );
            }
            if matches!(self.get("/readyz").await, Ok((200, _))) {
                return Ok(());
            }
            if started.elapsed() > READY_TIMEOUT {
                bail!(
                    "the framework {} was not ready within {READY_TIMEOUT:?}; its log:\n{}",
                    self.name,
                    self.log_tail(40)
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// `GET path` on the framework's health port: status code and body.
    ///
    /// # Errors
    /// When the port cannot be reached.
    pub async fn get(&self, path: &str) -> anyhow::Result<(u16, String)> {
        http_get(&self.net.exposed_socket(HEALTH_PORT), path).await
    }

    /// The framework's Prometheus metrics text.
    ///
    /// # Errors
    /// When the metrics port cannot be reached.
    pub async fn metrics(&self) -> anyhow::Result<String> {
        let (code, body) = http_get(&self.net.exposed_socket(METRICS_PORT), "/metrics").await?;
        if code != 200 {
            bail!("/metrics answered {code}");
        }
        Ok(body)
    }

    /// The spec's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The whole log so far.
    pub fn log(&self) -> String {
        self.daemon.log()
    }

    /// The last `lines` lines of the log, for an assertion's message.
    pub fn log_tail(&self, lines: usize) -> String {
        self.daemon.log_tail(lines)
    }

    /// The log file.
    pub fn log_path(&self) -> &Path {
        self.daemon.log_path()
    }

    /// `None` while it runs, else how it exited.
    pub fn exited(&mut self) -> Option<String> {
        self.daemon.exited()
    }

    /// Stops it (SIGTERM to its group, SIGKILL after the grace period); also done on drop.
    pub fn stop(&mut self) {
        self.daemon.stop();
    }
}
