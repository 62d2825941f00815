//! Reading a HostedCluster's fed-back `status` (`hypershift-api.md` §2): the subset the adapter
//! maps, the version rollout it reports, and what its conditions say about availability and
//! health, in the HostedCluster's own words.
//!
//! The condition types read are [`types::ALL`]. Health is the ordered list [`HEALTH_ROWS`] (the
//! table in `pulse::controlplane`'s docs shows it): the seed's `Degraded=True`, the release payload
//! failing, then what the operator says needs a person (`hypershift-api.md` §2.3): its validation
//! conditions False, GCP credentials and `Progressing=False` `Blocked`. The rows that block the
//! control plane also make Available False `Blocked`.

use job_report::Condition;
use serde::Deserialize;

use crate::hypershift::conditions::{
    condition_types, operator_message, operator_words, ready, unavailable, unhealthy, unless_empty,
};
use crate::message::{no_issues, or_none, quote};

condition_types! {
    /// Every HostedCluster condition type `hypershift-api.md` §2.2 documents for GCP and None
    /// HostedClusters, in its order: what a hub without raw JSON feedback feeds back of the
    /// conditions (each one's status, reason, message, observedGeneration and
    /// lastTransitionTime, by type). A condition this module reads must be listed here, or the
    /// hub backend never sees it: the named ones are [`types`] (a test checks the types named in
    /// this file).
    AVAILABLE = "Available",
    PROGRESSING = "Progressing",
    DEGRADED = "Degraded",
    RECONCILIATION_SUCCEEDED = "ReconciliationSucceeded",
    VALID_CONFIGURATION = "ValidConfiguration",
    SUPPORTED_HOSTED_CLUSTER = "SupportedHostedCluster",
    VALID_RELEASE_IMAGE = "ValidReleaseImage",
    "ReconciliationActive",
    VALID_GCP_WORKLOAD_IDENTITY = "ValidGCPWorkloadIdentity",
    VALID_GCP_CREDENTIALS = "ValidGCPCredentials",
    PLATFORM_CREDENTIALS_FOUND = "PlatformCredentialsFound",
    "GCPEndpointAvailable",
    "GCPServiceAttachmentAvailable",
    "InfrastructureReady",
    "KubeAPIServerAvailable",
    "EtcdAvailable",
    "ValidHostedControlPlaneConfiguration",
    "ValidReleaseInfo",
    "ExternalDNSReachable",
    "IgnitionEndpointAvailable",
    CLUSTER_VERSION_SUCCEEDING = "ClusterVersionSucceeding",
    "ClusterVersionUpgradeable",
    "ClusterVersionProgressing",
    "ClusterVersionAvailable",
    "ClusterVersionReleaseAccepted",
    "ClusterVersionRetrievedUpdates",
    CLUSTER_VERSION_FAILING = "ClusterVersionFailing",
    "DataPlaneConnectionAvailable",
    "ControlPlaneConnectionAvailable",
    "ConfigOperatorReconciliationSucceeded",
    "CloudResourcesDestroyed",
    "HostedClusterDestroyed",
}

/// The subset of HostedCluster `status` the mapping reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HostedClusterStatus {
    pub conditions: Vec<HostedClusterCondition>,
    pub control_plane_endpoint: Option<Endpoint>,
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
    /// The `metadata.generation` the operator reconciled when it wrote the condition (absent on
    /// some, e.g. `GCPEndpointAvailable` before the Private Service Connect objects report).
    #[serde(default, rename = "observedGeneration")]
    pub observed_generation: Option<i64>,
}

/// `status.controlPlaneEndpoint`: `host: ""`, `port: 0` until infrastructure is ready.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Endpoint {
    pub host: String,
    pub port: i64,
}

/// `status.version`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct VersionStatus {
    /// The release being rolled out (`version` may be empty while it bootstraps).
    pub desired: Option<Release>,
    pub history: Vec<VersionHistoryEntry>,
}

/// `status.version.desired`: `{version, image, …}`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Release {
    pub version: String,
    pub image: String,
}

