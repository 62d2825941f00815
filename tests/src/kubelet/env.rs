//! A container's environment as the kubelet builds it (`makeEnvironmentVariables`): the API
//! server's service variables, then `envFrom`, then `env` in order (a later entry wins), with
//! `$(VAR)` references expanded in `value`s and `valueFrom` resolved from the downward API,
//! Secrets, ConfigMaps and the container's resources.

use k8s_openapi::api::core::v1::{Container, EnvVar, Pod};

use super::source::{self, Keys, Objects};

/// The variables a kubelet gives every container for the `kubernetes` Service of the `default`
/// namespace (even with `enableServiceLinks: false`), pointed at `host:port` of the API server:
/// with no kube-proxy here the Service's ClusterIP routes nowhere, so the real address stands in
/// (its serving certificate has 127.0.0.1 among its SANs).
pub fn service_env(host: &str, port: u16) -> Vec<(String, String)> {
    let url = format!("tcp://{host}:{port}");
    let prefix = format!("KUBERNETES_PORT_{port}_TCP");
    [
        ("KUBERNETES_SERVICE_HOST".to_owned(), host.to_owned()),
        ("KUBERNETES_SERVICE_PORT".to_owned(), port.to_string()),
        ("KUBERNETES_SERVICE_PORT_HTTPS".to_owned(), port.to_string()),
        ("KUBERNETES_PORT".to_owned(), url.clone()),
        (prefix.clone(), url),
        (format!("{prefix}_PROTO"), "tcp".to_owned()),
        (format!("{prefix}_PORT"), port.to_string()),
        (format!("{prefix}_ADDR"), host.to_owned()),
    ]
    .into()
}

/// The container's environment: `base` (service variables), `envFrom`, then `env`.
///
/// # Errors
/// What the kubelet reports as `CreateContainerConfigError`: a Secret or ConfigMap (or key)
/// that is missing and not optional, or a reference it cannot resolve.
pub fn container_env(
    pod: &Pod,
    container: &Container,
    base: &[(String, String)],
    objects: &Objects,
) -> Result<Vec<(String, String)>, String> {
    let mut env: Vec<(String, String)> = base.to_vec();
    for from in container.env_from.as_deref().unwrap_or_default() {
        let prefix = from.prefix.as_deref().unwrap_or_default();
        let (keys, optional) = if let Some(r) = &from.secret_ref {
            (lookup(&objects.secrets, &r.name), r.optional)
        } else if let Some(r) = &from.config_map_ref {
            (lookup(&objects.config_maps, &r.name), r.optional)
        } else {
            continue;
        };
        match keys {
            Ok(keys) => {
                for (key, value) in keys {
                    set(&mut env, format!("{prefix}{key}"), lossy(value));
                }
            }
            Err(_) if optional == Some(true) => {}
            Err(message) => return Err(message),
        }
    }
    for var in container.env.as_deref().unwrap_or_default() {
        if let Some(value) = var_value(pod, container, var, &env, objects)? {
            set(&mut env, var.name.clone(), value);
        }
    }
    Ok(env)
}

/// One `env` entry's value; `None` for an optional reference that is absent.
fn var_value(
    pod: &Pod,
    container: &Container,
    var: &EnvVar,
    defined: &[(String, String)],
    objects: &Objects,
) -> Result<Option<String>, String> {
    let Some(from) = &var.value_from else {
        return Ok(Some(expand(
            var.value.as_deref().unwrap_or_default(),
            defined,
        )));
    };
    let ns = pod.metadata.namespace.as_deref().unwrap_or_default();
    if let Some(field) = &from.field_ref {
        return source::field_value(pod, &field.field_path).map(Some);
    }
    if let Some(resource) = &from.resource_field_ref {
        return resource_value(
            container,
            &resource.resource,
            resource.divisor.as_ref().map(|q| q.0.as_str()),
        )
        .map(Some);
    }
    let (keys, key, name, optional, kind) = if let Some(r) = &from.secret_key_ref {
        (
            lookup(&objects.secrets, &r.name),
            &r.key,
            &r.name,
            r.optional,
            "Secret",
        )
    } else if let Some(r) = &from.config_map_key_ref {
        (
            lookup(&objects.config_maps, &r.name),
            &r.key,
            &r.name,
            r.optional,
            "ConfigMap",
        )
    } else {
        return Err(format!("env {}: unsupported valueFrom", var.name));
    };
    let optional = optional == Some(true);
    match keys {
        Ok(keys) => match keys.get(key) {
            Some(value) => Ok(Some(lossy(value))),
            None if optional => Ok(None),
            None => Err(format!("couldn't find key {key} in {kind} {ns}/{name}")),
        },
        Err(_) if optional => Ok(None),
        Err(message) => Err(message),
    }
}

