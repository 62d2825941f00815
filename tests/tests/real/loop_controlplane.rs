//! Item 3a of issue 24: a control plane through the whole HyperFleet loop on real parts.
//!
//! `POST /clusters` (HyperFleet's nested spec) → Sentinel (polling the real API) → RabbitMQ →
//! the framework in serve mode with the shipped task config, unchanged, and its ServiceAccount's
//! RBAC → the pulse Job on the real API server → the played kubelet runs this checkout's adapter
//! and status-reporter → Maestro → the real agent → the HostedCluster on the real API server. The
//! test plays the HyperShift operator (`testbed::real::operator`: the recorded statuses, with its
//! lag after a spec change) and the other adapters the API requires (`validation`, `dns`,
//! `pullsecret`; for the NodePool of the deletion step also its `hypershift`, since no NodePool
//! deployment runs here: `loop_nodepool` has one). It asserts what HyperFleet concludes, through
//! the real API, and what the management cluster holds.

use k8s_openapi::api::batch::v1::Job;
use kube::api::Api;
use serde_json::{Value, json};
use testbed::real::RealSystems;
use testbed::real::framework::Deployment;
use testbed::real::hyperfleet_api::condition;
use testbed::real::loop_bed::{FRAMEWORK_SERVICE_ACCOUNT, JOB_NAMESPACE, LoopBed};
use testbed::real::operator::HostedClusterStage;

use crate::loop_common::{
    OTHER_CLUSTER_ADAPTERS, STEP, Watch, cluster_name, cluster_spec, hosted_cluster_applied,
    labels, others_report, short, until_concluded, work_generation,
};

const SUITE: &str = "real::loop_controlplane";
const IMAGE: &str = "quay.io/openshift-release-dev/ocp-release";

/// The stored report of our adapter, `hypershift`, once it is at `generation` and `ok`.
async fn hypershift_report(
    bed: &LoopBed,
    href: &str,
    what: &str,
    ok: impl Fn(&Value) -> bool,
) -> Value {
    bed.until(STEP, what, || async {
        let report = bed.api.status_of(href, "hypershift").await?;
        match report {
            Some(r) if ok(&r) => Ok(Some(r)),
            Some(r) => anyhow::bail!("stored: {r}"),
            None => Ok(None),
        }
    })
    .await
}

