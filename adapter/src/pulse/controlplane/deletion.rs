//! The reports of a cluster being deleted (`deleted_time` set): pure functions from what the
//! adapter saw to Applied / Available / Health plus the fourth condition `Finalized`
//! (`hyperfleet-framework.md` §6).
//!
//! Stages, in order (reason of `Finalized`):
//!
//! | stage | Applied | Available | Health | Finalized |
//! |---|---|---|---|---|
//! | NodePools of the cluster still listed by the HyperFleet API (nothing deleted) | False `NodePoolsExist` | from the work's feedback; without a work False `NodePoolsExist` | True `NoIssues` | False `NodePoolsExist` |
//! | the NodePool list cannot be read (API error; `--cluster-spec` without `--nodepools-file`; nothing deleted) | False `NodePoolsUnknown` | as above | False `NodePoolsUnknown` | False `NodePoolsUnknown` |
//! | deletion of the work requested, the HostedCluster not yet reported as deleting | True `DeletionRequested` | False `Deleting` | True `NoIssues` | False `DeletionRequested` |
//! | the HostedCluster has a `deletionTimestamp`, finalizers named | True `DeletionRequested` | False `Deleting` | True `NoIssues` | False `FinalizersRunning` |
//! | any of the above, longer than `--deletion-stuck-after` after `deleted_time` | | | False `DeletionStuck` | (unchanged) |
//! | the work is gone from the management cluster | True `CleanupConfirmed` | False `Deleted` | True `NoIssues` | True `CleanupConfirmed` |
//!
//! `Available` is never `Unknown` here: the HyperFleet API discards a report whose `Available` is
//! `Unknown` once the adapter has reported before (rule 13, `hyperfleet-framework.md` §7.4), and
//! with it the `Finalized` it carries.

use job_report::{Condition, ConditionStatus, Report};
use serde_json::Value;

use super::{WorkRef, cond, no_issues, quote, report};
use crate::work::ManifestStatus;

/// The fourth condition type, present only while the cluster is being deleted.
pub const FINALIZED: &str = "Finalized";
/// Reasons of the deletion stages.
pub const NODE_POOLS_EXIST: &str = "NodePoolsExist";
pub const NODE_POOLS_UNKNOWN: &str = "NodePoolsUnknown";
pub const DELETION_REQUESTED: &str = "DeletionRequested";
pub const FINALIZERS_RUNNING: &str = "FinalizersRunning";
pub const CLEANUP_CONFIRMED: &str = "CleanupConfirmed";
pub const DELETION_STUCK: &str = "DeletionStuck";
/// Available's reasons while deleting and once deleted.
pub const DELETING: &str = "Deleting";
pub const DELETED: &str = "Deleted";
/// Feedback values that carry the HostedCluster's `.metadata.finalizers` and
/// `.metadata.deletionTimestamp` (see [`crate::work::manifestwork`]).
pub const FINALIZERS_FEEDBACK_NAME: &str = "finalizers";
pub const DELETION_TIMESTAMP_FEEDBACK_NAME: &str = "deletionTimestamp";

/// The HyperShift finalizers on a HostedCluster and what usually holds each
/// (`hypershift-api.md` §5).
const KNOWN_FINALIZERS: [(&str, &str); 2] = [
    (
        "hypershift.openshift.io/finalizer",
        "removed by the HyperShift operator at the end of its deletion sequence: it deletes the NodePools and waits for the CAPI Cluster <infraID> (machines), the GCPPrivateServiceConnect objects in the control-plane namespace (they hold their own finalizers until their GCP resources are removed), the HostedControlPlane (see the HostedCluster's CloudResourcesDestroyed condition) and the control-plane namespace clusters-<name>; an annotation hypershift.openshift.io/destroy-grace-period also keeps the object for that period (HostedClusterDestroyed=True, WaitingForGracePeriod). Look at the hypershift-operator logs for the step it retries and at those objects",
    ),
    (
        "hypershift.io/gcp-oidc-discovery",
        "removed once the operator has deleted the <infraID>-prefixed OIDC documents from its GCS bucket; if the operator lost its bucket configuration deletion errors until someone deletes those objects and removes the finalizer by hand",
    ),
];

