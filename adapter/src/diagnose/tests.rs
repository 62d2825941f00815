//! The judges on hand-built observations in the recorded shapes (`maestro-protocol.md` §4.3,
//! §4.4; `fixtures/maestro/real/04-available.json`): what the testbed's fakes cannot produce.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use serde_json::{Value, json};

use super::chain::Mark;
use super::judge::{Kind, Observations, Settings};
use super::judge_all;
use super::read::{Failure, Pulses};
use crate::work::maestro::bundle::ResourceBundle;

mod states;

const CLUSTER: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
const NODEPOOL: &str = "019a6f2b-8d13-7a64-b5c2-3e9f0d7a1c58";
const NOW: &str = "2026-11-26T12:00:00Z";

fn settings(kind: Kind) -> Settings {
    Settings {
        kind,
        id: if kind == Kind::Cluster {
            CLUSTER
        } else {
            NODEPOOL
        }
        .to_owned(),
        cluster_id: CLUSTER.to_owned(),
        adapter: "hypershift".to_owned(),
        preconditions: vec!["validation".to_owned()],
        namespace: "hyperfleet-system".to_owned(),
        selector: "hyperfleet.io/adapter=controlplane".to_owned(),
        source: "hyperfleet-hypershift-adapter".to_owned(),
        agent_stale_after: Duration::from_secs(300),
        deletion_stuck_after: Duration::from_secs(1800),
        machines_stuck_after: Duration::from_secs(900),
        operator_stuck_after: Duration::from_secs(600),
        now: NOW.parse().unwrap(),
    }
}

/// A bundle carrying `object` (a HostedCluster or NodePool manifest) applied at version 1, with
/// `values` fed back for it and `deleted_at` when deleting.
fn bundle(object: &Value, values: &[(&str, Value)], deleted_at: Option<&str>) -> ResourceBundle {
    let kind = object["kind"].as_str().unwrap();
    let condition = |t: &str, r: &str| json!({"type": t, "status": "True", "reason": r, "message": "", "lastTransitionTime": "2026-11-26T11:00:00Z", "observedGeneration": 1});
    let values: Vec<Value> = values
        .iter()
        .map(|(name, v)| json!({"name": name, "fieldValue": {"type": "JsonRaw", "jsonRaw": v.to_string()}}))
        .collect();
    let mut b = json!({
        "id": "a93db10b-39d3-51ee-9eb7-d9a694fe91c9", "kind": "ResourceBundle",
        "href": "/api/maestro/v1/resource-bundles/a93db10b-39d3-51ee-9eb7-d9a694fe91c9",
        "name": "a93db10b-39d3-51ee-9eb7-d9a694fe91c9", "consumer_name": "mgmt-euw2-01", "version": 1,
        "created_at": "2026-11-26T10:00:00Z", "updated_at": "2026-11-26T11:00:00Z",
        "metadata": {"name": format!("{}-x", kind.to_lowercase()), "namespace": "mgmt-euw2-01",
                     "annotations": {"hyperfleet.io/generation": "3"}},
        "manifests": [object], "manifest_configs": [], "delete_option": {},
        "status": {"ObservedVersion": 1, "SequenceID": "2125796042854109184",
            "conditions": [condition("Applied", "AppliedManifestWorkComplete"), condition("Available", "ResourcesAvailable")],
            "resourceStatus": [{
                "conditions": [condition("Applied", "AppliedManifestComplete"), condition("Available", "ResourceAvailable"),
                               condition("StatusFeedbackSynced", "StatusFeedbackSynced")],
                "resourceMeta": {"group": "hypershift.openshift.io", "kind": kind, "name": object["metadata"]["name"],
                                 "namespace": object["metadata"]["namespace"], "ordinal": 0,
                                 "resource": format!("{}s", kind.to_lowercase()), "version": "v1beta1"},
                "statusFeedback": {"values": values}}]}
    });
    if let Some(at) = deleted_at {
        b["deleted_at"] = json!(at);
    }
    serde_json::from_value(b).unwrap()
}

