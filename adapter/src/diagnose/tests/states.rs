//! Characterization: the whole chain (every link's mark, evidence, meaning and action, and the
//! verdict) for states the testbed suites do not reach, on objects with a valid spec
//! (`tests/fixtures/cluster-valid.json`, `nodepool-valid.json`) and works labelled as the
//! pulse labels them, so that the pulse's own plan can step over them. Snapshots under
//! `snapshots/`.

use serde_json::{Value, json};

use super::{CLUSTER, NODEPOOL, bundle, hosted_cluster, observations, settings};
use crate::diagnose::chain::Diagnosis;
use crate::diagnose::judge::{Kind, Observations, Settings};
use crate::diagnose::judge_all;
use crate::diagnose::read::Pulses;
use crate::work::maestro::bundle::ResourceBundle;

const NODEPOOL_VALID: &str = include_str!("../../../tests/fixtures/nodepool-valid.json");

/// Every link with its meaning and action, then the verdict.
fn render(d: &Diagnosis) -> String {
    let mut out = String::new();
    for link in &d.links {
        out.push_str(&format!(
            "{} {}: {}\n",
            link.mark.symbol(),
            link.id,
            link.evidence
        ));
        if !link.meaning.is_empty() {
            out.push_str(&format!("    meaning: {}\n", link.meaning));
        }
        if !link.action.is_empty() {
            out.push_str(&format!("    action: {}\n", link.action));
        }
    }
    out.push_str(&format!(
        "verdict: {} (exit {})\n",
        d.verdict.summary, d.exit_code
    ));
    out
}

/// The valid cluster at `generation`, its precondition met there, deleted at `deleted`.
fn cluster(generation: i64, deleted: Option<&str>) -> Value {
    let mut object: Value =
        serde_json::from_str(crate::hyperfleet::cluster::fixture::VALID).unwrap();
    object["generation"] = json!(generation);
    object["status"] = json!({"conditions": [{"type": "ValidationSuccessful", "status": "True",
        "observed_generation": generation, "reason": "Ready"}]});
    if let Some(at) = deleted {
        object["deleted_time"] = json!(at);
    }
    object
}

/// The valid NodePool at `generation`, its precondition met there.
fn nodepool(generation: i64) -> Value {
    let mut object: Value = serde_json::from_str(NODEPOOL_VALID).unwrap();
    object["id"] = json!(NODEPOOL);
    object["owner_references"]["id"] = json!(CLUSTER);
    object["generation"] = json!(generation);
    object["status"] = json!({"conditions": [{"type": "ValidationSuccessful", "status": "True",
        "observed_generation": generation, "reason": "Ready"}]});
    object
}

/// `work` labelled as the pulse of `kind` labels its work, named as it names it, holding
/// `generation` (`None`: no generation annotation).
fn ours(mut work: ResourceBundle, kind: Kind, generation: Option<i64>) -> ResourceBundle {
    let (name, owner) = match kind {
        Kind::Cluster => (
            crate::work::manifestwork::hosted_cluster_work_name(CLUSTER),
            crate::pulse::controlplane::owner(CLUSTER),
        ),
        Kind::NodePool => (
            crate::work::manifestwork::node_pool_work_name(NODEPOOL),
            crate::pulse::nodepool::owner(CLUSTER, NODEPOOL),
        ),
    };
    let labels: serde_json::Map<String, Value> = owner
        .labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), json!(v)))
        .collect();
    work.metadata["name"] = json!(name);
    work.metadata["labels"] = Value::Object(labels);
    work.metadata["annotations"] = match generation {
        Some(g) => json!({"hyperfleet.io/generation": g.to_string()}),
        None => json!({}),
    };
    work
}

/// A HostedCluster status with these `(type, status, reason)` conditions (observed at
/// generation 1, changed at 11:00).
fn hc_status(conditions: &[(&str, &str, &str)]) -> Value {
    let conditions: Vec<Value> = conditions
        .iter()
        .map(|(t, s, r)| {
            json!({"type": t, "status": s, "reason": r, "message": format!("{t} is {s}"),
            "observedGeneration": 1, "lastTransitionTime": "2026-11-26T11:00:00Z"})
        })
        .collect();
    json!({"conditions": conditions})
}

/// The cluster's work holding `generation`, fed back `status` (and the HostedCluster's
/// `metadata.generation` 1), last changed at `updated_at`.
fn hc_work(generation: Option<i64>, status: Value, updated_at: &str) -> ResourceBundle {
    let values = [("status", status), ("generation", json!(1))];
    let mut work = ours(
        bundle(&hosted_cluster(), &values, None),
        Kind::Cluster,
        generation,
    );
    work.updated_at = Some(updated_at.to_owned());
    work
}

