//! Paginated LIST of Nodes and Leases exactly as kube-rs drives it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams};
use serde_json::json;
use testbed::kube_api::ApiServer;

fn seed_nodes(server: &ApiServer, count: usize) {
    for i in 0..count {
        server.put_node(
            json!({"metadata": {"name": format!("node-{i:05}"), "labels": {"role": "worker"}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
        );
    }
}

#[tokio::test]
async fn node_list_pages_with_limit_and_continue() {
    let server = ApiServer::start().await;
    seed_nodes(&server, 7);
    let nodes: Api<Node> = Api::all(server.client().await);
    let first = nodes.list(&ListParams::default().limit(3)).await.unwrap();
    assert_eq!(first.items.len(), 3);
    assert_eq!(first.metadata.remaining_item_count, Some(4));
    let token = first.metadata.continue_.clone().unwrap();
    let second = nodes
        .list(&ListParams::default().limit(3).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(second.metadata.remaining_item_count, Some(1));
    let token = second.metadata.continue_.clone().unwrap();
    let third = nodes
        .list(&ListParams::default().limit(3).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(third.items.len(), 1);
    assert!(
        third
            .metadata
            .continue_
            .as_deref()
            .is_none_or(str::is_empty)
    );
    let names: Vec<_> = [first, second, third]
        .into_iter()
        .flat_map(|p| p.items)
        .map(|n| n.metadata.name.unwrap())
        .collect();
    assert_eq!(
        names,
        (0..7).map(|i| format!("node-{i:05}")).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn five_thousand_nodes_list_whole_and_in_pages() {
    let server = ApiServer::start().await;
    seed_nodes(&server, 5000);
    let nodes: Api<Node> = Api::all(server.client().await);
    assert_eq!(
        nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        5000
    );
    let mut seen = 0;
    let mut params = ListParams::default().limit(500);
    loop {
        let page = nodes.list(&params).await.unwrap();
        seen += page.items.len();
        match page.metadata.continue_.filter(|t| !t.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => break,
        }
    }
    assert_eq!(seen, 5000);
}

#[tokio::test]
async fn leases_page_within_their_namespace_and_get_by_name() {
    let server = ApiServer::start().await;
    for i in 0..5 {
        server.put_lease("kube-node-lease", json!({"metadata": {"name": format!("node-{i}")}, "spec": {"holderIdentity": format!("node-{i}")}}));
    }
    server.put_lease("other", json!({"metadata": {"name": "node-x"}}));
    let leases: Api<Lease> = Api::namespaced(server.client().await, "kube-node-lease");
    let first = leases.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(
        (first.items.len(), first.metadata.remaining_item_count),
        (2, Some(3))
    );
    let rest = leases
        .list(
            &ListParams::default()
                .limit(10)
                .continue_token(&first.metadata.continue_.unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(
        rest.items.len(),
        3,
        "the other namespace's lease is not listed"
    );
    let lease = leases.get("node-3").await.unwrap();
    assert_eq!(
        lease.spec.unwrap().holder_identity.as_deref(),
        Some("node-3")
    );
}
