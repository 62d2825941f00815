//! Works found or placed anywhere (placement across management clusters, docs/placement.md): one
//! search finds a cluster's control-plane works on every consumer, one count measures a consumer's
//! load, and [`PlacedWorkClient`] runs the usual [`WorkClient`] flow ([`crate::work::sync`],
//! deletion) on one bundle id and consumer.

use std::future::Future;
use std::sync::Mutex;

use super::bundle::{ResourceBundle, ResourceBundleList};
use super::client::{MaestroWorkClient, update_event};
use super::cloudevent::CloudEvent;
use super::manifestbundle::SpecEventBuilder;
use super::rest::{ListQuery, MAX_LIST_PAGE_SIZE, count_query};
use crate::work::{ExistingWork, WorkClient, WorkError};

/// The two Maestro calls placement needs: a REST list and a gRPC publish.
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

impl BundleApi for MaestroWorkClient {
    async fn list(&self, query: &ListQuery) -> Result<ResourceBundleList, WorkError> {
        self.rest().list(query).await
    }

    async fn publish(&self, event: &CloudEvent) -> Result<(), WorkError> {
        self.publisher().publish(event).await
    }

    async fn get(&self, id: &str) -> Result<Option<ResourceBundle>, WorkError> {
        self.rest().get(id).await
    }
}

/// Every bundle of one search (soft-deleted ones included, oldest first): one request.
pub async fn find(api: &impl BundleApi, search: &str) -> Result<Vec<ResourceBundle>, WorkError> {
    let query = ListQuery {
        search: Some(search.to_owned()),
        page: Some(1),
        size: Some(MAX_LIST_PAGE_SIZE),
        order_by: Some("created_at asc".to_owned()),
    };
    Ok(api.list(&query).await?.items)
}

/// How many bundles match `search` (soft-deleted ones not yet acknowledged by their agent
/// included): one `page=1&size=1` request.
pub async fn count(api: &impl BundleApi, search: &str) -> Result<u64, WorkError> {
    let list = api.list(&count_query(search)).await?;
    Ok(u64::try_from(list.total).unwrap_or(0))
}

/// True when the bundle is not soft-deleted.
pub fn is_live(bundle: &ResourceBundle) -> bool {
    bundle.deleted_at.is_none()
}

/// True when the work's agent has never reported anything (no conditions, no observed version,
/// no manifest status).
pub fn never_reported(work: &ExistingWork) -> bool {
    work.conditions.is_empty() && work.observed_version.is_none() && work.manifests.is_empty()
}

#[derive(Debug)]
struct Bound {
    id: String,
    consumer: String,
    /// The answer of the first `get`, already known from the search (`Some(None)`: known absent).
    primed: Option<Option<ExistingWork>>,
}

/// A [`WorkClient`] on one bundle id and consumer, whatever derivation made the id. The first
/// `get` is answered from what the caller already read (the search); a later `get` (after
/// `AlreadyExists`, or a conflict) searches the cluster's works again and carries on with the
/// live one: the bundle with this id, else the only live one (whose id and consumer it adopts).
#[derive(Debug)]
pub struct PlacedWorkClient<'a, A> {
    api: &'a A,
    source: String,
    cluster_search: String,
    state: Mutex<Bound>,
}

