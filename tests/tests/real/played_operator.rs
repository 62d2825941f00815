//! The HyperShift operator the loop suites play (`testbed::real::operator`) writes only what the
//! real HostedCluster CRD (schema and CEL rules, on the kit's API server) accepts: its takeover
//! (finalizer, `spec.clusterID`, `spec.infraID`), every status stage, and the end of a deletion.

use std::time::Duration;

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, PostParams};
use kube::core::GroupVersionKind;
use serde_json::Value;
use testbed::real::operator::{FINALIZER, HostedClusterStage, NAMESPACE, Operator};
use testbed::real::wait::eventually;
use testbed::real::{RealSystems, kube_access, unique};

const SUITE: &str = "real::played_operator";

/// The HostedCluster the adapter sent in the Maestro recordings, named `name`.
fn recorded_hosted_cluster(name: &str) -> Value {
    let dir = job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/maestro/real")
        .expect("the team folder");
    let recording: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("04-available.json")).unwrap())
            .unwrap();
    let mut hc = recording["body"]["manifests"][0].clone();
    hc["metadata"]["name"] = name.into();
    hc["metadata"]["namespace"] = NAMESPACE.into();
    hc
}

#[tokio::test]
async fn the_played_operators_writes_pass_the_real_hostedcluster_crd() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let kube = real.kube_client().await.unwrap();
    kube_access::ensure_namespace(&kube, NAMESPACE)
        .await
        .unwrap();
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("hypershift.openshift.io", "v1beta1", "HostedCluster"),
        "hostedclusters",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(kube.clone(), NAMESPACE, &resource);
    let name = unique("played-operator");
    let object: DynamicObject = serde_json::from_value(recorded_hosted_cluster(&name)).unwrap();
    api.create(&PostParams::default(), &object).await.unwrap();
    let operator = Operator::new(kube.clone());

    let progressing = operator
        .write_hosted_cluster(&name, HostedClusterStage::Progressing)
        .await
        .unwrap();
    // Taken over as the real operator does: finalizer, clusterID, infraID (generation 1 → 3).
    assert_eq!(progressing["metadata"]["finalizers"][0], FINALIZER);
    assert_eq!(progressing["metadata"]["generation"], 3);
    assert!(
        progressing["spec"]["infraID"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{name}-"))
    );
    assert_eq!(progressing["status"]["version"]["observedGeneration"], 3);
    assert_eq!(
        progressing["status"]["version"]["history"][0]["state"],
        "Partial"
    );

    let available = operator
        .write_hosted_cluster(&name, HostedClusterStage::Available)
        .await
        .unwrap();
    let history = &available["status"]["version"]["history"];
    assert_eq!(history[0]["state"], "Completed", "{history}");
    assert_eq!(history[0]["version"], "4.19.3");
    assert_eq!(
        available["status"]["controlPlaneEndpoint"]["host"],
        format!("api.{name}.example.com")
    );

    let rolling = operator
        .write_hosted_cluster(&name, HostedClusterStage::RollingOut)
        .await
        .unwrap();
    assert_eq!(
        rolling["status"]["version"]["history"][0]["state"],
        "Partial"
    );

    // Deletion waits for the operator's finalizer, then the object is gone.
    api.delete(&name, &DeleteParams::default()).await.unwrap();
    let held = operator.hosted_cluster(&name).await.unwrap().unwrap();
    assert!(held["metadata"]["deletionTimestamp"].is_string(), "{held}");
    assert!(operator.release_hosted_cluster(&name).await.unwrap());
    eventually(
        Duration::from_secs(20),
        "the HostedCluster gone",
        || async {
            Ok(operator
                .hosted_cluster(&name)
                .await?
                .is_none()
                .then_some(()))
        },
    )
    .await
    .unwrap();
}
