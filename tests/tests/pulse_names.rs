//! End-to-end with production-shaped names: a UUIDv7 cluster id (36 characters), the longest
//! cluster name the HyperFleet API accepts (53) and the highest generation (int32). The real
//! `hypershift-adapter controlplane` and `status-reporter` binaries run one pulse against the fake
//! Maestro and the fake Kubernetes API server, which refuses Job names over 63 bytes as a real
//! server does. The NodePool's pulse Job (`manifests/nodepool-job.yaml`, a UUIDv7 NodePool id and
//! the highest generation) is created through the fake server's Job create.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};
use testbed::ids::{CLUSTER_ID, LONGEST_CLUSTER_NAME, NODEPOOL_ID};
use testbed::kube_api::ApiServer;
use testbed::maestro::{FakeMaestro, FakeOptions};
use testbed::pulse_job::{MAX_GENERATION, PulseJob, controlplane_job_name, nodepool_job_name};
use tokio::process::Command;

const CLUSTER: &str = include_str!("../../adapter/tests/fixtures/cluster-valid.json");
const CONSUMER: &str = "mgmt-1";

/// The fixture cluster with `name` and the highest generation.
fn cluster_named(name: &str) -> String {
    let mut cluster: Value = serde_json::from_str(CLUSTER).unwrap();
    assert_eq!(cluster["id"], CLUSTER_ID);
    cluster["name"] = json!(name);
    cluster["generation"] = json!(MAX_GENERATION);
    cluster.to_string()
}

/// Runs the adapter once with the cluster in `dir`; its exit code and stderr.
async fn run_adapter(dir: &Path, cluster: &str, maestro: &FakeMaestro) -> (Option<i32>, String) {
    let spec = dir.join("cluster.json");
    std::fs::write(&spec, cluster).unwrap();
    let out = Command::new(testbed::binaries::path("hypershift-adapter"))
        .arg("controlplane")
        .env_clear()
        .env("CLUSTER_SPEC_FILE", &spec)
        .env(
            "RESULTS_OUTPUT_PATH",
            dir.join("results/adapter-report.json"),
        )
        .env("MANAGEMENT_CLUSTER_CONSUMER", CONSUMER)
        .env("MAESTRO_API_URL", maestro.rest_url())
        .env("MAESTRO_GRPC_URL", maestro.grpc_url())
        .env("LOG_FORMAT", "json")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .expect("the adapter did not exit within 60 s")
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn maestro() -> FakeMaestro {
    FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.to_owned()],
        ..FakeOptions::default()
    })
    .await
    .unwrap()
}

