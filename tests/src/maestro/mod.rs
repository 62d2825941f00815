//! Fake Maestro server for tests: gRPC CloudEvents (Publish/Subscribe) + REST resource bundles, behaving as
//! described in `maestro-protocol.md` §6, with knobs for agent timing, feedback, faults and auth.
//!
//! ```no_run
//! # use serde_json::json;
//! # use testbed::maestro::{FakeMaestro, FakeOptions};
//! # async fn example() -> anyhow::Result<()> {
//! let fake = FakeMaestro::start(FakeOptions::default()).await?;
//! fake.add_consumer("mgmt-1");
//! // point a client at fake.grpc_url() / fake.rest_url() ...
//! fake.set_feedback("hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b", &json!({"conditions": []}));
//! assert_eq!(fake.publishes(), 1);
//! # Ok(())
//! # }
//! ```

mod grpc;
mod rest;
mod state;
mod tls;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hypershift_adapter::work::maestro::cloudevent::CloudEvent;
use hypershift_adapter::work::maestro::proto::cloud_event_service_server::CloudEventServiceServer;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::TcpListenerStream;

pub use state::Resource;
pub use tls::TestPki;

/// The label on every work's spec metadata naming the adapter that made it.
pub const ADAPTER_LABEL: &str = "hyperfleet.io/adapter";

/// Requests the fake received, by the kinds the placement cost rules count (P-design "Cost"):
/// one steady-state pulse is one [`Self::list_find`]; a create adds a count per candidate, a
/// publish and a find to read back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MaestroCounts {
    /// REST `GET /resource-bundles/{id}`.
    pub get_by_id: u64,
    /// REST lists other than counts (e.g. the search for a cluster's works).
    pub list_find: u64,
    /// REST lists with `size=1`, read for their `total` (the load of a consumer).
    pub list_count: u64,
    /// REST `DELETE /resource-bundles/{id}`.
    pub rest_delete: u64,
    /// gRPC publishes of `create_request` (refused ones included).
    pub publish_create: u64,
    /// gRPC publishes of `update_request`.
    pub publish_update: u64,
    /// gRPC publishes of `delete_request`.
    pub publish_delete: u64,
}

impl MaestroCounts {
    /// What was received after `earlier` (a snapshot taken before).
    #[must_use]
    pub fn since(self, earlier: MaestroCounts) -> MaestroCounts {
        MaestroCounts {
            get_by_id: self.get_by_id.saturating_sub(earlier.get_by_id),
            list_find: self.list_find.saturating_sub(earlier.list_find),
            list_count: self.list_count.saturating_sub(earlier.list_count),
            rest_delete: self.rest_delete.saturating_sub(earlier.rest_delete),
            publish_create: self.publish_create.saturating_sub(earlier.publish_create),
            publish_update: self.publish_update.saturating_sub(earlier.publish_update),
            publish_delete: self.publish_delete.saturating_sub(earlier.publish_delete),
        }
    }

    /// Every request counted here.
    pub fn total(self) -> u64 {
        self.get_by_id
            + self.list_find
            + self.list_count
            + self.rest_delete
            + self.publish_create
            + self.publish_update
            + self.publish_delete
    }
}

/// How to start the fake.
#[derive(Debug, Clone)]
pub struct FakeOptions {
    /// Serve gRPC and REST over TLS 1.3 with a generated CA ([`FakeMaestro::ca_pem`]).
    pub tls: bool,
    /// With `tls`: require a client certificate signed by the test CA on gRPC (`--grpc-authn-type=mtls`);
    /// use [`TestPki::client_cert_pem`] via [`FakeMaestro::pki`].
    pub mtls: bool,
    /// Require this bearer token on gRPC calls (`authorization: Bearer <token>`), like `--grpc-authn-type=token`.
    pub token: Option<String>,
    /// Consumers registered from the start (creates for others fail with the foreign-key error).
    pub consumers: Vec<String>,
    /// Time until the simulated agent reports status after a create/update (and acks a delete);
    /// `None` = only on demand ([`FakeMaestro::apply`], [`FakeMaestro::ack_delete`]).
    pub agent_delay: Option<Duration>,
    /// Whether the agent ever acknowledges deletes (false = resources stay soft-deleted).
    pub ack_deletes: bool,
    /// Heartbeat period on Subscribe streams.
    pub heartbeat: Duration,
    /// Send `resourceversion` in status events as a string (as Maestro does when re-reading from the DB).
    pub status_version_as_string: bool,
    /// Sources allowed to publish/subscribe (the SubjectAccessReview on `/sources/<id>`); `None` = all.
    pub allowed_sources: Option<Vec<String>>,
}