/// One `status.version.history[]` entry (newest first).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct VersionHistoryEntry {
    pub state: String,
    pub version: String,
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
    /// The condition of `type_`, if the HostedCluster reports it.
    pub fn condition(&self, type_: &str) -> Option<&HostedClusterCondition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    /// The condition of `type_` when its status is `status`.
    fn is(&self, type_: &str, status: &str) -> Option<&HostedClusterCondition> {
        self.condition(type_).filter(|c| c.status == status)
    }

    /// Whether the condition of `type_` is True.
    pub fn is_true(&self, type_: &str) -> bool {
        self.is(type_, "True").is_some()
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

    /// `status.version.desired`.
    fn desired(&self) -> Option<&Release> {
        self.version.as_ref()?.desired.as_ref()
    }

    /// The newest `Completed` entry of `version.history` that names its version (the list is
    /// newest first).
    fn completed(&self) -> Option<&VersionHistoryEntry> {
        self.version
            .iter()
            .flat_map(|v| &v.history)
            .find(|h| h.state == "Completed" && !h.version.is_empty())
    }

    /// `status.version.desired.image`, else `""`: the release the operator has taken up (it
    /// follows `spec.release.image` when the operator reconciles a new spec).
    pub fn desired_image(&self) -> &str {
        self.desired().map_or("", |d| d.image.as_str())
    }

    /// `status.version.desired.version`, else `""` (empty while the release bootstraps).
    pub fn desired_version(&self) -> String {
        self.desired()
            .map(|d| d.version.clone())
            .unwrap_or_default()
    }

    /// The rollout in progress, if any: the desired release is not the newest completed one
    /// (compared by version when both have one, else by image), or the newest history entry is
    /// still `Partial` (`hypershift-api.md` §2.1: `completionTime` null while in progress).
    pub fn upgrade(&self) -> Option<Upgrade> {
        let version = self.version.as_ref()?;
        let completed = self.completed()?;
        let to = match version.history.first().filter(|h| h.state == "Partial") {
            Some(newest) => [&newest.version, &newest.image]
                .into_iter()
                .chain(version.desired.iter().flat_map(|d| [&d.version, &d.image]))
                .find(|v| !v.is_empty())
                .cloned()
                .unwrap_or_else(|| "a new release".to_owned()),
            None => {
                let desired = version.desired.as_ref()?;
                if desired.version.is_empty() {
                    let both = !desired.image.is_empty() && !completed.image.is_empty();
                    (both && desired.image != completed.image).then(|| desired.image.clone())?
                } else {
                    (desired.version != completed.version).then(|| desired.version.clone())?
                }
            }
        };
        Some(Upgrade {
            from: completed.version.clone(),
            to,
        })
    }

    /// The newest `Completed` entry of `version.history` (the list is newest first), else `""`.
    pub fn completed_version(&self) -> String {
        self.completed()
            .map(|h| h.version.clone())
            .unwrap_or_default()
    }
}

/// Available's reason while a release rollout runs on an available control plane.
pub const UPGRADING: &str = "Upgrading";

/// Health reasons (the [`HEALTH_ROWS`] they come from).
pub const DEGRADED: &str = "Degraded";
/// The hosted cluster's release payload is failing during an upgrade.
pub const UPGRADE_FAILED: &str = "UpgradeFailed";
/// The hosted cluster's release payload is failing outside an upgrade.
pub const CLUSTER_VERSION_FAILING: &str = "ClusterVersionFailing";
/// The operator's configuration does not support this HostedCluster.
pub const UNSUPPORTED_HOSTED_CLUSTER: &str = "UnsupportedHostedCluster";
/// The operator refuses the HostedCluster's configuration.
pub const INVALID_CONFIGURATION: &str = "InvalidConfiguration";
/// The release image cannot be used (outside an upgrade).
pub const RELEASE_IMAGE_INVALID: &str = "ReleaseImageInvalid";
/// An upgrade cannot proceed (`Progressing=False` `Blocked`, or the new release image is refused).
pub const UPGRADE_BLOCKED: &str = "UpgradeBlocked";
/// The GCP Workload Identity settings are missing or invalid.
pub const INVALID_WORKLOAD_IDENTITY: &str = "InvalidWorkloadIdentity";
/// The platform credentials could not be set up.
pub const PLATFORM_CREDENTIALS_NOT_FOUND: &str = "PlatformCredentialsNotFound";
/// The GCP credential Secrets could not be written.
pub const INVALID_GCP_CREDENTIALS: &str = "InvalidGCPCredentials";
/// The operator does not roll the cluster out (`Progressing=False` `Blocked`), outside an upgrade.
/// Also Available's reason when a row that blocks is present and nothing progresses.
pub const BLOCKED: &str = "Blocked";

/// One row of the health list: a HostedCluster condition in a state that needs a person.
#[derive(Debug, Clone, Copy)]
pub struct HealthRow {
    /// The HostedCluster condition type ([`types`]).
    pub condition: &'static str,
    /// The status that needs a person.
    pub status: &'static str,
    /// Only with this operator reason (`Progressing` `Blocked`).
    pub only_reason: Option<&'static str>,
    /// Never with this operator reason (`ValidReleaseImage` `SecretNotFound`: the pull secret is
    /// not there yet; reconcile continues and the condition clears once the Secret exists).
    pub except_reason: Option<&'static str>,
    /// Health's reason.
    pub reason: &'static str,
    /// Health's reason while an upgrade runs ([`HostedClusterStatus::upgrade`]), and what the
    /// upgrade then does (`is failing`, `does not proceed`).
    pub during_upgrade: Option<(&'static str, &'static str)>,
    /// Whether it also stops the control plane from coming up (`hypershift-api.md` §2.3 "blocked
    /// by input"): Available is then False [`BLOCKED`] instead of `NotReady`.
    pub blocks: bool,
    /// What the operator says, for people.
    pub headline: &'static str,
    /// What to do.
    pub guidance: &'static str,
}

/// What most rows of [`HEALTH_ROWS`] are: the condition False, whatever the operator's reason,
/// blocks the control plane, and no other reason during an upgrade. Each row names its condition,
/// reason and words.
const FALSE_AND_BLOCKING: HealthRow = HealthRow {
    condition: "",
    status: "False",
    only_reason: None,
    except_reason: None,
    reason: "",
    during_upgrade: None,
    blocks: true,
    headline: "",
    guidance: "",
};

