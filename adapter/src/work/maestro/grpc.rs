//! gRPC `Publish` of CloudEvents (protocol §2).

use std::sync::Arc;

use tonic::transport::{Channel, Endpoint};

use super::cloudevent::CloudEvent;
use super::config::MaestroConfig;
use super::error::{error_chain, from_grpc_call, misconfigured, unavailable};
use super::proto::PublishRequest;
use super::proto::cloud_event_service_client::CloudEventServiceClient;
use super::tls;
use crate::work::WorkError;

/// Publishes CloudEvents over one lazily connected channel.
#[derive(Debug, Clone)]
pub struct Publisher {
    client: CloudEventServiceClient<Channel>,
    config: Arc<MaestroConfig>,
}

impl Publisher {
    /// Creates the channel (no connection yet). `http://` = plaintext, `https://` = TLS with the CA file.
    pub fn new(config: Arc<MaestroConfig>) -> Result<Self, WorkError> {
        let url = config.grpc_url.clone();
        let mut endpoint = Endpoint::from_shared(url.clone())
            .map_err(|e| misconfigured(format!("gRPC URL {url:?}: {}", error_chain(&e))))?
            .connect_timeout(config.timeout)
            .timeout(config.timeout);
        if url.starts_with("https://") {
            endpoint = endpoint
                .tls_config(tls::tonic_client_tls(&config)?)
                .map_err(|e| misconfigured(format!("gRPC TLS: {}", error_chain(&e))))?;
        } else if !url.starts_with("http://") {
            return Err(misconfigured(format!(
                "gRPC URL must be http:// or https://: {url:?}"
            )));
        }
        let client = CloudEventServiceClient::new(endpoint.connect_lazy())
            .max_decoding_message_size(config.max_decode_bytes);
        Ok(Self { client, config })
    }

    /// One `Publish` with the per-call deadline and the current bearer token (re-read now; attached only over
    /// TLS, like the Go client — a token is never sent in plaintext).
    pub async fn publish(&self, event: &CloudEvent) -> Result<(), WorkError> {
        let mut request = tonic::Request::new(PublishRequest {
            event: Some(event.to_proto()),
        });
        request.set_timeout(self.config.timeout);
        if let Some(token) = self.config.token_for(&self.config.grpc_url).await? {
            let mut value: tonic::metadata::AsciiMetadataValue = token.header()?;
            value.set_sensitive(true);
            request.metadata_mut().insert("authorization", value);
        }
        let mut client = self.client.clone();
        tracing::debug!(event_id = %event.id, event_type = %event.ty, "publishing cloudevent");
        match tokio::time::timeout(self.config.timeout, client.publish(request)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(status)) => Err(from_grpc_call(&self.config.grpc_url, &status)),
            Err(_) => Err(unavailable(format!(
                "Publish to {} timed out after {:?}",
                self.config.grpc_url, self.config.timeout
            ))),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod pinned {
    use std::fmt::Write as _;

    use super::*;
    use crate::work::maestro::config::{BearerToken, TokenSource};
    use crate::work::maestro::error::pin_inputs::Recorder;

    fn event() -> CloudEvent {
        CloudEvent {
            id: "e-1".into(),
            source: "src".into(),
            spec_version: "1.0".into(),
            ty: "t".into(),
            ..CloudEvent::default()
        }
    }

    #[tokio::test]
    async fn publish_failures() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}", listener.local_addr().unwrap())
        };
        let rest = Recorder::start(|_, _| {
            (
                404,
                "application/json",
                r#"{"kind":"Error","code":"maestro-404"}"#.to_owned(),
            )
        })
        .await;
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        std::fs::write(&ca, cert.cert.pem()).unwrap();
        let https = rest.url.replace("http://", "https://");
        let mut out = String::new();
        for (url, with_ca) in [
            (closed.clone(), false),
            (rest.url.clone(), false),
            (https.clone(), true),
            (https.clone(), false),
            ("maestro:8090".to_owned(), false),
            ("ftp://maestro".to_owned(), false),
            ("http://bad host".to_owned(), false),
        ] {
            let mut config = MaestroConfig::new(url.clone(), "http://rest", "src", "mgmt-1");
            config.timeout = std::time::Duration::from_secs(5);
            config.token = TokenSource::Static(BearerToken::new("t0ken"));
            if with_ca {
                config.ca_file = Some(ca.clone());
            }
            let result = match Publisher::new(Arc::new(config)) {
                Ok(publisher) => format!("publish: {:?}", publisher.publish(&event()).await),
                Err(e) => format!("new: {e:?}"),
            };
            let text = result
                .replace(&closed, "http://CLOSED")
                .replace(&https, "https://SERVER")
                .replace(&ca.display().to_string(), "CA_FILE");
            let _ = writeln!(
                out,
                "{} (CA {with_ca}): {}",
                rest.scrub(
                    &url.replace(&closed, "http://CLOSED")
                        .replace(&https, "https://SERVER")
                ),
                rest.scrub(&text)
            );
        }
        let _ = writeln!(out, "REST requests: {:?}", rest.take());
        insta::assert_snapshot!("publish_failures", out);
    }
}
