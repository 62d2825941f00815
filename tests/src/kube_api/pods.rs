//! Pod-specific behaviour: defaults a kubelet would report and container termination.

use serde_json::{Map, Value, json};

use super::strategic_merge::MergeKeys;
use super::time;

/// Lists of a Pod that a strategic merge patch merges by key. The container statuses are not
/// among them: `PodStatus.containerStatuses` (and the init and ephemeral ones) are atomic lists,
/// so a patch's list replaces the stored one whole (measured on v1.36: a PATCH of pods/status
/// with one container's status leaves only that one; the kubelet always sends them all).
pub const MERGE_KEYS: MergeKeys = MergeKeys(&[
    ("status.conditions", "type"),
    ("metadata.ownerReferences", "uid"),
    ("spec.containers", "name"),
    ("spec.initContainers", "name"),
    ("spec.volumes", "name"),
]);

/// A running pod: `phase: Running` and a running, ready status for every container in the spec
/// that has none; a Pod seeded `Pending` (not yet run by a kubelet) is left so.
pub fn default_status(pod: &mut Value) {
    let containers: Vec<(String, String)> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|c| (str_of(c, "name"), str_of(c, "image")))
                .collect()
        })
        .unwrap_or_default();
    let Some(object) = pod.as_object_mut() else {
        return;
    };
    object.entry("apiVersion").or_insert(json!("v1"));
    object.entry("kind").or_insert(json!("Pod"));
    let Value::Object(status) = object.entry("status").or_insert_with(|| json!({})) else {
        return;
    };
    let phase = status.entry("phase").or_insert(json!("Running"));
    if *phase == json!("Pending") {
        // Not yet run by a kubelet: no container has a status.
        return;
    }
    let Value::Array(statuses) = status
        .entry("containerStatuses")
        .or_insert_with(|| json!([]))
    else {
        return;
    };
    for (name, image) in containers {
        if !statuses.iter().any(|s| s["name"] == name.as_str()) {
            statuses.push(json!({
                "name": name, "image": image, "imageID": "", "ready": true, "restartCount": 0, "started": true,
                "state": {"running": {"startedAt": time::now()}}
            }));
        }
    }
}

/// The container statuses as the typed `ContainerStatus` round-trip stores them: the fields
/// that are never omitted (`name`, `image`, `imageID` `""`; `ready` false; `restartCount` 0;
/// `state` and `lastState` `{}`) are there even when the writer left them out (measured on v1.36:
/// a status PATCH of `{"name": "adapter"}` reads back with all of them).
pub fn normalise_container_statuses(pod: &mut Value) {
    let Some(status) = pod.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    for list in [
        "containerStatuses",
        "initContainerStatuses",
        "ephemeralContainerStatuses",
    ] {
        let Some(Value::Array(statuses)) = status.get_mut(list) else {
            continue;
        };
        for entry in statuses.iter_mut().filter_map(Value::as_object_mut) {
            for (field, empty) in [
                ("name", json!("")),
                ("image", json!("")),
                ("imageID", json!("")),
                ("ready", json!(false)),
                ("restartCount", json!(0)),
                ("state", json!({})),
                ("lastState", json!({})),
            ] {
                entry.entry(field).or_insert(empty);
            }
        }
    }
}

/// The defaults `SetDefaults_PodSpec` and its parts give a pod spec (a Job's template; measured
/// on v1.36 with `kubectl create --dry-run=server`): dnsPolicy ClusterFirst, restartPolicy Always,
/// terminationGracePeriodSeconds 30, securityContext {}, schedulerName default-scheduler,
/// serviceAccount = serviceAccountName; per container (init ones too) terminationMessagePath,
/// terminationMessagePolicy File, imagePullPolicy (Always for `:latest` or no tag, else
/// IfNotPresent), resources {}, port protocol TCP, env fieldRef apiVersion v1 and
/// resourceFieldRef divisor "0"; volume defaultMode 420 (secret, configMap, projected,
/// downwardAPI), projected token expirationSeconds 3600. The admission defaults of a Pod itself
/// (tolerations, priority, the token volume) are not a template's.
pub fn default_pod_spec(spec: &mut Map<String, Value>) {
    spec.entry("dnsPolicy").or_insert(json!("ClusterFirst"));
    spec.entry("restartPolicy").or_insert(json!("Always"));
    spec.entry("terminationGracePeriodSeconds")
        .or_insert(json!(30));
    spec.entry("securityContext").or_insert(json!({}));
    spec.entry("schedulerName")
        .or_insert(json!("default-scheduler"));
    if let Some(account) = spec.get("serviceAccountName").cloned() {
        spec.entry("serviceAccount").or_insert(account);
    }
    for list in ["containers", "initContainers"] {
        if let Some(Value::Array(containers)) = spec.get_mut(list) {
            containers
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .for_each(default_container);
        }
    }
    if let Some(Value::Array(volumes)) = spec.get_mut("volumes") {
        for volume in volumes.iter_mut().filter_map(Value::as_object_mut) {
            for source in ["secret", "configMap", "projected", "downwardAPI"] {
                if let Some(Value::Object(source)) = volume.get_mut(source) {
                    source.entry("defaultMode").or_insert(json!(420));
                    default_field_refs(source.get_mut("items"));
                    default_projections(source.get_mut("sources"));
                }
            }
        }
    }
}

