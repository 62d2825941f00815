//! ServiceAccounts as a kubelet meets them: the admission plugin's token volume on a new Pod,
//! the `kube-root-ca.crt` ConfigMap it projects (published in each namespace by the
//! root-ca-cert-publisher), and the TokenRequest API (`POST …/serviceaccounts/{name}/token`)
//! that mints a token the server then accepts as `system:serviceaccount:<ns>:<name>`.
//!
//! Shapes measured on the kit's v1.36 API server: the volume `kube-api-access-<5 characters>`,
//! projected (`defaultMode` 420) from a token (`expirationSeconds` 3607, path `token`),
//! `kube-root-ca.crt`'s `ca.crt` and the namespace (downward API), mounted read-only at
//! `/var/run/secrets/kubernetes.io/serviceaccount` in every container. (OpenShift's kube adds an
//! `openshift-service-ca.crt` source; upstream's is what this fake reproduces.)

use serde_json::{Value, json};

use super::objects::Address;
use super::status::ApiError;
use super::store::{Collection, EventType, Store};
use super::time;

/// Where the admission plugin mounts the token volume.
pub const MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The ConfigMap with the cluster's CA in every namespace.
pub const ROOT_CA: &str = "kube-root-ca.crt";
/// The characters of generated name suffixes (`utilrand.String`).
const SUFFIX_CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// The ServiceAccount admission plugin, for a Pod that names its ServiceAccount
/// (`spec.serviceAccountName`; a Pod without one is stored as seeded: a simplification) and does
/// not opt out (`automountServiceAccountToken: false`) nor mount that path itself.
pub fn admit(store: &mut Store, namespace: &str, pod: &mut Value) {
    let Some(spec) = pod.get_mut("spec") else {
        return;
    };
    let Some(account) = spec["serviceAccountName"].as_str().map(str::to_owned) else {
        return;
    };
    let mounted = spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["volumeMounts"].as_array().cloned().unwrap_or_default())
        .any(|m| m["mountPath"] == MOUNT_PATH);
    if spec["automountServiceAccountToken"] == json!(false) || mounted {
        return;
    }
    spec["serviceAccount"] = json!(account);
    let suffix: String = (0..5)
        .map(|_| char::from(SUFFIX_CHARS[fastrand::usize(..SUFFIX_CHARS.len())]))
        .collect();
    let name = format!("kube-api-access-{suffix}");
    push(spec, "volumes", volume(&name));
    for container in spec["containers"].as_array_mut().into_iter().flatten() {
        let mount = json!({"name": name, "mountPath": MOUNT_PATH, "readOnly": true});
        push(container, "volumeMounts", mount);
    }
    publish_root_ca(store, namespace);
}

fn volume(name: &str) -> Value {
    json!({"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": ROOT_CA, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}}
    ]}})
}

fn push(object: &mut Value, list: &str, item: Value) {
    match object.get_mut(list).and_then(Value::as_array_mut) {
        Some(items) => items.push(item),
        None => object[list] = json!([item]),
    }
}

/// Stores `kube-root-ca.crt` in `namespace` unless it is there.
fn publish_root_ca(store: &mut Store, namespace: &str) {
    let collection = Collection::new("", "configmaps");
    let key = (namespace.to_owned(), ROOT_CA.to_owned());
    if store.get(&collection, &key).is_some() {
        return;
    }
    let mut config_map = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": ROOT_CA},
        "data": {"ca.crt": store.root_ca.clone()},
    });
    // A ConfigMap tracks no generation (as on the real server).
    store.stamp_new(&mut config_map, namespace, false);
    store.commit(&collection, key, EventType::Added, config_map);
}

/// `POST …/serviceaccounts/{name}/token`: 201 with a TokenRequest whose `status.token` the server
/// accepts from now on as the ServiceAccount; 404 when the ServiceAccount does not exist. The
/// bound object is not checked.
pub fn request_token(store: &mut Store, address: &Address, body: &[u8]) -> Result<Value, ApiError> {
    if store.get(&address.collection, &address.key).is_none() {
        return Err(ApiError::not_found(&address.target));
    }
    let mut request: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the body of the request was in an unknown format: {e}"
        ))
    })?;
    let (namespace, account) = address.key.clone();
    let seconds = request["spec"]["expirationSeconds"]
        .as_i64()
        .unwrap_or(3600);
    let token = format!(
        "testbed-sa-{:016x}{:016x}",
        fastrand::u64(..),
        fastrand::u64(..)
    );
    let audiences = request["spec"]["audiences"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    store.audiences.insert(token.clone(), audiences);
    store.tokens.insert(
        token.clone(),
        format!("system:serviceaccount:{namespace}:{account}"),
    );
    let expires = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::from_secs(seconds))
        .unwrap_or_else(|_| jiff::Timestamp::now());
    request["apiVersion"] = json!("authentication.k8s.io/v1");
    request["kind"] = json!("TokenRequest");
    request["metadata"] =
        json!({"name": account, "namespace": namespace, "creationTimestamp": time::now()});
    request["spec"]["expirationSeconds"] = json!(seconds);
    request["status"] = json!({"token": token, "expirationTimestamp": time::format_time(expires)});
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_naming_its_service_account_gets_the_token_volume_in_every_container() {
        let mut store = Store::default();
        store.root_ca = "PEM".into();
        let mut pod = json!({"spec": {"serviceAccountName": "sa", "containers": [{"name": "a"}, {"name": "b", "volumeMounts": []}]}});
        admit(&mut store, "ns", &mut pod);
        let volume = &pod["spec"]["volumes"][0];
        let name = volume["name"].as_str().unwrap();
        assert!(
            name.starts_with("kube-api-access-") && name.len() == 21,
            "{name}"
        );
        for container in pod["spec"]["containers"].as_array().unwrap() {
            assert_eq!(container["volumeMounts"][0]["mountPath"], MOUNT_PATH);
        }
        let ca = store.get(
            &Collection::new("", "configmaps"),
            &("ns".into(), ROOT_CA.into()),
        );
        assert_eq!(ca.unwrap()["data"]["ca.crt"], "PEM");

        let mut opted_out = json!({"spec": {"serviceAccountName": "sa", "automountServiceAccountToken": false, "containers": [{"name": "a"}]}});
        admit(&mut store, "ns", &mut opted_out);
        assert!(opted_out["spec"].get("volumes").is_none());
    }
}