/// `(status, reason)` of condition `type_` in a stored report.
fn reported(report: &Value, type_: &str) -> (String, String) {
    let found = report["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .cloned()
        .unwrap_or_default();
    let text = |k: &str| found[k].as_str().unwrap_or_default().to_owned();
    (text("status"), text("reason"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_plane_from_post_to_hard_delete_through_the_real_loop() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = LoopBed::start(real, "loop-cp", &[Deployment::ControlPlane])
        .await
        .unwrap();
    let name = cluster_name(&bed);
    let created = bed
        .create_cluster(&name, &labels(&bed), &cluster_spec(&name))
        .await
        .unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    let href = created["href"].as_str().unwrap().to_owned();
    assert!(testbed::ids::is_uuid_v7(&id), "{created}");
    assert_eq!(created["generation"], 1);
    let watch = Watch::start(&bed.api, &href);

    let step = |what: &str| eprintln!("{SUITE}: {what} at {:.0?}", bed.elapsed());
    step("started");
    held_by_the_preconditions(&bed, &id, &href).await;
    step("held by the preconditions");
    created_and_reconciled(&bed, &id, &href, &name).await;
    step("reconciled at generation 1");
    let generation = upgraded(&bed, &href, &name).await;
    step("upgraded");
    let generation = labels_only(&bed, &href, &name, generation).await;
    step("reconciled after the labels-only PATCH");
    deleted_after_its_nodepool(&bed, &watch, &href, &name, generation).await;
    step("hard-deleted");
    watch.assert_rules(generation + 1);
}

/// The other adapters have not reported: Sentinel publishes, the framework's preconditions
/// hold every event: no Job, nothing reported.
async fn held_by_the_preconditions(bed: &LoopBed, id: &str, href: &str) {
    let cluster = bed.api.get(href).await.unwrap().unwrap();
    assert_eq!(
        short(&condition(&cluster, "Reconciled")),
        Some(("False".into(), 1, "ReconciledMissingAdapters".into()))
    );
    bed.until(
        STEP,
        "two events of the cluster held by the preconditions",
        || async { Ok((bed.framework_log_count(&[id, "NOT_MET"]) >= 2).then_some(())) },
    )
    .await;
    let jobs: Api<Job> = Api::namespaced(bed.kube.clone(), JOB_NAMESPACE);
    let job = jobs.get_opt(&format!("hs-cp-{id}-g1")).await.unwrap();
    assert!(job.is_none(), "a Job despite the preconditions: {job:?}");
    assert_eq!(bed.api.status_of(href, "hypershift").await.unwrap(), None);
}

/// The others report: the pulse Job runs, the agent applies the HostedCluster; the operator
/// reports it available: Reconciled, LastKnownReconciled, HypershiftSuccessful.
async fn created_and_reconciled(bed: &LoopBed, id: &str, href: &str, name: &str) {
    others_report(bed, href, &OTHER_CLUSTER_ADAPTERS, true).await;
    let hc = hosted_cluster_applied(bed, name).await;
    assert_eq!(
        hc["metadata"]["labels"]["hyperfleet.io/cluster-id"], id,
        "{hc}"
    );
    assert_eq!(
        hc["spec"]["release"]["image"],
        format!("{IMAGE}:4.17.0-x86_64")
    );
    assert_eq!(hc["spec"]["platform"]["gcp"]["project"], "my-project-123");
    assert_eq!(
        hc["spec"]["pullSecret"]["name"],
        format!("{name}-pull-secret")
    );
    // Before the operator wrote anything: stored as False at generation 1, not reconciled.
    let first = hypershift_report(bed, href, "hypershift's first report", |r| {
        r["observed_generation"] == 1 && reported(r, "Available").0 == "False"
    })
    .await;
    assert_eq!(reported(&first, "Applied").0, "True", "{first}");
    assert_eq!(
        first["data"]["management_cluster"],
        bed.consumer.as_str(),
        "{first}"
    );
    assert_eq!(first["metadata"]["job_name"], format!("hs-cp-{id}-g1"));
    // The framework created the Job as its ServiceAccount (the shipped Role is what allowed it).
    let created = bed.audited("create", "jobs", &format!("hs-cp-{id}-g1"));
    let framework = format!("system:serviceaccount:{JOB_NAMESPACE}:{FRAMEWORK_SERVICE_ACCOUNT}");
    assert!(created.contains(&(framework, 201)), "{created:?}");

    bed.operator
        .write_hosted_cluster(name, HostedClusterStage::Available)
        .await
        .unwrap();
    until_concluded(bed, href, "Reconciled at generation 1", |_, t| {
        short(&t[0]) == Some(("True".into(), 1, "ReconciledAll".into()))
            && short(&t[1]) == Some(("True".into(), 1, "AllAdaptersReconciled".into()))
            && short(&t[2]) == Some(("True".into(), 1, "ControlPlaneReady".into()))
    })
    .await;
    let report = bed
        .api
        .status_of(href, "hypershift")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report["data"]["version"], "4.17.0", "{report}");
    assert_eq!(
        report["data"]["control_plane_endpoint"],
        format!("https://api.{name}.example.com:443")
    );
}

/// A release upgrade 4.17.0 → 4.17.1 (generation 2): the agent applies it at once, the operator
/// lags (old status, old observedGeneration), then rolls out, then completes. Reconciled is False
/// throughout, LastKnownReconciled stays True at 1, and True at 2 once completed.
async fn upgraded(bed: &LoopBed, href: &str, name: &str) -> i64 {
    let mut spec = bed.api.get(href).await.unwrap().unwrap()["spec"].clone();
    spec["release"]["version"] = "4.17.1".into();
    let patched = bed
        .api
        .must("PATCH", href, Some(&json!({ "spec": spec })))
        .await
        .unwrap();
    assert_eq!(patched["generation"], 2, "{patched}");
    others_report(bed, href, &OTHER_CLUSTER_ADAPTERS, true).await;
    let hc = bed
        .until(STEP, "the agent applied release 4.17.1", || async {
            let hc = bed.operator.hosted_cluster(name).await?;
            Ok(hc.filter(|hc| hc["spec"]["release"]["image"] == format!("{IMAGE}:4.17.1-x86_64")))
        })
        .await;
    // The operator has not looked yet.
    assert_ne!(
        hc["status"]["version"]["observedGeneration"], hc["metadata"]["generation"],
        "{hc}"
    );
    // The adapter says so (issue 23): AwaitingOperator, not available, until the operator has
    // observed generation 2's spec.
    let lagging = until_concluded(
        bed,
        href,
        "AwaitingOperator while the operator lags",
        |_, t| short(&t[2]) == Some(("False".into(), 2, "AwaitingOperator".into())),
    )
    .await;
    let [reconciled, known, _] = crate::loop_common::triple(&lagging);
    assert_eq!(
        short(&reconciled).map(|c| (c.0, c.1)),
        Some(("False".into(), 2))
    );
    assert_eq!(short(&known).map(|c| (c.0, c.1)), Some(("True".into(), 1)));
    let hc = bed.operator.hosted_cluster(name).await.unwrap().unwrap();
    assert_ne!(
        hc["status"]["version"]["observedGeneration"], hc["metadata"]["generation"],
        "the operator has still not looked: {hc}"
    );

    bed.operator
        .write_hosted_cluster(name, HostedClusterStage::RollingOut)
        .await
        .unwrap();
    until_concluded(bed, href, "Upgrading at generation 2", |_, t| {
        short(&t[2]) == Some(("False".into(), 2, "Upgrading".into()))
            && short(&t[0]).is_some_and(|c| c.0 == "False")
            && short(&t[1]).is_some_and(|c| (c.0.as_str(), c.1) == ("True", 1))
    })
    .await;
    let report = bed
        .api
        .status_of(href, "hypershift")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            report["data"]["version"].as_str(),
            report["data"]["desired_version"].as_str()
        ),
        (Some("4.17.0"), Some("4.17.1")),
        "{report}"
    );

    bed.operator
        .write_hosted_cluster(name, HostedClusterStage::Available)
        .await
        .unwrap();
    until_concluded(bed, href, "Reconciled at generation 2", |_, t| {
        short(&t[0]) == Some(("True".into(), 2, "ReconciledAll".into()))
            && short(&t[1]).is_some_and(|c| (c.0.as_str(), c.1) == ("True", 2))
            && short(&t[2]) == Some(("True".into(), 2, "ControlPlaneReady".into()))
    })
    .await;
    let report = bed
        .api
        .status_of(href, "hypershift")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report["data"]["version"], "4.17.1", "{report}");
    2
}

