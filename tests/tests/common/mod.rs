//! Helpers shared by the `kube_api_*` integration tests: a raw HTTP/1.1 client for byte-exact
//! bodies, and fixtures.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use testbed::kube_api::ApiServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A raw HTTP answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Sends one request with the server's valid token.
pub async fn send(
    server: &ApiServer,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: &str,
) -> Reply {
    send_as(
        server,
        Some(server.token()),
        method,
        path,
        content_type,
        body.as_bytes(),
    )
    .await
}

/// Sends one request with any token (or none) and a raw body.
pub async fn send_as(
    server: &ApiServer,
    token: Option<&str>,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: &[u8],
) -> Reply {
    let addr = server.url().trim_start_matches("http://").to_owned();
    let mut stream = TcpStream::connect(&addr).await.unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(token) = token {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    if let Some(content_type) = content_type {
        head.push_str(&format!("Content-Type: {content_type}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    // The server may answer (413) before reading everything; a write error then is expected.
    let _ = stream.write_all(body).await;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    Reply {
        status,
        headers,
        body: body.to_owned(),
    }
}

pub const SMP: &str = "application/strategic-merge-patch+json";
pub const MERGE: &str = "application/merge-patch+json";
pub const JSON_PATCH: &str = "application/json-patch+json";

pub fn applied() -> Value {
    json!({"type":"Applied","status":"True","reason":"ManifestWorkCreated","message":"ManifestWork exp/job created on cluster1","lastTransitionTime":"2026-11-25T10:00:00Z"})
}

pub fn available() -> Value {
    json!({"type":"Available","status":"True","reason":"ResourcesAvailable","message":"All resources are available","lastTransitionTime":"2026-11-25T10:00:00Z"})
}

pub fn health() -> Value {
    json!({"type":"Health","status":"True","reason":"Healthy","message":"Workload is healthy","lastTransitionTime":"2026-11-25T10:00:00Z"})
}

/// A running Job `name` in `ns` with `parallelism: 1`.
pub fn seed_job(server: &ApiServer, ns: &str, name: &str) -> Value {
    server.create_job(
        ns,
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
               "spec": {"parallelism": 1, "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}),
    )
}

/// `/apis/batch/v1/namespaces/{ns}/jobs/{name}/status`.
pub fn status_path(ns: &str, name: &str) -> String {
    format!("/apis/batch/v1/namespaces/{ns}/jobs/{name}/status")
}

/// The condition types of a Job, in order.
pub fn condition_types(job: &Value) -> Vec<String> {
    job.pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|c| c["type"].as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}
