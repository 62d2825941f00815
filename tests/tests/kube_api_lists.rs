//! Paginated LIST of Nodes, Leases and CertificateSigningRequests exactly as kube-rs drives it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::send;
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
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

/// Pending kubelet bootstrap requests, created `minutes` ago.
fn seed_csrs(server: &ApiServer, count: usize, minutes: i64) -> jiff::Timestamp {
    let created = jiff::Timestamp::now() - jiff::SignedDuration::from_mins(minutes);
    for i in 0..count {
        let csr = hypershift_adapter::pulse::nodes::testing::csr_object(
            &format!("csr-{i:05}"),
            created,
            "kubernetes.io/kube-apiserver-client-kubelet",
            "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper",
            b"-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n",
            &[],
        );
        server.put_csr(serde_json::to_value(csr).unwrap());
    }
    created
}

#[tokio::test]
async fn certificate_signing_requests_page_at_the_cluster_path_and_keep_their_creation_time() {
    let server = ApiServer::start().await;
    let created = seed_csrs(&server, 5, 20);
    let csrs: Api<CertificateSigningRequest> = Api::all(server.client().await);
    let first = csrs.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(
        (first.items.len(), first.metadata.remaining_item_count),
        (2, Some(3))
    );
    let version = first.metadata.resource_version.clone().unwrap();
    assert!(version.parse::<u64>().is_ok(), "{version}");
    let mut names: Vec<String> = first
        .items
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    let mut token = first.metadata.continue_.clone();
    while let Some(t) = token.filter(|t| !t.is_empty()) {
        let page = csrs
            .list(&ListParams::default().limit(2).continue_token(&t))
            .await
            .unwrap();
        names.extend(page.items.iter().map(|c| c.metadata.name.clone().unwrap()));
        token = page.metadata.continue_;
    }
    assert_eq!(
        names,
        (0..5).map(|i| format!("csr-{i:05}")).collect::<Vec<_>>()
    );
    // Seeded 20 minutes ago: stored as the server stores times, at whole seconds.
    let csr = csrs.get("csr-00003").await.unwrap();
    assert_eq!(
        csr.metadata.creation_timestamp.unwrap().0,
        jiff::Timestamp::from_second(created.as_second()).unwrap()
    );
    assert_eq!(
        csr.spec.signer_name,
        "kubernetes.io/kube-apiserver-client-kubelet"
    );
    // The list's kind and apiVersion on the wire.
    let raw = send(
        &server,
        "GET",
        "/apis/certificates.k8s.io/v1/certificatesigningrequests?limit=1",
        None,
        "",
    )
    .await
    .json();
    assert_eq!(raw["kind"], "CertificateSigningRequestList");
    assert_eq!(raw["apiVersion"], "certificates.k8s.io/v1");
    // Items of a built-in resource carry no kind of their own (real v1.36, real::differential_kube).
    assert_eq!(raw["items"][0].get("kind"), None);
    assert_eq!(
        raw["items"][0]["spec"]["signerName"],
        "kubernetes.io/kube-apiserver-client-kubelet"
    );
}

#[tokio::test]
async fn a_cluster_scoped_resource_has_no_namespaced_path() {
    let server = ApiServer::start().await;
    seed_csrs(&server, 1, 1);
    seed_nodes(&server, 1);
    for path in [
        "/apis/certificates.k8s.io/v1/namespaces/default/certificatesigningrequests",
        "/apis/certificates.k8s.io/v1/namespaces/default/certificatesigningrequests/csr-00000",
        "/api/v1/namespaces/default/nodes",
    ] {
        let reply = send(&server, "GET", path, None, "").await;
        assert_eq!(reply.status, 404, "{path}");
        assert_eq!(
            reply.json()["message"],
            "the server could not find the requested resource"
        );
    }
    // A namespaced resource may still be listed across all namespaces.
    let reply = send(
        &server,
        "GET",
        "/apis/coordination.k8s.io/v1/leases",
        None,
        "",
    )
    .await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn a_post_gets_now_as_its_creation_time_whatever_the_body_says() {
    let server = ApiServer::start().await;
    let body = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n","creationTimestamp":"2001-01-01T00:00:00Z"}}"#;
    let reply = send(
        &server,
        "POST",
        "/api/v1/nodes",
        Some("application/json"),
        body,
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    let created: jiff::Timestamp = reply.json()["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(created > jiff::Timestamp::now() - jiff::SignedDuration::from_mins(5));
}