fn ready() -> Value {
    hc_status(&[("Available", "True", "AsExpected")])
}

/// This adapter's stored status at `generation` with `conditions` `(type, status, reason)`.
fn stored(generation: i64, conditions: &[(&str, &str, &str)]) -> Value {
    let conditions: Vec<Value> = conditions
        .iter()
        .map(|(t, s, r)| json!({"type": t, "status": s, "reason": r, "message": format!("{t} is {s}")}))
        .collect();
    json!({"items": [{"adapter": "hypershift", "observed_generation": generation,
        "last_report_time": "2026-11-26T11:59:00Z", "conditions": conditions, "data": {}}],
        "page": 1, "size": 1, "total": 1})
}

fn stored_ready(generation: i64) -> Value {
    stored(
        generation,
        &[
            ("Applied", "True", "ManifestWorkApplied"),
            ("Available", "True", "ControlPlaneReady"),
            ("Health", "True", "NoIssues"),
        ],
    )
}

/// The pulse Job of `generation` that reported `reported` with `conditions`.
fn job(generation: i64, reported: i64, conditions: &[(&str, &str, &str)]) -> Pulses {
    let conditions: Vec<Value> = conditions
        .iter()
        .map(|(t, s, r)| json!({"type": t, "status": s, "reason": r, "message": format!("{t} is {s}")}))
        .collect();
    let job = json!({"metadata": {"name": format!("hs-cp-{CLUSTER}-g{generation}"), "namespace": "hyperfleet-system",
        "creationTimestamp": "2026-11-26T11:58:00Z",
        "annotations": {"hyperfleet.io/generation": generation.to_string(),
                        "hyperfleet.io/observed-generation": reported.to_string()}},
        "status": {"conditions": conditions}});
    Pulses {
        jobs: vec![serde_json::from_value(job).unwrap()],
        pods: Ok(Vec::new()),
    }
}

fn with_stored(mut obs: Observations, statuses: Value) -> Observations {
    obs.statuses = Ok(statuses);
    obs
}

fn at(mut s: Settings, now: &str) -> Settings {
    s.now = now.parse().unwrap();
    s
}

