//! HyperFleet Sentinel (the kit's `SENTINEL_BIN`, `sentinel serve`) run by a test: it polls the
//! real HyperFleet API for clusters or NodePools and publishes a CloudEvent per resource its
//! decision selects to RabbitMQ (the kit's `BROKER_CONFIG_FILE`), on a topic of the test's own.
//! Health and metrics bind free loopback ports (`--health-server-bindaddress`,
//! `--metrics-server-bindaddress`); the output goes to a log file; it is stopped when dropped.
//!
//! Tests share one API, so each Sentinel watches only its test's resources: the
//! `resource_selector` label (e.g. `testrun: loop-a1b2c3d4`) that the test puts on every
//! cluster and NodePool it creates. Its key must not contain `-`: Sentinel sends the selector as
//! the search `labels.<key>='<value>'`, and the real API parses `labels.loop-test` as a
//! subtraction (400, `HYPERFLEET-VAL-005` `unsupported comparison operator: SUB`), so every poll
//! fails; [`Sentinel::start`] refuses such a key. The decision is Sentinel's own default
//! (`hyperfleet-sentinel@445ecb0:internal/config/config.go`, `DefaultMessageDecision`): publish a
//! new resource, a generation newer than `Reconciled`'s, a reconciled resource not updated for
//! 30 min, and a resource not reconciled whose `Reconciled` was last updated more than the
//! debounce ago; only the debounce is a [`SentinelSpec`] setting (upstream: 10 s). The event data
//! is `{id, kind, href, generation}`, plus `owner_references {id, kind, href}` for NodePools (the
//! upstream example config's comment: "For nodepools, the message should contain
//! owner_references"), which the NodePool task config reads.
//!
//! ```no_run
//! # async fn demo(real: &testbed::real::RealSystems) -> anyhow::Result<()> {
//! use testbed::real::sentinel::{Resources, Sentinel, SentinelSpec};
//! let dir = tempfile::tempdir()?;
//! let spec = SentinelSpec::new(Resources::Clusters, "loop-a1b2c3d4-clusters", ("testrun", "loop-a1b2c3d4"));
//! let sentinel = Sentinel::start(real, spec, dir.path()).await?; // waits for /readyz
//! # Ok(()) }
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::RealSystems;
use super::process::{Daemon, free_port};

/// How long [`Sentinel::start`] waits for `/readyz`.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// What a Sentinel watches (`resource_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resources {
    Clusters,
    NodePools,
}

impl Resources {
    /// The API's plural, Sentinel's `resource_type`.
    pub fn plural(self) -> &'static str {
        match self {
            Resources::Clusters => "clusters",
            Resources::NodePools => "nodepools",
        }
    }
}

/// One Sentinel's settings.
#[derive(Debug, Clone)]
pub struct SentinelSpec {
    pub resources: Resources,
    /// The broker topic it publishes to (`clients.broker.topic`).
    pub topic: String,
    /// `(label, value)` every watched resource carries (`resource_selector`).
    pub selector: (String, String),
    /// `poll_interval` (upstream default 5 s).
    pub poll_interval: Duration,
    /// How long after `Reconciled`'s last update a resource that is not reconciled is published
    /// again (upstream default 10 s).
    pub debounce: Duration,
}

impl SentinelSpec {
    /// Polls every second and debounces 2 s: fast enough for tests, slow enough that the API and
    /// the framework are not flooded.
    pub fn new(resources: Resources, topic: &str, selector: (&str, &str)) -> SentinelSpec {
        SentinelSpec {
            resources,
            topic: topic.to_owned(),
            selector: (selector.0.to_owned(), selector.1.to_owned()),
            poll_interval: Duration::from_secs(1),
            debounce: Duration::from_secs(2),
        }
    }

    /// The config file's text.
    pub fn config_yaml(&self, api_url: &str) -> String {
        let secs = |d: Duration| format!("{}ms", d.as_millis());
        let name = format!("sentinel-{}", self.topic);
        let owner = match self.resources {
            Resources::Clusters => "",
            Resources::NodePools => {
                "  owner_references:\n    id: \"resource.owner_references.id\"\n    kind: \"resource.owner_references.kind\"\n    href: \"resource.owner_references.href\"\n"
            }
        };
        format!(
            r#"sentinel:
  name: {name}
debug_config: false
tracing_enabled: false
log:
  level: debug
  format: json
  output: stdout
clients:
  hyperfleet_api:
    base_url: {api_url}
    version: v1
    timeout: 10s
  broker:
    topic: {topic}
resource_type: {plural}
poll_interval: {poll}
message_decision:
  params:
    - name: ref_time
      expr: 'condition("Reconciled").last_updated_time'
    - name: is_reconciled
      expr: 'condition("Reconciled").status == "True"'
    - name: has_ref_time
      expr: 'ref_time != ""'
    - name: is_new_resource
      expr: 'resource.generation == 1 && !has_ref_time'
    - name: generation_mismatch
      expr: 'resource.generation > condition("Reconciled").observed_generation'
    - name: reconciled_and_stale
      expr: 'is_reconciled && has_ref_time && now - timestamp(ref_time) > duration("30m")'
    - name: not_reconciled_and_debounced
      expr: '!is_reconciled && has_ref_time && now - timestamp(ref_time) > duration("{debounce}")'
  result: "is_new_resource || generation_mismatch || reconciled_and_stale || not_reconciled_and_debounced"
resource_selector:
  - label: {label}
    value: "{value}"
message_data:
  id: "resource.id"
  kind: "resource.kind"
  href: "resource.href"
  generation: "resource.generation"
{owner}"#,
            name = name,
            topic = self.topic,
            plural = self.resources.plural(),
            poll = secs(self.poll_interval),
            debounce = secs(self.debounce),
            label = self.selector.0,
            value = self.selector.1,
        )
    }
}

