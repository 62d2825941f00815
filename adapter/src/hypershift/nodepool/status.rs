//! Reading a NodePool's fed-back `status` (`hypershift-api.md` §4): replicas, version, per-version
//! node counts, and what its conditions say, per platform (§4.3):
//!
//! - **GCP**: ready when `Ready=True` and `status.replicas` reaches the desired count (fixed
//!   `replicas`, or the autoscaler's `min`); machines being created, or a version or config
//!   rollout, is progress; a `Valid*` condition, `UpdateManagementEnabled` or
//!   `AutoscalingEnabled`/`ValidationFailed` False, an unsupported version skew, or
//!   `AllMachinesReady=False` for longer than a limit (quota, machine type, permissions) need a
//!   person. While HyperShift refuses part of the NodePool and it is not ready, Available is False
//!   [`BLOCKED`] (the controller stops at the refusal: nothing is created or rolled out).
//! - **None**: there are no machines (`Ready`, `AllMachinesReady`, `AllNodesHealthy` and
//!   `replicas` say nothing); ready when the ignition payload is generated
//!   (`ValidGeneratedPayload=True`) and `status.version` is set; `ReachedIgnitionEndpoint` tells
//!   whether any VM has fetched it. A refusal while the payload is not generated is [`BLOCKED`]
//!   too.
//!
//! The condition types read are [`types::ALL`]; HyperShift's own messages are quoted bounded and
//! with credentials removed.
//!
//! NodePool conditions are not `metav1.Condition`: `reason` may be empty and there is a
//! `severity`.

use job_report::Condition;
use serde::Deserialize;
use serde_json::Value;

use crate::duration::{friendly, is_past};
use crate::hypershift::conditions::{
    condition_types, operator_words, ready, unavailable, unhealthy, unless_empty,
};
use crate::message::{no_issues, or_none, quote};

/// Available reasons.
pub const NODE_POOL_READY: &str = "NodePoolReady";
pub const PROVISIONING: &str = "Provisioning";
pub const SCALING: &str = "Scaling";
pub const UPDATING: &str = "Updating";
pub const NOT_READY: &str = "NotReady";
/// Available's reason when HyperShift refuses part of the NodePool ([`REFUSED`]) and it is not
/// ready: nothing rolls out until the spec is fixed.
pub const BLOCKED: &str = "Blocked";
/// Health reasons.
pub const VALIDATION_FAILED: &str = "ValidationFailed";
pub const UNSUPPORTED_VERSION_SKEW: &str = "UnsupportedVersionSkew";
pub const MACHINES_STUCK: &str = "MachinesStuck";
pub const CLUSTER_NETWORK_CIDR_CONFLICT: &str = "ClusterNetworkCIDRConflict";
pub const RECONCILIATION_PAUSED: &str = "ReconciliationPaused";

condition_types! {
    /// Every NodePool condition type `hypershift-api.md` §4.2 documents for GCP and None
    /// NodePools, in its order: what a hub without raw JSON feedback feeds back of the conditions
    /// (each one's status, reason, message, observedGeneration and lastTransitionTime, by type). A
    /// condition this module reads must be listed here, or the hub backend never sees it: the
    /// named ones are [`types`] (a test checks the types named in this file).
    READY = "Ready",
    ALL_MACHINES_READY = "AllMachinesReady",
    ALL_NODES_HEALTHY = "AllNodesHealthy",
    VALID_GENERATED_PAYLOAD = "ValidGeneratedPayload",
    REACHED_IGNITION_ENDPOINT = "ReachedIgnitionEndpoint",
    VALID_RELEASE_IMAGE = "ValidReleaseImage",
    VALID_MACHINE_CONFIG = "ValidMachineConfig",
    VALID_TUNING_CONFIG = "ValidTuningConfig",
    VALID_PLATFORM_IMAGE = "ValidPlatformImage",
    VALID_PLATFORM_CONFIG = "ValidPlatformConfig",
    VALID_ARCH_PLATFORM = "ValidArchPlatform",
    IGNITION_ENDPOINT_AVAILABLE = "IgnitionEndpointAvailable",
    SUPPORTED_VERSION_SKEW = "SupportedVersionSkew",
    UPDATE_MANAGEMENT_ENABLED = "UpdateManagementEnabled",
    AUTOSCALING_ENABLED = "AutoscalingEnabled",
    "AutorepairEnabled",
    UPDATING_VERSION = "UpdatingVersion",
    UPDATING_CONFIG = "UpdatingConfig",
    UPDATING_PLATFORM_MACHINE_TEMPLATE = "UpdatingPlatformMachineTemplate",
    RECONCILIATION_ACTIVE = "ReconciliationActive",
    CLUSTER_NETWORK_CIDR_CONFLICT = "ClusterNetworkCIDRConflict",
}

