//! Works found or placed anywhere (placement across management clusters, README "Placement across
//! management clusters"): one search finds a cluster's control-plane works on every consumer, one
//! count measures a consumer's load, and [`PlacedWorkClient`] runs the usual
//! [`WorkClient`] flow ([`crate::work::sync`], deletion) on one bundle id and consumer.

use std::future::Future;
use std::sync::Mutex;

use super::bundle::{ResourceBundle, ResourceBundleList};
use super::client::{MaestroWorkClient, update_event};
use super::cloudevent::CloudEvent;
use super::manifestbundle::SpecEventBuilder;
use super::rest::{ListQuery, MAX_LIST_PAGE_SIZE, count_query, label_search};
use crate::hyperfleet::{ADAPTER_LABEL, CLUSTER_ID_LABEL, CONTROLPLANE_ADAPTER};
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
}

impl BundleApi for MaestroWorkClient {
    async fn list(&self, query: &ListQuery) -> Result<ResourceBundleList, WorkError> {
        self.rest().list(query).await
    }

    async fn publish(&self, event: &CloudEvent) -> Result<(), WorkError> {
        self.publisher().publish(event).await
    }
}

/// The search finding every control-plane work of `cluster_id` (of this source), on any consumer.
pub fn cluster_works_search(source: &str, cluster_id: &str) -> Result<String, WorkError> {
    label_search(
        source,
        None,
        &[
            (ADAPTER_LABEL, CONTROLPLANE_ADAPTER),
            (CLUSTER_ID_LABEL, cluster_id),
        ],
    )
}

/// The search counting the control planes of `consumer` (of this source).
pub fn consumer_load_search(source: &str, consumer: &str) -> Result<String, WorkError> {
    label_search(
        source,
        Some(consumer),
        &[(ADAPTER_LABEL, CONTROLPLANE_ADAPTER)],
    )
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

/// How many control-plane bundles `consumer` holds (soft-deleted ones not yet acknowledged by
/// their agent included): one `page=1&size=1` request.
pub async fn load(api: &impl BundleApi, source: &str, consumer: &str) -> Result<u64, WorkError> {
    let list = api
        .list(&count_query(&consumer_load_search(source, consumer)?))
        .await?;
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
    /// Bound to bundle `id` on `consumer`; `primed` is the first `get`'s answer.
    pub fn new(
        api: &'a A,
        source: &str,
        cluster_id: &str,
        (id, consumer): (&str, &str),
        primed: Option<ExistingWork>,
    ) -> Result<Self, WorkError> {
        Ok(Self {
            api,
            source: source.to_owned(),
            cluster_search: cluster_works_search(source, cluster_id)?,
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

        /// A bundle as the server lists it, with labels, optionally reported on.
        pub fn insert(&self, id: &str, consumer: &str, cluster_id: &str, status: Option<Value>) {
            let bundle = json!({
                "id": id, "kind": "ResourceBundle", "href": "", "name": id, "consumer_name": consumer,
                "version": 1, "created_at": format!("2026-11-26T14:14:{:02}Z", self.bundles.lock().unwrap().len()),
                "metadata": {"name": format!("hostedcluster-{cluster_id}"), "labels": {
                    ADAPTER_LABEL: CONTROLPLANE_ADAPTER, CLUSTER_ID_LABEL: cluster_id,
                    "hyperfleet.io/managed-by": "hyperfleet-hypershift-adapter"},
                    "annotations": {"hyperfleet.io/generation": "3"}},
                "manifests": [], "status": status,
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
            if search.contains(CLUSTER_ID_LABEL) {
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
                let cluster_id = meta["labels"][CLUSTER_ID_LABEL]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                drop(bundles);
                self.insert(&id, &consumer, &cluster_id, None);
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

    #[test]
    fn the_searches_are_the_recorded_label_fragment_shape() {
        assert_eq!(
            cluster_works_search(SOURCE, CLUSTER).unwrap(),
            format!(
                r#"source='{SOURCE}' and payload->'metadata'->'labels'@>'{{"hyperfleet.io/adapter":"controlplane","hyperfleet.io/cluster-id":"{CLUSTER}"}}'"#
            )
        );
        assert_eq!(
            consumer_load_search(SOURCE, "mgmt-use1-a").unwrap(),
            format!(
                r#"source='{SOURCE}' and consumer_name='mgmt-use1-a' and payload->'metadata'->'labels'@>'{{"hyperfleet.io/adapter":"controlplane"}}'"#
            )
        );
        assert!(cluster_works_search(SOURCE, "x'y").is_err());
    }

    #[tokio::test]
    async fn the_first_get_is_answered_from_the_search_without_a_request() {
        let maestro = FakeMaestro::with_consumers(&["mgmt-use1-a"]);
        maestro.insert(
            "0d0c8c5e-2f7e-5b9a-9c1d-1f2e3d4c5b6a",
            "mgmt-use1-a",
            CLUSTER,
            None,
        );
        let found = find(&maestro, &cluster_works_search(SOURCE, CLUSTER).unwrap())
            .await
            .unwrap();
        assert_eq!(found.len(), 1);
        let existing = found[0].to_existing_work(None).unwrap();
        let client = PlacedWorkClient::new(
            &maestro,
            SOURCE,
            CLUSTER,
            (&found[0].id, "mgmt-use1-a"),
            Some(existing),
        )
        .unwrap();
        let seen = sync::get_or_create(&client, "hostedcluster-x", &serde_json::json!({}))
            .await
            .unwrap();
        assert!(matches!(seen, Seen::Found(_)));
        assert_eq!(maestro.requests().len(), 1, "{:?}", maestro.requests());
    }

    #[tokio::test]
    async fn a_load_is_one_count_request_and_counts_only_that_consumer() {
        let maestro = FakeMaestro::with_consumers(&["mgmt-use1-a", "mgmt-use1-b"]);
        maestro.insert(
            "0d0c8c5e-2f7e-5b9a-9c1d-1f2e3d4c5b6a",
            "mgmt-use1-a",
            CLUSTER,
            None,
        );
        maestro.insert(
            "0d0c8c5e-2f7e-5b9a-9c1d-1f2e3d4c5b6b",
            "mgmt-use1-a",
            "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6c",
            None,
        );
        maestro.insert(
            "0d0c8c5e-2f7e-5b9a-9c1d-1f2e3d4c5b6c",
            "mgmt-use1-b",
            "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6d",
            None,
        );
        assert_eq!(load(&maestro, SOURCE, "mgmt-use1-a").await.unwrap(), 2);
        assert_eq!(load(&maestro, SOURCE, "mgmt-use1-b").await.unwrap(), 1);
        assert_eq!(maestro.requests().len(), 2);
    }
}
