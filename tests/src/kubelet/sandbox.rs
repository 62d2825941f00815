//! How a container process is started.
//!
//! [`Isolation::MountNamespace`] (root, with `unshare`, `mount` and `chroot`): the process gets a
//! mount namespace of its own and a fresh root file system (a tmpfs) holding what a distroless
//! image holds — the host's `/usr` read-only (this checkout's binaries are linked against its
//! libc), a few `/etc` files, `/proc`, `/sys` read-only, a minimal `/dev`, `/tmp` — plus the
//! program at its image entrypoint (`/usr/local/bin/<image>`), each volume bound at its
//! `mountPath` and the termination message file at `terminationMessagePath`; the root is made
//! read-only for `readOnlyRootFilesystem`, and the program runs as the container's user and
//! groups. So the binaries run with their production paths unchanged (`/results`,
//! `/var/run/secrets/kubernetes.io/serviceaccount`, `/dev/termination-log`), and nothing is
//! created on the host's own root. The setup is a shell script kept in the container's directory.
//!
//! [`Isolation::PathRewrite`] (no root): the program runs directly as this user; an env value or
//! argument under a mount path is rewritten to the host path, `TERMINATION_MESSAGE_PATH` names the
//! host file (the adapter honours it) and the process's cgroup is this one.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tokio::process::Command;

/// Where container processes run; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    MountNamespace,
    PathRewrite,
}

const UNSHARE: &str = "/usr/bin/unshare";
const SHELL: &str = "/bin/sh";
const MOUNT: &str = "/usr/bin/mount";
const CHROOT: &str = "/usr/sbin/chroot";
/// The `PATH` of the distroless images (`gcr.io/distroless/static-debian12`).
pub const IMAGE_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// Entries of the host's `/etc` a container sees (name resolution, users, CA bundles).
const ETC: &[&str] = &[
    "hosts",
    "resolv.conf",
    "nsswitch.conf",
    "passwd",
    "group",
    "localtime",
    "ssl",
];
/// Device nodes of a container's `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

impl Isolation {
    /// [`Isolation::MountNamespace`] when this process is root and the tools are there.
    pub fn detect() -> Isolation {
        let root = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Uid:"))
                    .and_then(|ids| ids.split_whitespace().nth(1).map(|euid| euid == "0"))
            })
            .unwrap_or(false);
        let tools = [UNSHARE, SHELL, MOUNT, CHROOT]
            .iter()
            .all(|t| Path::new(t).exists());
        if root && tools {
            Isolation::MountNamespace
        } else {
            Isolation::PathRewrite
        }
    }
}

/// A host file or directory seen by the container at `path`.
#[derive(Debug, Clone)]
pub struct Mount {
    pub host: PathBuf,
    pub path: String,
    pub read_only: bool,
}

/// Everything needed to start one container.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The host program standing in for the image, and arguments it needs first.
    pub exe: PathBuf,
    pub exe_args: Vec<String>,
    /// Where the image has its entrypoint (`/usr/local/bin/<image>`).
    pub entrypoint: String,
    /// The container's `args`.
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub mounts: Vec<Mount>,
    /// The termination message file: host file and `terminationMessagePath`.
    pub termination: Mount,
    /// `(uid, gid, supplementary groups)`; `None` runs as root.
    pub user: Option<(u32, u32, Vec<u32>)>,
    pub read_only_root: bool,
    /// The memory cgroup's `cgroup.procs` to join before the program starts.
    pub cgroup_procs: Option<PathBuf>,
    /// The container's directory on the host (its root file system's mount point, the script).
    pub dir: PathBuf,
}

impl Launch {
    /// The file the setup creates just before the program starts: without it, the container
    /// never started (`StartError`).
    pub fn started_marker(&self) -> PathBuf {
        self.dir.join("started")
    }

