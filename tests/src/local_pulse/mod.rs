//! `local-pulse`: one HyperFleet pulse (or a few) end to end on a laptop, no cluster needed.
//!
//! The runner starts the fakes in-process (Kubernetes API server, Maestro with consumer
//! `mgmt-local`, a minimal HyperFleet API), seeds each pulse's Job and Pod as the framework and
//! the Job controller would, then runs the Job's two containers as two processes sharing a
//! results directory, with the environment of `manifests/job.yaml` pointed at the fakes. The
//! processes are this same binary re-executed (see [`children`]). When the adapter process
//! exits, its container is marked terminated on the fake Pod with the real exit code, as the
//! kubelet would, so the status-reporter sees the end. After each pulse the Job is printed as
//! `kubectl get job -o yaml` shows it, and checked against the expected conditions.

pub mod children;
pub mod diagnose;
pub mod hyperfleet_api;
mod pod;
pub mod render;
pub mod scenario;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use serde_json::{Value, json};

use crate::kube_api::ApiServer;
use crate::maestro::{FakeMaestro, FakeOptions};
use crate::pulse_job::PulseJob;
use hyperfleet_api::FakeHyperfleetApi;
use scenario::{Adapter, HyperFleet, Management, Pulse, Scenario};

/// The simulated cluster's HyperFleet id (a UUIDv7, as the API assigns them).
pub const CLUSTER_ID: &str = crate::ids::CLUSTER_ID;
/// The simulated cluster's name: the longest the HyperFleet API accepts.
pub const CLUSTER_NAME: &str = crate::ids::LONGEST_CLUSTER_NAME;
/// The cluster's generation at the first pulse (the cluster object says the same); the
/// `upgrade` and `delete` scenarios raise it as the HyperFleet API does.
pub const GENERATION: i32 = 3;
/// The Maestro consumer (management cluster).
pub const CONSUMER: &str = "mgmt-local";
/// The namespace of `manifests/job.yaml`.
pub const NAMESPACE: &str = "hyperfleet-system";

/// One Sentinel pulse of a HyperShift cluster, end to end on this machine: fake Kubernetes API
/// server, fake Maestro, and the Job's two containers (hypershift-adapter, status-reporter) as
/// two processes sharing a results directory. Exits non-zero if a pulse ends with unexpected
/// conditions.
#[derive(Debug, Parser)]
#[command(name = "local-pulse")]
pub struct Cli {
    /// What to simulate.
    #[arg(long, value_enum, default_value_t = Scenario::Lifecycle)]
    pub scenario: Scenario,
    /// Run every scenario in turn (lifecycle, apply-failure, resource-gone, upgrade, delete,
    /// adapter-crash, hang, invalid-report, maestro-down, nodepool, placement, diagnose).
    #[arg(long, conflicts_with = "scenario")]
    pub all: bool,
    /// Keep the temp directory (results, logs, kubeconfig) and print its path.
    #[arg(long)]
    pub keep: bool,
    /// LOG_FORMAT of both containers (the Job uses json).
    #[arg(long, value_enum, default_value_t = LogFormat::Json)]
    pub log_format: LogFormat,
    /// Stream the containers' logs to stderr instead of writing them to files.
    #[arg(long, short)]
    pub verbose: bool,
}

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Plain,
    Json,
}

impl LogFormat {
    fn env_value(self) -> &'static str {
        match self {
            LogFormat::Plain => "plain",
            LogFormat::Json => "json",
        }
    }
}

