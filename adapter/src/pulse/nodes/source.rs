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
use k8s_openapi::api::core::v1::Node;
use kube::api::ListParams;
use serde::Deserialize;

use super::csr::{CsrFields, CsrState, CsrSummary};
use super::judge::{NodeSummary, ReadyState, TaintSummary};
// An error and its sources, `: `-joined (hyper's "client error (Connect)" alone says little).
use crate::kubeconfig::error_chain;

/// The namespace holding one Lease per node, renewed by the kubelet as its heartbeat.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";
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

/// Reads nodes and node leases one page at a time.
pub trait NodeSource {
    /// One page of Nodes, summarized; `continue_token` is `None` for the first page.
    fn node_page(
        &self,
        continue_token: Option<&str>,
    ) -> impl Future<Output = Result<Page<NodeSummary>, SourceError>> + Send;

    /// One page of Leases in `kube-node-lease`.
    fn lease_page(
        &self,
        continue_token: Option<&str>,
    ) -> impl Future<Output = Result<Page<LeaseRenewal>, SourceError>> + Send;

    /// One page of CertificateSigningRequests (cluster-scoped), summarized.
    fn csr_page(
        &self,
        continue_token: Option<&str>,
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

    async fn list<W: serde::de::DeserializeOwned>(
        &self,
        resource: Resource,
        path: &str,
        continue_token: Option<&str>,
    ) -> Result<WireList<W>, SourceError> {
        let mut params = ListParams::default().limit(self.page_size);
        if let Some(token) = continue_token {
            params = params.continue_token(token);
        }
        let request =
            kube::core::Request::new(path)
                .list(&params)
                .map_err(|e| SourceError::Unreachable {
                    resource,
                    message: error_chain(&e),
                })?;
        match tokio::time::timeout(self.timeout, self.client.request::<WireList<W>>(request)).await
        {
            Ok(result) => result.map_err(|e| SourceError::from_kube(resource, e)),
            Err(_elapsed) => Err(SourceError::Timeout {
                resource,
                timeout: self.timeout,
            }),
        }
    }
}

pub use crate::kubeconfig::tune;

impl NodeSource for KubeNodeSource {
    async fn node_page(
        &self,
        continue_token: Option<&str>,
    ) -> Result<Page<NodeSummary>, SourceError> {
        let list: WireList<WireNode> = self
            .list(Resource::Nodes, "/api/v1/nodes", continue_token)
            .await?;
        Ok(Page {
            items: list.items.into_iter().map(WireNode::summarize).collect(),
            continue_token: list.metadata.continue_token(),
        })
    }

    async fn lease_page(
        &self,
        continue_token: Option<&str>,
    ) -> Result<Page<LeaseRenewal>, SourceError> {
        let list: WireList<WireLease> = self
            .list(
                Resource::Leases,
                &format!("/apis/coordination.k8s.io/v1/namespaces/{NODE_LEASE_NAMESPACE}/leases"),
                continue_token,
            )
            .await?;
        Ok(Page {
            items: list
                .items
                .into_iter()
                .map(|l| LeaseRenewal {
                    node: l.metadata.name,
                    renewed: l.spec.renew_time,
                })
                .collect(),
            continue_token: list.metadata.continue_token(),
        })
    }