fn hosted_cluster() -> Value {
    json!({"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
           "metadata": {"name": "prod-eu-1", "namespace": "clusters"}, "spec": {}})
}

fn observations(object: Value, works: Vec<ResourceBundle>) -> Observations {
    Observations {
        object: Ok(object),
        statuses: Ok(json!({"items": [], "page": 1, "size": 0, "total": 0})),
        nodepools: Some(Ok(json!({"items": [], "page": 1, "size": 0, "total": 0}))),
        pulses: Ok(Pulses {
            jobs: Vec::new(),
            pods: Ok(Vec::new()),
        }),
        works: Ok(works),
    }
}

fn link<'a>(d: &'a super::chain::Diagnosis, id: &str) -> &'a super::chain::Link {
    d.links.iter().find(|l| l.id == id).unwrap()
}

/// When Maestro cannot be read, the links that need the work say so; "no work to apply" would
/// claim there is none.
#[test]
fn links_after_an_unreadable_maestro_do_not_claim_there_is_no_work() {
    let mut obs = observations(json!({"id": CLUSTER, "generation": 3}), vec![]);
    obs.works = Err(super::read::Failure::timeout(Duration::from_secs(5)));
    let d = judge_all(&settings(Kind::Cluster), &obs);
    for id in ["agent.applied", "hypershift.hostedcluster"] {
        let l = link(&d, id);
        assert_eq!(l.mark, Mark::Unknown, "{}", d.text());
        assert_eq!(l.evidence, super::judge_work::WORK_NOT_READ, "{}", d.text());
    }
    let obs = observations(json!({"id": CLUSTER, "generation": 3}), vec![]);
    let d = judge_all(&settings(Kind::Cluster), &obs);
    assert_eq!(link(&d, "agent.applied").evidence, "no work to apply");
}

/// While it deletes, the agent feeds back no finalizers (it keeps what it had before): a
/// deletion held past the limit then points at the management cluster's object and the agent,
/// not back at the deletion itself.
#[test]
fn a_held_deletion_without_fed_back_finalizers_says_where_to_look() {
    let work = bundle(&hosted_cluster(), &[], Some("2026-11-26T11:14:00Z"));
    let d = judge_all(
        &settings(Kind::Cluster),
        &observations(
            json!({"id": CLUSTER, "generation": 4, "deleted_time": "2026-11-26T11:15:00Z"}),
            vec![work],
        ),
    );
    let hc = link(&d, "hypershift.hostedcluster");
    assert_eq!(hc.mark, Mark::Broken, "{}", d.text());
    assert!(
        hc.meaning.contains("the work agent of mgmt-euw2-01"),
        "{}",
        hc.meaning
    );
    assert!(
        hc.action.contains(
            "on management cluster mgmt-euw2-01, look at the HostedCluster clusters/prod-eu-1"
        ),
        "{}",
        hc.action
    );
    assert!(!hc.action.contains("find what holds it"), "{}", hc.action);
}

#[test]
fn a_deletion_held_by_a_finalizer_names_it_and_is_stuck_past_the_limit() {
    let work = bundle(
        &hosted_cluster(),
        &[
            ("finalizers", json!(["hypershift.openshift.io/finalizer"])),
            ("deletionTimestamp", json!("2026-11-26T11:14:00Z")),
        ],
        Some("2026-11-26T11:14:00Z"),
    );
    let deleted = |at: &str| json!({"id": CLUSTER, "generation": 4, "deleted_time": at});
    let d = judge_all(
        &settings(Kind::Cluster),
        &observations(deleted("2026-11-26T11:15:00Z"), vec![work.clone()]),
    );
    let hc = link(&d, "hypershift.hostedcluster");
    assert_eq!(hc.mark, Mark::Broken, "{}", d.text());
    assert!(
        hc.evidence
            .contains("finalizers hypershift.openshift.io/finalizer"),
        "{}",
        hc.evidence
    );
    assert!(
        hc.evidence
            .contains("HostedCluster clusters/prod-eu-1 deleting since 2026-11-26T11:14:00Z"),
        "{}",
        hc.evidence
    );
    assert!(hc.meaning.contains("finalizers"), "{}", hc.meaning);
    assert_eq!(d.consumer.as_deref(), Some("mgmt-euw2-01"));

    let d = judge_all(
        &settings(Kind::Cluster),
        &observations(deleted("2026-11-26T11:50:00Z"), vec![work]),
    );
    assert_eq!(
        link(&d, "hypershift.hostedcluster").mark,
        Mark::Waiting,
        "{}",
        d.text()
    );
}