/// Conditions whose `False` means HyperShift refuses part of the NodePool (`hypershift-api.md`
/// §4.3 "Failed (needs input)"); `AutoscalingEnabled` counts only with reason `ValidationFailed`.
pub const REFUSED: [&str; 7] = [
    types::VALID_RELEASE_IMAGE,
    types::VALID_MACHINE_CONFIG,
    types::VALID_TUNING_CONFIG,
    types::VALID_PLATFORM_IMAGE,
    types::VALID_PLATFORM_CONFIG,
    types::VALID_ARCH_PLATFORM,
    types::UPDATE_MANAGEMENT_ENABLED,
];

/// The subset of NodePool `status` the mapping reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodePoolStatus {
    /// Available replicas of the MachineDeployment/MachineSet; always 0 for `None`.
    pub replicas: i64,
    /// Release version of the applied payload.
    pub version: String,
    pub conditions: Vec<NodePoolCondition>,
    pub nodes_info: Option<NodesInfo>,
}

/// A `NodePoolCondition`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct NodePoolCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub message: String,
    #[serde(default, rename = "lastTransitionTime")]
    pub last_transition_time: String,
    /// The `metadata.generation` the operator reconciled when it wrote the condition.
    #[serde(default, rename = "observedGeneration")]
    pub observed_generation: Option<i64>,
}

/// `status.nodesInfo`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct NodesInfo {
    #[serde(default, rename = "nodeVersions")]
    pub node_versions: Vec<NodeVersion>,
}

/// One `status.nodesInfo.nodeVersions[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct NodeVersion {
    pub ocp_version: String,
    pub kubelet_version: String,
    pub ready_node_count: i64,
    pub unready_node_count: i64,
}

impl NodePoolStatus {
    pub fn condition(&self, type_: &str) -> Option<&NodePoolCondition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    fn is(&self, type_: &str, status: &str) -> Option<&NodePoolCondition> {
        self.condition(type_).filter(|c| c.status == status)
    }

    /// `status.nodesInfo.nodeVersions`, empty when not reported.
    pub fn node_versions(&self) -> &[NodeVersion] {
        self.nodes_info
            .as_ref()
            .map_or(&[], |n| n.node_versions.as_slice())
    }
}

/// What the management cluster was asked to run: read from the NodePool the work holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Desired {
    /// `spec.platform.type: None`.
    pub platform_none: bool,
    /// `spec.replicas`.
    pub replicas: Option<i64>,
    /// `spec.autoScaling.{min, max}`.
    pub autoscaling: Option<(i64, i64)>,
}

impl Desired {
    /// Reads a NodePool object (the manifest in the work).
    pub fn of(node_pool: &Value) -> Desired {
        let spec = &node_pool["spec"];
        Desired {
            platform_none: spec["platform"]["type"] == "None",
            replicas: spec["replicas"].as_i64(),
            autoscaling: spec["autoScaling"]["min"]
                .as_i64()
                .zip(spec["autoScaling"]["max"].as_i64()),
        }
    }

    /// How many replicas make the NodePool ready: the fixed count, else the autoscaler's minimum
    /// (unset `replicas` is 0).
    pub fn wanted(&self) -> i64 {
        self.autoscaling
            .map_or_else(|| self.replicas.unwrap_or(0), |(min, _)| min)
    }

    fn describe(&self) -> String {
        match self.autoscaling {
            Some((min, max)) => format!("autoscaling {min}–{max}"),
            None => format!("{} desired", self.wanted()),
        }
    }
}

/// The limit past which `AllMachinesReady=False` is stuck rather than in progress.
#[derive(Debug, Clone, Copy)]
pub struct MachinesClock {
    pub now: jiff::Timestamp,
    pub stuck_after: std::time::Duration,
}

/// Rollouts in progress, as words (`a version update`, …).
fn rollouts(status: &NodePoolStatus) -> Vec<String> {
    [
        ("UpdatingVersion", "a version update"),
        ("UpdatingConfig", "a configuration update"),
        (
            "UpdatingPlatformMachineTemplate",
            "a machine template update",
        ),
    ]
    .into_iter()
    .filter_map(|(t, what)| {
        status.is(t, "True").map(|c| {
            if c.message.is_empty() {
                what.to_owned()
            } else {
                format!("{what} ({})", quote(&c.message))
            }
        })
    })
    .collect()
}

/// `Type=Status (Reason): message` of `c` ([`operator_words`]).
fn words(c: &NodePoolCondition) -> String {
    operator_words(&c.type_, &c.status, &c.reason, &c.message)
}

/// The words of the condition of `type_`, or that it is not reported.
fn state(status: &NodePoolStatus, type_: &str) -> String {
    status
        .condition(type_)
        .map_or_else(|| format!("{type_} not reported"), words)
}

/// What HyperShift refuses ([`REFUSED`], and `AutoscalingEnabled=False` `ValidationFailed`), as
/// `Type=False (Reason): message`.
fn refusals(status: &NodePoolStatus) -> Vec<String> {
    let autoscaling = status
        .is(types::AUTOSCALING_ENABLED, "False")
        .filter(|a| a.reason == "ValidationFailed");
    REFUSED
        .iter()
        .filter_map(|t| status.is(t, "False"))
        .chain(autoscaling)
        .map(words)
        .collect()
}

