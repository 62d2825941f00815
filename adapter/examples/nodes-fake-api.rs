//! A throwaway Kubernetes API serving N synthetic Nodes and node Leases (paginated), to run
//! `hypershift-adapter nodes` against without a cluster and to measure it. Stands in until the
//! `testbed` crate's API server lands.
//!
//! `cargo run --example nodes-fake-api -- 5000 /tmp/kubeconfig 50` (nodes, kubeconfig path,
//! images per node) writes a kubeconfig pointing at it, prints the URL and serves until killed.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::routing::get;
use hypershift_adapter::nodes::testing;
use serde_json::{Value, json};

struct Lists {
    nodes: Vec<Value>,
    leases: Vec<Value>,
}

fn page(items: &[Value], kind: &str, q: &HashMap<String, String>) -> axum::Json<Value> {
    let start: usize = q.get("continue").map_or(0, |c| c.parse().unwrap());
    let limit: usize = q.get("limit").map_or(items.len(), |l| l.parse().unwrap());
    let end = (start + limit).min(items.len());
    let mut metadata = json!({});
    if end < items.len() {
        metadata["continue"] = json!(end.to_string());
    }
    axum::Json(
        json!({"kind": kind, "apiVersion": "v1", "metadata": metadata, "items": &items[start..end]}),
    )
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(5000, |a| a.parse().unwrap());
    let kubeconfig = args
        .next()
        .unwrap_or_else(|| "/tmp/nodes-fake-kubeconfig".to_owned());
    let images: u16 = args.next().map_or(50, |a| a.parse().unwrap());
    let cluster = testing::synthetic_cluster(n, 42, jiff::Timestamp::now());
    let lists = Arc::new(Lists {
        nodes: cluster
            .iter()
            .map(|c| {
                serde_json::to_value(testing::node_object_with_images(&c.summary, images)).unwrap()
            })
            .collect(),
        leases: cluster
            .iter()
            .map(|c| serde_json::to_value(testing::lease_object(&c.lease)).unwrap())
            .collect(),
    });
    let app = Router::new()
        .route(
            "/api/v1/nodes",
            get(
                |State(l): State<Arc<Lists>>, Query(q): Query<HashMap<String, String>>| async move {
                    page(&l.nodes, "NodeList", &q)
                },
            ),
        )
        .route(
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
            get(
                |State(l): State<Arc<Lists>>, Query(q): Query<HashMap<String, String>>| async move {
                    page(&l.leases, "LeaseList", &q)
                },
            ),
        )
        .with_state(lists);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {url}\nusers:\n- name: fake\n  user:\n    token: fake\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\n"
        ),
    )
    .unwrap();
    println!("serving {n} nodes at {url}; kubeconfig {kubeconfig}");
    axum::serve(listener, app).await.unwrap();
}
