//! `hypershift-adapter diagnose` on the real servers (issue 24 item 3e), at the placement states
//! of `real::placement` and along a control plane's life: each pulse runs as a Job on the real
//! API server (`testbed::real::job_pulse`: the shipped Job template, the real job controller's Pod,
//! the adapter and the real status-reporter as that Pod's containers, the Job's report PUT to the
//! real HyperFleet API as the framework's `statusPayload`), the works are the real Maestro's, the
//! HostedClusters what the real agents applied (their status written by the played operator).
//! diagnose runs as a ServiceAccount whose only grant is `manifests/rbac-diagnose.yaml` (applied
//! as shipped in the test's namespace, bound as its header says, token from the real TokenRequest
//! API), and must name the link that decides each state.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use testbed::real::agents::{StoppedAgent, add_consumer_without_agent};
use testbed::real::kube_access::{apply, service_account_kubeconfig};
use testbed::real::operator::HostedClusterStage;
use testbed::real::placement::{
    AGENT, Cluster, PlacementBed, apply_shipped, own_consumer, shared_consumers,
};
use testbed::real::wait::eventually;
use testbed::real::{RealSystems, unique};

const SUITE: &str = "real::diagnose_real";
/// The ServiceAccount diagnose runs as.
const DIAGNOSE_ACCOUNT: &str = "diagnose-sre";

/// Prints how long the test has run at `step` (shown with `--nocapture`).
macro_rules! step {
    ($started:expr, $what:expr) => {
        println!("{:>6.1}s {}", $started.elapsed().as_secs_f64(), $what)
    };
}

/// The diagnose identity of a bed: `rbac-diagnose.yaml`'s Role in the bed's namespace, bound to
/// ServiceAccount [`DIAGNOSE_ACCOUNT`] (the file ships no binding), and its kubeconfig.
async fn diagnose_identity(bed: &PlacementBed) -> PathBuf {
    apply_shipped(&bed.kube, "rbac-diagnose.yaml", &bed.namespace)
        .await
        .unwrap();
    let ns = bed.namespace.as_str();
    apply(
        &bed.kube,
        &json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": DIAGNOSE_ACCOUNT, "namespace": ns}}),
    )
    .await
    .unwrap();
    apply(
        &bed.kube,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "hypershift-adapter-diagnose", "namespace": ns},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "hypershift-adapter-diagnose"},
                "subjects": [{"kind": "ServiceAccount", "name": DIAGNOSE_ACCOUNT, "namespace": ns}]}),
    )
    .await
    .unwrap();
    service_account_kubeconfig(
        bed.real,
        &bed.kube,
        ns,
        DIAGNOSE_ACCOUNT,
        3600,
        &bed.dir().join("diagnose.kubeconfig"),
    )
    .await
    .unwrap()
}

/// One `diagnose cluster <id> -o json` run (every other setting from flags, nothing from this
/// process's environment), with `extra` flags: its JSON document.
fn diagnose(bed: &PlacementBed, kubeconfig: &Path, cluster: &Cluster, extra: &[&str]) -> Value {
    let out = std::process::Command::new(testbed::binaries::path("hypershift-adapter"))
        .args(["diagnose", "cluster", &cluster.id, "-o", "json"])
        .args(["--hyperfleet-api", bed.real.var("HYPERFLEET_API_URL")])
        .args(["--maestro-api-url", bed.real.var("MAESTRO_API_URL")])
        .args(["--maestro-source-id", &bed.source])
        .args(["--namespace", &bed.namespace])
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(extra)
        .env_clear()
        .output()
        .unwrap();
    let document: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "diagnose printed no JSON ({e}), exit {:?}: {}{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(
        out.status.code(),
        document["exit_code"]
            .as_i64()
            .and_then(|c| i32::try_from(c).ok()),
        "{document:#}"
    );
    document
}

/// `(verdict status, deciding link)`.
fn verdict(document: &Value) -> (String, String) {
    let v = &document["verdict"];
    (
        v["status"].as_str().unwrap_or_default().to_owned(),
        v["link"].as_str().unwrap_or_default().to_owned(),
    )
}

