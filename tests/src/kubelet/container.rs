//! One container of a pod: how it is launched (program, env, mounts, user, memory cgroup,
//! termination message file) and how its end is reported.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

use k8s_openapi::api::core::v1::{Container, Pod};

use super::cgroup::Cgroup;
use super::sandbox::{IMAGE_PATH, Isolation, Launch, Mount};
use super::source::{self, Objects};
use super::status::{ContainerStatus, State, Terminated};
use super::{Inner, TerminationMessage, env};

/// Where the service account volume is mounted in a container.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// Where this kubelet mounts the kubeconfig it writes for API servers a container cannot reach
/// in-cluster (plain HTTP, or paths rewritten).
const KUBECONFIG_PATH: &str = "/var/run/secrets/testbed-kubelet/kubeconfig";
/// containerd's exit code for a container whose process never started (`StartError`).
const START_ERROR_EXIT_CODE: i32 = 128;

/// A container of the pod being run.
pub struct Slot {
    pub spec: Container,
    pub status: ContainerStatus,
    pub dir: PathBuf,
    pub log: PathBuf,
    pub pid: Option<u32>,
    pub cgroup: Option<Cgroup>,
    pub termination: Option<TerminationMessage>,
    pub started_marker: Option<PathBuf>,
    pub killed: bool,
}

impl Slot {
    pub fn new(spec: &Container, pod_dir: &Path) -> Slot {
        let dir = pod_dir.join("containers").join(&spec.name);
        Slot {
            status: ContainerStatus {
                name: spec.name.clone(),
                image: spec.image.clone().unwrap_or_default(),
                state: State::Waiting {
                    reason: "ContainerCreating".to_owned(),
                    message: None,
                },
                container_id: None,
            },
            log: dir.join("log"),
            dir,
            spec: spec.clone(),
            pid: None,
            cgroup: None,
            termination: None,
            started_marker: None,
            killed: false,
        }
    }

    pub fn running(&self) -> bool {
        matches!(self.status.state, State::Running { .. })
    }

    pub fn ended(&self) -> Option<&Terminated> {
        match &self.status.state {
            State::Terminated(t) => Some(t),
            _ => None,
        }
    }

    /// The launch of this container, or why it cannot start yet: `(reason, message)` of the
    /// waiting state (`ErrImagePull`, `CreateContainerConfigError`).
    pub fn launch(
        &mut self,
        kubelet: &Inner,
        pod: &Pod,
        objects: &Objects,
        volumes: &BTreeMap<String, PathBuf>,
    ) -> Result<Launch, (String, String)> {
        let config_error = |m: String| ("CreateContainerConfigError".to_owned(), m);
        let image = self.status.image.clone();
        let Some((name, program)) = kubelet.config.images.program(&image) else {
            let message = format!("image {image:?} is not one of the testbed kubelet's programs");
            return Err(("ErrImagePull".to_owned(), message));
        };
        if self.spec.command.is_some() {
            return Err(config_error(
                "command (an entrypoint override) is not supported by the testbed kubelet"
                    .to_owned(),
            ));
        }
        let mut mounts = self.mounts(volumes).map_err(config_error)?;
        let mut base = vec![
            ("PATH".to_owned(), IMAGE_PATH.to_owned()),
            (
                "HOSTNAME".to_owned(),
                pod.metadata.name.clone().unwrap_or_default(),
            ),
        ];
        base.extend(env::service_env(&kubelet.host, kubelet.port));
        let mut env = env::container_env(pod, &self.spec, &base, objects).map_err(config_error)?;
        self.add_kubeconfig(kubelet, &mut env, &mut mounts)
            .map_err(config_error)?;
        let termination = self.termination_file(pod).map_err(config_error)?;
        let user = user(pod, &self.spec, program.user);
        Ok(Launch {
            exe: program.exe.clone(),
            exe_args: program.args.clone(),
            entrypoint: format!("/usr/local/bin/{name}"),
            args: self.spec.args.clone().unwrap_or_default(),
            env,
            mounts,
            termination,
            user,
            read_only_root: security(&self.spec, |s| s.read_only_root_filesystem).unwrap_or(false),
            cgroup_procs: self.cgroup.as_ref().map(Cgroup::procs),
            dir: self.dir.clone(),
        })
    }