/// A running Sentinel; stopped on drop.
#[derive(Debug)]
pub struct Sentinel {
    daemon: Daemon,
    health: u16,
    metrics: u16,
    config: PathBuf,
}

impl Sentinel {
    /// Writes its config into `dir`, starts it against the kit's API and broker, and waits up
    /// to [`READY_TIMEOUT`] for `/readyz`.
    ///
    /// # Errors
    /// When it cannot start, exits, or is not ready in time (the message has its log).
    pub async fn start(
        real: &RealSystems,
        spec: SentinelSpec,
        dir: &Path,
    ) -> anyhow::Result<Sentinel> {
        if !spec
            .selector
            .0
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            bail!(
                "the selector's label key {:?} would make Sentinel's search unparsable: use letters, digits and _",
                spec.selector.0
            );
        }
        std::fs::create_dir_all(dir)?;
        let name = format!("sentinel-{}", spec.resources.plural());
        let config = dir.join(format!("{name}.yaml"));
        std::fs::write(&config, spec.config_yaml(real.var("HYPERFLEET_API_URL")))
            .with_context(|| format!("write {}", config.display()))?;
        let (health, metrics) = (free_port()?, free_port()?);
        let mut command = std::process::Command::new(real.var("SENTINEL_BIN"));
        command
            .arg("serve")
            .arg("--config")
            .arg(&config)
            .arg(format!("--health-server-bindaddress=127.0.0.1:{health}"))
            .arg(format!("--metrics-server-bindaddress=127.0.0.1:{metrics}"))
            .env_clear()
            .env("BROKER_CONFIG_FILE", real.var("BROKER_CONFIG_FILE"));
        let daemon = Daemon::spawn(&name, command, &dir.join(format!("{name}.log")))?;
        let mut sentinel = Sentinel {
            daemon,
            health,
            metrics,
            config,
        };
        sentinel.wait_ready().await?;
        Ok(sentinel)
    }

    async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let started = Instant::now();
        let url = format!("http://127.0.0.1:{}/readyz", self.health);
        loop {
            if let Some(status) = self.daemon.exited() {
                bail!(
                    "Sentinel exited ({status}) before it was ready; its log:\n{}",
                    self.log_tail(30)
                );
            }
            if reqwest_get(&url).await.is_ok_and(|code| code == 200) {
                return Ok(());
            }
            if started.elapsed() > READY_TIMEOUT {
                bail!(
                    "Sentinel was not ready within {READY_TIMEOUT:?}; its log:\n{}",
                    self.log_tail(30)
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// How many events it has published so far (its log's `Published event` lines).
    pub fn published(&self) -> usize {
        self.log().matches("Published event").count()
    }

    /// Its health port on 127.0.0.1.
    pub fn health_port(&self) -> u16 {
        self.health
    }

    /// Its metrics port on 127.0.0.1.
    pub fn metrics_port(&self) -> u16 {
        self.metrics
    }

    /// The config file it runs with.
    pub fn config_path(&self) -> &Path {
        &self.config
    }

    /// The whole log so far.
    pub fn log(&self) -> String {
        self.daemon.log()
    }

    /// The last `lines` lines of the log.
    pub fn log_tail(&self, lines: usize) -> String {
        self.daemon.log_tail(lines)
    }

    /// Stops it; also done on drop.
    pub fn stop(&mut self) {
        self.daemon.stop();
    }
}

/// The status code of a plain GET (a short timeout).
async fn reqwest_get(url: &str) -> anyhow::Result<u16> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()?;
    Ok(client.get(url).send().await?.status().as_u16())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_selects_the_tests_resources_and_carries_owner_references_for_nodepools() {
        let spec = SentinelSpec::new(Resources::NodePools, "t-nodepools", ("testrun", "x1"));
        let yaml = spec.config_yaml("http://127.0.0.1:1");
        let value: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
        assert_eq!(value["resource_type"], "nodepools");
        assert_eq!(value["poll_interval"], "1000ms");
        assert_eq!(value["resource_selector"][0]["label"], "testrun");
        assert_eq!(value["resource_selector"][0]["value"], "x1");
        assert_eq!(
            value["message_data"]["owner_references"]["id"],
            "resource.owner_references.id"
        );
        assert!(yaml.contains(r#"duration("2000ms")"#), "{yaml}");
        let clusters = SentinelSpec::new(Resources::Clusters, "t", ("a", "b"));
        let value: serde_json::Value =
            serde_saphyr::from_str(&clusters.config_yaml("http://x")).unwrap();
        assert!(value["message_data"].get("owner_references").is_none());
    }
}
