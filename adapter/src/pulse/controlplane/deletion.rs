//! The reports of a cluster being deleted (`deleted_time` set): pure functions from what the
//! adapter saw to Applied / Available / Health plus the fourth condition `Finalized`
//! (`hyperfleet-framework.md` §6).
//!
//! The stages are the deletion rows of [`super::table::TABLE`].
//!
//! Every stage carries the deletion generation (the pulse's: the one the DELETE bumped), which
//! asks for no control plane: `Available` is never True about it.
//!
//! `Available` is never `Unknown` here: the HyperFleet API discards a report whose `Available` is
//! `Unknown` once the adapter has reported before (rule 13, `hyperfleet-framework.md` §7.4), and
//! with it the `Finalized` it carries.

use job_report::{Condition, ConditionStatus, Report};

use super::{WorkRef, hosted_cluster_object, report};
use crate::hyperfleet::nodepools::NodePools;
use crate::hypershift::hostedcluster;
use crate::message::{Conditions, cond, no_issues, quote};
use crate::work::deletion::{self as work_deletion, Deleting, Progress, with_finalized};
use crate::work::feedback::ObjectDeletion;

pub use crate::work::deletion::{
    CLEANUP_CONFIRMED, Clock, DELETED, DELETING, DELETION_REQUESTED, DELETION_STUCK, FINALIZED,
    FINALIZERS_RUNNING,
};
/// Reasons of the stages that hold the deletion while NodePools may exist.
pub const NODE_POOLS_EXIST: &str = "NodePoolsExist";
pub const NODE_POOLS_UNKNOWN: &str = "NodePoolsUnknown";

/// Where a deletion is, as this pulse saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    /// NodePools are listed; nothing was deleted.
    NodePoolsExist(NodePools),
    /// Whether NodePools exist could not be learnt (the text says why); nothing was deleted.
    NodePoolsUnknown(String),
    /// The work's deletion was requested (`now`: by this pulse); the HostedCluster is deleting
    /// as far as the agent reported (`hc`).
    Requested { now: bool, hc: ObjectDeletion },
    /// The work is gone from the management cluster.
    Gone,
}

/// Whether the deletion has lasted longer than allowed: `deleted_time` + `stuck_after` < `now`.
/// An unparsable `deleted_time` is never stuck (it is logged by the caller).
pub fn is_stuck(deleted_time: &str, clock: Clock) -> bool {
    work_deletion::is_late(deleted_time, clock)
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
    let deleting = Deleting {
        work,
        object: hosted_cluster_object(hc),
        deleted_time,
        stuck,
        known_finalizers: &hostedcluster::FINALIZERS,
        gone_meaning: "no control plane runs",
    };
    let (conditions, finalized) = match stage {
        Stage::NodePoolsExist(pools) => nodepools_exist(&deleting, pools, observed),
        Stage::NodePoolsUnknown(why) => nodepools_unknown(&deleting, why, observed),
        Stage::Requested { now, hc } => work_deletion::stage(
            &deleting,
            &Progress::Requested {
                now: *now,
                object: hc.clone(),
            },
        ),
        Stage::Gone => work_deletion::stage(&deleting, &Progress::Gone),
    };
    with_finalized(report(generation, conditions), finalized)
}

