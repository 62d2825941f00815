//! The readers, one per system, each only GET/LIST and each bounded by its own timeout: the
//! HyperFleet API (the object, `…/statuses`, a deleting cluster's NodePools), the framework's
//! Kubernetes API (this adapter's pulse Jobs and their Pods, by label) and Maestro's REST API (the
//! work, by the label search of `maestro-protocol.md` §4.2, on whatever consumer it is).
//!
//! A read that fails is a [`Failure`]: the HTTP status when there was one, and the server's or
//! transport's words (connection refused, timed out, not JSON), credentials removed.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use serde_json::Value;

use crate::hyperfleet::api::{CLUSTERS_PATH, FetchError, get_path};
use crate::kubeconfig::error_chain;
use crate::message::redact;
use crate::work::WorkError;
use crate::work::maestro::MaestroConfig;
use crate::work::maestro::bundle::ResourceBundle;
use crate::work::maestro::rest::{RestClient, label_search};

/// Why a read gave nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The HTTP status of a non-2xx answer.
    pub status: Option<u16>,
    /// What happened, in the server's or transport's words (bounded, credentials removed).
    pub detail: String,
}

impl Failure {
    pub fn new(status: Option<u16>, detail: &str) -> Failure {
        Failure {
            status,
            detail: redact(detail),
        }
    }

    /// The system did not answer within `timeout`.
    pub fn timeout(timeout: Duration) -> Failure {
        Failure::new(
            None,
            &format!("timed out after {}", crate::duration::friendly(timeout)),
        )
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Some(status) => write!(f, "HTTP {status}: {}", self.detail),
            None => f.write_str(&self.detail),
        }
    }
}

/// A read's result.
pub type Read<T> = Result<T, Failure>;

/// Runs `read` under `timeout`.
pub async fn within<T>(timeout: Duration, read: impl Future<Output = Read<T>>) -> Read<T> {
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or_else(|_| Err(Failure::timeout(timeout)))
}

/// The HyperFleet API: `GET {base}/api/hyperfleet/v1/clusters/…` with an optional bearer token
/// (the pulse's own reader, [`crate::hyperfleet::api::get_path`]).
#[derive(Debug, Clone)]
pub struct HyperfleetReader {
    pub base_url: String,
    pub auth: crate::hyperfleet::api::Auth,
    pub timeout: Duration,
}

impl HyperfleetReader {
    /// `GET {base}{CLUSTERS_PATH}{path}`, the answer as JSON.
    pub async fn get(&self, path: &str) -> Read<Value> {
        let path = format!("{CLUSTERS_PATH}{path}");
        let (url, text) = match get_path(&self.base_url, &path, &[], &self.auth, self.timeout).await
        {
            Ok(answer) => answer,
            Err(FetchError::Status { url, status, body }) => {
                return Err(Failure::new(Some(status), &format!("GET {url}: {body}")));
            }
            Err(other) => return Err(Failure::new(None, &other.to_string())),
        };
        serde_json::from_str(&text)
            .map_err(|e| Failure::new(None, &format!("GET {url}: the answer is not JSON: {e}")))
    }
}

/// What the framework's Kubernetes API holds for one object: this adapter's pulse Jobs and
/// their Pods (the Pods carry the Job template's labels).
#[derive(Debug, Clone)]
pub struct Pulses {
    pub jobs: Vec<Job>,
    /// `Err` when the Pods could not be listed (the Jobs still say something).
    pub pods: Read<Vec<Pod>>,
}

/// Lists the Jobs and Pods labelled `selector` in `namespace` through `kubeconfig` (in-cluster
/// when `None`). Only `list` calls.
pub async fn pulses(
    kubeconfig: Option<&Path>,
    namespace: &str,
    selector: &str,
    timeout: Duration,
) -> Read<Pulses> {
    let mut config = crate::kubeconfig::load(kubeconfig)
        .await
        .map_err(|e| Failure::new(None, &format!("kubeconfig: {e}")))?;
    crate::kubeconfig::tune(&mut config, timeout);
    let client = kube::Client::try_from(config)
        .map_err(|e| Failure::new(None, &format!("kubeconfig: {}", error_chain(&e))))?;
    let params = ListParams::default().labels(selector);
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    let jobs = jobs
        .list(&params)
        .await
        .map_err(|e| kube_failure("list jobs", namespace, &e, timeout))?
        .items;
    let pods: Api<Pod> = Api::namespaced(client, namespace);
    let pods = pods
        .list(&params)
        .await
        .map(|l| l.items)
        .map_err(|e| kube_failure("list pods", namespace, &e, timeout));
    Ok(Pulses { jobs, pods })
}

