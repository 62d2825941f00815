//! The HyperShift operator, played by a test on the kit's real API server (the kit has none):
//! it writes what the real operator writes into a HostedCluster's or NodePool's `.status`,
//! through the status subresource, when the test says so. Between a spec change (the work agent
//! applied a new generation) and the test's next [`Operator::write_hosted_cluster`], the old
//! status with its old `observedGeneration` stays: the real operator's lag.
//!
//! The HostedCluster statuses are the recorded ones (`fixtures/maestro/real/03-progressing.json`
//! and `04-available.json`: the status fed back by the real agent, 23 conditions with
//! `lastTransitionTime`/`observedGeneration`, `version`, `controlPlaneEndpoint`), made to fit the
//! object: its name, its release image, its generation, the write time; a release rollout adds a
//! `Partial` history entry in front of the completed one, as the real operator did on an update
//! (`fixtures/hypershift-operator/b-gke-like/06-after-update-5s.json`). NodePool statuses are
//! [`crate::nodepool::NodePoolStatus`] with the object's generation.
//!
//! Before its first status the operator takes the object over as the real one did
//! (`fixtures/hypershift-operator/README.md`, watch events of `b-gke-like`): the finalizer
//! `hypershift.openshift.io/finalizer`, and on a HostedCluster `spec.clusterID` then
//! `spec.infraID` (`<name>-<5 letters>`), each a write of its own (the object's generation goes
//! 1 → 3 before the operator's first status observes it); a NodePool gets an ownerReference to
//! its HostedCluster. On deletion the object stays (`deletionTimestamp`, finalizer) until the test
//! lets the operator finish ([`Operator::release_hosted_cluster`], [`Operator::release_nodepool`]).

use std::path::PathBuf;

use anyhow::{Context, bail};
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use serde_json::{Value, json};

/// The HostedCluster's namespace on the management cluster (the adapter's
/// `HOSTED_CLUSTER_NAMESPACE`).
pub const NAMESPACE: &str = "clusters";
/// The finalizer the operator puts on HostedClusters and NodePools.
pub const FINALIZER: &str = "hypershift.openshift.io/finalizer";

/// What the operator reports about a HostedCluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostedClusterStage {
    /// Provisioning: `Available=False WaitingForAvailable`, `Progressing=True`, history one
    /// `Partial` entry of the spec's image (recording 03).
    Progressing,
    /// Available, the spec's release completed (recording 04).
    Available,
    /// Available, rolling out the spec's image: a `Partial` entry in front of the last
    /// `Completed` one, `Progressing=True` (the update recording's history shape).
    RollingOut,
}

/// Plays the operator on the kit's API server.
#[derive(Clone)]
pub struct Operator {
    client: kube::Client,
}

impl std::fmt::Debug for Operator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Operator")
    }
}

fn hypershift(kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("hypershift.openshift.io", "v1beta1", kind),
        plural,
    )
}

impl Operator {
    /// The operator on the API server `client` talks to (the admin's).
    pub fn new(client: kube::Client) -> Operator {
        Operator { client }
    }