    /// The container's `volumeMounts` (with `subPath`) as host paths.
    fn mounts(&self, volumes: &BTreeMap<String, PathBuf>) -> Result<Vec<Mount>, String> {
        let mounts = self.spec.volume_mounts.as_deref().unwrap_or_default();
        mounts
            .iter()
            .map(|m| {
                let host = volumes
                    .get(&m.name)
                    .ok_or_else(|| format!("volumeMount {:?}: no volume of that name", m.name))?;
                let host = match m.sub_path.as_deref().filter(|s| !s.is_empty()) {
                    Some(sub) => host.join(sub),
                    None => host.clone(),
                };
                Ok(Mount {
                    host,
                    path: m.mount_path.clone(),
                    read_only: m.read_only.unwrap_or(false),
                })
            })
            .collect()
    }

    /// Where a container cannot use the in-cluster configuration (the API server is plain HTTP,
    /// or paths are rewritten), a kubeconfig naming the service account's token and CA, and
    /// `KUBECONFIG` for it unless the container sets its own.
    fn add_kubeconfig(
        &self,
        kubelet: &Inner,
        env: &mut Vec<(String, String)>,
        mounts: &mut Vec<Mount>,
    ) -> Result<(), String> {
        let https = kubelet.server.starts_with("https://");
        let rewrite = kubelet.isolation == Isolation::PathRewrite;
        let Some(account) = mounts
            .iter()
            .find(|m| m.path.trim_end_matches('/') == SERVICE_ACCOUNT_DIR)
        else {
            return Ok(());
        };
        if (https && !rewrite) || env.iter().any(|(k, _)| k == "KUBECONFIG") {
            return Ok(());
        }
        let dir = if rewrite {
            account.host.display().to_string()
        } else {
            SERVICE_ACCOUNT_DIR.to_owned()
        };
        let ca = if https {
            format!("\n    certificate-authority: {dir}/ca.crt")
        } else {
            String::new()
        };
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: api\n  cluster:\n    server: {}{ca}\nusers:\n- name: sa\n  user:\n    tokenFile: {dir}/token\ncontexts:\n- name: sa\n  context: {{cluster: api, user: sa}}\ncurrent-context: sa\n",
            kubelet.server
        );
        std::fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        let host = self.dir.join("kubeconfig");
        std::fs::write(&host, text).map_err(|e| e.to_string())?;
        std::fs::set_permissions(&host, std::fs::Permissions::from_mode(0o644))
            .map_err(|e| e.to_string())?;
        let path = if rewrite {
            host.display().to_string()
        } else {
            KUBECONFIG_PATH.to_owned()
        };
        env.push(("KUBECONFIG".to_owned(), path.clone()));
        mounts.push(Mount {
            host,
            path,
            read_only: true,
        });
        Ok(())
    }

    /// Creates the termination message file empty, writable by the container (0666, as the
    /// kubelet makes it), and remembers how to read it.
    fn termination_file(&mut self, pod: &Pod) -> Result<Mount, String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        let host = self.dir.join("termination-log");
        std::fs::write(&host, "").map_err(|e| e.to_string())?;
        std::fs::set_permissions(&host, std::fs::Permissions::from_mode(0o666))
            .map_err(|e| e.to_string())?;
        let containers = pod.spec.as_ref().map_or(1, |s| s.containers.len());
        self.termination = Some(TerminationMessage {
            file: host.clone(),
            log: self.log.clone(),
            fallback_to_logs: self.spec.termination_message_policy.as_deref()
                == Some("FallbackToLogsOnError"),
            containers,
        });
        let path = self
            .spec
            .termination_message_path
            .clone()
            .unwrap_or_else(|| "/dev/termination-log".to_owned());
        Ok(Mount {
            host,
            path,
            read_only: false,
        })
    }

    /// The memory limit (`resources.limits.memory`) in bytes.
    pub fn memory_limit(&self) -> Option<u64> {
        let limits = self.spec.resources.as_ref()?.limits.as_ref()?;
        source::quantity(&limits.get("memory")?.0)
    }

    /// How the container ended, from its exit status: `OOMKilled` when the kernel killed it in
    /// its cgroup (or, without one, the stand-in: exit code 137 with a memory limit), `StartError`
    /// when the setup failed before the program started, `Completed` for 0, else `Error`.
    pub fn end(&self, exit: ExitStatus, started_at: String, finished_at: String) -> Terminated {
        let code = exit
            .code()
            .unwrap_or_else(|| 128 + exit.signal().unwrap_or(0));
        let started = self.started_marker.as_ref().is_some_and(|m| m.exists());
        let oom = match &self.cgroup {
            Some(cgroup) => cgroup.oom_kills() > 0,
            None => exit.code() == Some(137) && self.memory_limit().is_some(),
        };
        let (exit_code, reason) = if oom {
            (code, "OOMKilled")
        } else if !started {
            (START_ERROR_EXIT_CODE, "StartError")
        } else if code == 0 {
            (code, "Completed")
        } else {
            (code, "Error")
        };
        let message = match (&self.termination, started) {
            (Some(t), true) => t.read(code),
            _ => last_line(&self.log),
        };
        Terminated {
            exit_code,
            reason: reason.to_owned(),
            message,
            started_at,
            finished_at,
        }
    }
}

