//! The pure mapping of the `controlplane` subcommand: what the adapter saw (work created, work
//! found with or without HostedCluster status feedback, or an error) → a [`Report`] with the
//! Applied / Available / Health conditions and `data` (`control_plane_endpoint`, `version`).
//!
//! Submodules: [`args`] (the flags) and [`run`](mod@run) (the wiring below, with retries, and
//! [`execute`], the edge that reads the cluster, builds the Maestro or hub client and writes the
//! report). Everything in this file is pure.
//!
//! Wiring, in order:
//! 1. [`ClusterInput::from_json`](crate::hyperfleet::cluster::ClusterInput::from_json), then
//!    [`ClusterSpec::validate`](crate::hyperfleet::cluster::ClusterSpec::validate); on `Err` write
//!    [`report_invalid_spec`] and send nothing.
//! 2. `WorkClient::get(`[`work_name`](crate::work::manifestwork::work_name)`)`:
//!    - missing → `create(`[`manifest_work`](crate::work::manifestwork::manifest_work)`)` →
//!      [`report_created`];
//!    - present → [`ownership`](crate::work::manifestwork::ownership) of its labels: not ours →
//!      [`report_ownership_conflict`]; ours → [`report_observed`]: first the agent's own work and
//!      manifest conditions (`Applied`, `Available`, `StatusFeedbackSynced`), then
//!      [`report_found`] with the value of the feedback named
//!      [`STATUS_FEEDBACK_NAME`](crate::work::manifestwork::STATUS_FEEDBACK_NAME) when the agent's
//!      conditions allow using it. `observed_generation` is then the work's
//!      [`GENERATION_ANNOTATION`](crate::work::manifestwork::GENERATION_ANNOTATION) (the spec the
//!      management cluster holds), not the pulse's;
//!    - present, ours, and the pulse's generation newer than the work's (and the work not being
//!      deleted) → [`update::immutable_changes`] of the work's HostedCluster against the new one:
//!      any → [`report_immutable_change`], nothing sent; none → `WorkClient::update` (one re-read
//!      and retry on a stale version) → [`report_updated`], `observed_generation` = the pulse's;
//!    - present, ours, the pulse's generation older → [`report_stale_generation`], nothing sent.
//! 3. A cluster with `deleted_time`: never create or update; see [`deletion`] (the stages, the
//!    fourth condition `Finalized`, `observed_generation` = the pulse's generation).
//! 4. Backend errors → [`report_maestro_unavailable`] (transient, after the retry budget or on
//!    SIGTERM), [`report_maestro_auth_failed`] (401/403, also for the hub backend),
//!    [`report_consumer_not_found`], [`report_invalid_feedback`] (malformed `jsonRaw`),
//!    [`report_adapter_misconfigured`] (unreadable CA/token, bad URL), [`report_work_failed`]
//!    (anything else). An unreadable cluster → [`report_cluster_unavailable`].
//!
//! Condition table (reasons are exact):
//!
//! | situation | Applied | Available | Health |
//! |---|---|---|---|
//! | work created now | True `ManifestWorkCreated` | False `Provisioning` | True `NoIssues` |
//! | work found, no feedback yet | True `ManifestWorkExists` | False `AwaitingFeedback` | True `NoIssues` |
//! | agent could not apply a manifest (manifest or work `Applied=False`; admission denied, namespace missing) | False `ApplyFailed` (the agent's message) | False `ApplyFailed`, or from the HostedCluster's fresh feedback while an earlier apply still serves | False `ApplyFailed` |
//! | work updated to a newer generation | True `ManifestWorkUpdated` | from the feedback (the running control plane) | from the feedback |
//! | newer generation changes an immutable field (nothing sent; fields named with old → new) | False `ImmutableFieldChanged` | from the feedback | False `ImmutableFieldChanged` |
//! | pulse older than the work's generation (nothing sent) | True `StaleGeneration` (a False Applied keeps its reason) | from the feedback | from the feedback |
//! | HostedCluster manifest `Available=False` (gone from the management cluster; feedback kept by the agent is ignored) | True `ManifestWorkApplied` | False `HostedClusterMissing` | False `HostedClusterMissing` |
//! | HostedCluster manifest `StatusFeedbackSynced=False` | True `ManifestWorkApplied` | Unknown `FeedbackNotSynced` | Unknown `FeedbackNotSynced` |
//! | feedback present but the manifest is not reported `Available=True`, or the feedback last changed before the manifest's `Available` transition | True `ManifestWorkExists` (says why) | False `AwaitingFeedback` | True `NoIssues` |
//! | work found, HC Available=True | True `ManifestWorkApplied` | True `ControlPlaneReady` | from Degraded |
//! | work found, HC Available≠True, Progressing=True | True `ManifestWorkApplied` | False `Provisioning` | from Degraded |
//! | work found, otherwise | True `ManifestWorkApplied` | False `NotReady` (names blocking conditions) | from Degraded |
//! | feedback not a HostedCluster status | True `ManifestWorkExists` | Unknown `InvalidFeedback` | Unknown `InvalidFeedback` |
//! | invalid cluster spec (nothing sent) | False `InvalidClusterSpec` | Unknown `InvalidClusterSpec` | False `InvalidClusterSpec` |
//! | work exists but is not ours | False `OwnershipConflict` | Unknown `OwnershipConflict` | False `OwnershipConflict` |
//! | Maestro unreachable after retries | False `MaestroUnavailable` | Unknown `MaestroUnavailable` | False `MaestroUnavailable` |
//! | Maestro refused our credentials | False `MaestroAuthFailed` | Unknown `MaestroAuthFailed` | False `MaestroAuthFailed` |
//! | consumer unknown to Maestro | False `ConsumerNotFound` | Unknown `ConsumerNotFound` | False `ConsumerNotFound` |
//! | cluster input unreadable (file, HyperFleet API) | False `ClusterSpecUnavailable` | Unknown `ClusterSpecUnavailable` | False `ClusterSpecUnavailable` |
//! | backend rejected the request otherwise | False `ManifestWorkFailed` | Unknown `ManifestWorkFailed` | False `ManifestWorkFailed` |
//! | adapter's own backend settings unusable (CA, token file, URL; wrong port, TLS mismatch, REST and gRPC swapped, not Maestro: the message names the URL) | False `AdapterMisconfigured` | Unknown `AdapterMisconfigured` | False `AdapterMisconfigured` |
//!
//! Health from the HostedCluster, worst first: Degraded=True → False `Degraded`;
//! `ClusterVersionSucceeding=False` or `ClusterVersionFailing=True` → False `UpgradeFailed`
//! during an upgrade, else `ClusterVersionFailing`; during an upgrade `Progressing=False`
//! `Blocked` or `ValidReleaseImage=False` (not `SecretNotFound`) → False `UpgradeBlocked`; each
//! with the HostedCluster's message; else True `NoIssues`.
//!
//! Upgrades: `status.version.desired` differing from the newest `Completed` history entry (after
//! a first completed release) is an upgrade; Available=True then says "upgrading from A to B".
//! `data.version` is the completed version, `data.desired_version` the desired one.
//!
//! In the error rows Available is `Unknown`: the adapter did not see the HostedCluster, and an
//! earlier generation's control plane may still be serving. Health is `False` because a person
//! has to act (fix the spec, the credentials, the consumer name or the conflicting work).

use job_report::{Condition, ConditionStatus, MAX_MESSAGE_LEN, Report};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::hyperfleet::cluster::{SpecViolation, json_kind as kind};
use crate::work::manifestwork::{Ownership, STATUS_FEEDBACK_NAME};
use crate::work::{ExistingWork, ManifestStatus, WorkCondition};

pub mod args;
pub mod deletion;
pub mod run;
pub mod update;

pub use args::{Args, Backend, ConfigError};
pub use run::{RunError, execute, run};

/// `adapter` field of every report this module builds.
pub const ADAPTER_NAME: &str = "hypershift-controlplane";
/// `data` keys.
pub const DATA_CONTROL_PLANE_ENDPOINT: &str = "control_plane_endpoint";
pub const DATA_VERSION: &str = "version";
/// The release the HostedCluster is rolling out (`status.version.desired.version`); equals
/// `version` when no upgrade is running, `""` before the HostedCluster reports one.
pub const DATA_DESIRED_VERSION: &str = "desired_version";

/// Longest part of a HostedCluster or server message quoted inside one of ours.
const MAX_QUOTED: usize = 2048;

/// Where the work lives: used in messages so an SRE can find it.
#[derive(Debug, Clone, Copy)]
pub struct WorkRef<'a> {
    pub consumer: &'a str,
    pub name: &'a str,
}

/// The subset of HostedCluster `status` the mapping reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct HostedClusterStatus {
    #[serde(default)]
    pub conditions: Vec<HostedClusterCondition>,
    #[serde(default, rename = "controlPlaneEndpoint")]
    pub control_plane_endpoint: Option<Endpoint>,
    #[serde(default)]
    pub version: Option<VersionStatus>,
}

/// A `metav1.Condition` of the HostedCluster.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HostedClusterCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub message: String,
}

/// `status.controlPlaneEndpoint`: `host: ""`, `port: 0` until infrastructure is ready.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Endpoint {
    #[serde(default)]
    pub host: String,
    #[serde(default)]
    pub port: i64,
}

/// `status.version`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct VersionStatus {
    /// The release being rolled out (`version` may be empty while it bootstraps).
    #[serde(default)]
    pub desired: Option<Release>,
    #[serde(default)]
    pub history: Vec<VersionHistoryEntry>,
}

/// `status.version.desired`: `{version, image, …}`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Release {
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub image: String,
}

/// One `status.version.history[]` entry (newest first).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct VersionHistoryEntry {
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub image: String,
}

/// A version rollout the HostedCluster reports: `status.version.desired` differs from the newest
/// `Completed` history entry (`hypershift-api.md` §2.1), and a release was completed before (the
/// first rollout is provisioning, not an upgrade).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upgrade {
    /// The newest completed version.
    pub from: String,
    /// The desired version (or, while the operator has not resolved it, its image).
    pub to: String,
}

impl HostedClusterStatus {
    fn condition(&self, type_: &str) -> Option<&HostedClusterCondition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    fn is_true(&self, type_: &str) -> bool {
        self.condition(type_).is_some_and(|c| c.status == "True")
    }