/// A NodePool the HyperFleet API still lists for the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePoolRef {
    pub id: String,
    pub name: String,
    /// Its own `deleted_time` when it is being deleted too.
    pub deleted_time: Option<String>,
}

impl std::fmt::Display for NodePoolRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = if self.name.is_empty() {
            "<unnamed>"
        } else {
            &self.name
        };
        write!(f, "{name} ({}", self.id)?;
        if let Some(t) = &self.deleted_time {
            write!(f, ", deleting since {t}")?;
        }
        write!(f, ")")
    }
}

/// The NodePools listed (one page) and how many the API counts in all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodePools {
    pub items: Vec<NodePoolRef>,
    pub total: usize,
}

impl NodePools {
    /// Reads a `NodePoolList` (`{items, page, size, total}`); `None` when it is not one.
    pub fn from_list(list: &Value) -> Option<NodePools> {
        let items = list.get("items")?.as_array()?;
        let items: Vec<NodePoolRef> = items
            .iter()
            .map(|np| NodePoolRef {
                id: np["id"].as_str().unwrap_or_default().to_owned(),
                name: np["name"].as_str().unwrap_or_default().to_owned(),
                deleted_time: np["deleted_time"].as_str().map(str::to_owned),
            })
            .collect();
        let total = list
            .get("total")
            .and_then(Value::as_u64)
            .and_then(|t| usize::try_from(t).ok())
            .unwrap_or(items.len())
            .max(items.len());
        Some(NodePools { items, total })
    }

    /// Whether any NodePool is listed.
    pub fn any(&self) -> bool {
        self.total > 0
    }

    /// `a (id), b (id, deleting since …)`, at most 10, then `and N more`.
    fn names(&self) -> String {
        const MAX: usize = 10;
        let mut text = self
            .items
            .iter()
            .take(MAX)
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let shown = self.items.len().min(MAX);
        if self.total > shown {
            if !text.is_empty() {
                text.push_str(", ");
            }
            text.push_str(&format!("and {} more", self.total - shown));
        }
        text
    }
}

/// What the work agent reports about the HostedCluster's deletion, from the HostedCluster
/// manifest's feedback and conditions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostedClusterDeletion {
    /// `.metadata.deletionTimestamp`, once the agent has fed it back.
    pub deletion_timestamp: Option<String>,
    /// `.metadata.finalizers` as fed back (empty when none or not reported).
    pub finalizers: Vec<String>,
    /// The agent reports the HostedCluster manifest `Available=False`: it is gone from the
    /// management cluster, the work itself is still being removed.
    pub gone: bool,
}

impl HostedClusterDeletion {
    /// Reads the feedback values [`DELETION_TIMESTAMP_FEEDBACK_NAME`] (a string) and
    /// [`FINALIZERS_FEEDBACK_NAME`] (an array of strings, or a string holding that JSON).
    pub fn from_manifest(manifest: Option<&ManifestStatus>) -> HostedClusterDeletion {
        let Some(manifest) = manifest else {
            return HostedClusterDeletion::default();
        };
        let deletion_timestamp = manifest
            .values
            .get(DELETION_TIMESTAMP_FEEDBACK_NAME)
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        let finalizers = match manifest.values.get(FINALIZERS_FEEDBACK_NAME) {
            Some(Value::String(raw)) => serde_json::from_str::<Value>(raw).unwrap_or(Value::Null),
            Some(other) => other.clone(),
            None => Value::Null,
        };
        let finalizers = finalizers
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let gone = manifest
            .condition("Available")
            .is_some_and(|c| c.status == "False");
        HostedClusterDeletion {
            deletion_timestamp,
            finalizers,
            gone,
        }
    }
}

/// Where a deletion is, as this pulse saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    /// NodePools are listed; nothing was deleted.
    NodePoolsExist(NodePools),
    /// Whether NodePools exist could not be learnt (the text says why); nothing was deleted.
    NodePoolsUnknown(String),
    /// The work's deletion was requested (`now`: by this pulse); the HostedCluster is deleting
    /// as far as the agent reported (`hc`).
    Requested {
        now: bool,
        hc: HostedClusterDeletion,
    },
    /// The work is gone from the management cluster.
    Gone,
}

