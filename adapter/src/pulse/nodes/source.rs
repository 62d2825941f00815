//! Where nodes, node leases and certificate signing requests come from: the [`NodeSource`]
//! trait and its Kubernetes implementation [`KubeNodeSource`].
//!
//! The Kubernetes implementation lists page by page (`limit` + `continue`) and deserializes
//! each page straight into small wire types holding only the fields the check reads — a Node's
//! images, addresses, capacity and managed fields, a CertificateSigningRequest's certificate,
//! are skipped by the parser and never allocated; only the summaries are kept (of a request,
//! not its bytes: the node it names is read from them while the page is summarized). The
//! response body of one page is still buffered whole by kube-rs, so the page size bounds peak
//! memory.
//!
//! Certificate signing requests are listed whole rather than with a `spec.signerName` field
//! selector: a selector takes one signer, so the two kubelet signers would take two lists, and
//! the cluster keeps few requests (the API server's cleaner deletes approved and denied ones
//! after an hour, pending ones after a day).
//!
//! Measured with `tests/src/bin/bench-nodes.rs` (release build, 5 000 nodes of ~13 KB JSON with
//! 50 images each, served by the testbed API server): 250 per page → 18 MiB peak RSS, ~125 ms
//! CPU; 500 → 28 MiB, ~110 ms; 1000 → 47 MiB, ~137 ms. Hence the default `--page-size 250`. Deserializing into
//! `k8s_openapi` `Node`s instead would keep every image, label and managed field of the page.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use jiff::Timestamp;
use job_report::ConditionStatus;
use kube::api::ListParams;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::csr::{CsrFields, CsrState, CsrSummary};
use super::judge::{NodeSummary, ReadyState, TaintSummary};
// An error and its sources, `: `-joined (hyper's "client error (Connect)" alone says little).
use crate::kubeconfig::error_chain;

/// The cluster-scoped list of Nodes.
const NODES_PATH: &str = "/api/v1/nodes";
/// The namespace `kube-node-lease`, holding one Lease per node, renewed by the kubelet as its
/// heartbeat.
const LEASES_PATH: &str = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
/// The cluster-scoped list of CertificateSigningRequests.
pub const CSR_PATH: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";

/// One page of a list, and the token for the next (absent on the last page).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub continue_token: Option<String>,
}

/// A node Lease: the node it belongs to and when the kubelet last renewed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRenewal {
    pub node: String,
    pub renewed: Option<Timestamp>,
}

/// Which list failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    Nodes,
    Leases,
    CertificateSigningRequests,
}

impl Resource {
    /// What to grant when listing it is forbidden.
    pub fn grant(self) -> &'static str {
        match self {
            Resource::Nodes | Resource::Leases => {
                "Grant the ClusterRole and Role in manifests/rbac-nodes.yaml"
            }
            Resource::CertificateSigningRequests => {
                "Grant get and list on certificatesigningrequests (API group certificates.k8s.io, \
                 cluster scope) as the ClusterRole in manifests/rbac-nodes.yaml does"
            }
        }
    }
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Resource::Nodes => "nodes",
            Resource::Leases => "leases in namespace kube-node-lease",
            Resource::CertificateSigningRequests => "certificate signing requests",
        })
    }
}

/// Why nodes or leases could not be read. Messages never contain credentials.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error(
        "the API server rejected the credentials when listing {resource}: {message}. Check the kubeconfig (or the service account token) the Job mounts"
    )]
    Unauthorized { resource: Resource, message: String },
    #[error("not allowed to list {resource}: {message}. {}", .resource.grant())]
    Forbidden { resource: Resource, message: String },
    #[error("timed out after {}s listing {resource}; the API server did not answer", .timeout.as_secs_f64())]
    Timeout {
        resource: Resource,
        timeout: Duration,
    },
    #[error("the list of {resource} expired while paging (410 Gone): {message}")]
    Expired { resource: Resource, message: String },
    #[error("cannot read {resource} from the API server: {message}")]
    Unreachable { resource: Resource, message: String },
    #[error("cannot load the kubeconfig {}: {message}", .path.as_deref().map_or("(in-cluster / default)".into(), |p| p.display().to_string()))]
    Config {
        path: Option<PathBuf>,
        message: String,
    },
}

impl SourceError {
    /// The CamelCase reason this error becomes in the report.
    pub fn reason(&self) -> &'static str {
        match self {
            SourceError::Unauthorized { .. } => "Unauthorized",
            SourceError::Forbidden { .. } => "Forbidden",
            SourceError::Timeout { .. }
            | SourceError::Expired { .. }
            | SourceError::Unreachable { .. } => "ClusterUnreachable",
            SourceError::Config { .. } => "InvalidKubeconfig",
        }
    }

    /// Maps a kube-rs error: 401 → Unauthorized, 403 → Forbidden (with the server's message),
    /// 410 → Expired (the caller restarts the list), anything else → Unreachable.
    pub fn from_kube(resource: Resource, err: kube::Error) -> Self {
        match err {
            kube::Error::Api(status) => {
                let message = if status.message.is_empty() {
                    format!("HTTP {}", status.code)
                } else {
                    format!("HTTP {}: {}", status.code, status.message)
                };
                match status.code {
                    401 => SourceError::Unauthorized { resource, message },
                    403 => SourceError::Forbidden { resource, message },
                    410 => SourceError::Expired { resource, message },
                    _ => SourceError::Unreachable { resource, message },
                }
            }
            other => SourceError::Unreachable {
                resource,
                message: error_chain(&other),
            },
        }
    }
}

