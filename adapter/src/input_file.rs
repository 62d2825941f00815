//! Every file the adapter reads, with its size limit, read in one place: a bounded read
//! ([`job_report::read_limited`]) that never takes more than the limit plus one byte, whatever
//! the path names (a regular file, `/dev/zero`, a pipe fed forever), so a wrong file gives a
//! report instead of an OOM kill.
//!
//! | file | setting | limit | over the limit |
//! |---|---|---|---|
//! | cluster spec | `CLUSTER_SPEC_FILE` | 1 MiB | `ClusterSpecUnavailable` |
//! | NodePool spec | `NODEPOOL_SPEC_FILE` | 1 MiB | `NodePoolSpecUnavailable` |
//! | NodePool list | `NODEPOOLS_FILE` | 1 MiB | `NodePoolsUnknown` |
//! | management clusters (file inventory) | `MANAGEMENT_CLUSTERS_FILE` | 1 MiB | `InventoryUnavailable` |
//! | HyperFleet API token | `HYPERFLEET_API_TOKEN_FILE` | 64 KiB | `ClusterSpecUnavailable` / `NodePoolSpecUnavailable` |
//! | Maestro token | `MAESTRO_TOKEN_FILE` | 64 KiB | `AdapterMisconfigured` |
//! | Maestro CA, client certificate, client key | `MAESTRO_CA_FILE`, `MAESTRO_CLIENT_CERT_FILE`, `MAESTRO_CLIENT_KEY_FILE` | 1 MiB each | `AdapterMisconfigured` |
//! | kubeconfig, and the files it names (`certificate-authority`, `client-certificate`, `client-key`: 1 MiB; `tokenFile`: 64 KiB) | `KUBECONFIG` | 1 MiB | `AdapterMisconfigured` (hub), `InvalidKubeconfig` (nodes) |
//! | in-cluster service-account token and CA (no `KUBECONFIG`) | — | 64 KiB, 1 MiB | as the kubeconfig |

use std::path::Path;

use job_report::{
    LimitedReadError, MAX_KUBECONFIG_BYTES, MAX_PEM_FILE_BYTES, MAX_SPEC_FILE_BYTES,
    MAX_TOKEN_FILE_BYTES,
};

/// One kind of input file: what it is (in messages), the setting that names it, its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// e.g. `cluster spec file`.
    pub what: &'static str,
    /// The environment variable (or kubeconfig key) that names it.
    pub setting: &'static str,
    /// The most bytes accepted.
    pub limit: u64,
}

/// `CLUSTER_SPEC_FILE`: the framework's own limit on a file param.
pub const CLUSTER_SPEC: Kind = Kind {
    what: "cluster spec file",
    setting: "CLUSTER_SPEC_FILE",
    limit: MAX_SPEC_FILE_BYTES,
};
/// `NODEPOOL_SPEC_FILE`.
pub const NODEPOOL_SPEC: Kind = Kind {
    what: "NodePool spec file",
    setting: "NODEPOOL_SPEC_FILE",
    limit: MAX_SPEC_FILE_BYTES,
};
/// `NODEPOOLS_FILE`.
pub const NODEPOOL_LIST: Kind = Kind {
    what: "NodePool list file",
    setting: "NODEPOOLS_FILE",
    limit: MAX_SPEC_FILE_BYTES,
};
/// `MANAGEMENT_CLUSTERS_FILE`: the file inventory of management clusters.
pub const MANAGEMENT_CLUSTERS: Kind = Kind {
    what: "management clusters file",
    setting: "MANAGEMENT_CLUSTERS_FILE",
    limit: MAX_SPEC_FILE_BYTES,
};
/// `HYPERFLEET_API_TOKEN_FILE`.
pub const HYPERFLEET_TOKEN: Kind = Kind {
    what: "HyperFleet API token file",
    setting: "HYPERFLEET_API_TOKEN_FILE",
    limit: MAX_TOKEN_FILE_BYTES,
};
/// `MAESTRO_TOKEN_FILE`.
pub const MAESTRO_TOKEN: Kind = Kind {
    what: "Maestro token file",
    setting: "MAESTRO_TOKEN_FILE",
    limit: MAX_TOKEN_FILE_BYTES,
};
/// `MAESTRO_CA_FILE`.
pub const MAESTRO_CA: Kind = Kind {
    what: "Maestro CA file",
    setting: "MAESTRO_CA_FILE",
    limit: MAX_PEM_FILE_BYTES,
};
/// `MAESTRO_CLIENT_CERT_FILE`.
pub const MAESTRO_CLIENT_CERT: Kind = Kind {
    what: "Maestro client certificate",
    setting: "MAESTRO_CLIENT_CERT_FILE",
    limit: MAX_PEM_FILE_BYTES,
};
/// `MAESTRO_CLIENT_KEY_FILE`.
pub const MAESTRO_CLIENT_KEY: Kind = Kind {
    what: "Maestro client key",
    setting: "MAESTRO_CLIENT_KEY_FILE",
    limit: MAX_PEM_FILE_BYTES,
};
/// `KUBECONFIG` (each file of a `:`-separated list).
pub const KUBECONFIG: Kind = Kind {
    what: "kubeconfig",
    setting: "KUBECONFIG",
    limit: MAX_KUBECONFIG_BYTES,
};
/// A kubeconfig cluster's `certificate-authority` file.
pub const KUBECONFIG_CA: Kind = Kind {
    what: "certificate-authority file",
    setting: "the kubeconfig's certificate-authority",
    limit: MAX_PEM_FILE_BYTES,
};
/// A kubeconfig user's `client-certificate` file.
pub const KUBECONFIG_CLIENT_CERT: Kind = Kind {
    what: "client-certificate file",
    setting: "the kubeconfig's client-certificate",
    limit: MAX_PEM_FILE_BYTES,
};
/// A kubeconfig user's `client-key` file.
pub const KUBECONFIG_CLIENT_KEY: Kind = Kind {
    what: "client-key file",
    setting: "the kubeconfig's client-key",
    limit: MAX_PEM_FILE_BYTES,
};
/// A kubeconfig user's `tokenFile`.
pub const KUBECONFIG_TOKEN: Kind = Kind {
    what: "token file",
    setting: "the kubeconfig's tokenFile",
    limit: MAX_TOKEN_FILE_BYTES,
};
/// The in-cluster service-account token (used without `KUBECONFIG`).
pub const SERVICE_ACCOUNT_TOKEN: Kind = Kind {
    what: "service-account token",
    setting: "the pod's service-account token mount",
    limit: MAX_TOKEN_FILE_BYTES,
};
/// The in-cluster service-account CA (used without `KUBECONFIG`).
pub const SERVICE_ACCOUNT_CA: Kind = Kind {
    what: "service-account CA",
    setting: "the pod's service-account token mount",
    limit: MAX_PEM_FILE_BYTES,
};