/// A PATCH of the labels only: the API bumps the generation as for a spec change; once every
/// adapter reported at it, Reconciled again (the HostedCluster's spec did not change).
async fn labels_only(bed: &LoopBed, href: &str, name: &str, before: i64) -> i64 {
    let mut labels = labels(bed);
    labels["tier"] = "gold".into();
    let patched = bed
        .api
        .must("PATCH", href, Some(&json!({ "labels": labels })))
        .await
        .unwrap();
    let generation = patched["generation"].as_i64().unwrap();
    eprintln!("{SUITE}: a labels-only PATCH took the generation from {before} to {generation}");
    assert_eq!(generation, before + 1, "{patched}");
    assert_eq!(
        short(&condition(&patched, "Reconciled")).map(|c| (c.0, c.1)),
        Some(("False".into(), generation))
    );
    others_report(bed, href, &OTHER_CLUSTER_ADAPTERS, true).await;
    until_concluded(
        bed,
        href,
        "Reconciled after the labels-only PATCH",
        |_, t| short(&t[0]) == Some(("True".into(), generation, "ReconciledAll".into())),
    )
    .await;
    let hc = bed.operator.hosted_cluster(name).await.unwrap().unwrap();
    assert_eq!(
        hc["spec"]["release"]["image"],
        format!("{IMAGE}:4.17.1-x86_64")
    );
    generation
}