    /// The command that starts the container.
    ///
    /// # Errors
    /// When the container's directory or script cannot be written.
    pub fn command(&self, isolation: Isolation) -> std::io::Result<Command> {
        std::fs::create_dir_all(self.dir.join("rootfs"))?;
        match isolation {
            Isolation::MountNamespace => {
                let script = self.dir.join("setup.sh");
                std::fs::write(&script, self.script())?;
                std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o700))?;
                let mut cmd = Command::new(UNSHARE);
                cmd.args(["--mount", "--propagation", "private", SHELL, "-e"])
                    .arg(&script)
                    .env_clear()
                    .envs(self.env.iter().cloned());
                Ok(cmd)
            }
            Isolation::PathRewrite => {
                std::fs::write(self.started_marker(), "")?;
                let mut cmd = Command::new(&self.exe);
                cmd.args(&self.exe_args)
                    .args(self.args.iter().map(|a| self.rewrite(a)))
                    .env_clear()
                    .envs(self.env.iter().map(|(k, v)| (k.clone(), self.rewrite(v))))
                    .env("TERMINATION_MESSAGE_PATH", &self.termination.host);
                Ok(cmd)
            }
        }
    }

    /// `value` with a leading mount path replaced by its host path (the longest match).
    fn rewrite(&self, value: &str) -> String {
        let mut mounts: Vec<&Mount> = self.mounts.iter().chain([&self.termination]).collect();
        mounts.sort_by_key(|m| std::cmp::Reverse(m.path.len()));
        for m in mounts {
            let path = m.path.trim_end_matches('/');
            if let Some(rest) = value
                .strip_prefix(path)
                .filter(|r| r.is_empty() || r.starts_with('/'))
            {
                return format!("{}{rest}", m.host.display());
            }
        }
        value.to_owned()
    }

    /// The setup script of [`Isolation::MountNamespace`].
    fn script(&self) -> String {
        let root = self.dir.join("rootfs");
        let r = |p: &str| q(&format!("{}{p}", root.display()));
        let mut s = vec![format!(
            "{MOUNT} -t tmpfs -o mode=0755 tmpfs {}",
            q(&root.display().to_string())
        )];
        s.extend(bind(&r("/usr"), "/usr", true, false));
        for top in ["bin", "lib", "lib64", "sbin"] {
            if let Ok(target) = std::fs::read_link(format!("/{top}")) {
                s.push(format!(
                    "ln -s {} {}",
                    q(&target.display().to_string()),
                    r(&format!("/{top}"))
                ));
            }
        }
        s.push(format!("mkdir {}", r("/etc")));
        for entry in ETC
            .iter()
            .filter(|e| Path::new(&format!("/etc/{e}")).exists())
        {
            let is_dir = Path::new(&format!("/etc/{entry}")).is_dir();
            s.extend(bind(
                &r(&format!("/etc/{entry}")),
                &format!("/etc/{entry}"),
                true,
                !is_dir,
            ));
        }
        s.push(format!("mkdir {} {} {}", r("/proc"), r("/sys"), r("/dev")));
        s.push(format!("{MOUNT} --rbind /proc {}", r("/proc")));
        s.push(format!(
            "{MOUNT} --rbind /sys {} && {MOUNT} -o remount,bind,ro {}",
            r("/sys"),
            r("/sys")
        ));
        s.push(format!(
            "{MOUNT} -t tmpfs -o mode=0755,nosuid tmpfs {}",
            r("/dev")
        ));
        for dev in DEVICES {
            s.push(format!(
                "touch {0} && {MOUNT} --bind /dev/{dev} {0}",
                r(&format!("/dev/{dev}"))
            ));
        }
        s.push(format!("ln -s /proc/self/fd {}", r("/dev/fd")));
        s.push(format!("mkdir -m 1777 {}", r("/tmp")));
        let bin_dir = Path::new(&self.entrypoint)
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        s.push(format!(
            "{MOUNT} -t tmpfs -o mode=0755 tmpfs {}",
            r(&bin_dir)
        ));
        s.extend(bind(
            &r(&self.entrypoint),
            &self.exe.display().to_string(),
            true,
            true,
        ));
        for m in self.mounts.iter().chain([&self.termination]) {
            let file = m.host.is_file();
            s.extend(bind(
                &r(&m.path),
                &m.host.display().to_string(),
                m.read_only,
                file,
            ));
        }
        if self.read_only_root {
            s.push(format!(
                "{MOUNT} -o remount,ro {}",
                q(&root.display().to_string())
            ));
        }
        if let Some(procs) = &self.cgroup_procs {
            s.push(format!("echo $$ > {}", q(&procs.display().to_string())));
        }
        s.push(format!(
            ": > {}",
            q(&self.started_marker().display().to_string())
        ));
        s.push(self.exec_line(&root));
        s.join("\n") + "\n"
    }

    fn exec_line(&self, root: &Path) -> String {
        let mut line = format!("exec {CHROOT}");
        if let Some((uid, gid, groups)) = &self.user {
            line.push_str(&format!(" --userspec={uid}:{gid}"));
            let mut all = vec![*gid];
            all.extend(groups.iter().filter(|g| *g != gid));
            let all: Vec<String> = all.iter().map(u32::to_string).collect();
            line.push_str(&format!(" --groups={}", all.join(",")));
        }
        line.push(' ');
        line.push_str(&q(&root.display().to_string()));
        for arg in [&self.entrypoint]
            .into_iter()
            .chain(&self.exe_args)
            .chain(&self.args)
        {
            line.push(' ');
            line.push_str(&q(arg));
        }
        line
    }
}