/// Available False [`BLOCKED`] naming the refusals, when there are any.
fn blocked(status: &NodePoolStatus, what: &str) -> Option<Condition> {
    let refused = refusals(status);
    (!refused.is_empty()).then(|| {
        unavailable(
            BLOCKED,
            format!(
                "{what}, and HyperShift refuses part of the NodePool: {}. Nothing rolls out until the NodePool spec is fixed (see Health)",
                refused.join("; ")
            ),
        )
    })
}

/// Whether the NodePool is ready by the per-platform rule of [`available`] (rollouts aside):
/// platform None, the ignition payload is generated and its release known; GCP, `Ready=True`
/// with the desired count reached, or nothing desired and nothing there.
fn is_ready(status: &NodePoolStatus, desired: &Desired) -> bool {
    let (wanted, have) = (desired.wanted(), status.replicas);
    if desired.platform_none {
        status.is("ValidGeneratedPayload", "True").is_some() && !status.version.is_empty()
    } else {
        (status.is("Ready", "True").is_some() && have >= wanted) || (wanted == 0 && have == 0)
    }
}

/// `; waiting for the HostedCluster's ignition endpoint (…): …` while HyperShift reports it
/// unavailable, else nothing.
fn ignition_endpoint_wait(status: &NodePoolStatus) -> String {
    status
        .is("IgnitionEndpointAvailable", "False")
        .map(|e| {
            format!(
                "; waiting for the HostedCluster's ignition endpoint ({}): {}",
                or_none(&e.reason),
                quote(&e.message)
            )
        })
        .unwrap_or_default()
}

/// Available, per platform (module docs). A version, config or machine template rollout makes
/// it False [`UPDATING`] whatever else holds: the NodePool does not run the spec it was asked for
/// yet (the nodes still serve the previous one, which the message says).
pub fn available(status: &NodePoolStatus, desired: &Desired) -> Condition {
    let rollouts = rollouts(status);
    if rollouts.is_empty() {
        return if desired.platform_none {
            payload_available(status, desired)
        } else {
            machines_available(status, desired)
        };
    }
    // HyperShift stops at a refusal: nothing rolls out until the spec is fixed.
    if !is_ready(status, desired)
        && let Some(blocked) = blocked(status, "The NodePool is not ready")
    {
        return blocked;
    }
    rolling_out(status, desired, &rollouts)
}

/// Available False [`UPDATING`] during `rollouts`, saying what the nodes serve meanwhile: the
/// previous ignition payload (None), or the replicas available (GCP).
fn rolling_out(status: &NodePoolStatus, desired: &Desired, rollouts: &[String]) -> Condition {
    let serving = if desired.platform_none {
        unless_empty(&status.version, || {
            format!(
                "; the ignition payload of release {} is served meanwhile",
                status.version
            )
        })
    } else {
        let version = unless_empty(&status.version, || {
            format!(" at version {}", status.version)
        });
        format!(
            "; {} of {} replicas available{version} meanwhile ({})",
            status.replicas,
            desired.wanted(),
            desired.describe()
        )
    };
    unavailable(
        UPDATING,
        format!(
            "The NodePool is rolling out {}: not yet at the spec it was asked for{serving}",
            rollouts.join(" and ")
        ),
    )
}

/// Available of a platform None NodePool, no rollout: True once the ignition payload is
/// generated (saying whether a machine has fetched it), else [`BLOCKED`] by a refusal or
/// [`PROVISIONING`].
fn payload_available(status: &NodePoolStatus, desired: &Desired) -> Condition {
    if is_ready(status, desired) {
        let fetched = if status.is("ReachedIgnitionEndpoint", "True").is_some() {
            "at least one machine has fetched it".to_owned()
        } else {
            "no machine has fetched it yet: create the VMs with ignition pointing at the HostedCluster's ignition endpoint, then approve their kubelet certificate requests".to_owned()
        };
        return ready(
            NODE_POOL_READY,
            format!(
                "The ignition payload for release {} is generated (platform None: machines are created outside HyperShift); {fetched}",
                status.version
            ),
        );
    }
    let payload = state(status, "ValidGeneratedPayload");
    let not_generated = format!("The ignition payload is not generated: {}", payload);
    if let Some(blocked) = blocked(status, &not_generated) {
        return blocked;
    }
    let mut message = format!("The ignition payload is not generated yet: {}", payload);
    message.push_str(&ignition_endpoint_wait(status));
    unavailable(PROVISIONING, message)
}

