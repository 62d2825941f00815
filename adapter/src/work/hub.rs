//! The `hub` work backend: ManifestWorks (`work.open-cluster-management.io/v1`) read, created,
//! updated and deleted directly on an OCM hub through kube-rs, in the consumer's namespace. Used on
//! kind and on hubs without Maestro.
//!
//! Error kinds: 401 → `Unauthenticated`, 403 → `Forbidden`, 404 on create (the namespace, i.e. the
//! managed cluster, does not exist) → `ConsumerNotFound`, 404 on update/delete → `NotFound`, 409 on
//! create → `AlreadyExists`, 409 on update (stale `resourceVersion`) → `Conflict`, 408/429/5xx,
//! connect failures and timeouts → `Unavailable`.

use std::path::Path;
use std::time::Duration;

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, PostParams};
use serde::Deserialize;

use crate::kubeconfig::error_chain;
use crate::work::maestro::bundle::{ManifestWorkStatus, reported};
use crate::work::maestro::error::{
    from_http_status, invalid, misconfigured, protocol, unavailable,
};
use crate::work::manifestwork::STATUS_FEEDBACK_NAME;
use crate::work::scalar_feedback;
use crate::work::{ExistingWork, ManifestStatus, WorkAt, WorkClient, WorkError};

/// Group, version, kind and plural of ManifestWork.
pub const GROUP: &str = "work.open-cluster-management.io";
pub const VERSION: &str = "v1";
pub const KIND: &str = "ManifestWork";
pub const PLURAL: &str = "manifestworks";

/// Default per-call timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// ManifestWork get/create on an OCM hub, in one namespace (the consumer).
#[derive(Clone)]
pub struct HubWorkClient {
    api: Api<DynamicObject>,
    client: kube::Client,
    consumer: String,
    timeout: Duration,
    /// The hub API server's URL, when known (named in every error message).
    server: Option<String>,
}

impl std::fmt::Debug for HubWorkClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HubWorkClient")
            .field("consumer", &self.consumer)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The `ApiResource` of ManifestWork.
pub fn manifest_work_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(GROUP, VERSION, KIND), PLURAL)
}

impl HubWorkClient {
    /// A client for the works in namespace `consumer`.
    pub fn new(client: kube::Client, consumer: &str, timeout: Duration) -> Self {
        HubWorkClient {
            api: Api::namespaced_with(client.clone(), consumer, &manifest_work_resource()),
            client,
            consumer: consumer.to_owned(),
            timeout,
            server: None,
        }
    }

    /// What a `verb` of the work `name` is called in messages, with the hub it was sent to:
    /// `GET manifestwork ns/name on hub https://…`.
    fn what(&self, verb: &str, name: &str) -> String {
        let what = format!("{verb} manifestwork {}/{name}", self.consumer);
        match &self.server {
            Some(server) => format!("{what} on hub {server}"),
            None => what,
        }
    }

    /// Connects with `kubeconfig` (or `~/.kube/config`, or in-cluster). Nothing is sent yet.
    pub async fn connect(
        kubeconfig: Option<&Path>,
        consumer: &str,
        timeout: Duration,
    ) -> Result<Self, WorkError> {
        let config_error = |message: String| {
            misconfigured(match kubeconfig {
                Some(path) => format!("hub kubeconfig {}: {message}", path.display()),
                None => format!("hub kubeconfig: {message}"),
            })
        };
        let mut config = crate::kubeconfig::load(kubeconfig)
            .await
            .map_err(config_error)?;
        crate::kubeconfig::tune(&mut config, timeout);
        let server = config.cluster_url.to_string();
        let client = kube::Client::try_from(config).map_err(|e| config_error(error_chain(&e)))?;
        let mut hub = Self::new(client, consumer, timeout);
        hub.server = Some(server.trim_end_matches('/').to_owned());
        Ok(hub)
    }