/// `bytes` as people say it: `1 MiB`, `64 KiB`, else in bytes.
pub fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1024 * 1024 && b % (1024 * 1024) == 0 => format!("{} MiB", b / (1024 * 1024)),
        b if b >= 1024 && b % 1024 == 0 => format!("{} KiB", b / 1024),
        b => format!("{b} bytes"),
    }
}

impl Kind {
    /// The whole file at `path`, or a message naming the file, its setting, the limit and the fix.
    pub fn read(&self, path: &Path) -> Result<Vec<u8>, String> {
        job_report::read_limited(path, self.limit).map_err(|e| self.message(&e))
    }

    /// [`Kind::read`] as UTF-8 text.
    pub fn read_text(&self, path: &Path) -> Result<String, String> {
        String::from_utf8(self.read(path)?).map_err(|e| {
            format!(
                "cannot read the {} {}: it is not UTF-8 text ({}); check what {} names",
                self.what,
                path.display(),
                e.utf8_error(),
                self.setting
            )
        })
    }

    /// The message for a failed read.
    pub fn message(&self, error: &LimitedReadError) -> String {
        match error {
            LimitedReadError::TooLarge { path, limit } => format!(
                "the {} {} is larger than {} ({limit} bytes), the limit for a {}; {} must name a file of at most {} (not a device, a pipe or a different file)",
                self.what,
                path.display(),
                human(*limit),
                self.what,
                self.setting,
                human(*limit)
            ),
            LimitedReadError::Io { path, source } => {
                format!(
                    "cannot read the {} {} ({}): {source}",
                    self.what,
                    path.display(),
                    self.setting
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn limits_read_as_people_say_them() {
        assert_eq!(human(1024 * 1024), "1 MiB");
        assert_eq!(human(64 * 1024), "64 KiB");
        assert_eq!(human(1000), "1000 bytes");
    }

    #[test]
    fn an_oversized_file_names_the_file_the_setting_the_limit_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, vec![b'a'; 64 * 1024 + 1]).unwrap();
        let message = HYPERFLEET_TOKEN.read_text(&path).unwrap_err();
        for part in [
            "HyperFleet API token file",
            path.to_str().unwrap(),
            "64 KiB (65536 bytes)",
            "HYPERFLEET_API_TOKEN_FILE must name a file of at most 64 KiB",
        ] {
            assert!(message.contains(part), "{part:?} not in {message}");
        }
    }

    #[test]
    fn every_kind_stops_reading_dev_zero_at_its_limit() {
        for kind in [
            CLUSTER_SPEC,
            NODEPOOL_SPEC,
            NODEPOOL_LIST,
            MANAGEMENT_CLUSTERS,
            HYPERFLEET_TOKEN,
            MAESTRO_TOKEN,
            MAESTRO_CA,
            MAESTRO_CLIENT_CERT,
            MAESTRO_CLIENT_KEY,
            KUBECONFIG,
            KUBECONFIG_CA,
            KUBECONFIG_CLIENT_CERT,
            KUBECONFIG_CLIENT_KEY,
            KUBECONFIG_TOKEN,
            SERVICE_ACCOUNT_TOKEN,
            SERVICE_ACCOUNT_CA,
        ] {
            let message = kind.read(Path::new("/dev/zero")).unwrap_err();
            assert!(
                message.contains("is larger than") && message.contains(kind.setting),
                "{message}"
            );
        }
    }

    #[test]
    fn a_file_that_is_not_utf8_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spec.json");
        std::fs::write(&path, [b'{', 0xff, b'}']).unwrap();
        let message = CLUSTER_SPEC.read_text(&path).unwrap_err();
        assert!(
            message.contains("not UTF-8") && message.contains("CLUSTER_SPEC_FILE"),
            "{message}"
        );
    }
}
