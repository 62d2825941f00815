//! Each pulse's Job and Pod and the kubelet that runs it: `manifests/job.yaml` (or
//! `manifests/nodepool-job.yaml`) rendered with the fakes' addresses as the framework renders it,
//! with the few changes a scenario makes; the Pod the Job controller would create from it, run by
//! [`crate::kubelet`] through the fake API server with this binary standing in for both images
//! (re-executed, see [`super::children`]).

use std::path::Path;

use serde_json::{Value, json};

use super::scenario::{Adapter, Pulse};
use super::{Bed, CLUSTER_ID, CONSUMER, Cli, NAMESPACE, children};
use crate::kube_api::ApiServer;
use crate::kubelet::{IMAGE_USER, Images, Kubelet, KubeletConfig, PULSE_TIMEOUT, PodRun, Program};
use crate::pulse_job::{PulseJob, render_template};

/// `manifests/job.yaml`.
const JOB_TEMPLATE: &str = include_str!("../../../manifests/job.yaml");
/// `manifests/nodepool-job.yaml`.
const NODEPOOL_JOB_TEMPLATE: &str = include_str!("../../../manifests/nodepool-job.yaml");
/// The Maestro token of the `hypershift-adapter-maestro` Secret.
pub(super) const MAESTRO_TOKEN: &str = "local-pulse-maestro-token";
/// The HyperFleet API token of the `hypershift-adapter-hyperfleet-api` Secret.
pub(super) const HYPERFLEET_TOKEN: &str = "local-pulse-hyperfleet-token";

/// What `manifests/rbac.yaml` and the deployment put in the Jobs' namespace: the ServiceAccount
/// and the two Secrets the Job templates mount.
pub(super) fn seed_namespace(server: &ApiServer, maestro_ca: &str) {
    server.put_object(
        "/api/v1",
        Some(NAMESPACE),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "hypershift-adapter"}}),
    );
    for (name, data) in [
        (
            "hypershift-adapter-maestro",
            json!({"ca.crt": b64(maestro_ca), "token": b64(MAESTRO_TOKEN)}),
        ),
        (
            "hypershift-adapter-hyperfleet-api",
            json!({"token": b64(HYPERFLEET_TOKEN)}),
        ),
    ] {
        server.put_object(
            "/api/v1",
            Some(NAMESPACE),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "type": "Opaque", "data": data}),
        );
    }
}