    /// `call` (`what`, a POST into `create_in` when it creates) within the timeout, its failure
    /// as a [`WorkError`].
    async fn timed<T>(
        &self,
        what: &str,
        create_in: Option<&str>,
        call: impl Future<Output = Result<T, kube::Error>>,
    ) -> Result<T, WorkError> {
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(kube::Error::Api(status))) => Err(from_status(what, &status, create_in)),
            Ok(Err(other)) => Err(from_transport(what, &other)),
            Err(_elapsed) => Err(unavailable(format!(
                "{what}: no answer within {:?}",
                self.timeout
            ))),
        }
    }
}

impl WorkClient for HubWorkClient {
    type On<'a> = HubWorkClient;

    /// The same hub, in the namespace of `at`'s consumer (works are keyed by name).
    fn on(&self, at: &WorkAt) -> HubWorkClient {
        if at.consumer == self.consumer {
            return self.clone();
        }
        HubWorkClient {
            server: self.server.clone(),
            ..Self::new(self.client.clone(), &at.consumer, self.timeout)
        }
    }

    async fn get(&self, name: &str) -> Result<Option<ExistingWork>, WorkError> {
        let what = self.what("GET", name);
        let object = self.timed(&what, None, self.api.get_opt(name)).await?;
        object.map(|o| existing_work(&o)).transpose()
    }

    async fn create(&self, work: &serde_json::Value) -> Result<(), WorkError> {
        let mut object: DynamicObject = serde_json::from_value(work.clone())
            .map_err(|e| invalid(format!("the work is not a Kubernetes object: {e}")))?;
        let namespace = object.metadata.namespace.as_deref();
        if let Some(ns) = namespace.filter(|ns| *ns != self.consumer) {
            return Err(invalid(format!(
                "the work's namespace {ns:?} is not the consumer {:?}",
                self.consumer
            )));
        }
        object.metadata.namespace = Some(self.consumer.clone());
        let what = self.what("POST", object.metadata.name.as_deref().unwrap_or(""));
        let post = PostParams::default();
        let create = self.api.create(&post, &object);
        self.timed(&what, Some(&self.consumer), create)
            .await
            .map(drop)
    }

    /// One JSON patch (RFC 6902) that replaces `spec`, `metadata.labels` and `metadata.annotations`
    /// and sets `metadata.resourceVersion` to the one read: the API server refuses it with 409 when
    /// the object changed since (optimistic concurrency, like a PUT with that resourceVersion). A
    /// patch rather than a PUT keeps what other writers own on the object (finalizers, owner
    /// references). A work already being deleted is refused without a request.
    async fn update(
        &self,
        work: &serde_json::Value,
        current: &ExistingWork,
    ) -> Result<(), WorkError> {
        let name = work
            .pointer("/metadata/name")
            .and_then(serde_json::Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| invalid("the work has no metadata.name"))?;
        let patch = update_patch(work, current)?;
        let what = self.what("PATCH", name);
        let unsendable = |e: &dyn std::fmt::Display| invalid(format!("{what}: {e}"));
        let body = serde_json::to_vec(&patch).map_err(|e| unsendable(&e))?;
        let request = http::Request::patch(format!(
            "/apis/{GROUP}/{VERSION}/namespaces/{}/{PLURAL}/{name}",
            self.consumer
        ))
        .header(http::header::CONTENT_TYPE, JSON_PATCH)
        .header(http::header::ACCEPT, "application/json")
        .body(body)
        .map_err(|e| unsendable(&e))?;
        let patch = self.client.request::<DynamicObject>(request);
        self.timed(&what, None, patch).await.map(drop)
    }

    /// DELETE; 404 → `NotFound`. An object with finalizers stays, with `deletionTimestamp`, until they
    /// are removed; a second DELETE of it answers 200 again.
    async fn delete(&self, name: &str) -> Result<(), WorkError> {
        let what = self.what("DELETE", name);
        let params = DeleteParams::default();
        let delete = self.api.delete(name, &params);
        self.timed(&what, None, delete).await.map(drop)
    }
}

/// Content type of a JSON patch.
const JSON_PATCH: &str = "application/json-patch+json";

