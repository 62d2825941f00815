//! The hub backend ([`HubWorkClient`]) against the testbed API server: update guarded by the
//! resourceVersion read, delete with and without finalizers, and the same answers the Maestro
//! backend gives in the same states (`maestro_client.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use hypershift_adapter::work::hub::{DEFAULT_TIMEOUT, HubWorkClient};
use hypershift_adapter::work::{WorkClient, WorkError};
use serde_json::{Value, json};
use testbed::ids::CLUSTER_ID;
use testbed::kube_api::ApiServer;

const WORKS: &str = "/apis/work.open-cluster-management.io/v1";
const CONSUMER: &str = "mgmt-1";
/// What the OCM hub puts on every ManifestWork; the adapter does not own it.
const HUB_FINALIZER: &str = "cluster.open-cluster-management.io/manifest-work-cleanup";

fn name() -> String {
    format!("hostedcluster-{CLUSTER_ID}")
}

fn work(image: &str, generation: &str) -> Value {
    json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": name(),
                     "labels": {"hyperfleet.io/cluster-id": CLUSTER_ID, "hyperfleet.io/adapter": "controlplane"},
                     "annotations": {"hyperfleet.io/generation": generation}},
        "spec": {"workload": {"manifests": [{
            "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
            "metadata": {"name": "prod-eu-1", "namespace": "clusters"},
            "spec": {"release": {"image": image}}}]},
                 "deleteOption": {"propagationPolicy": "Foreground"}}
    })
}

async fn start() -> (ApiServer, HubWorkClient) {
    let server = ApiServer::start().await;
    let client = HubWorkClient::new(server.client().await, CONSUMER, DEFAULT_TIMEOUT);
    (server, client)
}

fn stored(server: &ApiServer) -> Option<Value> {
    server.object(WORKS, "manifestworks", Some(CONSUMER), &name())
}

/// Adds the hub's finalizer, as the OCM hub controllers would.
fn add_finalizer(server: &ApiServer) {
    let mut object = stored(server).unwrap();
    object["metadata"]["finalizers"] = json!([HUB_FINALIZER]);
    server.put_object(WORKS, Some(CONSUMER), object);
}

const IMAGE_1: &str = "quay.io/openshift-release-dev/ocp-release:4.19.3-multi";
const IMAGE_2: &str = "quay.io/openshift-release-dev/ocp-release:4.19.4-multi";

#[tokio::test]
async fn update_replaces_what_the_adapter_owns_and_is_guarded_by_the_resource_version() {
    let (server, client) = start().await;
    client.create(&work(IMAGE_1, "2")).await.unwrap();
    add_finalizer(&server);
    let first = client.get(&name()).await.unwrap().unwrap();
    assert!(first.resource_version.is_some());
    assert_eq!(first.version, Some(1));
    assert_eq!(first.workload[0]["spec"]["release"]["image"], IMAGE_1);

    let mut next = work(IMAGE_2, "3");
    next["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("hyperfleet.io/adapter");
    client.update(&next, &first).await.unwrap();
    let second = client.get(&name()).await.unwrap().unwrap();
    assert_eq!(
        second.version,
        Some(2),
        "a spec change bumps the generation"
    );
    assert_eq!(second.workload[0]["spec"]["release"]["image"], IMAGE_2);
    assert_eq!(second.annotations["hyperfleet.io/generation"], "3");
    assert!(
        !second.labels.contains_key("hyperfleet.io/adapter"),
        "labels are replaced whole"
    );
    assert_ne!(second.resource_version, first.resource_version);
    assert_eq!(
        stored(&server).unwrap()["metadata"]["finalizers"],
        json!([HUB_FINALIZER]),
        "what other writers own stays"
    );

    // What was read first is stale now.
    let stale = client
        .update(&work(IMAGE_1, "4"), &first)
        .await
        .unwrap_err();
    assert!(matches!(stale, WorkError::Conflict { .. }), "{stale:?}");
    assert_eq!(
        client.get(&name()).await.unwrap().unwrap().workload[0]["spec"]["release"]["image"],
        IMAGE_2,
        "a refused update changes nothing"
    );

    // Unchanged spec: the API server changes nothing (unlike Maestro, whose version bumps).
    client.update(&next, &second).await.unwrap();
    let third = client.get(&name()).await.unwrap().unwrap();
    assert_eq!(third.version, Some(2));
    assert_eq!(third.resource_version, second.resource_version);
}

#[tokio::test]
async fn delete_held_by_a_finalizer_then_gone() {
    let (server, client) = start().await;
    client.create(&work(IMAGE_1, "2")).await.unwrap();
    add_finalizer(&server);
    let before = client.get(&name()).await.unwrap().unwrap();

    client.delete(&name()).await.unwrap();
    let deleting = client
        .get(&name())
        .await
        .unwrap()
        .expect("held by the finalizer");
    assert!(deleting.deleting.is_some());
    let object = stored(&server).unwrap();
    assert!(object["metadata"]["deletionTimestamp"].is_string());

    // Deleting again is fine and changes nothing.
    client.delete(&name()).await.unwrap();
    assert_eq!(stored(&server).unwrap(), object);

    // Update while deleting: refused, and the message says why.
    let err = client
        .update(&work(IMAGE_2, "3"), &deleting)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, WorkError::Conflict { message } if message.contains("under deletion")),
        "{err:?}"
    );
    // With what was read before the delete: stale, refused by the server.
    let err = client
        .update(&work(IMAGE_2, "3"), &before)
        .await
        .unwrap_err();
    assert!(matches!(err, WorkError::Conflict { .. }), "{err:?}");
    // Create racing the delete.
    let err = client.create(&work(IMAGE_1, "2")).await.unwrap_err();
    assert!(matches!(err, WorkError::AlreadyExists { .. }), "{err:?}");

    // The finalizer goes: the work is gone.
    remove_finalizers(&server).await;
    assert_eq!(client.get(&name()).await.unwrap(), None);
    let err = client.delete(&name()).await.unwrap_err();
    assert!(matches!(err, WorkError::NotFound { .. }), "{err:?}");
    let err = client
        .update(&work(IMAGE_2, "3"), &before)
        .await
        .unwrap_err();
    assert!(matches!(err, WorkError::NotFound { .. }), "{err:?}");
    // And it can be created again.
    client.create(&work(IMAGE_1, "2")).await.unwrap();
}

/// Removes the finalizers through the API (a JSON merge patch), as the hub controller does.
async fn remove_finalizers(server: &ApiServer) {
    let api: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
        server.client().await,
        CONSUMER,
        &hypershift_adapter::work::hub::manifest_work_resource(),
    );
    api.patch(
        &name(),
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn delete_without_finalizers_is_immediate_and_unknown_is_not_found() {
    let (server, client) = start().await;
    let err = client.delete(&name()).await.unwrap_err();
    assert!(matches!(err, WorkError::NotFound { .. }), "{err:?}");
    client.create(&work(IMAGE_1, "2")).await.unwrap();
    client.delete(&name()).await.unwrap();
    assert!(stored(&server).is_none());
    assert_eq!(client.get(&name()).await.unwrap(), None);
}