/// Link `id` of a diagnose document.
fn link<'a>(document: &'a Value, id: &str) -> &'a Value {
    document["links"]
        .as_array()
        .and_then(|l| l.iter().find(|l| l["id"] == id))
        .unwrap_or(&Value::Null)
}

/// Asserts the verdict, and that no link is `?` because of the diagnose identity's grants (every
/// Kubernetes read passed `rbac-diagnose.yaml`).
fn assert_verdict(document: &Value, want: (&str, &str)) {
    let got = verdict(document);
    assert_eq!((got.0.as_str(), got.1.as_str()), want, "{document:#}");
    for id in ["framework.job", "job.report"] {
        assert_ne!(link(document, id)["mark"], "unknown", "{document:#}");
    }
}

/// Job pulses of `cluster` (each Job deleted before the next, as its TTL would) until one's
/// Available is `want`; that Job's report is PUT to HyperFleet. The Job is left in place.
async fn job_pulse_until(
    bed: &PlacementBed,
    cluster: &Cluster,
    want: (&str, &str),
) -> testbed::real::job_pulse::JobRun {
    let run = eventually(AGENT, &format!("Available={want:?}"), || async {
        let run = bed.job_pulse(cluster).await?;
        let got = run.pulse.condition("Available");
        if (got.0.as_str(), got.1.as_str()) == want {
            return Ok(Some(run));
        }
        bed.delete_job(&run.job).await?;
        Ok(None)
    })
    .await
    .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(bed.report_job(cluster, &run).await.unwrap(), 201);
    run
}

/// A placement whose chosen management cluster has no agent, then its failover: while the work
/// waits for an agent that never comes, diagnose is in progress at `agent.applied`, then (past
/// `--agent-stale-after`) stuck there naming the consumer; once the pulse failed over and the
/// other management cluster's agent applied it, the chain holds up to the HostedCluster, which
/// waits for the operator (in progress at `hypershift.hostedcluster`) on the new consumer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnose_follows_a_placement_from_a_missing_agent_to_its_failover() {
    let t = std::time::Instant::now();
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let elsewhere = shared_consumers(real)[2].clone();
    let absent = unique("place-noagent");
    add_consumer_without_agent(real, &absent).await.unwrap();
    let bed = PlacementBed::start(real, "dg-fo").await.unwrap();
    let kubeconfig = diagnose_identity(&bed).await;
    let mc_absent = bed
        .add_management_cluster("absent", &absent, 10)
        .await
        .unwrap();
    bed.report_health(&mc_absent, true).await.unwrap();
    let mc_else = bed
        .add_management_cluster("else", &elsewhere, 10)
        .await
        .unwrap();
    let cluster = bed.create_cluster("c0").await.unwrap();
    bed.others_report(&cluster).await.unwrap();
    step!(t, "set up");

    let first = bed.job_pulse(&cluster).await.unwrap();
    assert_eq!(first.pulse.placed_on(), absent, "{}", first.pulse.explain());
    assert_eq!(bed.report_job(&cluster, &first).await.unwrap(), 201);
    let waiting = diagnose(&bed, &kubeconfig, &cluster, &[]);
    assert_verdict(&waiting, ("in_progress", "agent.applied"));
    assert_eq!(waiting["consumer"], absent.as_str());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let stuck = diagnose(&bed, &kubeconfig, &cluster, &["--agent-stale-after", "2s"]);
    assert_verdict(&stuck, ("stuck", "agent.applied"));
    let evidence = link(&stuck, "agent.applied")["evidence"].as_str().unwrap();
    assert!(
        evidence.contains(&format!("no Applied from the agent of {absent}")),
        "{evidence}"
    );
    step!(t, "placed, not applied");

    bed.report_health(&mc_absent, false).await.unwrap();
    bed.report_health(&mc_else, true).await.unwrap();
    bed.delete_job(&first.job).await.unwrap();
    let failover = bed.job_pulse(&cluster).await.unwrap();
    assert_eq!(
        failover.pulse.condition("Applied"),
        ("True".into(), "FailedOverBeforeApply".into()),
        "{}",
        failover.pulse.explain()
    );
    assert_eq!(bed.report_job(&cluster, &failover).await.unwrap(), 201);
    let live = bed
        .works(&cluster)
        .await
        .unwrap()
        .into_iter()
        .find(|w| w.deleted_at.is_none())
        .unwrap();
    bed.applied_by(&cluster, &live.id).await.unwrap();
    let document = eventually(AGENT, "the agent's status in Maestro", || async {
        let document = diagnose(&bed, &kubeconfig, &cluster, &[]);
        Ok((link(&document, "agent.applied")["mark"] == "ok").then_some(document))
    })
    .await
    .unwrap();
    assert_verdict(&document, ("in_progress", "hypershift.hostedcluster"));
    assert_eq!(document["consumer"], elsewhere.as_str());
    let report = link(&document, "job.report")["evidence"].as_str().unwrap();
    assert!(
        report.contains("Applied=True FailedOverBeforeApply"),
        "{report}"
    );
    step!(t, "failed over");
}

