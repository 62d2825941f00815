//! A pulse Job and its Pod, seeded into the fake API server the way the framework creates them
//! (see `manifests/job.yaml`): Job [`controlplane_job_name`] (or [`nodepool_job_name`],
//! [`nodes_job_name`]), a Pod labelled with its Job's name, containers `adapter` and
//! `status-reporter`.
//!
//! Job names: the API server copies a Job's name into pod-template label values, which are at
//! most 63 bytes (`hyperfleet-framework.md` §8). With a 36-character id (UUIDv7) and an int32
//! generation (≤ 10 digits) the patterns below are at most 54, 54 and 57 bytes; the id has a
//! fixed length and each kind its own prefix, so a name is unique per (id, generation, kind).
//! The NodePool's pattern holds the NodePool's id only: with the cluster's too it could not fit
//! (two ids are 73 bytes).

use serde_json::{Value, json};

use crate::kube_api::ApiServer;

/// The highest generation a HyperFleet object can reach (an int32).
pub const MAX_GENERATION: i32 = i32::MAX;

/// The pulse Job of the `controlplane` check: `hs-cp-<clusterId>-g<generation>`.
pub fn controlplane_job_name(cluster_id: &str, generation: i32) -> String {
    format!("hs-cp-{cluster_id}-g{generation}")
}

/// The pulse Job of a NodePool (`hypershift-adapter nodepool`, `manifests/nodepool-job.yaml`):
/// `hs-np-<nodepoolId>-g<generation>`, the generation being the NodePool's.
pub fn nodepool_job_name(nodepool_id: &str, generation: i32) -> String {
    format!("hs-np-{nodepool_id}-g{generation}")
}

/// The pulse Job of the `nodes` check: `hs-nodes-<clusterId>-g<generation>`.
pub fn nodes_job_name(cluster_id: &str, generation: i32) -> String {
    format!("hs-nodes-{cluster_id}-g{generation}")
}

/// A Job template (`manifests/job.yaml`, `manifests/nodepool-job.yaml`) with its Go-template
/// placeholders (`{{ .name }}`) replaced by `values`, parsed.
///
/// # Errors
/// When a placeholder is left or the result is not YAML.
pub fn render_template(text: &str, values: &[(&str, String)]) -> anyhow::Result<Value> {
    let mut rendered = text.to_owned();
    for (placeholder, value) in values {
        rendered = rendered.replace(&format!("{{{{ .{placeholder} }}}}"), value);
    }
    if let Some(at) = rendered.find("{{") {
        let line = rendered[at..].lines().next().unwrap_or_default();
        anyhow::bail!("a placeholder is left: {line}");
    }
    Ok(serde_saphyr::from_str(&rendered)?)
}

/// Names of a seeded Job and its Pod.
#[derive(Debug, Clone)]
pub struct PulseJob {
    pub namespace: String,
    pub job: String,
    pub pod: String,
}

impl PulseJob {
    /// Seeds a running Job (optionally with `activeDeadlineSeconds`) and its running Pod.
    pub fn seed(
        server: &ApiServer,
        namespace: &str,
        job: &str,
        active_deadline_seconds: Option<i64>,
    ) -> PulseJob {
        PulseJob::seed_with_metadata(
            server,
            namespace,
            job,
            active_deadline_seconds,
            json!({"hyperfleet.io/adapter": "controlplane"}),
            None,
        )
    }

