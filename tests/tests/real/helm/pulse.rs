//! The framework as the chart installed it, run as a process: what a kubelet would start from the
//! stored Deployment (its container's command, args and env, its volumes' ConfigMaps and Secrets)
//! on the kit's real servers, through `testbed::real::framework` (a private network namespace
//! with forwarders to the kit).
//!
//! A kubelet mounts volumes at absolute paths (`/etc/adapter`, `/etc/broker/broker.yaml`,
//! `/var/run/secrets/hyperfleet`) and gives the Pod its ServiceAccount in-cluster. A process on
//! the shared machine cannot have either, so [`kubelet_view`] writes each mounted volume into a
//! directory of the test and rewrites every argument and env value that names a mounted path to
//! that directory; in-cluster access becomes a kubeconfig with a token of the Pod's
//! ServiceAccount from the real TokenRequest API (`HYPERFLEET_KUBERNETES_KUBE_CONFIG_PATH`), and
//! the API token file the adapter config names (`auth.token_path`, inside the Secret's mount)
//! becomes `HYPERFLEET_API_AUTH_TOKEN_PATH` to the same file written from the stored Secret.
//! Everything else is the stored objects as they are.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail, ensure};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Container, Secret, Volume};
use kube::api::Api;
use testbed::real::RealSystems;
use testbed::real::framework::FrameworkSpec;
use testbed::real::kube_access::service_account_kubeconfig;

/// The command of the chart's container (`values.yaml` `command`), which the kit's framework
/// binary stands for.
const CHART_COMMAND: &str = "/app/adapter";

/// Files of one mounted volume: file name → content.
type Files = BTreeMap<String, Vec<u8>>;
/// A volume's `items`: (key, file name) pairs.
type Items = Vec<(String, String)>;

/// What the stored Deployment `name` in `ns` would run, as a [`FrameworkSpec`]; the mounted files
/// are written under `dir`.
///
/// # Errors
/// When the Deployment uses something a kubelet would have to provide that this does not
/// (a fieldRef, a volume kind other than projected ConfigMaps, ConfigMaps and Secrets), or the
/// chart's command or argument shape changed.
pub async fn kubelet_view(
    real: &RealSystems,
    client: &kube::Client,
    ns: &str,
    name: &str,
    dir: &Path,
) -> anyhow::Result<FrameworkSpec> {
    let deployment = Api::<Deployment>::namespaced(client.clone(), ns)
        .get(name)
        .await?;
    let pod = deployment
        .spec
        .and_then(|s| s.template.spec)
        .context("no pod template")?;
    let [container] = pod.containers.as_slice() else {
        bail!("{} containers", pod.containers.len());
    };
    ensure!(
        container.command.as_deref() == Some(&[CHART_COMMAND.to_owned()][..]),
        "command {:?}",
        container.command
    );
    let volumes = pod.volumes.unwrap_or_default();
    let mut mounts: Vec<(String, PathBuf)> = Vec::new();
    for mount in container.volume_mounts.iter().flatten() {
        let volume = volumes
            .iter()
            .find(|v| v.name == mount.name)
            .with_context(|| format!("no volume {}", mount.name))?;
        let files = volume_files(client, ns, volume).await?;
        let local = dir.join(&mount.name);
        std::fs::create_dir_all(&local)?;
        for (file, content) in &files {
            std::fs::write(local.join(file), content)?;
        }
        let target = match mount.sub_path.as_deref() {
            Some(sub) if !sub.is_empty() => local.join(sub),
            _ => local,
        };
        mounts.push((mount.mount_path.clone(), target));
    }
    // Longest mount path first, so a path is mapped by its closest mount.
    mounts.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
    let local = |path: &str| -> Option<PathBuf> {
        mounts.iter().find_map(|(mount, target)| {
            let rest = path.strip_prefix(mount.as_str())?;
            if rest.is_empty() {
                Some(target.clone())
            } else {
                rest.strip_prefix('/').map(|rest| target.join(rest))
            }
        })
    };
    let rewrite = |value: &str| match local(value) {
        Some(path) => path.to_string_lossy().into_owned(),
        None => value.to_owned(),
    };

    let args: Vec<String> = container
        .args
        .iter()
        .flatten()
        .map(|a| rewrite(a))
        .collect();
    ensure!(
        args.len() >= 5
            && args[0] == "serve"
            && args[1] == "--config"
            && args[3] == "--task-config",
        "args {args:?}: not the chart's serve --config … --task-config …"
    );
    let (config, task_config) = (args[2].clone(), args[4].clone());
    let mut env = container_env(client, ns, container, &rewrite).await?;

    // In-cluster access: the Pod's ServiceAccount, with a token from the real TokenRequest API.
    let account = pod
        .service_account_name
        .as_deref()
        .context("no serviceAccountName")?;
    let kubeconfig =
        service_account_kubeconfig(real, client, ns, account, 3600, &dir.join("kubeconfig"))
            .await?;
    env.insert(
        "HYPERFLEET_KUBERNETES_KUBE_CONFIG_PATH".into(),
        kubeconfig.to_string_lossy().into_owned(),
    );
    // The API token file the adapter config names, inside its Secret's mount.
    let adapter_config: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&config)?)?;
    let token_path = adapter_config["clients"]["hyperfleet_api"]["auth"]["token_path"]
        .as_str()
        .context("auth.token_path")?;
    let token = local(token_path).with_context(|| format!("nothing mounted at {token_path}"))?;
    ensure!(token.is_file(), "{} is not a mounted file", token_path);
    env.insert(
        "HYPERFLEET_API_AUTH_TOKEN_PATH".into(),
        token.to_string_lossy().into_owned(),
    );

    Ok(FrameworkSpec {
        name: name.to_owned(),
        config: PathBuf::from(&config),
        task_config: PathBuf::from(task_config),
        args: args[5..].to_vec(),
        env,
    })
}