/// The binary's `main`: a child role when the first argument names one, else the runner.
pub fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(code) = children::dispatch(&args) {
        return code;
    }
    let cli = Cli::parse_from(args);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("local-pulse: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&cli)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("local-pulse: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the selected scenarios; `Ok(true)` when every pulse ended as expected.
pub async fn run(cli: &Cli) -> anyhow::Result<bool> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let scenarios: Vec<Scenario> = if cli.all {
        Scenario::ALL.to_vec()
    } else {
        vec![cli.scenario]
    };
    let temp = tempfile::Builder::new()
        .prefix("local-pulse-")
        .tempdir()
        .context("cannot create a temp directory")?;
    print_header(&scenarios, temp.path(), cli);

    let mut results: Vec<(Scenario, usize, String, bool)> = Vec::new();
    for scenario in &scenarios {
        let dir = temp.path().join(scenario.name());
        let outcomes = run_scenario(*scenario, &dir, cli).await?;
        for (n, (summary, ok)) in outcomes.into_iter().enumerate() {
            results.push((*scenario, n + 1, summary, ok));
        }
    }

    let all_ok = results.iter().all(|r| r.3);
    println!("== Summary");
    for (scenario, n, summary, ok) in &results {
        let mark = if *ok { "ok  " } else { "FAIL" };
        println!("  {mark} {:<15} pulse {n}  {summary}", scenario.name());
    }
    println!();
    if cli.keep || !all_ok {
        let kept = temp.keep();
        println!(
            "Temp directory kept{}: {}",
            if cli.keep { "" } else { " (a pulse failed)" },
            kept.display()
        );
    }
    if all_ok {
        println!("All pulses ended with the expected conditions.");
    } else {
        println!("Some pulses did NOT end with the expected conditions (see FAIL above).");
    }
    Ok(all_ok)
}

fn print_header(scenarios: &[Scenario], temp: &Path, cli: &Cli) {
    println!("local-pulse: HyperFleet pulses of a HyperShift cluster, simulated on this machine");
    println!();
    println!(
        "  HyperFleet's Sentinel \"pulses\" each cluster; for every pulse the adapter framework creates a"
    );
    println!("  Job (manifests/job.yaml) with two containers sharing an emptyDir /results:");
    println!(
        "    adapter          hypershift-adapter controlplane: ships the cluster's HostedCluster to the"
    );
    println!(
        "                     management cluster in a ManifestWork (through Maestro), reads back its"
    );
    println!("                     status, writes /results/adapter-report.json and exits");
    println!(
        "    status-reporter  waits for that report (or the adapter's end), then patches the Job's"
    );
    println!("                     status.conditions and the annotation hyperfleet.io/report-data");
    println!("  The framework reads the Job's conditions on the next pulse.");
    println!();
    println!(
        "  Here nothing needs a cluster: in this process run a fake Kubernetes API server, a fake"
    );
    println!("  Maestro (consumer {CONSUMER}) and a fake HyperFleet API serving the cluster");
    println!("    id   {CLUSTER_ID} (generation {GENERATION})");
    println!("    name {CLUSTER_NAME}");
    println!("  whose pulse Job is {}.", job_name());
    if scenarios.contains(&Scenario::NodePool) {
        println!(
            "  The nodepool scenario adds its NodePool {} (id {}),",
            crate::ids::LONGEST_NODEPOOL_NAME,
            crate::ids::NODEPOOL_ID
        );
        println!(
            "  served at …/clusters/{{id}}/nodepools/{{id}}, whose pulse Job {}",
            nodepool_job_name(1)
        );
        println!(
            "  runs hypershift-adapter nodepool: it ships a HyperShift NodePool in its own ManifestWork"
        );
        println!("  nodepool-<id>, once the cluster's HostedCluster is available.");
    }
    if scenarios.contains(&Scenario::Placement) {
        println!(
            "  The placement scenario adds two ManagementCluster entities in region {PLACEMENT_REGION} on"
        );
        println!(
            "  the HyperFleet API (each a Maestro consumer with its own work agent); the adapter runs with"
        );
        println!(
            "  MANAGEMENT_CLUSTERS_FROM_API=true, places the cluster, reports where in data.management_cluster."
        );
    }
    println!(
        "  The Job is manifests/job.yaml rendered for the fakes; this runner plays the Job controller"
    );
    println!(
        "  (it creates the Pod) and the kubelet (testbed::kubelet: the Pod's two containers run as two"
    );
    println!(
        "  child processes with the Pod's env, volumes and ServiceAccount token, and the Pod's status"
    );
    println!(
        "  is written through the fake API server). A finished Job's TTL is assumed expired before"
    );
    println!("  the next pulse, so every pulse gets a fresh Job and Pod of the same name.");
    println!();
    println!("  Scenarios:");
    for s in scenarios {
        println!("    {:<15} {}", s.name(), s.story());
    }
    let logs = if cli.verbose {
        "streamed to stderr (--verbose)".to_owned()
    } else {
        format!("in files under {} (printed per pulse)", temp.display())
    };
    println!("  Container logs ({}): {logs}", cli.log_format.env_value());
    if !cli.keep {
        println!(
            "  The temp directory is removed at the end unless --keep is given or a pulse fails."
        );
    }
    println!();
}

