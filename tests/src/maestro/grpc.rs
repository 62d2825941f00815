//! The fake's gRPC `io.cloudevents.v1.CloudEventService` (Publish semantics of §3.7, Subscribe of §2.5).

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use hypershift_adapter::work::maestro::cloudevent::{AttrValue, CloudEvent, SPEC_VERSION};
use hypershift_adapter::work::maestro::manifestbundle::new_event_id;
use hypershift_adapter::work::maestro::proto::cloud_event_service_server::CloudEventService;
use hypershift_adapter::work::maestro::proto::{self, PublishRequest, SubscriptionRequest};
use hypershift_adapter::work::maestro::testing::HEARTBEAT_TYPE;
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::state::Shared;

/// gRPC service over the shared state.
#[derive(Debug, Clone)]
pub struct Service {
    pub shared: Arc<Shared>,
}

fn unknown(message: impl Into<String>) -> Status {
    Status::unknown(message.into())
}

impl Service {
    /// The token interceptor of the real server (only when a token is configured).
    fn authenticate<T>(&self, request: &Request<T>) -> Result<(), Status> {
        let Some(expected) = &self.shared.token else {
            return Ok(());
        };
        let Some(header) = request.metadata().get("authorization") else {
            return Err(Status::unauthenticated("invalid token"));
        };
        let value = header.to_str().unwrap_or_default();
        let token = value.strip_prefix("Bearer ").unwrap_or(value);
        if token == expected {
            Ok(())
        } else {
            Err(unknown("token not authenticated"))
        }
    }

    /// The SubjectAccessReview on `/sources/<source>` with verb `pub`/`sub`.
    fn authorize(&self, verb: &str, source: &str) -> Result<(), Status> {
        match &self.shared.allowed_sources {
            Some(allowed) if !allowed.iter().any(|s| s == source) => Err(unknown(format!(
                "unauthorized to {verb} the event from source {source}"
            ))),
            _ => Ok(()),
        }
    }

    fn handle(&self, event: CloudEvent) -> Result<(), Status> {
        let segments: Vec<&str> = event.ty.split('.').collect();
        if segments.len() < 3 {
            return Err(unknown(format!(
                "failed to parse cloud event type {}",
                event.ty
            )));
        }
        let action = segments[segments.len() - 1];
        let subresource = segments[segments.len() - 2];
        self.shared.count(&format!("Publish {action}"));
        if subresource == "status" && action == "resync_request" {
            let ids: Vec<String> = {
                let st = self.shared.lock();
                st.resources
                    .values()
                    .filter(|r| r.source == event.source)
                    .map(|r| r.id.clone())
                    .collect()
            };
            for id in ids {
                self.shared.resync_report(&id);
            }
            return Ok(());
        }
        let ext_string = |name: &str| event.extension(name).and_then(AttrValue::as_string);
        let cluster = ext_string("clustername").ok_or_else(|| {
            unknown("failed to decode cloudevent: missing or invalid extension clustername")
        })?;
        let id = ext_string("resourceid").ok_or_else(|| {
            unknown("failed to decode cloudevent: missing or invalid extension resourceid")
        })?;
        let version = event
            .extension("resourceversion")
            .and_then(AttrValue::as_integer)
            .ok_or_else(|| {
                unknown("failed to decode cloudevent: missing or invalid extension resourceversion")
            })?;
        let metadata: Value = ext_string("metadata")
            .and_then(|m| serde_json::from_str(&m).ok())
            .unwrap_or_default();
        let payload = event.to_json();
        let now = jiff::Timestamp::now();
        match action {
            "create_request" => {
                validate_bundle(&payload).map_err(|reason| {
                    unknown(format!(
                        "failed to create resource: maestro-8: the manifest bundle in the resource is invalid, {reason}"
                    ))
                })?;
                self.shared
                    .insert_created(&event.source, &cluster, &id, version, payload, metadata)
                    .map_err(unknown)?;
                self.shared.schedule_apply(&id);
                Ok(())
            }
            "update_request" => {
                validate_bundle(&payload).map_err(|reason| {
                    unknown(format!(
                        "failed to update resource: maestro-8: the manifest bundle in the resource is invalid, {reason}"
                    ))
                })?;
                {
                    let mut st = self.shared.lock();
                    let Some(res) = st.resources.get_mut(&id) else {
                        return Err(unknown(format!(
                            "failed to get resource: maestro-7: Resource with id='{id}' not found"
                        )));
                    };
                    if res.deleted_at.is_some() {
                        return Err(unknown(format!(
                            "failed to update resource: maestro-6: the resource is under deletion, id: {id}"
                        )));
                    }
                    let expected = if version == 0 { res.version } else { version };
                    if expected != res.version {
                        return Err(unknown(format!(
                            "failed to update resource: maestro-6: the resource version is not the latest, the latest version: {}",
                            res.version
                        )));
                    }
                    if res.payload == payload {
                        return Ok(());
                    }
                    res.version += 1;
                    if res.payload.get("data") != payload.get("data") {
                        res.manifests_version = res.version;
                    }
                    res.payload = payload;
                    res.metadata = metadata;
                    res.updated_at = now;
                }
                self.shared.schedule_apply(&id);
                Ok(())
            }
            "delete_request" => {
                // `MarkAsDeleting`: an unknown id and a second delete are both OK (`11u`, `10g`).
                if self.shared.mark_deleting(&id) {
                    self.shared.schedule_delete_ack(&id);
                }
                Ok(())
            }
            other => Err(unknown(format!("unsupported action {other}"))),
        }
    }
}

