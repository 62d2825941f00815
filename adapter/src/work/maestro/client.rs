//! [`MaestroWorkClient`]: the [`WorkClient`] over Maestro (REST get and list, gRPC
//! create/update/delete), on the two Maestro calls of [`BundleApi`].

use std::future::Future;
use std::sync::Arc;

use super::bundle::{ResourceBundle, ResourceBundleList};
use super::cloudevent::CloudEvent;
use super::config::MaestroConfig;
use super::grpc::Publisher;
use super::manifestbundle::{RESOURCE_VERSION_ANNOTATION, SpecEventBuilder};
use super::resource_id::{placement_resource_id, resource_id};
use super::rest::{ListQuery, MAX_LIST_PAGE_SIZE, RestClient, count_query, label_search};
use crate::work::{ExistingWork, Found, WorkAt, WorkClient, WorkError, WorkKey};

/// What the client needs of Maestro: the REST resource-bundle API and the gRPC publish.
pub trait BundleApi: Send + Sync {
    /// One page of `GET /resource-bundles`.
    fn list(
        &self,
        query: &ListQuery,
    ) -> impl Future<Output = Result<ResourceBundleList, WorkError>> + Send;
    /// One gRPC Publish.
    fn publish(&self, event: &CloudEvent) -> impl Future<Output = Result<(), WorkError>> + Send;
    /// `GET /resource-bundles/{id}`; `None` when there is no such bundle.
    fn get(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<ResourceBundle>, WorkError>> + Send;
}

impl<A: BundleApi> BundleApi for &A {
    async fn list(&self, query: &ListQuery) -> Result<ResourceBundleList, WorkError> {
        (**self).list(query).await
    }

    async fn publish(&self, event: &CloudEvent) -> Result<(), WorkError> {
        (**self).publish(event).await
    }

    async fn get(&self, id: &str) -> Result<Option<ResourceBundle>, WorkError> {
        (**self).get(id).await
    }
}

/// The Maestro server: its REST API and its gRPC source API.
#[derive(Debug, Clone)]
pub struct MaestroApi {
    pub(super) rest: RestClient,
    pub(super) publisher: Publisher,
}

impl BundleApi for MaestroApi {
    async fn list(&self, query: &ListQuery) -> Result<ResourceBundleList, WorkError> {
        self.rest.list(query).await
    }

    async fn publish(&self, event: &CloudEvent) -> Result<(), WorkError> {
        self.publisher.publish(event).await
    }

    async fn get(&self, id: &str) -> Result<Option<ResourceBundle>, WorkError> {
        self.rest.get(id).await
    }
}

/// Maestro work backend for one source id, on one consumer (and one bundle id, when
/// [`on`](WorkClient::on) a work found or placed).
#[derive(Debug, Clone)]
pub struct MaestroWorkClient<A = MaestroApi> {
    pub(super) api: A,
    pub(super) events: SpecEventBuilder,
    /// The bundle id addressed, when it is not the one derived from source, consumer and name.
    id: Option<String>,
}

impl MaestroWorkClient {
    /// Builds both transports (nothing is connected yet). Fails on bad URLs or unreadable TLS files.
    pub fn new(config: MaestroConfig) -> Result<Self, WorkError> {
        let config = Arc::new(config);
        let api = MaestroApi {
            rest: RestClient::new(config.clone())?,
            publisher: Publisher::new(config.clone())?,
        };
        Ok(Self::over(api, &config.source_id, &config.consumer))
    }
}

impl<A: BundleApi> MaestroWorkClient<A> {
    /// The client of source `source` on `consumer`, over `api`.
    pub fn over(api: A, source: &str, consumer: &str) -> Self {
        Self {
            api,
            events: SpecEventBuilder::new(source, consumer),
            id: None,
        }
    }

    /// The resource id (UUIDv5 of source id, consumer, work name) of work `name`, or the bundle
    /// id this client addresses.
    pub fn resource_id(&self, name: &str) -> String {
        match &self.id {
            Some(id) => id.clone(),
            None => resource_id(self.events.source_id(), self.events.consumer(), name).to_string(),
        }
    }

    fn source(&self) -> String {
        self.events.source_id().to_owned()
    }
}

impl<A: BundleApi> WorkClient for MaestroWorkClient<A> {
    type On<'a>
        = MaestroWorkClient<&'a A>
    where
        A: 'a;