    fn hosted_clusters(&self) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.client.clone(),
            NAMESPACE,
            &hypershift("HostedCluster", "hostedclusters"),
        )
    }

    fn nodepools(&self) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.client.clone(),
            NAMESPACE,
            &hypershift("NodePool", "nodepools"),
        )
    }

    /// HostedCluster `clusters/name` as stored (`None` when absent).
    ///
    /// # Errors
    /// When the API server cannot be read.
    pub async fn hosted_cluster(&self, name: &str) -> anyhow::Result<Option<Value>> {
        let found = self.hosted_clusters().get_opt(name).await?;
        Ok(found.map(serde_json::to_value).transpose()?)
    }

    /// NodePool `clusters/name` as stored (`None` when absent).
    ///
    /// # Errors
    /// When the API server cannot be read.
    pub async fn nodepool(&self, name: &str) -> anyhow::Result<Option<Value>> {
        let found = self.nodepools().get_opt(name).await?;
        Ok(found.map(serde_json::to_value).transpose()?)
    }

    /// Writes the `stage` status of HostedCluster `name` as the operator would now, having
    /// observed its current generation. Returns the stored object.
    ///
    /// # Errors
    /// When the HostedCluster is absent, a recording is missing, or the API server refuses.
    pub async fn write_hosted_cluster(
        &self,
        name: &str,
        stage: HostedClusterStage,
    ) -> anyhow::Result<Value> {
        let object = adopted(
            || self.hosted_cluster(name),
            |object| async move { self.adopt_hosted_cluster(name, &object).await },
        )
        .await
        .with_context(|| format!("HostedCluster {NAMESPACE}/{name}"))?;
        let status = hosted_cluster_status(&object, stage, &now())?;
        replace_status(&self.hosted_clusters(), name, object, status)
            .await
            .with_context(|| format!("write the status of HostedCluster {NAMESPACE}/{name}"))
    }

    /// Writes `status` (e.g. [`crate::nodepool::NodePoolStatus::to_json`]) as NodePool `name`'s,
    /// every condition's `observedGeneration` its current generation. Returns the stored object.
    ///
    /// # Errors
    /// When the NodePool is absent or the API server refuses.
    pub async fn write_nodepool(&self, name: &str, mut status: Value) -> anyhow::Result<Value> {
        let object = adopted(
            || self.nodepool(name),
            |object| async move { self.adopt_nodepool(name, &object).await },
        )
        .await
        .with_context(|| format!("NodePool {NAMESPACE}/{name}"))?;
        let generation = object["metadata"]["generation"].as_i64().unwrap_or(1);
        for condition in status["conditions"].as_array_mut().into_iter().flatten() {
            condition["observedGeneration"] = generation.into();
        }
        replace_status(&self.nodepools(), name, object, status)
            .await
            .with_context(|| format!("write the status of NodePool {NAMESPACE}/{name}"))
    }
}