    async fn csr_page(
        &self,
        continue_token: Option<&str>,
    ) -> Result<Page<CsrSummary>, SourceError> {
        let list: WireList<WireCsr> = self
            .list(
                Resource::CertificateSigningRequests,
                CSR_PATH,
                continue_token,
            )
            .await?;
        Ok(Page {
            items: list.items.into_iter().map(WireCsr::summarize).collect(),
            continue_token: list.metadata.continue_token(),
        })
    }
}

// Wire types: the subset of NodeList / LeaseList the check reads. Unknown fields are skipped
// by serde without allocating; `null` is accepted wherever the API may send it.

#[derive(Deserialize)]
#[serde(bound = "T: Deserialize<'de>")]
struct WireList<T> {
    #[serde(default, deserialize_with = "null_as_default")]
    metadata: WireListMeta,
    #[serde(default = "Vec::new", deserialize_with = "null_as_default")]
    items: Vec<T>,
}

#[derive(Deserialize, Default)]
struct WireListMeta {
    #[serde(rename = "continue", default)]
    continue_: Option<String>,
}

impl WireListMeta {
    fn continue_token(self) -> Option<String> {
        self.continue_.filter(|t| !t.is_empty())
    }
}

fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct WireMeta {
    #[serde(default)]
    name: String,
    #[serde(default)]
    creation_timestamp: Option<Timestamp>,
    #[serde(default)]
    deletion_timestamp: Option<Timestamp>,
    #[serde(default, deserialize_with = "null_as_default")]
    finalizers: Vec<String>,
}

#[derive(Deserialize)]
struct WireNode {
    #[serde(default, deserialize_with = "null_as_default")]
    metadata: WireMeta,
    #[serde(default, deserialize_with = "null_as_default")]
    spec: WireNodeSpec,
    #[serde(default, deserialize_with = "null_as_default")]
    status: WireNodeStatus,
}

#[derive(Deserialize, Default)]
struct WireNodeSpec {
    #[serde(default)]
    unschedulable: Option<bool>,
    #[serde(default, deserialize_with = "null_as_default")]
    taints: Vec<WireTaint>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireTaint {
    #[serde(default)]
    key: String,
    #[serde(default)]
    time_added: Option<Timestamp>,
}

#[derive(Deserialize, Default)]
struct WireNodeStatus {
    #[serde(default, deserialize_with = "null_as_default")]
    conditions: Vec<WireCondition>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireCondition {
    #[serde(rename = "type", default)]
    type_: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    last_transition_time: Option<Timestamp>,
    #[serde(default)]
    last_heartbeat_time: Option<Timestamp>,
}

impl WireNode {
    fn summarize(self) -> NodeSummary {
        let conditions = self.status.conditions.iter().map(|c| Cond {
            type_: &c.type_,
            status: &c.status,
            since: c.last_transition_time,
            heartbeat: c.last_heartbeat_time,
        });
        let mut summary = NodeSummary {
            name: self.metadata.name,
            created: self.metadata.creation_timestamp,
            deleting_since: self.metadata.deletion_timestamp,
            finalizers: self.metadata.finalizers,
            unschedulable: self.spec.unschedulable.unwrap_or(false),
            taints: self
                .spec
                .taints
                .into_iter()
                .map(|t| TaintSummary {
                    key: t.key,
                    time_added: t.time_added,
                })
                .collect(),
            ..NodeSummary::default()
        };
        apply_conditions(&mut summary, conditions);
        summary
    }
}

#[derive(Deserialize)]
struct WireLease {
    #[serde(default, deserialize_with = "null_as_default")]
    metadata: WireMeta,
    #[serde(default, deserialize_with = "null_as_default")]
    spec: WireLeaseSpec,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct WireLeaseSpec {
    #[serde(default)]
    renew_time: Option<Timestamp>,
}

#[derive(Deserialize)]
struct WireCsr {
    #[serde(default, deserialize_with = "null_as_default")]
    metadata: WireMeta,
    #[serde(default, deserialize_with = "null_as_default")]
    spec: WireCsrSpec,
    #[serde(default, deserialize_with = "null_as_default")]
    status: WireCsrStatus,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct WireCsrSpec {
    #[serde(default, deserialize_with = "null_as_default")]
    signer_name: String,
    #[serde(default, deserialize_with = "null_as_default")]
    username: String,
    /// Base64 of the PEM text; decoded only for a pending kubelet request.
    #[serde(default, deserialize_with = "null_as_default")]
    request: String,
}

#[derive(Deserialize, Default)]
struct WireCsrStatus {
    #[serde(default, deserialize_with = "null_as_default")]
    conditions: Vec<WireCsrCondition>,
}

#[derive(Deserialize)]
struct WireCsrCondition {
    #[serde(rename = "type", default, deserialize_with = "null_as_default")]
    type_: String,
    #[serde(default, deserialize_with = "null_as_default")]
    status: String,
}

impl WireCsr {
    fn summarize(self) -> CsrSummary {
        let state = CsrState::from_conditions(
            self.status
                .conditions
                .iter()
                .map(|c| (c.type_.as_str(), c.status.as_str())),
        );
        let summary = CsrSummary::new(CsrFields {
            name: &self.metadata.name,
            created: self.metadata.creation_timestamp,
            signer_name: &self.spec.signer_name,
            username: &self.spec.username,
            request_base64: &self.spec.request,
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

/// A borrowed view of one node condition, whatever type it was parsed into.
struct Cond<'a> {
    type_: &'a str,
    status: &'a str,
    since: Option<Timestamp>,
    heartbeat: Option<Timestamp>,
}

fn apply_conditions<'a>(summary: &mut NodeSummary, conditions: impl Iterator<Item = Cond<'a>>) {
    for c in conditions {
        let is_true = c.status == "True";
        match c.type_ {
            "Ready" => {
                summary.ready = Some(ReadyState {
                    // Anything but the exact True/False is treated as Unknown.
                    status: ConditionStatus::parse(c.status).unwrap_or(ConditionStatus::Unknown),
                    since: c.since,
                    heartbeat: c.heartbeat,
                });
            }
            "MemoryPressure" => summary.memory_pressure = is_true,
            "DiskPressure" => summary.disk_pressure = is_true,
            "PIDPressure" => summary.pid_pressure = is_true,
            "NetworkUnavailable" => summary.network_unavailable = is_true,
            _ => {}
        }
    }
}

/// Summarizes a full `k8s-openapi` Node the same way the wire path does (for callers that
/// already hold Node objects, e.g. the testbed, and to check both paths agree).
pub fn summarize_node(node: &Node) -> NodeSummary {
    let meta = &node.metadata;
    let spec = node.spec.as_ref();
    let mut summary = NodeSummary {
        name: meta.name.clone().unwrap_or_default(),
        created: meta.creation_timestamp.as_ref().map(|t| t.0),
        deleting_since: meta.deletion_timestamp.as_ref().map(|t| t.0),
        finalizers: meta.finalizers.clone().unwrap_or_default(),
        unschedulable: spec.and_then(|s| s.unschedulable).unwrap_or(false),
        taints: spec
            .and_then(|s| s.taints.as_ref())
            .map(|taints| {
                taints
                    .iter()
                    .map(|t| TaintSummary {
                        key: t.key.clone(),
                        time_added: t.time_added.as_ref().map(|t| t.0),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        ..NodeSummary::default()
    };
    let conditions = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .map(|c| Cond {
            type_: &c.type_,
            status: &c.status,
            since: c.last_transition_time.as_ref().map(|t| t.0),
            heartbeat: c.last_heartbeat_time.as_ref().map(|t| t.0),
        });
    apply_conditions(&mut summary, conditions);
    summary
}

#[cfg(test)]
mod tests;