fn b64(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// The pulse's Job: the template of its kind rendered for the fakes, then the scenario's changes.
///
/// # Errors
/// When the template does not render.
pub(super) fn job(bed: &Bed, pulse: &Pulse, cli: &Cli) -> anyhow::Result<Value> {
    let (maestro_api, maestro_grpc) = if pulse.adapter == Adapter::MaestroDown {
        (bed.closed_url.clone(), bed.closed_url.clone())
    } else {
        (bed.maestro.rest_url(), bed.maestro.grpc_url())
    };
    let mut values = vec![
        ("clusterId", CLUSTER_ID.to_owned()),
        ("generation", pulse.generation.to_string()),
        ("hyperfleetApiBaseUrl", bed.hyperfleet.url().to_owned()),
        ("managementClusterConsumer", CONSUMER.to_owned()),
        (
            "maestroSourceId",
            hypershift_adapter::work::backend::DEFAULT_SOURCE_ID.to_owned(),
        ),
        ("maestroApiUrl", maestro_api),
        ("maestroGrpcUrl", maestro_grpc),
        ("imageTag", "local".to_owned()),
        ("hyperfleetApiAuthScheme", "Bearer".to_owned()),
    ];
    let template = if pulse.adapter == Adapter::NodePool {
        values.push(("nodepoolId", crate::ids::NODEPOOL_ID.to_owned()));
        NODEPOOL_JOB_TEMPLATE
    } else {
        JOB_TEMPLATE
    };
    let mut job = render_template(template, &values)?;
    edit(&mut job, pulse.adapter, cli);
    Ok(job)
}

/// The scenario's changes to the rendered Job (each one a change an operator would make).
fn edit(job: &mut Value, adapter: Adapter, cli: &Cli) {
    for container in containers(job) {
        set_env(
            container,
            "LOG_FORMAT",
            json!({"value": cli.log_format.env_value()}),
        );
    }
    let [adapter_container, reporter] = containers(job) else {
        return;
    };
    match adapter {
        Adapter::MaestroDown => set_env(
            adapter_container,
            "RETRY_BUDGET_SECONDS",
            json!({"value": "3"}),
        ),
        // What the template's placement comment says to change.
        Adapter::Placed => {
            let env = adapter_container["env"].as_array_mut();
            env.into_iter()
                .for_each(|e| e.retain(|v| v["name"] != "MANAGEMENT_CLUSTER_CONSUMER"));
            set_env(
                adapter_container,
                "MANAGEMENT_CLUSTERS_FROM_API",
                json!({"value": "true"}),
            );
            for (name, path) in [
                ("JOB_NAMESPACE", "metadata.namespace"),
                ("POD_NAME", "metadata.name"),
            ] {
                set_env(
                    adapter_container,
                    name,
                    json!({"valueFrom": {"fieldRef": {"fieldPath": path}}}),
                );
            }
        }
        Adapter::Hang => set_env(reporter, "MAX_WAIT_TIME_SECONDS", json!({"value": "3"})),
        _ => {}
    }
}

fn containers(job: &mut Value) -> &mut [Value] {
    job["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .map_or(&mut [], Vec::as_mut_slice)
}

/// Sets env `name` of `container` to `value` (`{"value": …}` or `{"valueFrom": …}`).
fn set_env(container: &mut Value, name: &str, value: Value) {
    let mut entry = value;
    entry["name"] = json!(name);
    match container["env"].as_array_mut() {
        Some(env) => match env.iter_mut().find(|e| e["name"] == name) {
            Some(existing) => *existing = entry,
            None => env.push(entry),
        },
        None => container["env"] = json!([entry]),
    }
}

/// A kubelet for the pulse, its pod directories under `dir`: the `hypershift-adapter` image is
/// this binary as the pulse's adapter, `status-reporter` this binary as the reporter.
///
/// # Errors
/// When this executable cannot be found or the kubelet not made.
pub(super) async fn kubelet(
    server: &ApiServer,
    adapter: Adapter,
    dir: &Path,
    cli: &Cli,
) -> anyhow::Result<Kubelet> {
    let exe = std::env::current_exe()?;
    let program = |role: &str| Program {
        exe: exe.clone(),
        args: vec![role.to_owned()],
        user: Some(IMAGE_USER),
    };
    let images = Images::default()
        .with("hypershift-adapter", program(adapter.role()))
        .with("status-reporter", program(children::STATUS_REPORTER));
    let config = KubeletConfig {
        images,
        root: Some(dir.to_owned()),
        isolation: None,
        verbose: cli.verbose,
        max_pod_runtime: PULSE_TIMEOUT,
    };
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&server.kubeconfig())?;
    Kubelet::new(kubeconfig, config).await
}

/// Runs the pulse's Pod. When the adapter hangs, the status-reporter gives up first; then the
/// Pod is deleted as the Job controller deletes it at the Job's `activeDeadlineSeconds`, and the
/// kubelet stops the adapter.
///
/// # Errors
/// When the Pod cannot be run.
pub(super) async fn run(
    bed: &Bed,
    kubelet: &Kubelet,
    job: &PulseJob,
    adapter: Adapter,
) -> anyhow::Result<PodRun> {
    let mut running = kubelet.start(&job.namespace, &job.pod);
    if adapter == Adapter::Hang {
        running.container_ended("status-reporter").await;
        println!(
            "   job controller:     activeDeadlineSeconds passes: the Pod is deleted, the kubelet stops the adapter"
        );
        bed.server
            .delete_object("/api/v1", "pods", Some(&job.namespace), &job.pod);
    }
    running.wait().await
}