fn default_container(container: &mut Map<String, Value>) {
    container
        .entry("terminationMessagePath")
        .or_insert(json!("/dev/termination-log"));
    container
        .entry("terminationMessagePolicy")
        .or_insert(json!("File"));
    let image = container.get("image").and_then(Value::as_str).unwrap_or("");
    let last = image.rsplit('/').next().unwrap_or(image);
    let policy =
        if image.contains('@') || last.split_once(':').is_some_and(|(_, tag)| tag != "latest") {
            "IfNotPresent"
        } else {
            "Always"
        };
    container.entry("imagePullPolicy").or_insert(json!(policy));
    container.entry("resources").or_insert(json!({}));
    if let Some(Value::Array(ports)) = container.get_mut("ports") {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            port.entry("protocol").or_insert(json!("TCP"));
        }
    }
    if let Some(Value::Array(env)) = container.get_mut("env") {
        for var in env.iter_mut() {
            let Some(from) = var.get_mut("valueFrom").and_then(Value::as_object_mut) else {
                continue;
            };
            if let Some(Value::Object(field)) = from.get_mut("fieldRef") {
                field.entry("apiVersion").or_insert(json!("v1"));
            }
            if let Some(Value::Object(resource)) = from.get_mut("resourceFieldRef") {
                resource.entry("divisor").or_insert(json!("0"));
            }
        }
    }
}

/// `items[].fieldRef.apiVersion` v1 (a downwardAPI volume or projection).
fn default_field_refs(items: Option<&mut Value>) {
    let Some(Value::Array(items)) = items else {
        return;
    };
    for item in items.iter_mut() {
        if let Some(Value::Object(field)) = item.get_mut("fieldRef") {
            field.entry("apiVersion").or_insert(json!("v1"));
        }
    }
}

/// A projected volume's sources: token expirationSeconds 3600, downwardAPI field refs.
fn default_projections(sources: Option<&mut Value>) {
    let Some(Value::Array(sources)) = sources else {
        return;
    };
    for source in sources.iter_mut() {
        if let Some(Value::Object(token)) = source.get_mut("serviceAccountToken") {
            token.entry("expirationSeconds").or_insert(json!(3600));
        }
        if let Some(Value::Object(downward)) = source.get_mut("downwardAPI") {
            default_field_refs(downward.get_mut("items"));
        }
    }
}