/// A region whose one management cluster takes one control plane: the second cluster's pulse is
/// refused, and diagnose is stuck at `job.report` with the adapter's refusal; the first cluster
/// is followed to ready (healthy) and through a release upgrade the operator has not observed
/// yet (in progress at `hypershift.hostedcluster`, `AwaitingOperator`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnose_names_a_full_region_a_ready_control_plane_and_the_operators_lag() {
    let t = std::time::Instant::now();
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let consumer = shared_consumers(real)[0].clone();
    let bed = PlacementBed::start(real, "dg-cap").await.unwrap();
    let kubeconfig = diagnose_identity(&bed).await;
    let mc = bed
        .add_management_cluster("only", &consumer, 1)
        .await
        .unwrap();
    bed.report_health(&mc, true).await.unwrap();
    let placed = bed.create_cluster("c0").await.unwrap();
    let refused = bed.create_cluster("c1").await.unwrap();
    for cluster in [&placed, &refused] {
        bed.others_report(cluster).await.unwrap();
    }
    step!(t, "set up");

    let first = bed.job_pulse(&placed).await.unwrap();
    assert_eq!(
        first.pulse.placed_on(),
        consumer,
        "{}",
        first.pulse.explain()
    );
    assert_eq!(bed.report_job(&placed, &first).await.unwrap(), 201);
    let full = bed.job_pulse(&refused).await.unwrap();
    assert_eq!(
        full.pulse.condition("Applied"),
        ("False".into(), "NoManagementClusterAvailable".into()),
        "{}",
        full.pulse.explain()
    );
    assert_eq!(bed.report_job(&refused, &full).await.unwrap(), 201);
    let document = diagnose(&bed, &kubeconfig, &refused, &[]);
    assert_verdict(&document, ("stuck", "job.report"));
    let evidence = link(&document, "job.report")["evidence"].as_str().unwrap();
    assert!(
        evidence.contains(&format!("{}: full: 1/1", mc.name)),
        "{evidence}"
    );
    assert!(
        document["verdict"]["meaning"]
            .as_str()
            .unwrap()
            .contains("NoManagementClusterAvailable"),
        "{document:#}"
    );
    // The Job gone (its TTL), the stored report still decides.
    bed.delete_job(&full.job).await.unwrap();
    let later = diagnose(&bed, &kubeconfig, &refused, &[]);
    assert_verdict(&later, ("stuck", "job.report"));
    step!(t, "full region");

    let work = bed.works(&placed).await.unwrap().remove(0);
    bed.applied_by(&placed, &work.id).await.unwrap();
    bed.operator
        .write_hosted_cluster(&placed.name, HostedClusterStage::Available)
        .await
        .unwrap();
    bed.delete_job(&first.job).await.unwrap();
    job_pulse_until(&bed, &placed, ("True", "ControlPlaneReady")).await;
    let ready = diagnose(&bed, &kubeconfig, &placed, &[]);
    assert_verdict(&ready, ("healthy", ""));
    assert_eq!(ready["exit_code"], 0);
    step!(t, "ready");

    let mut spec = bed.api.get(&placed.href).await.unwrap().unwrap()["spec"].clone();
    spec["release"]["version"] = testbed::local_pulse::scenario::UPGRADE_VERSION.into();
    bed.api
        .must("PATCH", &placed.href, Some(&json!({ "spec": spec })))
        .await
        .unwrap();
    bed.others_report(&placed).await.unwrap();
    let updated = bed.job_pulse(&placed).await.unwrap();
    assert_eq!(
        updated.pulse.condition("Applied").1,
        "ManifestWorkUpdated",
        "{}",
        updated.pulse.explain()
    );
    bed.delete_job(&updated.job).await.unwrap();
    job_pulse_until(&bed, &placed, ("False", "AwaitingOperator")).await;
    let lag = diagnose(&bed, &kubeconfig, &placed, &[]);
    assert_verdict(&lag, ("in_progress", "hypershift.hostedcluster"));
    let evidence = link(&lag, "hypershift.hostedcluster")["evidence"]
        .as_str()
        .unwrap();
    assert!(evidence.contains("AwaitingOperator"), "{evidence}");
    step!(t, "awaiting the operator");
}