impl Default for FakeOptions {
    fn default() -> Self {
        Self {
            tls: false,
            mtls: false,
            token: None,
            consumers: Vec::new(),
            agent_delay: Some(Duration::ZERO),
            ack_deletes: true,
            heartbeat: Duration::from_millis(100),
            status_version_as_string: false,
            allowed_sources: None,
        }
    }
}

impl FakeOptions {
    /// TLS with a bearer token.
    pub fn tls_with_token(token: impl Into<String>) -> Self {
        Self {
            tls: true,
            token: Some(token.into()),
            ..Self::default()
        }
    }
}

/// A running fake Maestro. Dropping it stops both servers.
#[derive(Debug)]
pub struct FakeMaestro {
    shared: Arc<state::Shared>,
    grpc_addr: SocketAddr,
    rest_addr: SocketAddr,
    pki: Option<TestPki>,
    tasks: Vec<JoinHandle<()>>,
}

impl FakeMaestro {
    /// Starts gRPC and REST servers on `127.0.0.1:0`.
    pub async fn start(opts: FakeOptions) -> anyhow::Result<Self> {
        let state = state::State {
            consumers: opts
                .consumers
                .iter()
                .map(|c| (c.clone(), state::Consumer::new()))
                .collect(),
            agent_delay: opts.agent_delay,
            ack_deletes: opts.ack_deletes,
            status_version_as_string: opts.status_version_as_string,
            ..Default::default()
        };
        let shared = state::Shared::new(
            state,
            opts.token.clone(),
            opts.heartbeat,
            opts.allowed_sources.clone(),
        );
        let pki = if opts.tls {
            Some(TestPki::generate()?)
        } else {
            None
        };

        let grpc_listener = TcpListener::bind("127.0.0.1:0").await?;
        let grpc_addr = grpc_listener.local_addr()?;
        let mut server = tonic::transport::Server::builder();
        if let Some(pki) = &pki {
            let identity =
                tonic::transport::Identity::from_pem(&pki.server_cert_pem, &pki.server_key_pem);
            let mut tls = tonic::transport::ServerTlsConfig::new().identity(identity);
            if opts.mtls {
                tls = tls.client_ca_root(tonic::transport::Certificate::from_pem(&pki.ca_pem));
            }
            server = server.tls_config(tls)?;
        }
        let service = CloudEventServiceServer::new(grpc::Service {
            shared: Arc::clone(&shared),
        });
        let router = server.add_service(service);
        let grpc_task = tokio::spawn(async move {
            // TCP_NODELAY on every accepted connection, as Go's net package sets it by default
            // for the real (Go) Maestro server; without it a reply written in two segments waits
            // for the client's delayed ACK (~40 ms).
            let incoming = TcpListenerStream::new(grpc_listener).map(|stream| {
                stream.inspect(|tcp| {
                    let _ = tcp.set_nodelay(true);
                })
            });
            let _ = router.serve_with_incoming(incoming).await;
        });

        let rest_listener = TcpListener::bind("127.0.0.1:0").await?;
        let rest_addr = rest_listener.local_addr()?;
        let app = rest::router(Arc::clone(&shared));
        let rest_task = match &pki {
            Some(pki) => tokio::spawn(tls::serve_tls(
                rest_listener,
                pki.rustls_server_config()?,
                app,
            )),
            None => tokio::spawn(async move {
                let listener = axum::serve::ListenerExt::tap_io(rest_listener, |tcp| {
                    let _ = tcp.set_nodelay(true);
                });
                let _ = axum::serve(listener, app).await;
            }),
        };
        Ok(Self {
            shared,
            grpc_addr,
            rest_addr,
            pki,
            tasks: vec![grpc_task, rest_task],
        })
    }