/// Everything one scenario's pulses share: the fakes and the "secrets".
struct Bed {
    server: ApiServer,
    maestro: FakeMaestro,
    hyperfleet: FakeHyperfleetApi,
    kubeconfig: PathBuf,
    maestro_ca: PathBuf,
    maestro_token: PathBuf,
    hyperfleet_token: PathBuf,
    /// A URL nobody listens on (the `maestro-down` scenario).
    closed_url: String,
    /// The `placement` scenario's management clusters: `(name, path on the HyperFleet API)`.
    management_clusters: Vec<(String, String)>,
}

impl Bed {
    async fn start(dir: &Path) -> anyhow::Result<Bed> {
        std::fs::create_dir_all(dir)?;
        let server = ApiServer::start().await;
        let kubeconfig = server.write_kubeconfig(dir);

        let maestro_token_value = pod::MAESTRO_TOKEN;
        let maestro = FakeMaestro::start(FakeOptions {
            consumers: vec![CONSUMER.to_owned()],
            ..FakeOptions::tls_with_token(maestro_token_value)
        })
        .await?;
        // The management cluster's work agent reports only what each pulse sets.
        maestro.set_agent_delay(None);
        let secrets = dir.join("secrets");
        std::fs::create_dir_all(secrets.join("maestro"))?;
        std::fs::create_dir_all(secrets.join("hyperfleet"))?;
        let maestro_ca = secrets.join("maestro").join("ca.crt");
        std::fs::write(&maestro_ca, maestro.ca_pem().unwrap_or_default())?;
        pod::seed_namespace(&server, maestro.ca_pem().unwrap_or_default());
        let maestro_token = secrets.join("maestro").join("token");
        std::fs::write(&maestro_token, maestro_token_value)?;

        let hyperfleet_token_value = pod::HYPERFLEET_TOKEN;
        let hyperfleet_token = secrets.join("hyperfleet").join("token");
        std::fs::write(&hyperfleet_token, hyperfleet_token_value)?;
        // The Jobs present their projected ServiceAccount token (audience hyperfleet-api), which
        // the API's gateway checks by TokenReview; diagnose presents the static token.
        let review = server.clone();
        let config = crate::hyperfleet::fake_api::Config::recorded()
            .with_token(hyperfleet_token_value)
            .with_review(move |token| {
                review.review_token(token, "hyperfleet-api")
                    == Some(format!(
                        "system:serviceaccount:{NAMESPACE}:hypershift-adapter"
                    ))
            });
        let hyperfleet = FakeHyperfleetApi::start_with(cluster_object(), config).await?;

        let closed_url = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
            format!("https://{}", listener.local_addr()?)
        };
        Ok(Bed {
            server,
            maestro,
            hyperfleet,
            kubeconfig,
            maestro_ca,
            maestro_token,
            hyperfleet_token,
            closed_url,
            management_clusters: Vec::new(),
        })
    }

    /// The `placement` scenario's management clusters
    /// ([`scenario::PLACEMENT_MANAGEMENT_CLUSTERS`]): a `ManagementCluster` entity each on the
    /// HyperFleet API, reported healthy by `mgmt-health`, a Maestro consumer each, and the
    /// control planes of other clusters they already hold.
    fn add_management_clusters(&mut self) -> anyhow::Result<()> {
        let api = self.hyperfleet.api();
        for (i, (name, max, others)) in scenario::PLACEMENT_MANAGEMENT_CLUSTERS
            .into_iter()
            .enumerate()
        {
            let path =
                api.create_management_cluster(&crate::hyperfleet::fake_api::ManagementCluster {
                    name: name.to_owned(),
                    region: PLACEMENT_REGION.to_owned(),
                    consumer: name.to_owned(),
                    max_hosted_clusters: max,
                    cordoned: false,
                });
            let status = api.report_management_cluster_health(&path, true);
            anyhow::ensure!(status == 201, "mgmt-health report for {name}: {status}");
            self.maestro.add_consumer(name);
            for n in 0..others {
                let other = format!("019a6f1e-7e0a-7b1c-8d2e-{:012x}", i * 100 + n);
                self.maestro.seed_work(
                    hypershift_adapter::work::backend::DEFAULT_SOURCE_ID,
                    name,
                    &json!({
                        "metadata": {
                            "name": format!("hostedcluster-{other}"),
                            "labels": {"hyperfleet.io/adapter": "controlplane", "hyperfleet.io/cluster-id": other},
                        },
                        "spec": {"workload": {"manifests": [{
                            "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
                            "metadata": {"name": format!("other-{n}"), "namespace": "clusters"},
                        }]}},
                    }),
                )?;
            }
            println!(
                "   management cluster: ManagementCluster {name} (region {PLACEMENT_REGION}, Maestro consumer {name}, max_hosted_clusters {max}) reported healthy by mgmt-health; it holds {others} other control plane(s)"
            );
            self.management_clusters.push((name.to_owned(), path));
        }
        println!();
        Ok(())
    }
}

