//! The real servers of the team folder's kit (`shared/real-systems`, its README): kube-apiserver +
//! etcd + kube-controller-manager, the Maestro server with one real agent per consumer, the
//! HyperFleet API, RabbitMQ, and the framework, Sentinel and Helm binaries. Tests that prove a
//! behaviour on them call [`RealSystems::get`].
//!
//! Which kit runs:
//! - `REAL_SYSTEMS_STATE` names a state directory (as `eval "$(real-systems env)"` and `.ci/run`
//!   set it, the way envtest's `KUBEBUILDER_ASSETS` names its binaries): the kit there is brought
//!   up if it is not running (`up` is idempotent and takes 2 s when everything runs) and is never
//!   stopped by a test;
//! - otherwise the state directory [`DEFAULT_STATE_DIR`] under `$TMPDIR`: started by the first
//!   test that needs it and, when this process started it, stopped (`down`, binaries kept for the
//!   next start) by a watcher once the test process has exited.
//!
//! The kit is `REAL_SYSTEMS_KIT` (the `real-systems` script), else `shared/real-systems/real-systems`
//! in the nearest ancestor of this crate (the team folder beside the checkout). Without it each
//! suite prints one line naming what is missing and its tests return early; with
//! `TEAM_FOLDER_REQUIRED` set (`.ci/run`) a missing kit fails instead.
//!
//! Tests share the servers and run in parallel, so each uses names of its own: [`unique`] gives a
//! DNS-label name (namespaces, HostedCluster names, consumers), [`RealSystems::consumer`] a
//! Maestro consumer with its own agent, and the HyperFleet API gives every cluster a fresh UUIDv7.
//!
//! Tests that stop or restart a server (the faults suite) must not do it to a kit others use:
//! [`RealSystems::private`] is a second kit, in [`PRIVATE_STATE_DIR`] under `$TMPDIR` whatever
//! `REAL_SYSTEMS_STATE` says, started once per test process and stopped (`down`, binaries kept)
//! once the process has exited. Two test processes never share it: each holds the lock file
//! beside its state directory (`<dir>.lock`) from before its `up` until its `down` has finished,
//! so a second run waits for the first. Only on that kit do [`restart`]'s helpers stop and start
//! one server by the PID the kit recorded.

pub mod differential;
pub mod recording_proxy;

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use anyhow::{Context, bail};

pub mod agents;
pub mod framework;
pub mod helm;
pub mod hyperfleet_api;
pub mod job_pulse;
pub mod kube_access;
pub mod lease_log;
pub mod loop_bed;
pub mod netns;
pub mod operator;
pub mod placement;
pub mod process;
pub mod restart;
pub mod sentinel;
pub mod wait;
pub mod works;

/// Environment variable naming a kit state directory to use (never stopped by tests).
pub const STATE_ENV: &str = "REAL_SYSTEMS_STATE";
/// Environment variable naming the kit's `real-systems` script.
pub const KIT_ENV: &str = "REAL_SYSTEMS_KIT";
/// The state directory under `$TMPDIR` used when [`STATE_ENV`] is not set.
pub const DEFAULT_STATE_DIR: &str = "hypershift-adapter-real-systems";
/// The consumers every kit this harness starts has (each with its own agent).
pub const BASE_CONSUMERS: &str = "mgmt-a,mgmt-b,mgmt-c";
/// The state directory under `$TMPDIR` of the private kit ([`RealSystems::private`]).
pub const PRIVATE_STATE_DIR: &str = "hypershift-adapter-real-systems-private";
/// The consumer the private kit starts with (tests add their own).
pub const PRIVATE_CONSUMERS: &str = "faults-base";

/// A running kit: its state directory and the environment its `up` wrote.
#[derive(Debug)]
pub struct RealSystems {
    kit: PathBuf,
    state: PathBuf,
    env: BTreeMap<String, String>,
    /// Consumers registered by this process (each `up --consumers` call takes the kit's lock).
    consumers: Mutex<HashSet<String>>,
    /// Started by this process for itself alone ([`RealSystems::private`]): its servers may be
    /// stopped and restarted.
    private: bool,
}