    /// `https://<host>:<port>` once both are set, else `""` (IPv6 hosts are bracketed).
    pub fn control_plane_endpoint(&self) -> String {
        match &self.control_plane_endpoint {
            Some(Endpoint { host, port }) if !host.is_empty() && *port > 0 => {
                if host.contains(':') && !host.starts_with('[') {
                    format!("https://[{host}]:{port}")
                } else {
                    format!("https://{host}:{port}")
                }
            }
            _ => String::new(),
        }
    }

    /// `status.version.desired.version`, else `""` (empty while the release bootstraps).
    pub fn desired_version(&self) -> String {
        self.version
            .as_ref()
            .and_then(|v| v.desired.as_ref())
            .map(|d| d.version.clone())
            .unwrap_or_default()
    }

    /// The rollout in progress, if any: the desired release is not the newest completed one.
    /// Compared by version when both have one, else by image.
    pub fn upgrade(&self) -> Option<Upgrade> {
        let version = self.version.as_ref()?;
        let desired = version.desired.as_ref()?;
        let completed = version
            .history
            .iter()
            .find(|h| h.state == "Completed" && !h.version.is_empty())?;
        let same = if desired.version.is_empty() {
            desired.image.is_empty()
                || completed.image.is_empty()
                || desired.image == completed.image
        } else {
            desired.version == completed.version
        };
        if same {
            return None;
        }
        let to = if desired.version.is_empty() {
            desired.image.clone()
        } else {
            desired.version.clone()
        };
        Some(Upgrade {
            from: completed.version.clone(),
            to,
        })
    }

    /// The newest `Completed` entry of `version.history` (the list is newest first), else `""`.
    pub fn completed_version(&self) -> String {
        self.version
            .iter()
            .flat_map(|v| &v.history)
            .find(|h| h.state == "Completed" && !h.version.is_empty())
            .map(|h| h.version.clone())
            .unwrap_or_default()
    }
}

