//! The pod's volumes, made on this host under the pod's directory as the kubelet makes them under
//! `/var/lib/kubelet/pods/<uid>/volumes/<plugin>/<name>`: `emptyDir` (mode 0777), `secret`,
//! `configMap`, `downwardAPI` and `projected` (files with their modes; the service account token
//! minted by the TokenRequest API for the Pod's ServiceAccount, bound to the Pod), and `hostPath`
//! (the host's own path). With `securityContext.fsGroup` the files belong to that group and are
//! group-readable, as `SetVolumeOwnership` leaves them. Other volume types are refused.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use k8s_openapi::api::authentication::v1::{BoundObjectReference, TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{
    DownwardAPIVolumeFile, KeyToPath, Pod, ServiceAccount, ServiceAccountTokenProjection, Volume,
};
use kube::Api;
use kube::api::PostParams;

use super::source::{self, Keys, Objects};

/// The kubelet's default `defaultMode` (0644).
const DEFAULT_MODE: u32 = 0o644;

/// One file of a volume: its path in the volume, content and mode.
type File = (String, Vec<u8>, u32);

/// Makes every volume of `pod` under `dir`; the host path of each, by volume name. The files
/// get the Pod's `fsGroup` only `with_fs_group` (the containers run as their own users).
///
/// # Errors
/// The kubelet's `MountVolume.SetUp failed` cause: a Secret or ConfigMap that is missing and not
/// optional, a token the API server refused, an unsupported volume type, or a file error.
pub async fn prepare(
    client: &kube::Client,
    pod: &Pod,
    objects: &Objects,
    dir: &Path,
    with_fs_group: bool,
) -> Result<BTreeMap<String, PathBuf>, String> {
    let spec = pod.spec.as_ref();
    // Without root the processes run as this user, who could not give files to another group.
    let fs_group = spec
        .and_then(|s| s.security_context.as_ref())
        .and_then(|s| s.fs_group)
        .and_then(|g| u32::try_from(g).ok())
        .filter(|_| with_fs_group);
    let mut made = BTreeMap::new();
    for volume in spec.and_then(|s| s.volumes.as_deref()).unwrap_or_default() {
        let path = prepare_one(client, pod, objects, dir, volume, fs_group)
            .await
            .map_err(|e| {
                format!(
                    "MountVolume.SetUp failed for volume {:?} : {e}",
                    volume.name
                )
            })?;
        made.insert(volume.name.clone(), path);
    }
    Ok(made)
}

async fn prepare_one(
    client: &kube::Client,
    pod: &Pod,
    objects: &Objects,
    dir: &Path,
    volume: &Volume,
    fs_group: Option<u32>,
) -> Result<PathBuf, String> {
    if let Some(host) = &volume.host_path {
        return host_path(&host.path, host.type_.as_deref());
    }
    let (plugin, files) = if volume.empty_dir.is_some() {
        ("kubernetes.io~empty-dir", None)
    } else if let Some(secret) = &volume.secret {
        let name = secret.secret_name.clone().unwrap_or_default();
        let keys = keyed(objects.secrets.get(&name), secret.optional, &name)?;
        let files = items(
            &keys,
            secret.items.as_deref(),
            secret.default_mode,
            Kind::Secret,
        )?;
        ("kubernetes.io~secret", Some(files))
    } else if let Some(config_map) = &volume.config_map {
        let keys = keyed(
            objects.config_maps.get(&config_map.name),
            config_map.optional,
            &config_map.name,
        )?;
        let files = items(
            &keys,
            config_map.items.as_deref(),
            config_map.default_mode,
            Kind::ConfigMap,
        )?;
        ("kubernetes.io~configmap", Some(files))
    } else if let Some(downward) = &volume.downward_api {
        let files = downward_files(
            pod,
            downward.items.as_deref().unwrap_or_default(),
            downward.default_mode,
        )?;
        ("kubernetes.io~downward-api", Some(files))
    } else if volume.projected.is_some() {
        (
            "kubernetes.io~projected",
            Some(projected(client, pod, objects, volume).await?),
        )
    } else {
        return Err("this volume type is not supported by the testbed kubelet".to_owned());
    };
    let path = dir.join(plugin).join(&volume.name);
    std::fs::create_dir_all(&path).map_err(|e| e.to_string())?;
    match files {
        None => set_mode(&path, 0o777, fs_group),
        Some(files) => {
            set_mode(&path, 0o755, fs_group)?;
            write_files(&path, files, fs_group)
        }
    }
    .map(|()| path)
}