impl RealSystems {
    /// The running kit, started on first use. `None` (after printing one line for `suite`) when
    /// the kit is not beside this checkout.
    ///
    /// # Panics
    /// When the kit is missing and `TEAM_FOLDER_REQUIRED` is set, or when it is there but does not
    /// start (the message has the kit's own one-line error naming the component and its log).
    pub fn get(suite: &str) -> Option<&'static RealSystems> {
        static KIT: OnceLock<Option<RealSystems>> = OnceLock::new();
        let kit = KIT.get_or_init(|| {
            let script = kit_script()?;
            let (state, owned) = match std::env::var_os(STATE_ENV) {
                Some(state) => (PathBuf::from(state), false),
                None => (std::env::temp_dir().join(DEFAULT_STATE_DIR), true),
            };
            let started = start(script, &state, owned, BASE_CONSUMERS)
                .unwrap_or_else(|e| panic!("the real servers did not start: {e:#}"));
            Some(started)
        });
        if kit.is_none() {
            skip_line(suite);
        }
        kit.as_ref()
    }

    /// The kit already running at `state` (`real-systems up --state <state>`), its env file read;
    /// nothing is started or stopped, and a consumer is added only when asked for
    /// ([`RealSystems::consumer`], with the kit's script beside the checkout or `REAL_SYSTEMS_KIT`).
    /// For the bench binaries, which measure a kit of their own (`docs/benchmarks.md`).
    ///
    /// # Errors
    /// When `state` has no env file (the kit was never brought up there).
    pub fn attach(state: &Path) -> anyhow::Result<RealSystems> {
        let env_file = state.join("env");
        let text = std::fs::read_to_string(&env_file).with_context(|| {
            format!(
                "cannot read {}: bring a kit up there first (real-systems up --state {})",
                env_file.display(),
                state.display()
            )
        })?;
        Ok(RealSystems {
            kit: kit_script().unwrap_or_else(|| PathBuf::from("real-systems")),
            state: state.to_owned(),
            env: parse_env(&text),
            consumers: Mutex::new(HashSet::new()),
            private: false,
        })
    }

    /// A kit of this test process alone, for tests that stop and restart its servers (see the
    /// module doc): all four components, consumer [`PRIVATE_CONSUMERS`], in [`PRIVATE_STATE_DIR`]
    /// under `$TMPDIR`; started on first use (about 15–35 s, after waiting for another test
    /// process that holds it), stopped once this process has exited. `None` (after one line for
    /// `suite`) when the kit is not beside this checkout.
    ///
    /// # Panics
    /// As [`RealSystems::get`].
    pub fn private(suite: &str) -> Option<&'static RealSystems> {
        // A start that failed is kept and told to every later test: trying again would wait
        // forever for the lock this process's first holder keeps until the process exits.
        static KIT: OnceLock<Result<Option<RealSystems>, String>> = OnceLock::new();
        let kit = KIT.get_or_init(|| {
            let Some(script) = kit_script() else {
                return Ok(None);
            };
            let state = std::env::temp_dir().join(PRIVATE_STATE_DIR);
            hold_private_kit(&script, &state)
                .and_then(|()| start(script, &state, false, PRIVATE_CONSUMERS))
                .map(|mut kit| {
                    kit.private = true;
                    Some(kit)
                })
                .map_err(|e| format!("{e:#}"))
        });
        match kit {
            Err(e) => panic!("the private real servers did not start: {e}"),
            Ok(None) => {
                skip_line(suite);
                None
            }
            Ok(Some(kit)) => Some(kit),
        }
    }

    /// Whether this is this process's own kit ([`RealSystems::private`]).
    pub fn is_private(&self) -> bool {
        self.private
    }

    /// One variable of the kit's env file (`KUBECONFIG`, `MAESTRO_API_URL`, …).
    ///
    /// # Panics
    /// When the kit did not write it (its component is not running).
    pub fn var(&self, name: &str) -> &str {
        self.env
            .get(name)
            .unwrap_or_else(|| panic!("the kit's env file has no {name}"))
    }

    /// Every variable of the kit's env file.
    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.env
    }

    /// The kit's state directory (logs in `logs/`).
    pub fn state_dir(&self) -> &Path {
        &self.state
    }

    /// The admin kubeconfig (`system:masters`).
    pub fn kubeconfig(&self) -> &Path {
        Path::new(self.var("KUBECONFIG"))
    }

    /// A client of the real API server as the admin.
    ///
    /// # Errors
    /// When the kubeconfig cannot be read.
    pub async fn kube_client(&self) -> anyhow::Result<kube::Client> {
        client_of(self.kubeconfig()).await
    }

    /// A consumer of the kit's Maestro with a work agent of its own, registered (and its agent
    /// started) on first use: `up --consumers <name> maestro`, which leaves the other agents
    /// running. Names from [`unique`] keep tests apart.
    ///
    /// # Panics
    /// When the kit cannot add it.
    pub fn consumer(&self, name: &str) -> String {
        let mut known = self
            .consumers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let running = self
            .env
            .get("MAESTRO_CONSUMERS")
            .is_some_and(|list| list.split(',').any(|c| c == name));
        if !running && !known.contains(name) {
            // Up to three times: `up` probes every component again before it adds the agent, and
            // on a loaded machine one probe can time out though the kit runs (seen: `CRD … not
            // applied (HTTP 000)`); a port the kit picked can also be taken before the agent
            // binds it ("address already in use"). Another `up` finds the kit and picks again.
            let mut errors = Vec::new();
            while errors.len() < 3 {
                let out = self
                    .kit_command(&["up", "--consumers", name, "maestro"])
                    .output()
                    .unwrap_or_else(|e| panic!("cannot run the kit: {e}"));
                if out.status.success() {
                    break;
                }
                errors.push(String::from_utf8_lossy(&out.stderr).trim().to_owned());
                std::thread::sleep(std::time::Duration::from_secs(2));
            }
            assert!(
                errors.len() < 3,
                "the kit could not add consumer {name}: {}",
                errors.join("; then: ")
            );
            known.insert(name.to_owned());
        }
        name.to_owned()
    }

    /// `real-systems <args> --state <dir>` for this kit.
    pub fn kit_command(&self, args: &[&str]) -> Command {
        kit_command(&self.kit, &self.state, args)
    }

    /// The kit's log of `component` (e.g. `maestro-server`, `kube-apiserver`), for a failed
    /// assertion's message: its last `lines` lines.
    pub fn log_tail(&self, component: &str, lines: usize) -> String {
        let path = self.state.join("logs").join(format!("{component}.log"));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

/// A client of the API server `kubeconfig` names, with its credentials.
///
/// # Errors
/// When the kubeconfig cannot be read.
pub async fn client_of(kubeconfig: &Path) -> anyhow::Result<kube::Client> {
    let kubeconfig = kube::config::Kubeconfig::read_from(kubeconfig)?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
    Ok(kube::Client::try_from(config)?)
}

/// A DNS-label name unique to this test run: `<prefix>-<8 hex>` (at most 63 characters; the
/// prefix is cut to fit). Use it for namespaces, HostedCluster names and consumers.
pub fn unique(prefix: &str) -> String {
    let suffix = format!("{:08x}", fastrand::u32(..));
    let keep = 63 - 1 - suffix.len();
    let prefix: String = prefix.chars().take(keep).collect();
    format!("{}-{suffix}", prefix.trim_end_matches('-'))
}

fn kit_command(kit: &Path, state: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(kit);
    cmd.args(args)
        .arg("--state")
        .arg(state)
        .stdin(Stdio::null());
    cmd
}

/// The kit script, or `None` when it is not there (and not required).
fn kit_script() -> Option<PathBuf> {
    if let Some(kit) = std::env::var_os(KIT_ENV) {
        let kit = PathBuf::from(kit);
        if kit.is_file() {
            return Some(kit);
        }
        required_or_none(&format!("{KIT_ENV}={} is not a file", kit.display()))?;
    }
    let found = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("shared/real-systems/real-systems"))
        .find(|path| path.is_file());
    if found.is_none() {
        required_or_none("the team folder's shared/real-systems is not beside this checkout")?;
    }
    found
}