/// Available of a GCP NodePool, no rollout: True once ready with the desired replicas, else
/// [`BLOCKED`] by a refusal, [`PROVISIONING`] (no machine yet), [`SCALING`] (fewer than desired)
/// or [`NOT_READY`], each with the counts and the machines' conditions.
fn machines_available(status: &NodePoolStatus, desired: &Desired) -> Condition {
    let wanted = desired.wanted();
    let have = status.replicas;
    let counts = format!(
        "{have} of {wanted} replicas available ({})",
        desired.describe()
    );
    if is_ready(status, desired) {
        let version = unless_empty(&status.version, || format!("; version {}", status.version));
        return ready(
            NODE_POOL_READY,
            format!("NodePool is ready: {counts}{version}"),
        );
    }
    if let Some(blocked) = blocked(status, &format!("The NodePool is not ready: {counts}")) {
        return blocked;
    }
    let machines = format!(
        "{}; {}",
        state(status, "Ready"),
        state(status, "AllMachinesReady")
    );
    let (reason, message) = if have == 0 {
        let mut message = format!("Machines are being created: {counts}; {machines}");
        message.push_str(&ignition_endpoint_wait(status));
        (PROVISIONING, message)
    } else if have < wanted {
        (
            SCALING,
            format!("The NodePool is scaling: {counts}; {machines}"),
        )
    } else {
        (
            NOT_READY,
            format!(
                "The NodePool is not ready: {counts}; {machines}; {}",
                state(status, "AllNodesHealthy")
            ),
        )
    };
    unavailable(reason, message)
}

