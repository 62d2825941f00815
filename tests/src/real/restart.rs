//! Stopping and starting one server of a private kit ([`RealSystems::private`]) by the PID the
//! kit recorded (`$STATE/pids/<name>.pid`), for the faults suite: the Maestro server, one
//! consumer's work agent, the HyperFleet API, RabbitMQ. On the shared kit only the agent of a
//! test's own consumer is restarted ([`RealSystems::restart_agent`]).
//!
//! [`RealSystems::stop`] reads what the process runs (its command line, environment and working
//! directory from `/proc`), sends it SIGTERM (SIGKILL after a grace period) and waits until it is
//! gone; [`Outage::end`] runs exactly that again, detached as the kit's own `launch`
//! does (its own session, stdin from `/dev/null`, output appended to the kit's log of it), records
//! the new PID where the kit looks for it (so `down` stops it), and waits until the server
//! answers as the kit's `up` checks it. The same command line means the same ports: the
//! processes that talk to it (agents, the framework's forwarders) reconnect to the address they
//! know. (`real-systems up` would start it too, but picks a new port when the old one still has
//! a socket in `TIME_WAIT`, which the agents and the framework would never find.)
//!
//! A recorded PID is used only while its process carries the kit's
//! `REAL_SYSTEMS_INSTANCE=<id of the state dir>`, as the kit itself checks; every helper refuses
//! a kit that is not private to this process. An [`Outage`] dropped before its end (a failed
//! assertion) starts the server again, so the next test finds the kit whole.

use std::ffi::OsString;
use std::fs::File;
use std::os::unix::ffi::OsStringExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::RealSystems;
use super::wait::eventually;

/// How long a stopped server has after SIGTERM before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(20);
/// How long [`Outage::end`] waits for the server to answer.
pub const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// A server of the kit that a test may stop and start again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Component {
    /// `maestro server` (REST, gRPC source API, the agents' gRPC broker).
    MaestroServer,
    /// The `maestro agent` of this consumer.
    Agent(String),
    /// `hyperfleet-api serve`.
    HyperfleetApi,
    /// RabbitMQ: the `rabbitmq-server` script (it stops its Erlang VM on SIGTERM) and that VM.
    Broker,
}

impl Component {
    /// Its name in the kit's `pids/` and `logs/`.
    pub fn name(&self) -> String {
        match self {
            Component::MaestroServer => "maestro-server".to_owned(),
            Component::Agent(consumer) => format!("maestro-agent-{consumer}"),
            Component::HyperfleetApi => "hyperfleet-api".to_owned(),
            Component::Broker => "rabbitmq-server".to_owned(),
        }
    }
}

/// A stopped server of a private kit: what it ran, to run it again ([`Outage::end`]; when
/// dropped first, in a thread of its own).
#[derive(Debug)]
pub struct Outage {
    real: &'static RealSystems,
    component: Component,
    argv: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    cwd: PathBuf,
    at: Instant,
    ended: bool,
}

impl Outage {
    /// Which server.
    pub fn component(&self) -> &Component {
        &self.component
    }

    /// How long it has been down.
    pub fn down_for(&self) -> Duration {
        self.at.elapsed()
    }

    /// Runs the stopped server again with the same command line, environment and working
    /// directory, records its PID for the kit, and waits up to [`READY_TIMEOUT`] until it
    /// answers (an agent: until the Maestro server logs its subscription). Returns how long it
    /// was down.
    ///
    /// # Errors
    /// When the server cannot be started, or it does not answer in time (the message has the
    /// last lines of its log).
    pub async fn end(mut self) -> anyhow::Result<Duration> {
        self.ended = true;
        self.real.start_again(&self).await?;
        Ok(self.down_for())
    }
}