/// The JSON patch of [`HubWorkClient`]'s update: `metadata.resourceVersion` = the one read (the
/// guard), then labels, annotations and spec of `work` (each replaced whole; absent = empty).
pub fn update_patch(
    work: &serde_json::Value,
    current: &ExistingWork,
) -> Result<serde_json::Value, WorkError> {
    let name = work
        .pointer("/metadata/name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    if let Some(since) = &current.deleting {
        return Err(WorkError::Conflict {
            message: format!(
                "ManifestWork {name} is under deletion (since {since}); it cannot be updated"
            ),
        });
    }
    let Some(resource_version) = current
        .resource_version
        .as_deref()
        .filter(|v| !v.is_empty())
    else {
        return Err(invalid(format!(
            "ManifestWork {name}: no metadata.resourceVersion was read, so an update cannot be guarded by it"
        )));
    };
    let field = |pointer: &str| {
        work.pointer(pointer)
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or_else(|| serde_json::json!({}))
    };
    Ok(serde_json::json!([
        {"op": "add", "path": "/metadata/resourceVersion", "value": resource_version},
        {"op": "add", "path": "/metadata/labels", "value": field("/metadata/labels")},
        {"op": "add", "path": "/metadata/annotations", "value": field("/metadata/annotations")},
        {"op": "add", "path": "/spec", "value": field("/spec")},
    ]))
}

/// A 404 about the namespace (POST into a namespace that does not exist), not about the resource
/// type (CRD not installed).
fn is_missing_namespace(status: &kube::core::Status) -> bool {
    status
        .details
        .as_ref()
        .is_some_and(|d| d.kind == "namespaces")
        || status.message.contains("namespaces \"")
}

/// The error of an API `status` answering `what`; a 404 about the namespace of a POST into
/// `create_in` says that consumer is not there.
fn from_status(what: &str, status: &kube::core::Status, create_in: Option<&str>) -> WorkError {
    let message = if status.message.is_empty() {
        format!("{what}: HTTP {}", status.code)
    } else {
        format!("{what}: HTTP {}: {}", status.code, status.message)
    };
    if let Some(consumer) = create_in
        && status.code == 404
        && is_missing_namespace(status)
    {
        return WorkError::ConsumerNotFound {
            message: format!(
                "namespace {consumer:?} does not exist on the hub (is the managed cluster registered?): {message}"
            ),
        };
    }
    let exists = status.reason == "AlreadyExists" || status.message.contains("already exists");
    from_http_status(status.code, exists, message)
}

fn from_transport(what: &str, err: &kube::Error) -> WorkError {
    let message = format!("{what}: {}", error_chain(err));
    match err {
        kube::Error::SerdeError(_) => WorkError::Protocol { message },
        kube::Error::Auth(_) => WorkError::Unauthenticated { message },
        _ => WorkError::Unavailable { message },
    }
}

