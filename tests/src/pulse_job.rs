//! A pulse Job and its Pod, seeded into the fake API server the way the framework creates them
//! (see `manifests/job.yaml`): Job `hypershift-controlplane-<id>-gen<n>`, a Pod labelled with
//! its Job's name, containers `adapter` and `status-reporter`.

use serde_json::{Value, json};

use crate::kube_api::ApiServer;

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
                             "labels": {"batch.kubernetes.io/job-name": job, "job-name": job}},
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
            ("CONDITION_TYPE", "Applied,Available,Health".to_owned()),
            ("LOG_FORMAT", "json".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }
}
