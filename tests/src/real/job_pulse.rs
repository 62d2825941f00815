//! A placement pulse as a Job on the kit's real API server, for what reads the Jobs
//! (`hypershift-adapter diagnose`): the pulse Job of `manifests/job.yaml` (rendered as the
//! framework renders it, in the test's namespace, its adapter switched to the HyperFleet inventory
//! as the template's comments say) is created; the real job controller creates its Pod, which no
//! kubelet runs (the kit has none), so the Job's two containers run here as processes with the
//! Pod's identity: the built adapter ([`PlacementBed::pulse_env`]) and the built status-reporter
//! with the template's environment and the Job ServiceAccount's token, so its GET and PATCH of
//! the Job's status pass the real RBAC of `manifests/rbac.yaml`. The Pod stays `Pending` without
//! container states. [`PlacementBed::report_job`] then PUTs the framework's `statusPayload` read
//! from the Job as stored; [`PlacementBed::delete_job`] plays `ttlSecondsAfterFinished`, so the
//! next pulse of the same generation gets a fresh Job.

use std::time::Duration;

use anyhow::{Context, bail};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, PostParams, PropagationPolicy};
use serde_json::{Map, Value, json};

use super::placement::{Cluster, PlacementBed, Pulse, SHIPPED_NAMESPACE, status_payload};
use super::wait::eventually;

/// How long the job controller may take to create the Job's Pod.
const POD_CREATED: Duration = Duration::from_secs(30);

/// One pulse run as a Job.
#[derive(Debug, Clone)]
pub struct JobRun {
    pub job: String,
    pub pod: String,
    /// The adapter's report and log.
    pub pulse: Pulse,
    pub reporter_log: String,
}