/// The simulated cluster's region (its `platform.gcp.region`), where the `placement` scenario's
/// management clusters are.
pub const PLACEMENT_REGION: &str = "europe-west2";

/// The HyperFleet cluster object the fake HyperFleet API serves: HyperFleet's nested spec with
/// the adapter's extension keys (docs/controlplane.md, "The cluster spec").
pub fn cluster_object() -> Value {
    json!({
        "kind": "Cluster",
        "id": CLUSTER_ID,
        "name": CLUSTER_NAME,
        "generation": GENERATION,
        "spec": {
            "platform": {
                "type": "gcp",
                "gcp": {
                    "projectID": "my-project-123",
                    "region": "europe-west2",
                    "zone": "europe-west2-a",
                    "network": "hcp-vpc",
                    "subnet": "hcp-psc-subnet",
                    "endpointAccess": "PublicAndPrivate",
                    "workloadIdentity": {
                        "projectNumber": "123456789012",
                        "poolID": "hyperfleet-pool",
                        "providerID": "hyperfleet-oidc",
                        "serviceAccountsEmails": {
                            "controlPlane": "hc-control-plane@my-project-123.iam.gserviceaccount.com",
                            "nodePool": "hc-nodepool@my-project-123.iam.gserviceaccount.com",
                            "cloudController": "hc-cloud-controller@my-project-123.iam.gserviceaccount.com",
                            "storage": "hc-storage@my-project-123.iam.gserviceaccount.com",
                            "imageRegistry": "hc-image-registry@my-project-123.iam.gserviceaccount.com",
                            "network": "hc-network@my-project-123.iam.gserviceaccount.com"
                        }
                    }
                }
            },
            "release": {"version": scenario::VERSION},
            "networking": {
                "clusterNetwork": [{"cidr": "10.132.0.0/14", "hostPrefix": 23}],
                "serviceNetwork": ["172.31.0.0/16"],
                "machineNetwork": [{"cidr": "10.0.0.0/16"}]
            },
            "dns": {"baseDomain": "hcp.example.com"},
            "issuerURL": "https://storage.googleapis.com/hyperfleet-oidc-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
            "pullSecret": {"name": "prod-eu-1-pull-secret"},
            "sshKey": {"name": "prod-eu-1-ssh-key"},
            "serviceAccountSigningKey": {"name": "prod-eu-1-sa-signing-key"}
        }
    })
}

/// The pulse Job's name (`manifests/job.yaml`).
pub fn job_name() -> String {
    crate::pulse_job::controlplane_job_name(CLUSTER_ID, GENERATION)
}

/// The NodePool's pulse Job at NodePool `generation`.
pub fn nodepool_job_name(generation: i32) -> String {
    crate::pulse_job::nodepool_job_name(crate::ids::NODEPOOL_ID, generation)
}

