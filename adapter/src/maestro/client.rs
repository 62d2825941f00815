//! [`MaestroWorkClient`]: the [`WorkClient`] over Maestro (REST get, gRPC create).

use std::sync::Arc;

use super::config::MaestroConfig;
use super::grpc::Publisher;
use super::manifestbundle::SpecEventBuilder;
use super::resource_id::resource_id;
use super::rest::RestClient;
use crate::work::{ExistingWork, WorkClient, WorkError};

/// Maestro work backend for one source id and one consumer.
#[derive(Debug, Clone)]
pub struct MaestroWorkClient {
    config: Arc<MaestroConfig>,
    rest: RestClient,
    publisher: Publisher,
    events: SpecEventBuilder,
}

impl MaestroWorkClient {
    /// Builds both transports (nothing is connected yet). Fails on bad URLs or unreadable TLS files.
    pub fn new(config: MaestroConfig) -> Result<Self, WorkError> {
        let config = Arc::new(config);
        Ok(Self {
            rest: RestClient::new(config.clone())?,
            publisher: Publisher::new(config.clone())?,
            events: SpecEventBuilder::new(config.source_id.clone(), config.consumer.clone()),
            config,
        })
    }

    /// The resource id (UUIDv5 of source id, consumer, work name) of work `name`.
    pub fn resource_id(&self, name: &str) -> String {
        resource_id(&self.config.source_id, &self.config.consumer, name).to_string()
    }

    /// The REST client (for list queries).
    pub fn rest(&self) -> &RestClient {
        &self.rest
    }

    /// The gRPC publisher (for update/delete requests built with [`SpecEventBuilder`]).
    pub fn publisher(&self) -> &Publisher {
        &self.publisher
    }

    /// The spec event builder of this source/consumer.
    pub fn events(&self) -> &SpecEventBuilder {
        &self.events
    }
}

impl WorkClient for MaestroWorkClient {
    /// REST GET by resource id; 404 → `None`. `source` is this client's source id: the id is derived from it,
    /// so a bundle found under it was written with that source id.
    async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
        let Some(bundle) = self.rest.get(&self.resource_id(name)).await? else {
            return Ok(None);
        };
        bundle
            .to_existing_work(Some(self.config.source_id.clone()))
            .map(Some)
    }

    /// One gRPC Publish of a `create_request`.
    async fn create(&self, work: &serde_json::Value) -> Result<(), WorkError> {
        let event = self.events.create_request(work)?;
        self.publisher.publish(&event).await
    }
}
