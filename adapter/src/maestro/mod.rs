//! Maestro source client (facts: `maestro-protocol.md`).
//!
//! Writes go over gRPC `Publish` as CloudEvents in protobuf binary mode ([`cloudevent`], [`manifestbundle`]);
//! reads go to the REST resource-bundle API ([`rest`], [`bundle`]). [`MaestroWorkClient`] puts both behind
//! [`crate::work::WorkClient`].

pub mod bundle;
pub mod client;
pub mod cloudevent;
pub mod config;
pub mod error;
pub mod grpc;
pub mod manifestbundle;
pub mod resource_id;
pub mod rest;
pub mod tls;

/// Generated protobuf/tonic types of `io.cloudevents.v1` (`proto/cloudevents.proto`).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod proto {
    tonic::include_proto!("io.cloudevents.v1");
}

pub use client::MaestroWorkClient;
pub use config::{BearerToken, MaestroConfig, TokenSource};
pub use resource_id::resource_id;