#[test]
fn a_nodepool_is_read_with_the_nodepool_tables() {
    let node_pool = json!({"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "NodePool",
        "metadata": {"name": "workers-euw2-a1", "namespace": "clusters"},
        "spec": {"replicas": 3, "platform": {"type": "GCP"}}});
    let ready = json!({
        "replicas": 3, "version": "4.19.3",
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "AsExpected", "message": "", "lastTransitionTime": "2026-11-26T11:00:00Z"},
            {"type": "AllMachinesReady", "status": "True", "reason": "AsExpected", "message": "", "lastTransitionTime": "2026-11-26T11:00:00Z"}]});
    let object = json!({"id": NODEPOOL, "generation": 3, "status": {"conditions": [
        {"type": "ValidationSuccessful", "status": "True", "observed_generation": 3, "reason": "Ready"}]}});
    let d = judge_all(
        &settings(Kind::NodePool),
        &observations(
            object.clone(),
            vec![bundle(&node_pool, &[("status", ready)], None)],
        ),
    );
    let np = link(&d, "hypershift.nodepool");
    assert_eq!(np.mark, Mark::Ok, "{}", d.text());
    assert!(
        np.evidence.contains("Available=True NodePoolReady"),
        "{}",
        np.evidence
    );
    assert_eq!(link(&d, "hyperfleet.preconditions").mark, Mark::Ok);

    let not_ready = json!({"replicas": 1, "conditions": [
        {"type": "Ready", "status": "False", "reason": "WaitingForAvailableMachines", "message": "Minimum availability requires 3 replicas, current 1 available", "lastTransitionTime": "2026-11-26T09:00:00Z"}]});
    let d = judge_all(
        &settings(Kind::NodePool),
        &observations(
            object,
            vec![bundle(&node_pool, &[("status", not_ready)], None)],
        ),
    );
    let np = link(&d, "hypershift.nodepool");
    assert_ne!(np.mark, Mark::Ok, "{}", d.text());
}

#[test]
fn a_malformed_feedback_is_unreadable_not_a_crash() {
    let mut work = bundle(&hosted_cluster(), &[], None);
    let status = work.status.as_mut().unwrap();
    status.resource_status[0].status_feedback.values = vec![serde_json::from_value(json!(
        {"name": "status", "fieldValue": {"type": "JsonRaw", "jsonRaw": "{\"conditions\": [tru"}}
    )).unwrap()];
    let object = json!({"id": CLUSTER, "generation": 3});
    let d = judge_all(&settings(Kind::Cluster), &observations(object, vec![work]));
    assert_eq!(
        link(&d, "agent.applied").mark,
        Mark::Unknown,
        "{}",
        d.text()
    );
    assert_eq!(
        link(&d, "hypershift.hostedcluster").mark,
        Mark::Unknown,
        "{}",
        d.text()
    );
}

#[test]
fn an_unreadable_object_leaves_the_links_that_need_it_unknown() {
    let mut obs = observations(json!({}), Vec::new());
    obs.object = Err(Failure::new(Some(404), "GET …/clusters/x: not found"));
    let d = judge_all(&settings(Kind::Cluster), &obs);
    assert_eq!(d.verdict.link, Some("hyperfleet.object"));
    assert_eq!(d.exit_code, 3);
    assert!(
        link(&d, "hyperfleet.object")
            .meaning
            .contains("no such object"),
        "{}",
        d.text()
    );
    assert_eq!(link(&d, "hyperfleet.preconditions").mark, Mark::Unknown);
}

