//! What the kubelet reads besides the Pod: the Secrets and ConfigMaps its env and volumes name,
//! the Pod's own fields (downward API), and resource quantities.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Container, Pod, Secret, Volume};
use kube::Api;

/// The keys of one Secret or ConfigMap (values as bytes), or the API server's message when it
/// could not be read (e.g. `secrets "x" not found`).
pub type Keys = Result<BTreeMap<String, Vec<u8>>, String>;

/// The Secrets and ConfigMaps of a pod's namespace that its containers and volumes name.
#[derive(Debug, Default, Clone)]
pub struct Objects {
    pub secrets: BTreeMap<String, Keys>,
    pub config_maps: BTreeMap<String, Keys>,
}

impl Objects {
    /// Reads every Secret and ConfigMap `pod` names (env, envFrom, volumes, projected sources)
    /// from its namespace. A read that fails is kept as its message.
    pub async fn fetch(client: &kube::Client, pod: &Pod) -> Objects {
        let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
        let (secret_names, config_map_names) = referenced(pod);
        let secrets_api: Api<Secret> = Api::namespaced(client.clone(), ns);
        let config_maps_api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
        let mut objects = Objects::default();
        for name in secret_names {
            let keys = secrets_api
                .get(&name)
                .await
                .map(|s| {
                    s.data
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(k, v)| (k, v.0))
                        .collect()
                })
                .map_err(|e| api_message(&e));
            objects.secrets.insert(name, keys);
        }
        for name in config_map_names {
            let keys = config_maps_api
                .get(&name)
                .await
                .map(|c| {
                    let mut keys: BTreeMap<String, Vec<u8>> = c
                        .data
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(k, v)| (k, v.into_bytes()))
                        .collect();
                    keys.extend(
                        c.binary_data
                            .unwrap_or_default()
                            .into_iter()
                            .map(|(k, v)| (k, v.0)),
                    );
                    keys
                })
                .map_err(|e| api_message(&e));
            objects.config_maps.insert(name, keys);
        }
        objects
    }
}

/// The server's message for an API error (`secrets "x" not found`), else the error itself.
pub fn api_message(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => status.message.clone(),
        other => other.to_string(),
    }
}

/// Names of the Secrets and ConfigMaps the pod's containers and volumes refer to.
fn referenced(pod: &Pod) -> (Vec<String>, Vec<String>) {
    let mut secrets = Vec::new();
    let mut config_maps = Vec::new();
    let spec = pod.spec.as_ref();
    for container in spec.map(|s| s.containers.as_slice()).unwrap_or_default() {
        container_refs(container, &mut secrets, &mut config_maps);
    }
    for volume in spec.and_then(|s| s.volumes.as_deref()).unwrap_or_default() {
        volume_refs(volume, &mut secrets, &mut config_maps);
    }
    secrets.sort();
    secrets.dedup();
    config_maps.sort();
    config_maps.dedup();
    (secrets, config_maps)
}

fn container_refs(container: &Container, secrets: &mut Vec<String>, config_maps: &mut Vec<String>) {
    for env in container.env.as_deref().unwrap_or_default() {
        let Some(from) = &env.value_from else {
            continue;
        };
        if let Some(r) = &from.secret_key_ref {
            secrets.push(r.name.clone());
        }
        if let Some(r) = &from.config_map_key_ref {
            config_maps.push(r.name.clone());
        }
    }
    for from in container.env_from.as_deref().unwrap_or_default() {
        if let Some(r) = &from.secret_ref {
            secrets.push(r.name.clone());
        }
        if let Some(r) = &from.config_map_ref {
            config_maps.push(r.name.clone());
        }
    }
}

fn volume_refs(volume: &Volume, secrets: &mut Vec<String>, config_maps: &mut Vec<String>) {
    if let Some(name) = volume.secret.as_ref().and_then(|s| s.secret_name.clone()) {
        secrets.push(name);
    }
    if let Some(c) = &volume.config_map {
        config_maps.push(c.name.clone());
    }
    let sources = volume.projected.as_ref().and_then(|p| p.sources.as_deref());
    for source in sources.unwrap_or_default() {
        if let Some(s) = &source.secret {
            secrets.push(s.name.clone());
        }
        if let Some(c) = &source.config_map {
            config_maps.push(c.name.clone());
        }
    }
}