/// Feedback that is present but is not a HostedCluster status.
#[derive(Debug, thiserror::Error)]
pub enum FeedbackError {
    #[error("the status feedback is a string that is not JSON ({0})")]
    NotJson(serde_json::Error),
    #[error("the status feedback is {0}, not a HostedCluster status object")]
    NotAnObject(&'static str),
    #[error("the status feedback does not have the shape of a HostedCluster status ({0})")]
    Shape(serde_json::Error),
    /// The backend could not parse a `jsonRaw` value (`WorkError::MalformedFeedback`).
    #[error("the status feedback {feedback:?} of {manifest} is not valid JSON ({message})")]
    Malformed {
        manifest: String,
        feedback: String,
        message: String,
    },
}

/// Parses the `status` feedback value: either the status object itself or, as Maestro and the
/// work agent deliver `jsonRaw`, a string holding its JSON.
pub fn parse_feedback(value: &Value) -> Result<HostedClusterStatus, FeedbackError> {
    let parsed;
    let object = match value {
        Value::String(raw) => {
            parsed = serde_json::from_str::<Value>(raw).map_err(FeedbackError::NotJson)?;
            &parsed
        }
        other => other,
    };
    if !object.is_object() {
        return Err(FeedbackError::NotAnObject(kind(object)));
    }
    HostedClusterStatus::deserialize(object).map_err(FeedbackError::Shape)
}

/// The work did not exist and was created now.
pub fn report_created(work: WorkRef<'_>, generation: Option<i64>) -> Report {
    report(
        generation,
        [
            cond(
                "Applied",
                ConditionStatus::True,
                "ManifestWorkCreated",
                format!(
                    "HostedCluster sent to management cluster {} in ManifestWork {}",
                    work.consumer, work.name
                ),
            ),
            cond(
                "Available",
                ConditionStatus::False,
                "Provisioning",
                "Control plane provisioning in progress".to_owned(),
            ),
            no_issues("No degradation detected"),
        ],
        "",
        "",
    )
}

/// The work exists (and is ours); `feedback` is its `status` feedback value, if any.
///
/// This is the feedback-only part of the mapping: [`report_observed`] decides first, from the
/// agent's own work and manifest conditions, whether the feedback may be used at all.
pub fn report_found(
    work: WorkRef<'_>,
    feedback: Option<&Value>,
    generation: Option<i64>,
) -> Report {
    let Some(feedback) = feedback else {
        return report_awaiting(work, None, generation);
    };
    let status = match parse_feedback(feedback) {
        Ok(status) => status,
        Err(error) => return report_invalid_feedback(work, &error, generation),
    };
    report_status(work, &status, generation)
}

/// The work exists, no usable HostedCluster status: `note` says why feedback that is there was
/// not used (`None`: there is none yet).
fn report_awaiting(work: WorkRef<'_>, note: Option<&str>, generation: Option<i64>) -> Report {
    let applied = match note {
        None => format!(
            "ManifestWork {} exists on management cluster {}; no HostedCluster status has been fed back yet",
            work.name, work.consumer
        ),
        Some(note) => format!(
            "ManifestWork {} exists on management cluster {}; {note}",
            work.name, work.consumer
        ),
    };
    report(
        generation,
        [
            cond(
                "Applied",
                ConditionStatus::True,
                "ManifestWorkExists",
                applied,
            ),
            cond(
                "Available",
                ConditionStatus::False,
                "AwaitingFeedback",
                format!(
                    "Waiting for the HostedCluster status from management cluster {}. If this lasts more than a few minutes, check the ManifestWork {} conditions (Applied, StatusFeedbackSynced) on the hub and the work agent on the management cluster",
                    work.consumer, work.name
                ),
            ),
            no_issues("No degradation reported (no HostedCluster status yet)"),
        ],
        "",
        "",
    )
}

/// Whether the HostedCluster's fed-back status may be used, from what the agent says about the
/// HostedCluster manifest.
#[derive(Debug)]
enum Feedback<'a> {
    /// The agent says the HostedCluster is available and the feedback is not older than that.
    Fresh(&'a Value),
    /// No status value (or no manifest status) yet.
    None,
    /// A value is there but must not be used; the text says why.
    Ignored(String),
    /// Manifest `Available=False`: the HostedCluster is not on the management cluster.
    ResourceNotAvailable(&'a WorkCondition),
    /// Manifest `StatusFeedbackSynced=False`.
    NotSynced(&'a WorkCondition),
}

fn feedback_of(manifest: Option<&ManifestStatus>) -> Feedback<'_> {
    let Some(manifest) = manifest else {
        return Feedback::None;
    };
    let available = manifest.condition("Available");
    if let Some(a) = available.filter(|a| a.status == "False") {
        return Feedback::ResourceNotAvailable(a);
    }
    let synced = manifest.condition("StatusFeedbackSynced");
    if let Some(s) = synced.filter(|s| s.status == "False") {
        return Feedback::NotSynced(s);
    }
    let Some(value) = manifest.values.get(STATUS_FEEDBACK_NAME) else {
        return Feedback::None;
    };
    let Some(available) = available.filter(|a| a.status == "True") else {
        return Feedback::Ignored(format!(
            "the work agent has not reported the HostedCluster as available (manifest Available={}), so the status fed back earlier is not used",
            available.map_or("<not reported>", |a| a.status.as_str())
        ));
    };
    if let Some(synced) = synced
        && let (Ok(available_at), Ok(synced_at)) = (
            available.last_transition_time.parse::<jiff::Timestamp>(),
            synced.last_transition_time.parse::<jiff::Timestamp>(),
        )
        && synced_at < available_at
    {
        return Feedback::Ignored(format!(
            "the fed-back HostedCluster status (last changed {}) is older than the agent's report that the HostedCluster became available ({}), so it is not used",
            synced.last_transition_time, available.last_transition_time
        ));
    }
    Feedback::Fresh(value)
}

/// Every manifest the agent could not apply, as `Kind namespace/name: message`; when no
/// manifest says so but the work's `Applied` is `False`, the work's reason and message.
fn apply_failures(existing: &ExistingWork) -> Vec<String> {
    let mut failures: Vec<String> = existing
        .manifests
        .iter()
        .filter_map(|m| {
            let applied = m.condition("Applied").filter(|c| c.status == "False")?;
            let r = &m.resource;
            let what = if r.kind.is_empty() {
                &r.resource
            } else {
                &r.kind
            };
            let place = if r.namespace.is_empty() {
                r.name.clone()
            } else {
                format!("{}/{}", r.namespace, r.name)
            };
            Some(format!(
                "{what} {place} ({}): {}",
                or_none(&applied.reason),
                quote(&applied.message)
            ))
        })
        .collect();
    if failures.is_empty()
        && let Some(applied) = existing
            .condition("Applied")
            .filter(|c| c.status == "False")
    {
        failures.push(format!(
            "ManifestWork ({}): {}",
            or_none(&applied.reason),
            quote(&applied.message)
        ));
    }
    failures
}

/// The work exists and is ours: map what the agent reports about it, then the HostedCluster
/// status it fed back (`hc` = the HostedCluster's `(namespace, name)`).
///
/// In order: a manifest (or the work) with `Applied=False` → [`APPLY_FAILED`]; the HostedCluster
/// manifest `Available=False` → [`HOSTED_CLUSTER_MISSING`] (stale feedback ignored);
/// `StatusFeedbackSynced=False` → [`FEEDBACK_NOT_SYNCED`]; feedback while the manifest is not
/// reported `Available=True`, or older than the agent's `Available` transition →
/// `AwaitingFeedback`; otherwise [`report_found`] with the feedback.
pub fn report_observed(
    work: WorkRef<'_>,
    existing: &ExistingWork,
    hc: (&str, &str),
    generation: Option<i64>,
) -> Report {
    let (namespace, name) = hc;
    let manifest = existing.manifest(
        crate::hypershift::hostedcluster::GROUP,
        crate::hypershift::hostedcluster::RESOURCE,
        namespace,
        name,
    );
    let feedback = feedback_of(manifest);
    let failures = apply_failures(existing);
    if !failures.is_empty() {
        return report_apply_failed(work, hc, &failures, &feedback, generation);
    }
    match feedback {
        Feedback::Fresh(value) => report_found(work, Some(value), generation),
        Feedback::None => report_found(work, None, generation),
        Feedback::Ignored(why) => report_awaiting(work, Some(&why), generation),
        Feedback::ResourceNotAvailable(c) => report_hosted_cluster_missing(work, hc, c, generation),
        Feedback::NotSynced(c) => report_feedback_not_synced(work, hc, c, generation),
    }
}

/// Reason when a generation bump would change immutable HostedCluster fields (nothing sent).
pub const IMMUTABLE_FIELD_CHANGED: &str = "ImmutableFieldChanged";
/// Reason when the work was updated to this pulse's generation.
pub const MANIFEST_WORK_UPDATED: &str = "ManifestWorkUpdated";
/// Reason when the pulse is older than the generation the work carries (nothing sent).
pub const STALE_GENERATION: &str = "StaleGeneration";

/// The work was updated to `generation` (from `held`): Applied says so; Available and Health
/// are those of `observed` (the control plane that runs until the agent applies the update), and
/// so is `observed_generation`: `held`.
pub fn report_updated(
    work: WorkRef<'_>,
    mut observed: Report,
    held: Option<i64>,
    generation: Option<i64>,
) -> Report {
    let from = held.map_or_else(
        || "a work without a generation".to_owned(),
        |g| format!("generation {g}"),
    );
    let to = generation.map_or_else(
        || "the current spec".to_owned(),
        |g| format!("generation {g}"),
    );
    replace(
        &mut observed,
        cond(
            "Applied",
            ConditionStatus::True,
            MANIFEST_WORK_UPDATED,
            format!(
                "HostedCluster of {to} sent to management cluster {} in ManifestWork {} (it held {from}); the work agent applies it next",
                work.consumer, work.name
            ),
        ),
    );
    // The management cluster runs the held generation's spec until the agent applies the update:
    // HyperFleet must not count the new generation as reconciled from the old control plane's
    // status. The next pulse of this generation (a new Job, after the TTL) reads the work at the
    // new generation, by then applied.
    observed.observed_generation = held;
    observed
}

/// `generation` would change immutable fields: nothing was sent. Applied=False and Health=False
/// [`IMMUTABLE_FIELD_CHANGED`] name every field with its old and new value; Available is
/// `observed`'s (the control plane of generation `held` keeps running), `observed_generation`
/// stays `held`.
pub fn report_immutable_change(
    work: WorkRef<'_>,
    mut observed: Report,
    changes: &[update::ImmutableChange],
    generation: Option<i64>,
    held: Option<i64>,
) -> Report {
    let list: String = changes.iter().map(|c| format!("\n- {c}")).collect();
    let fields: Vec<&str> = changes.iter().map(|c| c.field).collect();
    let pulse = generation.map_or_else(|| "This spec".to_owned(), |g| format!("Generation {g}"));
    let kept = held.map_or_else(String::new, |g| format!(" (generation {g})"));
    replace(
        &mut observed,
        cond(
            "Applied",
            ConditionStatus::False,
            IMMUTABLE_FIELD_CHANGED,
            format!(
                "{pulse} changes fields the HostedCluster does not allow to change after creation, so nothing was sent; management cluster {} keeps the spec it has{kept} in ManifestWork {}. Set these fields back in the HyperFleet cluster spec (a different value needs a new cluster):{list}",
                work.consumer, work.name
            ),
        ),
    );
    replace(
        &mut observed,
        cond(
            "Health",
            ConditionStatus::False,
            IMMUTABLE_FIELD_CHANGED,
            format!(
                "A person must act: the cluster spec changes immutable fields ({}); see Applied",
                fields.join(", ")
            ),
        ),
    );
    observed.observed_generation = held;
    observed
}

/// The pulse (`pulse`) is older than the generation the work carries (`held`): nothing was
/// sent. A True Applied becomes [`STALE_GENERATION`]; a False one keeps its reason and is
/// prefixed with the same note. `observed_generation` stays `held`.
pub fn report_stale_generation(
    work: WorkRef<'_>,
    mut observed: Report,
    pulse: i64,
    held: i64,
) -> Report {
    let note = format!(
        "This pulse is for generation {pulse}, older than generation {held} that ManifestWork {} on management cluster {} already carries; nothing was sent (a pulse never rolls the spec back)",
        work.name, work.consumer
    );
    if let Some(applied) = observed
        .conditions
        .iter_mut()
        .find(|c| c.type_ == "Applied")
    {
        let message = format!("{note}. {}", applied.message);
        if applied.status == ConditionStatus::True {
            *applied = cond("Applied", ConditionStatus::True, STALE_GENERATION, message);
        } else {
            applied.message = truncate(message, MAX_MESSAGE_LEN);
        }
    }
    observed.observed_generation = Some(held);
    observed
}

/// Replaces the condition of the same type.
fn replace(report: &mut Report, condition: Condition) {
    if let Some(c) = report
        .conditions
        .iter_mut()
        .find(|c| c.type_ == condition.type_)
    {
        *c = condition;
    }
}

/// Reason when the agent could not apply the work (Applied, Health and, unless the HostedCluster
/// still reports from an earlier apply, Available).
pub const APPLY_FAILED: &str = "ApplyFailed";
/// Reason when the agent reports the HostedCluster as not available (gone from the management
/// cluster).
pub const HOSTED_CLUSTER_MISSING: &str = "HostedClusterMissing";
/// Reason when the agent reports `StatusFeedbackSynced=False`.
pub const FEEDBACK_NOT_SYNCED: &str = "FeedbackNotSynced";

fn report_apply_failed(
    work: WorkRef<'_>,
    (namespace, name): (&str, &str),
    failures: &[String],
    feedback: &Feedback<'_>,
    generation: Option<i64>,
) -> Report {
    let applied = cond(
        "Applied",
        ConditionStatus::False,
        APPLY_FAILED,
        format!(
            "The work agent on management cluster {} could not apply ManifestWork {}: {}. It keeps retrying and failing until the cause is fixed on the management cluster (namespace, admission policy, quota) or in the cluster spec",
            work.consumer,
            work.name,
            failures.join("; ")
        ),
    );
    let health = cond(
        "Health",
        ConditionStatus::False,
        APPLY_FAILED,
        format!(
            "A person must act: HostedCluster {namespace}/{name} cannot be applied on management cluster {} (see Applied)",
            work.consumer
        ),
    );
    // An earlier apply may still be running: then its fresh status says whether it serves.
    if let Feedback::Fresh(value) = feedback
        && let Ok(status) = parse_feedback(value)
    {
        let endpoint = status.control_plane_endpoint();
        let version = status.completed_version();
        let available = available(&status, &endpoint, &version);
        return report_versions(
            generation,
            [applied, available, health],
            &endpoint,
            &version,
            &status.desired_version(),
        );
    }
    let available = cond(
        "Available",
        ConditionStatus::False,
        APPLY_FAILED,
        format!(
            "HostedCluster {namespace}/{name} is not running on management cluster {}: the work agent could not apply it (see Applied)",
            work.consumer
        ),
    );
    report(generation, [applied, available, health], "", "")
}

fn report_hosted_cluster_missing(
    work: WorkRef<'_>,
    (namespace, name): (&str, &str),
    available: &WorkCondition,
    generation: Option<i64>,
) -> Report {
    report(
        generation,
        [
            cond(
                "Applied",
                ConditionStatus::True,
                "ManifestWorkApplied",
                format!(
                    "ManifestWork {} was applied on management cluster {}",
                    work.name, work.consumer
                ),
            ),
            cond(
                "Available",
                ConditionStatus::False,
                HOSTED_CLUSTER_MISSING,
                format!(
                    "The work agent reports HostedCluster {namespace}/{name} as not available on management cluster {} ({}: {}): it is not there (deleted outside the work?). The status fed back before is ignored. The agent re-creates it on its next resync (minutes); if this lasts, look at the management cluster",
                    work.consumer,
                    or_none(&available.reason),
                    quote(&available.message)
                ),
            ),
            cond(
                "Health",
                ConditionStatus::False,
                HOSTED_CLUSTER_MISSING,
                format!(
                    "HostedCluster {namespace}/{name} is missing on management cluster {} (see Available)",
                    work.consumer
                ),
            ),
        ],
        "",
        "",
    )
}

fn report_feedback_not_synced(
    work: WorkRef<'_>,
    (namespace, name): (&str, &str),
    synced: &WorkCondition,
    generation: Option<i64>,
) -> Report {
    let message = format!(
        "The work agent on management cluster {} could not sync the status of HostedCluster {namespace}/{name} ({}: {}); the status fed back before is not used. Check the ManifestWork {} feedback rule and the work agent's logs",
        work.consumer,
        or_none(&synced.reason),
        quote(&synced.message),
        work.name
    );
    report(
        generation,
        [
            cond(
                "Applied",
                ConditionStatus::True,
                "ManifestWorkApplied",
                format!(
                    "ManifestWork {} is applied on management cluster {}",
                    work.name, work.consumer
                ),
            ),
            cond(
                "Available",
                ConditionStatus::Unknown,
                FEEDBACK_NOT_SYNCED,
                message.clone(),
            ),
            cond(
                "Health",
                ConditionStatus::Unknown,
                FEEDBACK_NOT_SYNCED,
                message,
            ),
        ],
        "",
        "",
    )
}

/// The mapping of a parsed HostedCluster status (the work exists, the HostedCluster reports).
pub fn report_status(
    work: WorkRef<'_>,
    status: &HostedClusterStatus,
    generation: Option<i64>,
) -> Report {
    let applied = cond(
        "Applied",
        ConditionStatus::True,
        "ManifestWorkApplied",
        format!(
            "HostedCluster from ManifestWork {} is applied on management cluster {} and reports status",
            work.name, work.consumer
        ),
    );
    let endpoint = status.control_plane_endpoint();
    let version = status.completed_version();
    let available = available(status, &endpoint, &version);
    let health = health(status);
    report_versions(
        generation,
        [applied, available, health],
        &endpoint,
        &version,
        &status.desired_version(),
    )
}

/// Reason when the hosted cluster's release payload is failing during an upgrade.
pub const UPGRADE_FAILED: &str = "UpgradeFailed";
/// Reason when the hosted cluster's release payload is failing outside an upgrade.
pub const CLUSTER_VERSION_FAILING: &str = "ClusterVersionFailing";
/// Reason when an upgrade cannot proceed (`Progressing=False` `Blocked`, or the new release
/// image is refused).
pub const UPGRADE_BLOCKED: &str = "UpgradeBlocked";

/// Health, worst first: `Degraded=True`; the release payload failing
/// (`ClusterVersionSucceeding=False` or `ClusterVersionFailing=True`, `hypershift-api.md` §2.2):
/// [`UPGRADE_FAILED`] during an upgrade, else [`CLUSTER_VERSION_FAILING`]; during an upgrade,
/// `Progressing=False` `Blocked` or `ValidReleaseImage=False` (not `SecretNotFound`):
/// [`UPGRADE_BLOCKED`]. Each message is the HostedCluster's own.
fn health(status: &HostedClusterStatus) -> Condition {
    if let Some(d) = status.condition("Degraded").filter(|d| d.status == "True") {
        return cond(
            "Health",
            ConditionStatus::False,
            "Degraded",
            format!(
                "Control plane is degraded ({}): {}",
                or_none(&d.reason),
                quote(&d.message)
            ),
        );
    }
    let upgrade = status.upgrade();
    let failing = status
        .condition("ClusterVersionSucceeding")
        .filter(|c| c.status == "False")
        .or_else(|| {
            status
                .condition("ClusterVersionFailing")
                .filter(|c| c.status == "True")
        });
    if let Some(c) = failing {
        let (reason, what) = match &upgrade {
            Some(u) => (
                UPGRADE_FAILED,
                format!("The upgrade from {} to {} is failing", u.from, u.to),
            ),
            None => (
                CLUSTER_VERSION_FAILING,
                "The hosted cluster's release payload is failing".to_owned(),
            ),
        };
        return cond(
            "Health",
            ConditionStatus::False,
            reason,
            format!(
                "{what}: HostedCluster {}={} ({}): {}. Look at the hosted cluster's ClusterVersion and the control-plane operator; fix the cause or set the cluster back to the version it runs",
                c.type_,
                c.status,
                or_none(&c.reason),
                quote(&c.message)
            ),
        );
    }
    if let Some(u) = &upgrade {
        let blocked = status
            .condition("Progressing")
            .filter(|p| p.status == "False" && p.reason == "Blocked")
            .or_else(|| {
                status
                    .condition("ValidReleaseImage")
                    .filter(|c| c.status == "False" && c.reason != "SecretNotFound")
            });
        if let Some(c) = blocked {
            return cond(
                "Health",
                ConditionStatus::False,
                UPGRADE_BLOCKED,
                format!(
                    "The upgrade from {} to {} does not proceed: HostedCluster {}={} ({}): {}. It does not resolve by itself: fix the cause named (release image, configuration) and update the cluster",
                    u.from,
                    u.to,
                    c.type_,
                    c.status,
                    or_none(&c.reason),
                    quote(&c.message)
                ),
            );
        }
    }
    no_issues("No degradation detected")
}

fn available(status: &HostedClusterStatus, endpoint: &str, version: &str) -> Condition {
    let hc_available = status.condition("Available");
    if let Some(a) = hc_available.filter(|a| a.status == "True") {
        let mut message = format!("Control plane is ready: {}", quote(&a.message));
        if !endpoint.is_empty() {
            message.push_str(&format!("; API endpoint {endpoint}"));
        }
        if !version.is_empty() {
            message.push_str(&format!("; version {version}"));
        }
        if let Some(u) = status.upgrade() {
            message.push_str(&format!("; upgrading from {} to {}", u.from, u.to));
        }
        return cond(
            "Available",
            ConditionStatus::True,
            "ControlPlaneReady",
            message,
        );
    }
    let available_part = match hc_available {
        Some(a) => format!(
            "HostedCluster Available={} ({}): {}",
            a.status,
            or_none(&a.reason),
            quote(&a.message)
        ),
        None => "HostedCluster has not reported an Available condition yet".to_owned(),
    };
    if status.is_true("Progressing") {
        return cond(
            "Available",
            ConditionStatus::False,
            "Provisioning",
            format!("Control plane provisioning in progress; {available_part}"),
        );
    }
    let blockers = blocking_conditions(status);
    let mut message = format!("Control plane is not available; {available_part}");
    if let Some(r) = status
        .condition("ReconciliationSucceeded")
        .filter(|r| r.status == "False")
    {
        message.push_str(&format!(
            ". The HyperShift operator's last reconcile failed ({}): {}",
            or_none(&r.reason),
            quote(&r.message)
        ));
    }
    if !blockers.is_empty() {
        message.push_str(&format!(
            ". Blocked by: {}. These do not resolve by themselves: fix the cause named in the message (cluster spec, release image, GCP identity setup) and update the cluster",
            blockers.join("; ")
        ));
    }
    cond("Available", ConditionStatus::False, "NotReady", message)
}

/// Conditions that mean "blocked by input" (`hypershift-api.md` §2.3), as `Type=False (Reason): message`.
fn blocking_conditions(status: &HostedClusterStatus) -> Vec<String> {
    const BLOCKING: [&str; 5] = [
        "ValidConfiguration",
        "ValidReleaseImage",
        "SupportedHostedCluster",
        "ValidGCPWorkloadIdentity",
        "PlatformCredentialsFound",
    ];
    let mut blockers: Vec<String> = BLOCKING
        .iter()
        .filter_map(|t| status.condition(t))
        .filter(|c| c.status == "False")
        // A missing pull secret is reported but reconcile continues; not a blocker.
        .filter(|c| !(c.type_ == "ValidReleaseImage" && c.reason == "SecretNotFound"))
        .map(|c| {
            format!(
                "{}=False ({}): {}",
                c.type_,
                or_none(&c.reason),
                quote(&c.message)
            )
        })
        .collect();
    if let Some(p) = status
        .condition("Progressing")
        .filter(|p| p.status == "False" && p.reason == "Blocked")
        && blockers.is_empty()
    {
        blockers.push(format!(
            "Progressing=False (Blocked): {}",
            quote(&p.message)
        ));
    }
    blockers
}

/// Feedback was present but unreadable.
pub fn report_invalid_feedback(
    work: WorkRef<'_>,
    error: &FeedbackError,
    generation: Option<i64>,
) -> Report {
    let message = format!(
        "Cannot read the HostedCluster status fed back through ManifestWork {} on {}: {error}. Check that the work's feedback rule is `status` <- JSONPath `.status` and that the work agent on the management cluster supports raw JSON feedback",
        work.name, work.consumer
    );
    report(
        generation,
        [
            cond(
                "Applied",
                ConditionStatus::True,
                "ManifestWorkExists",
                format!(
                    "ManifestWork {} exists on management cluster {}",
                    work.name, work.consumer
                ),
            ),
            cond(
                "Available",
                ConditionStatus::Unknown,
                "InvalidFeedback",
                message.clone(),
            ),
            cond(
                "Health",
                ConditionStatus::Unknown,
                "InvalidFeedback",
                message,
            ),
        ],
        "",
        "",
    )
}

/// The cluster spec failed validation; nothing was sent.
pub fn report_invalid_spec(violations: &[SpecViolation], generation: Option<i64>) -> Report {
    let mut fields: Vec<&str> = Vec::new();
    for v in violations {
        if !fields.contains(&v.field) {
            fields.push(v.field);
        }
    }
    let details: String = violations.iter().map(|v| format!("\n- {v}")).collect();
    let applied = format!(
        "Cluster spec is invalid, nothing was sent to the management cluster. Fix these fields in the HyperFleet cluster spec and update the cluster:{details}"
    );
    let other = format!(
        "Not checked: the cluster spec is invalid (fields: {}); see the Applied condition",
        fields.join(", ")
    );
    error_report(generation, "InvalidClusterSpec", applied, other)
}

/// A work with our name exists but its labels say it belongs to someone else.
pub fn report_ownership_conflict(
    work: WorkRef<'_>,
    cluster_id: &str,
    found: &Ownership,
    generation: Option<i64>,
) -> Report {
    let found = match found {
        Ownership::Ours => {
            "labels that match this cluster (ownership was checked wrongly)".to_owned()
        }
        Ownership::NotOurs {
            cluster_id: found_id,
            adapter,
        } => format!(
            "labels hyperfleet.io/cluster-id={} and hyperfleet.io/adapter={}",
            found_id.as_deref().unwrap_or("<missing>"),
            adapter.as_deref().unwrap_or("<missing>")
        ),
    };
    let applied = format!(
        "ManifestWork {} on management cluster {} already exists with {found}, not cluster-id={cluster_id} and adapter=controlplane; it was left untouched. Find who created it; delete or relabel it if it is stale",
        work.name, work.consumer
    );
    let other = format!(
        "Not checked: ManifestWork {} belongs to someone else (see Applied)",
        work.name
    );
    error_report(generation, "OwnershipConflict", applied, other)
}

/// Maestro could not be reached (unavailable, timeouts, 5xx) within the retry budget.
pub fn report_maestro_unavailable(consumer: &str, detail: &str, generation: Option<i64>) -> Report {
    let applied = format!(
        "Maestro was unreachable for management cluster {consumer} after retries: {}. The next pulse retries; if it persists, check the Maestro service, its endpoints and network policy from the adapter namespace",
        redact(detail)
    );
    let other = "Not checked: Maestro is unavailable (see Applied)".to_owned();
    error_report(generation, "MaestroUnavailable", applied, other)
}

/// Maestro refused the adapter's credentials (401/403, TLS client auth); not retried.
pub fn report_maestro_auth_failed(detail: &str, generation: Option<i64>) -> Report {
    let applied = format!(
        "Maestro rejected the adapter's credentials: {}. Check the adapter's bearer token file / client certificate and that its identity may manage ManifestWorks for this source; retrying will not help until that is fixed",
        redact(detail)
    );
    let other = "Not checked: Maestro authentication failed (see Applied)".to_owned();
    error_report(generation, "MaestroAuthFailed", applied, other)
}

/// Maestro does not know the consumer (management cluster) the adapter is configured with.
pub fn report_consumer_not_found(consumer: &str, generation: Option<i64>) -> Report {
    let applied = format!(
        "Maestro has no consumer named {consumer:?}, so the HostedCluster cannot be placed. Check MANAGEMENT_CLUSTER_CONSUMER against the consumers registered in Maestro"
    );
    let other =
        format!("Not checked: management cluster {consumer:?} is unknown to Maestro (see Applied)");
    error_report(generation, "ConsumerNotFound", applied, other)
}

/// The cluster (spec) could not be read: file missing, HyperFleet API unreachable or refusing.
pub fn report_cluster_unavailable(detail: &str, generation: Option<i64>) -> Report {
    let applied = format!(
        "Cannot read the cluster to build its HostedCluster: {}. Nothing was sent. The next pulse retries; if it persists, check the HyperFleet API URL and token (or the mounted cluster spec file)",
        redact(detail)
    );
    let other = "Not checked: the cluster could not be read (see Applied)".to_owned();
    error_report(generation, "ClusterSpecUnavailable", applied, other)
}

/// The work backend rejected the request for a reason that retrying will not fix (invalid work,
/// unexpected answer, server-side error that is not transient).
pub fn report_work_failed(consumer: &str, detail: &str, generation: Option<i64>) -> Report {
    let applied = format!(
        "The ManifestWork for management cluster {consumer} could not be read or created: {}. Check the adapter and Maestro (or hub) logs around this time",
        redact(detail)
    );
    let other = "Not checked: the ManifestWork request failed (see Applied)".to_owned();
    error_report(generation, "ManifestWorkFailed", applied, other)
}

/// The adapter's own backend settings are unusable (unreadable CA/token/client certificate file,
/// bad URL, bad kubeconfig).
pub fn report_adapter_misconfigured(detail: &str, generation: Option<i64>) -> Report {
    let applied = format!(
        "The adapter's work backend settings are unusable: {}. Fix the Job's Maestro/hub settings (URLs, mounted CA, token and certificate files, kubeconfig)",
        redact(detail)
    );
    let other = "Not checked: the adapter is misconfigured (see Applied)".to_owned();
    error_report(generation, "AdapterMisconfigured", applied, other)
}

fn error_report(generation: Option<i64>, reason: &str, applied: String, other: String) -> Report {
    report(
        generation,
        [
            cond("Applied", ConditionStatus::False, reason, applied),
            cond("Available", ConditionStatus::Unknown, reason, other.clone()),
            cond("Health", ConditionStatus::False, reason, other),
        ],
        "",
        "",
    )
}

fn report(
    generation: Option<i64>,
    conditions: [Condition; 3],
    endpoint: &str,
    version: &str,
) -> Report {
    report_versions(generation, conditions, endpoint, version, "")
}

/// A report with `data` `control_plane_endpoint`, `version` (completed) and `desired_version`.
fn report_versions(
    generation: Option<i64>,
    conditions: [Condition; 3],
    endpoint: &str,
    version: &str,
    desired: &str,
) -> Report {
    let mut data = Map::new();
    data.insert(DATA_CONTROL_PLANE_ENDPOINT.into(), endpoint.into());
    data.insert(DATA_VERSION.into(), version.into());
    data.insert(DATA_DESIRED_VERSION.into(), desired.into());
    let mut report = Report::new(conditions.into());
    report.adapter = Some(ADAPTER_NAME.to_owned());
    report.observed_generation = generation;
    report.data = Some(data);
    report
}

fn cond(type_: &str, status: ConditionStatus, reason: &str, message: String) -> Condition {
    Condition::new(type_, status, reason, truncate(message, MAX_MESSAGE_LEN))
}

fn no_issues(message: &str) -> Condition {
    cond(
        "Health",
        ConditionStatus::True,
        "NoIssues",
        message.to_owned(),
    )
}

fn or_none(reason: &str) -> &str {
    if reason.is_empty() {
        "no reason"
    } else {
        reason
    }
}

/// A foreign message, bounded, with an empty one made visible.
fn quote(message: &str) -> String {
    if message.is_empty() {
        "(no message)".to_owned()
    } else {
        truncate(message.to_owned(), MAX_QUOTED)
    }
}

fn truncate(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut cut = max.saturating_sub('…'.len_utf8());
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// A server/transport error text, bounded, with credentials removed: the word after `Bearer`
/// or `Basic`, and the value of `token`, `password`, `secret`-like keys (`k=v`, `k: v`, `"k":"v"`).
pub fn redact(detail: &str) -> String {
    let scheme = regex!(r"(?i)\b(bearer|basic)(\s+)[^\s,;]+");
    let keyed = regex!(
        r#"(?i)([a-z_-]*(?:token|password|passwd|secret|credential|api[_-]?key)[a-z_-]*)("?\s*[:=]\s*"?)[^\s",;&}]+"#
    );
    let once = scheme.replace_all(detail, "${1}${2}[REDACTED]");
    let twice = keyed.replace_all(&once, "${1}${2}[REDACTED]");
    truncate(twice.into_owned(), MAX_QUOTED)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::hyperfleet::cluster::{ClusterSpec, fixture};
    use serde_json::json;
    use std::collections::BTreeMap;

    /// The cluster's HyperFleet id (UUIDv7) and another cluster's.
    const ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
    const OTHER_ID: &str = "019a6f1f-0d2e-7c3b-a4f5-6e7d8c9b0a1f";
    const WORK: WorkRef<'static> = WorkRef {
        consumer: "us-east-mgmt-01",
        name: "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
    };

    /// `(status, reason)` of each condition, in order.
    fn summary(report: &Report) -> Vec<(&str, ConditionStatus, &str)> {
        report
            .conditions
            .iter()
            .map(|c| (c.type_.as_str(), c.status, c.reason.as_str()))
            .collect()
    }

    fn data(report: &Report) -> (String, String) {
        let d = report.data.as_ref().unwrap();
        (
            d[DATA_CONTROL_PLANE_ENDPOINT].as_str().unwrap().to_owned(),
            d[DATA_VERSION].as_str().unwrap().to_owned(),
        )
    }

    fn conditions(list: &[(&str, &str, &str)]) -> Value {
        Value::Array(
            list.iter()
                .map(|(t, s, r)| json!({"type": t, "status": s, "reason": r, "message": format!("{t} says {r}"), "lastTransitionTime": "2026-01-01T00:00:00Z"}))
                .collect(),
        )
    }

    /// Every report this module builds must pass the report contract.
    #[track_caller]
    fn assert_valid(report: &Report) {
        job_report::validate(report).unwrap();
        assert_eq!(report.adapter.as_deref(), Some(ADAPTER_NAME));
        assert_eq!(report.conditions.len(), 3);
    }

    use ConditionStatus::{False, True, Unknown};

    #[test]
    fn created_now() {
        let report = report_created(WORK, Some(3));
        assert_valid(&report);
        assert_eq!(
            summary(&report),
            [
                ("Applied", True, "ManifestWorkCreated"),
                ("Available", False, "Provisioning"),
                ("Health", True, "NoIssues"),
            ]
        );
        assert_eq!(report.observed_generation, Some(3));
        assert_eq!(data(&report), (String::new(), String::new()));
        assert!(report.conditions[0].message.contains("us-east-mgmt-01"));
    }

    #[test]
    fn found_without_feedback_awaits_it() {
        let report = report_found(WORK, None, Some(3));
        assert_valid(&report);
        assert_eq!(
            summary(&report),
            [
                ("Applied", True, "ManifestWorkExists"),
                ("Available", False, "AwaitingFeedback"),
                ("Health", True, "NoIssues"),
            ]
        );
    }

    /// Expected `(type, status, reason)` of Applied, Available, Health.
    type Row = [(&'static str, ConditionStatus, &'static str); 3];

    /// A recorded real bundle (`fixtures/maestro/real/<name>`) as the adapter sees it, and its
    /// HostedCluster's `(namespace, name)`. `None` without the team folder.
    fn real(name: &str) -> Option<(ExistingWork, (String, String))> {
        use crate::work::maestro::bundle::ResourceBundle;
        let file = crate::work::maestro::test_fixtures::fixture(&format!("real/{name}"))?;
        let bundle: ResourceBundle = serde_json::from_value(file["body"].clone()).unwrap();
        let meta = &bundle.manifests[0]["metadata"];
        let hc = (
            meta["namespace"].as_str().unwrap().to_owned(),
            meta["name"].as_str().unwrap().to_owned(),
        );
        Some((bundle.to_existing_work(None).unwrap(), hc))
    }

    fn observed(existing: &ExistingWork, hc: &(String, String)) -> Report {
        let report = report_observed(WORK, existing, (&hc.0, &hc.1), Some(2));
        assert_valid(&report);
        report
    }

    /// The manifest condition `type_` of the only manifest, for editing.
    fn manifest_condition<'a>(work: &'a mut ExistingWork, type_: &str) -> &'a mut WorkCondition {
        work.manifests[0]
            .conditions
            .iter_mut()
            .find(|c| c.type_ == type_)
            .unwrap()
    }