/// Issue 23: the agent applied a spec (the HostedCluster at metadata.generation 2) that the
/// HyperShift operator has not observed (its conditions still say 1, Available=True): the
/// `hypershift.hostedcluster` link is in progress (…) within `--operator-stuck-after`, held (✗)
/// past it, naming the generations and the operator, and the verdict points at it.
#[test]
fn a_spec_the_operator_has_not_observed_is_in_progress_then_held_on_the_operator() {
    let status = json!({"conditions": [
        {"type": "Available", "status": "True", "reason": "AsExpected", "message": "The hosted control plane is available", "observedGeneration": 1, "lastTransitionTime": "2026-11-26T10:30:00Z"},
        {"type": "Degraded", "status": "False", "reason": "AsExpected", "message": "", "observedGeneration": 1, "lastTransitionTime": "2026-11-26T10:30:00Z"},
    ]});
    let work = bundle(
        &hosted_cluster(),
        &[("status", status), ("generation", json!(2))],
        None,
    );
    let object = json!({"id": CLUSTER, "generation": 3, "status": {"conditions": [
        {"type": "ValidationSuccessful", "status": "True", "observed_generation": 3, "reason": "Ready"}]}});
    // The agent applied at 11:00:00Z (its Applied transition); judged 5 minutes later.
    let mut early = settings(Kind::Cluster);
    early.now = "2026-11-26T11:05:00Z".parse().unwrap();
    let d = judge_all(&early, &observations(object.clone(), vec![work.clone()]));
    let hc = link(&d, "hypershift.hostedcluster");
    assert_eq!(hc.mark, Mark::Waiting, "{}", d.text());
    for part in [
        "Available=False AwaitingOperator",
        "metadata.generation 2",
        "its status describes generation 1",
        "the HyperShift operator",
    ] {
        assert!(hc.evidence.contains(part), "{part:?}: {}", hc.evidence);
    }
    assert!(
        hc.meaning
            .contains("the HyperShift operator has not yet observed"),
        "{}",
        hc.meaning
    );
    // Judged an hour after the apply (the settings' clock): held on the operator. The Job of
    // generation 3 has ended (its report stored by HyperFleet, the Job gone after its TTL).
    let mut obs = observations(object, vec![work]);
    obs.statuses = Ok(
        json!({"items": [{"adapter": "hypershift", "observed_generation": 3,
        "conditions": [
            {"type": "Applied", "status": "True", "reason": "ManifestWorkApplied"},
            {"type": "Available", "status": "False", "reason": "AwaitingOperator"},
            {"type": "Health", "status": "False", "reason": "OperatorNotReconciling"}]}],
        "page": 1, "size": 1, "total": 1}),
    );
    let d = judge_all(&settings(Kind::Cluster), &obs);
    let hc = link(&d, "hypershift.hostedcluster");
    assert_eq!(hc.mark, Mark::Broken, "{}", d.text());
    assert!(
        hc.action.contains("HyperShift operator runs"),
        "{}",
        hc.action
    );
    assert_eq!(
        d.verdict.link,
        Some("hypershift.hostedcluster"),
        "{}",
        d.text()
    );
}