/// Runs a scenario's pulses; per pulse, its summary line and whether it matched.
async fn run_scenario(
    scenario: Scenario,
    dir: &Path,
    cli: &Cli,
) -> anyhow::Result<Vec<(String, bool)>> {
    println!("== Scenario {}: {}", scenario.name(), scenario.story());
    println!();
    let mut bed = Bed::start(dir).await?;
    if scenario == Scenario::Placement {
        bed.add_management_clusters()?;
    }
    let bed = bed;
    if scenario == Scenario::Diagnose {
        return diagnose::run(&bed, dir, cli).await;
    }
    let pulses = scenario.pulses();
    let total = pulses.len();
    let mut out = Vec::new();
    for (i, pulse) in pulses.iter().enumerate() {
        let n = i + 1;
        out.push(run_pulse(&bed, dir, n, total, pulse, cli).await?);
    }
    Ok(out)
}

/// One pulse: seed the Job and Pod, run both containers, print the Job, check it.
async fn run_pulse(
    bed: &Bed,
    dir: &Path,
    n: usize,
    total: usize,
    pulse: &Pulse,
    cli: &Cli,
) -> anyhow::Result<(String, bool)> {
    println!("-- Pulse {n}/{total}: {}", pulse.title);
    for change in &pulse.hyperfleet {
        println!(
            "   hyperfleet api:     {}",
            apply_hyperfleet(&bed.hyperfleet, change)
        );
    }
    same_generation(served_generation(&bed.hyperfleet, pulse), pulse)?;
    let cp_work = format!("hostedcluster-{CLUSTER_ID}");
    let np_work = format!("nodepool-{}", crate::ids::NODEPOOL_ID);
    for change in &pulse.management {
        let work = match change {
            Management::NodePoolFeedback(_) | Management::NodePoolReleaseDelete => &np_work,
            _ => &cp_work,
        };
        let (done, what) = match change {
            Management::Feedback(status) => (
                bed.maestro.set_feedback(work, status),
                format!(
                    "HostedCluster status feedback on ManifestWork {work}: {}",
                    conditions_line(status)
                ),
            ),
            Management::DenyApply(Some(message)) => (
                bed.maestro.fail_apply(work, Some(message)),
                format!("the API server refuses the HostedCluster: {message}"),
            ),
            Management::DenyApply(None) => (
                bed.maestro.fail_apply(work, None),
                "the API server accepts the HostedCluster again".to_owned(),
            ),
            Management::HostedClusterGone(true) => (
                bed.maestro.delete_on_cluster(work, true),
                "the HostedCluster is deleted behind the work agent (its last status feedback is kept)"
                    .to_owned(),
            ),
            Management::HostedClusterGone(false) => (
                bed.maestro.delete_on_cluster(work, false),
                "the work agent's resync re-creates the HostedCluster (no status feedback yet)"
                    .to_owned(),
            ),
            Management::HoldDelete(finalizers) => (
                bed.maestro.hold_delete(work, finalizers),
                format!(
                    "the HostedCluster carries finalizer {}: deleting it waits for them",
                    finalizers.join(", ")
                ),
            ),
            Management::AgentReports => (
                bed.maestro.apply(work),
                if bed.maestro.is_deleting(work) {
                    "the work agent reports the work Deleting=True (WorkDeleting); the HostedCluster's finalizer holds it"
                        .to_owned()
                } else {
                    "the work agent reports the work's status".to_owned()
                },
            ),
            Management::ReleaseDelete => (
                bed.maestro.release_delete(work),
                "the finalizers are removed: the HostedCluster is deleted, the work agent reports Deleted and the work is gone"
                    .to_owned(),
            ),
            Management::NodePoolFeedback(status) => (
                bed.maestro.set_feedback(work, status),
                format!(
                    "NodePool status feedback on ManifestWork {work}: {}",
                    node_pool_line(status)
                ),
            ),
            Management::Outage(name) => {
                bed.maestro.stop_agent(name);
                let reported = bed
                    .management_clusters
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, path)| bed.hyperfleet.api().report_management_cluster_health(path, false));
                (
                    reported == Some(201),
                    format!(
                        "management cluster {name} goes down: its work agent stops (applies, reports and acknowledges nothing) and mgmt-health reports its ManagementCluster unavailable (LastKnownReconciled=False)"
                    ),
                )
            }
            Management::NodePoolReleaseDelete => (
                bed.maestro.release_delete(work),
                "HyperShift has deleted the NodePool's machines and removed its finalizer: the work agent reports Deleted and the work is gone"
                    .to_owned(),
            ),
        };
        anyhow::ensure!(
            done,
            "ManifestWork {work} is not in the fake Maestro; cannot simulate: {what}"
        );
        println!("   management cluster: {what}");
    }
    println!("   adapter container:  {}", pulse.adapter.describe());

    // A fresh Job and Pod (the previous one's TTL expired), run by the kubelet.
    let job = pod::job(bed, pulse, cli)?;
    let job_name = job["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    bed.server.delete_job(NAMESPACE, &job_name);
    let job = PulseJob::seed_job(&bed.server, job);
    let pod_dir = dir.join(format!("pulse-{n}"));
    let kubelet = pod::kubelet(&bed.server, pulse.adapter, &pod_dir, cli).await?;
    let run = pod::run(bed, &kubelet, &job, pulse.adapter).await?;
    let container = |name: &str| run.container(name).cloned();
    let (adapter, reporter) = (container("adapter"), container("status-reporter"));
    if !cli.verbose {
        for c in [&adapter, &reporter].into_iter().flatten() {
            println!("   log:                {}", c.log.display());
        }
    }
    let code = |c: &Option<crate::kubelet::ContainerRun>| {
        show_code(c.as_ref().and_then(crate::kubelet::ContainerRun::exit_code))
    };
    println!(
        "   exit codes:         adapter {}, status-reporter {}",
        code(&adapter),
        code(&reporter)
    );

    let stored = bed.server.job(NAMESPACE, &job_name).unwrap_or(Value::Null);
    println!();
    println!(
        "   $ kubectl get job {job_name} -n {NAMESPACE} -o yaml   # metadata and status.conditions"
    );
    print!("{}", render::yaml(&render::job_view(&stored), 5));
    println!();
    let summary = render::summary(&stored);
    let problems = render::mismatches(
        &stored,
        &pulse.expect,
        &pulse.expect_data,
        &pulse.expect_messages,
    );
    let ok = problems.is_empty();
    println!(
        "   pulse {n}: {summary}   {}",
        if ok { "[as expected]" } else { "[UNEXPECTED]" }
    );
    for p in &problems {
        println!("     ! {p}");
    }
    println!();
    Ok((summary, ok))
}