/// The backend-neutral view of a hub ManifestWork: labels, annotations, generation, deletion
/// time, work conditions and the feedback of `status.resourceStatus.manifests[]` (`jsonRaw`
/// parsed again; malformed → [`WorkError::MalformedFeedback`]).
pub fn existing_work(object: &DynamicObject) -> Result<ExistingWork, WorkError> {
    let meta = &object.metadata;
    let status: ManifestWorkStatus = match object.data.get("status") {
        None | Some(serde_json::Value::Null) => ManifestWorkStatus::default(),
        Some(value) => ManifestWorkStatus::deserialize(value).map_err(|e| {
            protocol(format!(
                "ManifestWork {} has a status this client cannot read: {e}",
                meta.name.as_deref().unwrap_or("")
            ))
        })?,
    };
    let reported = reported(&status.conditions, &status.resource_status.manifests)?;
    Ok(ExistingWork {
        labels: meta.labels.clone().unwrap_or_default(),
        annotations: meta.annotations.clone().unwrap_or_default(),
        manifests: reported
            .manifests
            .into_iter()
            .map(with_rebuilt_status)
            .collect(),
        version: meta.generation,
        observed_version: status
            .conditions
            .iter()
            .filter_map(|c| c.observed_generation)
            .max(),
        deleting: meta.deletion_timestamp.as_ref().map(|t| t.0.to_string()),
        workload: object.data["spec"]["workload"]["manifests"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
        resource_version: meta.resource_version.clone(),
        ..reported
    })
}

/// A manifest's scalar status values ([`crate::work::manifestwork::use_scalar_feedback`]) put
/// together again as its [`STATUS_FEEDBACK_NAME`] value, the shape the Maestro backend delivers. A
/// whole-status value (a work built with the `.status` rule, read by an agent with raw JSON
/// feedback) is kept as it is.
fn with_rebuilt_status(mut manifest: ManifestStatus) -> ManifestStatus {
    if !manifest.values.contains_key(STATUS_FEEDBACK_NAME)
        && let Some(status) = scalar_feedback::rebuild(&manifest.values)
    {
        manifest
            .values
            .insert(STATUS_FEEDBACK_NAME.to_owned(), status);
    }
    manifest
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn object(value: serde_json::Value) -> DynamicObject {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn feedback_json_raw_is_parsed_again_and_labels_are_kept() {
        let work = object(json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b", "namespace": "mgmt-1", "generation": 2,
                         "labels": {"hyperfleet.io/cluster-id": "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"},
                         "annotations": {"hyperfleet.io/generation": "3"}},
            "status": {
                "conditions": [{"type": "Applied", "status": "True", "reason": "AppliedManifestWorkComplete",
                                "message": "ok", "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 2}],
                "resourceStatus": {"manifests": [{
                    "resourceMeta": {"ordinal": 0, "group": "hypershift.openshift.io", "version": "v1beta1",
                                     "kind": "HostedCluster", "resource": "hostedclusters",
                                     "namespace": "clusters", "name": "prod-eu-1"},
                    "statusFeedback": {"values": [{"name": "status",
                        "fieldValue": {"type": "JsonRaw", "jsonRaw": "{\"conditions\":[]}"}}]},
                    "conditions": []
                }]}
            }
        }));
        let existing = existing_work(&work).unwrap();
        assert_eq!(
            existing.labels["hyperfleet.io/cluster-id"],
            "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"
        );
        assert_eq!(existing.annotations["hyperfleet.io/generation"], "3");
        assert_eq!(existing.version, Some(2));
        assert_eq!(existing.observed_version, Some(2));
        assert_eq!(existing.conditions[0].type_, "Applied");
        assert_eq!(
            existing.feedback_value(
                "hypershift.openshift.io",
                "hostedclusters",
                "clusters",
                "prod-eu-1",
                "status"
            ),
            Some(&json!({"conditions": []}))
        );
    }

    #[test]
    fn workload_and_resource_version_are_read() {
        let work = object(json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": "w", "namespace": "n", "resourceVersion": "812", "generation": 3,
                         "deletionTimestamp": "2026-11-26T03:44:21Z", "finalizers": ["f"]},
            "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "clusters"}}]}}
        }));
        let existing = existing_work(&work).unwrap();
        assert_eq!(existing.resource_version.as_deref(), Some("812"));
        assert_eq!(existing.version, Some(3));
        assert_eq!(existing.workload[0]["kind"], "Namespace");
        assert_eq!(existing.deleting.as_deref(), Some("2026-11-26T03:44:21Z"));
    }

    #[test]
    fn update_patch_is_guarded_and_replaces_only_what_the_adapter_owns() {
        let work = json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
                         "labels": {"hyperfleet.io/adapter": "controlplane"}},
            "spec": {"workload": {"manifests": []}}
        });
        let current = ExistingWork {
            resource_version: Some("812".into()),
            ..Default::default()
        };
        let patch = update_patch(&work, &current).unwrap();
        assert_eq!(
            patch,
            json!([
                {"op": "add", "path": "/metadata/resourceVersion", "value": "812"},
                {"op": "add", "path": "/metadata/labels", "value": {"hyperfleet.io/adapter": "controlplane"}},
                {"op": "add", "path": "/metadata/annotations", "value": {}},
                {"op": "add", "path": "/spec", "value": {"workload": {"manifests": []}}},
            ])
        );
        let deleting = ExistingWork {
            deleting: Some("2026-11-26T03:44:21Z".into()),
            ..current.clone()
        };
        assert!(matches!(
            update_patch(&work, &deleting),
            Err(WorkError::Conflict { message }) if message.contains("under deletion")
        ));
        assert!(matches!(
            update_patch(&work, &ExistingWork::default()),
            Err(WorkError::Invalid { .. })
        ));
        let conflict = kube::core::Status {
            code: 409,
            reason: "Conflict".into(),
            message: "Operation cannot be fulfilled on manifestworks.work.open-cluster-management.io \"w\": the object has been modified; please apply your changes to the latest version and try again".into(),
            ..Default::default()
        };
        assert!(matches!(
            from_status("x", &conflict, None),
            WorkError::Conflict { .. }
        ));
    }

    #[test]
    fn malformed_json_raw_is_a_malformed_feedback_error() {
        let work = object(json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": "w", "namespace": "n"},
            "status": {"resourceStatus": {"manifests": [{
                "resourceMeta": {"group": "g", "resource": "r", "namespace": "n", "name": "x"},
                "statusFeedback": {"values": [{"name": "status",
                    "fieldValue": {"type": "JsonRaw", "jsonRaw": "{not json"}}]}
            }]}}
        }));
        assert!(matches!(
            existing_work(&work),
            Err(WorkError::MalformedFeedback { .. })
        ));
    }

    #[test]
    fn no_status_means_no_feedback() {
        let work = object(json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": "w", "namespace": "n"}
        }));
        let existing = existing_work(&work).unwrap();
        assert!(existing.manifests.is_empty());
        assert_eq!(existing.deleting, None);
    }

    #[test]
    fn status_codes_map_to_kinds() {
        let status = |code: u16, reason: &str, kind: Option<&str>| kube::core::Status {
            code,
            reason: reason.to_owned(),
            message: "m".to_owned(),
            details: kind.map(|k| kube::core::response::StatusDetails {
                name: String::new(),
                group: String::new(),
                kind: k.to_owned(),
                uid: String::new(),
                causes: Vec::new(),
                retry_after_seconds: 0,
            }),
            ..Default::default()
        };
        assert!(matches!(
            from_status("x", &status(401, "Unauthorized", None), None),
            WorkError::Unauthenticated { .. }
        ));
        assert!(matches!(
            from_status("x", &status(403, "Forbidden", None), None),
            WorkError::Forbidden { .. }
        ));
        assert!(matches!(
            from_status("x", &status(409, "AlreadyExists", None), None),
            WorkError::AlreadyExists { .. }
        ));
        assert!(from_status("x", &status(503, "", None), None).is_transient());
        assert!(from_status("x", &status(429, "", None), None).is_transient());
        assert!(is_missing_namespace(&status(
            404,
            "NotFound",
            Some("namespaces")
        )));
        assert!(!is_missing_namespace(&status(404, "NotFound", None)));
    }
}