/// The hosted cluster's release payload failing, said by `ClusterVersionSucceeding=False` (this
/// row) and `ClusterVersionFailing=True` alike.
const PAYLOAD_FAILING: HealthRow = HealthRow {
    condition: types::CLUSTER_VERSION_SUCCEEDING,
    reason: CLUSTER_VERSION_FAILING,
    during_upgrade: Some((UPGRADE_FAILED, "is failing")),
    blocks: false,
    headline: "The hosted cluster's release payload is failing",
    guidance: "Look at the hosted cluster's ClusterVersion and the control-plane operator; fix the cause or set the cluster back to the version it runs",
    ..FALSE_AND_BLOCKING
};

/// Health, worst first: the first row whose condition is in its state decides the reason; the
/// message quotes that condition (type, status, reason, message) and every other row that matches,
/// and the operator's failed reconcile when there is one. Else True `NoIssues`.
pub const HEALTH_ROWS: [HealthRow; 10] = [
    HealthRow {
        condition: types::DEGRADED,
        status: "True",
        reason: DEGRADED,
        blocks: false,
        headline: "Control plane is degraded",
        ..FALSE_AND_BLOCKING
    },
    PAYLOAD_FAILING,
    HealthRow {
        condition: types::CLUSTER_VERSION_FAILING,
        status: "True",
        ..PAYLOAD_FAILING
    },
    HealthRow {
        condition: types::SUPPORTED_HOSTED_CLUSTER,
        reason: UNSUPPORTED_HOSTED_CLUSTER,
        headline: "The HyperShift operator does not support this HostedCluster",
        guidance: "It does not resolve by itself: the operator on the management cluster is not configured for this cluster (platform, feature set); ask the management cluster's administrators",
        ..FALSE_AND_BLOCKING
    },
    HealthRow {
        condition: types::VALID_CONFIGURATION,
        reason: INVALID_CONFIGURATION,
        headline: "The HyperShift operator refuses the cluster's configuration",
        guidance: "It does not resolve by itself: fix what the message names (the cluster spec, a referenced Secret, or the management cluster, e.g. the Route CRD) and update the cluster",
        ..FALSE_AND_BLOCKING
    },
    HealthRow {
        condition: types::VALID_RELEASE_IMAGE,
        except_reason: Some("SecretNotFound"),
        reason: RELEASE_IMAGE_INVALID,
        during_upgrade: Some((UPGRADE_BLOCKED, "does not proceed")),
        headline: "The HyperShift operator cannot use the release image",
        guidance: "It does not resolve by itself unless the registry was only unreachable: check the release (openshift_version) and that the management cluster can pull it (registry reachable, pull secret), then update the cluster",
        ..FALSE_AND_BLOCKING
    },
    HealthRow {
        condition: types::VALID_GCP_WORKLOAD_IDENTITY,
        reason: INVALID_WORKLOAD_IDENTITY,
        headline: "The cluster's GCP Workload Identity is missing or invalid",
        guidance: "It does not resolve by itself: fix the Workload Identity settings (project number, pool, provider, service accounts) and update the cluster",
        ..FALSE_AND_BLOCKING
    },
    HealthRow {
        condition: types::PLATFORM_CREDENTIALS_FOUND,
        reason: PLATFORM_CREDENTIALS_NOT_FOUND,
        headline: "The HyperShift operator cannot set up the cluster's platform credentials",
        guidance: "It does not resolve by itself: fix the GCP Workload Identity setup the message names (pool, provider, service accounts and their bindings)",
        ..FALSE_AND_BLOCKING
    },
    HealthRow {
        condition: types::VALID_GCP_CREDENTIALS,
        reason: INVALID_GCP_CREDENTIALS,
        blocks: false,
        headline: "The HyperShift operator cannot write the cluster's GCP credentials",
        guidance: "Check the Workload Identity settings and service accounts the message names",
        ..FALSE_AND_BLOCKING
    },
    HealthRow {
        condition: types::PROGRESSING,
        only_reason: Some("Blocked"),
        reason: BLOCKED,
        during_upgrade: Some((UPGRADE_BLOCKED, "does not proceed")),
        headline: "The HyperShift operator does not roll the cluster out",
        guidance: "It does not resolve by itself: fix the cause the message names (release image, configuration) and update the cluster",
        ..FALSE_AND_BLOCKING
    },
];

impl HealthRow {
    /// The condition of `status` this row matches, if any.
    pub fn matches<'a>(
        &self,
        status: &'a HostedClusterStatus,
    ) -> Option<&'a HostedClusterCondition> {
        status.is(self.condition, self.status).filter(|c| {
            self.only_reason.is_none_or(|r| c.reason == r)
                && self.except_reason.is_none_or(|r| c.reason != r)
        })
    }
}

/// `Type=Status (Reason): message` of `c` ([`operator_words`]).
fn words(c: &HostedClusterCondition) -> String {
    operator_words(&c.type_, &c.status, &c.reason, &c.message)
}

