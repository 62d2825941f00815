//! Pods: GET, field-selected LIST, WATCH through kube-rs, and `/status` SMP by container name.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use serde_json::json;
use testbed::kube_api::ApiServer;

fn seed_pod(server: &ApiServer, ns: &str, name: &str) -> serde_json::Value {
    server.create_pod(
        ns,
        json!({"metadata": {"name": name, "labels": {"app": "job", "batch.kubernetes.io/job-name": "j"}},
               "spec": {"containers": [{"name": "adapter", "image": "a"}, {"name": "status-reporter", "image": "r"}]}}),
    )
}

async fn next_event(
    stream: &mut (impl futures::Stream<Item = kube::Result<WatchEvent<Pod>>> + Unpin),
) -> WatchEvent<Pod> {
    tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("a watch event within 10 s")
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn a_pod_watch_receives_modified_after_terminate_container() {
    let server = ApiServer::start().await;
    seed_pod(&server, "ns", "p");
    seed_pod(&server, "ns", "other");
    let pods: Api<Pod> = Api::namespaced(server.client().await, "ns");
    let params = WatchParams::default().fields("metadata.name=p").timeout(60);
    let mut stream = pods.watch(&params, "0").await.unwrap().boxed();
    match next_event(&mut stream).await {
        WatchEvent::Added(pod) => assert_eq!(pod.metadata.name.as_deref(), Some("p")),
        other => panic!("expected ADDED, got {other:?}"),
    }
    server.terminate_container("ns", "other", "adapter", 1, "Error", None);
    server.terminate_container(
        "ns",
        "p",
        "adapter",
        137,
        "OOMKilled",
        Some("out of memory"),
    );
    match next_event(&mut stream).await {
        WatchEvent::Modified(pod) => {
            assert_eq!(
                pod.metadata.name.as_deref(),
                Some("p"),
                "the field selector filters other pods out"
            );
            let statuses = pod.status.unwrap().container_statuses.unwrap();
            let adapter = statuses.iter().find(|s| s.name == "adapter").unwrap();
            let terminated = adapter.state.as_ref().unwrap().terminated.as_ref().unwrap();
            assert_eq!(
                (terminated.exit_code, terminated.reason.as_deref()),
                (137, Some("OOMKilled"))
            );
            assert_eq!(terminated.message.as_deref(), Some("out of memory"));
        }
        other => panic!("expected MODIFIED, got {other:?}"),
    }
}

#[tokio::test]
async fn a_watch_from_a_resource_version_replays_later_changes() {
    let server = ApiServer::start().await;
    let seeded = seed_pod(&server, "ns", "p");
    let rv = seeded["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    server.terminate_container("ns", "p", "adapter", 0, "Completed", None);
    let pods: Api<Pod> = Api::namespaced(server.client().await, "ns");
    let mut stream = pods
        .watch(&WatchParams::default().fields("metadata.name=p"), &rv)
        .await
        .unwrap()
        .boxed();
    assert!(
        matches!(next_event(&mut stream).await, WatchEvent::Modified(_)),
        "the change after {rv} is replayed"
    );
}

#[tokio::test]
async fn a_watch_ends_at_its_timeout_with_a_bookmark() {
    let server = ApiServer::start().await;
    seed_pod(&server, "ns", "p");
    let pods: Api<Pod> = Api::namespaced(server.client().await, "ns");
    let params = WatchParams::default().timeout(1);
    let events: Vec<_> = pods
        .watch(&params, "0")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert!(matches!(events.first(), Some(WatchEvent::Added(_))));
    assert!(matches!(events.last(), Some(WatchEvent::Bookmark(_))));
}

#[tokio::test]
async fn list_with_a_name_field_selector_returns_only_that_pod() {
    let server = ApiServer::start().await;
    seed_pod(&server, "ns", "p1");
    seed_pod(&server, "ns", "p2");
    seed_pod(&server, "elsewhere", "p1");
    let pods: Api<Pod> = Api::namespaced(server.client().await, "ns");
    let list = pods
        .list(&ListParams::default().fields("metadata.name=p1"))
        .await
        .unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].metadata.namespace.as_deref(), Some("ns"));
    let labelled = pods
        .list(&ListParams::default().labels("app=job"))
        .await
        .unwrap();
    assert_eq!(labelled.items.len(), 2);
    assert_eq!(
        pods.get("p2").await.unwrap().metadata.name.as_deref(),
        Some("p2")
    );
}

/// `containerStatuses` is an atomic list (no patch merge key): a strategic merge patch with one
/// container's status replaces the list, as the real v1.36 server does
/// (`real::differential_kube`); the kubelet always sends every container's status.
#[tokio::test]
async fn status_smp_replaces_container_statuses_whole() {
    let server = ApiServer::start().await;
    seed_pod(&server, "ns", "p");
    let body = json!({"status": {"phase": "Succeeded", "containerStatuses": [{"name": "adapter", "ready": false,
        "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}})
    .to_string();
    let reply = send(
        &server,
        "PATCH",
        "/api/v1/namespaces/ns/pods/p/status",
        Some(SMP),
        &body,
    )
    .await;
    assert_eq!(reply.status, 200);
    let statuses = reply.json()["status"]["containerStatuses"].clone();
    assert_eq!(
        statuses.as_array().unwrap().len(),
        1,
        "the patch's list replaces the stored one: {statuses}"
    );
    assert_eq!(statuses[0]["name"], "adapter");
    assert_eq!(statuses[0]["state"]["terminated"]["reason"], "Completed");
    assert_eq!(
        (&statuses[0]["image"], &statuses[0]["lastState"]),
        (&json!(""), &json!({})),
        "nothing of the stored element is kept; the never-omitted fields are empty"
    );
}