/// A ready control plane whose management cluster's agent stops (and `mgmt-health` reports it
/// unavailable): the fed-back status is the last the agent sent, so every link of the work looks
/// as before; diagnose must still say the control plane is stuck, at `agent.applied`, naming the
/// management cluster, from the pulse's `ManagementClusterUnavailable`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnose_names_the_management_cluster_whose_agent_is_down() {
    let t = std::time::Instant::now();
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let out = own_consumer(real);
    let bed = PlacementBed::start(real, "dg-out").await.unwrap();
    let kubeconfig = diagnose_identity(&bed).await;
    let mc = bed.add_management_cluster("out", &out, 10).await.unwrap();
    bed.report_health(&mc, true).await.unwrap();
    let cluster = bed.create_cluster("c0").await.unwrap();
    bed.others_report(&cluster).await.unwrap();
    step!(t, "set up");

    let first = bed.job_pulse(&cluster).await.unwrap();
    assert_eq!(first.pulse.placed_on(), out, "{}", first.pulse.explain());
    let work = bed.works(&cluster).await.unwrap().remove(0);
    bed.applied_by(&cluster, &work.id).await.unwrap();
    bed.operator
        .write_hosted_cluster(&cluster.name, HostedClusterStage::Available)
        .await
        .unwrap();
    bed.delete_job(&first.job).await.unwrap();
    let ready = job_pulse_until(&bed, &cluster, ("True", "ControlPlaneReady")).await;
    assert_verdict(&diagnose(&bed, &kubeconfig, &cluster, &[]), ("healthy", ""));
    step!(t, "ready");

    let stopped = StoppedAgent::stop(real, &out).unwrap();
    bed.report_health(&mc, false).await.unwrap();
    bed.delete_job(&ready.job).await.unwrap();
    let outage = bed.job_pulse(&cluster).await.unwrap();
    assert_eq!(
        outage.pulse.condition("Health"),
        ("False".into(), "ManagementClusterUnavailable".into()),
        "{}",
        outage.pulse.explain()
    );
    assert_eq!(bed.report_job(&cluster, &outage).await.unwrap(), 201);
    let document = diagnose(&bed, &kubeconfig, &cluster, &[]);
    assert_verdict(&document, ("stuck", "agent.applied"));
    let evidence = link(&document, "agent.applied")["evidence"]
        .as_str()
        .unwrap();
    assert!(evidence.contains(&out), "{evidence}");
    // The Job gone (its TTL), the stored report still decides.
    bed.delete_job(&outage.job).await.unwrap();
    assert_verdict(
        &diagnose(&bed, &kubeconfig, &cluster, &[]),
        ("stuck", "agent.applied"),
    );
    step!(t, "outage");
    drop(stopped);
    step!(t, "agent restarted");
}
