//! Storage of the fake Maestro: resources, consumers, counters, knobs, and the simulated agent.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use hypershift_adapter::work::maestro::cloudevent::{AttrValue, CloudEvent, SPEC_VERSION};
use hypershift_adapter::work::maestro::manifestbundle::{DATA_TYPE, new_event_id};
use hypershift_adapter::work::maestro::proto;
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};

/// One stored resource bundle.
#[derive(Debug, Clone)]
pub struct Resource {
    /// Resource id (`ce-resourceid`).
    pub id: String,
    /// CE source of the create request.
    pub source: String,
    /// Consumer (`ce-clustername`).
    pub consumer: String,
    /// Spec version.
    pub version: i64,
    /// The version at which the manifests (the bundle data) last changed: an update that leaves
    /// them as they were bumps [`Self::version`] but not this, and the agent's `Applied`
    /// conditions keep this as their `observedGeneration` (recording `09h`).
    pub manifests_version: i64,
    /// The last spec CloudEvent, JSON form.
    pub payload: Value,
    /// Spec metadata (from the `metadata` extension).
    pub metadata: Value,
    /// Creation time.
    pub created_at: jiff::Timestamp,
    /// Last spec change.
    pub updated_at: jiff::Timestamp,
    /// Soft-delete time.
    pub deleted_at: Option<jiff::Timestamp>,
    /// REST `status` object once the agent reported.
    pub status: Option<Value>,
    /// Injected `status` feedback (`jsonRaw` text, not validated).
    pub feedback_raw: Option<String>,
    /// The management cluster refuses the status-rule manifest (the HostedCluster) with this
    /// API server message: the agent reports `Applied=False` (recording `06`).
    pub apply_error: Option<String>,
    /// The status-rule manifest was deleted on the management cluster behind the agent: manifest
    /// `Available=False`, the last feedback kept (recording `08`).
    pub gone_on_cluster: bool,
    /// `(reason, message)` of a failed status feedback sync: the status-rule manifest's
    /// `StatusFeedbackSynced=False` (not recorded from the real agent; the test chooses the words).
    pub feedback_sync_failure: Option<(String, String)>,
    /// Finalizers of the status-rule manifest (the HostedCluster) on the management cluster. While
    /// any remain, a deletion hangs in `Deleting=True` (recordings `10c`, `10i`); reported in a
    /// `.metadata` feedback rule, if the work has one.
    pub finalizers: Vec<String>,
    /// The status-rule manifest (the HostedCluster or NodePool) as the simulated management
    /// cluster holds it: its `metadata.generation` and the `spec` it was last applied with. The
    /// API server bumps the generation when an apply changes the spec and never on a status write
    /// (measured on the real kube-apiserver; recording `09d`); fed back for a
    /// `.metadata.generation` rule.
    pub object: Option<(i64, Value)>,
}

impl Resource {
    /// The `spec` of the status-rule manifest of the current bundle, if any.
    fn target_spec(&self) -> Option<Value> {
        let bundle = self.bundle();
        let manifests = bundle.get("manifests")?.as_array()?;
        let configs = bundle
            .get("manifestConfigs")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        manifests
            .iter()
            .enumerate()
            .find(|(i, m)| has_status_rule(&configs, &resource_meta(*i, m)))
            .map(|(_, m)| m.get("spec").cloned().unwrap_or(Value::Null))
    }

    /// The agent applies the current bundle: the status-rule object is created at generation 1,
    /// or its generation bumped when the spec changed (server-side apply of an unchanged spec
    /// changes nothing).
    pub(crate) fn apply_object(&mut self) {
        if self.apply_error.is_some() || self.gone_on_cluster {
            return;
        }
        let Some(spec) = self.target_spec() else {
            return;
        };
        self.object = match self.object.take() {
            Some((generation, applied)) if applied == spec => Some((generation, applied)),
            Some((generation, _)) => Some((generation + 1, spec)),
            None => Some((1, spec)),
        };
    }

    /// The object's `metadata.generation` on the simulated management cluster (0 before the
    /// agent applied it).
    pub fn object_generation(&self) -> i64 {
        self.object.as_ref().map_or(0, |(g, _)| *g)
    }
    /// The `data` (ManifestBundle) of the stored spec event, as the server decodes and renders it:
    /// every resource identifier (of `manifestConfigs` and of the `SelectivelyOrphan` rules) has
    /// a `namespace`, `""` for a cluster-scoped object that the writer left out (a Go string
    /// without `omitempty`; measured on the real server, REST and status events).
    pub fn bundle(&self) -> Value {
        let mut bundle = self
            .payload
            .get("data")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let identifiers = bundle
            .get_mut("manifestConfigs")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(|c| c.get_mut("resourceIdentifier"));
        for id in identifiers.filter_map(Value::as_object_mut) {
            id.entry("namespace").or_insert_with(|| json!(""));
        }
        let rules = bundle
            .pointer_mut("/deleteOption/selectivelyOrphans/orphaningRules")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten();
        for rule in rules.filter_map(Value::as_object_mut) {
            rule.entry("namespace").or_insert_with(|| json!(""));
        }
        bundle
    }