/// The HyperFleet API still lists the cluster's NodePools: nothing was deleted.
fn nodepools_exist(
    d: &Deleting<'_>,
    pools: &NodePools,
    observed: Option<&Report>,
) -> (Conditions, Condition) {
    let since = d.since();
    let names = pools.names();
    let applied = cond(
        "Applied",
        ConditionStatus::False,
        NODE_POOLS_EXIST,
        format!(
            "The cluster is being deleted{since}, but the HyperFleet API still lists its NodePools: {names}. Nothing was deleted: ManifestWork {} stays until they are gone (HyperFleet removes a NodePool once its adapters report Finalized=True)",
            d.work.name
        ),
    );
    let available = observed_available_or(observed, NODE_POOLS_EXIST, || {
        format!("The cluster is being deleted and waits for its NodePools ({names})")
    });
    let health = if d.stuck {
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
    ([applied, available, health], finalized)
}

/// Whether the cluster still has NodePools cannot be learnt (`why`): nothing was deleted.
fn nodepools_unknown(
    d: &Deleting<'_>,
    why: &str,
    observed: Option<&Report>,
) -> (Conditions, Condition) {
    let since = d.since();
    let applied = cond(
        "Applied",
        ConditionStatus::False,
        NODE_POOLS_UNKNOWN,
        format!(
            "The cluster is being deleted{since}, but whether it still has NodePools is unknown: {}. Nothing was deleted: ManifestWork {} stays until the NodePool list can be read",
            quote(why),
            d.work.name
        ),
    );
    let available = observed_available_or(observed, NODE_POOLS_UNKNOWN, || {
        "The cluster is being deleted and waits until its NodePools can be listed".to_owned()
    });
    let health = cond(
        "Health",
        ConditionStatus::False,
        if d.stuck {
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
    ([applied, available, health], finalized)
}

/// `Available` while nothing was deleted yet: False `reason` (the report describes the deletion
/// generation, which asks for no control plane: never True about it, never `Unknown`, which the
/// API would discard together with `Finalized`), the message saying what the running control
/// plane does meanwhile (`observed`, from the work's feedback).
fn observed_available_or(
    observed: Option<&Report>,
    reason: &str,
    message: impl FnOnce() -> String,
) -> Condition {
    let meanwhile = observed
        .and_then(|r| r.condition("Available"))
        .map_or_else(String::new, |a| {
            format!(
                "; meanwhile the HostedCluster on the management cluster: Available={} ({}): {}",
                a.status,
                crate::message::or_none(&a.reason),
                quote(&a.message)
            )
        });
    cond(
        "Available",
        ConditionStatus::False,
        reason,
        format!("{}{meanwhile}", message()),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::collections::BTreeMap;
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::work::ManifestStatus;
    use crate::work::WorkCondition;
    use crate::work::manifestwork::{DELETION_TIMESTAMP_FEEDBACK_NAME, FINALIZERS_FEEDBACK_NAME};
    use ConditionStatus::{False, True};
    use serde_json::Value;

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
    fn node_pools_hold_the_deletion_with_available_false_naming_what_serves() {
        // Never True about the deletion generation (it asks for no control plane), never
        // Unknown (the API would discard the report and its Finalized): False, saying what runs.
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
        let available = report.condition("Available").unwrap();
        assert_eq!(
            (available.status, available.reason.as_str()),
            (False, NODE_POOLS_EXIST)
        );
        assert!(
            available.message.contains("Available=False (Provisioning)"),
            "{}",
            available.message
        );
        let unknown = super::super::report_invalid_feedback(
            WORK,
            &super::super::FeedbackError::NotAnObject {
                found: "a number",
                kind: "HostedCluster",
            },
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
                hc: ObjectDeletion::default(),
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
        let hc = ObjectDeletion::from_manifest(Some(&manifest(
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
                ("Applied", False, CLEANUP_CONFIRMED),
                ("Available", False, DELETED),
                ("Health", True, "NoIssues"),
                ("Finalized", True, CLEANUP_CONFIRMED),
            ]
        );
    }

    #[test]
    fn finalizers_without_a_deletion_timestamp_are_not_a_deletion_stage() {
        // An HC that is not being deleted has finalizers too.
        let hc = ObjectDeletion::from_manifest(Some(&manifest(
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
        let hc = ObjectDeletion::from_manifest(Some(&manifest(&[], "False")));
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
    fn a_gone_hosted_cluster_is_not_reported_with_the_finalizers_of_its_last_feedback() {
        // The agent keeps the last feedback of an object that is gone: the recorded watch's
        // DELETED event still lists the finalizer and the deletion timestamp.
        let hc = ObjectDeletion::from_manifest(Some(&manifest(
            &[
                ("deletionTimestamp", json!("2026-11-26T14:37:59Z")),
                ("finalizers", json!(["hypershift.openshift.io/finalizer"])),
            ],
            "False",
        )));
        assert!(hc.gone);
        let report = report_deletion(
            WORK,
            HC,
            &Stage::Requested { now: false, hc },
            None,
            DELETED_AT,
            false,
            Some(5),
        );
        let finalized = report.condition(FINALIZED).unwrap();
        assert_eq!(finalized.reason, DELETION_REQUESTED);
        assert!(
            finalized
                .message
                .contains("is gone from management cluster"),
            "{}",
            finalized.message
        );
    }

    #[test]
    fn a_stuck_deletion_names_the_finalizers_and_what_holds_them() {
        let hc = ObjectDeletion {
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
                hc: ObjectDeletion::default(),
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
