//! An in-memory Maestro for the tests: bundles by id, a request log, Maestro's
//! primary-key refusal of a duplicate id (also a soft-deleted one), and `maestro-9` for an
//! unknown consumer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::sync::Mutex;

use serde_json::{Value, json};

use super::bundle::{ResourceBundle, ResourceBundleList};
use super::client::BundleApi;
use super::cloudevent::{AttrValue, CloudEvent};
use super::rest::ListQuery;
use crate::work::WorkError;

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
    pub fn insert_with(&self, id: &str, consumer: &str, metadata: Value, status: Option<Value>) {
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
                    message: "failed to create resource: maestro-6: This Resource already exists"
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