    fn on<'a>(&'a self, at: &WorkAt) -> MaestroWorkClient<&'a A> {
        let source = self.events.source_id();
        let id = match &at.key {
            WorkKey::Named => None,
            WorkKey::Found(id) => Some(id.clone()),
            WorkKey::Placed { after } => {
                Some(placement_resource_id(source, &at.name, after.as_deref()).to_string())
            }
        };
        let mut events = SpecEventBuilder::new(source, at.consumer.as_str());
        if let Some(id) = &id {
            events = events.with_resource_id(id.clone());
        }
        MaestroWorkClient {
            api: &self.api,
            events,
            id,
        }
    }

    fn key(&self, name: &str) -> String {
        self.resource_id(name)
    }

    /// One list of every bundle of this source with the labels, oldest first (one page of
    /// [`MAX_LIST_PAGE_SIZE`]: one cluster has a handful).
    async fn find(&self, labels: &[(&str, &str)]) -> Result<Vec<Found>, WorkError> {
        let query = ListQuery {
            search: Some(label_search(self.events.source_id(), None, labels)?),
            page: Some(1),
            size: Some(MAX_LIST_PAGE_SIZE),
            order_by: Some("created_at asc".to_owned()),
        };
        let items = self.api.list(&query).await?.items;
        Ok(items
            .into_iter()
            .map(|bundle| Found {
                at: WorkAt {
                    name: bundle.metadata["name"]
                        .as_str()
                        .unwrap_or(bundle.name.as_str())
                        .to_owned(),
                    consumer: bundle.consumer_name.clone(),
                    key: WorkKey::Found(bundle.id.clone()),
                },
                created_at: bundle.created_at.clone(),
                deleting: bundle.deleted_at.is_some(),
                work: bundle.to_existing_work(Some(self.source())),
            })
            .collect())
    }

    /// One `page=1&size=1` list: its `total`.
    async fn count(&self, consumer: &str, labels: &[(&str, &str)]) -> Result<u64, WorkError> {
        let search = label_search(self.events.source_id(), Some(consumer), labels)?;
        let list = self.api.list(&count_query(&search)).await?;
        Ok(u64::try_from(list.total).unwrap_or(0))
    }

    /// REST GET by resource id; 404 → `None`. `source` is this client's source id: the id is derived from it,
    /// so a bundle found under it was written with that source id.
    async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
        let Some(bundle) = self.api.get(&self.resource_id(name)).await? else {
            return Ok(None);
        };
        bundle.to_existing_work(Some(self.source())).map(Some)
    }

    /// One gRPC Publish of a `create_request`.
    async fn create(&self, work: &serde_json::Value) -> Result<(), WorkError> {
        let event = self.events.create_request(work)?;
        self.api.publish(&event).await
    }

    /// One gRPC Publish of an `update_request` whose `ce-resourceversion` (and metadata `generation` /
    /// `resourceVersion`, as the Go client sends them after a REST read) is `current.version`. A work already
    /// being deleted is refused here without a request (the server would answer `maestro-6: the resource is
    /// under deletion`, also mapped to `Conflict`). Server answers: stale version → `Conflict`, unknown id →
    /// `NotFound`.
    async fn update(
        &self,
        work: &serde_json::Value,
        current: &ExistingWork,
    ) -> Result<(), WorkError> {
        let event = update_event(&self.events, work, current)?;
        self.api.publish(&event).await
    }

    /// One gRPC Publish of a `delete_request` (no data, `ce-deletiontimestamp`). The real server answers OK for
    /// an id it does not know (recording `11u`) and for a bundle already being deleted (`10g`), so this never
    /// returns `NotFound`: a work that is already gone shows as a 404 on the next [`WorkClient::get`]. Only the
    /// name is known here, so the event carries `ce-resourceversion 0` and metadata without labels; the server
    /// reads neither for a delete (protocol §3.7, `MarkAsDeleting(resourceid)`).
    async fn delete(&self, name: &str) -> Result<(), WorkError> {
        let event = self
            .events
            .delete_request(&serde_json::json!({"metadata": {"name": name}}))?;
        self.api.publish(&event).await
    }
}