/// The generation the HyperFleet API serves for what `pulse` checks: the NodePool's for a
/// NodePool's pulse, else the cluster's.
fn served_generation(api: &FakeHyperfleetApi, pulse: &Pulse) -> i64 {
    match pulse.adapter {
        Adapter::NodePool => api
            .nodepool(crate::ids::NODEPOOL_ID)
            .and_then(|n| n["generation"].as_i64())
            .unwrap_or_default(),
        _ => api.generation(),
    }
}

/// The pulse's Job is named after, and acts on, the generation the HyperFleet API serves.
fn same_generation(served: i64, pulse: &Pulse) -> anyhow::Result<()> {
    anyhow::ensure!(
        served == i64::from(pulse.generation),
        "the HyperFleet API serves generation {served}, pulse \"{}\" expects {}",
        pulse.title,
        pulse.generation
    );
    Ok(())
}

/// Makes `change` in the fake HyperFleet API; what happened, for the pulse's header.
fn apply_hyperfleet(api: &FakeHyperfleetApi, change: &HyperFleet) -> String {
    match change {
        HyperFleet::OpenshiftVersion(version) => {
            let generation = api.patch_spec("release", json!({"version": version}));
            format!("PATCH spec.release.version = {version} (cluster generation {generation})")
        }
        HyperFleet::Delete => {
            let generation = api.delete_cluster();
            let cluster = api.cluster();
            let pools: Vec<String> = api
                .nodepools()
                .iter()
                .filter(|n| n.get("spec").is_some())
                .map(|n| {
                    format!(
                        "; its NodePool {} too (NodePool generation {})",
                        n["name"].as_str().unwrap_or_default(),
                        n["generation"]
                    )
                })
                .collect();
            format!(
                "DELETE: deleted_time {}, deleted_by {} (cluster generation {generation}){}",
                cluster["deleted_time"].as_str().unwrap_or_default(),
                cluster["deleted_by"].as_str().unwrap_or_default(),
                pools.concat()
            )
        }
        HyperFleet::CreateNodePool => {
            let spec = crate::nodepool::gcp_spec(scenario::NODEPOOL_REPLICAS, scenario::VERSION);
            let pool = crate::nodepool::nodepool_object(
                crate::ids::NODEPOOL_ID,
                crate::ids::LONGEST_NODEPOOL_NAME,
                CLUSTER_ID,
                1,
                spec,
            );
            let mut pools = api.nodepools();
            pools.push(pool);
            api.set_nodepools(pools);
            format!(
                "POST …/clusters/{{id}}/nodepools: NodePool {} ({} × n2-standard-8 in europe-west2-a, release {}; NodePool generation 1)",
                crate::ids::LONGEST_NODEPOOL_NAME,
                scenario::NODEPOOL_REPLICAS,
                scenario::VERSION
            )
        }
        HyperFleet::ScaleNodePool(replicas) => {
            let generation =
                api.patch_nodepool_spec(crate::ids::NODEPOOL_ID, &json!({"replicas": replicas}));
            format!(
                "PATCH …/nodepools/{{id}} spec.replicas = {replicas} (NodePool generation {})",
                generation.unwrap_or_default()
            )
        }
        HyperFleet::RemoveNodePool => {
            api.remove_nodepool(crate::ids::NODEPOOL_ID);
            format!(
                "NodePool {} reported Finalized=True: HyperFleet removes it (GET …/nodepools lists none)",
                crate::ids::LONGEST_NODEPOOL_NAME
            )
        }
        HyperFleet::NodePools(names) => {
            let cluster = api.cluster();
            let pools: Vec<Value> = names
                .iter()
                .map(|name| nodepool_object(name, &cluster))
                .collect();
            api.set_nodepools(pools);
            if names.is_empty() {
                "GET …/nodepools lists no NodePools (HyperFleet removed them)".to_owned()
            } else {
                format!("GET …/nodepools lists NodePool {}", names.join(", "))
            }
        }
    }
}