    /// REST `ResourceBundle` rendering (§4.3).
    pub fn to_rest(&self) -> Value {
        let bundle = self.bundle();
        let mut metadata = self.metadata.clone();
        if let Some(m) = metadata.as_object_mut() {
            m.insert("creationTimestamp".into(), seconds(self.created_at).into());
            if let Some(d) = self.deleted_at {
                m.insert("deletionTimestamp".into(), seconds(d).into());
            }
        }
        let mut out = json!({
            "id": self.id,
            "kind": "ResourceBundle",
            "href": format!("/api/maestro/v1/resource-bundles/{}", self.id),
            "name": self.id,
            "consumer_name": self.consumer,
            "version": self.version,
            "created_at": self.created_at.to_string(),
            "updated_at": self.updated_at.to_string(),
            "metadata": metadata,
            "manifests": bundle.get("manifests").cloned().unwrap_or_else(|| json!([])),
            "manifest_configs": bundle.get("manifestConfigs").cloned().unwrap_or_else(|| json!([])),
            "delete_option": bundle.get("deleteOption").cloned().unwrap_or_else(|| json!({})),
        });
        if let Some(d) = self.deleted_at {
            out["deleted_at"] = d.to_string().into();
        }
        if let Some(s) = &self.status {
            out["status"] = s.clone();
        }
        out
    }

    /// The work name from the spec metadata.
    pub fn work_name(&self) -> Option<&str> {
        self.metadata.get("name").and_then(Value::as_str)
    }
}