/// Lines that create mount point `target` (a file or directory) and bind `source` there,
/// read-only when asked.
fn bind(target: &str, source: &str, read_only: bool, file: bool) -> Vec<String> {
    let make = if file {
        format!("mkdir -p \"$(dirname {target})\" && touch {target}")
    } else {
        format!("mkdir -p {target}")
    };
    let mut lines = vec![make, format!("{MOUNT} --rbind {} {target}", q(source))];
    if read_only {
        lines.push(format!("{MOUNT} -o remount,bind,ro {target}"));
    }
    lines
}

/// `s` quoted for the shell.
fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch() -> Launch {
        Launch {
            exe: "/host/target/debug/hypershift-adapter".into(),
            exe_args: vec![],
            entrypoint: "/usr/local/bin/hypershift-adapter".into(),
            args: vec!["controlplane".into()],
            env: vec![(
                "RESULTS_OUTPUT_PATH".into(),
                "/results/adapter-report.json".into(),
            )],
            mounts: vec![Mount {
                host: "/pods/u/volumes/results".into(),
                path: "/results".into(),
                read_only: false,
            }],
            termination: Mount {
                host: "/pods/u/adapter/termination-log".into(),
                path: "/dev/termination-log".into(),
                read_only: false,
            },
            user: Some((65532, 65532, vec![65532])),
            read_only_root: true,
            cgroup_procs: None,
            dir: "/pods/u/adapter".into(),
        }
    }

    #[test]
    fn paths_under_a_mount_are_rewritten_to_the_host() {
        let l = launch();
        assert_eq!(
            l.rewrite("/results/adapter-report.json"),
            "/pods/u/volumes/results/adapter-report.json"
        );
        assert_eq!(l.rewrite("/results"), "/pods/u/volumes/results");
        assert_eq!(l.rewrite("/resultsx"), "/resultsx");
        assert_eq!(l.rewrite("controlplane"), "controlplane");
    }

    #[test]
    fn the_script_binds_the_volumes_and_drops_to_the_containers_user() {
        let script = launch().script();
        assert!(
            script.contains("--rbind '/pods/u/volumes/results' '/pods/u/adapter/rootfs/results'"),
            "{script}"
        );
        assert!(script.contains("exec /usr/sbin/chroot --userspec=65532:65532 --groups=65532 '/pods/u/adapter/rootfs' '/usr/local/bin/hypershift-adapter' 'controlplane'"), "{script}");
        assert!(script.contains("remount,ro '/pods/u/adapter/rootfs'"));
        assert_eq!(q("it's"), r"'it'\''s'");
    }
}