impl<'a, A: BundleApi> PlacedWorkClient<'a, A> {
    /// Bound to bundle `id` on `consumer`; `primed` is the first `get`'s answer; `cluster_search`
    /// finds the cluster's works again for a later `get`.
    pub fn new(
        api: &'a A,
        source: &str,
        cluster_search: &str,
        (id, consumer): (&str, &str),
        primed: Option<ExistingWork>,
    ) -> Result<Self, WorkError> {
        Ok(Self {
            api,
            source: source.to_owned(),
            cluster_search: cluster_search.to_owned(),
            state: Mutex::new(Bound {
                id: id.to_owned(),
                consumer: consumer.to_owned(),
                primed: Some(primed),
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Bound> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The bundle id addressed now.
    pub fn id(&self) -> String {
        self.lock().id.clone()
    }

    /// The consumer (management cluster) the work lives on.
    pub fn consumer(&self) -> String {
        self.lock().consumer.clone()
    }

    fn events(&self) -> SpecEventBuilder {
        let state = self.lock();
        SpecEventBuilder::new(self.source.clone(), state.consumer.clone())
            .with_resource_id(state.id.clone())
    }
}

impl<A: BundleApi> WorkClient for PlacedWorkClient<'_, A> {
    async fn get(&self, _name: &str) -> Result<Option<ExistingWork>, WorkError> {
        if let Some(primed) = self.lock().primed.take() {
            return Ok(primed);
        }
        let found = find(self.api, &self.cluster_search).await?;
        let id = self.id();
        let chosen = match found.iter().find(|b| b.id == id) {
            Some(own) => Some(own),
            None => {
                let live: Vec<&ResourceBundle> = found.iter().filter(|b| is_live(b)).collect();
                match live.as_slice() {
                    [only] => Some(*only),
                    _ => None,
                }
            }
        };
        let Some(bundle) = chosen else {
            return Ok(None);
        };
        if bundle.id != id {
            tracing::info!(
                work_id = %bundle.id,
                management_cluster = %bundle.consumer_name,
                "carrying on with the cluster's work found by the search"
            );
            let mut state = self.lock();
            state.id.clone_from(&bundle.id);
            state.consumer.clone_from(&bundle.consumer_name);
        }
        bundle.to_existing_work(Some(self.source.clone())).map(Some)
    }

    async fn create(&self, work: &serde_json::Value) -> Result<(), WorkError> {
        let event = self.events().create_request(work)?;
        self.api.publish(&event).await
    }

    async fn update(
        &self,
        work: &serde_json::Value,
        current: &ExistingWork,
    ) -> Result<(), WorkError> {
        let event = update_event(&self.events(), work, current)?;
        self.api.publish(&event).await
    }

    async fn delete(&self, name: &str) -> Result<(), WorkError> {
        let event = self
            .events()
            .delete_request(&serde_json::json!({"metadata": {"name": name}}))?;
        self.api.publish(&event).await
    }
}

/// A [`WorkClient`] on one consumer with the standard resource ids (UUIDv5 of source, consumer and
/// name): the NodePool works beside a placed control plane.
#[derive(Debug)]
pub struct ConsumerWorkClient<'a, A> {
    api: &'a A,
    source: String,
    consumer: String,
}

impl<'a, A: BundleApi> ConsumerWorkClient<'a, A> {
    pub fn new(api: &'a A, source: &str, consumer: &str) -> Self {
        Self {
            api,
            source: source.to_owned(),
            consumer: consumer.to_owned(),
        }
    }

    fn events(&self) -> SpecEventBuilder {
        SpecEventBuilder::new(self.source.clone(), self.consumer.clone())
    }
}

impl<A: BundleApi> WorkClient for ConsumerWorkClient<'_, A> {
    async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
        let id = super::resource_id(&self.source, &self.consumer, name).to_string();
        match self.api.get(&id).await? {
            Some(bundle) => bundle.to_existing_work(Some(self.source.clone())).map(Some),
            None => Ok(None),
        }
    }

    async fn create(&self, work: &serde_json::Value) -> Result<(), WorkError> {
        self.api.publish(&self.events().create_request(work)?).await
    }

    async fn update(
        &self,
        work: &serde_json::Value,
        current: &ExistingWork,
    ) -> Result<(), WorkError> {
        self.api
            .publish(&update_event(&self.events(), work, current)?)
            .await
    }

    async fn delete(&self, name: &str) -> Result<(), WorkError> {
        let event = self
            .events()
            .delete_request(&serde_json::json!({"metadata": {"name": name}}))?;
        self.api.publish(&event).await
    }
}

/// The work named `placed_name` through `placed` (the control plane found by search), every other
/// work through `rest` (standard ids on its consumer).
#[derive(Debug)]
pub struct RoutedWorkClient<'a, P, R> {
    pub placed_name: &'a str,
    pub placed: P,
    pub rest: R,
}

impl<P: WorkClient + Sync, R: WorkClient + Sync> WorkClient for RoutedWorkClient<'_, P, R> {
    async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
        if name == self.placed_name {
            self.placed.get(name).await
        } else {
            self.rest.get(name).await
        }
    }

    async fn create(&self, work: &serde_json::Value) -> Result<(), WorkError> {
        let name = work
            .pointer("/metadata/name")
            .and_then(serde_json::Value::as_str);
        if name == Some(self.placed_name) {
            self.placed.create(work).await
        } else {
            self.rest.create(work).await
        }
    }

    async fn update(
        &self,
        work: &serde_json::Value,
        current: &ExistingWork,
    ) -> Result<(), WorkError> {
        let name = work
            .pointer("/metadata/name")
            .and_then(serde_json::Value::as_str);
        if name == Some(self.placed_name) {
            self.placed.update(work, current).await
        } else {
            self.rest.update(work, current).await
        }
    }

    async fn delete(&self, name: &str) -> Result<(), WorkError> {
        if name == self.placed_name {
            self.placed.delete(name).await
        } else {
            self.rest.delete(name).await
        }
    }
}