/// RFC 3339 with seconds precision (metav1.Time).
pub fn seconds(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A registered consumer (management cluster) as REST renders it.
#[derive(Debug, Clone)]
pub struct Consumer {
    /// A random UUID, as the server gives one.
    pub id: String,
    pub created_at: jiff::Timestamp,
}

impl Consumer {
    /// A consumer registered now.
    pub fn new() -> Consumer {
        let hex = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        Consumer {
            id: format!(
                "{}-{}-4{}-{}-{}",
                &hex[0..8],
                &hex[8..12],
                &hex[13..16],
                &hex[16..20],
                &hex[20..32]
            ),
            created_at: jiff::Timestamp::now(),
        }
    }

    /// REST `Consumer` (keys as the real server sends them; no `labels` when there are none).
    pub fn to_rest(&self, name: &str) -> Value {
        json!({
            "id": self.id, "kind": "Consumer", "href": format!("/api/maestro/v1/consumers/{}", self.id),
            "name": name, "created_at": self.created_at.to_string(), "updated_at": self.created_at.to_string(),
        })
    }
}

impl Default for Consumer {
    fn default() -> Self {
        Consumer::new()
    }
}

/// Mutable state behind one lock.
#[derive(Debug, Default)]
pub struct State {
    /// Registered consumers by name.
    pub consumers: BTreeMap<String, Consumer>,
    pub resources: BTreeMap<String, Resource>,
    pub calls: BTreeMap<String, u64>,
    pub received: Vec<CloudEvent>,
    pub fail_next: u32,
    pub latency: Duration,
    pub agent_delay: Option<Duration>,
    pub ack_deletes: bool,
    pub status_version_as_string: bool,
    pub sequence: u64,
    /// Namespaces that exist on the simulated management cluster; `None` = every namespace. A
    /// work's Namespace manifest adds its namespace once the agent applies that work.
    pub cluster_namespaces: Option<BTreeSet<String>>,
    /// Consumers whose work agent is stopped: it applies nothing, reports no status and
    /// acknowledges no deletion until started again.
    pub stopped_agents: BTreeSet<String>,
}

impl State {
    /// Whether the work agent of `id`'s consumer runs (false for an unknown `id`).
    fn agent_runs(&self, id: &str) -> bool {
        self.resources
            .get(id)
            .is_some_and(|r| !self.stopped_agents.contains(&r.consumer))
    }
}

/// Everything the servers share.
#[derive(Debug)]
pub struct Shared {
    state: Mutex<State>,
    /// Required bearer token (gRPC), if any.
    pub token: Option<String>,
    /// Heartbeat period on Subscribe streams.
    pub heartbeat: Duration,
    /// Status events: (source, event).
    pub events: broadcast::Sender<(String, proto::CloudEvent)>,
    /// Bumped to end every open Subscribe stream.
    pub kill: watch::Sender<u64>,
    /// Sources allowed to publish/subscribe; `None` = all.
    pub allowed_sources: Option<Vec<String>>,
}

impl Shared {
    pub fn new(
        state: State,
        token: Option<String>,
        heartbeat: Duration,
        allowed_sources: Option<Vec<String>>,
    ) -> Arc<Self> {
        let (events, _) = broadcast::channel(1024);
        let (kill, _) = watch::channel(0);
        Arc::new(Self {
            state: Mutex::new(state),
            token,
            heartbeat,
            events,
            kill,
            allowed_sources,
        })
    }

    /// Locks the state (a poisoned lock is taken over: a panicking test already failed).
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts a call, applies the latency knob and consumes one injected fault. Returns true if the call must
    /// fail as unavailable.
    pub async fn enter(&self, method: &str) -> bool {
        let latency = {
            let mut st = self.lock();
            *st.calls.entry(method.to_owned()).or_default() += 1;
            st.latency
        };
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        let mut st = self.lock();
        if st.fail_next > 0 {
            st.fail_next -= 1;
            return true;
        }
        false
    }

    /// Resolves a resource id or a work name to the id. A work name several bundles carry (a
    /// withdrawn one, soft-deleted, and its re-placement on another consumer) names the live
    /// one, else the newest.
    pub fn find_id(&self, key: &str) -> Option<String> {
        let st = self.lock();
        if st.resources.contains_key(key) {
            return Some(key.to_owned());
        }
        st.resources
            .values()
            .filter(|r| r.work_name() == Some(key))
            .max_by_key(|r| (r.deleted_at.is_none(), r.created_at))
            .map(|r| r.id.clone())
    }

    /// Stores a created bundle as the server's create does (§3.7): `maestro-6` for an id that
    /// exists (also soft-deleted, whatever its consumer), `maestro-9` for an unknown consumer;
    /// the error text is the gRPC status message.
    pub fn insert_created(
        &self,
        source: &str,
        consumer: &str,
        id: &str,
        version: i64,
        payload: Value,
        metadata: Value,
    ) -> Result<(), String> {
        let mut st = self.lock();
        if st.resources.contains_key(id) {
            return Err(
                "failed to create resource: maestro-6: This Resource already exists".into(),
            );
        }
        if !st.consumers.contains_key(consumer) {
            return Err(
                "failed to create resource: maestro-9: Unable to create Resource: ERROR: insert or update on table \"resources\" violates foreign key constraint \"fk_resources_consumers\" (SQLSTATE 23503)"
                    .into(),
            );
        }
        let now = jiff::Timestamp::now();
        let version = if version == 0 { 1 } else { version };
        let resource = Resource {
            id: id.to_owned(),
            source: source.to_owned(),
            consumer: consumer.to_owned(),
            version,
            manifests_version: version,
            payload,
            metadata,
            created_at: now,
            updated_at: now,
            deleted_at: None,
            status: None,
            feedback_raw: None,
            apply_error: None,
            gone_on_cluster: false,
            feedback_sync_failure: None,
            finalizers: Vec::new(),
            object: None,
        };
        st.resources.insert(id.to_owned(), resource);
        Ok(())
    }

    /// Counts one more call of `kind` (a finer counter next to [`Self::enter`]'s per-method one).
    pub fn count(&self, kind: &str) {
        *self.lock().calls.entry(kind.to_owned()).or_default() += 1;
    }

    /// The agent of `consumer` comes back: with an automatic agent (an agent delay), after the
    /// delay it applies every live work of that consumer whose current version it has not
    /// reported, and reports and (unless deletes are held) acknowledges every deletion it missed,
    /// as a real agent's resync does. An on-demand agent waits to be told, as before.
    pub fn resync_agent(self: &Arc<Self>, consumer: &str) {
        let Some(delay) = self.lock().agent_delay else {
            return;
        };
        let shared = Arc::clone(self);
        let consumer = consumer.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let (pending, deleting): (Vec<String>, Vec<String>) = {
                let st = shared.lock();
                let mine: Vec<&Resource> = st
                    .resources
                    .values()
                    .filter(|r| r.consumer == consumer)
                    .collect();
                (
                    mine.iter()
                        .filter(|r| {
                            r.deleted_at.is_none()
                                && r.status
                                    .as_ref()
                                    .and_then(|s| s["ObservedVersion"].as_i64())
                                    != Some(r.version)
                        })
                        .map(|r| r.id.clone())
                        .collect(),
                    mine.iter()
                        .filter(|r| r.deleted_at.is_some())
                        .map(|r| r.id.clone())
                        .collect(),
                )
            };
            for id in pending {
                shared.apply(&id);
            }
            for id in deleting {
                shared.report_deleting_then_ack(&id);
            }
        });
    }

    /// Schedules the agent to apply the current spec of `id` (after the agent delay; nothing when on demand).
    pub fn schedule_apply(self: &Arc<Self>, id: &str) {
        let Some(delay) = self.lock().agent_delay else {
            return;
        };
        let shared = Arc::clone(self);
        let id = id.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            shared.apply(&id);
        });
    }

    /// Soft-deletes `id` (`deleted_at` = now, like `MarkAsDeleting`): true when it was marked now,
    /// false when it does not exist or is already being deleted (both answered OK by the server).
    pub fn mark_deleting(&self, id: &str) -> bool {
        let mut st = self.lock();
        match st.resources.get_mut(id) {
            Some(res) if res.deleted_at.is_none() => {
                let now = jiff::Timestamp::now();
                res.deleted_at = Some(now);
                res.updated_at = now;
                true
            }
            _ => false,
        }
    }

    /// After the agent delay the agent reports `Deleting=True` for `id`, then acknowledges the
    /// deletion unless deletes are held (the knob, or finalizers on the HostedCluster).
    pub fn schedule_delete_ack(self: &Arc<Self>, id: &str) {
        let Some(delay) = self.lock().agent_delay else {
            return;
        };
        let shared = Arc::clone(self);
        let id = id.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            shared.report_deleting_then_ack(&id);
        });
    }

    /// The agent reports `Deleting=True` for `id`, then acknowledges the deletion unless deletes
    /// are held (the knob, or finalizers on the HostedCluster).
    fn report_deleting_then_ack(&self, id: &str) {
        self.report_deleting(id);
        let release = {
            let st = self.lock();
            st.ack_deletes
                && st
                    .resources
                    .get(id)
                    .is_some_and(|r| r.finalizers.is_empty())
        };
        if release {
            self.ack_delete(id);
        }
    }

    /// The agent reports status for the current version of `id` (with the injected feedback, if
    /// any); for a work being deleted, its `Deleting=True` report instead. A version whose
    /// manifests it had not applied yet is reported twice, as the real agent does (see
    /// [`applied_first`]).
    pub fn apply(&self, id: &str) -> bool {
        self.report(id, true)
    }

    /// [`Self::apply`] in one report: the answer to a status resync request, which re-sends
    /// where the work stands.
    pub fn resync_report(&self, id: &str) -> bool {
        self.report(id, false)
    }

    fn report(&self, id: &str, two_reports: bool) -> bool {
        let event = {
            let mut st = self.lock();
            st.sequence += 1;
            let sequence = st.sequence;
            let as_string = st.status_version_as_string;
            let namespaces = st.cluster_namespaces.clone();
            if !st.agent_runs(id) {
                return false;
            }
            let Some(res) = st.resources.get_mut(id) else {
                return false;
            };
            if res.deleted_at.is_some() {
                drop(st);
                return self.report_deleting(id);
            }
            res.apply_object();
            let status = agent_status(res, sequence, namespaces.as_ref());
            let mut status = status;
            // A new manifests version is reported twice (measured on the real agent): first
            // that it is applied, then with availability and feedback.
            let first = applied_first(res.status.as_ref(), &status).filter(|_| two_reports);
            if let Some(mut first) = first {
                first["SequenceID"] = status["SequenceID"].clone();
                res.status = Some(first.clone());
                let _ = self.events.send(status_event(res, &first, as_string));
                st.sequence += 1;
                status["SequenceID"] = st.sequence.to_string().into();
            }
            let Some(res) = st.resources.get_mut(id) else {
                return false;
            };
            res.status = Some(status.clone());
            res.updated_at = jiff::Timestamp::now();
            let event = status_event(res, &status, as_string);
            // A Namespace the work carries now exists on the management cluster, for every work
            // (it is created once and orphaned when the work is deleted).
            let created = created_namespaces(res);
            if let Some(known) = st.cluster_namespaces.as_mut() {
                known.extend(created);
            }
            event
        };
        let _ = self.events.send(event);
        true
    }

    /// The agent's report for a work being deleted (recordings `10b`, `10c`): the last status with
    /// the work condition `Deleting=True WorkDeleting` added; manifest conditions and feedback
    /// unchanged. Nothing for a work the agent never reported on. False if not deleting.
    pub fn report_deleting(&self, id: &str) -> bool {
        let event = {
            let mut st = self.lock();
            st.sequence += 1;
            let sequence = st.sequence;
            let as_string = st.status_version_as_string;
            if !st.agent_runs(id) {
                return false;
            }
            let Some(res) = st.resources.get_mut(id) else {
                return false;
            };
            let (Some(_), Some(mut status)) = (res.deleted_at, res.status.clone()) else {
                return false;
            };
            let now = seconds(jiff::Timestamp::now());
            let previous = status["conditions"].clone();
            let deleting = condition(
                Some(&previous),
                (
                    "Deleting",
                    "True",
                    "WorkDeleting",
                    "ManifestWork is being deleted",
                ),
                Some(res.version),
                &now,
            );
            let mut conditions: Vec<Value> = previous
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|c| c["type"] != "Deleting")
                .collect();
            conditions.push(deleting);
            status["conditions"] = Value::Array(conditions);
            status["SequenceID"] = sequence.to_string().into();
            res.status = Some(status.clone());
            res.updated_at = jiff::Timestamp::now();
            status_event(res, &status, as_string)
        };
        let _ = self.events.send(event);
        true
    }

    /// The agent finished deleting `id`: a final status event whose conditions end with
    /// `Deleted=True ManifestsDeleted` (only that condition, and no `resourceStatus`, for a work
    /// the agent never reported on), then the row is hard-deleted (REST 404 `maestro-7`).
    pub fn ack_delete(&self, id: &str) -> bool {
        let event = {
            let mut st = self.lock();
            st.sequence += 1;
            let sequence = st.sequence;
            let as_string = st.status_version_as_string;
            if !st.agent_runs(id) {
                return false;
            }
            let Some(res) = st.resources.remove(id) else {
                return false;
            };
            let deleted = json!({
                "type": "Deleted", "status": "True",
                "lastTransitionTime": seconds(jiff::Timestamp::now()), "reason": "ManifestsDeleted",
                "message": format!("The manifests are deleted from the cluster {}", res.consumer)
            });
            let status = match res.status.clone() {
                Some(mut status) => {
                    let mut conditions =
                        status["conditions"].as_array().cloned().unwrap_or_default();
                    conditions.push(deleted);
                    status["conditions"] = Value::Array(conditions);
                    status["SequenceID"] = sequence.to_string().into();
                    status
                }
                None => json!({
                    "ObservedVersion": res.version, "SequenceID": sequence.to_string(),
                    "conditions": [deleted],
                }),
            };
            status_event(&res, &status, as_string)
        };
        let _ = self.events.send(event);
        true
    }
}

