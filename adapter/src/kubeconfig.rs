//! Loading a kube-rs client configuration the way kubectl does: an explicit `KUBECONFIG` (a
//! `:`-separated list, merged), else `~/.kube/config`, else the in-cluster service account.
//!
//! Every file is read with a size limit ([`crate::input_file`]): each kubeconfig, and the files
//! it names (`certificate-authority`, `client-certificate`, `client-key`, `tokenFile`; a relative
//! path is taken from the kubeconfig's directory, as kubectl does), which are read once here and
//! handed to kube-rs as data. In the cluster (no kubeconfig) the service-account token and CA are
//! checked against their limits before kube-rs reads them.

use std::path::{Path, PathBuf};

use base64::Engine;
use kube::config::{AuthInfo, KubeConfigOptions, Kubeconfig};

use crate::input_file::{self, Kind};

/// Where the kubelet mounts the service-account token in a pod.
const SERVICE_ACCOUNT_TOKEN: &str = "/var/run/secrets/kubernetes.io/serviceaccount/token";
/// Where the kubelet mounts the service-account CA in a pod.
const SERVICE_ACCOUNT_CA: &str = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";

/// The client configuration for `kubeconfig` (or inferred when `None`). The error is a readable
/// chain of causes.
pub async fn load(kubeconfig: Option<&Path>) -> Result<kube::Config, String> {
    let default = std::env::home_dir()
        .map(|home| home.join(".kube").join("config"))
        .filter(|p| p.exists());
    match kubeconfig.map(Path::to_path_buf).or(default) {
        Some(path) => {
            let mut merged: Option<Kubeconfig> = None;
            for part in std::env::split_paths(&path).filter(|p| !p.as_os_str().is_empty()) {
                let next = read(&part)?;
                merged = Some(match merged {
                    Some(first) => first.merge(next).map_err(|e| error_chain(&e))?,
                    None => next,
                });
            }
            let kubeconfig = merged.ok_or_else(|| "the kubeconfig path is empty".to_owned())?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| error_chain(&e))
        }
        None => {
            check_in_cluster_files(
                Path::new(SERVICE_ACCOUNT_TOKEN),
                Path::new(SERVICE_ACCOUNT_CA),
            )?;
            kube::Config::infer().await.map_err(|e| error_chain(&e))
        }
    }
}

/// The in-cluster token and CA, when present, are within their limits (kube-rs then reads them:
/// files the kubelet writes, not paths a user chooses).
fn check_in_cluster_files(token: &Path, ca: &Path) -> Result<(), String> {
    for (kind, path) in [
        (input_file::SERVICE_ACCOUNT_TOKEN, token),
        (input_file::SERVICE_ACCOUNT_CA, ca),
    ] {
        if path.exists() {
            kind.read(path)?;
        }
    }
    Ok(())
}

/// One kubeconfig file, bounded, with the files it names read (bounded) into data.
pub fn read(path: &Path) -> Result<Kubeconfig, String> {
    let text = input_file::KUBECONFIG.read_text(path)?;
    let mut config = Kubeconfig::from_yaml(&text)
        .map_err(|e| format!("{}: {}", path.display(), error_chain(&e)))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let named = |file: &str| -> PathBuf {
        let file = Path::new(file);
        if file.is_relative() {
            dir.join(file)
        } else {
            file.to_path_buf()
        }
    };
    let b64 = |bytes: Vec<u8>| base64::engine::general_purpose::STANDARD.encode(bytes);
    for cluster in config
        .clusters
        .iter_mut()
        .filter_map(|c| c.cluster.as_mut())
    {
        if let Some(file) = cluster.certificate_authority.take()
            && cluster.certificate_authority_data.is_none()
        {
            cluster.certificate_authority_data =
                Some(b64(input_file::KUBECONFIG_CA.read(&named(&file))?));
        }
    }
    for named_user in &mut config.auth_infos {
        if let Some(user) = named_user.auth_info.take() {
            named_user.auth_info = Some(inline_user_files(user, &named, &b64)?);
        }
    }
    Ok(config)
}

