//! The work backend seen by the adapter: read, create, update and delete one ManifestWork by name,
//! on the client's management cluster or [`on`](WorkClient::on) another one; find works by their
//! labels on every management cluster, and count them on one (placement).
//!
//! Two implementations exist: [`crate::work::maestro::MaestroWorkClient`] (REST + gRPC CloudEvents) and the OCM hub
//! backend (kube-rs). Both report failures as [`WorkError`], whose variants are backend-neutral kinds.
//! Nothing above this trait knows how a backend names or stores a work (Maestro's resource bundles
//! and their ids stay below it).

use std::collections::BTreeMap;
use std::future::Future;

pub mod backend;
pub mod deletion;
pub mod failure;
pub mod feedback;
pub mod hub;
pub mod maestro;
pub mod manifestwork;
pub mod observed;
pub mod outcome;
pub mod scalar_feedback;
pub mod sync;

/// Where one work lives: its management cluster (Maestro consumer, hub namespace), its name, and
/// how the backend keys it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkAt {
    pub consumer: String,
    /// `metadata.name`.
    pub name: String,
    pub key: WorkKey,
}

/// How the backend finds a work besides its consumer and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkKey {
    /// The backend's own key for the name on the consumer (Maestro: the resource id derived from
    /// source, consumer and name).
    Named,
    /// The key a [`WorkClient::find`] returned for a work.
    Found(String),
    /// A new placement of the work, after the withdrawn work found under this key when there was
    /// one: every pulse placing the same work (after the same withdrawal) uses the same key
    /// wherever it places it, so that the backend refuses all but the first
    /// ([`WorkError::AlreadyExists`]).
    Placed { after: Option<String> },
}

impl WorkAt {
    /// The work `name` on `consumer`, keyed by its name.
    pub fn named(consumer: &str, name: &str) -> Self {
        Self {
            consumer: consumer.to_owned(),
            name: name.to_owned(),
            key: WorkKey::Named,
        }
    }
}

/// A work a [`WorkClient::find`] found.
#[derive(Debug, Clone)]
pub struct Found {
    /// Where it is ([`WorkKey::Found`]).
    pub at: WorkAt,
    /// When the backend stored it (RFC 3339), when it says.
    pub created_at: Option<String>,
    /// Its deletion is requested (it is still there until the agent confirms it).
    pub deleting: bool,
    /// What the backend knows about it, or why that cannot be read.
    pub work: Result<ExistingWork, WorkError>,
}

impl Found {
    /// The key [`WorkKey::Found`] names it by.
    pub fn key(&self) -> &str {
        match &self.at.key {
            WorkKey::Found(key) => key,
            WorkKey::Named | WorkKey::Placed { .. } => "",
        }
    }

    /// Whether its agent has reported anything about it (a work that cannot be read counts as
    /// reported: nothing is concluded from it).
    pub fn reported(&self) -> bool {
        self.work.as_ref().map_or(true, |w| !w.never_reported())
    }
}

/// A ManifestWork backend. Generic use only (no `dyn`).
pub trait WorkClient: Send + Sync {
    /// This client on `at` (another management cluster, a work found by [`Self::find`], a new
    /// placement); its calls then address that work.
    type On<'a>: WorkClient
    where
        Self: 'a;

    /// See [`Self::On`].
    fn on<'a>(&'a self, at: &WorkAt) -> Self::On<'a>;

    /// The backend's key of the work `name` as this client addresses it (Maestro: the resource
    /// id; the name where the backend keys works by name).
    fn key(&self, name: &str) -> String {
        name.to_owned()
    }

    /// Every work labelled with all of `labels`, on every management cluster, oldest first; works
    /// being deleted included (as long as the backend lists them: a work that is not listed is
    /// not proven gone). A backend that cannot search across management clusters refuses.
    fn find(
        &self,
        labels: &[(&str, &str)],
    ) -> impl Future<Output = Result<Vec<Found>, WorkError>> + Send {
        let _ = labels;
        std::future::ready(Err(WorkError::Invalid {
            message: "this work backend cannot search across management clusters".to_owned(),
        }))
    }

    /// How many works labelled with all of `labels` `consumer` holds (works being deleted
    /// included).
    fn count(
        &self,
        consumer: &str,
        labels: &[(&str, &str)],
    ) -> impl Future<Output = Result<u64, WorkError>> + Send {
        let _ = (consumer, labels);
        std::future::ready(Err(WorkError::Invalid {
            message: "this work backend cannot count works".to_owned(),
        }))
    }

    /// Reads the ManifestWork `name` (e.g. `hostedcluster-<clusterId>`) in the backend's consumer namespace.
    /// `Ok(None)` when it does not exist. Works that are being deleted are returned (see
    /// [`ExistingWork::deleting`]).
    fn get(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<ExistingWork>, WorkError>> + Send;

    /// Creates `work`, a full ManifestWork object (`metadata.name` required; `metadata.namespace` absent or
    /// equal to the consumer). Creation is asynchronous on the backend side: read it back with [`Self::get`].
    fn create(
        &self,
        work: &serde_json::Value,
    ) -> impl Future<Output = Result<(), WorkError>> + Send;

    /// Replaces the work's labels, annotations and spec with those of `work` (a full ManifestWork of the same name),
    /// guarded by what was read: Maestro publishes an update_request whose `ce-resourceversion` is `current.version`;
    /// the hub replaces the ManifestWork with `metadata.resourceVersion` = `current.resource_version`.
    /// A stale version → `WorkError::Conflict` (the caller re-reads with `get` and tries again, bounded);
    /// a work under deletion → `WorkError::Conflict` whose message says so.
    fn update(
        &self,
        work: &serde_json::Value,
        current: &ExistingWork,
    ) -> impl Future<Output = Result<(), WorkError>> + Send;

    /// Requests deletion of the work `name` (Maestro: delete_request event; hub: DELETE). `Ok(())` when the deletion
    /// was requested or is already in progress; `Err(WorkError::NotFound)` when no such work exists (the caller treats
    /// that as "already gone").
    fn delete(&self, name: &str) -> impl Future<Output = Result<(), WorkError>> + Send;
}