/// `limits.memory` / `requests.memory` of the container, divided by the divisor (default 1)
/// and rounded up. CPU and other resources are not resolved by this kubelet.
fn resource_value(
    container: &Container,
    resource: &str,
    divisor: Option<&str>,
) -> Result<String, String> {
    let resources = container.resources.as_ref();
    let quantity = match resource {
        "limits.memory" => resources
            .and_then(|r| r.limits.as_ref())
            .and_then(|l| l.get("memory")),
        "requests.memory" => resources
            .and_then(|r| r.requests.as_ref())
            .and_then(|l| l.get("memory")),
        other => {
            return Err(format!(
                "resourceFieldRef {other:?} is not resolved by the testbed kubelet"
            ));
        }
    };
    let Some(bytes) = quantity.and_then(|q| source::quantity(&q.0)) else {
        return Err(format!(
            "resourceFieldRef {resource}: the container sets none (the node's allocatable is unknown here)"
        ));
    };
    let divisor = divisor
        .and_then(source::quantity)
        .filter(|d| *d > 0)
        .unwrap_or(1);
    Ok(bytes.div_ceil(divisor).to_string())
}

/// The keys of a fetched Secret or ConfigMap; an object not fetched reads as not found.
fn lookup<'a>(
    objects: &'a std::collections::BTreeMap<String, Keys>,
    name: &str,
) -> Result<&'a std::collections::BTreeMap<String, Vec<u8>>, String> {
    match objects.get(name) {
        Some(Ok(keys)) => Ok(keys),
        Some(Err(message)) => Err(message.clone()),
        None => Err(format!("{name:?} not found")),
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Sets `name` (replacing an earlier value in place).
fn set(env: &mut Vec<(String, String)>, name: String, value: String) {
    match env.iter_mut().find(|(n, _)| *n == name) {
        Some(entry) => entry.1 = value,
        None => env.push((name, value)),
    }
}

/// Kubernetes' `$(VAR)` expansion: a reference to a variable defined before is replaced, an
/// unknown one is left as written, `$$` is a literal `$`.
pub fn expand(input: &str, defined: &[(String, String)]) -> String {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some((name, tail)) = after.strip_prefix('(').and_then(|s| s.split_once(')')) {
            match defined.iter().find(|(n, _)| n == name) {
                Some((_, value)) => out.push_str(value),
                None => {
                    out.push_str("$(");
                    out.push_str(name);
                    out.push(')');
                }
            }
            rest = tail;
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use serde_json::json;

    fn pod(env: serde_json::Value) -> (Pod, Container) {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p-1", "namespace": "ns", "labels": {"batch.kubernetes.io/job-name": "j"}},
            "spec": {"containers": [{"name": "c", "env": env,
                     "resources": {"limits": {"memory": "128Mi"}}}]}
        }))
        .unwrap();
        let container = pod.spec.as_ref().unwrap().containers[0].clone();
        (pod, container)
    }

    fn objects() -> Objects {
        let mut objects = Objects::default();
        objects.secrets.insert(
            "creds".into(),
            Ok(BTreeMap::from([("token".to_owned(), b"s3cret".to_vec())])),
        );
        objects
            .secrets
            .insert("gone".into(), Err("secrets \"gone\" not found".into()));
        objects
    }

    #[test]
    fn values_field_refs_secrets_and_resources_resolve_in_order() {
        let (pod, c) = pod(json!([
            {"name": "JOB_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-name']"}}},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
            {"name": "MEM_MI", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}},
            {"name": "URL", "value": "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)/$(POD_NAME)/$(NOPE)/$$(X)"},
            {"name": "OPTIONAL", "valueFrom": {"secretKeyRef": {"name": "gone", "key": "k", "optional": true}}},
        ]));
        let env = container_env(&pod, &c, &service_env("127.0.0.1", 6443), &objects()).unwrap();
        let get = |n: &str| env.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        assert_eq!(get("JOB_NAME"), Some("j"));
        assert_eq!(get("TOKEN"), Some("s3cret"));
        assert_eq!(get("MEM_MI"), Some("128"));
        assert_eq!(get("URL"), Some("https://127.0.0.1:6443/p-1/$(NOPE)/$(X)"));
        assert_eq!(get("OPTIONAL"), None);
        assert_eq!(get("KUBERNETES_PORT_6443_TCP_ADDR"), Some("127.0.0.1"));
    }

    #[test]
    fn a_missing_secret_or_key_is_a_config_error_with_the_servers_words() {
        let (p, c) = pod(
            json!([{"name": "T", "valueFrom": {"secretKeyRef": {"name": "gone", "key": "k"}}}]),
        );
        assert_eq!(
            container_env(&p, &c, &[], &objects()).unwrap_err(),
            "secrets \"gone\" not found"
        );
        let (pod, c) = pod(
            json!([{"name": "T", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "ca.crt"}}}]),
        );
        assert_eq!(
            container_env(&pod, &c, &[], &objects()).unwrap_err(),
            "couldn't find key ca.crt in Secret ns/creds"
        );
    }

    #[test]
    fn a_later_entry_replaces_an_earlier_one() {
        let (pod, c) = pod(json!([{"name": "A", "value": "1"}, {"name": "A", "value": "$(A)2"}]));
        let env = container_env(&pod, &c, &[], &Objects::default()).unwrap();
        assert_eq!(env, vec![("A".to_owned(), "12".to_owned())]);
    }
}