/// The container's env as a process gets it: values (paths under a mount rewritten), Secret and
/// ConfigMap keys resolved.
async fn container_env(
    client: &kube::Client,
    ns: &str,
    container: &Container,
    rewrite: &dyn Fn(&str) -> String,
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut env = BTreeMap::new();
    for var in container.env.iter().flatten() {
        let value = match (&var.value, &var.value_from) {
            (Some(value), None) => rewrite(value),
            (None, Some(from)) => {
                if let Some(key) = &from.secret_key_ref {
                    let secret = Api::<Secret>::namespaced(client.clone(), ns)
                        .get(&key.name)
                        .await?;
                    let bytes = secret
                        .data
                        .and_then(|d| d.get(&key.key).cloned())
                        .with_context(|| format!("{} has no {}", key.name, key.key))?;
                    String::from_utf8(bytes.0)?
                } else if let Some(key) = &from.config_map_key_ref {
                    let cm = Api::<ConfigMap>::namespaced(client.clone(), ns)
                        .get(&key.name)
                        .await?;
                    cm.data
                        .and_then(|d| d.get(&key.key).cloned())
                        .with_context(|| format!("{} has no {}", key.name, key.key))?
                } else {
                    bail!("env {}: a valueFrom this runner does not resolve", var.name);
                }
            }
            _ => String::new(),
        };
        ensure!(
            env.insert(var.name.clone(), value).is_none(),
            "env {} twice",
            var.name
        );
    }
    Ok(env)
}

/// The files a volume puts in its mount.
async fn volume_files(client: &kube::Client, ns: &str, volume: &Volume) -> anyhow::Result<Files> {
    let mut files = Files::new();
    let config_maps: Vec<(String, Option<Items>)> = if let Some(projected) = &volume.projected {
        let mut sources = Vec::new();
        for source in projected.sources.iter().flatten() {
            let cm = source
                .config_map
                .as_ref()
                .with_context(|| format!("volume {}: a projected non-ConfigMap", volume.name))?;
            sources.push((cm.name.clone(), items(cm.items.as_deref())));
        }
        sources
    } else if let Some(cm) = &volume.config_map {
        vec![(cm.name.clone(), items(cm.items.as_deref()))]
    } else if let Some(secret) = &volume.secret {
        let name = secret.secret_name.clone().unwrap_or_default();
        let stored = Api::<Secret>::namespaced(client.clone(), ns)
            .get(&name)
            .await?;
        let data = stored.data.unwrap_or_default();
        for (key, path) in select(&data, items(secret.items.as_deref())) {
            let bytes = data
                .get(&key)
                .with_context(|| format!("{name} has no {key}"))?;
            files.insert(path, bytes.0.clone());
        }
        return Ok(files);
    } else {
        bail!("volume {}: a kind this runner does not mount", volume.name);
    };
    for (name, wanted) in config_maps {
        let data = Api::<ConfigMap>::namespaced(client.clone(), ns)
            .get(&name)
            .await?
            .data
            .unwrap_or_default();
        for (key, path) in select(&data, wanted) {
            let text = data
                .get(&key)
                .with_context(|| format!("{name} has no {key}"))?;
            files.insert(path, text.clone().into_bytes());
        }
    }
    Ok(files)
}

/// `items` as `(key, path)` pairs; `None` for all keys.
fn items(items: Option<&[k8s_openapi::api::core::v1::KeyToPath]>) -> Option<Items> {
    items.map(|items| {
        items
            .iter()
            .map(|i| (i.key.clone(), i.path.clone()))
            .collect()
    })
}

/// The `(key, file)` pairs a volume mounts from `data`: its items, or every key as a file.
fn select<V>(data: &BTreeMap<String, V>, items: Option<Items>) -> Items {
    items.unwrap_or_else(|| data.keys().map(|k| (k.clone(), k.clone())).collect())
}