/// Server-side validation of a spec payload (`M:pkg/services/validation.go`, simplified).
fn validate_bundle(payload: &Value) -> Result<(), String> {
    let manifests = payload
        .pointer("/data/manifests")
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty())
        .ok_or("manifests: Required value")?;
    let mut seen = std::collections::BTreeSet::new();
    for (i, m) in manifests.iter().enumerate() {
        let field = |p: &str| {
            m.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let (api, kind, name, ns) = (
            field("/apiVersion"),
            field("/kind"),
            field("/metadata/name"),
            field("/metadata/namespace"),
        );
        if api.is_empty() || kind.is_empty() || name.is_empty() {
            return Err(format!(
                "manifests[{i}]: apiVersion, kind and metadata.name are required"
            ));
        }
        if m.pointer("/metadata/generateName").is_some()
            || m.pointer("/metadata/resourceVersion").is_some()
        {
            return Err(format!(
                "manifests[{i}]: generateName and resourceVersion are not allowed"
            ));
        }
        if !seen.insert((api, kind, ns, name)) {
            return Err(format!("manifests[{i}]: duplicate manifest"));
        }
    }
    Ok(())
}

type EventStream = Pin<Box<dyn Stream<Item = Result<proto::CloudEvent, Status>> + Send>>;

#[tonic::async_trait]
impl CloudEventService for Service {
    async fn publish(&self, request: Request<PublishRequest>) -> Result<Response<()>, Status> {
        if self.shared.enter("Publish").await {
            return Err(Status::unavailable("injected fault: service unavailable"));
        }
        self.authenticate(&request)?;
        let Some(wire) = request.into_inner().event else {
            return Err(unknown("failed to decode cloudevent: no event"));
        };
        if wire.spec_version.is_empty() || wire.attributes.is_empty() {
            return Err(unknown(
                "failed to decode cloudevent: unknown Message encoding (EncodingUnknown)",
            ));
        }
        let event = CloudEvent::from_proto(&wire)
            .map_err(|e| unknown(format!("failed to decode cloudevent: {e}")))?;
        self.shared.lock().received.push(event.clone());
        if event.source.is_empty() {
            return Err(unknown("resource cannot be empty"));
        }
        self.authorize("publish", &event.source)?;
        self.handle(event)?;
        Ok(Response::new(()))
    }

    type SubscribeStream = EventStream;

    async fn subscribe(
        &self,
        request: Request<SubscriptionRequest>,
    ) -> Result<Response<Self::SubscribeStream>, Status> {
        if self.shared.enter("Subscribe").await {
            return Err(Status::unavailable("injected fault: service unavailable"));
        }
        self.authenticate(&request)?;
        let source = request.into_inner().source;
        if source.is_empty() {
            return Err(unknown("resource cannot be empty"));
        }
        self.authorize("subscribe", &source)?;
        let mut events = self.shared.events.subscribe();
        let mut kill = self.shared.kill.subscribe();
        let (tx, rx) = mpsc::channel(100);
        let heartbeat_every = self.shared.heartbeat;
        tokio::spawn(async move {
            let mut heartbeat = tokio::time::interval(heartbeat_every);
            loop {
                tokio::select! {
                    received = events.recv() => match received {
                        Ok((to, event)) if to == source => {
                            if tx.send(Ok(event)).await.is_err() { break }
                        }
                        Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                        Err(broadcast::error::RecvError::Closed) => break,
                    },
                    _ = heartbeat.tick() => {
                        let beat = proto::CloudEvent {
                            id: new_event_id(),
                            spec_version: SPEC_VERSION.to_owned(),
                            r#type: HEARTBEAT_TYPE.to_owned(),
                            ..Default::default()
                        };
                        let _ = tx.try_send(Ok(beat));
                    }
                    _ = kill.changed() => {
                        let _ = tx.send(Err(Status::unavailable("subscription killed by the test"))).await;
                        break;
                    }
                    () = tx.closed() => break,
                }
            }
        });
        let mut response = Response::new(Box::pin(ReceiverStream::new(rx)) as EventStream);
        if let Ok(value) = new_event_id().parse() {
            response.metadata_mut().insert("subscription-id", value);
        }
        Ok(response)
    }
}