impl Drop for Outage {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let name = self.component.name();
        let this: &Outage = self;
        // The test's runtime may be gone (a failed assertion): a thread with its own.
        let outcome = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()?;
                    runtime.block_on(this.real.start_again(this))
                })
                .join()
        });
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("{name} could not be started again: {e:#}"),
            Err(_) => eprintln!("{name} could not be started again: the restart panicked"),
        }
    }
}

/// A position in one of the kit's logs ([`RealSystems::log_mark`]).
#[derive(Debug, Clone, Copy)]
pub struct LogMark(u64);

impl RealSystems {
    /// Stops `component` (SIGTERM, SIGKILL after [`STOP_GRACE`]) and waits until it is gone.
    ///
    /// # Errors
    /// When the kit is not private, the component is not running, or it does not stop.
    pub async fn stop(&'static self, component: &Component) -> anyhow::Result<Outage> {
        self.refuse_shared()?;
        self.stop_component(component).await
    }

    /// Restarts the work agent of `consumer`, a consumer of the tests (never one of
    /// [`super::BASE_CONSUMERS`]), also on the shared kit: stopped and run again with the same
    /// command line; on start it asks the server to resync, and the server sends every work of
    /// the consumer, one being deleted too. Returns how long it was down.
    ///
    /// # Errors
    /// When `consumer` is a base consumer, its agent is not running, or does not come back.
    pub async fn restart_agent(&'static self, consumer: &str) -> anyhow::Result<Duration> {
        if super::BASE_CONSUMERS.split(',').any(|c| c == consumer) {
            bail!("{consumer} is a base consumer of the kit: its agent is not restarted by tests");
        }
        self.stop_component(&Component::Agent(consumer.to_owned()))
            .await?
            .end()
            .await
    }

    async fn stop_component(&'static self, component: &Component) -> anyhow::Result<Outage> {
        let name = component.name();
        let pid = self
            .recorded_pid(&name)?
            .with_context(|| format!("{name} is not running in {}", self.state.display()))?;
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let argv = split_nul(&std::fs::read(proc.join("cmdline"))?);
        let env = split_nul(&std::fs::read(proc.join("environ"))?)
            .into_iter()
            .filter_map(|pair| {
                let bytes = pair.into_vec();
                let at = bytes.iter().position(|&b| b == b'=')?;
                Some((
                    OsString::from_vec(bytes[..at].to_vec()),
                    OsString::from_vec(bytes[at + 1..].to_vec()),
                ))
            })
            .collect();
        let cwd = std::fs::read_link(proc.join("cwd"))?;
        let mut pids = vec![pid];
        if *component == Component::Broker
            && let Some(vm) = self.recorded_pid("rabbitmq-beam")?
        {
            pids.push(vm);
        }
        signal(pid, "TERM");
        let stopped = self.until_gone(&pids, STOP_GRACE).await;
        if !stopped {
            for &p in &pids {
                signal(p, "KILL");
            }
            if !self.until_gone(&pids, Duration::from_secs(10)).await {
                bail!("{name} (pid {pid}) did not stop, even after SIGKILL");
            }
        }
        Ok(Outage {
            real: self,
            component: component.clone(),
            argv,
            env,
            cwd,
            at: Instant::now(),
            ended: false,
        })
    }