    /// [`PulseJob::seed`] with the Job's `metadata.labels` and (optionally) `metadata.annotations`
    /// given, e.g. those of `manifests/job.yaml`.
    pub fn seed_with_metadata(
        server: &ApiServer,
        namespace: &str,
        job: &str,
        active_deadline_seconds: Option<i64>,
        labels: Value,
        annotations: Option<Value>,
    ) -> PulseJob {
        let pod = format!("{job}-x7k2p");
        let mut spec = json!({
            "backoffLimit": 0,
            "template": {"spec": {"restartPolicy": "Never", "containers": []}}
        });
        if let Some(seconds) = active_deadline_seconds {
            spec["activeDeadlineSeconds"] = json!(seconds);
        }
        // The Pod carries the template's labels (in manifests/job.yaml the Job's own) and the
        // two the API server adds, as the Job controller creates it.
        let mut pod_labels = labels.clone();
        if let Some(map) = pod_labels.as_object_mut() {
            map.insert("batch.kubernetes.io/job-name".to_owned(), json!(job));
            map.insert("job-name".to_owned(), json!(job));
        } else {
            pod_labels = json!({"batch.kubernetes.io/job-name": job, "job-name": job});
        }
        let mut metadata = json!({"name": job, "namespace": namespace, "labels": labels});
        if let Some(annotations) = annotations {
            metadata["annotations"] = annotations;
        }
        server.create_job(
            namespace,
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec}),
        );
        server.create_pod(
            namespace,
            json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": pod, "namespace": namespace,
                             "labels": pod_labels},
                "spec": {"restartPolicy": "Never", "containers": [
                    {"name": "adapter", "image": "hypershift-adapter"},
                    {"name": "status-reporter", "image": "status-reporter"}
                ]},
            }),
        );
        PulseJob {
            namespace: namespace.to_owned(),
            job: job.to_owned(),
            pod,
        }
    }

    /// Seeds `job` (a rendered Job template such as `manifests/job.yaml`) and the Pod its Job
    /// controller would create from it: named `<job>-x7k2p`, the template's labels and
    /// annotations with the job-name and controller-uid labels the API server added, owned by
    /// the Job, the template's spec (the fake's ServiceAccount admission adds the token volume).
    /// A Job or Pod of the same name is replaced.
    pub fn seed_job(server: &ApiServer, job: Value) -> PulseJob {
        let namespace = job["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default")
            .to_owned();
        let stored = server.create_job(&namespace, job);
        let name = stored["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let pod = format!("{name}-x7k2p");
        let template = &stored["spec"]["template"];
        server.delete_object("/api/v1", "pods", Some(&namespace), &pod);
        server.create_pod(
            &namespace,
            json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {
                    "name": pod, "namespace": namespace,
                    "labels": template["metadata"]["labels"],
                    "annotations": template["metadata"]["annotations"],
                    "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": name,
                        "uid": stored["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}],
                },
                "spec": template["spec"],
                // Not yet run by a kubelet (the fake would otherwise default it to running).
                "status": {"phase": "Pending"},
            }),
        );
        PulseJob {
            namespace,
            job: name,
            pod,
        }
    }

    /// The Job's `status.conditions` as stored.
    pub fn conditions(&self, server: &ApiServer) -> Vec<Value> {
        server
            .job(&self.namespace, &self.job)
            .and_then(|j| j["status"]["conditions"].as_array().cloned())
            .unwrap_or_default()
    }

    /// One annotation of the Job.
    pub fn annotation(&self, server: &ApiServer, key: &str) -> Option<String> {
        server.job(&self.namespace, &self.job).and_then(|j| {
            j["metadata"]["annotations"][key]
                .as_str()
                .map(str::to_owned)
        })
    }

    /// The environment of the status-reporter container in `manifests/job.yaml`, pointed at
    /// this Job, the fake server's kubeconfig and a results file.
    pub fn reporter_env(
        &self,
        kubeconfig: &std::path::Path,
        results: &std::path::Path,
    ) -> Vec<(String, String)> {
        [
            ("KUBECONFIG", kubeconfig.display().to_string()),
            ("JOB_NAMESPACE", self.namespace.clone()),
            ("POD_NAME", self.pod.clone()),
            ("RESULTS_PATH", results.display().to_string()),
            ("ADAPTER_CONTAINER_NAME", "adapter".to_owned()),
            ("CONDITION_TYPE", "Available,Applied,Health".to_owned()),
            ("LOG_FORMAT", "json".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::ids;

    /// A pulse Job name builder: (cluster or NodePool id, generation) → name.
    type NameOf = fn(&str, i32) -> String;

    /// Every kind's name builder, with the prefix that tells the kinds apart.
    const KINDS: [(&str, NameOf); 3] = [
        ("hs-cp-", controlplane_job_name),
        ("hs-np-", nodepool_job_name),
        ("hs-nodes-", nodes_job_name),
    ];

    /// Reads a name back into (kind prefix, cluster id, generation): possible for every name the
    /// builders make, which is what makes the pattern unique.
    fn parse(name: &str) -> Option<(&'static str, &str, i32)> {
        let (prefix, rest) = KINDS
            .iter()
            .find_map(|(prefix, _)| name.strip_prefix(prefix).map(|rest| (*prefix, rest)))?;
        let (id, generation) = rest.split_at_checked(ids::CLUSTER_ID.len())?;
        let generation = generation.strip_prefix("-g")?.parse().ok()?;
        Some((prefix, id, generation))
    }

    /// Ids and generations that stress the pattern: a generation whose digits could run into
    /// another's (1, 11, 111), and the extremes.
    fn samples() -> (Vec<String>, Vec<i32>) {
        let ids = vec![
            ids::CLUSTER_ID.to_owned(),
            ids::NODEPOOL_ID.to_owned(),
            ids::cluster_id(1),
            ids::cluster_id(11),
            "ffffffff-ffff-7fff-bfff-ffffffffffff".to_owned(),
        ];
        let generations = vec![1, 2, 9, 10, 11, 111, 1_000_000, MAX_GENERATION];
        (ids, generations)
    }

    #[test]
    fn the_longest_names_fit_a_label_value() {
        let id = ids::CLUSTER_ID;
        assert_eq!(id.len(), 36);
        assert_eq!(controlplane_job_name(id, MAX_GENERATION).len(), 54);
        assert_eq!(
            nodepool_job_name(ids::NODEPOOL_ID, MAX_GENERATION).len(),
            54
        );
        assert_eq!(nodes_job_name(id, MAX_GENERATION).len(), 57);
        assert_eq!(
            nodepool_job_name(ids::NODEPOOL_ID, MAX_GENERATION),
            format!("hs-np-{}-g2147483647", ids::NODEPOOL_ID)
        );
        assert_eq!(
            controlplane_job_name(id, MAX_GENERATION),
            format!("hs-cp-{id}-g2147483647")
        );
        // The pattern this replaces does not fit: the check above can fail. Nor does a NodePool
        // name with both ids.
        assert!(format!("hypershift-controlplane-{id}-gen1").len() > 63);
        assert!(format!("hs-np-{id}-{}-g1", ids::NODEPOOL_ID).len() > 63);
    }

    /// The names each kind's builder makes over [`samples`]; the number made twice.
    fn duplicates(kinds: &[NameOf]) -> usize {
        let (ids, generations) = samples();
        let mut seen = HashSet::new();
        let mut duplicates = 0;
        for name_of in kinds {
            for id in &ids {
                for &generation in &generations {
                    if !seen.insert(name_of(id, generation)) {
                        duplicates += 1;
                    }
                }
            }
        }
        duplicates
    }

    #[test]
    fn names_are_unique_per_cluster_generation_and_kind() {
        assert_eq!(duplicates(&KINDS.map(|(_, name_of)| name_of)), 0);
        let (ids, generations) = samples();
        for (prefix, name_of) in KINDS {
            for id in &ids {
                for &generation in &generations {
                    let name = name_of(id, generation);
                    assert!(name.len() <= 63, "{name}");
                    assert_eq!(parse(&name), Some((prefix, id.as_str(), generation)));
                }
            }
        }
    }

    #[test]
    fn the_uniqueness_check_catches_a_pattern_without_the_kind() {
        fn without_kind(id: &str, generation: i32) -> String {
            format!("hs-{id}-g{generation}")
        }
        let (ids, generations) = samples();
        assert_eq!(
            duplicates(&[without_kind, without_kind]),
            ids.len() * generations.len()
        );
        // Nor can it be read back to a kind.
        assert_eq!(parse(&without_kind(ids::CLUSTER_ID, 1)), None);
    }
}