impl Operator {
    /// The operator's first writes to a new HostedCluster: the finalizer with `spec.clusterID`,
    /// then `spec.infraID`.
    async fn adopt_hosted_cluster(&self, name: &str, object: &Value) -> anyhow::Result<Value> {
        let mut finalizers = object["metadata"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        finalizers.push(FINALIZER.into());
        let cluster_id = random_uuid();
        let infra_id = format!(
            "{name}-{}",
            (0..5).map(|_| fastrand::lowercase()).collect::<String>()
        );
        let api = self.hosted_clusters();
        let first = json!({
            "metadata": {"finalizers": finalizers, "resourceVersion": object["metadata"]["resourceVersion"]},
            "spec": {"clusterID": cluster_id}
        });
        api.patch(name, &PatchParams::default(), &Patch::Merge(&first))
            .await?;
        let second = json!({"spec": {"infraID": infra_id}});
        let stored = api
            .patch(name, &PatchParams::default(), &Patch::Merge(&second))
            .await
            .with_context(|| format!("set the infraID of HostedCluster {NAMESPACE}/{name}"))?;
        Ok(serde_json::to_value(stored)?)
    }

    /// The operator's first write to a new NodePool: the finalizer and an ownerReference to its
    /// HostedCluster (`spec.clusterName`).
    async fn adopt_nodepool(&self, name: &str, object: &Value) -> anyhow::Result<Value> {
        let mut finalizers = object["metadata"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        finalizers.push(FINALIZER.into());
        let mut patch = json!({"metadata": {
            "finalizers": finalizers,
            "resourceVersion": object["metadata"]["resourceVersion"]
        }});
        if let Some(cluster) = object["spec"]["clusterName"].as_str()
            && let Some(hc) = self.hosted_cluster(cluster).await?
        {
            // Added beside the work agent's (a merge patch replaces the whole list).
            let mut owners = object["metadata"]["ownerReferences"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            owners.push(json!({
                "apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
                "name": cluster, "uid": hc["metadata"]["uid"]}));
            patch["metadata"]["ownerReferences"] = owners.into();
        }
        let stored = self
            .nodepools()
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        Ok(serde_json::to_value(stored)?)
    }

    /// The operator finishes a HostedCluster's deletion: removes its finalizer (nothing was ever
    /// provisioned, as in the recordings). `false` when the object is gone or not being deleted.
    ///
    /// # Errors
    /// When the API server refuses.
    pub async fn release_hosted_cluster(&self, name: &str) -> anyhow::Result<bool> {
        let object = self.hosted_cluster(name).await?;
        release(&self.hosted_clusters(), name, object).await
    }

    /// The same for a NodePool.
    ///
    /// # Errors
    /// When the API server refuses.
    pub async fn release_nodepool(&self, name: &str) -> anyhow::Result<bool> {
        let object = self.nodepool(name).await?;
        release(&self.nodepools(), name, object).await
    }

    /// Deletes NodePool `name` and lets it go (a test's cleanup of one nothing else deletes).
    ///
    /// # Errors
    /// When the API server refuses.
    pub async fn delete_nodepool(&self, name: &str) -> anyhow::Result<()> {
        match self.nodepools().delete(name, &Default::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
            Err(e) => return Err(e.into()),
        }
        self.release_nodepool(name).await?;
        Ok(())
    }
}

/// Removes [`FINALIZER`] from `object` (named `name` in `api`) once it is being deleted.
async fn release(
    api: &Api<DynamicObject>,
    name: &str,
    object: Option<Value>,
) -> anyhow::Result<bool> {
    let Some(object) = object else {
        return Ok(false);
    };
    if object["metadata"]["deletionTimestamp"].is_null() {
        return Ok(false);
    }
    let finalizers: Vec<Value> = object["metadata"]["finalizers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| *f != FINALIZER)
        .cloned()
        .collect();
    let patch = json!({"metadata": {"finalizers": finalizers}});
    match api
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(e) => Err(e).with_context(|| format!("release {name}")),
    }
}

/// Sets the whole `.status` of `object` (read just before) with a PUT of the status subresource
/// (a merge patch would drop the `null`s the CRD requires, e.g. `version.availableUpdates`,
/// `history[].completionTime`); on a conflict (someone wrote the object since) reads it again.
async fn replace_status(
    api: &Api<DynamicObject>,
    name: &str,
    mut object: Value,
    status: Value,
) -> anyhow::Result<Value> {
    for _ in 0..5 {
        object["status"] = status.clone();
        let typed: DynamicObject = serde_json::from_value(object.clone())?;
        match api
            .replace_status(name, &PostParams::default(), &typed)
            .await
        {
            Ok(stored) => return Ok(serde_json::to_value(stored)?),
            Err(kube::Error::Api(e)) if e.code == 409 => {
                object = serde_json::to_value(api.get(name).await?)?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    bail!("{name} kept changing under the status write")
}

/// The object `get` reads, taken over first (`adopt`) unless it was already or is being deleted.
/// The takeover's first write carries the `resourceVersion` read, as the real operator's writes
/// do: its finalizer list and ownerReferences replace the stored ones, and the work agent adds
/// its own ownerReference (to its AppliedManifestWork) right after it created the object. Written
/// over a newer version, that reference was lost (seen on the kit: the agent then did not delete
/// the NodePool when its work was deleted, since the object no longer named the agent's
/// AppliedManifestWork as an owner). A conflict reads again and retries.
async fn adopted<G, GF, A, AF>(get: G, adopt: A) -> anyhow::Result<Value>
where
    G: Fn() -> GF,
    GF: Future<Output = anyhow::Result<Option<Value>>>,
    A: Fn(Value) -> AF,
    AF: Future<Output = anyhow::Result<Value>>,
{
    for _ in 0..5 {
        let object = get().await?.context("not found")?;
        if has_finalizer(&object) || !object["metadata"]["deletionTimestamp"].is_null() {
            return Ok(object);
        }
        match adopt(object).await {
            Ok(stored) => return Ok(stored),
            Err(e) if is_conflict(&e) => {}
            Err(e) => return Err(e.context("the operator's takeover")),
        }
    }
    bail!("the object kept changing under the operator's takeover")
}

fn is_conflict(e: &anyhow::Error) -> bool {
    matches!(e.downcast_ref::<kube::Error>(), Some(kube::Error::Api(status)) if status.code == 409)
}

fn has_finalizer(object: &Value) -> bool {
    object["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|fs| fs.iter().any(|f| f == FINALIZER))
}

/// A random UUID (version 4 layout), as the operator's `spec.clusterID`.
fn random_uuid() -> String {
    let hex = |n: usize| {
        (0..n)
            .map(|_| char::from_digit(fastrand::u32(0..16), 16).unwrap_or('0'))
            .collect::<String>()
    };
    format!(
        "{}-{}-4{}-{}{}-{}",
        hex(8),
        hex(4),
        hex(3),
        fastrand::choice(['8', '9', 'a', 'b']).unwrap_or('8'),
        hex(3),
        hex(12)
    )
}

/// The current time as the operator writes it (RFC 3339, seconds).
fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The status fed back in recording `file` of `fixtures/maestro/real/`.
fn recorded_status(file: &str) -> anyhow::Result<Value> {
    let dir: PathBuf =
        job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/maestro/real")
            .context("the team folder's fixtures/maestro/real")?;
    let text = std::fs::read_to_string(dir.join(file)).with_context(|| format!("read {file}"))?;
    let recording: Value = serde_json::from_str(&text)?;
    let raw = recording["body"]["status"]["resourceStatus"][0]["statusFeedback"]["values"][0]
        ["fieldValue"]["jsonRaw"]
        .as_str()
        .with_context(|| format!("{file} has no fed-back status"))?;
    Ok(serde_json::from_str(raw)?)
}

/// `4.17.0` of `quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64`.
fn version_of(image: &str) -> String {
    let tag = image.rsplit(':').next().unwrap_or_default();
    tag.split('-').next().unwrap_or_default().to_owned()
}

/// The `stage` status of HostedCluster `object` written at `at`.
///
/// # Errors
/// When the recordings are missing or the object has no release image.
pub fn hosted_cluster_status(
    object: &Value,
    stage: HostedClusterStage,
    at: &str,
) -> anyhow::Result<Value> {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let generation = object["metadata"]["generation"].as_i64().unwrap_or(1);
    let Some(image) = object["spec"]["release"]["image"].as_str() else {
        bail!("HostedCluster {name} has no spec.release.image");
    };
    let version = version_of(image);
    let recording = match stage {
        HostedClusterStage::Progressing => "03-progressing.json",
        HostedClusterStage::Available | HostedClusterStage::RollingOut => "04-available.json",
    };
    let mut status = recorded_status(recording)?;
    let previous = &object["status"];
    for condition in status["conditions"].as_array_mut().into_iter().flatten() {
        condition["observedGeneration"] = generation.into();
        // A condition keeps its transition time while its status stays as it was.
        let type_ = condition["type"].clone();
        let before = previous["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == type_));
        condition["lastTransitionTime"] = match before {
            Some(b) if b["status"] == condition["status"] => b["lastTransitionTime"].clone(),
            _ => at.into(),
        };
    }
    status["version"]["observedGeneration"] = generation.into();
    status["version"]["desired"] = json!({"image": image, "version": version});
    let completed = json!({"state": "Completed", "image": image, "version": version,
        "startedTime": at, "completionTime": at, "verified": false});
    let partial = json!({"state": "Partial", "image": image, "version": "",
        "startedTime": at, "completionTime": null, "verified": false});
    match stage {
        HostedClusterStage::Progressing => {
            status["version"]["desired"]["version"] = "".into();
            status["version"]["history"] = json!([partial]);
        }
        HostedClusterStage::Available => {
            let mut history = vec![completed];
            history.extend(older_history(previous, image));
            status["version"]["history"] = history.into();
        }
        HostedClusterStage::RollingOut => {
            let mut history = vec![partial];
            history.extend(older_history(previous, image));
            status["version"]["history"] = history.into();
            let progressing = recorded_status("03-progressing.json")?["conditions"]
                .as_array()
                .and_then(|cs| cs.iter().find(|c| c["type"] == "Progressing").cloned())
                .context("recording 03 has no Progressing")?;
            set_condition(&mut status, progressing, generation, at);
        }
    }
    if stage != HostedClusterStage::Progressing {
        status["controlPlaneEndpoint"] =
            json!({"host": format!("api.{name}.example.com"), "port": 443});
        for key in ["kubeconfig", "kubeadminPassword"] {
            if let Some(secret) = status[key]["name"].as_str() {
                let renamed = secret.replace("rec-1144924104", name);
                status[key]["name"] = renamed.into();
            }
        }
        for key in ["ignitionEndpoint", "oauthCallbackURLTemplate"] {
            if let Some(text) = status[key].as_str() {
                let renamed = text.replace("rec-1144924104", name);
                status[key] = renamed.into();
            }
        }
    }
    Ok(status)
}

/// The previous status's `Completed` history entries of other images (newest first).
fn older_history(previous: &Value, image: &str) -> Vec<Value> {
    previous["version"]["history"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|h| h["state"] == "Completed" && h["image"] != image)
        .cloned()
        .collect()
}

/// Replaces (or adds) the condition of `condition`'s type, at `generation`, changed at `at`.
fn set_condition(status: &mut Value, mut condition: Value, generation: i64, at: &str) {
    condition["observedGeneration"] = generation.into();
    condition["lastTransitionTime"] = at.into();
    let Some(conditions) = status["conditions"].as_array_mut() else {
        return;
    };
    match conditions
        .iter_mut()
        .find(|c| c["type"] == condition["type"])
    {
        Some(existing) => *existing = condition,
        None => conditions.push(condition),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hc(image: &str, generation: i64, status: Value) -> Value {
        json!({"metadata": {"name": "prod-eu-1", "generation": generation},
               "spec": {"release": {"image": image}}, "status": status})
    }

    #[test]
    fn statuses_fit_the_object_and_a_rollout_keeps_the_completed_release_behind_it() {
        if job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/maestro/real")
            .is_none()
        {
            return;
        }
        let old = "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64";
        let new = "quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64";
        let available = hosted_cluster_status(
            &hc(old, 1, json!({})),
            HostedClusterStage::Available,
            "2026-11-28T00:00:00Z",
        )
        .unwrap();
        assert_eq!(available["version"]["history"][0]["state"], "Completed");
        assert_eq!(available["version"]["history"][0]["version"], "4.17.0");
        assert_eq!(available["version"]["observedGeneration"], 1);
        assert_eq!(
            available["controlPlaneEndpoint"]["host"],
            "api.prod-eu-1.example.com"
        );
        assert!(
            available["conditions"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["observedGeneration"] == 1)
        );

        let rolling = hosted_cluster_status(
            &hc(new, 2, available.clone()),
            HostedClusterStage::RollingOut,
            "2026-11-28T00:05:00Z",
        )
        .unwrap();
        let history = rolling["version"]["history"].as_array().unwrap();
        assert_eq!(
            (history[0]["state"].as_str(), history[0]["image"].as_str()),
            (Some("Partial"), Some(new))
        );
        assert_eq!(
            (history[1]["state"].as_str(), history[1]["version"].as_str()),
            (Some("Completed"), Some("4.17.0"))
        );
        assert_eq!(rolling["version"]["desired"]["version"], "4.17.1");
        let progressing = rolling["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Progressing")
            .unwrap();
        assert_eq!(
            (
                progressing["status"].as_str(),
                progressing["observedGeneration"].as_i64()
            ),
            (Some("True"), Some(2))
        );
        // Available stayed True: its transition time is the first write's.
        let was = rolling["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Available")
            .unwrap();
        assert_eq!(was["lastTransitionTime"], "2026-11-28T00:00:00Z");

        let done = hosted_cluster_status(
            &hc(new, 2, rolling),
            HostedClusterStage::Available,
            "2026-11-28T00:09:00Z",
        )
        .unwrap();
        let history = done["version"]["history"].as_array().unwrap();
        assert_eq!(history.len(), 2);
        assert_eq!(
            (history[0]["state"].as_str(), history[0]["version"].as_str()),
            (Some("Completed"), Some("4.17.1"))
        );
    }
}