/// Health from [`HEALTH_ROWS`] (module docs of `pulse::controlplane`).
pub fn health(status: &HostedClusterStatus) -> Condition {
    let mut matched = HEALTH_ROWS
        .iter()
        .filter_map(|row| row.matches(status).map(|c| (row, c)));
    let Some((row, c)) = matched.next() else {
        return no_issues("No degradation detected");
    };
    let (reason, mut message) = match (row.during_upgrade, status.upgrade()) {
        (Some((reason, what)), Some(u)) => (
            reason,
            format!(
                "The upgrade from {} to {} {what}: HostedCluster {}",
                u.from,
                u.to,
                words(c)
            ),
        ),
        _ if row.condition == types::DEGRADED => (
            row.reason,
            // The seed's rule, in the words it always had.
            format!(
                "{} ({}): {}",
                row.headline,
                or_none(&c.reason),
                operator_message(&c.message)
            ),
        ),
        _ => (
            row.reason,
            format!("{}: HostedCluster {}", row.headline, words(c)),
        ),
    };
    if !row.guidance.is_empty() {
        message.push_str(&format!(". {}", row.guidance));
    }
    // Every row names another condition type, so each matched condition is named once.
    let also: Vec<String> = matched
        .map(|(_, other)| other)
        .chain(failed_reconcile(status))
        .map(words)
        .collect();
    if !also.is_empty() {
        message.push_str(&format!(". Also: {}", also.join("; ")));
    }
    unhealthy(reason, message)
}

/// `ReconciliationSucceeded=False`: the operator's last reconcile failed (it retries).
fn failed_reconcile(status: &HostedClusterStatus) -> Option<&HostedClusterCondition> {
    status.is(types::RECONCILIATION_SUCCEEDED, "False")
}

/// Available: True `ControlPlaneReady` when the HostedCluster says so and no release rollout
/// runs; during one, False [`UPGRADING`] (the control plane still serves the completed release,
/// not the desired one the reported generation asks for); else False `Provisioning` while it
/// progresses, [`BLOCKED`] when a row of [`HEALTH_ROWS`] that blocks
/// matches (the message names each), `NotReady` otherwise.
pub fn available(status: &HostedClusterStatus, endpoint: &str, version: &str) -> Condition {
    if let Some(a) = status.is(types::AVAILABLE, "True") {
        if let Some(u) = status.upgrade() {
            let at = unless_empty(endpoint, || format!(" at {endpoint}"));
            return unavailable(
                UPGRADING,
                format!(
                    "Upgrading from {} to {}: the control plane still serves release {}{at}, release {} is not rolled out yet; HostedCluster Available=True: {}",
                    u.from,
                    u.to,
                    u.from,
                    u.to,
                    quote(&a.message)
                ),
            );
        }
        let mut message = format!("Control plane is ready: {}", quote(&a.message));
        message.push_str(&unless_empty(endpoint, || {
            format!("; API endpoint {endpoint}")
        }));
        message.push_str(&unless_empty(version, || format!("; version {version}")));
        return ready("ControlPlaneReady", message);
    }
    let available_part = match status.condition(types::AVAILABLE) {
        Some(a) => format!(
            "HostedCluster Available={} ({}): {}",
            a.status,
            or_none(&a.reason),
            quote(&a.message)
        ),
        None => "HostedCluster has not reported an Available condition yet".to_owned(),
    };
    if status.is_true(types::PROGRESSING) {
        return unavailable(
            "Provisioning",
            format!("Control plane provisioning in progress; {available_part}"),
        );
    }
    let blockers = blocking_conditions(status);
    let mut message = format!("Control plane is not available; {available_part}");
    if let Some(r) = failed_reconcile(status) {
        message.push_str(&format!(
            ". The HyperShift operator's last reconcile failed ({}): {}",
            or_none(&r.reason),
            operator_message(&r.message)
        ));
    }
    if blockers.is_empty() {
        return unavailable("NotReady", message);
    }
    message.push_str(&format!(
        ". Blocked by: {}. These do not resolve by themselves: fix the cause named in the message (cluster spec, release image, GCP identity setup) and update the cluster",
        blockers.join("; ")
    ));
    unavailable(BLOCKED, message)
}