/// Health, worst first: HyperShift refused part of the spec ([`VALIDATION_FAILED`]), the
/// version skew is unsupported, the machines' IPs collide with the cluster network, machines
/// have not become ready for longer than the limit (GCP), reconciliation is paused; each with the
/// NodePool's own words. Else True `NoIssues`.
pub fn health(status: &NodePoolStatus, desired: &Desired, clock: MachinesClock) -> Condition {
    let refused = refusals(status);
    if !refused.is_empty() {
        return unhealthy(
            VALIDATION_FAILED,
            format!(
                "HyperShift refuses part of the NodePool: {}. It does not resolve by itself: fix the NodePool spec (release image, machine configuration, platform settings, management) and update the NodePool",
                refused.join("; ")
            ),
        );
    }
    if status.is("SupportedVersionSkew", "False").is_some() {
        return unhealthy(
            UNSUPPORTED_VERSION_SKEW,
            format!(
                "{}. Set the NodePool's release within the supported skew of the control plane's (not newer, at most a few minor versions older)",
                state(status, "SupportedVersionSkew")
            ),
        );
    }
    if status.is("ClusterNetworkCIDRConflict", "True").is_some() {
        return unhealthy(
            CLUSTER_NETWORK_CIDR_CONFLICT,
            format!(
                "{}. The machines' addresses collide with the cluster network: use a subnet outside the cluster network CIDR",
                state(status, "ClusterNetworkCIDRConflict")
            ),
        );
    }
    if !desired.platform_none
        && desired.wanted() > 0
        && let Some(m) = status.is("AllMachinesReady", "False")
        && is_past(&m.last_transition_time, clock.stuck_after, clock.now)
    {
        return unhealthy(
            MACHINES_STUCK,
            format!(
                "AllMachinesReady has been False for longer than {} ({}): {}. This does not look like progress any more: usually a GCP quota, a machine type not offered in the zone, or missing permissions of the nodePool service account. Check the project's quotas and the Machines of the NodePool in the control-plane namespace",
                friendly(clock.stuck_after),
                or_none(&m.reason),
                quote(&m.message)
            ),
        );
    }
    if status.is("ReconciliationActive", "False").is_some() {
        return unhealthy(
            RECONCILIATION_PAUSED,
            format!(
                "{}. HyperShift does not reconcile this NodePool: remove spec.pausedUntil (the adapter never sets it) or wait until it passes",
                state(status, "ReconciliationActive")
            ),
        );
    }
    no_issues("No NodePool problem reported")
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::type_complexity)]

    use std::time::Duration;

    use job_report::ConditionStatus;
    use serde_json::json;

    use super::*;

    const NOW: &str = "2026-11-26T12:00:00Z";

    fn clock() -> MachinesClock {
        MachinesClock {
            now: NOW.parse().unwrap(),
            stuck_after: Duration::from_secs(15 * 60),
        }
    }

    fn status(replicas: i64, conditions: &[(&str, &str, &str)]) -> NodePoolStatus {
        let conditions: Vec<Value> = conditions
            .iter()
            .map(|(t, s, r)| json!({"type": t, "status": s, "reason": r, "message": format!("{t} says {r}"), "lastTransitionTime": "2026-11-26T11:55:00Z"}))
            .collect();
        serde_json::from_value(
            json!({"replicas": replicas, "version": "4.17.0", "conditions": conditions}),
        )
        .unwrap()
    }

    const GCP3: Desired = Desired {
        platform_none: false,
        replicas: Some(3),
        autoscaling: None,
    };
    const NONE: Desired = Desired {
        platform_none: true,
        replicas: Some(2),
        autoscaling: None,
    };

    fn reason(c: &Condition) -> (ConditionStatus, &str) {
        (c.status, c.reason.as_str())
    }

    #[test]
    fn gcp_readiness_rows() {
        use ConditionStatus::{False, True};
        let rows: [(i64, &[(&str, &str, &str)], (ConditionStatus, &str)); 6] = [
            (
                3,
                &[("Ready", "True", "AsExpected")],
                (True, NODE_POOL_READY),
            ),
            (
                4,
                &[("Ready", "True", "AsExpected")],
                (True, NODE_POOL_READY),
            ),
            (
                0,
                &[("Ready", "False", "WaitingForNodeRef")],
                (False, PROVISIONING),
            ),
            (1, &[("Ready", "False", "ScalingUp")], (False, SCALING)),
            (
                2,
                &[
                    ("Ready", "False", "x"),
                    ("UpdatingVersion", "True", "AsExpected"),
                ],
                (False, UPDATING),
            ),
            (
                3,
                &[("Ready", "False", "TooManyUnhealthy")],
                (False, NOT_READY),
            ),
        ];
        for (replicas, conditions, want) in rows {
            let s = status(replicas, conditions);
            assert_eq!(
                reason(&available(&s, &GCP3)),
                want,
                "{replicas} {conditions:?}"
            );
        }
        // Ready with a rollout: not yet at the spec it was asked for (the nodes still serve the
        // previous one), and it says so.
        let s = status(
            3,
            &[
                ("Ready", "True", "AsExpected"),
                ("UpdatingConfig", "True", "x"),
            ],
        );
        let a = available(&s, &GCP3);
        assert_eq!(reason(&a), (False, UPDATING));
        assert!(
            a.message.contains("3 of 3 replicas available"),
            "{}",
            a.message
        );
        assert!(
            a.message.contains("rolling out a configuration update"),
            "{}",
            a.message
        );
        // Scaled to zero on purpose.
        let zero = Desired {
            replicas: Some(0),
            ..GCP3
        };
        assert_eq!(
            reason(&available(&status(0, &[]), &zero)),
            (True, NODE_POOL_READY)
        );
        // Autoscaling: ready from the minimum.
        let auto = Desired {
            replicas: None,
            autoscaling: Some((2, 5)),
            ..GCP3
        };
        let a = available(&status(2, &[("Ready", "True", "AsExpected")]), &auto);
        assert_eq!(reason(&a), (True, NODE_POOL_READY));
        assert!(a.message.contains("autoscaling 2–5"), "{}", a.message);
    }

    #[test]
    fn none_is_ready_once_the_payload_is_generated() {
        use ConditionStatus::{False, True};
        let generated = status(0, &[("ValidGeneratedPayload", "True", "AsExpected")]);
        let a = available(&generated, &NONE);
        assert_eq!(reason(&a), (True, NODE_POOL_READY));
        assert!(
            a.message.contains("no machine has fetched it yet"),
            "{}",
            a.message
        );
        let fetched = status(
            0,
            &[
                ("ValidGeneratedPayload", "True", "AsExpected"),
                ("ReachedIgnitionEndpoint", "True", "AsExpected"),
                // Normal for None, never a failure.
                ("AllMachinesReady", "False", "NotFound"),
                ("Ready", "False", "x"),
            ],
        );
        let a = available(&fetched, &NONE);
        assert!(
            a.message.contains("at least one machine has fetched it"),
            "{}",
            a.message
        );
        assert_eq!(
            reason(&health(&fetched, &NONE, clock())),
            (True, "NoIssues")
        );
        let waiting = status(
            0,
            &[
                ("ValidGeneratedPayload", "False", "WaitingForIgnition"),
                (
                    "IgnitionEndpointAvailable",
                    "False",
                    "IgnitionEndpointMissing",
                ),
            ],
        );
        let a = available(&waiting, &NONE);
        assert_eq!(reason(&a), (False, PROVISIONING));
        assert!(
            a.message.contains("IgnitionEndpointMissing"),
            "{}",
            a.message
        );
        let mut no_version = generated.clone();
        no_version.version.clear();
        assert_eq!(
            reason(&available(&no_version, &NONE)),
            (False, PROVISIONING)
        );
    }

    #[test]
    fn health_worst_first_with_the_node_pools_words() {
        use ConditionStatus::False;
        let refused = status(
            0,
            &[
                ("ValidReleaseImage", "False", "ValidationFailed"),
                ("AutoscalingEnabled", "False", "ValidationFailed"),
                ("SupportedVersionSkew", "False", "UnsupportedSkew"),
            ],
        );
        let h = health(&refused, &GCP3, clock());
        assert_eq!(reason(&h), (False, VALIDATION_FAILED));
        assert!(h.message.contains("ValidReleaseImage=False (ValidationFailed): ValidReleaseImage says ValidationFailed"), "{}", h.message);
        assert!(h.message.contains("AutoscalingEnabled"), "{}", h.message);
        // Fixed replicas report AutoscalingEnabled=False AsExpected: not a failure.
        let fixed = status(
            3,
            &[
                ("Ready", "True", "x"),
                ("AutoscalingEnabled", "False", "AsExpected"),
            ],
        );
        assert_eq!(health(&fixed, &GCP3, clock()).reason, "NoIssues");
        let skew = status(0, &[("SupportedVersionSkew", "False", "UnsupportedSkew")]);
        assert_eq!(
            reason(&health(&skew, &GCP3, clock())),
            (False, UNSUPPORTED_VERSION_SKEW)
        );
        let cidr = status(0, &[("ClusterNetworkCIDRConflict", "True", "CIDRConflict")]);
        assert_eq!(
            reason(&health(&cidr, &GCP3, clock())),
            (False, CLUSTER_NETWORK_CIDR_CONFLICT)
        );
        let paused = status(
            3,
            &[("ReconciliationActive", "False", "ReconciliationPaused")],
        );
        assert_eq!(
            reason(&health(&paused, &GCP3, clock())),
            (False, RECONCILIATION_PAUSED)
        );
    }

    #[test]
    fn a_refused_node_pool_that_is_not_ready_is_blocked_not_provisioning() {
        use ConditionStatus::{False, True};
        // The recorded state: the release image cannot be looked up, nothing else reported.
        let refused = [
            ("AutoscalingEnabled", "False", "AsExpected"),
            ("UpdateManagementEnabled", "True", "AsExpected"),
            ("ValidReleaseImage", "False", "ValidationFailed"),
        ];
        for desired in [GCP3, NONE] {
            let a = available(&status(0, &refused), &desired);
            assert_eq!(reason(&a), (False, BLOCKED), "{desired:?}");
            assert!(
                a.message.contains(
                    "HyperShift refuses part of the NodePool: ValidReleaseImage=False (ValidationFailed): ValidReleaseImage says ValidationFailed"
                ),
                "{}",
                a.message
            );
            assert!(!a.message.contains("AutoscalingEnabled"), "{}", a.message);
            assert_eq!(
                reason(&health(&status(0, &refused), &desired, clock())),
                (False, VALIDATION_FAILED)
            );
        }
        // A refusal during a rollout is still blocked: nothing rolls out past it.
        let rolling = status(
            1,
            &[
                ("Ready", "False", "x"),
                ("UpdatingVersion", "True", "AsExpected"),
                ("ValidMachineConfig", "False", "ValidationFailed"),
            ],
        );
        assert_eq!(reason(&available(&rolling, &GCP3)), (False, BLOCKED));
        // A ready NodePool stays available; Health says what is refused.
        let ready = status(
            3,
            &[
                ("Ready", "True", "AsExpected"),
                ("ValidMachineConfig", "False", "ValidationFailed"),
            ],
        );
        assert_eq!(reason(&available(&ready, &GCP3)), (True, NODE_POOL_READY));
        // Without a refusal the old reasons stay.
        assert_eq!(
            reason(&available(
                &status(0, &[("ValidReleaseImage", "True", "AsExpected")]),
                &GCP3
            )),
            (False, PROVISIONING)
        );
    }

    #[test]
    fn every_refused_type_is_a_type_read() {
        for t in REFUSED {
            assert!(types::ALL.contains(&t), "{t}");
        }
        let mut all = types::ALL.to_vec();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), types::ALL.len());
    }

    #[test]
    fn machines_not_ready_for_long_are_stuck_only_past_the_limit() {
        use ConditionStatus::{False, True};
        let recent = status(0, &[("AllMachinesReady", "False", "InsufficientQuota")]);
        assert_eq!(reason(&health(&recent, &GCP3, clock())), (True, "NoIssues"));
        let mut old = recent.clone();
        old.conditions[0].last_transition_time = "2026-11-26T11:44:59Z".into();
        let h = health(&old, &GCP3, clock());
        assert_eq!(reason(&h), (False, MACHINES_STUCK));
        assert!(
            h.message.contains("longer than 15m (InsufficientQuota)"),
            "{}",
            h.message
        );
        assert!(!h.message.contains("2026"), "no clock times: {}", h.message);
        // None has no machines; nothing is stuck.
        assert_eq!(reason(&health(&old, &NONE, clock())), (True, "NoIssues"));
        let mut unparsable = old.clone();
        unparsable.conditions[0].last_transition_time = "yesterday".into();
        assert_eq!(
            reason(&health(&unparsable, &GCP3, clock())),
            (True, "NoIssues")
        );
    }

    #[test]
    fn desired_is_read_from_the_held_node_pool() {
        let d = Desired::of(
            &json!({"spec": {"platform": {"type": "GCP"}, "autoScaling": {"min": 2, "max": 4}}}),
        );
        assert_eq!(
            d,
            Desired {
                platform_none: false,
                replicas: None,
                autoscaling: Some((2, 4))
            }
        );
        assert_eq!(d.wanted(), 2);
        let d = Desired::of(&json!({"spec": {"platform": {"type": "None"}}}));
        assert!(d.platform_none);
        assert_eq!(d.wanted(), 0);
    }

    #[test]
    fn node_versions_are_read_when_present() {
        let s: NodePoolStatus = serde_json::from_value(json!({
            "replicas": 3,
            "nodesInfo": {"nodeVersions": [
                {"ocpVersion": "4.17.0", "kubeletVersion": "v1.30.4", "readyNodeCount": 2, "unreadyNodeCount": 1}
            ]}
        }))
        .unwrap();
        assert_eq!(s.node_versions()[0].ready_node_count, 2);
        assert!(NodePoolStatus::default().node_versions().is_empty());
    }
}

