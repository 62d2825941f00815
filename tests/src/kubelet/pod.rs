//! One Pod run to its end: status `Pending`, volumes and env, containers started in order,
//! `Running`, each container's end as it comes, the phase; a deletion stops the containers.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::container::Slot;
use super::deletion::{self, Deletions};
use super::process::{self, spawn_command};
use super::sandbox::{Isolation, Launch};
use super::source::Objects;
use super::status::{self, State, Terminated};
use super::{ContainerRun, Inner, PodRun, volumes};

/// How often a Pod that cannot start yet (missing Secret, volume source) is retried.
const RETRY: Duration = Duration::from_secs(2);
/// The kubelet's least grace period (`minimumGracePeriodInSeconds`).
const MIN_GRACE: u64 = 2;

type Exits = mpsc::UnboundedReceiver<(usize, std::io::Result<ExitStatus>)>;

/// A Pod being run.
struct Run {
    kubelet: Arc<Inner>,
    api: Api<Pod>,
    pod: Pod,
    dir: PathBuf,
    slots: Vec<Slot>,
    start_time: String,
    written: Option<Value>,
    publish: watch::Sender<Vec<ContainerRun>>,
    echo: Vec<process::Echo>,
    /// The tasks waiting for the processes; aborting one kills its process.
    waiters: Vec<tokio::task::JoinHandle<()>>,
    deleted: bool,
}

impl Drop for Run {
    fn drop(&mut self) {
        for waiter in &self.waiters {
            waiter.abort();
        }
    }
}

/// Runs Pod `ns/name`; see the module documentation.
pub async fn run(
    kubelet: Arc<Inner>,
    ns: String,
    name: String,
    publish: watch::Sender<Vec<ContainerRun>>,
) -> anyhow::Result<PodRun> {
    let api: Api<Pod> = Api::namespaced(kubelet.client.clone(), &ns);
    let pod = api
        .get(&name)
        .await
        .with_context(|| format!("pod {ns}/{name}"))?;
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let dir = kubelet.root.join("pods").join(&uid);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let containers = pod
        .spec
        .as_ref()
        .map(|s| s.containers.clone())
        .unwrap_or_default();
    let slots = containers.iter().map(|c| Slot::new(c, &dir)).collect();
    let deadline = Instant::now() + kubelet.config.max_pod_runtime;
    let mut deletions = deletion::watch(api.clone(), name.clone());
    let mut run = Run {
        kubelet,
        api,
        pod,
        dir,
        slots,
        start_time: status::now(),
        written: None,
        publish,
        echo: Vec::new(),
        waiters: Vec::new(),
        deleted: false,
    };
    run.write_status().await;
    if let Some(launches) = run.prepare(&mut deletions, deadline).await {
        let exits = run.start(launches).await;
        run.wait(exits, &mut deletions, deadline).await;
    }
    run.finish().await;
    Ok(run.result(ns, name, uid))
}

impl Run {
    /// Volumes and every container's launch, retried until they can be made; `None` when the
    /// Pod is deleted or the deadline passes first.
    async fn prepare(
        &mut self,
        deletions: &mut Deletions,
        deadline: Instant,
    ) -> Option<Vec<Launch>> {
        loop {
            let objects = Objects::fetch(&self.kubelet.client, &self.pod).await;
            match volumes::prepare(
                &self.kubelet.client,
                &self.pod,
                &objects,
                &self.dir.join("volumes"),
                self.kubelet.isolation == Isolation::MountNamespace,
            )
            .await
            {
                Ok(made) => {
                    let launches = self.launches(&objects, &made);
                    if launches.iter().all(Option::is_some) {
                        return Some(launches.into_iter().flatten().collect());
                    }
                }
                Err(why) => {
                    tracing::warn!(pod = ?self.pod.metadata.name, %why, "the pod's volumes cannot be made yet")
                }
            }
            self.write_status().await;
            tokio::select! {
                () = tokio::time::sleep(RETRY) => {}
                _ = deletions.recv() => {
                    self.deleted = true;
                    return None;
                }
                () = tokio::time::sleep_until(deadline) => {
                    self.deleted = true;
                    return None;
                }
            }
        }
    }