/// The rows of [`HEALTH_ROWS`] that block and match, as `Type=False (Reason): message`.
/// `Progressing=False` `Blocked` only names what no validation condition already says.
fn blocking_conditions(status: &HostedClusterStatus) -> Vec<String> {
    let (progressing, validations): (Vec<_>, Vec<_>) = HEALTH_ROWS
        .iter()
        .filter(|row| row.blocks)
        .filter_map(|row| row.matches(status))
        .partition(|c| c.type_ == types::PROGRESSING);
    let named = if validations.is_empty() {
        progressing
    } else {
        validations
    };
    named.into_iter().map(words).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use job_report::ConditionStatus;
    use serde_json::{Value, json};

    use super::*;

    /// A HostedCluster status with `conditions` as `(type, status, reason)`; each message is
    /// `<type> says <reason>`.
    fn status(conditions: &[(&str, &str, &str)]) -> HostedClusterStatus {
        let list: Vec<Value> = conditions
            .iter()
            .map(|(t, s, r)| json!({"type": t, "status": s, "reason": r, "message": format!("{t} says {r}")}))
            .collect();
        serde_json::from_value(json!({ "conditions": list })).unwrap()
    }

    /// A status that is rolling out 4.17.1 over a completed 4.17.0.
    fn upgrading(mut s: HostedClusterStatus) -> HostedClusterStatus {
        s.version = serde_json::from_value(json!({
            "desired": {"version": "4.17.1"},
            "history": [{"state": "Partial", "version": "4.17.1"}, {"state": "Completed", "version": "4.17.0"}]
        }))
        .unwrap();
        s
    }

    /// The condition in the state the row names.
    fn trigger(row: &HealthRow) -> (&'static str, &'static str, &'static str) {
        (
            row.condition,
            row.status,
            row.only_reason.unwrap_or("OperatorReason"),
        )
    }

    #[test]
    fn each_health_row_alone_gives_its_reason_with_the_operators_words() {
        for row in &HEALTH_ROWS {
            let (t, s, r) = trigger(row);
            let h = health(&status(&[
                ("Available", "False", "WaitingForAvailable"),
                (t, s, r),
            ]));
            assert_eq!(
                (h.status, h.reason.as_str()),
                (ConditionStatus::False, row.reason),
                "{t}={s}"
            );
            assert!(
                h.message.contains(&format!("{t} says {r}")),
                "{}",
                h.message
            );
            if row.condition != types::DEGRADED {
                assert!(
                    h.message.contains(&format!("{t}={s} ({r})")),
                    "{}",
                    h.message
                );
            }
            // During an upgrade the upgrade's reason, naming from and to.
            let h = health(&upgrading(status(&[(t, s, r)])));
            let expected = row.during_upgrade.map_or(row.reason, |(reason, _)| reason);
            assert_eq!(h.reason, expected, "{t}={s} during an upgrade");
            if row.during_upgrade.is_some() {
                assert!(h.message.contains("from 4.17.0 to 4.17.1"), "{}", h.message);
            }
        }
    }

    #[test]
    fn the_first_matching_row_decides_and_the_others_are_named() {
        // Every row at once: the list's order decides, worst first.
        let all: Vec<(&str, &str, &str)> = HEALTH_ROWS.iter().map(trigger).collect();
        for skip in 0..HEALTH_ROWS.len() {
            let rest: Vec<_> = all[skip..].to_vec();
            let h = health(&status(&rest));
            assert_eq!(h.reason, HEALTH_ROWS[skip].reason, "rows from {skip}");
        }
        // The recorded blocked state: the release image first, Blocked named too.
        let blocked = status(&[
            ("Available", "False", "WaitingForAvailable"),
            ("Progressing", "False", "Blocked"),
            ("Degraded", "Unknown", "StatusUnknown"),
            ("ValidReleaseImage", "False", "PayloadArchNotFound"),
            ("ReconciliationSucceeded", "False", "ReconciliationError"),
        ]);
        let h = health(&blocked);
        assert_eq!(h.reason, RELEASE_IMAGE_INVALID);
        assert!(
            h.message.starts_with("The HyperShift operator cannot use the release image: HostedCluster ValidReleaseImage=False (PayloadArchNotFound): ValidReleaseImage says PayloadArchNotFound. "),
            "{}",
            h.message
        );
        assert!(
            h.message.ends_with("Also: Progressing=False (Blocked): Progressing says Blocked; ReconciliationSucceeded=False (ReconciliationError): ReconciliationSucceeded says ReconciliationError"),
            "{}",
            h.message
        );
    }

    #[test]
    fn states_that_need_no_person_stay_healthy() {
        for conditions in [
            // Unknown is not False: nothing exists yet to be unhealthy (the recordings).
            &[
                ("Degraded", "Unknown", "StatusUnknown"),
                ("GCPEndpointAvailable", "Unknown", "StatusUnknown"),
            ][..],
            // A missing pull secret is reported while reconcile continues.
            &[("ValidReleaseImage", "False", "SecretNotFound")][..],
            // Progressing=False for another reason is "at the desired version".
            &[("Progressing", "False", "AsExpected")][..],
            // Written while the endpoint is being created or a GCP call is retried.
            &[("GCPEndpointAvailable", "False", "GCPError")][..],
            // A failed reconcile alone: retried by the operator with back-off.
            &[("ReconciliationSucceeded", "False", "ReconciliationError")][..],
            &[
                ("ValidConfiguration", "True", "AsExpected"),
                ("SupportedHostedCluster", "True", "AsExpected"),
            ][..],
        ] {
            let h = health(&status(conditions));
            assert_eq!(h.reason, "NoIssues", "{conditions:?}: {}", h.message);
        }
    }

    #[test]
    fn operator_messages_are_bounded_and_redacted() {
        let s: HostedClusterStatus = serde_json::from_value(json!({"conditions": [
            {"type": "ValidConfiguration", "status": "False", "reason": "InvalidConfiguration",
             "message": format!("token=s3cr3t-value {}", "x".repeat(40_000))},
        ]}))
        .unwrap();
        let h = health(&s);
        assert_eq!(h.reason, INVALID_CONFIGURATION);
        assert!(!h.message.contains("s3cr3t-value"), "{}", &h.message[..200]);
        assert!(h.message.len() < 4096, "{}", h.message.len());
        let a = available(&s, "", "");
        assert!(!a.message.contains("s3cr3t-value"));
    }

    #[test]
    fn available_is_blocked_only_by_rows_that_block() {
        for row in &HEALTH_ROWS {
            let (t, s, r) = trigger(row);
            let a = available(
                &status(&[("Available", "False", "WaitingForAvailable"), (t, s, r)]),
                "",
                "",
            );
            let expected = if row.blocks { BLOCKED } else { "NotReady" };
            assert_eq!(a.reason, expected, "{t}={s}");
            if row.blocks {
                assert!(
                    a.message.contains(&format!("Blocked by: {t}={s} ({r})")),
                    "{}",
                    a.message
                );
            }
        }
        // Progressing=True wins: the operator is working on it.
        let a = available(
            &status(&[
                ("Progressing", "True", "Progressing"),
                ("ValidConfiguration", "False", "InvalidConfiguration"),
            ]),
            "",
            "",
        );
        assert_eq!(a.reason, "Provisioning");
    }

    #[test]
    fn every_health_row_reads_another_condition() {
        let mut conditions: Vec<&str> = HEALTH_ROWS.iter().map(|row| row.condition).collect();
        conditions.sort_unstable();
        conditions.dedup();
        assert_eq!(conditions.len(), HEALTH_ROWS.len());
    }

    #[test]
    fn every_type_read_is_listed_once() {
        let mut all = types::ALL.to_vec();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), types::ALL.len());
        for row in &HEALTH_ROWS {
            assert!(types::ALL.contains(&row.condition), "{}", row.condition);
        }
    }
}