/// Reads nodes, node leases and certificate signing requests one page at a time.
pub trait NodeSource {
    /// One page of Nodes, summarized; `continue_token` is `None` for the first page.
    fn node_page(
        &self,
        continue_token: Option<String>,
    ) -> impl Future<Output = Result<Page<NodeSummary>, SourceError>> + Send;

    /// One page of Leases in `kube-node-lease`.
    fn lease_page(
        &self,
        continue_token: Option<String>,
    ) -> impl Future<Output = Result<Page<LeaseRenewal>, SourceError>> + Send;

    /// One page of CertificateSigningRequests (cluster-scoped), summarized.
    fn csr_page(
        &self,
        continue_token: Option<String>,
    ) -> impl Future<Output = Result<Page<CsrSummary>, SourceError>> + Send;
}

/// Lists Nodes, Leases and CertificateSigningRequests through a kube-rs client, with a timeout
/// on every call.
#[derive(Clone)]
pub struct KubeNodeSource {
    client: kube::Client,
    page_size: u32,
    timeout: Duration,
}

impl KubeNodeSource {
    /// Lists `page_size` items a page (at least 1) through `client`, each call bounded by
    /// `timeout`.
    pub fn new(client: kube::Client, page_size: u32, timeout: Duration) -> Self {
        KubeNodeSource {
            client,
            page_size: page_size.max(1),
            timeout,
        }
    }

    /// A client from the kubeconfig at `path`, or (when `None`) from the usual inference:
    /// `~/.kube/config`, then the in-cluster service account.
    pub async fn connect(
        kubeconfig: Option<&std::path::Path>,
        page_size: u32,
        timeout: Duration,
    ) -> Result<Self, SourceError> {
        let config_err = |message: String| SourceError::Config {
            path: kubeconfig.map(ToOwned::to_owned),
            message,
        };
        let mut config = crate::kubeconfig::load(kubeconfig)
            .await
            .map_err(config_err)?;
        tune(&mut config, timeout);
        let client = kube::Client::try_from(config).map_err(|e| config_err(error_chain(&e)))?;
        Ok(KubeNodeSource::new(client, page_size, timeout))
    }

    /// One page of the list at `path`: its items read as `W` (the fields the check reads) and
    /// each summarized while the page is in hand.
    async fn page<W: DeserializeOwned + Default, S>(
        &self,
        resource: Resource,
        path: &str,
        continue_token: Option<String>,
        summarize: fn(W) -> S,
    ) -> Result<Page<S>, SourceError> {
        let mut params = ListParams::default().limit(self.page_size);
        if let Some(token) = continue_token {
            params = params.continue_token(&token);
        }
        let request =
            kube::core::Request::new(path)
                .list(&params)
                .map_err(|e| SourceError::Unreachable {
                    resource,
                    message: error_chain(&e),
                })?;
        let list = tokio::time::timeout(self.timeout, self.client.request::<WireList<W>>(request))
            .await
            .map_err(|_elapsed| SourceError::Timeout {
                resource,
                timeout: self.timeout,
            })?
            .map_err(|e| SourceError::from_kube(resource, e))?;
        Ok(list.into_page(summarize))
    }
}

pub use crate::kubeconfig::tune;

impl NodeSource for KubeNodeSource {
    async fn node_page(&self, token: Option<String>) -> Result<Page<NodeSummary>, SourceError> {
        self.page(Resource::Nodes, NODES_PATH, token, WireNode::summarize)
            .await
    }

    async fn lease_page(&self, token: Option<String>) -> Result<Page<LeaseRenewal>, SourceError> {
        self.page(Resource::Leases, LEASES_PATH, token, WireLease::summarize)
            .await
    }

    async fn csr_page(&self, token: Option<String>) -> Result<Page<CsrSummary>, SourceError> {
        self.page(
            Resource::CertificateSigningRequests,
            CSR_PATH,
            token,
            WireCsr::summarize,
        )
        .await
    }
}

// Wire types: the subset of NodeList / LeaseList / CertificateSigningRequestList the check
// reads. Unknown fields are skipped by serde without allocating; a missing field is its default,
// and an `Option` field takes `null` wherever the API may send it (read as the default too).
// Their names are in serde's words when a page does not parse ("expected struct WireMeta").