    fn scheme(&self) -> &'static str {
        if self.pki.is_some() { "https" } else { "http" }
    }

    /// gRPC URL, `http://127.0.0.1:<port>` or `https://...`.
    pub fn grpc_url(&self) -> String {
        format!("{}://{}", self.scheme(), self.grpc_addr)
    }

    /// REST base URL.
    pub fn rest_url(&self) -> String {
        format!("{}://{}", self.scheme(), self.rest_addr)
    }

    /// CA certificate (PEM) in TLS mode.
    pub fn ca_pem(&self) -> Option<&str> {
        self.pki.as_ref().map(|p| p.ca_pem.as_str())
    }

    /// The generated PKI (CA, server and client certificates) in TLS mode.
    pub fn pki(&self) -> Option<&TestPki> {
        self.pki.as_ref()
    }

    /// The required bearer token, if any.
    pub fn token(&self) -> Option<&str> {
        self.shared.token.as_deref()
    }

    /// Registers a consumer.
    pub fn add_consumer(&self, name: &str) {
        self.shared
            .lock()
            .consumers
            .entry(name.to_owned())
            .or_default();
    }

    /// Plays the object's operator: writes `value` as the status of the object the work `key`
    /// (resource id or work name) carries (the manifest with a `status` feedback rule), having
    /// reconciled it as it is now, as the real HyperShift operator does: every condition's
    /// `observedGeneration` is the object's `metadata.generation` and a HostedCluster's
    /// `version.desired.image` the release its spec asks for (`fixtures/hypershift-operator/`).
    /// The agent applies the work's current version first, then reports now. A later spec change
    /// leaves this status describing the older generation until the next call (the operator's
    /// lag); [`Self::set_feedback_raw`] writes a status verbatim. False if unknown.
    pub fn set_feedback(&self, key: &str, value: &Value) -> bool {
        let Some(id) = self.shared.find_id(key) else {
            return false;
        };
        let mut value = value.clone();
        if let Some(res) = self.shared.lock().resources.get_mut(&id) {
            res.apply_object();
            let spec = res.object.as_ref().map(|(_, spec)| spec.clone());
            operator_stamp(&mut value, res.object_generation().max(1), spec.as_ref());
        }
        self.set_feedback_raw(key, &value.to_string())
    }

    /// Like [`Self::set_feedback`] with verbatim `jsonRaw` text (may be malformed on purpose).
    pub fn set_feedback_raw(&self, key: &str, json_raw: &str) -> bool {
        let Some(id) = self.shared.find_id(key) else {
            return false;
        };
        if let Some(res) = self.shared.lock().resources.get_mut(&id) {
            res.feedback_raw = Some(json_raw.to_owned());
        }
        self.shared.apply(&id)
    }

    /// The management cluster refuses the HostedCluster (the manifest with the `status` feedback
    /// rule) of `key` with `message` (the API server's words, e.g. an admission denial); the agent
    /// reports it now: work `Applied=False AppliedManifestWorkFailed`, manifest `Applied=False
    /// AppliedManifestFailed "Failed to apply manifest: <message>"`, `statusFeedback: {}`.
    /// `None` lets the next apply succeed. False if unknown.
    pub fn fail_apply(&self, key: &str, message: Option<&str>) -> bool {
        let Some(id) = self.shared.find_id(key) else {
            return false;
        };
        if let Some(res) = self.shared.lock().resources.get_mut(&id) {
            res.apply_error = message.map(str::to_owned);
        }
        self.shared.apply(&id)
    }

    /// The HostedCluster of `key` is deleted on the management cluster (`gone = true`) or
    /// re-created by the agent's resync (`false`, which also clears the feedback, as in recording
    /// `08b`); the agent reports it now. While gone: manifest and work `Available=False`, the last
    /// feedback kept. False if unknown.
    pub fn delete_on_cluster(&self, key: &str, gone: bool) -> bool {
        let Some(id) = self.shared.find_id(key) else {
            return false;
        };
        if let Some(res) = self.shared.lock().resources.get_mut(&id) {
            if res.gone_on_cluster && !gone {
                // Re-created by the agent: a new object, generation 1 again.
                res.object = None;
            }
            res.gone_on_cluster = gone;
            if !gone {
                res.feedback_raw = None;
            }
        }
        self.shared.apply(&id)
    }

    /// The agent cannot sync the status feedback of `key`'s HostedCluster (the manifest with the
    /// `status` feedback rule): `Some((reason, message))` reports that manifest's
    /// `StatusFeedbackSynced=False` with these words, keeping the last feedback; `None` syncs
    /// again. The real agent's words for this state are not recorded, so the caller picks them.
    /// The agent reports it now. False if unknown.
    pub fn fail_feedback_sync(&self, key: &str, failure: Option<(&str, &str)>) -> bool {
        let Some(id) = self.shared.find_id(key) else {
            return false;
        };
        if let Some(res) = self.shared.lock().resources.get_mut(&id) {
            res.feedback_sync_failure =
                failure.map(|(reason, message)| (reason.to_owned(), message.to_owned()));
        }
        self.shared.apply(&id)
    }

    /// From now on only these namespaces exist on the simulated management cluster (plus those a
    /// work's Namespace manifests create): a manifest in another namespace fails to apply with
    /// `Failed to apply manifest: namespaces "<ns>" not found` (recording `07`). A namespace a
    /// work's Namespace manifest created stays for every other work, as on a real cluster (the
    /// control plane's work creates `clusters`, its NodePools' works use it); calling this again
    /// removes it, standing in for a namespace deleted behind the agent.
    pub fn set_cluster_namespaces(&self, namespaces: &[&str]) {
        self.shared.lock().cluster_namespaces =
            Some(namespaces.iter().map(|n| (*n).to_owned()).collect());
    }

    /// Removes the manifests of `kind` from the stored spec of resource `id` (to stand in for a
    /// work an older client built). False if unknown.
    pub fn strip_manifest_for_test(&self, id: &str, kind: &str) -> bool {
        let mut st = self.shared.lock();
        let Some(res) = st.resources.get_mut(id) else {
            return false;
        };
        if let Some(list) = res
            .payload
            .pointer_mut("/data/manifests")
            .and_then(Value::as_array_mut)
        {
            list.retain(|m| m["kind"] != kind);
        }
        true
    }

    /// The agent reports status for the current version of `key` now (on-demand mode); for a work
    /// being deleted, its `Deleting=True WorkDeleting` report (recording `10b`).
    pub fn apply(&self, key: &str) -> bool {
        self.shared
            .find_id(key)
            .is_some_and(|id| self.shared.apply(&id))
    }

    /// The agent reports status for spec version `version` of `key`. Like the real server, a report for any
    /// version other than the current one is dropped (returns false, nothing is stored or delivered).
    pub fn report_status(&self, key: &str, version: i64) -> bool {
        let Some(id) = self.shared.find_id(key) else {
            return false;
        };
        let current = self.shared.lock().resources.get(&id).map(|r| r.version);
        current == Some(version) && self.shared.apply(&id)
    }

    /// The agent acknowledges the deletion of `key` now (hard delete + final `Deleted` status event).
    pub fn ack_delete(&self, key: &str) -> bool {
        self.shared
            .find_id(key)
            .is_some_and(|id| self.shared.ack_delete(&id))
    }

    /// Puts `finalizers` on the HostedCluster (the manifest with the `status` feedback rule) of
    /// `key` on the simulated management cluster: a deletion of the work then hangs with
    /// `deleted_at` and `Deleting=True WorkDeleting` until [`Self::release_delete`] (recordings
    /// `10c`, `10i`). A `.metadata` feedback rule of the work reports them on the next apply.
    /// False if unknown.
    pub fn hold_delete(&self, key: &str, finalizers: &[&str]) -> bool {
        let Some(id) = self.shared.find_id(key) else {
            return false;
        };
        let mut st = self.shared.lock();
        let Some(res) = st.resources.get_mut(&id) else {
            return false;
        };
        res.finalizers = finalizers.iter().map(|f| (*f).to_owned()).collect();
        true
    }

    /// The finalizers of `key`'s HostedCluster are removed: if the work is being deleted, the agent
    /// reports `Deleted=True ManifestsDeleted` now and the bundle is hard-deleted (REST 404
    /// `maestro-7`, recording `10k`). False if unknown or not being deleted.
    pub fn release_delete(&self, key: &str) -> bool {
        let Some(id) = self.shared.find_id(key) else {
            return false;
        };
        let deleting = {
            let mut st = self.shared.lock();
            let Some(res) = st.resources.get_mut(&id) else {
                return false;
            };
            res.finalizers.clear();
            res.deleted_at.is_some()
        };
        deleting && self.shared.ack_delete(&id)
    }

    /// True while `key` is stored and being deleted (soft-deleted, `deleted_at` set).
    pub fn is_deleting(&self, key: &str) -> bool {
        self.resource(key).is_some_and(|r| r.deleted_at.is_some())
    }

    /// The stored resource for `key` (resource id or work name).
    pub fn resource(&self, key: &str) -> Option<Resource> {
        let id = self.shared.find_id(key)?;
        self.shared.lock().resources.get(&id).cloned()
    }

    /// Number of resources stored (including soft-deleted ones).
    pub fn resource_count(&self) -> usize {
        self.shared.lock().resources.len()
    }

    /// Every stored resource (soft-deleted ones included), oldest first (then by id), as the
    /// REST list orders them.
    pub fn resources(&self) -> Vec<Resource> {
        let mut all: Vec<Resource> = self.shared.lock().resources.values().cloned().collect();
        all.sort_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then_with(|| a.id.cmp(&b.id))
        });
        all
    }

    /// The registered consumers, sorted.
    pub fn consumers(&self) -> Vec<String> {
        self.shared.lock().consumers.keys().cloned().collect()
    }

    /// Live works (no `deleted_at`) on `consumer` whose spec metadata carries the label
    /// `hyperfleet.io/adapter=<adapter>` (`controlplane`, `nodepool`): what a management cluster
    /// holds.
    pub fn live_works(&self, consumer: &str, adapter: &str) -> usize {
        self.shared
            .lock()
            .resources
            .values()
            .filter(|r| {
                r.consumer == consumer
                    && r.deleted_at.is_none()
                    && r.metadata["labels"][ADAPTER_LABEL] == adapter
            })
            .count()
    }

    /// Stores `work` (a ManifestWork) on `consumer` as if source `source` had published its
    /// create (the spec event the adapter's own builder makes, so it carries the work's labels),
    /// without a publish: another cluster's control plane already on a management cluster, for
    /// a scenario or a bench that starts with load. The agent applies it as after a create.
    /// Returns its resource id.
    ///
    /// # Errors
    /// The create's refusal: the work cannot be encoded, the id exists (`maestro-6`) or the
    /// consumer is unknown (`maestro-9`).
    pub fn seed_work(&self, source: &str, consumer: &str, work: &Value) -> anyhow::Result<String> {
        let event = hypershift_adapter::work::maestro::manifestbundle::SpecEventBuilder::new(
            source, consumer,
        )
        .create_request(work)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        let id = event
            .extension("resourceid")
            .and_then(hypershift_adapter::work::maestro::cloudevent::AttrValue::as_string)
            .ok_or_else(|| anyhow::anyhow!("the create event has no resourceid"))?;
        let version = event
            .extension("resourceversion")
            .and_then(hypershift_adapter::work::maestro::cloudevent::AttrValue::as_integer)
            .unwrap_or(0);
        let metadata: Value = event
            .extension("metadata")
            .and_then(hypershift_adapter::work::maestro::cloudevent::AttrValue::as_string)
            .and_then(|m| serde_json::from_str(&m).ok())
            .unwrap_or_default();
        self.shared
            .insert_created(source, consumer, &id, version, event.to_json(), metadata)
            .map_err(|e| anyhow::anyhow!(e))?;
        self.shared.schedule_apply(&id);
        Ok(id)
    }

    /// Stops the work agent of `consumer`: from now on it applies nothing, reports no status (also
    /// not on a resync request or when a test asks, e.g. [`Self::set_feedback`] then returns
    /// false) and acknowledges no deletion, so a deleted bundle stays soft-deleted (with
    /// `deleted_at`), as the real server keeps it until the agent reports `Deleted=True`
    /// (recordings `10r*`, `11w*`). Its bundles stay listed and readable.
    pub fn stop_agent(&self, consumer: &str) {
        self.shared
            .lock()
            .stopped_agents
            .insert(consumer.to_owned());
    }

    /// Starts the work agent of `consumer` again. With an automatic agent (an agent delay) it
    /// catches up after the delay: applies every live work whose current version it has not
    /// reported and finishes every deletion it missed (unless deletes are held). An on-demand
    /// agent reports when told, as before.
    pub fn start_agent(&self, consumer: &str) {
        let was_stopped = self.shared.lock().stopped_agents.remove(consumer);
        if was_stopped {
            self.shared.resync_agent(consumer);
        }
    }

    /// Whether the work agent of `consumer` runs (every agent does until [`Self::stop_agent`]).
    pub fn agent_running(&self, consumer: &str) -> bool {
        !self.shared.lock().stopped_agents.contains(consumer)
    }

    /// Requests received so far, by the kinds the cost rules count.
    pub fn counts(&self) -> MaestroCounts {
        let st = self.shared.lock();
        let n = |k: &str| st.calls.get(k).copied().unwrap_or(0);
        MaestroCounts {
            get_by_id: n("GET resource-bundle"),
            list_find: n(rest::LIST_FIND),
            list_count: n(rest::LIST_COUNT),
            rest_delete: n("DELETE resource-bundle"),
            publish_create: n("Publish create_request"),
            publish_update: n("Publish update_request"),
            publish_delete: n("Publish delete_request"),
        }
    }

    /// Agent delay from now on (`None` = on demand).
    pub fn set_agent_delay(&self, delay: Option<Duration>) {
        self.shared.lock().agent_delay = delay;
    }

    /// Whether deletes are ever acknowledged from now on.
    pub fn set_ack_deletes(&self, ack: bool) {
        self.shared.lock().ack_deletes = ack;
    }

    /// The next `n` calls (gRPC or REST) fail as unavailable.
    pub fn fail_next(&self, n: u32) {
        self.shared.lock().fail_next = n;
    }

    /// Every call sleeps `latency` before being handled.
    pub fn set_latency(&self, latency: Duration) {
        self.shared.lock().latency = latency;
    }

    /// Ends every open Subscribe stream with `Unavailable`.
    pub fn kill_subscriptions(&self) {
        self.shared.kill.send_modify(|g| *g += 1);
    }

    /// Number of gRPC Publish calls received.
    pub fn publishes(&self) -> u64 {
        self.calls("Publish")
    }

    /// Number of REST `GET /resource-bundles/{id}` calls.
    pub fn rest_gets(&self) -> u64 {
        self.calls("GET resource-bundle")
    }

    /// Calls per method: `Publish`, `Subscribe`, `GET resource-bundle`, `LIST resource-bundles`,
    /// `DELETE resource-bundle`; and finer: `LIST resource-bundles count` (`size=1`),
    /// `LIST resource-bundles find` (any other list), `Publish <action>` (`create_request`,
    /// `update_request`, `delete_request`, `resync_request`: each decodable event by its type,
    /// refused ones included). [`Self::counts`] groups them.
    pub fn calls(&self, method: &str) -> u64 {
        self.shared.lock().calls.get(method).copied().unwrap_or(0)
    }

    /// Every CloudEvent Publish could decode, in order (including ones the handlers then rejected).
    pub fn received_events(&self) -> Vec<CloudEvent> {
        self.shared.lock().received.clone()
    }
}

impl Drop for FakeMaestro {
    fn drop(&mut self) {
        self.kill_subscriptions();
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// What an operator's status write stamps on `status` (see [`FakeMaestro::set_feedback`]): the
/// object's `generation` on every condition, and the release `spec` asks for as a HostedCluster's
/// `version.desired.image` (only where the status has a `version.desired`).
pub fn operator_stamp(status: &mut Value, generation: i64, spec: Option<&Value>) {
    if let Some(conditions) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        for condition in conditions.iter_mut().filter_map(Value::as_object_mut) {
            condition.insert("observedGeneration".into(), generation.into());
        }
    }
    let image = spec.and_then(|s| s.pointer("/release/image")).cloned();
    if let (Some(desired), Some(image)) = (
        status
            .pointer_mut("/version/desired")
            .and_then(Value::as_object_mut),
        image,
    ) {
        desired.insert("image".into(), image);
    }
}