/// Pins what [`available`] and [`health`] write over a grid of NodePool states (platform, desired
/// count, replicas, version, conditions): status, reason and message, byte for byte. The texts are
/// stored by HyperFleet and quoted by other tools; a change here must be deliberate.
#[cfg(test)]
mod pinned {
    #![allow(clippy::unwrap_used)]

    use std::fmt::Write as _;
    use std::time::Duration;

    use super::*;

    const RECENT: &str = "2026-11-26T11:55:00Z";
    const OLD: &str = "2026-11-26T11:00:00Z";

    /// `(type, status, reason, message, lastTransitionTime)`.
    type Row = [&'static str; 5];

    const READY: Row = ["Ready", "True", "AsExpected", "", RECENT];
    const NOT_READY_YET: Row = [
        "Ready",
        "False",
        "WaitingForNodeRef",
        "Machine workers-abc has no node yet (token=s3cr3t)",
        RECENT,
    ];
    const MACHINES_FALSE: Row = [
        "AllMachinesReady",
        "False",
        "InsufficientQuota",
        "1 of 3 machines are not ready",
        RECENT,
    ];
    const MACHINES_FALSE_LONG: Row = [
        "AllMachinesReady",
        "False",
        "",
        "quota 'CPUS' exceeded",
        OLD,
    ];
    const NODES_UNHEALTHY: Row = ["AllNodesHealthy", "False", "NodeNotHealthy", "", RECENT];
    const UPDATING_VERSION: Row = [
        "UpdatingVersion",
        "True",
        "AsExpected",
        "Updating version in progress. Target version: 4.17.1",
        RECENT,
    ];
    const UPDATING_CONFIG: Row = ["UpdatingConfig", "True", "", "", RECENT];
    const UPDATING_TEMPLATE: Row = [
        "UpdatingPlatformMachineTemplate",
        "True",
        "AsExpected",
        "machine template changed",
        RECENT,
    ];
    const NOT_UPDATING: Row = ["UpdatingVersion", "False", "AsExpected", "", RECENT];
    const REFUSED_RELEASE: Row = [
        "ValidReleaseImage",
        "False",
        "ValidationFailed",
        "failed to look up release image: unauthorized",
        RECENT,
    ];
    const REFUSED_MANAGEMENT: Row = [
        "UpdateManagementEnabled",
        "False",
        "ValidationFailed",
        "",
        RECENT,
    ];
    const REFUSED_PLATFORM: Row = [
        "ValidPlatformConfig",
        "False",
        "",
        "subnet not found",
        RECENT,
    ];
    const AUTOSCALING_REFUSED: Row = [
        "AutoscalingEnabled",
        "False",
        "ValidationFailed",
        "min must be at most max",
        RECENT,
    ];
    const AUTOSCALING_OFF: Row = ["AutoscalingEnabled", "False", "AsExpected", "", RECENT];
    const PAYLOAD: Row = ["ValidGeneratedPayload", "True", "AsExpected", "", RECENT];
    const NO_PAYLOAD: Row = [
        "ValidGeneratedPayload",
        "False",
        "WaitingForIgnition",
        "payload is being generated",
        RECENT,
    ];
    const FETCHED: Row = ["ReachedIgnitionEndpoint", "True", "AsExpected", "", RECENT];
    const NO_ENDPOINT: Row = [
        "IgnitionEndpointAvailable",
        "False",
        "IgnitionEndpointMissing",
        "",
        RECENT,
    ];
    const SKEW: Row = [
        "SupportedVersionSkew",
        "False",
        "UnsupportedSkew",
        "NodePool minor version 4.19 is newer than the control plane's 4.17",
        RECENT,
    ];
    const CIDR: Row = [
        "ClusterNetworkCIDRConflict",
        "True",
        "CIDRConflict",
        "machine network overlaps 10.132.0.0/14",
        RECENT,
    ];
    const PAUSED: Row = [
        "ReconciliationActive",
        "False",
        "ReconciliationPaused",
        "Reconciliation paused until 2026-12-01T00:00:00Z",
        RECENT,
    ];

    const SCENARIOS: &[&[Row]] = &[
        &[],
        &[READY],
        &[NOT_READY_YET],
        &[NOT_READY_YET, MACHINES_FALSE],
        &[NOT_READY_YET, MACHINES_FALSE, NODES_UNHEALTHY],
        &[READY, UPDATING_VERSION],
        &[NOT_READY_YET, UPDATING_CONFIG, UPDATING_TEMPLATE],
        &[READY, NOT_UPDATING, AUTOSCALING_OFF],
        &[NOT_READY_YET, UPDATING_VERSION, REFUSED_RELEASE],
        &[REFUSED_RELEASE, AUTOSCALING_REFUSED],
        &[REFUSED_MANAGEMENT, REFUSED_PLATFORM, NO_ENDPOINT],
        &[READY, REFUSED_PLATFORM],
        &[NOT_READY_YET, NO_ENDPOINT],
        &[PAYLOAD],
        &[PAYLOAD, FETCHED],
        &[NO_PAYLOAD, NO_ENDPOINT],
        &[NO_PAYLOAD, REFUSED_RELEASE],
        &[PAYLOAD, UPDATING_VERSION],
        &[NO_PAYLOAD, UPDATING_CONFIG, REFUSED_MANAGEMENT],
        &[READY, SKEW, CIDR, PAUSED],
        &[CIDR, PAUSED],
        &[MACHINES_FALSE_LONG, PAUSED],
        &[READY, MACHINES_FALSE_LONG],
        &[PAUSED],
    ];

    const DESIRED: [(&str, Desired); 4] = [
        (
            "GCP, 3 replicas",
            Desired {
                platform_none: false,
                replicas: Some(3),
                autoscaling: None,
            },
        ),
        (
            "GCP, no replicas",
            Desired {
                platform_none: false,
                replicas: None,
                autoscaling: None,
            },
        ),
        (
            "GCP, autoscaling 2-5",
            Desired {
                platform_none: false,
                replicas: None,
                autoscaling: Some((2, 5)),
            },
        ),
        (
            "None, 2 replicas",
            Desired {
                platform_none: true,
                replicas: Some(2),
                autoscaling: None,
            },
        ),
    ];

    /// `(status.replicas, status.version)`.
    const OBSERVED: [(i64, &str); 3] = [(0, ""), (2, "4.17.0"), (3, "4.17.0")];

    fn status(replicas: i64, version: &str, rows: &[Row]) -> NodePoolStatus {
        NodePoolStatus {
            replicas,
            version: version.to_owned(),
            conditions: rows
                .iter()
                .map(|[t, s, r, m, at]| NodePoolCondition {
                    type_: (*t).to_owned(),
                    status: (*s).to_owned(),
                    reason: (*r).to_owned(),
                    message: (*m).to_owned(),
                    last_transition_time: (*at).to_owned(),
                    observed_generation: Some(1),
                })
                .collect(),
            nodes_info: None,
        }
    }

    fn show(c: &Condition) -> String {
        format!(
            "{} {:?} {} {:?}: {}",
            c.type_, c.status, c.reason, c.last_transition_time, c.message
        )
    }

    #[test]
    fn available_and_health_over_a_grid_of_states() {
        let clock = MachinesClock {
            now: "2026-11-26T12:00:00Z".parse().unwrap(),
            stuck_after: Duration::from_secs(15 * 60),
        };
        let mut out = String::new();
        for rows in SCENARIOS {
            let types: Vec<String> = rows.iter().map(|[t, s, ..]| format!("{t}={s}")).collect();
            for (name, desired) in &DESIRED {
                for (replicas, version) in OBSERVED {
                    let s = status(replicas, version, rows);
                    let _ = writeln!(
                        out,
                        "[{name} | replicas {replicas} | version {version:?} | {}]",
                        types.join(", ")
                    );
                    let _ = writeln!(out, "{}", show(&available(&s, desired)));
                    if replicas == 3 {
                        let _ = writeln!(out, "{}", show(&health(&s, desired, clock)));
                    }
                }
            }
        }
        insta::assert_snapshot!("available_and_health_grid", out);
    }

    /// Every NodePool status the real operator recorded, each distinct reading once with the
    /// objects that give it.
    #[test]
    fn recorded_operator_states() {
        let Some(recorded) = crate::hypershift::recorded_objects("NodePool") else {
            return;
        };
        let clock = MachinesClock {
            now: "2026-11-26T15:00:00Z".parse().unwrap(),
            stuck_after: Duration::from_secs(15 * 60),
        };
        let mut readings: Vec<(String, Vec<String>)> = Vec::new();
        for (source, object) in recorded {
            let Some(status) = object.get("status") else {
                continue;
            };
            let status: NodePoolStatus = serde_json::from_value(status.clone()).unwrap();
            let desired = Desired::of(&object);
            let text = format!(
                "{desired:?} {:?}\n{}\n{}\n",
                status.node_versions(),
                show(&available(&status, &desired)),
                show(&health(&status, &desired, clock))
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
}
