//! Issue 23 on the real servers: the real Maestro server and agent apply the adapter's work to
//! the real kube-apiserver, whose HostedCluster/NodePool CRDs bump `metadata.generation` on a
//! spec change; the HyperShift operator is played on that API server
//! (`testbed::real::operator`), writing its status when the test says so. In the window between
//! the agent's apply of an update and the operator's next status write, the pulse at the new
//! generation must report `Available=False AwaitingOperator` (never True, which is what it said
//! before the fix), and True again once the operator's status observes the new generation and the
//! rollout completes.
//!
//! The pulses run directly against the shared kit (`crate::direct`).

use testbed::nodepool::NodePoolStatus;
use testbed::real::RealSystems;
use testbed::real::operator::HostedClusterStage;

use crate::direct::{Bed, UPGRADE, VERSION, assert_leads, available, condition, never_true};

const SUITE: &str = "real::observed_generation";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_the_operator_has_not_observed_is_not_available_until_it_completes() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::start(real, "obsgen-cp").await;
    bed.control_plane_serves().await;
    let before = bed.hosted_cluster().await.unwrap();
    let generation_before = before["metadata"]["generation"].as_i64().unwrap();

    // HyperFleet bumps the cluster to generation 2 (release 4.17.1): the work is updated.
    let updated = bed.controlplane(2, UPGRADE);
    assert_leads(
        &updated,
        &[
            ("Applied", "True", "ManifestWorkUpdated"),
            ("Available", "False", "Updating"),
        ],
    );
    // The real agent applies it: the real API server bumps the HostedCluster's generation; the
    // operator's status still says the previous one.
    let applied = bed.hosted_cluster_at(UPGRADE).await;
    let generation_applied = applied["metadata"]["generation"].as_i64().unwrap();
    assert_eq!(generation_applied, generation_before + 1, "{applied}");

    // Until the agent feeds the apply back, the report is already AwaitingOperator (the status
    // wants the previous release) but reads the previous generation: wait for the feedback.
    let awaiting = bed
        .until_saying(
            "the operator's window, fed back",
            ("False", "AwaitingOperator"),
            &[
                format!("the object is at metadata.generation {generation_applied}"),
                format!("its status describes generation {generation_before}"),
                "the HyperShift operator".to_owned(),
            ],
            || bed.controlplane(2, UPGRADE),
            never_true,
        )
        .await;
    assert_eq!(awaiting["observed_generation"], 2);
    assert_eq!(
        condition(&awaiting, "Health")["status"],
        "True",
        "within the bound: {awaiting}"
    );

    // The operator reconciles: rolling 4.17.1 out (Upgrading), then completed (ready).
    bed.operator
        .write_hosted_cluster(&bed.name, HostedClusterStage::RollingOut)
        .await
        .unwrap();
    bed.until(
        "the rollout",
        ("False", "Upgrading"),
        || bed.controlplane(2, UPGRADE),
        never_true,
    )
    .await;
    bed.operator_completes(2, UPGRADE, |_| {}).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nodepool_scale_the_operator_has_not_observed_is_not_available() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::start(real, "obsgen-np").await;
    bed.control_plane_serves().await;
    let np = bed.nodepool_name();
    let get = || async { bed.operator.nodepool(&np).await.unwrap() };

    let created = bed.nodepool(1, 3);
    assert_eq!(available(&created).1, "Provisioning", "{created}");
    bed.object_until("the NodePool applied", get, |_| true)
        .await;
    bed.operator
        .write_nodepool(&np, NodePoolStatus::gcp_ready(3, VERSION).to_json())
        .await
        .unwrap();
    bed.until(
        "3 replicas ready",
        ("True", "NodePoolReady"),
        || bed.nodepool(1, 3),
        |_| {},
    )
    .await;

    // Scale to 5 at generation 2; applied by the real agent; the operator has not looked yet
    // (its status: Ready, 3 of 3, observedGeneration 1).
    let updated = bed.nodepool(2, 5);
    assert_eq!(available(&updated).1, "Updating", "{updated}");
    bed.object_until("the scale applied", get, |o| o["spec"]["replicas"] == 5)
        .await;
    bed.until_saying(
        "the operator's window, fed back",
        ("False", "AwaitingOperator"),
        &[
            "the object is at metadata.generation 2".to_owned(),
            "its status describes generation 1".to_owned(),
        ],
        || bed.nodepool(2, 5),
        never_true,
    )
    .await;
    bed.operator
        .write_nodepool(&np, NodePoolStatus::gcp_ready(5, VERSION).to_json())
        .await
        .unwrap();
    bed.until(
        "5 replicas ready",
        ("True", "NodePoolReady"),
        || bed.nodepool(2, 5),
        |_| {},
    )
    .await;
}
