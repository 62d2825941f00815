//! Reading a HostedCluster's fed-back `status` (`hypershift-api.md` §2): the subset the adapter
//! maps, the version rollout it reports, and what its conditions say about availability and
//! health, in the HostedCluster's own words.

use job_report::{Condition, ConditionStatus};
use serde::Deserialize;

use crate::message::{cond, no_issues, or_none, quote};

/// Every HostedCluster condition type `hypershift-api.md` §2.2 documents for GCP and None
/// HostedClusters, in its order: what a hub without raw JSON feedback feeds back of the conditions
/// (each one's status, reason, message, observedGeneration and lastTransitionTime, by type). A
/// condition this module reads must be listed here, or the hub backend never sees it (a test checks
/// the types named in this file).
pub const FED_BACK_CONDITIONS: &[&str] = &[
    "Available",
    "Progressing",
    "Degraded",
    "ReconciliationSucceeded",
    "ValidConfiguration",
    "SupportedHostedCluster",
    "ValidReleaseImage",
    "ReconciliationActive",
    "ValidGCPWorkloadIdentity",
    "ValidGCPCredentials",
    "PlatformCredentialsFound",
    "GCPEndpointAvailable",
    "GCPServiceAttachmentAvailable",
    "InfrastructureReady",
    "KubeAPIServerAvailable",
    "EtcdAvailable",
    "ValidHostedControlPlaneConfiguration",
    "ValidReleaseInfo",
    "ExternalDNSReachable",
    "IgnitionEndpointAvailable",
    "ClusterVersionSucceeding",
    "ClusterVersionUpgradeable",
    "ClusterVersionProgressing",
    "ClusterVersionAvailable",
    "ClusterVersionReleaseAccepted",
    "ClusterVersionRetrievedUpdates",
    "ClusterVersionFailing",
    "DataPlaneConnectionAvailable",
    "ControlPlaneConnectionAvailable",
    "ConfigOperatorReconciliationSucceeded",
    "CloudResourcesDestroyed",
    "HostedClusterDestroyed",
];

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
    pub fn condition(&self, type_: &str) -> Option<&HostedClusterCondition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    pub fn is_true(&self, type_: &str) -> bool {
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
pub fn health(status: &HostedClusterStatus) -> Condition {
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

pub fn available(status: &HostedClusterStatus, endpoint: &str, version: &str) -> Condition {
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

#[cfg(test)]
mod fed_back_tests {
    use super::FED_BACK_CONDITIONS;

    /// The condition types this file reads: the literal after `condition("`, `is("` and
    /// `is_true("`, every literal of a `const …: [&str; N]` list, and the first literal of a tuple
    /// line `("Type", …)`.
    fn read_here(source: &str) -> Vec<String> {
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        let code = code
            .split("pub const FED_BACK_CONDITIONS")
            .collect::<Vec<_>>();
        let code = format!(
            "{}{}",
            code[0],
            code.get(1)
                .and_then(|rest| rest.split_once("];"))
                .map_or("", |(_, after)| after)
        );
        let mut found = Vec::new();
        let literal = |after: &str| after.split('"').next().unwrap_or_default().to_owned();
        for call in ["condition(\"", ".is(\"", "is_true(\""] {
            found.extend(code.split(call).skip(1).map(literal));
        }
        for list in code.split(": [&str; ").skip(1) {
            let body = list.split("];").next().unwrap_or_default();
            found.extend(body.split('"').skip(1).step_by(2).map(str::to_owned));
        }
        for line in code.lines() {
            if let Some(after) = line.trim_start().strip_prefix("(\"") {
                found.push(literal(after));
            }
        }
        found
    }

    #[test]
    fn every_condition_read_here_is_fed_back_by_the_hub() {
        let read = read_here(include_str!("status.rs"));
        assert!(read.len() >= 8, "{read:?}");
        for type_ in &read {
            assert!(
                FED_BACK_CONDITIONS.contains(&type_.as_str()),
                "{type_} is read but a hub does not feed it back: add it to FED_BACK_CONDITIONS"
            );
        }
    }
}