/// A `hostPath` volume: the path itself (created for `DirectoryOrCreate`).
fn host_path(path: &str, kind: Option<&str>) -> Result<PathBuf, String> {
    let path = PathBuf::from(path);
    if kind == Some("DirectoryOrCreate") {
        std::fs::create_dir_all(&path).map_err(|e| e.to_string())?;
    }
    match kind {
        Some("Directory") if !path.is_dir() => Err(format!(
            "hostPath type check failed: {} is not a directory",
            path.display()
        )),
        Some("File") if !path.is_file() => Err(format!(
            "hostPath type check failed: {} is not a file",
            path.display()
        )),
        _ => Ok(path),
    }
}

/// The keys of a Secret or ConfigMap volume's object; an optional missing one is empty.
fn keyed(
    keys: Option<&Keys>,
    optional: Option<bool>,
    name: &str,
) -> Result<BTreeMap<String, Vec<u8>>, String> {
    match keys {
        Some(Ok(keys)) => Ok(keys.clone()),
        _ if optional == Some(true) => Ok(BTreeMap::new()),
        Some(Err(message)) => Err(message.clone()),
        None => Err(format!("{name:?} not found")),
    }
}

/// Whose keys a volume projects (the kubelet words a missing key differently).
#[derive(Clone, Copy)]
enum Kind {
    Secret,
    ConfigMap,
}

/// The files of `keys`: every key under its own name, or only `items` at their paths.
fn items(
    keys: &BTreeMap<String, Vec<u8>>,
    items: Option<&[KeyToPath]>,
    default_mode: Option<i32>,
    kind: Kind,
) -> Result<Vec<File>, String> {
    let mode = mode_of(default_mode, DEFAULT_MODE);
    match items {
        None => Ok(keys
            .iter()
            .map(|(k, v)| (k.clone(), v.clone(), mode))
            .collect()),
        Some(items) => items
            .iter()
            .map(|item| match keys.get(&item.key) {
                Some(value) => Ok((item.path.clone(), value.clone(), mode_of(item.mode, mode))),
                None => Err(match kind {
                    Kind::Secret => format!("references non-existent secret key: {}", item.key),
                    Kind::ConfigMap => {
                        format!("configmap references non-existent config key: {}", item.key)
                    }
                }),
            })
            .collect(),
    }
}

fn downward_files(
    pod: &Pod,
    items: &[DownwardAPIVolumeFile],
    default_mode: Option<i32>,
) -> Result<Vec<File>, String> {
    let mode = mode_of(default_mode, DEFAULT_MODE);
    items
        .iter()
        .map(|item| {
            let Some(field) = &item.field_ref else {
                return Err(format!(
                    "downwardAPI item {}: only fieldRef is supported by the testbed kubelet",
                    item.path
                ));
            };
            let value = source::field_value(pod, &field.field_path)?;
            Ok((
                item.path.clone(),
                value.into_bytes(),
                mode_of(item.mode, mode),
            ))
        })
        .collect()
}

/// The files of a projected volume: each source's files, in order.
async fn projected(
    client: &kube::Client,
    pod: &Pod,
    objects: &Objects,
    volume: &Volume,
) -> Result<Vec<File>, String> {
    let Some(projected) = &volume.projected else {
        return Ok(Vec::new());
    };
    let mode = projected.default_mode;
    let mut files = Vec::new();
    for source in projected.sources.as_deref().unwrap_or_default() {
        if let Some(token) = &source.service_account_token {
            let minted = mint_token(client, pod, token).await?;
            files.push((
                token.path.clone(),
                minted.into_bytes(),
                mode_of(mode, DEFAULT_MODE),
            ));
        } else if let Some(c) = &source.config_map {
            let keys = keyed(objects.config_maps.get(&c.name), c.optional, &c.name)?;
            files.extend(items(&keys, c.items.as_deref(), mode, Kind::ConfigMap)?);
        } else if let Some(s) = &source.secret {
            let keys = keyed(objects.secrets.get(&s.name), s.optional, &s.name)?;
            files.extend(items(&keys, s.items.as_deref(), mode, Kind::Secret)?);
        } else if let Some(d) = &source.downward_api {
            files.extend(downward_files(
                pod,
                d.items.as_deref().unwrap_or_default(),
                mode,
            )?);
        } else {
            return Err("a projected source this testbed kubelet does not support".to_owned());
        }
    }
    Ok(files)
}