#[derive(Deserialize, Default)]
#[serde(default, bound = "T: Deserialize<'de> + Default")]
struct WireList<T> {
    metadata: Option<WireListMeta>,
    items: Option<Vec<T>>,
}

impl<T> WireList<T> {
    /// The items summarized, and the continue token (an empty one ends the list too).
    fn into_page<S>(self, summarize: fn(T) -> S) -> Page<S> {
        Page {
            items: self
                .items
                .unwrap_or_default()
                .into_iter()
                .map(summarize)
                .collect(),
            continue_token: self
                .metadata
                .and_then(|m| m.continue_)
                .filter(|t| !t.is_empty()),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireListMeta {
    #[serde(rename = "continue")]
    continue_: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct WireMeta {
    name: String,
    creation_timestamp: Option<Timestamp>,
    deletion_timestamp: Option<Timestamp>,
    finalizers: Option<Vec<String>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireNode {
    metadata: Option<WireMeta>,
    spec: Option<WireNodeSpec>,
    status: Option<WireNodeStatus>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireNodeSpec {
    unschedulable: Option<bool>,
    taints: Option<Vec<WireTaint>>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct WireTaint {
    key: String,
    time_added: Option<Timestamp>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireNodeStatus {
    conditions: Option<Vec<WireCondition>>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct WireCondition {
    #[serde(rename = "type")]
    type_: String,
    status: String,
    last_transition_time: Option<Timestamp>,
    last_heartbeat_time: Option<Timestamp>,
}

impl WireNode {
    fn summarize(self) -> NodeSummary {
        let meta = self.metadata.unwrap_or_default();
        let spec = self.spec.unwrap_or_default();
        let mut summary = NodeSummary {
            name: meta.name,
            created: meta.creation_timestamp,
            deleting_since: meta.deletion_timestamp,
            finalizers: meta.finalizers.unwrap_or_default(),
            unschedulable: spec.unschedulable.unwrap_or(false),
            taints: spec
                .taints
                .unwrap_or_default()
                .into_iter()
                .map(|t| TaintSummary {
                    key: t.key,
                    time_added: t.time_added,
                })
                .collect(),
            ..NodeSummary::default()
        };
        for c in self.status.and_then(|s| s.conditions).unwrap_or_default() {
            let is_true = c.status == "True";
            match c.type_.as_str() {
                "Ready" => {
                    summary.ready = Some(ReadyState {
                        // Anything but the exact True/False is treated as Unknown.
                        status: ConditionStatus::parse(&c.status)
                            .unwrap_or(ConditionStatus::Unknown),
                        since: c.last_transition_time,
                        heartbeat: c.last_heartbeat_time,
                    });
                }
                "MemoryPressure" => summary.memory_pressure = is_true,
                "DiskPressure" => summary.disk_pressure = is_true,
                "PIDPressure" => summary.pid_pressure = is_true,
                "NetworkUnavailable" => summary.network_unavailable = is_true,
                _ => {}
            }
        }
        summary
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireLease {
    metadata: Option<WireMeta>,
    spec: Option<WireLeaseSpec>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct WireLeaseSpec {
    renew_time: Option<Timestamp>,
}

impl WireLease {
    fn summarize(self) -> LeaseRenewal {
        LeaseRenewal {
            node: self.metadata.unwrap_or_default().name,
            renewed: self.spec.and_then(|s| s.renew_time),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireCsr {
    metadata: Option<WireMeta>,
    spec: Option<WireCsrSpec>,
    status: Option<WireCsrStatus>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct WireCsrSpec {
    signer_name: Option<String>,
    username: Option<String>,
    /// Base64 of the PEM text; decoded only for a pending kubelet request.
    request: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireCsrStatus {
    conditions: Option<Vec<WireCsrCondition>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireCsrCondition {
    #[serde(rename = "type")]
    type_: Option<String>,
    status: Option<String>,
}

impl WireCsr {
    fn summarize(self) -> CsrSummary {
        let meta = self.metadata.unwrap_or_default();
        let spec = self.spec.unwrap_or_default();
        let conditions = self.status.and_then(|s| s.conditions).unwrap_or_default();
        let state = CsrState::from_conditions(conditions.iter().map(|c| {
            (
                c.type_.as_deref().unwrap_or_default(),
                c.status.as_deref().unwrap_or_default(),
            )
        }));
        let summary = CsrSummary::new(CsrFields {
            name: &meta.name,
            created: meta.creation_timestamp,
            signer_name: spec.signer_name.as_deref().unwrap_or_default(),
            username: spec.username.as_deref().unwrap_or_default(),
            request_base64: spec.request.as_deref().unwrap_or_default(),
            state,
        });
        if summary.signer.is_some() && state == CsrState::Pending && summary.node.is_none() {
            tracing::debug!(
                csr = summary.name,
                requester = summary.requester,
                "no node name in the request or its requester"
            );
        }
        summary
    }
}

#[cfg(test)]
mod tests;