    /// [`Outage::end`].
    async fn start_again(&self, stopped: &Outage) -> anyhow::Result<()> {
        if !matches!(stopped.component, Component::Agent(_)) {
            self.refuse_shared()?;
        }
        let name = stopped.component.name();
        let pid_file = self.state.join("pids").join(format!("{name}.pid"));
        let _ = std::fs::remove_file(&pid_file);
        let mark = self.log_mark("maestro-server");
        let log_path = self.state.join("logs").join(format!("{name}.log"));
        let log = File::options()
            .create(true)
            .append(true)
            .open(&log_path)
            .with_context(|| format!("open {}", log_path.display()))?;
        // As the kit's `launch`: a session of its own, the PID written by the shell that execs it.
        let status = Command::new("setsid")
            .arg("-f")
            .arg("bash")
            .arg("-c")
            .arg(r#"echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec "$@""#)
            .arg(&pid_file)
            .args(&stopped.argv)
            .env_clear()
            .envs(stopped.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&stopped.cwd)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .status()
            .with_context(|| format!("cannot start {name} again"))?;
        if !status.success() {
            bail!("setsid for {name} exited {status}");
        }
        let what = format!("{name} started again");
        eventually(Duration::from_secs(10), &what, || async {
            self.recorded_pid(&name)
        })
        .await?;
        let ready = eventually(READY_TIMEOUT, &format!("{name} answering"), || async {
            if self.recorded_pid(&name)?.is_none() {
                bail!("{name} exited");
            }
            Ok(self.ready(&stopped.component, mark).await.then_some(()))
        })
        .await;
        if let Err(e) = ready {
            bail!("{e:#}; its log:\n{}", self.log_tail(&name, 20));
        }
        if stopped.component == Component::Broker {
            self.record_broker_vm(stopped)?;
        }
        Ok(())
    }

    /// The current end of the kit's log `component` (e.g. `maestro-server`).
    pub fn log_mark(&self, component: &str) -> LogMark {
        let path = self.state.join("logs").join(format!("{component}.log"));
        LogMark(std::fs::metadata(path).map(|m| m.len()).unwrap_or(0))
    }

    /// What the kit's log `component` gained since `mark`.
    pub fn log_since(&self, component: &str, mark: LogMark) -> String {
        let path = self.state.join("logs").join(format!("{component}.log"));
        let bytes = std::fs::read(path).unwrap_or_default();
        let from = usize::try_from(mark.0)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        String::from_utf8_lossy(&bytes[from..]).into_owned()
    }

    /// Waits up to `timeout` until the Maestro server has logged, since `mark` (of its log),
    /// that the agent of `consumer` subscribed (as the kit's `up` waits for a new agent).
    ///
    /// # Errors
    /// When it has not within `timeout`.
    pub async fn agent_subscribed(
        &self,
        consumer: &str,
        mark: LogMark,
        timeout: Duration,
    ) -> anyhow::Result<()> {
        let what = format!("the agent of {consumer} subscribed again");
        eventually(timeout, &what, || async {
            Ok(self.subscribed_since(consumer, mark).then_some(()))
        })
        .await
    }

    fn subscribed_since(&self, consumer: &str, mark: LogMark) -> bool {
        self.log_since("maestro-server", mark).contains(&format!(
            r#"registering subscriber" clusterName="{consumer}""#
        ))
    }

    /// One port of the kit's `ports` file (`maestro-health`, `rabbitmq-amqp`, …).
    ///
    /// # Errors
    /// When the file has no such key.
    pub fn port(&self, key: &str) -> anyhow::Result<u16> {
        let text = std::fs::read_to_string(self.state.join("ports"))?;
        text.lines()
            .filter_map(|l| l.split_once('='))
            .filter(|(k, _)| *k == key)
            .filter_map(|(_, v)| v.trim().parse().ok())
            .next_back()
            .with_context(|| format!("the kit's ports file has no {key}"))
    }

    fn refuse_shared(&self) -> anyhow::Result<()> {
        if !self.private {
            bail!(
                "{} is not this process's private kit: its servers are not stopped by tests",
                self.state.display()
            );
        }
        Ok(())
    }

    /// The recorded PID of `name` while its process is the kit's.
    fn recorded_pid(&self, name: &str) -> anyhow::Result<Option<u32>> {
        let path = self.state.join("pids").join(format!("{name}.pid"));
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(None);
        };
        let Ok(pid) = text.trim().parse::<u32>() else {
            return Ok(None);
        };
        Ok(self.owned(pid)?.then_some(pid))
    }