/// The states, each named: its settings and what the readers found.
fn states() -> Vec<(&'static str, Settings, Observations)> {
    let cp = || settings(Kind::Cluster);
    let np = || settings(Kind::NodePool);
    let older = || vec![hc_work(Some(3), ready(), "2026-11-26T11:00:00Z")];
    let progressing = hc_status(&[
        ("Available", "False", "WaitingForAvailable"),
        ("Progressing", "True", "Progressing"),
    ]);
    let stalled = hc_status(&[
        ("Available", "False", "WaitingForAvailable"),
        ("Progressing", "False", "AsExpected"),
    ]);
    let deleted = Some("2026-11-26T11:15:00Z");
    let mut second = hc_work(Some(3), ready(), "2026-11-26T11:00:00Z");
    second.consumer_name = "mgmt-euw2-02".to_owned();
    second.id = "b93db10b-39d3-51ee-9eb7-d9a694fe91c9".to_owned();
    let mut newer_version = hc_work(Some(3), ready(), "2026-11-26T11:58:00Z");
    newer_version.version = Some(2);
    let mut stale_version = newer_version.clone();
    stale_version.updated_at = Some("2026-11-26T11:00:00Z".to_owned());
    let mut np_older = ours(
        bundle(
            &json!({"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "NodePool",
                "metadata": {"name": "workers-europe2", "namespace": "clusters"}, "spec": {}}),
            &[],
            None,
        ),
        Kind::NodePool,
        Some(1),
    );
    np_older.updated_at = Some("2026-11-26T11:00:00Z".to_owned());
    let nodepools_listed = json!({"items": [{"id": NODEPOOL, "name": "workers-europe2"}], "page": 1, "size": 1, "total": 1});
    vec![
        (
            "cluster_work_older_than_the_object_report_ok",
            cp(),
            with_stored(observations(cluster(4, None), older()), stored_ready(4)),
        ),
        (
            "cluster_work_older_than_the_object_no_job",
            cp(),
            observations(cluster(4, None), older()),
        ),
        (
            "cluster_work_without_a_generation",
            cp(),
            with_stored(
                observations(
                    cluster(3, None),
                    vec![hc_work(None, ready(), "2026-11-26T11:00:00Z")],
                ),
                stored_ready(3),
            ),
        ),
        (
            "cluster_no_work_report_ok",
            cp(),
            with_stored(observations(cluster(3, None), vec![]), stored_ready(3)),
        ),
        (
            "cluster_works_on_two_consumers",
            cp(),
            with_stored(
                observations(
                    cluster(3, None),
                    vec![hc_work(Some(3), ready(), "2026-11-26T11:00:00Z"), second],
                ),
                stored_ready(3),
            ),
        ),
        (
            "cluster_newer_version_not_applied_yet",
            cp(),
            with_stored(
                observations(cluster(3, None), vec![newer_version]),
                stored_ready(3),
            ),
        ),
        (
            "cluster_newer_version_not_applied_for_long",
            cp(),
            with_stored(
                observations(cluster(3, None), vec![stale_version]),
                stored_ready(3),
            ),
        ),
        (
            "cluster_provisioning_within_the_limit",
            at(cp(), "2026-11-26T11:05:00Z"),
            observations(
                cluster(3, None),
                vec![hc_work(
                    Some(3),
                    progressing.clone(),
                    "2026-11-26T11:00:00Z",
                )],
            ),
        ),
        (
            "cluster_provisioning_past_the_limit",
            cp(),
            observations(
                cluster(3, None),
                vec![hc_work(Some(3), progressing, "2026-11-26T11:00:00Z")],
            ),
        ),
        (
            "cluster_not_ready_within_the_limit",
            at(cp(), "2026-11-26T11:05:00Z"),
            observations(
                cluster(3, None),
                vec![hc_work(Some(3), stalled, "2026-11-26T11:00:00Z")],
            ),
        ),
        (
            "cluster_degraded",
            cp(),
            observations(
                cluster(3, None),
                vec![hc_work(
                    Some(3),
                    hc_status(&[
                        ("Available", "True", "AsExpected"),
                        ("Degraded", "True", "EtcdQuorumLost"),
                    ]),
                    "2026-11-26T11:00:00Z",
                )],
            ),
        ),
        (
            "cluster_invalid_feedback",
            cp(),
            observations(
                cluster(3, None),
                vec![hc_work(Some(3), json!(42), "2026-11-26T11:00:00Z")],
            ),
        ),
        (
            "cluster_upgrading",
            cp(),
            observations(
                cluster(3, None),
                vec![hc_work(
                    Some(3),
                    {
                        let mut status = ready();
                        status["version"] = json!({"desired": {"version": "4.17.1"}, "history": [
                            {"state": "Partial", "version": "4.17.1"}, {"state": "Completed", "version": "4.17.0"}]});
                        status
                    },
                    "2026-11-26T11:00:00Z",
                )],
            ),
        ),
        (
            "cluster_deleted_no_work_left",
            cp(),
            with_stored(
                observations(cluster(4, deleted), vec![]),
                stored(
                    4,
                    &[
                        ("Applied", "False", "CleanupConfirmed"),
                        ("Available", "False", "Deleted"),
                        ("Finalized", "True", "CleanupConfirmed"),
                    ],
                ),
            ),
        ),
        (
            "cluster_deleted_work_deletion_not_requested",
            cp(),
            observations(cluster(4, deleted), older()),
        ),
        (
            "cluster_deleted_nodepools_listed",
            cp(),
            Observations {
                nodepools: Some(Ok(nodepools_listed)),
                ..observations(cluster(4, deleted), older())
            },
        ),
        (
            "cluster_job_reported_nothing_stored",
            cp(),
            Observations {
                pulses: Ok(job(
                    3,
                    3,
                    &[
                        ("Applied", "True", "ManifestWorkApplied"),
                        ("Available", "True", "ControlPlaneReady"),
                        ("Health", "True", "NoIssues"),
                    ],
                )),
                ..observations(
                    cluster(3, None),
                    vec![hc_work(Some(3), ready(), "2026-11-26T11:00:00Z")],
                )
            },
        ),
        (
            "cluster_job_available_unknown_discarded",
            cp(),
            Observations {
                pulses: Ok(job(
                    3,
                    3,
                    &[
                        ("Applied", "True", "ManifestWorkExists"),
                        ("Available", "Unknown", "InvalidFeedback"),
                        ("Health", "Unknown", "InvalidFeedback"),
                    ],
                )),
                ..with_stored(
                    observations(
                        cluster(3, None),
                        vec![hc_work(Some(3), ready(), "2026-11-26T11:00:00Z")],
                    ),
                    stored_ready(3),
                )
            },
        ),
        (
            "nodepool_no_work",
            np(),
            with_stored(observations(nodepool(1), vec![]), stored_ready(1)),
        ),
        (
            "nodepool_work_older_than_the_object",
            np(),
            with_stored(observations(nodepool(2), vec![np_older]), stored_ready(2)),
        ),
    ]
}

#[test]
fn the_chain_of_each_state() {
    for (name, s, obs) in states() {
        let d = judge_all(&s, &obs);
        insta::assert_snapshot!(name, render(&d));
    }
}