/// The agent's first report of a new manifests version (the work-level `Applied` of `status`
/// has an `observedGeneration` the last report's lacks, or there was none), measured on the real
/// agent: only `Applied` changes — work-level and on each manifest (moved last) — while
/// `Available`, the other manifest conditions and the feedback stay as last reported (on a
/// create: `Applied` alone, feedback `{}`). `None` when the version's manifests were reported
/// already or the apply failed (a failure is one report).
fn applied_first(previous: Option<&Value>, status: &Value) -> Option<Value> {
    let applied = |s: &Value| {
        s["conditions"]
            .as_array()
            .and_then(|list| list.iter().find(|c| c["type"] == "Applied"))
            .cloned()
    };
    let new_applied = applied(status)?;
    if new_applied["status"] != "True"
        || previous
            .and_then(applied)
            .is_some_and(|old| old["observedGeneration"] == new_applied["observedGeneration"])
    {
        return None;
    }
    let empty = json!({"conditions": [], "resourceStatus": []});
    let mut first = previous.cloned().unwrap_or(empty);
    first["ObservedVersion"] = status["ObservedVersion"].clone();
    let replace = |list: &mut Value, condition: Value| {
        let mut kept: Vec<Value> = list
            .as_array()
            .map(|l| {
                l.iter()
                    .filter(|c| c["type"] != "Applied")
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        kept.push(condition);
        *list = Value::Array(kept);
    };
    // Work level: `Applied` replaced where it was (first on a create).
    let work = first["conditions"].as_array_mut()?;
    match work.iter_mut().find(|c| c["type"] == "Applied") {
        Some(c) => *c = new_applied,
        None => work.insert(0, new_applied),
    }
    let manifests = status["resourceStatus"].as_array()?;
    let mut resource_status = Vec::new();
    for (i, manifest) in manifests.iter().enumerate() {
        let mut entry = first["resourceStatus"]
            .get(i)
            .cloned()
            .unwrap_or_else(|| json!({"conditions": [], "statusFeedback": {}}));
        entry["resourceMeta"] = manifest["resourceMeta"].clone();
        let applied = applied(manifest)?;
        replace(&mut entry["conditions"], applied);
        resource_status.push(entry);
    }
    first["resourceStatus"] = Value::Array(resource_status);
    Some(first)
}

/// One `metav1.Condition`; `lastTransitionTime` is kept from `previous` (the same condition of
/// the last report) when the status did not change, as the agent does.
fn condition(
    previous: Option<&Value>,
    (type_, status, reason, message): (&str, &str, &str, &str),
    observed_generation: Option<i64>,
    now: &str,
) -> Value {
    let kept = previous
        .and_then(Value::as_array)
        .and_then(|list| list.iter().find(|c| c["type"] == type_))
        .filter(|c| c["status"] == status)
        .and_then(|c| c["lastTransitionTime"].as_str())
        .unwrap_or(now);
    let mut c = json!({"type": type_, "status": status, "lastTransitionTime": kept, "reason": reason, "message": message});
    if let Some(g) = observed_generation {
        c["observedGeneration"] = g.into();
    }
    c
}

/// The REST `status` object an agent would produce for the current spec of `res`, shaped like
/// the recordings in `fixtures/maestro/real/` (keys `ObservedVersion`, `SequenceID`,
/// `conditions`, `resourceStatus`; no `manifestBundle` in REST).
fn agent_status(
    res: &Resource,
    sequence: u64,
    cluster_namespaces: Option<&BTreeSet<String>>,
) -> Value {
    let now = seconds(jiff::Timestamp::now());
    let previous = res.status.as_ref();
    let bundle = res.bundle();
    let manifests = bundle
        .get("manifests")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let configs = bundle
        .get("manifestConfigs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let metas: Vec<Value> = manifests
        .iter()
        .enumerate()
        .map(|(i, m)| resource_meta(i, m))
        .collect();
    let target = metas
        .iter()
        .position(|meta| has_status_rule(&configs, meta))
        .unwrap_or(0);
    // Namespaces on the management cluster, in apply order (a Namespace manifest creates one).
    let mut namespaces = cluster_namespaces.cloned();
    let mut failed = 0usize;
    let mut unavailable = 0usize;
    let resource_status: Vec<Value> = metas
        .into_iter()
        .enumerate()
        .map(|(i, meta)| {
            let prev = previous.and_then(|p| p["resourceStatus"].get(i)).map(|m| &m["conditions"]);
            let ns = meta["namespace"].as_str().unwrap_or_default().to_owned();
            let missing_namespace = match &namespaces {
                Some(known) => !ns.is_empty() && !known.contains(&ns),
                None => false,
            };
            if meta["kind"] == "Namespace"
                && let (Some(known), Some(name)) = (namespaces.as_mut(), meta["name"].as_str())
            {
                known.insert(name.to_owned());
            }
            let apply_error = if missing_namespace {
                Some(format!("namespaces \"{ns}\" not found"))
            } else if i == target {
                res.apply_error.clone()
            } else {
                None
            };
            let generation = Some(res.manifests_version);
            if let Some(error) = apply_error {
                failed += 1;
                unavailable += 1;
                return json!({
                    "resourceMeta": meta,
                    "statusFeedback": {},
                    "conditions": [
                        condition(prev, ("Applied", "False", "AppliedManifestFailed", &format!("Failed to apply manifest: {error}")), generation, &now),
                        condition(prev, ("Available", "False", "ResourceNotAvailable", "Resource is not available"), None, &now),
                    ]
                });
            }
            let gone = i == target && res.gone_on_cluster;
            if gone {
                unavailable += 1;
            }
            let mut values = Vec::new();
            if i == target {
                if let Some(raw) = &res.feedback_raw {
                    values.push(json!({"name": "status", "fieldValue": {"type": "JsonRaw", "jsonRaw": raw}}));
                }
                if let Some(name) = metadata_rule(&configs, &meta) {
                    values.push(json!({"name": name, "fieldValue": {"type": "JsonRaw", "jsonRaw": cluster_metadata(&meta, &res.finalizers, res.object_generation())}}));
                }
                // The real agent feeds `.metadata.generation` back as an `Integer` (measured).
                if let (Some(name), Some((generation, _))) =
                    (json_path_rule(&configs, &meta, ".metadata.generation"), &res.object)
                {
                    values.push(json!({"name": name, "fieldValue": {"type": "Integer", "integer": generation}}));
                }
            }
            let feedback = if values.is_empty() { json!({}) } else { json!({"values": values}) };
            // StatusFeedbackSynced moves its transition time whenever the feedback changes.
            let prev_feedback = previous.and_then(|p| p["resourceStatus"].get(i)).map(|m| &m["statusFeedback"]);
            let synced_prev = if prev_feedback == Some(&feedback) { prev } else { None };
            let available = if gone {
                ("Available", "False", "ResourceNotAvailable", "Resource is not available")
            } else {
                ("Available", "True", "ResourceAvailable", "Resource is available")
            };
            // A new manifests version re-applies: `Applied` gets a new transition time and its new
            // observedGeneration and moves behind the others (recording `09b`).
            let reapplied = prev
                .and_then(Value::as_array)
                .and_then(|list| list.iter().find(|c| c["type"] == "Applied"))
                .is_some_and(|c| c["observedGeneration"] != json!(res.manifests_version));
            let applied = condition(
                if reapplied { None } else { prev },
                ("Applied", "True", "AppliedManifestComplete", "Apply manifest complete"),
                generation,
                &now,
            );
            let mut conditions = vec![applied, condition(prev, available, None, &now)];
            // Every applied manifest has StatusFeedbackSynced; one without feedback rules says
            // so with `NoStatusFeedbackSynced` (measured on the real agent).
            let synced = match (&res.feedback_sync_failure, has_feedback_rules(&configs, &meta)) {
                (Some((reason, message)), true) if i == target => ("StatusFeedbackSynced", "False", reason.as_str(), message.as_str()),
                (_, true) => ("StatusFeedbackSynced", "True", "StatusFeedbackSynced", ""),
                (_, false) => ("StatusFeedbackSynced", "True", "NoStatusFeedbackSynced", ""),
            };
            conditions.push(condition(synced_prev, synced, None, &now));
            // The agent keeps the order of the last report; a re-applied `Applied` goes last.
            let order: Vec<Value> = prev
                .and_then(Value::as_array)
                .map(|list| list.iter().map(|c| c["type"].clone()).collect())
                .unwrap_or_default();
            conditions.sort_by_key(|c| {
                order
                    .iter()
                    .position(|t| *t == c["type"] && !(reapplied && c["type"] == "Applied"))
                    .unwrap_or(usize::MAX)
            });
            json!({"resourceMeta": meta, "statusFeedback": feedback, "conditions": conditions})
        })
        .collect();
    let prev_work = previous.map(|p| &p["conditions"]);
    let total = resource_status.len();
    let applied = if failed > 0 {
        (
            "Applied",
            "False",
            "AppliedManifestWorkFailed",
            "Failed to apply manifest work",
        )
    } else {
        (
            "Applied",
            "True",
            "AppliedManifestWorkComplete",
            "Apply manifest work complete",
        )
    };
    let not_available = format!("{unavailable} of {total} resources are not available");
    let available = if unavailable > 0 {
        (
            "Available",
            "False",
            "ResourcesNotAvailable",
            not_available.as_str(),
        )
    } else {
        (
            "Available",
            "True",
            "ResourcesAvailable",
            "All resources are available",
        )
    };
    json!({
        "ObservedVersion": res.version,
        "SequenceID": sequence.to_string(),
        "conditions": [
            condition(prev_work, applied, Some(res.manifests_version), &now),
            condition(prev_work, available, Some(res.version), &now),
        ],
        "resourceStatus": resource_status,
    })
}

/// The names of the Namespace manifests of `res`'s current spec.
fn created_namespaces(res: &Resource) -> Vec<String> {
    res.bundle()["manifests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["kind"] == "Namespace")
        .filter_map(|m| m.pointer("/metadata/name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

fn resource_meta(ordinal: usize, manifest: &Value) -> Value {
    let api_version = manifest
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = manifest
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    json!({
        "ordinal": ordinal, "group": group, "version": version, "kind": kind,
        "resource": format!("{}s", kind.to_ascii_lowercase()),
        "name": manifest.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default(),
        "namespace": manifest.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default(),
    })
}

/// True when a manifestConfig for this manifest has any feedback rule.
fn has_feedback_rules(configs: &[Value], meta: &Value) -> bool {
    configs.iter().any(|c| {
        let id = &c["resourceIdentifier"];
        id["group"] == meta["group"]
            && id["resource"] == meta["resource"]
            && id["name"] == meta["name"]
            && id.get("namespace").unwrap_or(&Value::String(String::new())) == &meta["namespace"]
            && c["feedbackRules"]
                .as_array()
                .is_some_and(|rules| !rules.is_empty())
    })
}

/// True when a manifestConfig for this manifest has a JSONPaths feedback rule named `status`.
fn has_status_rule(configs: &[Value], meta: &Value) -> bool {
    configs.iter().any(|c| {
        let id = &c["resourceIdentifier"];
        id["group"] == meta["group"]
            && id["resource"] == meta["resource"]
            && id["name"] == meta["name"]
            && id.get("namespace").unwrap_or(&Value::String(String::new())) == &meta["namespace"]
            && c["feedbackRules"].as_array().is_some_and(|rules| {
                rules.iter().any(|r| {
                    r["jsonPaths"]
                        .as_array()
                        .is_some_and(|p| p.iter().any(|p| p["name"] == "status"))
                })
            })
    })
}

/// The name of a JSONPaths feedback rule with path `.metadata` for this manifest, if any.
fn metadata_rule(configs: &[Value], meta: &Value) -> Option<String> {
    json_path_rule(configs, meta, ".metadata")
}

/// The name of a JSONPaths feedback rule with path `path` for this manifest, if any.
fn json_path_rule(configs: &[Value], meta: &Value, path: &str) -> Option<String> {
    configs
        .iter()
        .filter(|c| {
            let id = &c["resourceIdentifier"];
            id["group"] == meta["group"]
                && id["resource"] == meta["resource"]
                && id["name"] == meta["name"]
        })
        .flat_map(|c| c["feedbackRules"].as_array().cloned().unwrap_or_default())
        .flat_map(|r| r["jsonPaths"].as_array().cloned().unwrap_or_default())
        .find(|p| p["path"] == path)
        .and_then(|p| p["name"].as_str().map(str::to_owned))
}

/// `.metadata` of the simulated object as the agent's `JsonRaw` feedback (Go `json.Marshal`: keys
/// sorted): name, namespace, generation and the finalizers set with
/// [`super::FakeMaestro::hold_delete`].
fn cluster_metadata(meta: &Value, finalizers: &[String], generation: i64) -> String {
    let mut out = json!({"name": meta["name"], "namespace": meta["namespace"]});
    if generation > 0 {
        out["generation"] = json!(generation);
    }
    if !finalizers.is_empty() {
        out["finalizers"] = json!(finalizers);
    }
    out.to_string()
}

/// Status event to the source (§3.5).
fn status_event(
    res: &Resource,
    status: &Value,
    version_as_string: bool,
) -> (String, proto::CloudEvent) {
    let mut metadata = res.metadata.clone();
    if let Some(m) = metadata.as_object_mut() {
        m.insert("creationTimestamp".into(), seconds(res.created_at).into());
        if let Some(d) = res.deleted_at {
            m.insert("deletionTimestamp".into(), seconds(d).into());
        }
    }
    let mut data = json!({
        "manifestBundle": res.bundle(),
        "conditions": status["conditions"],
        "resourceStatus": status["resourceStatus"],
    });
    // A work the agent never accepted has no `resourceStatus` (the stream recording `12`).
    if status.get("resourceStatus").is_none()
        && let Some(d) = data.as_object_mut()
    {
        d.remove("resourceStatus");
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    data.to_string().hash(&mut hasher);
    let str_ext = |s: &str| AttrValue::String(s.to_owned());
    let mut ext = BTreeMap::new();
    ext.insert("clustername".to_owned(), str_ext(&res.consumer));
    ext.insert(
        "logtracing".to_owned(),
        str_ext(
            res.payload
                .get("logtracing")
                .and_then(Value::as_str)
                .unwrap_or("{}"),
        ),
    );
    ext.insert("metadata".to_owned(), str_ext(&metadata.to_string()));
    ext.insert("originalsource".to_owned(), str_ext("maestro"));
    ext.insert("resourceid".to_owned(), str_ext(&res.id));
    ext.insert(
        "resourceversion".to_owned(),
        if version_as_string {
            AttrValue::String(res.version.to_string())
        } else {
            AttrValue::Integer(i32::try_from(res.version).unwrap_or(i32::MAX))
        },
    );
    ext.insert(
        "sequenceid".to_owned(),
        str_ext(status["SequenceID"].as_str().unwrap_or_default()),
    );
    ext.insert(
        "statushash".to_owned(),
        str_ext(&format!("{:016x}", hasher.finish())),
    );
    let event = CloudEvent {
        id: new_event_id(),
        source: format!("{}-work-agent", res.consumer),
        spec_version: SPEC_VERSION.to_owned(),
        ty: format!("{DATA_TYPE}.status.update_request"),
        data_content_type: Some("application/json".to_owned()),
        time: Some(jiff::Timestamp::now()),
        extensions: ext,
        data: Some(data.to_string().into_bytes()),
    };
    (res.source.clone(), event.to_proto())
}