/// The client's own read timeout (`timeout`, the same as the outer one) says so in the words of
/// [`Failure::timeout`], whichever of the two fires first.
fn kube_failure(verb: &str, namespace: &str, error: &kube::Error, timeout: Duration) -> Failure {
    match error {
        kube::Error::Api(status) => Failure::new(
            Some(status.code),
            &format!("{verb} in {namespace}: {}", status.message),
        ),
        other => {
            let chain = error_chain(other);
            if chain.contains("timed out") {
                let limit = crate::duration::friendly(timeout);
                Failure::new(
                    None,
                    &format!("{verb} in {namespace}: timed out after {limit} ({chain})"),
                )
            } else {
                Failure::new(None, &format!("{verb} in {namespace}: {chain}"))
            }
        }
    }
}

/// Maestro's REST API: every resource bundle of `source` whose work carries `labels`, on any
/// consumer (soft-deleted ones included), found by the label search of §4.2.
pub async fn works(
    config: MaestroConfig,
    labels: &[(&str, &str)],
    timeout: Duration,
) -> Read<Vec<ResourceBundle>> {
    let search = label_search(&config.source_id, None, labels).map_err(|e| work_failure(&e))?;
    let mut config = config;
    config.timeout = timeout;
    let client = RestClient::new(Arc::new(config)).map_err(|e| work_failure(&e))?;
    client.list_all(&search).await.map_err(|e| work_failure(&e))
}

fn work_failure(error: &WorkError) -> Failure {
    let status = match error {
        WorkError::Unauthenticated { .. } => Some(401),
        WorkError::Forbidden { .. } => Some(403),
        WorkError::NotFound { .. } => Some(404),
        _ => None,
    };
    // The request URL carries the whole search: keep the words, drop the query.
    let full = error.to_string();
    let text = regex!(r"\?search=[^\s)]*").replace_all(&full, "");
    Failure::new(status, &text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_label_search_is_the_go_clients_jsonb_fragment() {
        let search = label_search(
            "hyperfleet-hypershift-adapter",
            None,
            &[
                ("hyperfleet.io/adapter", "controlplane"),
                (
                    "hyperfleet.io/cluster-id",
                    "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
                ),
            ],
        )
        .unwrap();
        assert_eq!(
            search,
            r#"source='hyperfleet-hypershift-adapter' and payload->'metadata'->'labels'@>'{"hyperfleet.io/adapter":"controlplane","hyperfleet.io/cluster-id":"019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"}'"#
        );
        let quoted = work_failure(&label_search("s'--", None, &[]).unwrap_err());
        assert!(quoted.detail.contains("contains a quote"), "{quoted}");
    }

    #[test]
    fn the_clients_own_read_timeout_reads_like_the_outer_one() {
        let error = kube::Error::Service(Box::new(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "connection error: timed out",
        )));
        let failure = kube_failure(
            "list jobs",
            "hyperfleet-system",
            &error,
            Duration::from_secs(1),
        );
        assert!(
            failure
                .detail
                .starts_with("list jobs in hyperfleet-system: timed out after 1s"),
            "{failure}"
        );
    }

    #[tokio::test]
    async fn a_missing_token_file_is_a_failure_naming_the_setting() {
        let reader = HyperfleetReader {
            base_url: "http://127.0.0.1:9".to_owned(),
            auth: crate::hyperfleet::api::Auth {
                token_file: Some("/nonexistent/hyperfleet-token".into()),
                ..Default::default()
            },
            timeout: Duration::from_secs(1),
        };
        let failure = reader.get("/x").await.unwrap_err();
        assert!(
            failure.detail.contains("HYPERFLEET_API_TOKEN_FILE"),
            "{failure}"
        );
    }
}