/// DELETE of a cluster with a NodePool: held (`NodePoolsExist`) until the NodePool is gone, then
/// the work deleted and the HostedCluster with it (the operator, played, lets it go once it is
/// being deleted, as the real one did with nothing provisioned), and the API hard-deletes the
/// cluster.
async fn deleted_after_its_nodepool(
    bed: &LoopBed,
    watch: &Watch,
    href: &str,
    name: &str,
    before: i64,
) {
    let nodepool = bed
        .api
        .create_nodepool(
            href,
            "workers-euw2-a1",
            &labels(bed),
            &testbed::nodepool::gcp_spec(3, "4.17.1"),
        )
        .await
        .unwrap();
    let np_href = nodepool["href"].as_str().unwrap().to_owned();
    let deleted = bed.api.must("DELETE", href, None).await.unwrap();
    let generation = before + 1;
    assert_eq!(deleted["generation"], generation, "{deleted}");
    assert!(deleted["deleted_time"].is_string(), "{deleted}");
    let np = bed.api.get(&np_href).await.unwrap().unwrap();
    assert!(np["deleted_time"].is_string(), "the DELETE cascades: {np}");

    let held = hypershift_report(bed, href, "deletion held by the NodePool", |r| {
        r["observed_generation"] == generation
            && reported(r, "Finalized") == ("False".into(), "NodePoolsExist".into())
    })
    .await;
    assert_eq!(reported(&held, "Available").0, "False", "{held}");
    let hc = bed.operator.hosted_cluster(name).await.unwrap().unwrap();
    assert!(
        hc["metadata"]["deletionTimestamp"].is_null(),
        "nothing deleted yet: {hc}"
    );

    // The NodePool's adapters (played here) finalize it: the API hard-deletes it.
    others_report(bed, &np_href, &["validation", "hypershift"], true).await;
    bed.until(STEP, "the NodePool hard-deleted", || async {
        Ok(bed.api.get(&np_href).await?.is_none().then_some(()))
    })
    .await;
    others_report(bed, href, &OTHER_CLUSTER_ADAPTERS, true).await;

    bed.until(STEP, "the HostedCluster being deleted", || async {
        let hc = bed.operator.hosted_cluster(name).await?;
        Ok(hc
            .filter(|hc| hc["metadata"]["deletionTimestamp"].is_string())
            .map(|_| ()))
    })
    .await;
    bed.operator.release_hosted_cluster(name).await.unwrap();
    bed.until_hard_deleted(STEP, "the cluster hard-deleted by the API", href)
        .await;
    assert_eq!(bed.operator.hosted_cluster(name).await.unwrap(), None);
    let work = format!("hostedcluster-{}", href.rsplit('/').next().unwrap());
    assert_eq!(
        work_generation(bed, &work).await,
        None,
        "{work} is still in Maestro"
    );
    // What the adapter reported on the way, at the deletion's generation.
    let finalized: Vec<(i64, String, String)> = watch
        .reported("Finalized")
        .into_iter()
        .filter(|(g, _, _)| *g == generation)
        .collect();
    let reasons: Vec<&str> = finalized.iter().map(|(_, _, r)| r.as_str()).collect();
    let requested = reasons
        .iter()
        .position(|r| *r == "DeletionRequested" || *r == "FinalizersRunning");
    assert!(
        reasons.first() == Some(&"NodePoolsExist") && requested.is_some(),
        "Finalized at generation {generation}: {finalized:?}"
    );
}