/// An in-memory Maestro for the placement tests: bundles by id, a request log, Maestro's
/// primary-key refusal of a duplicate id (also a soft-deleted one), and `maestro-9` for an
/// unknown consumer.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod fake {
    use std::collections::BTreeSet;
    use std::sync::Mutex;

    use serde_json::{Value, json};

    use super::*;
    use crate::work::maestro::cloudevent::AttrValue;

    #[derive(Debug, Default)]
    pub(crate) struct FakeMaestro {
        pub bundles: Mutex<Vec<ResourceBundle>>,
        pub consumers: BTreeSet<String>,
        /// `list <search>` / `publish <type> <id> <consumer>`.
        pub requests: Mutex<Vec<String>>,
        /// Fails every list with this.
        pub list_error: Option<WorkError>,
        /// How many of the next cluster searches answer as if no work existed yet (a search that
        /// ran before another pulse's create).
        pub stale_searches: Mutex<u32>,
    }

    impl FakeMaestro {
        pub fn with_consumers(consumers: &[&str]) -> Self {
            Self {
                consumers: consumers.iter().map(|c| (*c).to_owned()).collect(),
                ..Default::default()
            }
        }

        pub fn requests(&self) -> Vec<String> {
            self.requests.lock().unwrap().clone()
        }

        /// A control-plane bundle as the server lists it, optionally reported on.
        pub fn insert(&self, id: &str, consumer: &str, cluster_id: &str, status: Option<Value>) {
            let metadata = json!({"name": format!("hostedcluster-{cluster_id}"), "labels": {
                "hyperfleet.io/adapter": "controlplane", "hyperfleet.io/cluster-id": cluster_id,
                "hyperfleet.io/managed-by": "hyperfleet-hypershift-adapter"},
                "annotations": {"hyperfleet.io/generation": "3"}});
            self.insert_with(id, consumer, metadata, status);
        }

        /// Any bundle with `metadata` (name, labels, annotations).
        pub fn insert_with(
            &self,
            id: &str,
            consumer: &str,
            metadata: Value,
            status: Option<Value>,
        ) {
            let bundle = json!({
                "id": id, "kind": "ResourceBundle", "href": "", "name": id, "consumer_name": consumer,
                "version": 1, "created_at": format!("2026-11-26T14:14:{:02}Z", self.bundles.lock().unwrap().len()),
                "metadata": metadata, "manifests": [], "status": status,
            });
            self.bundles
                .lock()
                .unwrap()
                .push(serde_json::from_value(bundle).unwrap());
        }

        fn matches(bundle: &ResourceBundle, search: &str) -> bool {
            let label = |k: &str| {
                bundle.metadata["labels"][k]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            };
            let fragment = search
                .split("@>'")
                .nth(1)
                .map(|f| f.trim_end_matches('\''))
                .map(|f| serde_json::from_str::<serde_json::Map<String, Value>>(f).unwrap())
                .unwrap_or_default();
            let consumer_ok = search
                .split("consumer_name='")
                .nth(1)
                .and_then(|rest| rest.split('\'').next())
                .is_none_or(|c| c == bundle.consumer_name);
            consumer_ok
                && fragment
                    .iter()
                    .all(|(k, v)| label(k) == v.as_str().unwrap_or_default())
        }
    }

    impl BundleApi for FakeMaestro {
        async fn list(&self, query: &ListQuery) -> Result<ResourceBundleList, WorkError> {
            let search = query.search.clone().unwrap_or_default();
            self.requests.lock().unwrap().push(format!("list {search}"));
            if let Some(e) = &self.list_error {
                return Err(e.clone());
            }
            if search.contains("hyperfleet.io/cluster-id") {
                let mut stale = self.stale_searches.lock().unwrap();
                if *stale > 0 {
                    *stale -= 1;
                    return Ok(ResourceBundleList {
                        kind: "ResourceBundleList".into(),
                        page: 1,
                        ..Default::default()
                    });
                }
            }
            let items: Vec<ResourceBundle> = self
                .bundles
                .lock()
                .unwrap()
                .iter()
                .filter(|b| Self::matches(b, &search))
                .cloned()
                .collect();
            let total = items.len() as i64;
            let size = query.size.unwrap_or(100) as usize;
            Ok(ResourceBundleList {
                kind: "ResourceBundleList".into(),
                page: 1,
                size: items.len().min(size) as i64,
                total,
                items: items.into_iter().take(size).collect(),
            })
        }

        async fn get(&self, id: &str) -> Result<Option<ResourceBundle>, WorkError> {
            self.requests.lock().unwrap().push(format!("get {id}"));
            Ok(self
                .bundles
                .lock()
                .unwrap()
                .iter()
                .find(|b| b.id == id)
                .cloned())
        }

        async fn publish(&self, event: &CloudEvent) -> Result<(), WorkError> {
            let text = |k: &str| match event.extension(k) {
                Some(AttrValue::String(s)) => s.clone(),
                _ => String::new(),
            };
            let (id, consumer) = (text("resourceid"), text("clustername"));
            let kind = event.ty.rsplit('.').next().unwrap_or_default().to_owned();
            self.requests
                .lock()
                .unwrap()
                .push(format!("publish {kind} {id} {consumer}"));
            let mut bundles = self.bundles.lock().unwrap();
            if kind == "create_request" {
                if bundles.iter().any(|b| b.id == id) {
                    return Err(WorkError::AlreadyExists {
                        message:
                            "failed to create resource: maestro-6: This Resource already exists"
                                .into(),
                    });
                }
                if !self.consumers.contains(&consumer) {
                    return Err(WorkError::ConsumerNotFound {
                        message: format!(
                            "failed to create resource: maestro-9: consumer {consumer}: fk_resources_consumers"
                        ),
                    });
                }
                let meta: Value = serde_json::from_str(&text("metadata")).unwrap();
                let metadata = json!({"name": meta["name"], "labels": meta["labels"],
                                      "annotations": meta["annotations"]});
                drop(bundles);
                self.insert_with(&id, &consumer, metadata, None);
            } else if kind == "update_request" && !bundles.iter().any(|b| b.id == id) {
                return Err(WorkError::NotFound {
                    message: format!(
                        "failed to update resource: maestro-7: Resource with id='{id}' not found"
                    ),
                });
            } else if kind == "delete_request"
                && let Some(b) = bundles.iter_mut().find(|b| b.id == id)
            {
                b.deleted_at = Some("2026-11-26T15:00:00Z".into());
            }
            Ok(())
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::fake::FakeMaestro;
    use super::*;
    use crate::work::sync::{self, Seen};

    const SOURCE: &str = "hyperfleet-hypershift-adapter";
    const CLUSTER: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
    const SEARCH: &str = r#"source='hyperfleet-hypershift-adapter' and payload->'metadata'->'labels'@>'{"hyperfleet.io/adapter":"controlplane","hyperfleet.io/cluster-id":"019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"}'"#;

    #[tokio::test]
    async fn the_first_get_is_answered_from_the_search_without_a_request() {
        let maestro = FakeMaestro::with_consumers(&["mgmt-use1-a"]);
        maestro.insert(
            "0d0c8c5e-2f7e-5b9a-9c1d-1f2e3d4c5b6a",
            "mgmt-use1-a",
            CLUSTER,
            None,
        );
        let found = find(&maestro, SEARCH).await.unwrap();
        assert_eq!(found.len(), 1);
        let existing = found[0].to_existing_work(None).unwrap();
        let client = PlacedWorkClient::new(
            &maestro,
            SOURCE,
            SEARCH,
            (&found[0].id, "mgmt-use1-a"),
            Some(existing),
        )
        .unwrap();
        let seen = sync::get_or_create(&client, "hostedcluster-x", &serde_json::json!({}))
            .await
            .unwrap();
        assert!(matches!(seen, Seen::Found(_)));
        assert_eq!(maestro.requests().len(), 1, "{:?}", maestro.requests());
        // A later get searches again.
        assert!(client.get("hostedcluster-x").await.unwrap().is_some());
        assert_eq!(maestro.requests().len(), 2);
    }
}