    /// Each container's launch; a container that cannot start gets its waiting reason.
    fn launches(
        &mut self,
        objects: &Objects,
        volumes: &BTreeMap<String, PathBuf>,
    ) -> Vec<Option<Launch>> {
        let kubelet = Arc::clone(&self.kubelet);
        let pod = self.pod.clone();
        self.slots
            .iter_mut()
            .map(|slot| match slot.launch(&kubelet, &pod, objects, volumes) {
                Ok(launch) => Some(launch),
                Err((reason, message)) => {
                    slot.status.state = State::Waiting {
                        reason,
                        message: Some(message),
                    };
                    None
                }
            })
            .collect()
    }

    /// Starts the containers in order (each in its memory cgroup) and reports them running.
    async fn start(&mut self, launches: Vec<Launch>) -> Exits {
        let (tx, exits) = mpsc::unbounded_channel();
        for (index, mut launch) in launches.into_iter().enumerate() {
            let slot = &mut self.slots[index];
            if let (Some(cgroups), Some(limit)) = (&self.kubelet.cgroups, slot.memory_limit()) {
                let name = format!(
                    "testbed-kubelet-{}-{}",
                    self.pod.metadata.uid.as_deref().unwrap_or_default(),
                    slot.spec.name
                );
                match cgroups.create(&name, limit) {
                    Ok(cgroup) => {
                        launch.cgroup_procs = Some(cgroup.procs());
                        slot.cgroup = Some(cgroup);
                    }
                    Err(e) => {
                        tracing::warn!(container = %slot.spec.name, error = %e, "no memory cgroup; the OOM stand-in applies")
                    }
                }
            }
            slot.started_marker = Some(launch.started_marker());
            let started_at = status::now();
            let spawned = launch
                .command(self.kubelet.isolation)
                .map_err(anyhow::Error::from)
                .and_then(|cmd| {
                    spawn_command(&slot.spec.name, cmd, &slot.log, self.kubelet.config.verbose)
                });
            match spawned {
                Ok(container) => {
                    let (mut child, echo) = container.into_parts();
                    let pid = child.id();
                    let tx = tx.clone();
                    self.waiters.push(tokio::spawn(async move {
                        let _ = tx.send((index, child.wait().await));
                    }));
                    self.echo.push(echo);
                    let started_at = started(&launch.started_marker(), pid).await;
                    slot.pid = pid;
                    slot.status.container_id = pid.map(|p| format!("process://{p}"));
                    slot.status.state = State::Running { started_at };
                }
                Err(e) => {
                    std::fs::write(&slot.log, format!("{e:#}\n")).ok();
                    slot.status.state = State::Terminated(Terminated {
                        exit_code: 128,
                        reason: "StartError".to_owned(),
                        message: Some(format!("{e:#}")),
                        started_at: started_at.clone(),
                        finished_at: started_at,
                    });
                }
            }
        }
        self.publish_ended();
        self.write_status().await;
        exits
    }

    /// Until every container has ended: each end is reported as it comes; a deletion (or the
    /// deadline) stops the rest.
    async fn wait(&mut self, mut exits: Exits, deletions: &mut Deletions, deadline: Instant) {
        while self.slots.iter().any(Slot::running) {
            tokio::select! {
                Some((index, exit)) = exits.recv() => self.ended(index, exit).await,
                Some(deletion) = deletions.recv() => {
                    let grace = deletion.grace.or_else(|| self.spec_grace());
                    return self.stop(grace, exits).await;
                }
                () = tokio::time::sleep_until(deadline) => {
                    tracing::warn!(pod = ?self.pod.metadata.name, "the testbed kubelet's max_pod_runtime passed; stopping the pod");
                    let grace = self.spec_grace();
                    return self.stop(grace, exits).await;
                }
            }
        }
    }

    /// `terminationGracePeriodSeconds` of the Pod's spec.
    fn spec_grace(&self) -> Option<u64> {
        self.pod
            .spec
            .as_ref()
            .and_then(|s| s.termination_grace_period_seconds)
            .and_then(|g| u64::try_from(g).ok())
    }