/// Every label value of `object` is a valid Kubernetes label value (≤ 63 bytes).
#[track_caller]
fn assert_label_values_fit(what: &str, object: &Value) {
    for (key, value) in object["metadata"]["labels"].as_object().unwrap() {
        let value = value.as_str().unwrap();
        assert!(
            value.len() <= 63,
            "{what} label {key}={value} is over 63 bytes"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pulse_with_a_uuid_v7_id_the_longest_name_and_the_highest_generation() {
    assert_eq!(LONGEST_CLUSTER_NAME.len(), 53);
    let maestro = maestro().await;
    let server = ApiServer::start().await;
    let job_name = controlplane_job_name(CLUSTER_ID, MAX_GENERATION);
    assert_eq!(job_name.len(), 54);
    // Seeding checks the name as a real server's create would (it panics on a refusal).
    let job = PulseJob::seed(&server, "hyperfleet", &job_name, Some(600));
    let stored = server
        .job("hyperfleet", &job_name)
        .expect("the Job is created");
    assert_eq!(
        stored["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"],
        job_name
    );

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("results")).unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let reporter = Command::new(testbed::binaries::path("status-reporter"))
        .env_clear()
        .envs(job.reporter_env(&kubeconfig, &dir.path().join("results/adapter-report.json")))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (code, logs) =
        run_adapter(dir.path(), &cluster_named(LONGEST_CLUSTER_NAME), &maestro).await;
    assert_eq!(code, Some(0), "{logs}");
    let out = tokio::time::timeout(Duration::from_secs(30), reporter.wait_with_output())
        .await
        .expect("the reporter did not exit")
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The Job carries the pulse's outcome and generation.
    let available = job
        .conditions(&server)
        .into_iter()
        .find(|c| c["type"] == "Available")
        .expect("an Available condition");
    assert_eq!(available["reason"], "Provisioning", "{available}");
    assert_eq!(
        job.annotation(&server, "hyperfleet.io/observed-generation")
            .as_deref(),
        Some("2147483647")
    );

    // The HostedCluster went out under the longest name, with every derived name in its limit.
    let work = format!("hostedcluster-{CLUSTER_ID}");
    let stored = maestro.resource(&work).expect("the work is stored");
    let bundle = stored.bundle();
    let hc = bundle["manifests"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["kind"] == "HostedCluster"))
        .expect("the work carries the HostedCluster");
    assert_eq!(hc["metadata"]["name"], LONGEST_CLUSTER_NAME);
    let control_plane_namespace = format!(
        "{}-{LONGEST_CLUSTER_NAME}",
        hc["metadata"]["namespace"].as_str().unwrap()
    );
    assert_eq!(
        control_plane_namespace.len(),
        62,
        "{control_plane_namespace}"
    );
    assert_eq!(
        hc["metadata"]["labels"]["hyperfleet.io/cluster-id"],
        CLUSTER_ID
    );
    assert_label_values_fit("HostedCluster", hc);
    assert_eq!(
        hc["spec"]["platform"]["gcp"]["resourceLabels"][0],
        json!({"key": "cluster-id", "value": format!("id-{CLUSTER_ID}")})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_one_over_the_api_limit_is_refused_and_nothing_is_sent() {
    let maestro = maestro().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("results")).unwrap();
    let too_long = format!("{LONGEST_CLUSTER_NAME}x");
    let (code, logs) = run_adapter(dir.path(), &cluster_named(&too_long), &maestro).await;
    assert_eq!(code, Some(0), "{logs}");
    let report = job_report::parse(
        &std::fs::read(dir.path().join("results/adapter-report.json")).unwrap(),
        "Available",
    )
    .unwrap();
    let applied = report.condition("Applied").unwrap();
    assert_eq!(applied.reason, "InvalidClusterSpec");
    assert!(
        applied.message.contains("3 to 53 characters"),
        "{}",
        applied.message
    );
    assert_eq!(maestro.publishes(), 0);
}

/// `manifests/nodepool-job.yaml` with its placeholders filled in: [`NODEPOOL_ID`] of cluster
/// [`CLUSTER_ID`] at `generation`.
fn nodepool_job(generation: i32) -> Job {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../manifests/nodepool-job.yaml"
    ))
    .unwrap();
    let mut rendered = text;
    for (placeholder, value) in [
        ("nodepoolId", NODEPOOL_ID.to_owned()),
        ("clusterId", CLUSTER_ID.to_owned()),
        ("generation", generation.to_string()),
        (
            "hyperfleetApiBaseUrl",
            "http://hyperfleet-api.hyperfleet-system.svc:8000".to_owned(),
        ),
        ("managementClusterConsumer", CONSUMER.to_owned()),
        (
            "maestroSourceId",
            "hyperfleet-hypershift-adapter".to_owned(),
        ),
        (
            "maestroApiUrl",
            "https://maestro-api.maestro.svc:8000".to_owned(),
        ),
        (
            "maestroGrpcUrl",
            "https://maestro-grpc.maestro.svc:8090".to_owned(),
        ),
        ("imageTag", "0.1.0".to_owned()),
        ("hyperfleetApiAuthScheme", "Bearer".to_owned()),
    ] {
        rendered = rendered.replace(&format!("{{{{ .{placeholder} }}}}"), &value);
    }
    assert!(
        !rendered.contains("{{"),
        "a placeholder is left: {rendered}"
    );
    serde_saphyr::from_str(&rendered).unwrap()
}

/// The NodePool's pulse Job with a 36-character NodePool id and the highest generation: its
/// name is 54 bytes and the fake API server's Job create (which refuses a name over 63 bytes,
/// as it becomes a pod-template label value) stores it, with the name in the job-name labels.
/// The same Job named with both ids is refused: the check can fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_nodepool_job_with_a_uuid_v7_id_and_the_highest_generation_is_created() {
    let server = ApiServer::start().await;
    let jobs: Api<Job> = Api::namespaced(server.client().await, "hyperfleet-system");
    let name = nodepool_job_name(NODEPOOL_ID, MAX_GENERATION);
    assert_eq!(NODEPOOL_ID.len(), 36);
    assert_eq!(name.len(), 54);
    let job = nodepool_job(MAX_GENERATION);
    assert_eq!(job.metadata.name.as_deref(), Some(name.as_str()));
    let created = jobs
        .create(&PostParams::default(), &job)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let labels = created
        .spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    for key in ["batch.kubernetes.io/job-name", "job-name"] {
        assert_eq!(labels.get(key), Some(&name), "{key}");
    }
    assert_eq!(
        labels.get("hyperfleet.io/nodepool-id").map(String::as_str),
        Some(NODEPOOL_ID)
    );
    let stored = server
        .job("hyperfleet-system", &name)
        .expect("the Job is stored");
    assert_eq!(
        stored["metadata"]["annotations"]["hyperfleet.io/generation"],
        "2147483647"
    );
    assert_label_values_fit("NodePool Job", &stored);

    let mut both_ids = job.clone();
    let long = format!("hs-np-{CLUSTER_ID}-{NODEPOOL_ID}-g{MAX_GENERATION}");
    assert_eq!(long.len(), 91);
    both_ids.metadata.name = Some(long.clone());
    match jobs.create(&PostParams::default(), &both_ids).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422);
            assert!(
                status.message.contains("must be no more than 63 bytes"),
                "{}",
                status.message
            );
        }
        other => panic!("{long}: expected a 422, got {other:?}"),
    }
    assert!(server.job("hyperfleet-system", &long).is_none());
}