#[cfg(test)]
mod fed_back_tests {
    #[test]
    fn every_condition_read_here_is_fed_back_by_the_hub() {
        crate::hypershift::assert_fed_back(
            include_str!("status.rs"),
            &super::types::ALL,
            super::FED_BACK_CONDITIONS,
        );
    }
}

/// Pins what the status readers, [`available`] and [`health`] give over every HostedCluster status
/// the real operator recorded and over a generated grid of condition sets, version rollouts and
/// endpoints: status, reason and message, byte for byte. The texts are stored by HyperFleet and
/// quoted by other tools; a change here must be deliberate.
#[cfg(test)]
mod pinned {
    #![allow(clippy::unwrap_used)]

    use std::fmt::Write as _;

    use serde_json::{Value, json};

    use super::*;

    /// `(type, status, reason, message)`.
    type Row = [&'static str; 4];

    const AVAILABLE: Row = [
        "Available",
        "True",
        "AsExpected",
        "The hosted control plane is available",
    ];
    const AVAILABLE_QUIET: Row = ["Available", "True", "", ""];
    const WAITING: Row = [
        "Available",
        "False",
        "WaitingForAvailable",
        "Waiting for hosted control plane to be healthy",
    ];
    /// The conditions combined in the grid: every row of [`HEALTH_ROWS`] and its near misses.
    const PROBLEMS: [Row; 19] = [
        [
            "Degraded",
            "True",
            "UnavailableReplicas",
            "kube-apiserver has 1 unavailable replicas",
        ],
        ["Degraded", "Unknown", "StatusUnknown", ""],
        [
            "ReconciliationSucceeded",
            "False",
            "ReconciliationError",
            "failed to get ignitionServerRoute: token=s3cr3t",
        ],
        [
            "ClusterVersionSucceeding",
            "False",
            "ClusterOperatorsNotAvailable",
            "Cluster operators console, ingress are not available",
        ],
        [
            "ClusterVersionFailing",
            "True",
            "",
            "Multiple errors are preventing progress",
        ],
        [
            "SupportedHostedCluster",
            "False",
            "UnsupportedHostedCluster",
            "HostedCluster platform GCP is not supported",
        ],
        [
            "ValidConfiguration",
            "False",
            "InvalidConfiguration",
            "cluster does not support Routes, but service \"OAuthServer\" is exposed via a Route",
        ],
        ["ValidConfiguration", "False", "", ""],
        [
            "ValidReleaseImage",
            "False",
            "PayloadArchNotFound",
            "dial tcp: lookup quay.io on 192.0.2.53:53: no such host",
        ],
        [
            "ValidReleaseImage",
            "False",
            "SecretNotFound",
            "Secret clusters/pull-secret not found",
        ],
        [
            "ValidGCPWorkloadIdentity",
            "False",
            "MissingGCPConfiguration",
            "GCP platform configuration is missing",
        ],
        [
            "PlatformCredentialsFound",
            "False",
            "PlatformCredentialsNotFound",
            "failed to get GCP credentials: password=hunter2",
        ],
        [
            "ValidGCPCredentials",
            "False",
            "InvalidCredentials",
            "failed to write secret",
        ],
        [
            "Progressing",
            "False",
            "Blocked",
            "ValidReleaseImage condition is false",
        ],
        [
            "Progressing",
            "False",
            "AsExpected",
            "HostedCluster is at expected version",
        ],
        [
            "Progressing",
            "True",
            "Progressing",
            "HostedCluster is deploying, upgrading, or reconfiguring",
        ],
        ["GCPEndpointAvailable", "False", "GCPError", "retrying"],
        ["SupportedHostedCluster", "True", "AsExpected", ""],
        ["ClusterVersionFailing", "False", "AsExpected", ""],
    ];

    /// `status.version` variants: `(label, value)`.
    fn versions() -> Vec<(&'static str, Value)> {
        let done =
            |v: &str| json!({"state": "Completed", "version": v, "image": format!("img:{v}")});
        vec![
            ("no version", Value::Null),
            (
                "bootstrapping",
                json!({"desired": {"image": "img:4.17.0"}, "history": [{"state": "Partial", "version": "", "image": "img:4.17.0"}]}),
            ),
            (
                "completed",
                json!({"desired": {"version": "4.17.0", "image": "img:4.17.0"}, "history": [done("4.17.0")]}),
            ),
            (
                "upgrading",
                json!({"desired": {"version": "4.17.1"}, "history": [{"state": "Partial", "version": "4.17.1"}, done("4.17.0")]}),
            ),
            (
                "new image only",
                json!({"desired": {"image": "img:4.17.1"}, "history": [done("4.17.0")]}),
            ),
            (
                "new version",
                json!({"desired": {"version": "4.17.1", "image": "img:4.17.1"}, "history": [done("4.17.0"), done("4.16.2")]}),
            ),
            (
                "partial without anything",
                json!({"history": [{"state": "Partial"}, done("4.17.0")]}),
            ),
            (
                "partial, desired image",
                json!({"desired": {"image": "img:4.17.1"}, "history": [{"state": "Partial", "version": "", "image": ""}, done("4.17.0")]}),
            ),
            (
                "same image, no versions",
                json!({"desired": {"image": "img:4.17.0"}, "history": [done("4.17.0")]}),
            ),
            (
                "completed without image",
                json!({"desired": {"image": "img:9"}, "history": [{"state": "Completed", "version": "4.17.0"}]}),
            ),
            (
                "completed without version first",
                json!({"desired": {"version": "4.16.0"}, "history": [{"state": "Completed", "version": ""}, done("4.16.0")]}),
            ),
        ]
    }

    /// `status.controlPlaneEndpoint` variants.
    const ENDPOINTS: [&str; 6] = [
        "null",
        r#"{"host": "", "port": 0}"#,
        r#"{"host": "api.example.com", "port": 6443}"#,
        r#"{"host": "fd00::1", "port": 6443}"#,
        r#"{"host": "[fd00::1]", "port": 443}"#,
        r#"{"host": "api.example.com", "port": 0}"#,
    ];

    fn status(rows: &[Row], version: &Value, endpoint: &str) -> HostedClusterStatus {
        let conditions: Vec<Value> = rows
            .iter()
            .map(|[t, s, r, m]| json!({"type": t, "status": s, "reason": r, "message": m, "observedGeneration": 2}))
            .collect();
        let mut status = json!({"conditions": conditions});
        if !version.is_null() {
            status["version"] = version.clone();
        }
        let endpoint: Value = serde_json::from_str(endpoint).unwrap();
        if !endpoint.is_null() {
            status["controlPlaneEndpoint"] = endpoint;
        }
        serde_json::from_value(status).unwrap()
    }

    fn show(c: &Condition) -> String {
        format!(
            "{} {:?} {} {:?}: {}",
            c.type_, c.status, c.reason, c.last_transition_time, c.message
        )
    }

    /// What the pulse reads of `status` and the two conditions it maps it to.
    fn read(out: &mut String, label: &str, status: &HostedClusterStatus) {
        let endpoint = status.control_plane_endpoint();
        let version = status.completed_version();
        let _ = writeln!(
            out,
            "[{label}]\nendpoint {endpoint:?} | desired {:?} {:?} | completed {version:?} | upgrade {:?}\n{}\n{}",
            status.desired_image(),
            status.desired_version(),
            status.upgrade(),
            show(&available(status, &endpoint, &version)),
            show(&health(status)),
        );
    }

    fn types(rows: &[Row]) -> String {
        let types: Vec<String> = rows
            .iter()
            .map(|[t, s, r, _]| format!("{t}={s}/{r}"))
            .collect();
        types.join(", ")
    }

    #[test]
    fn recorded_operator_states() {
        let Some(recorded) = crate::hypershift::recorded_objects("HostedCluster") else {
            return;
        };
        // Each distinct reading once, with every object that gives it.
        let mut readings: Vec<(String, Vec<String>)> = Vec::new();
        for (source, object) in recorded {
            let Some(status) = object.get("status") else {
                continue;
            };
            let mut text = String::new();
            read(
                &mut text,
                "",
                &serde_json::from_value(status.clone()).unwrap(),
            );
            match readings.iter_mut().find(|(t, _)| *t == text) {
                Some((_, sources)) => sources.push(source),
                None => readings.push((text, vec![source])),
            }
        }
        let mut out = String::new();
        for (text, sources) in readings {
            let _ = write!(out, "{}\n{text}", sources.join("\n"));
        }
        insta::assert_snapshot!("recorded_operator_states", out);
    }

    /// The rows themselves, field by field, in order.
    #[test]
    fn health_rows() {
        insta::assert_snapshot!("health_rows", format!("{HEALTH_ROWS:#?}"));
    }

    #[test]
    fn endpoints_and_versions() {
        let mut out = String::new();
        for availability in [&[][..], &[AVAILABLE], &[AVAILABLE_QUIET], &[WAITING]] {
            for (version_label, version) in versions() {
                for endpoint in ENDPOINTS {
                    let s = status(availability, &version, endpoint);
                    let label = format!("{} | {version_label} | {endpoint}", types(availability));
                    read(&mut out, &label, &s);
                }
            }
        }
        // What the caller passes is what the message says.
        let s = status(&[AVAILABLE], &Value::Null, "null");
        let _ = writeln!(out, "{}", show(&available(&s, "https://h:1", "4.1.2")));
        insta::assert_snapshot!("endpoints_and_versions", out);
    }

    #[test]
    fn one_condition_over_availability_and_versions() {
        let mut out = String::new();
        let versions = versions();
        for problem in PROBLEMS {
            for availability in [None, Some(AVAILABLE), Some(WAITING)] {
                for (version_label, version) in [0, 2, 3, 6].map(|i| &versions[i]) {
                    let rows: Vec<Row> = availability.into_iter().chain([problem]).collect();
                    let label = format!("{} | {version_label}", types(&rows));
                    read(&mut out, &label, &status(&rows, version, "null"));
                }
            }
        }
        insta::assert_snapshot!("one_condition_grid", out);
    }

    #[test]
    fn pairs_of_conditions() {
        let mut out = String::new();
        let versions = versions();
        for (i, first) in PROBLEMS.iter().enumerate() {
            for second in &PROBLEMS[i + 1..] {
                for (availability, version) in [(WAITING, 0), (AVAILABLE, 3)] {
                    let rows = [availability, *first, *second];
                    let (version_label, version) = &versions[version];
                    let label = format!("{} | {version_label}", types(&rows));
                    read(&mut out, &label, &status(&rows, version, "null"));
                }
            }
        }
        // Every condition at once, in both orders, and a type written twice.
        let mut all: Vec<Row> = PROBLEMS.to_vec();
        for _ in 0..2 {
            for (availability, version) in [(WAITING, 0), (AVAILABLE, 3)] {
                let rows: Vec<Row> = [availability].into_iter().chain(all.clone()).collect();
                let (version_label, version) = &versions[version];
                read(
                    &mut out,
                    &format!("all | {version_label}"),
                    &status(&rows, version, "null"),
                );
            }
            all.reverse();
        }
        let twice = [WAITING, PROBLEMS[6], PROBLEMS[7], PROBLEMS[8], PROBLEMS[8]];
        read(
            &mut out,
            &types(&twice),
            &status(&twice, &Value::Null, "null"),
        );
        insta::assert_snapshot!("condition_pairs_grid", out);
    }
}

/// Pins how the fed-back statuses parse, odd ones included (missing, null and wrongly typed
/// fields, non-object entries): the value read or the error, as text.
#[cfg(test)]
mod parsing {
    use std::fmt::Write as _;