/// `user` with its `client-certificate`, `client-key` and `tokenFile` read into
/// `client-certificate-data`, `client-key-data` and `token` (a value already given wins, as in
/// kube-rs). The secret fields are set through the kubeconfig's own serde form.
fn inline_user_files(
    user: AuthInfo,
    named: &dyn Fn(&str) -> PathBuf,
    b64: &dyn Fn(Vec<u8>) -> String,
) -> Result<AuthInfo, String> {
    let mut user = user;
    // An exec plugin given by a relative path with a separator is found from the kubeconfig's
    // directory, as kube-rs and client-go do; a bare name is looked up in `PATH`.
    if let Some(exec) = user.exec.as_mut()
        && let Some(command) = exec.command.as_mut()
        && command.contains('/')
        && Path::new(command.as_str()).is_relative()
    {
        *command = named(command).display().to_string();
    }
    let mut value = serde_json::to_value(&user).map_err(|e| e.to_string())?;
    let Some(fields) = value.as_object_mut() else {
        return Ok(user);
    };
    let files: [(&str, &str, Kind); 3] = [
        (
            "client-certificate",
            "client-certificate-data",
            input_file::KUBECONFIG_CLIENT_CERT,
        ),
        (
            "client-key",
            "client-key-data",
            input_file::KUBECONFIG_CLIENT_KEY,
        ),
        ("tokenFile", "token", input_file::KUBECONFIG_TOKEN),
    ];
    for (file_key, data_key, kind) in files {
        let Some(file) = fields.remove(file_key) else {
            continue;
        };
        let Some(file) = file.as_str() else {
            continue;
        };
        if fields.get(data_key).is_some_and(|v| !v.is_null()) {
            continue;
        }
        let data = if data_key == "token" {
            kind.read_text(&named(file))?.trim().to_owned()
        } else {
            b64(kind.read(&named(file))?)
        };
        fields.insert(data_key.to_owned(), serde_json::Value::String(data));
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// The client settings the check relies on: a read timeout per call, and no kube-rs retries —
/// it would retry 429/503/504 up to 15 times, hiding the server's answer behind our timeout;
/// the Job runs again on the next pulse (~10 s), so one attempt per call and a report carrying
/// the server's message is the better trade.
pub fn tune(config: &mut kube::Config, timeout: std::time::Duration) {
    config.read_timeout = Some(timeout);
    config.default_retry = false;
}

/// `err` and its sources, joined with `: `, skipping causes already quoted by their parent.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut message = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const PEM: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

    fn kubeconfig(dir: &Path, user: &str) -> PathBuf {
        let path = dir.join("config");
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\ncurrent-context: hub\nclusters:\n- name: hub\n  cluster:\n    server: https://hub.example:6443\n    certificate-authority: ca.crt\ncontexts:\n- name: hub\n  context: {{cluster: hub, user: adapter}}\nusers:\n- name: adapter\n  user:\n{user}"
            ),
        )
        .unwrap();
        path
    }

    #[test]
    fn files_a_kubeconfig_names_are_read_from_its_directory_into_data() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.crt"), PEM).unwrap();
        std::fs::write(dir.path().join("token"), "eyJhbGciOiJSUzI1NiJ9.e30.c2ln\n").unwrap();
        let config = read(&kubeconfig(dir.path(), "    tokenFile: token\n")).unwrap();
        let cluster = config.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.certificate_authority, None);
        let ca = base64::engine::general_purpose::STANDARD
            .decode(cluster.certificate_authority_data.as_ref().unwrap())
            .unwrap();
        assert_eq!(ca, PEM.as_bytes());
        let user = serde_json::to_value(config.auth_infos[0].auth_info.as_ref().unwrap()).unwrap();
        assert_eq!(user["token"], "eyJhbGciOiJSUzI1NiJ9.e30.c2ln");
        assert!(user.get("tokenFile").is_none(), "{user}");
    }

    #[test]
    fn an_oversized_token_file_named_by_the_kubeconfig_is_refused_with_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.crt"), PEM).unwrap();
        std::fs::write(dir.path().join("token"), vec![b'a'; 64 * 1024 + 1]).unwrap();
        let err = read(&kubeconfig(dir.path(), "    tokenFile: token\n")).unwrap_err();
        assert!(
            err.contains("token file") && err.contains("64 KiB") && err.contains("tokenFile"),
            "{err}"
        );
    }

    #[test]
    fn a_kubeconfig_naming_dev_zero_as_its_client_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ca.crt"), PEM).unwrap();
        let err = read(&kubeconfig(
            dir.path(),
            "    client-certificate: ca.crt\n    client-key: /dev/zero\n",
        ))
        .unwrap_err();
        assert!(err.contains("/dev/zero") && err.contains("1 MiB"), "{err}");
    }

    #[test]
    fn an_endless_kubeconfig_is_refused_naming_kubeconfig_and_the_limit() {
        let err = read(Path::new("/dev/zero")).unwrap_err();
        assert!(
            err.contains("KUBECONFIG must name a file of at most 1 MiB"),
            "{err}"
        );
    }

    #[test]
    fn oversized_in_cluster_files_are_refused_before_kube_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        let ca = dir.path().join("ca.crt");
        std::fs::write(&ca, PEM).unwrap();
        std::fs::write(&token, "t").unwrap();
        assert_eq!(check_in_cluster_files(&token, &ca), Ok(()));
        assert!(
            check_in_cluster_files(Path::new("/dev/zero"), &ca)
                .unwrap_err()
                .contains("service-account token")
        );
        assert!(
            check_in_cluster_files(&token, Path::new("/dev/zero"))
                .unwrap_err()
                .contains("service-account CA")
        );
    }
}