/// A token for the Pod's ServiceAccount from the TokenRequest API, bound to the Pod (as the
/// kubelet asks for it: the source's audience, else the API server's; its expiration).
async fn mint_token(
    client: &kube::Client,
    pod: &Pod,
    source: &ServiceAccountTokenProjection,
) -> Result<String, String> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
    let account = pod
        .spec
        .as_ref()
        .and_then(|s| s.service_account_name.clone())
        .unwrap_or_else(|| "default".to_owned());
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: source.audience.clone().into_iter().collect(),
            expiration_seconds: source.expiration_seconds,
            bound_object_ref: Some(BoundObjectReference {
                api_version: Some("v1".to_owned()),
                kind: Some("Pod".to_owned()),
                name: pod.metadata.name.clone(),
                uid: pod.metadata.uid.clone(),
            }),
        },
        ..TokenRequest::default()
    };
    let api: Api<ServiceAccount> = Api::namespaced(client.clone(), ns);
    let answer = api
        .create_token_request(&account, &PostParams::default(), &request)
        .await
        .map_err(|e| format!("failed to fetch token: {}", source::api_message(&e)))?;
    answer
        .status
        .map(|s| s.token)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| "failed to fetch token: the TokenRequest answer has no token".to_owned())
}

fn mode_of(mode: Option<i32>, default: u32) -> u32 {
    mode.and_then(|m| u32::try_from(m).ok()).unwrap_or(default) & 0o7777
}

/// Writes the files (creating sub-directories) with their modes.
fn write_files(root: &Path, files: Vec<File>, fs_group: Option<u32>) -> Result<(), String> {
    for (relative, content, mode) in files {
        if relative
            .split('/')
            .any(|part| part == ".." || part.is_empty())
        {
            return Err(format!("invalid path {relative:?}"));
        }
        let path = root.join(&relative);
        if let Some(parent) = path.parent().filter(|p| *p != root) {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
            set_mode(parent, 0o755, fs_group)?;
        }
        std::fs::write(&path, content).map_err(|e| format!("{}: {e}", path.display()))?;
        // Read-only volumes get the group's read bit with an fsGroup (SetVolumeOwnership's mask).
        let mode = if fs_group.is_some() {
            mode | 0o440
        } else {
            mode
        };
        set_mode(&path, mode, fs_group)?;
    }
    Ok(())
}

/// Sets `mode` (directories get the set-group-id bit with an fsGroup) and the group.
fn set_mode(path: &Path, mode: u32, fs_group: Option<u32>) -> Result<(), String> {
    let mode = match fs_group {
        Some(_) if path.is_dir() => mode | 0o2000,
        _ => mode,
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if let Some(group) = fs_group {
        std::os::unix::fs::chown(path, None, Some(group))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn items_pick_keys_to_paths_with_modes() {
        let keys = BTreeMap::from([
            ("ca.crt".to_owned(), b"CA".to_vec()),
            ("token".to_owned(), b"T".to_vec()),
        ]);
        let picked: Vec<KeyToPath> =
            serde_json::from_value(serde_json::json!([{"key": "token", "path": "token"}])).unwrap();
        let files = items(&keys, Some(&picked), Some(288), Kind::Secret).unwrap();
        assert_eq!(files, vec![("token".to_owned(), b"T".to_vec(), 0o440)]);
        assert_eq!(items(&keys, None, None, Kind::Secret).unwrap().len(), 2);
        let missing: Vec<KeyToPath> =
            serde_json::from_value(serde_json::json!([{"key": "nope", "path": "x"}])).unwrap();
        assert_eq!(
            items(&keys, Some(&missing), None, Kind::Secret).unwrap_err(),
            "references non-existent secret key: nope"
        );
    }

    #[test]
    fn files_are_written_with_their_mode_and_refused_outside_the_volume() {
        let dir = tempfile::tempdir().unwrap();
        write_files(
            dir.path(),
            vec![("sub/f".into(), b"x".to_vec(), 0o400)],
            None,
        )
        .unwrap();
        let meta = std::fs::metadata(dir.path().join("sub/f")).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o400);
        assert!(
            write_files(
                dir.path(),
                vec![("../f".into(), b"x".to_vec(), 0o400)],
                None
            )
            .is_err()
        );
    }
}