/// The time after `deleted_time` past which a deletion that is not done is reported stuck.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub now: jiff::Timestamp,
    pub stuck_after: std::time::Duration,
}

/// Whether the deletion has lasted longer than allowed: `deleted_time` + `stuck_after` < `now`.
/// An unparsable `deleted_time` is never stuck (it is logged by the caller).
pub fn is_stuck(deleted_time: &str, clock: Clock) -> bool {
    let Ok(deleted) = deleted_time.parse::<jiff::Timestamp>() else {
        return false;
    };
    let Ok(limit) = jiff::SignedDuration::try_from(clock.stuck_after) else {
        return false;
    };
    deleted
        .checked_add(limit)
        .is_ok_and(|deadline| clock.now > deadline)
}

/// The report of a deleting cluster at `stage`. `observed` is the ordinary report of the work
/// (Available/Health from its feedback) used while NodePools hold the deletion; `hc` is the
/// HostedCluster's `(namespace, name)` for messages.
pub fn report_deletion(
    work: WorkRef<'_>,
    hc: (&str, &str),
    stage: &Stage,
    observed: Option<&Report>,
    deleted_time: &str,
    stuck: bool,
    generation: Option<i64>,
) -> Report {
    let (namespace, name) = hc;
    let since = if deleted_time.is_empty() {
        String::new()
    } else {
        format!(" (deleted in HyperFleet at {deleted_time})")
    };
    let deleting = || {
        cond(
            "Available",
            ConditionStatus::False,
            DELETING,
            format!(
                "The cluster is being deleted{since}; HostedCluster {namespace}/{name} on management cluster {} is going away",
                work.consumer
            ),
        )
    };
    let (applied, available, health, finalized) = match stage {
        Stage::NodePoolsExist(pools) => {
            let names = pools.names();
            let applied = cond(
                "Applied",
                ConditionStatus::False,
                NODE_POOLS_EXIST,
                format!(
                    "The cluster is being deleted{since}, but the HyperFleet API still lists its NodePools: {names}. Nothing was deleted: ManifestWork {} stays until they are gone (HyperFleet removes a NodePool once its adapters report Finalized=True)",
                    work.name
                ),
            );
            let available = observed_available_or(observed, NODE_POOLS_EXIST, || {
                format!("The cluster is being deleted and waits for its NodePools ({names})")
            });
            let health = if stuck {
                cond(
                    "Health",
                    ConditionStatus::False,
                    DELETION_STUCK,
                    format!(
                        "The deletion{since} has not finished in time: NodePools still listed: {names}. Check each NodePool's adapter reports (GET /api/hyperfleet/v1/clusters/<id>/nodepools/<id>/statuses) and why they do not report Finalized=True"
                    ),
                )
            } else {
                no_issues("No problem with the deletion so far")
            };
            let finalized = cond(
                FINALIZED,
                ConditionStatus::False,
                NODE_POOLS_EXIST,
                format!("Waiting for the cluster's NodePools to be deleted first: {names}"),
            );
            (applied, available, health, finalized)
        }
        Stage::NodePoolsUnknown(why) => {
            let applied = cond(
                "Applied",
                ConditionStatus::False,
                NODE_POOLS_UNKNOWN,
                format!(
                    "The cluster is being deleted{since}, but whether it still has NodePools is unknown: {}. Nothing was deleted: ManifestWork {} stays until the NodePool list can be read",
                    quote(why),
                    work.name
                ),
            );
            let available = observed_available_or(observed, NODE_POOLS_UNKNOWN, || {
                "The cluster is being deleted and waits until its NodePools can be listed"
                    .to_owned()
            });
            let health = cond(
                "Health",
                ConditionStatus::False,
                if stuck {
                    DELETION_STUCK
                } else {
                    NODE_POOLS_UNKNOWN
                },
                format!(
                    "The deletion is held until the cluster's NodePools can be listed ({}): give the adapter --hyperfleet-api (HYPERFLEET_API_URL), or with --cluster-spec a --nodepools-file (NODEPOOLS_FILE) holding the list ({{\"items\": [], \"total\": 0}} when there are none)",
                    quote(why)
                ),
            );
            let finalized = cond(
                FINALIZED,
                ConditionStatus::False,
                NODE_POOLS_UNKNOWN,
                "Waiting until the cluster's NodePools can be listed".to_owned(),
            );
            (applied, available, health, finalized)
        }
        Stage::Requested { now, hc } => {
            let requested = if *now {
                format!(
                    "Deletion of ManifestWork {} on management cluster {} requested by this pulse",
                    work.name, work.consumer
                )
            } else {
                format!(
                    "Deletion of ManifestWork {} on management cluster {} was requested; it is still there",
                    work.name, work.consumer
                )
            };
            let applied = cond(
                "Applied",
                ConditionStatus::True,
                DELETION_REQUESTED,
                requested.clone(),
            );
            let finalizers = hc.finalizers.join(", ");
            let finalized = if hc.deletion_timestamp.is_some() && !hc.finalizers.is_empty() {
                cond(
                    FINALIZED,
                    ConditionStatus::False,
                    FINALIZERS_RUNNING,
                    format!(
                        "HostedCluster {namespace}/{name} is being deleted (since {}); finalizers still running: {finalizers}",
                        hc.deletion_timestamp.as_deref().unwrap_or_default()
                    ),
                )
            } else if hc.gone {
                cond(
                    FINALIZED,
                    ConditionStatus::False,
                    DELETION_REQUESTED,
                    format!(
                        "HostedCluster {namespace}/{name} is gone from management cluster {}; waiting for the work agent to remove ManifestWork {}",
                        work.consumer, work.name
                    ),
                )
            } else {
                cond(
                    FINALIZED,
                    ConditionStatus::False,
                    DELETION_REQUESTED,
                    format!(
                        "{requested}; the work agent has not reported HostedCluster {namespace}/{name} as deleting yet"
                    ),
                )
            };
            let health = if stuck {
                cond(
                    "Health",
                    ConditionStatus::False,
                    DELETION_STUCK,
                    stuck_guidance(work, (namespace, name), hc, &since),
                )
            } else {
                no_issues("No problem with the deletion so far")
            };
            (applied, deleting(), health, finalized)
        }
        Stage::Gone => (
            cond(
                "Applied",
                ConditionStatus::True,
                CLEANUP_CONFIRMED,
                format!(
                    "ManifestWork {} is gone from management cluster {}: the HostedCluster was deleted",
                    work.name, work.consumer
                ),
            ),
            cond(
                "Available",
                ConditionStatus::False,
                DELETED,
                format!(
                    "The cluster was deleted{since}; no control plane runs on management cluster {}",
                    work.consumer
                ),
            ),
            no_issues("Deletion completed"),
            cond(
                FINALIZED,
                ConditionStatus::True,
                CLEANUP_CONFIRMED,
                format!(
                    "HostedCluster {namespace}/{name} and ManifestWork {} are gone from management cluster {}",
                    work.name, work.consumer
                ),
            ),
        ),
    };
    with_finalized(
        report(generation, [applied, available, health], "", ""),
        finalized,
    )
}