impl<T: WorkClient> WorkClient for &T {
    type On<'a>
        = T::On<'a>
    where
        Self: 'a;

    fn on<'a>(&'a self, at: &WorkAt) -> T::On<'a> {
        (**self).on(at)
    }

    fn key(&self, name: &str) -> String {
        (**self).key(name)
    }

    fn find(
        &self,
        labels: &[(&str, &str)],
    ) -> impl Future<Output = Result<Vec<Found>, WorkError>> + Send {
        (**self).find(labels)
    }

    fn count(
        &self,
        consumer: &str,
        labels: &[(&str, &str)],
    ) -> impl Future<Output = Result<u64, WorkError>> + Send {
        (**self).count(consumer, labels)
    }

    fn get(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<ExistingWork>, WorkError>> + Send {
        (**self).get(name)
    }

    fn create(
        &self,
        work: &serde_json::Value,
    ) -> impl Future<Output = Result<(), WorkError>> + Send {
        (**self).create(work)
    }

    fn update(
        &self,
        work: &serde_json::Value,
        current: &ExistingWork,
    ) -> impl Future<Output = Result<(), WorkError>> + Send {
        (**self).update(work, current)
    }

    fn delete(&self, name: &str) -> impl Future<Output = Result<(), WorkError>> + Send {
        (**self).delete(name)
    }
}

/// What the backend knows about an existing ManifestWork.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExistingWork {
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `metadata.annotations`.
    pub annotations: BTreeMap<String, String>,
    /// Id of the source (owner) that wrote the work, when the backend can tell.
    pub source: Option<String>,
    /// What the agent reports per manifest (conditions and feedback), one entry per manifest in the
    /// status (`resourceStatus[]` of a Maestro bundle, `status.resourceStatus.manifests[]` of a hub work).
    pub manifests: Vec<ManifestStatus>,
    /// Work-level status conditions (`Applied`, `Available`, `Deleted`, ...).
    pub conditions: Vec<WorkCondition>,
    /// Current spec version (Maestro bundle `version`, hub `metadata.generation`).
    pub version: Option<i64>,
    /// Spec version the agent last applied (Maestro `status.ObservedVersion`), when known.
    pub observed_version: Option<i64>,
    /// Deletion timestamp (RFC 3339) when the work is being deleted.
    pub deleting: Option<String>,
    /// The manifests as stored in the work (Maestro bundle `manifests`, hub `spec.workload.manifests`).
    pub workload: Vec<serde_json::Value>,
    /// Hub `metadata.resourceVersion` (the optimistic-concurrency token of an update); `None` on Maestro, whose
    /// token is [`Self::version`].
    pub resource_version: Option<String>,
}

impl ExistingWork {
    /// The feedback value `feedback_name` of the manifest identified by `group`/`resource`/`namespace`/`name`.
    /// `resource` matches either the plural resource or the kind (case-insensitive).
    pub fn feedback_value(
        &self,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
        feedback_name: &str,
    ) -> Option<&serde_json::Value> {
        self.manifest(group, resource, namespace, name)
            .and_then(|m| m.values.get(feedback_name))
    }

    /// What the agent reports about the manifest `group`/`resource`/`namespace`/`name`, if anything.
    pub fn manifest(
        &self,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Option<&ManifestStatus> {
        self.manifests
            .iter()
            .find(|m| m.resource.matches(group, resource, namespace, name))
    }

    /// The work-level condition `type_`, if reported.
    pub fn condition(&self, type_: &str) -> Option<&WorkCondition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    /// True when the work's agent has never reported anything (no conditions, no observed
    /// version, no manifest status).
    pub fn never_reported(&self) -> bool {
        self.conditions.is_empty() && self.observed_version.is_none() && self.manifests.is_empty()
    }
}

/// Identity of one manifest inside a work, as reported in status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceIdentity {
    /// API group (`""` for core).
    pub group: String,
    /// API version (e.g. `v1beta1`), if reported.
    pub version: String,
    /// Kind (e.g. `HostedCluster`), if reported.
    pub kind: String,
    /// Plural resource (e.g. `hostedclusters`), if reported.
    pub resource: String,
    /// Namespace (`""` for cluster-scoped).
    pub namespace: String,
    /// Object name.
    pub name: String,
}