/// The agent of the work's management cluster is down: what it fed back is the last it sent and
/// looks applied; the pulse's `Health=False ManagementClusterUnavailable` (here as HyperFleet
/// stored it, the Job gone) makes `agent.applied` the broken link, naming the consumer.
#[test]
fn a_management_cluster_outage_reported_by_the_pulse_breaks_the_agent_link() {
    let work = bundle(&hosted_cluster(), &[], None);
    let object = json!({"id": CLUSTER, "generation": 3});
    let d = judge_all(
        &settings(Kind::Cluster),
        &observations(object.clone(), vec![work.clone()]),
    );
    assert_eq!(link(&d, "agent.applied").mark, Mark::Ok, "{}", d.text());

    let mut obs = observations(object, vec![work]);
    let health = |status: &str, reason: &str| {
        json!({"type": "Health", "status": status, "reason": reason,
        "message": "Management cluster mc-1 (consumer mgmt-euw2-01) is unavailable: LastKnownReconciled=False"})
    };
    obs.statuses = Ok(
        json!({"items": [{"adapter": "hypershift", "observed_generation": 3,
        "conditions": [health("False", "ManagementClusterUnavailable")]}], "page": 1, "size": 1, "total": 1}),
    );
    let d = judge_all(&settings(Kind::Cluster), &obs);
    let agent = link(&d, "agent.applied");
    assert_eq!(agent.mark, Mark::Broken, "{}", d.text());
    assert!(
        agent
            .evidence
            .contains("Health=False ManagementClusterUnavailable: Management cluster mc-1"),
        "{}",
        d.text()
    );
    assert!(agent.action.contains("mgmt-euw2-01"), "{}", d.text());
}

/// The adapter's stored report (the HyperFleet API's `statuses` list, in the recorded shape of
/// `fixtures/hyperfleet/real-api/08-statuses-list.json`) with `Applied=False reason` at
/// `generation`.
fn stored_report(generation: i64, reason: &str) -> Value {
    let condition = |t: &str, status: &str, r: &str, m: &str| json!({"type": t, "status": status, "reason": r, "message": m, "last_transition_time": "2026-11-26T11:59:00Z"});
    let message =
        "Not placed: no management cluster can take this control plane: mc-euw2-a: full: 1/1";
    json!({"items": [{"adapter": "hypershift", "observed_generation": generation,
        "created_time": "2026-11-26T11:59:00Z", "last_report_time": "2026-11-26T11:59:00Z",
        "conditions": [condition("Applied", "False", reason, message),
                       condition("Available", "False", reason, message),
                       condition("Health", "True", "NoIssues", "no issues")],
        "data": {}}], "page": 1, "size": 1, "total": 1})
}

/// A cluster at `generation` whose precondition (validation) holds there.
fn validated(generation: i64) -> Value {
    json!({"id": CLUSTER, "generation": generation, "status": {"conditions": [
        {"type": "ValidationSuccessful", "status": "True", "observed_generation": generation, "reason": "Ready"}]}})
}

/// Found on the real servers (`real::diagnose_real`): once the refused pulse's Job is gone (its
/// TTL), its report as the API stores it still decides, at `job.report`; before, the chain went
/// on and blamed the missing work ("check MAESTRO_SOURCE_ID"), which the adapter never meant
/// to create. A stored report of an older generation does not decide for the current one.
#[test]
fn a_stored_refusal_decides_when_the_job_is_gone() {
    let mut obs = observations(validated(1), vec![]);
    obs.statuses = Ok(stored_report(1, "NoManagementClusterAvailable"));
    let d = judge_all(&settings(Kind::Cluster), &obs);
    let report = link(&d, "job.report");
    assert_eq!(report.mark, Mark::Broken, "{}", d.text());
    assert!(
        report.evidence.contains("stored report at generation 1")
            && report.evidence.contains("mc-euw2-a: full: 1/1"),
        "{}",
        report.evidence
    );
    assert!(
        report.meaning.contains("NoManagementClusterAvailable"),
        "{}",
        report.meaning
    );
    assert_eq!(d.verdict.link, Some("job.report"), "{}", d.text());

    let mut obs = observations(validated(2), vec![]);
    obs.statuses = Ok(stored_report(1, "NoManagementClusterAvailable"));
    let d = judge_all(&settings(Kind::Cluster), &obs);
    assert_ne!(link(&d, "job.report").mark, Mark::Broken, "{}", d.text());

    let mut obs = observations(validated(1), vec![]);
    obs.statuses = Ok(stored_report(1, "MaestroUnavailable"));
    let d = judge_all(&settings(Kind::Cluster), &obs);
    assert_ne!(link(&d, "job.report").mark, Mark::Broken, "{}", d.text());
}
