//! Maestro source client (facts: `maestro-protocol.md`).
//!
//! Writes go over gRPC `Publish` as CloudEvents in protobuf binary mode ([`cloudevent`], [`manifestbundle`]);
//! reads go to the REST resource-bundle API ([`rest`], [`bundle`]). [`MaestroWorkClient`] puts both behind
//! [`crate::work::WorkClient`].
//!
//! ```no_run
//! # async fn demo(work: serde_json::Value) -> Result<(), hypershift_adapter::work::WorkError> {
//! use hypershift_adapter::work::maestro::{MaestroConfig, MaestroWorkClient, TokenSource};
//! use hypershift_adapter::work::WorkClient;
//!
//! let mut config = MaestroConfig::new(
//!     "https://maestro-grpc:8090",   // MAESTRO_GRPC_URL
//!     "https://maestro:8000",        // MAESTRO_API_URL
//!     "hyperfleet-adapter",          // MAESTRO_SOURCE_ID
//!     "us-east-mgmt-01",             // MANAGEMENT_CLUSTER_CONSUMER
//! );
//! config.ca_file = Some("/etc/maestro/ca.crt".into());
//! config.token = TokenSource::File("/var/run/secrets/maestro/token".into()); // re-read on every call
//! let client = MaestroWorkClient::new(config)?;
//! match client.get("hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b").await? {
//!     None => client.create(&work).await?,
//!     Some(existing) => {
//!         let status = existing.feedback_value(
//!             "hypershift.openshift.io", "hostedclusters", "clusters", "abc123", "status");
//!         println!("{status:?}");
//!     }
//! }
//! # Ok(()) }
//! ```

pub mod bundle;
pub mod client;
pub mod cloudevent;
pub mod config;
pub mod error;
#[cfg(test)]
pub(crate) mod fake;
pub mod grpc;
pub mod manifestbundle;
pub mod resource_id;
pub mod rest;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tls;

/// Generated protobuf/tonic types of `io.cloudevents.v1` (`proto/cloudevents.proto`).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod proto {
    tonic::include_proto!("io.cloudevents.v1");
}

pub use client::{BundleApi, MaestroApi, MaestroWorkClient};
pub use config::{BearerToken, MaestroConfig, MaestroTlsArgs, TokenSource};
pub use resource_id::{placement_resource_id, resource_id};

/// Loads the shared Maestro wire fixtures from the team folder (`shared/fixtures/maestro` beside the
/// repository, see [`job_report::team_folder`]). `None` on a clone without it: the test skips.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod test_fixtures {
    pub(crate) fn fixture(name: &str) -> Option<serde_json::Value> {
        let path = job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/maestro")?
            .join(name);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        Some(serde_json::from_str(&text).unwrap())
    }
}