/// The `update_request` for `work` guarded by `current` (see [`WorkClient::update`] on [`MaestroWorkClient`]).
pub fn update_event(
    events: &SpecEventBuilder,
    work: &serde_json::Value,
    current: &ExistingWork,
) -> Result<super::cloudevent::CloudEvent, WorkError> {
    let name = work
        .pointer("/metadata/name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    if let Some(since) = &current.deleting {
        return Err(WorkError::Conflict {
            message: format!("work {name} is under deletion (since {since}); it cannot be updated"),
        });
    }
    let Some(version) = current.version else {
        return Err(WorkError::Invalid {
            message: format!(
                "work {name}: the bundle read has no version, so an update cannot be guarded by it"
            ),
        });
    };
    let mut work = work.clone();
    let Some(meta) = work
        .get_mut("metadata")
        .and_then(serde_json::Value::as_object_mut)
    else {
        return Err(WorkError::Invalid {
            message: "the work has no metadata".to_owned(),
        });
    };
    meta.insert("generation".to_owned(), version.into());
    meta.insert("resourceVersion".to_owned(), version.to_string().into());
    if let Some(annotations) = meta
        .get_mut("annotations")
        .and_then(serde_json::Value::as_object_mut)
    {
        // The version read is the guard; an annotation would override it.
        annotations.remove(RESOURCE_VERSION_ANNOTATION);
    }
    events.update_request(&work)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::work::maestro::cloudevent::{AttrValue, CloudEvent};
    use crate::work::maestro::error::from_grpc_status;
    use crate::work::maestro::manifestbundle::SpecAction;
    use crate::work::maestro::proto::cloud_event_attribute_value::Attr;
    use crate::work::maestro::test_fixtures::fixture;

    /// The recording's source, consumer and work (`real/09a`, `real/10a`).
    const SOURCE: &str = "hyperfleet-rec-1144924104";
    const CONSUMER: &str = "rec-mgmt-1144924104";
    const NAME: &str = "hostedcluster-cf352257-92af-404b-a179-9fdca316f40f";

    /// `{"ce-x": "ce_string", ...}`: attribute keys and value kinds of a wire event.
    fn kinds(event: &CloudEvent) -> Value {
        let wire = event.to_proto();
        let mut out = serde_json::Map::new();
        for (k, v) in &wire.attributes {
            let kind = match v.attr.as_ref().unwrap() {
                Attr::CeString(_) => "ce_string",
                Attr::CeInteger(_) => "ce_integer",
                Attr::CeTimestamp(_) => "ce_timestamp",
                other => panic!("unexpected {other:?}"),
            };
            out.insert(k.clone(), kind.into());
        }
        Value::Object(out)
    }

    /// The same for a recorded request.
    fn recorded_kinds(recorded: &Value) -> Value {
        let attributes = recorded["request"]["event"]["attributes"]
            .as_object()
            .unwrap();
        Value::Object(
            attributes
                .iter()
                .map(|(k, v)| {
                    let kind = v.as_object().unwrap().keys().next().unwrap().clone();
                    (k.clone(), Value::String(kind))
                })
                .collect(),
        )
    }

    fn recorded_metadata(recorded: &Value) -> Value {
        let text = recorded["request"]["event"]["attributes"]["ce-metadata"]["ce_string"]
            .as_str()
            .unwrap();
        serde_json::from_str(text).unwrap()
    }

    fn metadata(event: &CloudEvent) -> Value {
        let Some(AttrValue::String(text)) = event.extension("metadata") else {
            panic!("no metadata")
        };
        serde_json::from_str(text).unwrap()
    }

    /// The work the recorded update carried, as the adapter builds it (no version fields).
    fn recorded_work(recorded: &Value) -> Value {
        let meta = recorded_metadata(recorded);
        let data = &recorded["request"]["event"]["binary_data"];
        json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": meta["name"], "labels": meta["labels"], "annotations": meta["annotations"]},
            "spec": {"workload": {"manifests": data["manifests"]}, "deleteOption": data["deleteOption"],
                     "manifestConfigs": data["manifestConfigs"]}
        })
    }

    fn current(version: i64) -> ExistingWork {
        ExistingWork {
            version: Some(version),
            ..Default::default()
        }
    }

    #[test]
    fn update_is_shaped_like_the_recorded_go_client_update() {
        let Some(recorded) = fixture("real/09a-update-publish.json") else {
            return;
        };
        let events = SpecEventBuilder::new(SOURCE, CONSUMER);
        let event = update_event(&events, &recorded_work(&recorded), &current(1)).unwrap();
        let wire = &recorded["request"]["event"];
        assert_eq!(event.ty, wire["type"].as_str().unwrap());
        assert_eq!(event.source, wire["source"].as_str().unwrap());
        assert_eq!(kinds(&event), recorded_kinds(&recorded));
        let attr = |k: &str| event.to_proto().attributes[k].attr.clone().unwrap();
        assert_eq!(attr("ce-resourceversion"), Attr::CeInteger(1));
        assert_eq!(
            attr("ce-resourceid"),
            Attr::CeString(
                wire["attributes"]["ce-resourceid"]["ce_string"]
                    .as_str()
                    .unwrap()
                    .into()
            )
        );
        // The metadata the Go client sent, but for the creationTimestamp it copied from its REST read.
        let mut expected = recorded_metadata(&recorded);
        expected
            .as_object_mut()
            .unwrap()
            .remove("creationTimestamp");
        assert_eq!(metadata(&event), expected);
        let data: Value = serde_json::from_slice(event.data.as_ref().unwrap()).unwrap();
        assert_eq!(data, wire["binary_data"]);
    }

    #[test]
    fn delete_is_shaped_like_the_recorded_go_client_delete() {
        let Some(recorded) = fixture("real/10a-delete-publish.json") else {
            return;
        };
        let event = SpecEventBuilder::new(SOURCE, CONSUMER)
            .delete_request(&json!({"metadata": {"name": NAME}}))
            .unwrap();
        let wire = &recorded["request"]["event"];
        assert_eq!(event.ty, wire["type"].as_str().unwrap());
        assert_eq!(kinds(&event), recorded_kinds(&recorded));
        assert!(event.data.is_none() && wire["data_field"].is_null());
        let recorded_meta = recorded_metadata(&recorded);
        let meta = metadata(&event);
        for key in ["name", "namespace", "uid"] {
            assert_eq!(meta[key], recorded_meta[key], "{key}");
        }
        assert!(meta["deletionTimestamp"].is_string());
    }

    #[test]
    fn recorded_server_answers_map_to_the_contract_kinds() {
        type Expect = fn(&WorkError) -> bool;
        let cases: [(&str, Expect); 5] = [
            ("real/09e-update-stale-resourceversion.json", |e| {
                matches!(e, WorkError::Conflict { .. })
            }),
            (
                "real/10f-update-while-deleting.json",
                |e| matches!(e, WorkError::Conflict { message } if message.contains("under deletion")),
            ),
            ("real/11t-update-unknown-id.json", |e| {
                matches!(e, WorkError::NotFound { .. })
            }),
            ("real/10h-create-while-deleting.json", |e| {
                matches!(e, WorkError::AlreadyExists { .. })
            }),
            ("real/11v-create-duplicate.json", |e| {
                matches!(e, WorkError::AlreadyExists { .. })
            }),
        ];
        for (file, expected) in cases {
            let Some(recorded) = fixture(file) else {
                return;
            };
            assert_eq!(recorded["grpc_code"], 2, "{file}");
            let status = tonic::Status::unknown(recorded["body"]["message"].as_str().unwrap());
            let error = from_grpc_status(&status);
            assert!(expected(&error), "{file}: {error:?}");
        }
        for file in [
            "real/10g-delete-again-while-deleting.json",
            "real/11u-delete-unknown-id.json",
        ] {
            let Some(recorded) = fixture(file) else {
                return;
            };
            // The server accepts these, so `delete` answers Ok.
            assert_eq!(recorded["status"], "OK", "{file}");
        }
    }

    #[test]
    fn inline_server_answers_map_to_the_contract_kinds() {
        let map = |m: &str| from_grpc_status(&tonic::Status::unknown(m));
        assert!(matches!(
            map(
                "failed to update resource: maestro-6: the resource version is not the latest, the latest version: 2"
            ),
            WorkError::Conflict { .. }
        ));
        assert!(matches!(
            map(
                "failed to update resource: maestro-6: the resource is under deletion, id: 019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"
            ),
            WorkError::Conflict { .. }
        ));
        assert!(matches!(
            map(
                "failed to get resource: maestro-7: Resource with id='019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b' not found"
            ),
            WorkError::NotFound { .. }
        ));
        assert!(matches!(
            map("failed to create resource: maestro-6: This Resource already exists"),
            WorkError::AlreadyExists { .. }
        ));
    }

    #[test]
    fn update_is_guarded_by_the_version_read() {
        let events = SpecEventBuilder::new(SOURCE, CONSUMER);
        let work = json!({
            "metadata": {"name": NAME,
                         "annotations": {RESOURCE_VERSION_ANNOTATION: "9", "hyperfleet.io/generation": "3"}},
            "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap",
                                                 "metadata": {"name": "c", "namespace": "clusters"}}]}}
        });
        let event = update_event(&events, &work, &current(4)).unwrap();
        assert_eq!(event.ty, SpecAction::Update.event_type());
        assert_eq!(
            event.extension("resourceversion"),
            Some(&AttrValue::Integer(4))
        );
        let meta = metadata(&event);
        assert_eq!(meta["generation"], 4);
        assert_eq!(meta["resourceVersion"], "4");
        assert_eq!(
            meta["annotations"],
            json!({"hyperfleet.io/generation": "3"})
        );
        // Deleting: refused without a request, and the message says why.
        let deleting = ExistingWork {
            deleting: Some("2026-11-26T03:44:21Z".into()),
            ..current(4)
        };
        let error = update_event(&events, &work, &deleting).unwrap_err();
        assert!(
            matches!(&error, WorkError::Conflict { message } if message.contains("under deletion")),
            "{error:?}"
        );
        // Without a version read there is nothing to guard with.
        assert!(matches!(
            update_event(&events, &work, &ExistingWork::default()),
            Err(WorkError::Invalid { .. })
        ));
    }
}
