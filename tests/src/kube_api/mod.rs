//! An in-process fake Kubernetes API server that answers like a real kube-apiserver
//! (status codes and `Status` bodies measured on v1.36, see `docs/kubernetes-job-status.md`).
//!
//! Start one with [`ApiServer::start`], seed objects, point a `kube::Client` at it and
//! inspect what the client sent with [`ApiServer::requests`].

mod auth;
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
mod status;
mod store;
mod strategic_merge;
mod time;
mod watch;

pub use faults::{Fault, FaultAction};
pub use recorder::RecordedRequest;
pub use server::ApiServer;