fn str_of(value: &Value, field: &str) -> String {
    value
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

/// Marks one container terminated. When every container has terminated the phase becomes
/// `Succeeded` (all exit codes 0) or `Failed`, as the kubelet does for `restartPolicy: Never`.
pub fn terminate_container(
    pod: &mut Value,
    container: &str,
    exit_code: i32,
    reason: &str,
    message: Option<&str>,
) {
    let Some(status) = pod
        .as_object_mut()
        .map(|o| o.entry("status").or_insert_with(|| json!({})))
    else {
        return;
    };
    let Some(status) = status.as_object_mut() else {
        return;
    };
    let Value::Array(statuses) = status
        .entry("containerStatuses")
        .or_insert_with(|| json!([]))
    else {
        return;
    };
    let index = match statuses.iter().position(|s| s["name"] == container) {
        Some(index) => index,
        None => {
            statuses.push(json!({"name": container, "imageID": "", "restartCount": 0}));
            statuses.len() - 1
        }
    };
    let entry = &mut statuses[index];
    let started_at = entry
        .pointer("/state/running/startedAt")
        .cloned()
        .unwrap_or_else(|| json!(time::now()));
    let mut terminated = json!({"exitCode": exit_code, "reason": reason, "startedAt": started_at, "finishedAt": time::now()});
    if let Some(message) = message {
        terminated["message"] = json!(message);
    }
    entry["state"] = json!({"terminated": terminated});
    entry["ready"] = json!(false);
    entry["started"] = json!(false);
    let all_done = statuses
        .iter()
        .all(|s| s.pointer("/state/terminated").is_some());
    if all_done {
        let all_ok = statuses
            .iter()
            .all(|s| s.pointer("/state/terminated/exitCode") == Some(&json!(0)));
        status.insert(
            "phase".into(),
            json!(if all_ok { "Succeeded" } else { "Failed" }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Value {
        let mut pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "adapter", "image": "a"}, {"name": "reporter", "image": "r"}]}});
        default_status(&mut pod);
        pod
    }

    #[test]
    fn a_pod_template_gets_the_defaults_a_v136_server_gives() {
        let mut spec = json!({"restartPolicy": "Never", "serviceAccountName": "x",
            "initContainers": [{"name": "i", "image": "a:latest"}],
            "containers": [
                {"name": "c", "image": "busybox:1.2", "ports": [{"containerPort": 80}],
                 "env": [{"name": "B", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                         {"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]},
                {"name": "d", "image": "reg:5000/x@sha256:aa"}, {"name": "e", "image": "reg:5000/x"}],
            "volumes": [{"name": "s", "secret": {"secretName": "s"}}, {"name": "e", "emptyDir": {}},
                {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}]});
        default_pod_spec(spec.as_object_mut().unwrap());
        assert_eq!(spec["restartPolicy"], "Never");
        assert_eq!(
            (&spec["dnsPolicy"], &spec["schedulerName"]),
            (&json!("ClusterFirst"), &json!("default-scheduler"))
        );
        assert_eq!(
            (
                &spec["serviceAccount"],
                &spec["terminationGracePeriodSeconds"]
            ),
            (&json!("x"), &json!(30))
        );
        let pulls: Vec<&Value> = spec["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| &c["imagePullPolicy"])
            .collect();
        assert_eq!(
            pulls,
            [
                &json!("IfNotPresent"),
                &json!("IfNotPresent"),
                &json!("Always")
            ]
        );
        assert_eq!(spec["initContainers"][0]["imagePullPolicy"], "Always");
        assert_eq!(spec["containers"][0]["ports"][0]["protocol"], "TCP");
        assert_eq!(
            spec["containers"][0]["env"][0]["valueFrom"]["resourceFieldRef"]["divisor"],
            "0"
        );
        assert_eq!(
            spec["containers"][0]["env"][1]["valueFrom"]["fieldRef"]["apiVersion"],
            "v1"
        );
        assert_eq!(
            spec["containers"][1]["terminationMessagePath"],
            "/dev/termination-log"
        );
        assert_eq!(spec["volumes"][0]["secret"]["defaultMode"], 420);
        assert_eq!(spec["volumes"][1]["emptyDir"], json!({}));
        assert_eq!(
            spec["volumes"][2]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
            3600
        );
    }

    #[test]
    fn container_statuses_get_the_fields_a_typed_round_trip_never_omits() {
        let mut pod = json!({"status": {"containerStatuses": [{"name": "adapter"}],
            "initContainerStatuses": [{"name": "i", "ready": true, "lastState": {"terminated": {"exitCode": 1}}}]}});
        normalise_container_statuses(&mut pod);
        assert_eq!(
            pod["status"]["containerStatuses"][0],
            json!({"name": "adapter", "image": "", "imageID": "", "ready": false, "restartCount": 0, "state": {}, "lastState": {}})
        );
        assert_eq!(pod["status"]["initContainerStatuses"][0]["ready"], true);
        assert_eq!(
            pod["status"]["initContainerStatuses"][0]["lastState"]["terminated"]["exitCode"],
            1
        );
    }

    #[test]
    fn defaults_report_every_container_running() {
        let pod = pod();
        assert_eq!(pod["status"]["phase"], "Running");
        assert_eq!(pod["status"]["containerStatuses"][1]["name"], "reporter");
        assert!(pod["status"]["containerStatuses"][0]["state"]["running"].is_object());
    }

    #[test]
    fn terminating_one_container_keeps_the_pod_running() {
        let mut pod = pod();
        terminate_container(&mut pod, "adapter", 137, "OOMKilled", None);
        let state = &pod["status"]["containerStatuses"][0]["state"]["terminated"];
        assert_eq!(
            (state["exitCode"].as_i64(), state["reason"].as_str()),
            (Some(137), Some("OOMKilled"))
        );
        assert_eq!(pod["status"]["phase"], "Running");
        terminate_container(&mut pod, "reporter", 0, "Completed", Some("done"));
        assert_eq!(pod["status"]["phase"], "Failed");
    }
}