/// A NodePool of `cluster` as the HyperFleet API presents it (`fixtures/hyperfleet/
/// example-nodepool.json`, fewer fields); soft-deleted with its cluster when that is.
fn nodepool_object(name: &str, cluster: &Value) -> Value {
    let mut pool = json!({
        "id": scenario::NODEPOOL_ID,
        "kind": "NodePool",
        "href": format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}/nodepools/{}", scenario::NODEPOOL_ID),
        "name": name,
        "generation": 1,
        "owner_references": {
            "id": CLUSTER_ID,
            "kind": "Cluster",
            "href": format!("/api/hyperfleet/v1/clusters/{CLUSTER_ID}"),
        },
    });
    if let Some(deleted_time) = cluster.get("deleted_time") {
        pool["deleted_time"] = deleted_time.clone();
        pool["deleted_by"] = cluster["deleted_by"].clone();
        pool["generation"] = 2.into();
    }
    pool
}

/// `replicas 3, version 4.17.0, Ready=True, AllMachinesReady=True` of a NodePool status.
fn node_pool_line(status: &Value) -> String {
    let condition = |t: &str| {
        status["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == t))
            .map_or_else(
                || format!("{t} not reported"),
                |c| format!("{t}={}", c["status"].as_str().unwrap_or_default()),
            )
    };
    format!(
        "replicas {}, version {}, {}, {}",
        status["replicas"],
        status["version"].as_str().unwrap_or("(none yet)"),
        condition("Ready"),
        condition("AllMachinesReady")
    )
}

/// `Available=True, Progressing=False, …` of a HostedCluster status.
fn conditions_line(status: &Value) -> String {
    let conditions: Vec<String> = status["conditions"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    format!(
                        "{}={}",
                        c["type"].as_str().unwrap_or_default(),
                        c["status"].as_str().unwrap_or_default()
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    conditions.join(", ")
}

fn show_code(code: Option<i32>) -> String {
    code.map_or_else(|| "killed".to_owned(), |c| c.to_string())
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names of container `name`'s env in `job`.
    fn env_names(job: &Value, name: &str) -> Vec<String> {
        let containers = job["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap();
        let c = containers.iter().find(|c| c["name"] == name).unwrap();
        let mut names: Vec<String> = c["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    }

    /// The pulse's Job is `manifests/job.yaml` as the framework renders it; a scenario changes
    /// only what its operator would (the placement comment's variables, a shorter budget).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_pulse_job_is_the_job_manifest_rendered_for_the_fakes() {
        let dir = tempfile::tempdir().unwrap();
        let bed = Bed::start(dir.path()).await.unwrap();
        let cli = Cli::parse_from(["local-pulse"]);
        let pulse = |adapter| Pulse {
            adapter,
            ..Scenario::Lifecycle.pulses()[0].clone()
        };
        let manifest: Value =
            serde_saphyr::from_str(include_str!("../../../manifests/job.yaml")).unwrap();
        let real = pod::job(&bed, &pulse(Adapter::Real), &cli).unwrap();
        assert_eq!(real["metadata"]["name"], job_name().as_str());
        assert_eq!(
            real["spec"]["template"]["spec"]["volumes"],
            manifest["spec"]["template"]["spec"]["volumes"]
        );
        for container in ["adapter", "status-reporter"] {
            assert_eq!(env_names(&real, container), env_names(&manifest, container));
        }
        let placed = pod::job(&bed, &pulse(Adapter::Placed), &cli).unwrap();
        let mut expected = env_names(&manifest, "adapter");
        expected.retain(|n| n != "MANAGEMENT_CLUSTER_CONSUMER");
        expected.extend(
            ["JOB_NAMESPACE", "MANAGEMENT_CLUSTERS_FROM_API", "POD_NAME"].map(str::to_owned),
        );
        expected.sort();
        assert_eq!(env_names(&placed, "adapter"), expected);
    }

    /// Every scenario's pulses name the generation the HyperFleet API serves after their changes
    /// (a PATCH that changes the spec and the first DELETE each add one); a pulse that expects
    /// another is refused.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_pulse_acts_on_the_generation_the_api_serves() {
        for scenario in Scenario::ALL {
            let api = FakeHyperfleetApi::start(cluster_object(), "t")
                .await
                .unwrap();
            for pulse in scenario.pulses() {
                for change in &pulse.hyperfleet {
                    apply_hyperfleet(&api, change);
                }
                let served = served_generation(&api, &pulse);
                same_generation(served, &pulse).unwrap();
                let wrong = Pulse {
                    generation: pulse.generation + 1,
                    ..pulse.clone()
                };
                let err = same_generation(served, &wrong).unwrap_err();
                assert!(err.to_string().contains("expects"), "{err}");
            }
        }
        let last = Scenario::Delete.pulses().last().unwrap().generation;
        assert_eq!(last, GENERATION + 1);
    }

    #[test]
    fn the_job_name_and_id_are_production_shaped() {
        assert_eq!(job_name(), format!("hs-cp-{CLUSTER_ID}-g3"));
        assert!(job_name().len() <= 63, "{}", job_name());
        assert!(crate::ids::is_uuid_v7(CLUSTER_ID));
        assert_eq!(CLUSTER_NAME.len(), 53);
        let nodepool = nodepool_job_name(2_147_483_647);
        assert_eq!(
            nodepool,
            format!("hs-np-{}-g2147483647", crate::ids::NODEPOOL_ID)
        );
        assert!(nodepool.len() <= 63, "{nodepool}");
        assert!(crate::ids::is_uuid_v7(crate::ids::NODEPOOL_ID));
        assert_eq!(crate::ids::LONGEST_NODEPOOL_NAME.len(), 15);
    }
}