impl ResourceIdentity {
    /// True when group, namespace and name are equal and `resource` equals the plural resource or the kind
    /// (case-insensitive).
    pub fn matches(&self, group: &str, resource: &str, namespace: &str, name: &str) -> bool {
        self.group == group
            && self.namespace == namespace
            && self.name == name
            && (self.resource.eq_ignore_ascii_case(resource)
                || self.kind.eq_ignore_ascii_case(resource))
    }
}

/// What the agent reports about one manifest: its conditions (`Applied`, `Available`,
/// `StatusFeedbackSynced`, ...) and its feedback values by name (`jsonRaw` already parsed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ManifestStatus {
    /// Which manifest.
    pub resource: ResourceIdentity,
    /// Manifest-level conditions, as reported.
    pub conditions: Vec<WorkCondition>,
    /// Feedback values by name (e.g. `status`); empty when the agent reported none (`statusFeedback: {}`).
    pub values: BTreeMap<String, serde_json::Value>,
}

impl ManifestStatus {
    /// The manifest-level condition `type_`, if reported.
    pub fn condition(&self, type_: &str) -> Option<&WorkCondition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }
}

/// A status condition of a work (`metav1.Condition`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkCondition {
    /// Condition type.
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// CamelCase reason.
    pub reason: String,
    /// Human-readable message.
    pub message: String,
    /// Spec version/generation the condition was computed for.
    pub observed_generation: Option<i64>,
    /// `lastTransitionTime` as reported (RFC 3339, whole seconds); empty when absent.
    pub last_transition_time: String,
}

/// How the retry loop ended without an answer.
#[derive(Debug, Clone)]
pub enum Failure {
    /// A failure retrying cannot fix.
    Permanent(WorkError),
    /// Still transient when the budget ran out.
    GaveUp {
        error: WorkError,
        attempts: u32,
        elapsed: std::time::Duration,
    },
    /// Shutdown was requested first.
    Interrupted { last: Option<WorkError> },
}

/// Failure of a work backend call. Every variant carries the server's (or transport's) message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkError {
    /// A work with this id/name already exists (also while it is being deleted).
    #[error("work already exists: {message}")]
    AlreadyExists { message: String },
    /// Stale version or the work is under deletion.
    #[error("conflict: {message}")]
    Conflict { message: String },
    /// The work (or another addressed object) does not exist.
    #[error("not found: {message}")]
    NotFound { message: String },
    /// The request was rejected as invalid.
    #[error("invalid request: {message}")]
    Invalid { message: String },
    /// The target consumer (management cluster) is not registered.
    #[error("consumer not found: {message}")]
    ConsumerNotFound { message: String },
    /// Missing or rejected credentials.
    #[error("unauthenticated: {message}")]
    Unauthenticated { message: String },
    /// Authenticated but not allowed.
    #[error("forbidden: {message}")]
    Forbidden { message: String },
    /// The backend could not be reached or answered with a transient failure (connection refused, timeout,
    /// HTTP 5xx, gRPC `Unavailable`/`DeadlineExceeded`).
    #[error("backend unavailable: {message}")]
    Unavailable { message: String },
    /// A status feedback `jsonRaw` value is not valid JSON.
    #[error("malformed status feedback {feedback:?} of manifest {manifest}: {message}")]
    MalformedFeedback {
        manifest: String,
        feedback: String,
        message: String,
    },
    /// The backend answered something this client cannot decode.
    #[error("unexpected response from backend: {message}")]
    Protocol { message: String },
    /// Local configuration problem (bad URL, unreadable CA/token file, ...).
    #[error("configuration error: {message}")]
    Config { message: String },
    /// Any other server-side failure.
    #[error("backend error: {message}")]
    Internal { message: String },
}

impl WorkError {
    /// True for failures worth retrying with backoff (only [`WorkError::Unavailable`]).
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Unavailable { .. })
    }

    /// The message carried by the error (server text where there is one).
    pub fn message(&self) -> &str {
        match self {
            Self::AlreadyExists { message }
            | Self::Conflict { message }
            | Self::NotFound { message }
            | Self::Invalid { message }
            | Self::ConsumerNotFound { message }
            | Self::Unauthenticated { message }
            | Self::Forbidden { message }
            | Self::Unavailable { message }
            | Self::MalformedFeedback { message, .. }
            | Self::Protocol { message }
            | Self::Config { message }
            | Self::Internal { message } => message,
        }
    }
}