    #[test]
    fn real_states_map_to_the_condition_table() {
        let rows: [(&str, Row); 9] = [
            (
                "01-created-no-status.json",
                [
                    ("Applied", True, "ManifestWorkExists"),
                    ("Available", False, "AwaitingFeedback"),
                    ("Health", True, "NoIssues"),
                ],
            ),
            (
                "02-applied-no-hc-status.json",
                [
                    ("Applied", True, "ManifestWorkExists"),
                    ("Available", False, "AwaitingFeedback"),
                    ("Health", True, "NoIssues"),
                ],
            ),
            (
                "03-progressing.json",
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", False, "Provisioning"),
                    ("Health", True, "NoIssues"),
                ],
            ),
            (
                "04-available.json",
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", True, "ControlPlaneReady"),
                    ("Health", True, "NoIssues"),
                ],
            ),
            (
                "05-degraded.json",
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", True, "ControlPlaneReady"),
                    ("Health", False, "Degraded"),
                ],
            ),
            (
                "06-apply-failure.json",
                [
                    ("Applied", False, APPLY_FAILED),
                    ("Available", False, APPLY_FAILED),
                    ("Health", False, APPLY_FAILED),
                ],
            ),
            (
                "07-namespace-missing.json",
                [
                    ("Applied", False, APPLY_FAILED),
                    ("Available", False, APPLY_FAILED),
                    ("Health", False, APPLY_FAILED),
                ],
            ),
            (
                "08-hc-deleted-on-cluster.json",
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", False, HOSTED_CLUSTER_MISSING),
                    ("Health", False, HOSTED_CLUSTER_MISSING),
                ],
            ),
            (
                "08b-hc-recreated-by-agent.json",
                [
                    ("Applied", True, "ManifestWorkExists"),
                    ("Available", False, "AwaitingFeedback"),
                    ("Health", True, "NoIssues"),
                ],
            ),
        ];
        for (file, expected) in rows {
            let Some((existing, hc)) = real(file) else {
                return;
            };
            assert_eq!(summary(&observed(&existing, &hc)), expected, "{file}");
        }
    }

    #[test]
    fn an_apply_failure_carries_the_agents_message() {
        let Some((existing, hc)) = real("06-apply-failure.json") else {
            return;
        };
        let report = observed(&existing, &hc);
        let applied = &report.condition("Applied").unwrap().message;
        assert!(
            applied.contains("HostedCluster clusters/rec-deny-1144924104 (AppliedManifestFailed): Failed to apply manifest: hostedclusters.hypershift.openshift.io \"rec-deny-1144924104\" is forbidden: ValidatingAdmissionPolicy"),
            "{applied}"
        );
        assert!(applied.contains("rec-deny-1144924104"), "{applied}");
        assert_eq!(data(&report), (String::new(), String::new()));

        let Some((existing, hc)) = real("07-namespace-missing.json") else {
            return;
        };
        let applied = observed(&existing, &hc)
            .condition("Applied")
            .unwrap()
            .message
            .clone();
        assert!(
            applied.contains(
                r#"Failed to apply manifest: namespaces "rec-absent-1144924104" not found"#
            ),
            "{applied}"
        );
    }

    #[test]
    fn stale_feedback_of_a_deleted_hosted_cluster_is_not_used() {
        let Some((existing, hc)) = real("08-hc-deleted-on-cluster.json") else {
            return;
        };
        // The recording keeps the Degraded status of state 5 as feedback.
        assert!(existing.manifests[0].values.contains_key("status"));
        let report = observed(&existing, &hc);
        assert_eq!(data(&report), (String::new(), String::new()));
        let available = &report.condition("Available").unwrap().message;
        assert!(
            available.contains("(ResourceNotAvailable: Resource is not available)"),
            "{available}"
        );
        assert!(!report.conditions.iter().any(|c| c.reason == "Degraded"));
    }

    #[test]
    fn feedback_older_than_the_agents_availability_report_is_not_used() {
        let Some((mut existing, hc)) = real("04-available.json") else {
            return;
        };
        // As recorded the feedback changed after the HostedCluster became available: used.
        assert_eq!(
            observed(&existing, &hc)
                .condition("Available")
                .unwrap()
                .reason,
            "ControlPlaneReady"
        );
        // The HostedCluster became available again after the feedback last changed.
        manifest_condition(&mut existing, "Available").last_transition_time =
            "2026-11-26T03:40:00Z".into();
        let report = observed(&existing, &hc);
        assert_eq!(
            summary(&report),
            [
                ("Applied", True, "ManifestWorkExists"),
                ("Available", False, "AwaitingFeedback"),
                ("Health", True, "NoIssues"),
            ]
        );
        assert!(
            report.conditions[0].message.contains("is older than"),
            "{}",
            report.conditions[0].message
        );
    }

    #[test]
    fn feedback_not_synced_is_not_used() {
        // No recording shows StatusFeedbackSynced=False; the recorded Available state with it
        // flipped (the agent's condition, its reason and message invented for the test).
        let Some((mut existing, hc)) = real("04-available.json") else {
            return;
        };
        let synced = manifest_condition(&mut existing, "StatusFeedbackSynced");
        synced.status = "False".into();
        synced.reason = "StatusFeedbackSyncFailed".into();
        let report = observed(&existing, &hc);
        assert_eq!(
            summary(&report),
            [
                ("Applied", True, "ManifestWorkApplied"),
                ("Available", Unknown, FEEDBACK_NOT_SYNCED),
                ("Health", Unknown, FEEDBACK_NOT_SYNCED),
            ]
        );
        assert_eq!(data(&report), (String::new(), String::new()));
    }

    #[test]
    fn an_update_the_agent_applied_reports_its_feedback() {
        let Some((existing, hc)) = real("09c-update-bundle-after-agent.json") else {
            return;
        };
        assert_eq!(
            observed(&existing, &hc)
                .condition("Available")
                .unwrap()
                .reason,
            "ControlPlaneReady"
        );
    }

    /// The same rows without the team folder: small works shaped like the recordings.
    fn inline_work(
        work_applied: (&str, &str),
        manifest: &[(&str, &str, &str, &str)],
        feedback: Option<Value>,
    ) -> ExistingWork {
        let c = |(t, s, r, ltt): (&str, &str, &str, &str)| WorkCondition {
            type_: t.into(),
            status: s.into(),
            reason: r.into(),
            message: format!("agent says {r}"),
            observed_generation: None,
            last_transition_time: ltt.into(),
        };
        ExistingWork {
            conditions: vec![c((
                "Applied",
                work_applied.0,
                work_applied.1,
                "2026-11-26T03:36:31Z",
            ))],
            manifests: vec![ManifestStatus {
                resource: crate::work::ResourceIdentity {
                    group: "hypershift.openshift.io".into(),
                    version: "v1beta1".into(),
                    kind: "HostedCluster".into(),
                    resource: "hostedclusters".into(),
                    namespace: "clusters".into(),
                    name: "hc-1".into(),
                },
                conditions: manifest.iter().copied().map(c).collect(),
                values: feedback
                    .map(|f| BTreeMap::from([("status".to_owned(), f)]))
                    .unwrap_or_default(),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn inline_rows_without_the_team_folder() {
        const T0: &str = "2026-11-26T03:36:31Z";
        const T1: &str = "2026-11-26T03:37:26Z";
        let ready = json!({"conditions": conditions(&[("Available", "True", "AsExpected")]),
                           "controlPlaneEndpoint": {"host": "api.x.example.com", "port": 443}});
        let hc = ("clusters".to_owned(), "hc-1".to_owned());
        let ok = ("True", "AppliedManifestWorkComplete");
        let cases: Vec<(ExistingWork, Row, &str)> = vec![
            (
                inline_work(
                    ok,
                    &[
                        ("Applied", "True", "AppliedManifestComplete", T0),
                        ("Available", "True", "ResourceAvailable", T0),
                        ("StatusFeedbackSynced", "True", "StatusFeedbackSynced", T1),
                    ],
                    Some(ready.clone()),
                ),
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", True, "ControlPlaneReady"),
                    ("Health", True, "NoIssues"),
                ],
                "https://api.x.example.com:443",
            ),
            (
                inline_work(
                    ("False", "AppliedManifestWorkFailed"),
                    &[
                        ("Applied", "False", "AppliedManifestFailed", T0),
                        ("Available", "False", "ResourceNotAvailable", T0),
                    ],
                    None,
                ),
                [
                    ("Applied", False, APPLY_FAILED),
                    ("Available", False, APPLY_FAILED),
                    ("Health", False, APPLY_FAILED),
                ],
                "",
            ),
            (
                // an update that failed while the earlier HostedCluster still serves
                inline_work(
                    ("False", "AppliedManifestWorkFailed"),
                    &[
                        ("Applied", "False", "AppliedManifestFailed", T1),
                        ("Available", "True", "ResourceAvailable", T0),
                        ("StatusFeedbackSynced", "True", "StatusFeedbackSynced", T1),
                    ],
                    Some(ready.clone()),
                ),
                [
                    ("Applied", False, APPLY_FAILED),
                    ("Available", True, "ControlPlaneReady"),
                    ("Health", False, APPLY_FAILED),
                ],
                "https://api.x.example.com:443",
            ),
            (
                inline_work(
                    ok,
                    &[
                        ("Applied", "True", "AppliedManifestComplete", T0),
                        ("Available", "False", "ResourceNotAvailable", T1),
                        ("StatusFeedbackSynced", "True", "StatusFeedbackSynced", T0),
                    ],
                    Some(ready.clone()),
                ),
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", False, HOSTED_CLUSTER_MISSING),
                    ("Health", False, HOSTED_CLUSTER_MISSING),
                ],
                "",
            ),
            (
                inline_work(
                    ok,
                    &[
                        ("Applied", "True", "AppliedManifestComplete", T0),
                        ("Available", "True", "ResourceAvailable", T1),
                        ("StatusFeedbackSynced", "True", "StatusFeedbackSynced", T0),
                    ],
                    Some(ready.clone()),
                ),
                [
                    ("Applied", True, "ManifestWorkExists"),
                    ("Available", False, "AwaitingFeedback"),
                    ("Health", True, "NoIssues"),
                ],
                "",
            ),
            (
                // feedback without any manifest Available: not trusted
                inline_work(
                    ok,
                    &[("Applied", "True", "AppliedManifestComplete", T0)],
                    Some(ready.clone()),
                ),
                [
                    ("Applied", True, "ManifestWorkExists"),
                    ("Available", False, "AwaitingFeedback"),
                    ("Health", True, "NoIssues"),
                ],
                "",
            ),
            (
                inline_work(
                    ok,
                    &[
                        ("Applied", "True", "AppliedManifestComplete", T0),
                        ("Available", "True", "ResourceAvailable", T0),
                        ("StatusFeedbackSynced", "False", "X", T1),
                    ],
                    Some(ready),
                ),
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", Unknown, FEEDBACK_NOT_SYNCED),
                    ("Health", Unknown, FEEDBACK_NOT_SYNCED),
                ],
                "",
            ),
        ];
        for (i, (existing, expected, endpoint)) in cases.into_iter().enumerate() {
            let report = observed(&existing, &hc);
            assert_eq!(summary(&report), expected, "case {i}");
            assert_eq!(data(&report).0, endpoint, "case {i}");
        }
    }

    #[test]
    fn a_work_level_apply_failure_without_manifest_status_is_an_apply_failure() {
        let mut existing = inline_work(("False", "AppliedManifestWorkFailed"), &[], None);
        existing.manifests.clear();
        let report = observed(&existing, &("clusters".into(), "hc-1".into()));
        assert_eq!(report.condition("Applied").unwrap().reason, APPLY_FAILED);
        assert!(report.conditions[0].message.contains(
            "ManifestWork (AppliedManifestWorkFailed): agent says AppliedManifestWorkFailed"
        ));
    }

    #[test]
    fn mapping_table() {
        /// (HostedCluster status, expected Available, expected Health)
        type Case = (
            Value,
            (ConditionStatus, &'static str),
            (ConditionStatus, &'static str),
        );
        let cases: Vec<Case> = vec![
            (
                json!({"conditions": conditions(&[("Available", "True", "AsExpected"), ("Degraded", "False", "AsExpected")])}),
                (True, "ControlPlaneReady"),
                (True, "NoIssues"),
            ),
            (
                json!({"conditions": conditions(&[("Available", "False", "WaitingForAvailable"), ("Progressing", "True", "Progressing")])}),
                (False, "Provisioning"),
                (True, "NoIssues"),
            ),
            (
                json!({"conditions": conditions(&[("Available", "False", "ComponentsNotAvailable"), ("Progressing", "False", "AsExpected")])}),
                (False, "NotReady"),
                (True, "NoIssues"),
            ),
            (
                json!({"conditions": conditions(&[("Available", "Unknown", "StatusUnknown")])}),
                (False, "NotReady"),
                (True, "NoIssues"),
            ),
            (json!({}), (False, "NotReady"), (True, "NoIssues")),
            (
                json!({"conditions": conditions(&[("Available", "True", "AsExpected"), ("Degraded", "True", "UnavailableReplicas")])}),
                (True, "ControlPlaneReady"),
                (False, "Degraded"),
            ),
            (
                json!({"conditions": conditions(&[("Available", "False", "X"), ("Progressing", "True", "Progressing"), ("Degraded", "True", "UnavailableReplicas")])}),
                (False, "Provisioning"),
                (False, "Degraded"),
            ),
        ];
        for (status, available, health) in cases {
            let report = report_found(WORK, Some(&status), Some(1));
            assert_valid(&report);
            assert_eq!(
                summary(&report),
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", available.0, available.1),
                    ("Health", health.0, health.1),
                ],
                "{status}"
            );
        }
    }

    #[test]
    fn degraded_carries_the_hosted_cluster_message() {
        let status = json!({"conditions": [
            {"type": "Available", "status": "True", "reason": "AsExpected", "message": ""},
            {"type": "Degraded", "status": "True", "reason": "UnavailableReplicas", "message": "kube-apiserver has 1/3 replicas"},
        ]});
        let report = report_found(WORK, Some(&status), None);
        let health = report.condition("Health").unwrap();
        assert_eq!(
            health.message,
            "Control plane is degraded (UnavailableReplicas): kube-apiserver has 1/3 replicas"
        );
    }

    #[test]
    fn not_ready_names_the_blocking_conditions() {
        let status = json!({"conditions": [
            {"type": "Available", "status": "False", "reason": "WaitingForAvailable", "message": "waiting"},
            {"type": "Progressing", "status": "False", "reason": "Blocked", "message": "blocked"},
            {"type": "ValidReleaseImage", "status": "False", "reason": "InvalidImage", "message": "image not found"},
            {"type": "ValidConfiguration", "status": "True", "reason": "AsExpected", "message": ""},
        ]});
        let report = report_found(WORK, Some(&status), None);
        let available = report.condition("Available").unwrap();
        assert_eq!(available.reason, "NotReady");
        assert!(
            available
                .message
                .contains("ValidReleaseImage=False (InvalidImage): image not found"),
            "{}",
            available.message
        );
        assert!(!available.message.contains("ValidConfiguration"));
    }

    #[test]
    fn not_ready_mentions_a_failed_reconcile() {
        let status = json!({"conditions": [
            {"type": "Available", "status": "False", "reason": "X", "message": ""},
            {"type": "ReconciliationSucceeded", "status": "False", "reason": "ReconciliationError", "message": "failed to get pull secret"},
        ]});
        let report = report_found(WORK, Some(&status), None);
        let available = report.condition("Available").unwrap();
        assert_eq!(available.reason, "NotReady");
        assert!(
            available
                .message
                .contains("last reconcile failed (ReconciliationError): failed to get pull secret"),
            "{}",
            available.message
        );
    }

    #[test]
    fn a_missing_pull_secret_is_not_a_blocker() {
        let status = json!({"conditions": [
            {"type": "Available", "status": "False", "reason": "X", "message": ""},
            {"type": "ValidReleaseImage", "status": "False", "reason": "SecretNotFound", "message": "no pull secret"},
        ]});
        let report = report_found(WORK, Some(&status), None);
        assert!(
            !report
                .condition("Available")
                .unwrap()
                .message
                .contains("Blocked by")
        );
    }

    #[test]
    fn feedback_as_a_json_string_is_parsed_again() {
        let raw =
            json!({"conditions": conditions(&[("Available", "True", "AsExpected")])}).to_string();
        let report = report_found(WORK, Some(&Value::String(raw)), None);
        assert_eq!(
            report.condition("Available").unwrap().reason,
            "ControlPlaneReady"
        );
    }

    #[test]
    fn malformed_feedback_is_invalid_feedback() {
        for bad in [
            json!("not json {"),
            json!(42),
            json!("[1, 2]"),
            json!({"conditions": "Available"}),
            json!({"conditions": [{"status": "True"}]}),
            json!({"controlPlaneEndpoint": "https://x:6443"}),
        ] {
            let report = report_found(WORK, Some(&bad), None);
            assert_valid(&report);
            assert_eq!(
                summary(&report),
                [
                    ("Applied", True, "ManifestWorkExists"),
                    ("Available", Unknown, "InvalidFeedback"),
                    ("Health", Unknown, "InvalidFeedback"),
                ],
                "{bad}"
            );
        }
    }

    #[test]
    fn endpoint_is_reported_once_host_and_port_are_set() {
        let endpoint = |v: Value| {
            let status: HostedClusterStatus =
                serde_json::from_value(json!({"controlPlaneEndpoint": v})).unwrap();
            status.control_plane_endpoint()
        };
        assert_eq!(endpoint(json!({"host": "", "port": 0})), "");
        assert_eq!(
            endpoint(json!({"host": "api.x.example.com", "port": 0})),
            ""
        );
        assert_eq!(endpoint(json!({"host": "", "port": 6443})), "");
        assert_eq!(
            endpoint(json!({"host": "api.x.example.com", "port": 6443})),
            "https://api.x.example.com:6443"
        );
        assert_eq!(
            endpoint(json!({"host": "fd00::1", "port": 443})),
            "https://[fd00::1]:443"
        );
        assert_eq!(HostedClusterStatus::default().control_plane_endpoint(), "");
    }

    #[test]
    fn version_is_the_newest_completed_history_entry() {
        let version = |history: Value| {
            let status: HostedClusterStatus =
                serde_json::from_value(json!({"version": {"history": history}})).unwrap();
            status.completed_version()
        };
        assert_eq!(version(json!([])), "");
        assert_eq!(version(json!([{"state": "Partial", "version": ""}])), "");
        assert_eq!(
            version(json!([
                {"state": "Partial", "version": "4.17.2", "completionTime": null},
                {"state": "Completed", "version": "4.17.1"},
                {"state": "Completed", "version": "4.17.0"},
            ])),
            "4.17.1"
        );
    }

    #[test]
    fn ready_report_carries_endpoint_and_version_in_data() {
        let status = json!({
            "conditions": conditions(&[("Available", "True", "AsExpected")]),
            "controlPlaneEndpoint": {"host": "api.prod.example.com", "port": 443},
            "version": {"desired": {"image": "x"}, "history": [{"state": "Completed", "version": "4.17.0", "image": "x", "verified": false, "startedTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:20:00Z"}]},
            "kubeconfig": {"name": "prod-admin-kubeconfig"},
        });
        let report = report_found(WORK, Some(&status), Some(2));
        assert_eq!(
            data(&report),
            (
                "https://api.prod.example.com:443".to_owned(),
                "4.17.0".to_owned()
            )
        );
        let available = report.condition("Available").unwrap();
        assert!(
            available
                .message
                .contains("https://api.prod.example.com:443")
        );
        assert!(available.message.contains("4.17.0"));
    }

    #[test]
    fn report_snapshots() {
        let ready = json!({
            "conditions": [
                {"type": "Available", "status": "True", "reason": "AsExpected", "message": "The hosted control plane is available"},
                {"type": "Progressing", "status": "False", "reason": "AsExpected", "message": "HostedCluster is at expected version"},
                {"type": "Degraded", "status": "False", "reason": "AsExpected", "message": "The hosted cluster is not degraded"},
            ],
            "controlPlaneEndpoint": {"host": "api.prod-eu-1.hcp.example.com", "port": 443},
            "version": {"history": [{"state": "Completed", "version": "4.17.0"}]},
        });
        insta::assert_json_snapshot!("report_ready", report_found(WORK, Some(&ready), Some(3)));
        insta::assert_json_snapshot!("report_created", report_created(WORK, Some(1)));
        let input = crate::hyperfleet::cluster::ClusterInput::from_json(fixture::VALID).unwrap();
        let mut spec = input.spec;
        spec.insert("machine_network_cidr".into(), json!("10.132.0.0/16"));
        spec.insert(
            "storage_sa_email".into(),
            json!("hc-storage@other-project.iam.gserviceaccount.com"),
        );
        spec.remove("issuer_url");
        let violations = ClusterSpec::validate(ID, None, &spec).unwrap_err();
        insta::assert_json_snapshot!(
            "report_invalid_spec",
            report_invalid_spec(&violations, Some(2))
        );
    }

    #[test]
    fn invalid_spec_names_every_bad_field() {
        let mut input =
            crate::hyperfleet::cluster::ClusterInput::from_json(fixture::VALID).unwrap();
        input.spec.insert("gcp_region".into(), json!("nowhere"));
        input.spec.remove("pull_secret_name");
        let violations = ClusterSpec::validate(ID, None, &input.spec).unwrap_err();
        let report = report_invalid_spec(&violations, Some(4));
        assert_valid(&report);
        assert_eq!(
            summary(&report),
            [
                ("Applied", False, "InvalidClusterSpec"),
                ("Available", Unknown, "InvalidClusterSpec"),
                ("Health", False, "InvalidClusterSpec"),
            ]
        );
        let applied = &report.conditions[0].message;
        assert!(applied.contains("gcp_region:"), "{applied}");
        assert!(
            applied.contains("pull_secret_name: is required"),
            "{applied}"
        );
        assert!(
            report.conditions[1]
                .message
                .contains("gcp_region, pull_secret_name")
        );
    }

    #[test]
    fn error_reports() {
        let found = Ownership::NotOurs {
            cluster_id: Some(OTHER_ID.into()),
            adapter: None,
        };
        let cases = [
            (
                report_ownership_conflict(WORK, ID, &found, Some(1)),
                "OwnershipConflict",
            ),
            (
                report_maestro_unavailable("mgmt-1", "connection refused", Some(1)),
                "MaestroUnavailable",
            ),
            (
                report_maestro_auth_failed("401 Unauthorized", Some(1)),
                "MaestroAuthFailed",
            ),
            (
                report_consumer_not_found("mgmt-9", Some(1)),
                "ConsumerNotFound",
            ),
        ];
        for (report, reason) in cases {
            assert_valid(&report);
            assert_eq!(
                summary(&report),
                [
                    ("Applied", False, reason),
                    ("Available", Unknown, reason),
                    ("Health", False, reason)
                ]
            );
            assert_eq!(data(&report), (String::new(), String::new()));
        }
        let conflict = report_ownership_conflict(WORK, ID, &found, None);
        assert!(
            conflict.conditions[0]
                .message
                .contains(&format!("hyperfleet.io/cluster-id={OTHER_ID}"))
        );
        assert!(
            conflict.conditions[0]
                .message
                .contains("hyperfleet.io/adapter=<missing>")
        );
    }

    #[test]
    fn secrets_in_server_messages_are_redacted() {
        let report = report_maestro_auth_failed(
            "401: invalid header Authorization: Bearer eyJhbGciOi.secret token=abc123 password=hunter2",
            None,
        );
        let message = &report.conditions[0].message;
        assert!(!message.contains("eyJhbGciOi"), "{message}");
        assert!(!message.contains("abc123"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
        assert!(message.contains("Bearer [REDACTED]"), "{message}");
        let json =
            redact(r#"{"access_token":"s3cr3t","user":"bob"} Authorization: Basic dXNlcjpwYXNz"#);
        assert!(
            !json.contains("s3cr3t") && !json.contains("dXNlcjpwYXNz"),
            "{json}"
        );
        assert!(json.contains("bob"), "{json}");
    }

    proptest::proptest! {
        #[test]
        fn bearer_tokens_never_survive(token in "[A-Za-z0-9._~+/=-]{8,64}", prefix in "[ -~]{0,40}") {
            let out = redact(&format!("{prefix} Authorization: Bearer {token} rest"));
            proptest::prop_assert!(!out.contains(&token), "{}", out);
        }
    }

    #[test]
    fn huge_foreign_messages_are_bounded() {
        let status = json!({"conditions": [
            {"type": "Available", "status": "False", "reason": "X", "message": "é".repeat(40_000)},
            {"type": "Degraded", "status": "True", "reason": "Y", "message": "x".repeat(40_000)},
        ]});
        let report = report_found(WORK, Some(&status), None);
        assert_valid(&report);
        assert!(report.conditions.iter().all(|c| c.message.len() <= 4096));
    }

    /// A serving control plane at `completed` rolling out `desired`, plus `extra` conditions.
    fn upgrading(completed: &str, desired: &str, extra: &[(&str, &str, &str)]) -> Value {
        let mut list = vec![
            ("Available", "True", "AsExpected"),
            ("Progressing", "True", "Progressing"),
            ("Degraded", "False", "AsExpected"),
        ];
        list.extend_from_slice(extra);
        let mut history = vec![];
        if desired != completed {
            history.push(json!({"state": "Partial", "version": desired}));
        }
        history.push(json!({"state": "Completed", "version": completed}));
        json!({
            "conditions": conditions(&list),
            "controlPlaneEndpoint": {"host": "api.example.com", "port": 443},
            "version": {"desired": {"version": desired, "image": format!("quay.io/r:{desired}-x86_64")}, "history": history}
        })
    }

    fn desired(report: &Report) -> String {
        report.data.as_ref().unwrap()[DATA_DESIRED_VERSION]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn an_upgrade_in_progress_keeps_available_true_and_says_from_what_to_what() {
        let report = report_found(WORK, Some(&upgrading("4.17.0", "4.17.1", &[])), Some(4));
        assert_valid(&report);
        assert_eq!(
            summary(&report),
            [
                ("Applied", True, "ManifestWorkApplied"),
                ("Available", True, "ControlPlaneReady"),
                ("Health", True, "NoIssues"),
            ]
        );
        let available = &report.condition("Available").unwrap().message;
        assert!(
            available.contains("upgrading from 4.17.0 to 4.17.1"),
            "{available}"
        );
        assert_eq!(data(&report).1, "4.17.0");
        assert_eq!(desired(&report), "4.17.1");
    }

    #[test]
    fn a_completed_upgrade_reports_the_new_version_and_no_upgrade() {
        let report = report_found(WORK, Some(&upgrading("4.17.1", "4.17.1", &[])), Some(4));
        let available = &report.condition("Available").unwrap().message;
        assert!(!available.contains("upgrading"), "{available}");
        assert_eq!(data(&report).1, "4.17.1");
        assert_eq!(desired(&report), "4.17.1");
    }

    #[test]
    fn the_first_rollout_is_not_an_upgrade() {
        let status = json!({
            "conditions": conditions(&[("Available", "False", "WaitingForAvailable"), ("Progressing", "True", "Progressing")]),
            "version": {"desired": {"version": "4.17.0"}, "history": [{"state": "Partial", "version": "4.17.0"}]}
        });
        let parsed = parse_feedback(&status).unwrap();
        assert_eq!(parsed.upgrade(), None);
        let report = report_found(WORK, Some(&status), Some(1));
        assert_eq!(report.condition("Health").unwrap().reason, "NoIssues");
        assert_eq!(desired(&report), "4.17.0");
    }

    #[test]
    fn a_failing_upgrade_is_unhealthy_with_the_hosted_clusters_message() {
        for failing in [
            ("ClusterVersionSucceeding", "False", "FromClusterVersion"),
            ("ClusterVersionFailing", "True", "FromClusterVersion"),
        ] {
            let report = report_found(
                WORK,
                Some(&upgrading("4.17.0", "4.17.1", &[failing])),
                Some(4),
            );
            let health = report.condition("Health").unwrap();
            assert_eq!(
                (health.status, health.reason.as_str()),
                (False, UPGRADE_FAILED)
            );
            assert!(
                health.message.contains("from 4.17.0 to 4.17.1"),
                "{}",
                health.message
            );
            // the HostedCluster's own message (`conditions()` writes "<type> says <reason>")
            assert!(
                health
                    .message
                    .contains(&format!("{} says FromClusterVersion", failing.0)),
                "{}",
                health.message
            );
            // still serving
            assert_eq!(report.condition("Available").unwrap().status, True);
        }
        // The same condition outside an upgrade.
        let report = report_found(
            WORK,
            Some(&upgrading(
                "4.17.0",
                "4.17.0",
                &[("ClusterVersionSucceeding", "False", "X")],
            )),
            Some(4),
        );
        assert_eq!(
            report.condition("Health").unwrap().reason,
            CLUSTER_VERSION_FAILING
        );
        // Succeeding=True / Failing=False are healthy.
        let report = report_found(
            WORK,
            Some(&upgrading(
                "4.17.0",
                "4.17.1",
                &[
                    ("ClusterVersionSucceeding", "True", "FromClusterVersion"),
                    ("ClusterVersionFailing", "False", "FromClusterVersion"),
                ],
            )),
            Some(4),
        );
        assert_eq!(report.condition("Health").unwrap().reason, "NoIssues");
    }

    #[test]
    fn a_blocked_upgrade_is_unhealthy() {
        let mut status = upgrading("4.17.0", "4.17.1", &[]);
        status["conditions"][1] = json!({"type": "Progressing", "status": "False", "reason": "Blocked", "message": "release image not valid"});
        let report = report_found(WORK, Some(&status), Some(4));
        let health = report.condition("Health").unwrap();
        assert_eq!(health.reason, UPGRADE_BLOCKED);
        assert!(
            health.message.contains("release image not valid"),
            "{}",
            health.message
        );
        // ValidReleaseImage=False for the new image, but a missing pull secret is not a block.
        for (reason, expected) in [
            ("InvalidImage", UPGRADE_BLOCKED),
            ("SecretNotFound", "NoIssues"),
        ] {
            let status = upgrading(
                "4.17.0",
                "4.17.1",
                &[("ValidReleaseImage", "False", reason)],
            );
            let report = report_found(WORK, Some(&status), Some(4));
            assert_eq!(
                report.condition("Health").unwrap().reason,
                expected,
                "{reason}"
            );
        }
        // Blocked without an upgrade is not an upgrade problem (Available says the rest).
        let mut status = upgrading("4.17.0", "4.17.0", &[]);
        status["conditions"][1] =
            json!({"type": "Progressing", "status": "False", "reason": "Blocked", "message": "x"});
        let report = report_found(WORK, Some(&status), Some(4));
        assert_eq!(report.condition("Health").unwrap().reason, "NoIssues");
    }

    #[test]
    fn degraded_outranks_a_failing_upgrade() {
        let report = report_found(
            WORK,
            Some(&upgrading(
                "4.17.0",
                "4.17.1",
                &[("ClusterVersionFailing", "True", "X")],
            )),
            Some(4),
        );
        assert_eq!(report.condition("Health").unwrap().reason, UPGRADE_FAILED);
        let mut status = upgrading(
            "4.17.0",
            "4.17.1",
            &[("ClusterVersionFailing", "True", "X")],
        );
        status["conditions"][2] = json!({"type": "Degraded", "status": "True", "reason": "EtcdQuorumLost", "message": "etcd"});
        let report = report_found(WORK, Some(&status), Some(4));
        assert_eq!(report.condition("Health").unwrap().reason, "Degraded");
    }

    #[test]
    fn an_upgrade_by_image_before_the_version_is_known() {
        let status = json!({
            "conditions": conditions(&[("Available", "True", "AsExpected")]),
            "version": {"desired": {"version": "", "image": "quay.io/r:4.17.1-x86_64"},
                        "history": [{"state": "Completed", "version": "4.17.0", "image": "quay.io/r:4.17.0-x86_64"}]}
        });
        let upgrade = parse_feedback(&status).unwrap().upgrade().unwrap();
        assert_eq!(upgrade.from, "4.17.0");
        assert_eq!(upgrade.to, "quay.io/r:4.17.1-x86_64");
        // Without images to compare, no upgrade is claimed.
        let status = json!({
            "version": {"desired": {"version": ""}, "history": [{"state": "Completed", "version": "4.17.0"}]}
        });
        assert_eq!(parse_feedback(&status).unwrap().upgrade(), None);
    }
}