/// The value of a downward-API `fieldRef` (`metadata.name`, `metadata.labels['k']`, …) as the
/// kubelet gives it to an env variable or a file; a missing label or annotation is `""`.
///
/// # Errors
/// For a path the kubelet does not resolve.
pub fn field_value(pod: &Pod, path: &str) -> Result<String, String> {
    let meta = &pod.metadata;
    let spec = pod.spec.as_ref();
    let status = pod.status.as_ref();
    let text = |v: Option<&String>| v.cloned().unwrap_or_default();
    if let Some(key) = map_key(path, "metadata.labels") {
        return Ok(text(meta.labels.as_ref().and_then(|l| l.get(key))));
    }
    if let Some(key) = map_key(path, "metadata.annotations") {
        return Ok(text(meta.annotations.as_ref().and_then(|a| a.get(key))));
    }
    Ok(match path {
        "metadata.name" => text(meta.name.as_ref()),
        "metadata.namespace" => text(meta.namespace.as_ref()),
        "metadata.uid" => text(meta.uid.as_ref()),
        "spec.nodeName" => text(spec.and_then(|s| s.node_name.as_ref())),
        "spec.serviceAccountName" => text(spec.and_then(|s| s.service_account_name.as_ref())),
        "status.hostIP" => text(status.and_then(|s| s.host_ip.as_ref())),
        "status.podIP" => text(status.and_then(|s| s.pod_ip.as_ref())),
        other => return Err(format!("unsupported fieldRef path {other:?}")),
    })
}

/// `k` of `prefix['k']`.
fn map_key<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    path.strip_prefix(prefix)?
        .strip_prefix("['")?
        .strip_suffix("']")
}

/// A quantity (`128Mi`, `1G`, `1500`, `1.5Gi`, `500m`) as a whole number of units, rounded up;
/// `None` when it does not parse.
pub fn quantity(text: &str) -> Option<u64> {
    const SUFFIXES: [(&str, f64); 13] = [
        ("Ki", 1024.0),
        ("Mi", 1_048_576.0),
        ("Gi", 1_073_741_824.0),
        ("Ti", 1_099_511_627_776.0),
        ("Pi", 1_125_899_906_842_624.0),
        ("Ei", 1_152_921_504_606_846_976.0),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
        ("m", 1e-3),
    ];
    let text = text.trim();
    let (number, factor) = SUFFIXES
        .iter()
        .find_map(|(suffix, factor)| text.strip_suffix(suffix).map(|n| (n, *factor)))
        .unwrap_or((text, 1.0));
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "non-negative and finite, checked above; quantities fit a u64"
    )]
    Some((value * factor).ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "hs-cp-x-g1-abcde", "namespace": "ns", "uid": "u-1",
                         "labels": {"batch.kubernetes.io/job-name": "hs-cp-x-g1"},
                         "annotations": {"hyperfleet.io/generation": "1"}},
            "spec": {"serviceAccountName": "sa", "containers": []}
        }))
        .unwrap()
    }

    #[test]
    fn field_refs_read_the_pod() {
        let pod = pod();
        let value = |p: &str| field_value(&pod, p).unwrap();
        assert_eq!(value("metadata.name"), "hs-cp-x-g1-abcde");
        assert_eq!(value("metadata.namespace"), "ns");
        assert_eq!(value("metadata.uid"), "u-1");
        assert_eq!(
            value("metadata.labels['batch.kubernetes.io/job-name']"),
            "hs-cp-x-g1"
        );
        assert_eq!(
            value("metadata.annotations['hyperfleet.io/generation']"),
            "1"
        );
        assert_eq!(value("metadata.labels['absent']"), "");
        assert_eq!(value("spec.serviceAccountName"), "sa");
        assert!(field_value(&pod, "metadata.generation").is_err());
    }

    #[test]
    fn quantities_round_up_to_whole_units() {
        assert_eq!(quantity("128Mi"), Some(128 * 1024 * 1024));
        assert_eq!(quantity("1G"), Some(1_000_000_000));
        assert_eq!(quantity("1.5Ki"), Some(1536));
        assert_eq!(quantity("1500"), Some(1500));
        assert_eq!(quantity("500m"), Some(1));
        assert_eq!(quantity("lots"), None);
        assert_eq!(quantity("-1Mi"), None);
    }
}
