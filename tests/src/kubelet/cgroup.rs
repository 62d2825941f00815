//! A container's memory limit, enforced by the kernel in a memory cgroup of its own, and the
//! OOM kills the kernel counted there (what containerd reports as `OOMKilled`).
//!
//! cgroup v2 (`memory.max`, `memory.events`) is used when this process's cgroup delegates the
//! memory controller to its children; else cgroup v1's memory controller (`memory.limit_in_bytes`,
//! `memory.oom_control`), as on this project's test machine, whose v2 hierarchy has no memory
//! controller; else nothing (not root, or no writable controller) and the kubelet falls back to
//! its stand-in (see `super::pod`).

use std::path::{Path, PathBuf};

/// Which hierarchy a cgroup lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// Where this process may create memory cgroups for its containers.
#[derive(Debug, Clone)]
pub struct MemoryCgroups {
    version: Version,
    parent: PathBuf,
}

impl MemoryCgroups {
    /// This process's own memory cgroup, when a child of it can be created and limited.
    pub fn detect() -> Option<MemoryCgroups> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let found =
            find_v2(&mountinfo, &membership).or_else(|| find_v1(&mountinfo, &membership))?;
        // Writable: make and remove a probe.
        let probe = found
            .parent
            .join(format!("testbed-kubelet-probe-{}", std::process::id()));
        std::fs::create_dir(&probe).ok()?;
        let _ = std::fs::remove_dir(&probe);
        Some(found)
    }

    pub fn version(&self) -> Version {
        self.version
    }

    /// A new cgroup `name` limited to `limit` bytes of memory (and no swap).
    ///
    /// # Errors
    /// When it cannot be created or limited.
    pub fn create(&self, name: &str, limit: u64) -> std::io::Result<Cgroup> {
        let dir = self.parent.join(name);
        std::fs::create_dir(&dir)?;
        let cgroup = Cgroup {
            dir,
            version: self.version,
        };
        let written = match self.version {
            Version::V1 => {
                std::fs::write(cgroup.dir.join("memory.limit_in_bytes"), limit.to_string()).map(
                    |()| {
                        // Only present with swap accounting; the same value means no swap.
                        let _ = std::fs::write(
                            cgroup.dir.join("memory.memsw.limit_in_bytes"),
                            limit.to_string(),
                        );
                    },
                )
            }
            Version::V2 => {
                std::fs::write(cgroup.dir.join("memory.max"), limit.to_string()).map(|()| {
                    let _ = std::fs::write(cgroup.dir.join("memory.swap.max"), "0");
                })
            }
        };
        if let Err(e) = written {
            cgroup.remove();
            return Err(e);
        }
        Ok(cgroup)
    }
}

/// One container's memory cgroup.
#[derive(Debug)]
pub struct Cgroup {
    dir: PathBuf,
    version: Version,
}

impl Cgroup {
    /// The file a process writes its pid to, to join.
    pub fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// How many processes the kernel's OOM killer killed in this cgroup.
    pub fn oom_kills(&self) -> u64 {
        let file = match self.version {
            Version::V1 => "memory.oom_control",
            Version::V2 => "memory.events",
        };
        std::fs::read_to_string(self.dir.join(file))
            .ok()
            .and_then(|text| counter(&text, "oom_kill"))
            .unwrap_or(0)
    }

    /// Removes the cgroup (its processes have exited; retried briefly while the kernel lets go).
    pub fn remove(self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// `value` of the line `key value`.
fn counter(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .filter_map(|line| line.split_once(' '))
        .find(|(k, _)| *k == key)
        .and_then(|(_, v)| v.trim().parse().ok())
}

/// The v2 cgroup of this process, if it hands the memory controller to its children.
fn find_v2(mountinfo: &str, membership: &str) -> Option<MemoryCgroups> {
    let mount = mounts(mountinfo)
        .find(|(fstype, _, _)| *fstype == "cgroup2")?
        .1;
    let path = membership.lines().find_map(|l| l.strip_prefix("0::"))?;
    let parent = join(&mount, path);
    let delegated = std::fs::read_to_string(parent.join("cgroup.subtree_control")).ok()?;
    delegated
        .split_whitespace()
        .any(|c| c == "memory")
        .then_some(MemoryCgroups {
            version: Version::V2,
            parent,
        })
}

/// The v1 memory cgroup of this process.
fn find_v1(mountinfo: &str, membership: &str) -> Option<MemoryCgroups> {
    let mount = mounts(mountinfo)
        .find(|(fstype, _, options)| {
            *fstype == "cgroup" && options.split(',').any(|o| o == "memory")
        })?
        .1;
    let path = membership.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then_some(path)
    })?;
    Some(MemoryCgroups {
        version: Version::V1,
        parent: join(&mount, path),
    })
}

/// `(fstype, mount point, super options)` of each line of `/proc/self/mountinfo`.
fn mounts(mountinfo: &str) -> impl Iterator<Item = (&str, PathBuf, &str)> {
    mountinfo.lines().filter_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let mount_point = before.split(' ').nth(4)?;
        let mut after = after.split(' ');
        let fstype = after.next()?;
        let options = after.nth(1).unwrap_or_default();
        Some((fstype, PathBuf::from(mount_point), options))
    })
}

fn join(mount: &Path, path: &str) -> PathBuf {
    mount.join(path.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
35 25 0:30 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory
36 25 0:31 / /sys/fs/cgroup/pids rw,relatime shared:13 - cgroup cgroup rw,pids
40 25 0:35 / /sys/fs/cgroup/unified rw,relatime shared:17 - cgroup2 cgroup2 rw
";
    const MEMBERSHIP: &str = "8:pids:/\n4:memory:/process_api/1afe\n0::/\n";

    #[test]
    fn the_v1_memory_cgroup_of_this_process_is_found() {
        let found = find_v1(MOUNTINFO, MEMBERSHIP).unwrap();
        assert_eq!(found.version, Version::V1);
        assert_eq!(
            found.parent,
            Path::new("/sys/fs/cgroup/memory/process_api/1afe")
        );
    }

    #[test]
    fn oom_kill_counters_are_read_from_either_file() {
        assert_eq!(
            counter("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n", "oom_kill"),
            Some(1)
        );
        assert_eq!(
            counter(
                "low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\noom_group_kill 0\n",
                "oom_kill"
            ),
            Some(2)
        );
        assert_eq!(counter("oom_kill_disable 0\n", "oom_kill"), None);
    }
}
