//! Maestro consumers of a test's own and their work agents on the kit: several registered in one
//! `up` (each `up` takes the kit's lock and waits for the API server, ~10 s on a loaded machine,
//! so a test adding three pays that once), and an agent stopped and started again — a
//! management cluster's outage.
//!
//! Only agents of consumers the tests made are ever stopped: [`stop_agent`] reads the PID the kit
//! recorded (`$STATE/pids/maestro-agent-<consumer>.pid`) and signals it only when that process is
//! this kit's agent of that consumer (its command line names `--consumer-name=<consumer>`, its
//! environment carries the kit's `REAL_SYSTEMS_INSTANCE`), as the kit's own `down` checks.
//! [`start_agent`] is the kit's `up --consumers <consumer> maestro`, which starts only the agents
//! of the consumers it names that are not running.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::RealSystems;

/// Registers `consumers` in the kit's Maestro, each with its own work agent, in one `up`.
///
/// # Errors
/// When the kit cannot add them (its one-line error).
pub fn add_consumers(real: &RealSystems, consumers: &[&str]) -> anyhow::Result<()> {
    let list = consumers.join(",");
    // Under load the kit's readiness probes of the other components (run by every `up`) can time
    // out (e.g. `CRD … not applied (HTTP 000)`: the API server took over 30 s); a later `up` finds
    // them running.
    let mut failure = String::new();
    for _ in 0..3 {
        let out = real
            .kit_command(&["up", "--consumers", &list, "maestro"])
            .output()
            .context("cannot run the kit")?;
        if out.status.success() {
            return Ok(());
        }
        failure = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    }
    bail!("the kit could not add consumers {list}: {failure}")
}

/// Registers `consumer` in the kit's Maestro with no work agent at all: a management cluster
/// whose agent never connected (works published to it are stored, never applied).
///
/// # Errors
/// When Maestro refuses it.
pub async fn add_consumer_without_agent(real: &RealSystems, consumer: &str) -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let url = format!("{}/api/maestro/v1/consumers", real.var("MAESTRO_API_URL"));
    let answer = reqwest::Client::new()
        .post(&url)
        .json(&serde_json::json!({ "name": consumer }))
        .send()
        .await
        .with_context(|| format!("POST {url}"))?;
    let code = answer.status();
    if !code.is_success() {
        bail!(
            "POST {url} {consumer}: {code} {}",
            answer.text().await.unwrap_or_default()
        );
    }
    Ok(())
}

fn pid_file(real: &RealSystems, consumer: &str) -> PathBuf {
    real.state_dir()
        .join("pids")
        .join(format!("maestro-agent-{consumer}.pid"))
}

/// The running agent process of `consumer`, if the kit recorded one and it is that agent.
fn agent_pid(real: &RealSystems, consumer: &str) -> Option<u32> {
    let pid: u32 = std::fs::read_to_string(pid_file(real, consumer))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let proc_dir = Path::new("/proc").join(pid.to_string());
    let cmdline = std::fs::read(proc_dir.join("cmdline")).ok()?;
    let environ = std::fs::read(proc_dir.join("environ")).ok()?;
    let flag = format!("--consumer-name={consumer}");
    let is_agent = cmdline.split(|b| *b == 0).any(|arg| arg == flag.as_bytes());
    let is_kits = environ
        .split(|b| *b == 0)
        .any(|var| var.starts_with(b"REAL_SYSTEMS_INSTANCE="));
    (is_agent && is_kits).then_some(pid)
}

/// Whether the agent of `consumer` runs.
pub fn agent_running(real: &RealSystems, consumer: &str) -> bool {
    agent_pid(real, consumer).is_some()
}

/// Stops the work agent of `consumer` (SIGTERM, then SIGKILL after 10 s): from now on nothing is
/// applied on, reported from or acknowledged by that management cluster.
///
/// # Errors
/// When no agent of `consumer` runs, or it does not stop.
pub fn stop_agent(real: &RealSystems, consumer: &str) -> anyhow::Result<()> {
    let pid = agent_pid(real, consumer)
        .with_context(|| format!("no running agent of consumer {consumer} recorded by the kit"))?;
    let alive = || {
        Path::new("/proc").join(pid.to_string()).exists() && agent_pid(real, consumer) == Some(pid)
    };
    for (signal, wait) in [
        ("-TERM", Duration::from_secs(10)),
        ("-KILL", Duration::from_secs(5)),
    ] {
        let _ = std::process::Command::new("kill")
            .args([signal, &pid.to_string()])
            .status();
        let started = Instant::now();
        while alive() && started.elapsed() < wait {
            std::thread::sleep(Duration::from_millis(100));
        }
        if !alive() {
            return Ok(());
        }
    }
    bail!("the agent of {consumer} (pid {pid}) did not stop")
}

/// Starts the work agent of `consumer` again (the kit's `up --consumers <consumer> maestro`,
/// which waits until the Maestro server has registered it).
///
/// # Errors
/// When the kit cannot start it.
pub fn start_agent(real: &RealSystems, consumer: &str) -> anyhow::Result<()> {
    add_consumers(real, &[consumer])
}

/// An agent this test stopped: started again when dropped (also when the test fails), so the kit
/// is left with every recorded agent running.
#[derive(Debug)]
pub struct StoppedAgent {
    real: &'static RealSystems,
    consumer: String,
    restarted: bool,
}

impl StoppedAgent {
    /// Stops the agent of `consumer` ([`stop_agent`]).
    ///
    /// # Errors
    /// As [`stop_agent`].
    pub fn stop(real: &'static RealSystems, consumer: &str) -> anyhow::Result<StoppedAgent> {
        stop_agent(real, consumer)?;
        Ok(StoppedAgent {
            real,
            consumer: consumer.to_owned(),
            restarted: false,
        })
    }

    /// The agent's consumer.
    pub fn consumer(&self) -> &str {
        &self.consumer
    }

    /// Starts it again now ([`start_agent`]).
    ///
    /// # Errors
    /// As [`start_agent`].
    pub fn restart(mut self) -> anyhow::Result<()> {
        self.restarted = true;
        start_agent(self.real, &self.consumer)
    }
}

impl Drop for StoppedAgent {
    fn drop(&mut self) {
        if !self.restarted
            && let Err(e) = start_agent(self.real, &self.consumer)
        {
            eprintln!(
                "could not start the agent of {} again: {e:#}",
                self.consumer
            );
        }
    }
}