/// `None`, unless the team folder is required (then a panic naming `why`).
fn required_or_none(why: &str) -> Option<()> {
    if std::env::var_os(job_report::team_folder::REQUIRED_ENV)
        .is_some_and(|v| v != "0" && !v.is_empty())
    {
        panic!(
            "{why}, and {} is set",
            job_report::team_folder::REQUIRED_ENV
        );
    }
    None
}

/// Prints the suite's skip line once per process.
fn skip_line(suite: &str) {
    static SKIPPED: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut skipped = SKIPPED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if skipped
        .get_or_insert_with(HashSet::new)
        .insert(suite.to_owned())
    {
        // Straight to stderr: the harness captures `eprintln!`, and a skip must show.
        let _ = writeln!(
            std::io::stderr(),
            "skipped: {suite}: the real servers kit (shared/real-systems, or {KIT_ENV}) is not beside this checkout"
        );
    }
}

/// Brings the kit in `state` up with `consumers` and reads its env file; when `owned` and this
/// process started it, arranges its `down`.
fn start(kit: PathBuf, state: &Path, owned: bool, consumers: &str) -> anyhow::Result<RealSystems> {
    let state = state.to_owned();
    let was_running = kit_command(&kit, &state, &["status"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    // A running kit (`status`: every recorded process alive) whose env file already lists
    // `consumers` is used as it is: `up` would probe every component again (re-apply the CRDs),
    // which on a loaded machine times out though the kit runs (`CRD … not applied (HTTP 000)`).
    let listed = |text: &str| {
        parse_env(text)
            .get("MAESTRO_CONSUMERS")
            .is_some_and(|list| {
                consumers
                    .split(',')
                    .all(|c| list.split(',').any(|l| l == c))
            })
    };
    let ready =
        was_running && std::fs::read_to_string(state.join("env")).is_ok_and(|text| listed(&text));
    if !ready {
        let out = kit_command(&kit, &state, &["up", "--consumers", consumers])
            .output()
            .with_context(|| format!("cannot run {}", kit.display()))?;
        ensure_up(&kit, &state, &out)?;
    }
    if owned && !was_running {
        stop_when_this_process_exits(&kit, &state)?;
    }
    let env_file = state.join("env");
    let text = std::fs::read_to_string(&env_file)
        .with_context(|| format!("cannot read {}", env_file.display()))?;
    Ok(RealSystems {
        kit,
        state,
        env: parse_env(&text),
        consumers: Mutex::new(HashSet::new()),
        private: false,
    })
}

/// `up`'s failure, with the kit's own one-line error.
fn ensure_up(kit: &Path, state: &Path, out: &std::process::Output) -> anyhow::Result<()> {
    if !out.status.success() {
        bail!(
            "{} up --state {}: {}",
            kit.display(),
            state.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Runs `work` to its end on a thread of its own, in a current-thread runtime of its own: for
/// the beds' drops, which may run while the test's runtime is a current-thread one blocked in
/// the drop, or is shutting down. `None` when no runtime could be built or `work` panicked.
pub(crate) fn on_own_runtime<T: Send + 'static>(
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> Option<T> {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        Some(runtime.block_on(work))
    })
    .join()
    .ok()
    .flatten()
}

/// The `export NAME='value'` lines of the kit's env file.
pub fn parse_env(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("export "))
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.trim_matches('\'').to_owned()))
        .collect()
}

