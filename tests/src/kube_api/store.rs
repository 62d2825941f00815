//! The object store: every object of every resource, one global resourceVersion, and the
//! event history watches replay from.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::time;

/// A resource collection, independent of version and namespace: `(batch, jobs)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Collection {
    pub group: String,
    pub resource: String,
}

impl Collection {
    pub fn new(group: &str, resource: &str) -> Self {
        Collection {
            group: group.to_owned(),
            resource: resource.to_owned(),
        }
    }
}

/// `(namespace, name)`; the namespace is `""` for cluster-scoped objects.
pub type ObjectKey = (String, String);

/// A watch event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One committed change.
#[derive(Debug)]
pub struct Event {
    pub collection: Collection,
    pub key: ObjectKey,
    pub kind: EventType,
    pub resource_version: u64,
    pub object: Value,
}

const HISTORY: usize = 10_000;

/// Kept events to replay, then the live feed.
pub type Subscription = (Vec<Arc<Event>>, broadcast::Receiver<Arc<Event>>);

/// All objects, guarded by the server's mutex.
#[derive(Debug)]
pub struct Store {
    resource_version: u64,
    next_uid: u64,
    collections: HashMap<Collection, BTreeMap<ObjectKey, Value>>,
    history: VecDeque<Arc<Event>>,
    events: broadcast::Sender<Arc<Event>>,
    /// Tokens minted by the TokenRequest API, with the user each authenticates as.
    pub tokens: HashMap<String, String>,
    /// The audiences (`spec.audiences`) each minted token was requested for.
    pub audiences: HashMap<String, Vec<String>>,
    /// The cluster CA (PEM) `kube-root-ca.crt` publishes.
    pub root_ca: String,
}

impl Default for Store {
    fn default() -> Self {
        Store {
            resource_version: 100,
            next_uid: 1,
            collections: HashMap::new(),
            history: VecDeque::new(),
            events: broadcast::channel(HISTORY).0,
            tokens: HashMap::new(),
            audiences: HashMap::new(),
            root_ca: String::new(),
        }
    }
}

/// A page of a list, in name order.
#[derive(Debug)]
pub struct Page<'a> {
    pub items: Vec<&'a Value>,
    pub continue_token: Option<String>,
    pub remaining: Option<usize>,
}

/// Reads the integer `metadata.resourceVersion` of a stored object.
pub fn resource_version_of(object: &Value) -> Option<u64> {
    object
        .pointer("/metadata/resourceVersion")?
        .as_str()?
        .parse()
        .ok()
}