/// A setup failure's last words.
fn last_line(log: &Path) -> Option<String> {
    let text = std::fs::read_to_string(log).ok()?;
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(str::to_owned)
}

/// A field of the container's security context.
fn security<T>(
    container: &Container,
    field: impl Fn(&k8s_openapi::api::core::v1::SecurityContext) -> Option<T>,
) -> Option<T> {
    container.security_context.as_ref().and_then(field)
}

/// `(uid, gid, supplementary groups)`: `runAsUser`/`runAsGroup` of the container, else the
/// pod's, else the image's; groups `fsGroup` and `supplementalGroups`. `None`: root.
fn user(
    pod: &Pod,
    container: &Container,
    image: Option<(u32, u32)>,
) -> Option<(u32, u32, Vec<u32>)> {
    let pod_ctx = pod.spec.as_ref().and_then(|s| s.security_context.as_ref());
    let id = |v: Option<i64>| v.and_then(|v| u32::try_from(v).ok());
    let uid = id(security(container, |s| s.run_as_user))
        .or_else(|| id(pod_ctx.and_then(|p| p.run_as_user)))
        .or(image.map(|(u, _)| u))?;
    let gid = id(security(container, |s| s.run_as_group))
        .or_else(|| id(pod_ctx.and_then(|p| p.run_as_group)))
        .or(image.map(|(_, g)| g))
        .unwrap_or(0);
    let mut groups: Vec<u32> = pod_ctx.and_then(|p| id(p.fs_group)).into_iter().collect();
    groups.extend(
        pod_ctx
            .and_then(|p| p.supplemental_groups.clone())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|g| u32::try_from(g).ok()),
    );
    (uid != 0 || gid != 0 || !groups.is_empty()).then_some((uid, gid, groups))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(pod_ctx: serde_json::Value, container_ctx: serde_json::Value) -> (Pod, Container) {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "spec": {"securityContext": pod_ctx, "containers": [{"name": "c", "securityContext": container_ctx}]}
        }))
        .unwrap();
        let c = pod.spec.as_ref().unwrap().containers[0].clone();
        (pod, c)
    }

    #[test]
    fn the_user_comes_from_the_container_then_the_pod_then_the_image() {
        let (p, c) = pod(
            json!({"runAsUser": 1000, "fsGroup": 2000}),
            json!({"runAsUser": 65532, "runAsGroup": 65532}),
        );
        assert_eq!(user(&p, &c, None), Some((65532, 65532, vec![2000])));
        let (p, c) = pod(json!({}), json!({}));
        assert_eq!(
            user(&p, &c, Some((65532, 65532))),
            Some((65532, 65532, vec![]))
        );
        assert_eq!(user(&p, &c, None), None, "root");
        let (p, c) = pod(json!({"runAsUser": 0}), json!({}));
        assert_eq!(user(&p, &c, Some((65532, 65532))), Some((0, 65532, vec![])));
    }
}