/// Pins the hub backend: what [`existing_work`] makes of the `hub_manifestwork` fuzz corpus and
/// of edited objects, the error of every API status, and every request the client sends (method,
/// path, headers, body) with what it makes of the answers.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod pinned {
    use std::fmt::Write as _;

    use serde_json::json;

    use super::*;
    use crate::work::maestro::error::pin_inputs::{Recorder, corpus, work_line};

    #[test]
    fn hub_manifestwork_corpus() {
        let mut out = String::new();
        for (name, data) in corpus("hub_manifestwork") {
            let object = serde_json::from_slice::<DynamicObject>(&data);
            let _ = writeln!(
                out,
                "[{name}] {:?}",
                object
                    .map(|o| existing_work(&o)
                        .as_ref()
                        .map(work_line)
                        .map_err(Clone::clone))
                    .map_err(|e| e.to_string())
            );
        }
        insta::assert_snapshot!("hub_manifestwork_corpus", out);
    }

    fn base() -> serde_json::Value {
        json!({
            "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
            "metadata": {"name": "w", "namespace": "mgmt-1", "generation": 4, "resourceVersion": "77",
                         "labels": {"a": "b"}, "annotations": {"c": "d"}},
            "spec": {"workload": {"manifests": [{"kind": "Namespace"}, {"kind": "HostedCluster"}]}},
            "status": {
                "conditions": [
                    {"type": "Applied", "status": "True", "observedGeneration": 3, "lastTransitionTime": "t1", "reason": "r", "message": "m"},
                    {"type": "Available", "status": "False", "observedGeneration": 4},
                    {"type": "Degraded", "status": "False"}],
                "resourceStatus": {"manifests": [
                    {"resourceMeta": {"ordinal": 1, "group": "hypershift.openshift.io", "version": "v1beta1", "kind": "HostedCluster",
                                      "resource": "hostedclusters", "namespace": "clusters", "name": "c"},
                     "statusFeedback": {"values": [
                        {"name": "status.conditions[type=Available].status", "fieldValue": {"type": "String", "string": "True"}},
                        {"name": "status.conditions[type=Available].observedGeneration", "fieldValue": {"type": "Integer", "integer": 4}},
                        {"name": "status.version.history[state=Completed].version", "fieldValue": {"type": "JsonRaw", "jsonRaw": "[\"4.19.3\",\"4.19.1\"]"}},
                        {"name": "status.nodes[*].ready", "fieldValue": {"type": "Boolean", "boolean": true}},
                        {"name": "generation", "fieldValue": {"type": "Integer", "integer": 4}},
                        {"name": "finalizers", "fieldValue": {"type": "String", "string": "f"}}]},
                     "conditions": [{"type": "Applied", "status": "True", "lastTransitionTime": "t2"}]},
                    {"resourceMeta": {"kind": "Namespace", "name": "clusters"}, "statusFeedback": {}}]}
            }
        })
    }

    #[test]
    fn edited_objects() {
        type Edit = fn(&mut serde_json::Value);
        let edits: [(&str, Edit); 12] = [
            ("as is", |_| {}),
            ("whole status kept", |w| {
                w.pointer_mut("/status/resourceStatus/manifests/0/statusFeedback/values").unwrap().as_array_mut().unwrap().push(
                    json!({"name": "status", "fieldValue": {"type": "JsonRaw", "jsonRaw": "{\"conditions\":[]}"}}));
            }),
            ("status null", |w| w["status"] = serde_json::Value::Null),
            ("no status", |w| {
                w.as_object_mut().unwrap().remove("status");
            }),
            ("status not an object", |w| w["status"] = json!("x")),
            ("conditions not a list", |w| {
                w["status"]["conditions"] = json!({})
            }),
            ("bad jsonRaw", |w| {
                w["status"]["resourceStatus"]["manifests"][0]["statusFeedback"]["values"][2]["fieldValue"]
                    ["jsonRaw"] = json!("[");
            }),
            ("deleting", |w| {
                w["metadata"]["deletionTimestamp"] = json!("2026-11-26T03:44:21Z")
            }),
            ("no generation, no resourceVersion", |w| {
                let meta = w["metadata"].as_object_mut().unwrap();
                meta.remove("generation");
                meta.remove("resourceVersion");
            }),
            ("no observedGeneration", |w| {
                w["status"]["conditions"] = json!([{"type": "Applied", "status": "True"}])
            }),
            ("workload not a list", |w| {
                w["spec"]["workload"]["manifests"] = json!({})
            }),
            ("only non-status scalars", |w| {
                w["status"]["resourceStatus"]["manifests"][0]["statusFeedback"]["values"] = json!([
                    {"name": "generation", "fieldValue": {"type": "Integer", "integer": 4}},
                    {"name": "status.", "fieldValue": {"type": "String", "string": "x"}},
                    {"name": "status.a[b", "fieldValue": {"type": "String", "string": "x"}}]);
            }),
        ];
        let mut out = String::new();
        for (name, edit) in edits {
            let mut work = base();
            edit(&mut work);
            let object = serde_json::from_value::<DynamicObject>(work);
            let _ = writeln!(
                out,
                "[{name}] {:#?}",
                object.map(|o| existing_work(&o)).map_err(|e| e.to_string())
            );
        }
        insta::assert_snapshot!("hub_edited_objects", out);
    }

    #[test]
    fn statuses_and_patches() {
        let mut out = String::new();
        for code in [
            0, 200, 301, 400, 401, 403, 404, 405, 408, 409, 410, 418, 422, 429, 499, 500, 503, 599,
        ] {
            for (reason, message) in [
                ("", ""),
                ("AlreadyExists", "m"),
                ("Conflict", "the object has been modified"),
                ("NotFound", "namespaces \"mgmt-1\" not found"),
                ("Invalid", "x already exists"),
            ] {
                let status = kube::core::Status {
                    code,
                    reason: reason.to_owned(),
                    message: message.to_owned(),
                    ..Default::default()
                };
                let _ = writeln!(
                    out,
                    "{code} {reason:?} {message:?}: {:?} missing namespace {}",
                    from_status("GET manifestwork mgmt-1/w", &status, None),
                    is_missing_namespace(&status)
                );
            }
        }
        let serde = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        for err in [
            kube::Error::SerdeError(serde),
            kube::Error::LinesCodecMaxLineLengthExceeded,
            kube::Error::Api(Box::new(kube::core::Status::failure("m", "r"))),
        ] {
            let _ = writeln!(
                out,
                "transport {:?}",
                from_transport("DELETE manifestwork n/w", &err)
            );
        }
        let work = json!({"metadata": {"name": "w", "labels": {"a": "b"}, "annotations": null}, "spec": {"x": 1}});
        let read = |deleting: Option<&str>, rv: Option<&str>| ExistingWork {
            deleting: deleting.map(str::to_owned),
            resource_version: rv.map(str::to_owned),
            ..Default::default()
        };
        for (work, current) in [
            (work.clone(), read(None, Some("5"))),
            (json!({}), read(None, Some("5"))),
            (work.clone(), read(Some("t"), Some("5"))),
            (work.clone(), read(None, Some(""))),
            (work.clone(), read(None, None)),
        ] {
            let _ = writeln!(
                out,
                "patch {work} {current:?}: {:?}",
                update_patch(&work, &current)
            );
        }
        insta::assert_snapshot!("hub_statuses_and_patches", out);
    }

    /// Answers by name (the last path segment, or the body's `metadata.name` on a POST).
    fn answer(method: &str, target: &str) -> (u16, &'static str, String) {
        const JSON: &str = "application/json";
        let name = target
            .split('?')
            .next()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap();
        let status = |code: u16, reason: &str, kind: Option<&str>, message: &str| {
            let mut status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                    "code": code, "reason": reason, "message": message});
            if let Some(kind) = kind {
                status["details"] = json!({"kind": kind, "name": "mgmt-1"});
            }
            (code, JSON, status.to_string())
        };
        match (method, name) {
            ("GET", "w") => (200, JSON, base().to_string()),
            (_, "missing") => status(
                404,
                "NotFound",
                Some("manifestworks"),
                "manifestworks \"missing\" not found",
            ),
            (_, "forbidden") => status(403, "Forbidden", None, "forbidden"),
            (_, "unauthorized") => status(401, "Unauthorized", None, ""),
            (_, "stale") => status(409, "Conflict", None, "the object has been modified"),
            (_, "unavailable") => status(503, "ServiceUnavailable", None, "etcd"),
            (_, "garbage") => (200, JSON, "{\"kind\": 5".to_owned()),
            (_, "html") => (502, "text/html", "<html>bad gateway</html>".to_owned()),
            ("POST", "manifestworks") => (201, JSON, base().to_string()),
            ("PATCH" | "DELETE", _) => (200, JSON, base().to_string()),
            _ => status(500, "InternalError", None, "unexpected"),
        }
    }

    fn posted_answer(method: &str, target: &str) -> (u16, &'static str, String) {
        let ns_missing = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
            "reason": "NotFound", "message": "namespaces \"mgmt-1\" not found",
            "details": {"kind": "namespaces", "name": "mgmt-1"}});
        let exists = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 409,
            "reason": "AlreadyExists", "message": "manifestworks \"w\" already exists"});
        let crd_missing = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
            "reason": "NotFound", "message": "the server could not find the requested resource"});
        match target {
            t if t.contains("/namespaces/nons/") => {
                (404, "application/json", ns_missing.to_string())
            }
            t if t.contains("/namespaces/dup/") => (409, "application/json", exists.to_string()),
            t if t.contains("/namespaces/nocrd/") => {
                (404, "application/json", crd_missing.to_string())
            }
            _ => answer(method, target),
        }
    }

    #[tokio::test]
    async fn requests_and_answers() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let server = Recorder::start(posted_answer).await;
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: hub\n  cluster:\n    server: {}/\ncontexts:\n- name: hub\n  context:\n    cluster: hub\n    user: u\ncurrent-context: hub\nusers:\n- name: u\n  user:\n    token: hub-t0ken\n",
                server.url
            ),
        )
        .unwrap();
        let hub = HubWorkClient::connect(Some(&kubeconfig), "mgmt-1", Duration::from_secs(5))
            .await
            .unwrap();
        let mut out = String::new();
        let log = |out: &mut String, what: String| {
            let _ = writeln!(out, "{}\n  {:?}", server.scrub(&what), server.take());
        };
        for name in [
            "w",
            "missing",
            "forbidden",
            "unauthorized",
            "unavailable",
            "garbage",
            "html",
        ] {
            let got = hub.get(name).await;
            log(&mut out, format!("get {name}: {got:#?}"));
        }
        let work = |name: &str, ns: Option<&str>| {
            let mut w = json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
                               "metadata": {"name": name, "labels": {"a": "b"}},
                               "spec": {"workload": {"manifests": [{"kind": "Namespace"}]}}});
            if let Some(ns) = ns {
                w["metadata"]["namespace"] = json!(ns);
            }
            w
        };
        for (consumer, w) in [
            ("mgmt-1", work("w", None)),
            ("mgmt-1", work("w", Some("mgmt-1"))),
            ("mgmt-1", work("w", Some("other"))),
            ("mgmt-1", json!("not an object")),
            ("nons", work("w", None)),
            ("dup", work("w", None)),
            ("nocrd", work("w", None)),
        ] {
            let at = WorkAt::named(consumer, "w");
            let got = hub.on(&at).create(&w).await;
            log(&mut out, format!("create on {consumer} {w}: {got:?}"));
        }
        let current = ExistingWork {
            resource_version: Some("77".into()),
            ..Default::default()
        };
        for name in ["w", "stale", "missing", ""] {
            let got = hub.update(&work(name, None), &current).await;
            log(&mut out, format!("update {name}: {got:?}"));
        }
        let got = hub.update(&work("w", None), &ExistingWork::default()).await;
        log(&mut out, format!("update unguarded: {got:?}"));
        for name in ["w", "missing", "forbidden"] {
            let got = hub.delete(name).await;
            log(&mut out, format!("delete {name}: {got:?}"));
        }
        let plain = HubWorkClient::new(
            kube::Client::try_from(kube::Config::new(server.url.parse().unwrap())).unwrap(),
            "mgmt-1",
            Duration::from_secs(5),
        );
        let got = plain.get("missing").await;
        log(&mut out, format!("get without a known server: {got:?}"));
        let _ = writeln!(out, "{hub:?}");
        insta::assert_snapshot!("hub_requests", out);
    }
}