    use serde_json::{Value, json};

    use super::HostedClusterStatus;
    use crate::hypershift::nodepool::status::NodePoolStatus;

    fn statuses() -> Vec<Value> {
        vec![
            json!({}),
            json!({"conditions": []}),
            json!({"conditions": null}),
            json!({"conditions": ["Available"]}),
            json!({"conditions": [{"type": "Available"}]}),
            json!({"conditions": [{"status": "True"}]}),
            json!({"conditions": [{"type": "Available", "status": "True"}]}),
            json!({"conditions": [{"type": "Ready", "status": "True", "reason": null}]}),
            json!({"conditions": [{"type": "Ready", "status": "True", "reason": "R", "message": "m", "lastTransitionTime": "2026-11-26T11:00:00Z", "observedGeneration": 3, "severity": "Info"}]}),
            json!({"conditions": [{"type": "Ready", "status": true}]}),
            json!({"conditions": [{"type": "Ready", "status": "True", "observedGeneration": "3"}]}),
            json!({"controlPlaneEndpoint": {}}),
            json!({"controlPlaneEndpoint": null}),
            json!({"controlPlaneEndpoint": {"host": "h", "port": "6443"}}),
            json!({"controlPlaneEndpoint": {"host": "h", "port": 6443, "extra": 1}}),
            json!({"version": {}}),
            json!({"version": null}),
            json!({"version": {"desired": {}, "history": [{}]}}),
            json!({"version": {"desired": {"version": null}}}),
            json!({"version": {"history": [{"state": "Completed", "version": "4.17.0", "image": "i", "completionTime": null}]}}),
            json!({"version": {"history": {}}}),
            json!({"replicas": 3, "version": "4.17.0"}),
            json!({"replicas": "3"}),
            json!({"replicas": null}),
            json!({"version": "4.17.0"}),
            json!({"nodesInfo": {}}),
            json!({"nodesInfo": null}),
            json!({"nodesInfo": {"nodeVersions": [{}]}}),
            json!({"nodesInfo": {"nodeVersions": [{"ocpVersion": "4.17.0", "kubeletVersion": "v1.30.4", "readyNodeCount": 2, "unreadyNodeCount": 1}]}}),
            json!({"nodesInfo": {"nodeVersions": [{"readyNodeCount": -1.5}]}}),
            json!([]),
            json!("status"),
        ]
    }

    #[test]
    fn odd_statuses_parse_as_before() {
        let mut out = String::new();
        for status in statuses() {
            let hc = serde_json::from_value::<HostedClusterStatus>(status.clone());
            let np = serde_json::from_value::<NodePoolStatus>(status.clone());
            let _ = writeln!(out, "{status}");
            let _ = match hc {
                Ok(s) => writeln!(out, "  HostedCluster {s:?}"),
                Err(e) => writeln!(out, "  HostedCluster error: {e}"),
            };
            let _ = match np {
                Ok(s) => writeln!(out, "  NodePool {s:?}"),
                Err(e) => writeln!(out, "  NodePool error: {e}"),
            };
        }
        insta::assert_snapshot!("odd_statuses", out);
    }
}