/// `manifests/job.yaml` rendered for `cluster` at `generation` in `namespace` with the test's
/// Maestro and HyperFleet URLs and source, its adapter container's environment switched from
/// `MANAGEMENT_CLUSTER_CONSUMER` to `MANAGEMENT_CLUSTERS_FROM_API` with `JOB_NAMESPACE` and
/// `POD_NAME` from the downward API (the template's own comments).
///
/// # Errors
/// When the template cannot be read or parsed.
pub fn render_job(bed: &PlacementBed, cluster: &Cluster, generation: i64) -> anyhow::Result<Value> {
    let path = super::framework::manifests_dir().join("job.yaml");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("read {}", path.display()))?;
    let rendered = [
        ("{{ .clusterId }}", cluster.id.clone()),
        ("{{ .generation }}", generation.to_string()),
        (
            "{{ .hyperfleetApiBaseUrl }}",
            bed.real.var("HYPERFLEET_API_URL").to_owned(),
        ),
        ("{{ .managementClusterConsumer }}", String::new()),
        ("{{ .maestroSourceId }}", bed.source.clone()),
        (
            "{{ .maestroApiUrl }}",
            bed.real.var("MAESTRO_API_URL").to_owned(),
        ),
        (
            "{{ .maestroGrpcUrl }}",
            bed.real.var("MAESTRO_GRPC_URL").to_owned(),
        ),
        ("{{ .imageTag }}", "real-placement".to_owned()),
        ("{{ .hyperfleetApiAuthScheme }}", "Bearer".to_owned()),
    ]
    .iter()
    .fold(text, |text, (placeholder, value)| {
        text.replace(placeholder, value)
    });
    let mut job: Value =
        serde_saphyr::from_str(&rendered).with_context(|| format!("parse {}", path.display()))?;
    if job["metadata"]["namespace"] != SHIPPED_NAMESPACE {
        bail!(
            "{} no longer names namespace {SHIPPED_NAMESPACE}",
            path.display()
        );
    }
    job["metadata"]["namespace"] = bed.namespace.clone().into();
    let containers = job["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .context("no containers")?;
    let adapter = containers
        .iter_mut()
        .find(|c| c["name"] == "adapter")
        .context("no adapter container")?;
    let env = adapter["env"].as_array_mut().context("no adapter env")?;
    env.retain(|e| e["name"] != "MANAGEMENT_CLUSTER_CONSUMER");
    env.push(json!({"name": "MANAGEMENT_CLUSTERS_FROM_API", "value": "true"}));
    env.push(json!({"name": "JOB_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}));
    env.push(
        json!({"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}),
    );
    Ok(job)
}

impl PlacementBed {
    /// One pulse of `cluster` at its served generation as a Job (see the module doc).
    ///
    /// # Errors
    /// When the Job is refused, no Pod appears, a container cannot run, the adapter fails or
    /// the status-reporter does not write the Job.
    pub async fn job_pulse(&self, cluster: &Cluster) -> anyhow::Result<JobRun> {
        let generation = self.generation(cluster).await?;
        let rendered = render_job(self, cluster, generation)?;
        let job: Job = serde_json::from_value(rendered)?;
        let name = job.metadata.name.clone().context("no Job name")?;
        let jobs: Api<Job> = Api::namespaced(self.kube.clone(), &self.namespace);
        let created = jobs
            .create(&PostParams::default(), &job)
            .await
            .with_context(|| format!("create Job {name}"))?;
        let pods: Api<Pod> = Api::namespaced(self.kube.clone(), &self.namespace);
        // By the job controller's `controller-uid` label, not the Job's name: a Job of the same
        // name (the same generation, pulsed again after `delete_job`) may still have its Pod,
        // which the garbage collector removes after the Job.
        let uid = created.metadata.uid.context("the created Job has no uid")?;
        let selector = format!("batch.kubernetes.io/controller-uid={uid}");
        let pod = eventually(POD_CREATED, &format!("the Pod of Job {name}"), || async {
            let list = pods.list(&ListParams::default().labels(&selector)).await?;
            Ok(list.items.into_iter().find_map(|p| p.metadata.name))
        })
        .await?;

        let dir = self.dir().join(&pod);
        std::fs::create_dir_all(&dir)?;
        let results = dir.join("adapter-report.json");
        let adapter = tokio::process::Command::new(crate::binaries::path("hypershift-adapter"))
            .arg("controlplane")
            .env_clear()
            .envs(self.pulse_env(cluster, generation, &pod, &results))
            .output();
        let reporter = tokio::process::Command::new(crate::binaries::path("status-reporter"))
            .env_clear()
            .envs([
                ("RESULTS_PATH", results.display().to_string()),
                ("JOB_NAME", name.clone()),
                ("JOB_NAMESPACE", self.namespace.clone()),
                ("POD_NAME", pod.clone()),
                ("ADAPTER_CONTAINER_NAME", "adapter".to_owned()),
                ("CONDITION_TYPE", "Available,Applied,Health".to_owned()),
                ("CLUSTER_ID", cluster.id.clone()),
                ("LOG_FORMAT", "json".to_owned()),
                (
                    "KUBECONFIG",
                    self.adapter_kubeconfig().display().to_string(),
                ),
            ])
            .output();
        let (adapter, reporter) = tokio::join!(adapter, reporter);
        let (adapter, reporter) = (adapter?, reporter?);
        let log = |out: &std::process::Output| {
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        };
        let (adapter_log, reporter_log) = (log(&adapter), log(&reporter));
        std::fs::write(dir.join("adapter.log"), &adapter_log)?;
        std::fs::write(dir.join("status-reporter.log"), &reporter_log)?;
        if !adapter.status.success() || !reporter.status.success() {
            bail!(
                "Job {name}: adapter exited {:?}, status-reporter {:?}\n--- adapter:\n{adapter_log}\n--- status-reporter:\n{reporter_log}",
                adapter.status.code(),
                reporter.status.code()
            );
        }
        let report = serde_json::from_str(&std::fs::read_to_string(&results)?)?;
        Ok(JobRun {
            job: name,
            pulse: Pulse {
                pod: pod.clone(),
                report,
                log: adapter_log,
            },
            pod,
            reporter_log,
        })
    }

    /// The framework's `statusPayload` built from Job `run` as stored (its conditions, its
    /// `hyperfleet.io/observed-generation`, its `data.hyperfleet.io/` annotations), PUT to the
    /// real API: the answer's status code.
    ///
    /// # Errors
    /// When the Job cannot be read or has not reported.
    pub async fn report_job(&self, cluster: &Cluster, run: &JobRun) -> anyhow::Result<u16> {
        let jobs: Api<Job> = Api::namespaced(self.kube.clone(), &self.namespace);
        let job = jobs.get(&run.job).await?;
        let conditions: Vec<(String, String, String, String)> = job
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .into_iter()
            .map(|c| {
                (
                    c.type_,
                    c.status,
                    c.reason.unwrap_or_default(),
                    c.message.unwrap_or_default(),
                )
            })
            .collect();
        let annotations = job.metadata.annotations.unwrap_or_default();
        let generation = match annotations
            .get(job_report::OBSERVED_GENERATION_ANNOTATION)
            .or_else(|| annotations.get("hyperfleet.io/generation"))
        {
            Some(g) => g.parse()?,
            None => self.generation(cluster).await?,
        };
        let data: Map<String, Value> = annotations
            .iter()
            .filter_map(|(k, v)| {
                Some((
                    k.strip_prefix(job_report::DATA_ANNOTATION_PREFIX)?
                        .to_owned(),
                    Value::from(v.as_str()),
                ))
            })
            .collect();
        self.after_stored_report(&cluster.href, "hypershift")
            .await?;
        let body = status_payload(&conditions, generation, &data)?;
        Ok(self.api.put_status(&cluster.href, &body).await?.0)
    }

    /// Deletes Job `name` and its Pod (background propagation, as the TTL controller does) and
    /// waits until the Job is gone.
    ///
    /// # Errors
    /// When the delete is refused or the Job stays.
    pub async fn delete_job(&self, name: &str) -> anyhow::Result<()> {
        let jobs: Api<Job> = Api::namespaced(self.kube.clone(), &self.namespace);
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        match jobs.delete(name, &params).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("delete Job {name}")),
        }
        eventually(POD_CREATED, &format!("Job {name} gone"), || async {
            Ok(jobs.get_opt(name).await?.is_none().then_some(()))
        })
        .await
    }
}
