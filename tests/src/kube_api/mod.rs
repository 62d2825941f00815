//! An in-process fake Kubernetes API server that answers like a real kube-apiserver
//! (status codes and `Status` bodies measured on v1.36, see `docs/kubernetes-job-status.md`).
//!
//! Start one with [`ApiServer::start`], seed objects, point a `kube::Client` at it and
//! inspect what the client sent with [`ApiServer::requests`].
//!
//! What it reproduces: Job `/status` PATCH (strategic merge by `type` with prepend, in-place,
//! `$patch: delete`, `$setElementOrder`; JSON merge patch; JSON patch with `test`), PUT, the
//! Job status-transition rules, condition time normalisation, resourceVersion preconditions,
//! 404/409/413/415/422/500 bodies, `events.k8s.io/v1` Events (the create's 400 and 422 rules
//! and the fields the server adds, `events`), pod watches, paginated lists (cluster-scoped ones such as
//! nodes and certificate signing requests only at the cluster path), generic custom resources
//! and per-request faults.
//!
//! What it simplifies:
//! - Server-side apply (`application/apply-patch+yaml`) is a JSON merge patch of the applied
//!   object: no managedFields, so never the SSA 409 conflict; only JSON bodies are accepted.
//! - Strategic merge patch on resources other than Jobs and Pods merges like a merge patch.
//! - RBAC is a deny list: the valid token may do everything except what
//!   [`ApiServer::deny`] took away (a 403 worded from the request); no token is a 403 for
//!   `system:anonymous`. Inject `FaultAction::Status(403)` for a one-off denial.
//! - ServiceAccount admission only for Pods that name their ServiceAccount
//!   (`spec.serviceAccountName`); TokenRequest mints opaque tokens (not JWTs) that authenticate
//!   as the ServiceAccount, without checking the bound object.
//! - Seeded objects keep the `creationTimestamp` they bring (a POST gets now, as on a real
//!   server).
//! - A time that fails to parse always reports `cannot parse "<value>" as "2006"`.
//! - No defaulting or validation of objects beyond the Job and pod-template defaults, the Job
//!   rules and the ManifestWork CRD's `default`s (status transitions; on create
//!   the generated selector, the job-name/controller-uid template labels and the label-value
//!   checks, so a Job name over 63 bytes is a 422); no garbage collection or TTL.

mod auth;
mod crd_defaults;
mod events;
mod faults;
mod jobs;
mod json_patch;
mod list;
mod merge_patch;
mod objects;
mod patch;
mod pods;
mod recorder;
mod request;
mod resources;
mod server;
mod service_accounts;
mod status;
mod store;
pub mod strategic_merge;
mod time;
mod watch;

pub use faults::{Fault, FaultAction};
pub use recorder::RecordedRequest;
pub use server::ApiServer;