/// A detached watcher that runs `real-systems down` once this process is gone (the test harness
/// has no hook at its end, and a crashed test binary must not leave the servers behind).
fn stop_when_this_process_exits(kit: &Path, state: &Path) -> anyhow::Result<()> {
    let script = r#"while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec "$2" down --state "$3""#;
    Command::new("setsid")
        .args(["sh", "-c", script, "real-systems-reaper"])
        .arg(std::process::id().to_string())
        .arg(kit)
        .arg(state)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start the watcher that stops the real servers")?;
    Ok(())
}

/// Takes the private kit in `state` for this process: a detached holder takes the lock file
/// `<state>.lock` (waiting while another test process has it), and keeps it until this process
/// has exited and its `down` of the kit has finished. Returns once the lock is taken.
fn hold_private_kit(kit: &Path, state: &Path) -> anyhow::Result<()> {
    use std::io::BufRead as _;
    let mut lock = state.as_os_str().to_owned();
    lock.push(".lock");
    // fd 8: the kit's own commands use fd 9 for their lock on the state directory.
    let script = r#"exec 8>"$4" || exit 1
if ! flock -n 8; then echo waiting; flock 8 || exit 1; fi
echo locked; exec >/dev/null
while kill -0 "$1" 2>/dev/null; do sleep 1; done
"$2" down --state "$3""#;
    let mut holder = Command::new("setsid")
        .args(["sh", "-c", script, "real-systems-private-holder"])
        .arg(std::process::id().to_string())
        .arg(kit)
        .arg(state)
        .arg(&lock)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start the holder of the private kit")?;
    let stdout = holder.stdout.take().context("the holder has no stdout")?;
    for line in std::io::BufReader::new(stdout).lines() {
        match line?.as_str() {
            "locked" => {
                // It ends only after this process: waited for so that it is never a zombie.
                std::thread::spawn(move || holder.wait());
                return Ok(());
            }
            "waiting" => {
                let _ = writeln!(
                    std::io::stderr(),
                    "the private real servers ({}) are held by another test process: waiting",
                    state.display()
                );
            }
            _ => {}
        }
    }
    bail!(
        "the holder of the private kit ended before it took {}",
        Path::new(&lock).display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_env_file_is_read_as_the_kit_writes_it() {
        let text = "# real-systems state /tmp/x; written 2026-11-28T01:41:28Z.\n\
                    export KUBECONFIG='/tmp/x/kube/admin.kubeconfig'\n\
                    export MAESTRO_CONSUMERS='mgmt-a,mgmt-b'\n";
        let env = parse_env(text);
        assert_eq!(env["KUBECONFIG"], "/tmp/x/kube/admin.kubeconfig");
        assert_eq!(env["MAESTRO_CONSUMERS"], "mgmt-a,mgmt-b");
        assert_eq!(env.len(), 2);
    }

    #[test]
    fn unique_names_are_dns_labels_of_at_most_63() {
        let long = unique(&"x".repeat(80));
        assert_eq!(long.len(), 63);
        let a = unique("loop-");
        assert!(a.starts_with("loop-") && !a.contains("--"), "{a}");
        assert_ne!(unique("loop"), unique("loop"));
    }
}
