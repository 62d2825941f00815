//! Generic namespaced custom resources (ManifestWorks) through kube-rs' dynamic API.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use serde_json::json;
use testbed::kube_api::ApiServer;

const PREFIX: &str = "/apis/work.open-cluster-management.io/v1";

fn resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("work.open-cluster-management.io", "v1", "ManifestWork"),
        "manifestworks",
    )
}

async fn works(server: &ApiServer) -> Api<DynamicObject> {
    Api::namespaced_with(server.client().await, "cluster1", &resource())
}

fn work(name: &str) -> DynamicObject {
    DynamicObject::new(name, &resource()).data(json!({"spec": {"workload": {"manifests": []}}}))
}

#[tokio::test]
async fn create_then_create_again_is_a_409_already_exists() {
    let server = ApiServer::start().await;
    let api = works(&server).await;
    let created = api
        .create(
            &PostParams::default(),
            &work("hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"),
        )
        .await
        .unwrap();
    assert!(created.metadata.uid.is_some());
    let reply = send(&server, "POST", &format!("{PREFIX}/namespaces/cluster1/manifestworks"), Some("application/json"),
        &json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork", "metadata": {"name": "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"}}).to_string()).await;
    assert_eq!(reply.status, 409);
    assert_eq!(
        reply.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"manifestworks.work.open-cluster-management.io \"hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b\" already exists","reason":"AlreadyExists","details":{"name":"hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b","group":"work.open-cluster-management.io","kind":"manifestworks"},"code":409}"#
    );
}

/// With `require_namespaces`, a create in a namespace without a Namespace object is the real
/// server's 404 (body measured on v1.36, `real::differential_kube`); reads are not affected.
#[tokio::test]
async fn a_create_in_a_namespace_that_does_not_exist_is_a_404_naming_the_namespace() {
    let server = ApiServer::start().await;
    server.require_namespaces();
    let body = json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork", "metadata": {"name": "w"}}).to_string();
    let reply = send(
        &server,
        "POST",
        &format!("{PREFIX}/namespaces/cluster1/manifestworks"),
        Some("application/json"),
        &body,
    )
    .await;
    assert_eq!(reply.status, 404);
    assert_eq!(
        reply.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \"cluster1\" not found","reason":"NotFound","details":{"name":"cluster1","kind":"namespaces"},"code":404}"#
    );
    server.put_object(
        "/api/v1",
        None,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "cluster1"}}),
    );
    let reply = send(
        &server,
        "POST",
        &format!("{PREFIX}/namespaces/cluster1/manifestworks"),
        Some("application/json"),
        &body,
    )
    .await;
    assert_eq!(reply.status, 201);
}

#[tokio::test]
async fn get_list_replace_patch_and_delete() {
    let server = ApiServer::start().await;
    server.put_object(
        PREFIX,
        Some("cluster1"),
        json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": "w", "labels": {"hyperfleet.io/cluster-id": "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"}}, "spec": {"a": 1}}),
    );
    let api = works(&server).await;
    assert_eq!(api.get("w").await.unwrap().data["spec"]["a"], 1);
    assert_eq!(api.list(&Default::default()).await.unwrap().items.len(), 1);
    let mut current = api.get("w").await.unwrap();
    current.data["spec"]["a"] = json!(2);
    let replaced = api
        .replace("w", &PostParams::default(), &current)
        .await
        .unwrap();
    assert_eq!(replaced.data["spec"]["a"], 2);
    match api.replace("w", &PostParams::default(), &current).await {
        Err(kube::Error::Api(status)) => assert_eq!(
            status.code, 409,
            "the replayed PUT has a stale resourceVersion"
        ),
        other => panic!("expected a 409, got {other:?}"),
    }
    let merged = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"b": 3}})),
        )
        .await
        .unwrap();
    assert_eq!(merged.data["spec"], json!({"a": 2, "b": 3}));
    let smp = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"a": null}})),
        )
        .await
        .unwrap();
    assert_eq!(smp.data["spec"], json!({"b": 3}));
    api.delete("w", &DeleteParams::default()).await.unwrap();
    let reply = send(
        &server,
        "GET",
        &format!("{PREFIX}/namespaces/cluster1/manifestworks/w"),
        None,
        "",
    )
    .await;
    assert_eq!(
        reply.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"manifestworks.work.open-cluster-management.io \"w\" not found","reason":"NotFound","details":{"name":"w","group":"work.open-cluster-management.io","kind":"manifestworks"},"code":404}"#
    );
}

#[tokio::test]
async fn status_patch_changes_status_only_and_main_patch_keeps_status() {
    let server = ApiServer::start().await;
    let api = works(&server).await;
    api.create(&PostParams::default(), &work("w"))
        .await
        .unwrap();
    let patch = json!({"spec": {"changed": true}, "status": {"conditions": [{"type": "Applied", "status": "True"}]}});
    let written = api
        .patch_status("w", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(written.data["status"]["conditions"][0]["type"], "Applied");
    assert!(written.data["spec"].get("changed").is_none());
    let main = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": []}})),
        )
        .await
        .unwrap();
    assert_eq!(
        main.data["status"]["conditions"][0]["type"], "Applied",
        "status is only written through /status"
    );
    let stored = server
        .object(PREFIX, "manifestworks", Some("cluster1"), "w")
        .unwrap();
    assert_eq!(stored["status"]["conditions"][0]["status"], "True");
}

#[tokio::test]
async fn create_without_a_name_is_a_422_naming_metadata_name() {
    let server = ApiServer::start().await;
    let body = json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork", "metadata": {}}).to_string();
    let reply = send(
        &server,
        "POST",
        &format!("{PREFIX}/namespaces/cluster1/manifestworks"),
        Some("application/json"),
        &body,
    )
    .await;
    assert_eq!(reply.status, 422);
    assert_eq!(
        reply.json()["message"],
        "ManifestWork.work.open-cluster-management.io \"\" is invalid: metadata.name: Required value: name or generateName is required"
    );
}