impl Store {
    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.resource_version
    }

    /// A stored object.
    pub fn get(&self, collection: &Collection, key: &ObjectKey) -> Option<&Value> {
        self.collections.get(collection)?.get(key)
    }

    /// Fills in what the server assigns on create: uid, creationTimestamp, namespace, and
    /// generation 1 when the resource tracks one (`generation`).
    pub fn stamp_new(&mut self, object: &mut Value, namespace: &str, generation: bool) {
        let uid = format!("6a1f0000-0000-4000-8000-{:012x}", self.next_uid);
        self.next_uid += 1;
        if !object.is_object() {
            *object = json!({});
        }
        let metadata = object
            .as_object_mut()
            .map(|o| o.entry("metadata").or_insert_with(|| json!({})));
        if let Some(Value::Object(meta)) = metadata {
            meta.insert("uid".into(), Value::String(uid));
            meta.insert("creationTimestamp".into(), Value::String(time::now()));
            if generation {
                meta.entry("generation").or_insert(json!(1));
            }
            if !namespace.is_empty() {
                meta.insert("namespace".into(), Value::String(namespace.to_owned()));
            }
        }
    }

    /// Stores `object` under `key` with a new resourceVersion and records the event.
    pub fn commit(
        &mut self,
        collection: &Collection,
        key: ObjectKey,
        kind: EventType,
        mut object: Value,
    ) -> Value {
        self.resource_version += 1;
        let rv = self.resource_version;
        if let Some(Value::Object(meta)) = object.get_mut("metadata") {
            meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
        }
        let objects = self.collections.entry(collection.clone()).or_default();
        match kind {
            EventType::Deleted => objects.remove(&key),
            EventType::Added | EventType::Modified => objects.insert(key.clone(), object.clone()),
        };
        let event = Arc::new(Event {
            collection: collection.clone(),
            key,
            kind,
            resource_version: rv,
            object: object.clone(),
        });
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(Arc::clone(&event));
        // Nobody listening is fine.
        let _ = self.events.send(event);
        object
    }

    /// Removes an object, recording a DELETED event; returns it as it was last stored.
    pub fn delete(&mut self, collection: &Collection, key: &ObjectKey) -> Option<Value> {
        let object = self.get(collection, key)?.clone();
        Some(self.commit(collection, key.clone(), EventType::Deleted, object))
    }

    /// Subscribes to future events and returns the kept events after `since` (oldest first),
    /// or `Err(oldest)` when `since` is older than the kept history.
    pub fn subscribe(&self, since: u64) -> Result<Subscription, u64> {
        let oldest = self
            .history
            .front()
            .map_or(self.resource_version, |e| e.resource_version);
        if since + 1 < oldest && since < self.resource_version {
            return Err(oldest);
        }
        let replay = self
            .history
            .iter()
            .filter(|e| e.resource_version > since)
            .cloned()
            .collect();
        Ok((replay, self.events.subscribe()))
    }

    /// Objects of a collection (one namespace, or all when `None`), in key order.
    pub fn iter<'a>(
        &'a self,
        collection: &Collection,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a ObjectKey, &'a Value)> + 'a {
        let objects = self.collections.get(collection);
        let start = namespace.map_or(Bound::Unbounded, |ns| {
            Bound::Included((ns.to_owned(), String::new()))
        });
        objects
            .into_iter()
            .flat_map(move |map| map.range((start.clone(), Bound::Unbounded)))
            .take_while(move |(key, _)| namespace.is_none_or(|ns| key.0 == ns))
    }

    /// One page of matching objects. The continue token is `offset|namespace|name` of the last item.
    pub fn page<'a>(
        &'a self,
        collection: &Collection,
        namespace: Option<&'a str>,
        filter: &dyn Fn(&Value) -> bool,
        limit: Option<usize>,
        continue_token: Option<&str>,
    ) -> Result<Page<'a>, String> {
        let (offset, after) = match continue_token {
            Some(token) => parse_token(token)?,
            None => (0, None),
        };
        let mut matching = self
            .iter(collection, namespace)
            .filter(|(key, _)| after.as_ref().is_none_or(|a| *key > a))
            .filter(|(_, object)| filter(object));
        let limit = limit.filter(|l| *l > 0).unwrap_or(usize::MAX);
        let mut items = Vec::new();
        let mut last_key = None;
        for (key, object) in matching.by_ref().take(limit) {
            items.push(object);
            last_key = Some(key);
        }
        let remaining = matching.count();
        let continue_token = match last_key {
            Some((ns, name)) if remaining > 0 => {
                Some(format!("{}|{ns}|{name}", offset + items.len()))
            }
            _ => None,
        };
        Ok(Page {
            items,
            continue_token,
            remaining: (remaining > 0).then_some(remaining),
        })
    }
}

fn parse_token(token: &str) -> Result<(usize, Option<ObjectKey>), String> {
    let mut parts = token.splitn(3, '|');
    match (
        parts.next().map(str::parse::<usize>),
        parts.next(),
        parts.next(),
    ) {
        (Some(Ok(offset)), Some(ns), Some(name)) => {
            Ok((offset, Some((ns.to_owned(), name.to_owned()))))
        }
        _ => Err(format!("continue key is not valid: {token:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes() -> Collection {
        Collection::new("", "nodes")
    }

    fn store_with(n: usize) -> Store {
        let mut store = Store::default();
        for i in 0..n {
            let name = format!("node-{i:04}");
            store.commit(
                &nodes(),
                (String::new(), name.clone()),
                EventType::Added,
                json!({"metadata": {"name": name}}),
            );
        }
        store
    }

    #[test]
    fn pages_walk_every_object_once() {
        let store = store_with(5);
        let first = store
            .page(&nodes(), None, &|_| true, Some(2), None)
            .unwrap();
        assert_eq!(first.items.len(), 2);
        assert_eq!(first.remaining, Some(3));
        let token = first.continue_token.unwrap();
        let second = store
            .page(&nodes(), None, &|_| true, Some(2), Some(&token))
            .unwrap();
        let third = store
            .page(
                &nodes(),
                None,
                &|_| true,
                Some(2),
                second.continue_token.as_deref(),
            )
            .unwrap();
        assert_eq!(third.items.len(), 1);
        assert_eq!(third.continue_token, None);
        assert_eq!(third.items[0]["metadata"]["name"], "node-0004");
    }

    #[test]
    fn every_commit_bumps_the_global_resource_version() {
        let store = store_with(2);
        assert_eq!(store.resource_version(), 102);
        let page = store.page(&nodes(), None, &|_| true, None, None).unwrap();
        assert_eq!(page.items[1]["metadata"]["resourceVersion"], "102");
    }

    #[test]
    fn a_bad_continue_token_is_an_error() {
        assert!(
            store_with(1)
                .page(&nodes(), None, &|_| true, Some(1), Some("garbage"))
                .is_err()
        );
    }
}