    /// Stops the running containers: `SIGTERM`, the grace period (30 s if none, at least 2 s),
    /// then `SIGKILL`.
    async fn stop(&mut self, grace: Option<u64>, mut exits: Exits) {
        self.deleted = true;
        let grace = Duration::from_secs(grace.unwrap_or(30).max(MIN_GRACE));
        for slot in self.slots.iter_mut().filter(|s| s.running()) {
            slot.killed = true;
            if let Some(pid) = slot.pid {
                process::signal(pid, "TERM").await;
            }
        }
        let until = Instant::now() + grace;
        while self.slots.iter().any(Slot::running) {
            tokio::select! {
                Some((index, exit)) = exits.recv() => self.ended(index, exit).await,
                () = tokio::time::sleep_until(until) => break,
            }
        }
        for pid in self
            .slots
            .iter()
            .filter(|s| s.running())
            .filter_map(|s| s.pid)
        {
            process::signal(pid, "KILL").await;
        }
        while self.slots.iter().any(Slot::running) {
            let Some((index, exit)) = exits.recv().await else {
                break;
            };
            self.ended(index, exit).await;
        }
    }

    /// Container `index` exited: its end goes onto the Pod.
    async fn ended(&mut self, index: usize, exit: std::io::Result<ExitStatus>) {
        let slot = &mut self.slots[index];
        let State::Running { started_at } = slot.status.state.clone() else {
            return;
        };
        let terminated = match exit {
            Ok(exit) => slot.end(exit, started_at, status::now()),
            Err(e) => Terminated {
                exit_code: 128,
                reason: "Error".to_owned(),
                message: Some(format!("cannot wait for the process: {e}")),
                started_at,
                finished_at: status::now(),
            },
        };
        slot.status.state = State::Terminated(terminated);
        self.publish_ended();
        self.write_status().await;
    }

    fn publish_ended(&self) {
        let ended: Vec<ContainerRun> = self
            .slots
            .iter()
            .filter(|s| s.ended().is_some())
            .map(container_run)
            .collect();
        self.publish.send_replace(ended);
    }

    /// Writes the Pod's status (`pods/status`, strategic merge, the uid as precondition) when it
    /// changed; a Pod that is gone or replaced is left alone.
    async fn write_status(&mut self) {
        let statuses: Vec<status::ContainerStatus> =
            self.slots.iter().map(|s| s.status.clone()).collect();
        let previous = self
            .written
            .as_ref()
            .and_then(|w| w["conditions"].as_array().cloned())
            .unwrap_or_default();
        let body = status::pod_status(&statuses, &self.start_time, &previous, &status::now());
        if self
            .written
            .as_ref()
            .is_some_and(|w| same_but_times(w, &body))
        {
            return;
        }
        let patch = json!({"metadata": {"uid": self.pod.metadata.uid}, "status": body});
        let name = self.pod.metadata.name.clone().unwrap_or_default();
        let params = PatchParams {
            field_manager: Some("kubelet".to_owned()),
            ..PatchParams::default()
        };
        match self
            .api
            .patch_status(&name, &params, &Patch::Strategic(&patch))
            .await
        {
            Ok(_) => self.written = Some(body),
            Err(e) => tracing::warn!(pod = %name, error = %e, "cannot write the pod's status"),
        }
    }

    /// Prints nothing more: the containers' output is flushed, their cgroups removed.
    async fn finish(&mut self) {
        for echo in self.echo.drain(..) {
            echo.flush().await;
        }
        for slot in &mut self.slots {
            if let Some(cgroup) = slot.cgroup.take() {
                cgroup.remove();
            }
        }
    }

    fn result(&self, namespace: String, name: String, uid: String) -> PodRun {
        PodRun {
            namespace,
            name,
            uid,
            dir: self.dir.clone(),
            deleted: self.deleted,
            containers: self.slots.iter().map(container_run).collect(),
        }
    }
}

/// When the container's program started: its setup has handed over (the marker) or the process
/// is gone; waited for at most 30 s (a runtime reports a container running once it runs).
async fn started(marker: &std::path::Path, pid: Option<u32>) -> String {
    for _ in 0..3000 {
        let gone = pid.is_none_or(|p| !std::path::Path::new(&format!("/proc/{p}")).exists());
        if marker.exists() || gone {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    status::now()
}

fn container_run(slot: &Slot) -> ContainerRun {
    ContainerRun {
        name: slot.spec.name.clone(),
        terminated: slot.ended().cloned(),
        killed: slot.killed,
        log: slot.log.clone(),
    }
}

/// Two statuses that differ only in condition transition times.
fn same_but_times(a: &Value, b: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        for c in v["conditions"].as_array_mut().into_iter().flatten() {
            c["lastTransitionTime"] = Value::Null;
        }
        v
    };
    strip(a) == strip(b)
}