    /// Whether process `pid` carries this kit's instance id.
    fn owned(&self, pid: u32) -> anyhow::Result<bool> {
        let instance = std::fs::read_to_string(self.state.join("instance"))
            .context("the kit's instance file")?;
        let wanted = format!("REAL_SYSTEMS_INSTANCE={}", instance.trim());
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        Ok(environ
            .split(|&b| b == 0)
            .any(|entry| entry == wanted.as_bytes()))
    }

    async fn until_gone(&self, pids: &[u32], timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let alive = pids
                .iter()
                .any(|&p| self.owned(p).unwrap_or(false) && running(p));
            if !alive {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Whether `component` answers as the kit's `up` checks it.
    async fn ready(&self, component: &Component, mark: LogMark) -> bool {
        match component {
            Component::MaestroServer => {
                let Ok(health) = self.port("maestro-health") else {
                    return false;
                };
                http_ok(&format!("http://127.0.0.1:{health}/healthcheck")).await
                    && http_ok(&format!(
                        "{}/api/maestro/v1/consumers?size=1",
                        self.var("MAESTRO_API_URL")
                    ))
                    .await
            }
            Component::Agent(consumer) => self.subscribed_since(consumer, mark),
            Component::HyperfleetApi => {
                let Ok(health) = self.port("hyperfleet-api-health") else {
                    return false;
                };
                http_ok(&format!("http://127.0.0.1:{health}/readyz")).await
                    && http_ok(&format!(
                        "{}/api/hyperfleet/v1/clusters?size=1",
                        self.var("HYPERFLEET_API_URL")
                    ))
                    .await
            }
            Component::Broker => {
                let Ok(port) = self.port("rabbitmq-amqp") else {
                    return false;
                };
                let probe = self
                    .kit
                    .parent()
                    .unwrap_or(Path::new("."))
                    .join("lib/amqp-probe.py");
                tokio::process::Command::new("python3")
                    .arg(probe)
                    .arg(port.to_string())
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .await
                    .is_ok_and(|s| s.success())
            }
        }
    }

    /// Records RabbitMQ's new Erlang VM (its pid file, `RABBITMQ_PID_FILE`) as the kit does once
    /// the broker is ready, so that `down` stops it.
    fn record_broker_vm(&self, stopped: &Outage) -> anyhow::Result<()> {
        let pid_file = stopped
            .env
            .iter()
            .find(|(k, _)| k == "RABBITMQ_PID_FILE")
            .map(|(_, v)| PathBuf::from(v))
            .context("RabbitMQ ran without RABBITMQ_PID_FILE")?;
        let text = std::fs::read_to_string(&pid_file)
            .with_context(|| format!("read {}", pid_file.display()))?;
        let pid: u32 = text.trim().parse().context("RabbitMQ's pid file")?;
        if !self.owned(pid)? {
            bail!("RabbitMQ's VM (pid {pid}) is not the kit's");
        }
        std::fs::write(
            self.state.join("pids").join("rabbitmq-beam.pid"),
            format!("{pid}\n"),
        )?;
        Ok(())
    }
}

/// The NUL-separated entries of a `/proc` file.
fn split_nul(bytes: &[u8]) -> Vec<OsString> {
    bytes
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| OsString::from_vec(s.to_vec()))
        .collect()
}

/// Whether `pid` is a process that has not exited (a zombie has).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

fn signal(pid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args(["-s", signal, &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Whether a GET of `url` answers 2xx within 3 s.
async fn http_ok(url: &str) -> bool {
    let Ok(client) = reqwest::Client::builder()
        .timeout(Duration::from_secs(3))
        .build()
    else {
        return false;
    };
    client
        .get(url)
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_entries_split_at_nul_and_names_match_the_kits() {
        assert_eq!(
            split_nul(b"maestro\0server\0--x=1\0"),
            ["maestro", "server", "--x=1"].map(OsString::from)
        );
        assert_eq!(
            Component::Agent("faults-a".into()).name(),
            "maestro-agent-faults-a"
        );
        assert_eq!(Component::Broker.name(), "rabbitmq-server");
        assert!(running(std::process::id()));
    }
}