/// `Available` while nothing was deleted yet: the running control plane's, from the work's
/// feedback (`observed`), unless that is `Unknown` (the API would discard the report, and its
/// `Finalized` with it); else False `reason` with `message`.
fn observed_available_or(
    observed: Option<&Report>,
    reason: &str,
    message: impl FnOnce() -> String,
) -> Condition {
    observed
        .and_then(|r| r.condition("Available"))
        .filter(|a| a.status != ConditionStatus::Unknown)
        .cloned()
        .unwrap_or_else(|| cond("Available", ConditionStatus::False, reason, message()))
}

fn with_finalized(mut report: Report, finalized: Condition) -> Report {
    report.conditions.push(finalized);
    report
}

/// Health's message for a deletion that takes too long: the finalizers and what usually holds
/// them, or, when the agent did not feed them back, how to read them.
fn stuck_guidance(
    work: WorkRef<'_>,
    (namespace, name): (&str, &str),
    hc: &HostedClusterDeletion,
    since: &str,
) -> String {
    let mut message = format!("The deletion{since} has not finished in time. ");
    if hc.gone {
        message.push_str(&format!(
            "HostedCluster {namespace}/{name} is gone, but ManifestWork {} is still on management cluster {}: check the work agent there (its AppliedManifestWork carries the finalizer cluster.open-cluster-management.io/applied-manifest-work-cleanup)",
            work.name, work.consumer
        ));
        return message;
    }
    if hc.finalizers.is_empty() {
        message.push_str(&format!(
            "The work agent has not reported the finalizers of HostedCluster {namespace}/{name}; read them on management cluster {}: kubectl get hostedcluster -n {namespace} {name} -o jsonpath='{{.metadata.finalizers}}'. ",
            work.consumer
        ));
        for (finalizer, held_by) in KNOWN_FINALIZERS {
            message.push_str(&format!("{finalizer} is {held_by}. "));
        }
        return message.trim_end().to_owned();
    }
    message.push_str(&format!(
        "HostedCluster {namespace}/{name} on management cluster {} still has finalizers: ",
        work.consumer
    ));
    let parts: Vec<String> = hc
        .finalizers
        .iter()
        .map(|f| match KNOWN_FINALIZERS.iter().find(|(k, _)| k == f) {
            Some((_, held_by)) => format!("{f} is {held_by}"),
            None => format!(
                "{} is not one HyperShift sets: find the controller that added it",
                quote(f)
            ),
        })
        .collect();
    message.push_str(&parts.join("; "));
    message
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::collections::BTreeMap;
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::work::WorkCondition;
    use ConditionStatus::{False, True};

    const WORK: WorkRef<'static> = WorkRef {
        consumer: "us-east-mgmt-01",
        name: "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
    };
    const HC: (&str, &str) = ("clusters", "prod-eu-1");
    const DELETED_AT: &str = "2026-11-26T10:00:00Z";

    fn summary(report: &Report) -> Vec<(&str, ConditionStatus, &str)> {
        report
            .conditions
            .iter()
            .map(|c| (c.type_.as_str(), c.status, c.reason.as_str()))
            .collect()
    }

    #[track_caller]
    fn valid(report: &Report) {
        job_report::validate(report).unwrap();
        assert_eq!(report.conditions.len(), 4);
        assert!(
            report
                .conditions
                .iter()
                .all(|c| c.type_ != "Available" || c.status != ConditionStatus::Unknown),
            "Available=Unknown would be discarded with the Finalized it carries"
        );
    }

    fn pools() -> NodePools {
        NodePools::from_list(&json!({
            "items": [
                {"id": "019a6f20-0000-7000-8000-000000000001", "name": "workers-a", "deleted_time": "2026-11-26T10:00:00Z"},
                {"id": "019a6f20-0000-7000-8000-000000000002", "name": "workers-b"}
            ],
            "page": 1, "size": 2, "total": 2
        }))
        .unwrap()
    }

    fn manifest(values: &[(&str, Value)], available: &str) -> ManifestStatus {
        ManifestStatus {
            conditions: vec![WorkCondition {
                type_: "Available".into(),
                status: available.into(),
                ..Default::default()
            }],
            values: values
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
            ..Default::default()
        }
    }

    #[test]
    fn node_pools_hold_the_deletion_and_are_named() {
        let report = report_deletion(
            WORK,
            HC,
            &Stage::NodePoolsExist(pools()),
            None,
            DELETED_AT,
            false,
            Some(5),
        );
        valid(&report);
        assert_eq!(
            summary(&report),
            [
                ("Applied", False, NODE_POOLS_EXIST),
                ("Available", False, NODE_POOLS_EXIST),
                ("Health", True, "NoIssues"),
                ("Finalized", False, NODE_POOLS_EXIST),
            ]
        );
        let applied = &report.condition("Applied").unwrap().message;
        assert!(applied.contains("workers-a (019a6f20-0000-7000-8000-000000000001, deleting since 2026-11-26T10:00:00Z)"), "{applied}");
        assert!(applied.contains("workers-b"), "{applied}");
        assert!(applied.contains("Nothing was deleted"), "{applied}");
        assert_eq!(report.observed_generation, Some(5));
    }

    #[test]
    fn node_pools_keep_the_observed_availability_unless_unknown() {
        let observed = super::super::report_created(WORK, Some(4));
        let report = report_deletion(
            WORK,
            HC,
            &Stage::NodePoolsExist(pools()),
            Some(&observed),
            DELETED_AT,
            false,
            Some(5),
        );
        assert_eq!(
            report.condition("Available").unwrap().reason,
            "Provisioning"
        );
        let unknown = super::super::report_invalid_feedback(
            WORK,
            &super::super::FeedbackError::NotAnObject("a number"),
            Some(4),
        );
        let report = report_deletion(
            WORK,
            HC,
            &Stage::NodePoolsExist(pools()),
            Some(&unknown),
            DELETED_AT,
            false,
            Some(5),
        );
        valid(&report);
    }

    #[test]
    fn unknown_node_pools_hold_the_deletion_and_say_what_to_set() {
        let report = report_deletion(
            WORK,
            HC,
            &Stage::NodePoolsUnknown("no NodePool list for a --cluster-spec cluster".into()),
            None,
            DELETED_AT,
            false,
            Some(5),
        );
        valid(&report);
        assert_eq!(
            summary(&report),
            [
                ("Applied", False, NODE_POOLS_UNKNOWN),
                ("Available", False, NODE_POOLS_UNKNOWN),
                ("Health", False, NODE_POOLS_UNKNOWN),
                ("Finalized", False, NODE_POOLS_UNKNOWN),
            ]
        );
        assert!(
            report
                .condition("Health")
                .unwrap()
                .message
                .contains("NODEPOOLS_FILE")
        );
    }

    #[test]
    fn many_node_pools_are_cut_at_ten() {
        let items: Vec<Value> = (0..12)
            .map(|i| json!({"id": format!("019a6f20-0000-7000-8000-0000000000{i:02}"), "name": format!("np-{i}")}))
            .collect();
        let pools = NodePools::from_list(&json!({"items": items, "total": 40})).unwrap();
        assert!(pools.names().ends_with("and 30 more"), "{}", pools.names());
        assert!(!pools.names().contains("np-10"));
        assert!(NodePools::from_list(&json!({"items": []})).is_some_and(|p| !p.any()));
        assert!(NodePools::from_list(&json!([])).is_none());
    }

    #[test]
    fn requested_then_finalizers_running_then_gone() {
        let requested = report_deletion(
            WORK,
            HC,
            &Stage::Requested {
                now: true,
                hc: HostedClusterDeletion::default(),
            },
            None,
            DELETED_AT,
            false,
            Some(5),
        );
        valid(&requested);
        assert_eq!(
            summary(&requested),
            [
                ("Applied", True, DELETION_REQUESTED),
                ("Available", False, DELETING),
                ("Health", True, "NoIssues"),
                ("Finalized", False, DELETION_REQUESTED),
            ]
        );
        let hc = HostedClusterDeletion::from_manifest(Some(&manifest(
            &[
                (
                    DELETION_TIMESTAMP_FEEDBACK_NAME,
                    json!("2026-11-26T10:00:05Z"),
                ),
                (
                    FINALIZERS_FEEDBACK_NAME,
                    json!(
                        "[\"hypershift.openshift.io/finalizer\",\"hypershift.io/gcp-oidc-discovery\"]"
                    ),
                ),
            ],
            "True",
        )));
        assert_eq!(hc.finalizers.len(), 2);
        let running = report_deletion(
            WORK,
            HC,
            &Stage::Requested { now: false, hc },
            None,
            DELETED_AT,
            false,
            Some(5),
        );
        valid(&running);
        let finalized = running.condition(FINALIZED).unwrap();
        assert_eq!(finalized.reason, FINALIZERS_RUNNING);
        assert!(
            finalized
                .message
                .contains("hypershift.openshift.io/finalizer, hypershift.io/gcp-oidc-discovery"),
            "{}",
            finalized.message
        );
        let gone = report_deletion(WORK, HC, &Stage::Gone, None, DELETED_AT, false, Some(5));
        valid(&gone);
        assert_eq!(
            summary(&gone),
            [
                ("Applied", True, CLEANUP_CONFIRMED),
                ("Available", False, DELETED),
                ("Health", True, "NoIssues"),
                ("Finalized", True, CLEANUP_CONFIRMED),
            ]
        );
    }

    #[test]
    fn finalizers_without_a_deletion_timestamp_are_not_a_deletion_stage() {
        // An HC that is not being deleted has finalizers too.
        let hc = HostedClusterDeletion::from_manifest(Some(&manifest(
            &[(
                FINALIZERS_FEEDBACK_NAME,
                json!(["hypershift.openshift.io/finalizer"]),
            )],
            "True",
        )));
        let report = report_deletion(
            WORK,
            HC,
            &Stage::Requested { now: false, hc },
            None,
            DELETED_AT,
            false,
            Some(5),
        );
        assert_eq!(
            report.condition(FINALIZED).unwrap().reason,
            DELETION_REQUESTED
        );
    }

    #[test]
    fn a_hosted_cluster_gone_while_the_work_remains_says_so() {
        let hc = HostedClusterDeletion::from_manifest(Some(&manifest(&[], "False")));
        assert!(hc.gone);
        let report = report_deletion(
            WORK,
            HC,
            &Stage::Requested { now: false, hc },
            None,
            DELETED_AT,
            true,
            Some(5),
        );
        assert!(
            report
                .condition(FINALIZED)
                .unwrap()
                .message
                .contains("gone")
        );
        let health = report.condition("Health").unwrap();
        assert_eq!(health.reason, DELETION_STUCK);
        assert!(
            health.message.contains("applied-manifest-work-cleanup"),
            "{}",
            health.message
        );
    }

    #[test]
    fn a_stuck_deletion_names_the_finalizers_and_what_holds_them() {
        let hc = HostedClusterDeletion {
            deletion_timestamp: Some("2026-11-26T10:00:05Z".into()),
            finalizers: vec![
                "hypershift.io/gcp-oidc-discovery".into(),
                "example.com/custom".into(),
            ],
            gone: false,
        };
        let report = report_deletion(
            WORK,
            HC,
            &Stage::Requested { now: false, hc },
            None,
            DELETED_AT,
            true,
            Some(5),
        );
        valid(&report);
        let health = report.condition("Health").unwrap();
        assert_eq!(
            (health.status, health.reason.as_str()),
            (False, DELETION_STUCK)
        );
        assert!(health.message.contains("GCS bucket"), "{}", health.message);
        assert!(
            health
                .message
                .contains("\"example.com/custom\" is not one HyperShift sets")
                || health
                    .message
                    .contains("example.com/custom is not one HyperShift sets"),
            "{}",
            health.message
        );
        assert!(
            !health.message.contains("CAPI Cluster"),
            "{}",
            health.message
        );
        // Without fed-back finalizers: how to read them, and both known ones explained.
        let report = report_deletion(
            WORK,
            HC,
            &Stage::Requested {
                now: false,
                hc: HostedClusterDeletion::default(),
            },
            None,
            DELETED_AT,
            true,
            Some(5),
        );
        let health = &report.condition("Health").unwrap().message;
        assert!(
            health.contains("kubectl get hostedcluster -n clusters prod-eu-1"),
            "{health}"
        );
        assert!(
            health.contains(
                "hypershift.openshift.io/finalizer is removed by the HyperShift operator"
            ),
            "{health}"
        );
        // NodePools: the stuck message names them.
        let report = report_deletion(
            WORK,
            HC,
            &Stage::NodePoolsExist(pools()),
            None,
            DELETED_AT,
            true,
            Some(5),
        );
        let health = report.condition("Health").unwrap();
        assert_eq!(health.reason, DELETION_STUCK);
        assert!(health.message.contains("workers-b"));
    }

    #[test]
    fn stuck_is_measured_from_deleted_time() {
        let clock = |now: &str| Clock {
            now: now.parse().unwrap(),
            stuck_after: Duration::from_secs(30 * 60),
        };
        assert!(!is_stuck(DELETED_AT, clock("2026-11-26T10:30:00Z")));
        assert!(is_stuck(DELETED_AT, clock("2026-11-26T10:30:01Z")));
        assert!(!is_stuck("yesterday", clock("2026-11-27T10:30:01Z")));
        assert!(!is_stuck("", clock("2026-11-27T10:30:01Z")));
    }
}
