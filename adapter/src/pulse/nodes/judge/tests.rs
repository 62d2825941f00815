#![allow(clippy::unwrap_used)]

use job_report::Condition;
use serde_json::json;

use super::*;
use crate::pulse::nodes::csr::{CsrFields, KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER};
use crate::pulse::nodes::testing::{self, BOOTSTRAPPER, judge, judge_csrs, request_pem};

fn now() -> Timestamp {
    "2026-11-25T12:00:00Z".parse().unwrap()
}

fn ago(d: SignedDuration) -> Option<Timestamp> {
    Some(now() - d)
}

fn mins(m: i64) -> SignedDuration {
    SignedDuration::from_mins(m)
}

/// A healthy, Ready node created a week ago with a fresh heartbeat.
fn healthy(name: &str) -> NodeSummary {
    NodeSummary {
        name: name.to_owned(),
        created: ago(SignedDuration::from_hours(168)),
        ready: Some(ReadyState {
            status: ConditionStatus::True,
            since: ago(SignedDuration::from_hours(168)),
            heartbeat: ago(SignedDuration::from_secs(5)),
        }),
        ..NodeSummary::default()
    }
}

fn not_ready(name: &str, status: ConditionStatus, for_: SignedDuration) -> NodeSummary {
    let mut node = healthy(name);
    node.ready = Some(ReadyState {
        status,
        since: ago(for_),
        heartbeat: ago(SignedDuration::from_secs(5)),
    });
    node
}

const NODE: &str = "prod-eu-1-worker-ignition-1";

/// A kubelet request as the source summarizes it.
fn csr(
    name: &str,
    signer: Option<KubeletSigner>,
    state: CsrState,
    age: Option<SignedDuration>,
    node: Option<&str>,
    requester: &str,
) -> CsrSummary {
    CsrSummary {
        name: name.to_owned(),
        created: age.map(|a| now() - a),
        signer,
        state,
        node: node.map(ToOwned::to_owned),
        requester: requester.to_owned(),
    }
}

/// A joining node's bootstrap request, pending for `age`.
fn pending_csr(name: &str, age: SignedDuration) -> CsrSummary {
    csr(
        name,
        Some(KubeletSigner::Client),
        CsrState::Pending,
        Some(age),
        Some(NODE),
        BOOTSTRAPPER,
    )
}

/// Findings for `nodes` (fresh leases) and `csrs`.
fn with_csrs(nodes: &[NodeSummary], csrs: &[CsrSummary], t: &Thresholds) -> Findings {
    let mut f = judge(nodes, &leases_for(nodes), now(), t);
    f.certificate_requests = CsrCheck::Checked(judge_csrs(csrs, now(), t));
    f
}

fn thresholds() -> Thresholds {
    Thresholds {
        verification_taints: vec!["node.example.com/unverified".to_owned()],
        ..Thresholds::default()
    }
}

/// Fresh leases for every node, so heartbeats are not a finding unless a test wants one.
fn leases_for(nodes: &[NodeSummary]) -> HashMap<String, Timestamp> {
    nodes
        .iter()
        .map(|n| (n.name.clone(), now() - SignedDuration::from_secs(3)))
        .collect()
}

fn run(nodes: &[NodeSummary]) -> Findings {
    judge(nodes, &leases_for(nodes), now(), &thresholds())
}

fn health(nodes: &[NodeSummary]) -> Condition {
    let t = thresholds();
    let f = judge(nodes, &leases_for(nodes), now(), &t);
    report(&f, &t, None).condition("Health").unwrap().clone()
}

#[test]
fn healthy_cluster_reports_no_issues_and_available() {
    let nodes = vec![healthy("b"), healthy("a"), healthy("c")];
    let t = thresholds();
    let f = judge(&nodes, &leases_for(&nodes), now(), &t);
    assert_eq!(f.total, 3);
    assert_eq!(f.ready, 3);
    assert!(f.problems().is_empty());
    let r = report(&f, &t, Some(4));
    assert_eq!(r.adapter.as_deref(), Some("hypershift-nodes"));
    assert_eq!(r.observed_generation, Some(4));
    let c = |ty: &str| r.condition(ty).unwrap().clone();
    assert_eq!(
        (c("Applied").status, c("Applied").reason.as_str()),
        (ConditionStatus::True, "ChecksExecuted")
    );
    assert_eq!(c("Applied").message, "Checked 3 nodes and 3 node leases");
    assert_eq!(
        (c("Available").status, c("Available").reason.as_str()),
        (ConditionStatus::True, "NodesReady")
    );
    assert_eq!(
        c("Available").message,
        "3 of 3 nodes Ready; at least 1 required"
    );
    assert_eq!(
        (c("Health").status, c("Health").reason.as_str()),
        (ConditionStatus::True, "NoIssues")
    );
    assert_eq!(c("Health").message, "No issues on 3 nodes");
    job_report::validate(&r).unwrap();
}

#[test]
fn not_ready_is_judged_after_the_grace_not_at_it() {
    let grace = Thresholds::default().not_ready_grace;
    for status in [ConditionStatus::False, ConditionStatus::Unknown] {
        let at = run(&[not_ready("n", status, grace)]);
        assert!(
            at.not_ready.is_empty(),
            "{status}: exactly the grace is within it"
        );
        assert_eq!(at.not_ready_within_grace, 1);
        let past = run(&[not_ready("n", status, grace + SignedDuration::from_secs(1))]);
        assert_eq!(past.not_ready, vec!["n"], "{status}");
        assert_eq!(past.not_ready_within_grace, 0);
        assert_eq!(past.ready, 0);
    }
}

#[test]
fn node_without_ready_condition_is_measured_from_creation() {
    let mut young = healthy("young");
    young.ready = None;
    young.created = ago(mins(1));
    let mut old = healthy("old");
    old.ready = None;
    let f = run(&[young, old]);
    assert_eq!(f.not_ready, vec!["old"]);
    assert_eq!(f.not_ready_within_grace, 1);
}

#[test]
fn not_ready_within_grace_is_noted_without_failing_health() {
    let h = health(&[
        healthy("a"),
        not_ready("b", ConditionStatus::False, mins(1)),
    ]);
    assert_eq!(h.status, ConditionStatus::True);
    assert_eq!(
        h.message,
        "No issues on 2 nodes (1 not Ready within the 5m grace)"
    );
}

#[test]
fn each_pressure_is_counted_and_named_with_its_kinds() {
    let mut m = healthy("m");
    m.memory_pressure = true;
    let mut d = healthy("d");
    d.disk_pressure = true;
    d.pid_pressure = true;
    let mut p = healthy("p");
    p.pid_pressure = true;
    let mut net = healthy("net");
    net.network_unavailable = true;
    let nodes = [m, d, p, net, healthy("ok")];
    let f = run(&nodes);
    assert_eq!(f.memory_pressure, vec!["m"]);
    assert_eq!(f.disk_pressure, vec!["d"]);
    assert_eq!(f.pid_pressure, vec!["d", "p"]);
    assert_eq!(f.network_unavailable, vec!["net"]);
    assert_eq!(
        f.count(Problem::Pressure),
        4,
        "a node under two pressures counts once"
    );
    let h = health(&nodes);
    assert_eq!(h.status, ConditionStatus::False);
    assert_eq!(h.reason, "NodePressure");
    assert_eq!(
        h.message,
        "4 nodes under pressure: d (DiskPressure, PIDPressure), m (MemoryPressure), net (NetworkUnavailable), p (PIDPressure)."
    );
}

#[test]
fn cordoned_is_counted_but_not_a_health_problem() {
    let mut c = healthy("c");
    c.unschedulable = true;
    let nodes = [c, healthy("a")];
    let f = run(&nodes);
    assert_eq!(f.cordoned, vec!["c"]);
    let h = health(&nodes);
    assert_eq!(h.status, ConditionStatus::True);
    assert_eq!(h.message, "No issues on 2 nodes (1 cordoned)");
}

fn tainted(name: &str, key: &str, added: Option<Timestamp>) -> NodeSummary {
    let mut node = healthy(name);
    node.taints.push(TaintSummary {
        key: key.to_owned(),
        time_added: added,
    });
    node
}

#[test]
fn verification_taint_is_judged_after_its_grace() {
    let grace = Thresholds::default().verification_grace;
    let key = "node.example.com/unverified";
    let f = run(&[
        tainted("at", key, ago(grace)),
        tainted("past", key, ago(grace + SignedDuration::from_secs(1))),
        tainted("other-key", "node.kubernetes.io/not-ready", ago(mins(600))),
    ]);
    assert_eq!(
        f.unverified,
        vec![UnverifiedNode {
            name: "past".into(),
            taints: vec![key.into()]
        }]
    );
}

#[test]
fn verification_taint_without_time_added_is_dated_from_node_creation() {
    let key = "node.example.com/unverified";
    let mut new = tainted("new", key, None);
    new.created = ago(mins(3));
    let old = tainted("old", key, None);
    let f = run(&[new, old]);
    assert_eq!(f.unverified.len(), 1);
    assert_eq!(f.unverified[0].name, "old");
    let h = health(&[tainted("old", key, None)]);
    assert_eq!(h.reason, "NodesUnverified");
    assert_eq!(
        h.message,
        "1 node carrying a verification taint for longer than 15m: old (node.example.com/unverified)."
    );
}

#[test]
fn no_verification_taints_configured_means_no_unverified_nodes() {
    let nodes = [tainted("x", "node.example.com/unverified", ago(mins(600)))];
    let f = judge(&nodes, &leases_for(&nodes), now(), &Thresholds::default());
    assert!(f.unverified.is_empty());
}

fn deleting(name: &str, for_: SignedDuration, finalizers: &[&str]) -> NodeSummary {
    let mut node = healthy(name);
    node.deleting_since = ago(for_);
    node.finalizers = finalizers.iter().map(|f| (*f).to_owned()).collect();
    node
}

#[test]
fn terminating_is_stuck_after_the_limit_and_names_its_finalizers() {
    let limit = Thresholds::default().stuck_terminating_after;
    let nodes = [
        deleting("at", limit, &["a/x"]),
        deleting(
            "past",
            limit + SignedDuration::from_secs(1),
            &["z.example.com/cleanup", "a.example.com/drain"],
        ),
        deleting("bare", mins(45), &[]),
    ];
    let f = run(&nodes);
    assert_eq!(
        f.stuck_terminating,
        vec![
            StuckNode {
                name: "bare".into(),
                finalizers: vec![]
            },
            StuckNode {
                name: "past".into(),
                finalizers: vec!["a.example.com/drain".into(), "z.example.com/cleanup".into()]
            },
        ]
    );
    let h = health(&nodes);
    assert_eq!(h.reason, "NodesStuckTerminating");
    assert_eq!(
        h.message,
        "2 nodes stuck terminating for longer than 30m: bare (no finalizers), past (finalizers: a.example.com/drain, z.example.com/cleanup)."
    );
}

#[test]
fn stale_heartbeat_uses_the_lease_then_the_ready_heartbeat() {
    let limit = Thresholds::default().stale_heartbeat_after;
    let nodes = [
        healthy("lease-at"),
        healthy("lease-past"),
        healthy("no-lease"),
    ];
    let mut leases = HashMap::new();
    leases.insert("lease-at".to_owned(), now() - limit);
    leases.insert(
        "lease-past".to_owned(),
        now() - limit - SignedDuration::from_secs(1),
    );
    let f = judge(&nodes, &leases, now(), &thresholds());
    assert_eq!(
        f.stale_heartbeat,
        vec!["lease-past"],
        "no-lease falls back to a fresh Ready heartbeat"
    );
    assert_eq!(f.leases, 2);

    let mut silent = healthy("silent");
    silent.ready = Some(ReadyState {
        heartbeat: None,
        ..silent.ready.unwrap()
    });
    let f = judge(&[silent], &HashMap::new(), now(), &thresholds());
    assert_eq!(
        f.stale_heartbeat,
        vec!["silent"],
        "no heartbeat at all is stale"
    );
}

#[test]
fn a_node_not_ready_within_its_grace_is_not_flagged_for_its_heartbeat_either() {
    // The kubelet died 3 minutes ago: lease 3m old (> 2m), Ready=Unknown for 2m30s (< 5m).
    let mut dying = not_ready(
        "dying",
        ConditionStatus::Unknown,
        SignedDuration::from_secs(150),
    );
    dying.ready = Some(ReadyState {
        heartbeat: ago(mins(3)),
        ..dying.ready.unwrap()
    });
    let mut long_dead = not_ready("long-dead", ConditionStatus::Unknown, mins(20));
    long_dead.ready = Some(ReadyState {
        heartbeat: ago(mins(21)),
        ..long_dead.ready.unwrap()
    });
    let nodes = [dying, long_dead];
    let leases: HashMap<_, _> = [
        ("dying".to_owned(), now() - mins(3)),
        ("long-dead".to_owned(), now() - mins(21)),
    ]
    .into();
    let f = judge(&nodes, &leases, now(), &thresholds());
    assert_eq!(f.not_ready_within_grace, 1);
    assert_eq!(f.not_ready, vec!["long-dead"]);
    assert_eq!(f.stale_heartbeat, vec!["long-dead"]);
}

#[test]
fn a_lease_newer_than_the_ready_heartbeat_wins() {
    let mut node = healthy("n");
    node.ready = Some(ReadyState {
        heartbeat: ago(mins(60)),
        ..node.ready.unwrap()
    });
    let leases: HashMap<_, _> = [("n".to_owned(), now())].into();
    assert!(
        judge(&[node], &leases, now(), &thresholds())
            .stale_heartbeat
            .is_empty()
    );
}

#[test]
fn fewer_ready_than_min_ready_nodes_is_unavailable() {
    let t = Thresholds {
        min_ready_nodes: 2,
        ..thresholds()
    };
    let nodes = [
        healthy("a"),
        not_ready("b", ConditionStatus::False, mins(1)),
    ];
    let f = judge(&nodes, &leases_for(&nodes), now(), &t);
    let r = report(&f, &t, None);
    let a = r.condition("Available").unwrap();
    assert_eq!(a.status, ConditionStatus::False);
    assert_eq!(a.reason, "InsufficientReadyNodes");
    assert_eq!(
        a.message,
        "1 of 2 nodes Ready; at least 2 required (--min-ready-nodes)"
    );
}

#[test]
fn expected_nodes_raises_the_requirement() {
    let t = Thresholds {
        expected_nodes: Some(3),
        ..thresholds()
    };
    let nodes = [healthy("a"), healthy("b")];
    let f = judge(&nodes, &leases_for(&nodes), now(), &t);
    let r = report(&f, &t, None);
    let a = r.condition("Available").unwrap();
    assert_eq!(a.status, ConditionStatus::False);
    assert_eq!(
        a.message,
        "2 of 2 nodes Ready; at least 3 required (--expected-nodes)"
    );

    let nodes = [healthy("a"), healthy("b"), healthy("c")];
    let f = judge(&nodes, &leases_for(&nodes), now(), &t);
    let a = report(&f, &t, None).condition("Available").unwrap().clone();
    assert_eq!(a.status, ConditionStatus::True);
}

#[test]
fn empty_cluster_is_unavailable_but_healthy() {
    let t = thresholds();
    let f = judge(&[], &HashMap::new(), now(), &t);
    let r = report(&f, &t, None);
    assert_eq!(
        r.condition("Available").unwrap().status,
        ConditionStatus::False
    );
    assert_eq!(
        r.condition("Available").unwrap().message,
        "0 of 0 nodes Ready; at least 1 required (--min-ready-nodes)"
    );
    assert_eq!(r.condition("Health").unwrap().reason, "NoIssues");
    assert_eq!(
        r.condition("Applied").unwrap().message,
        "Checked 0 nodes and 0 node leases"
    );
}

#[test]
fn worst_problem_wins_and_the_others_are_summarized_in_severity_order() {
    let mut pressured = healthy("pressured");
    pressured.disk_pressure = true;
    let nodes = [
        tainted("unverified", "node.example.com/unverified", ago(mins(60))),
        deleting("stuck", mins(60), &["example.com/f"]),
        pressured,
        not_ready("down", ConditionStatus::Unknown, mins(10)),
    ];
    let mut leases = leases_for(&nodes);
    leases.insert("silent".into(), now() - mins(10));
    let mut silent = healthy("silent");
    silent.ready = Some(ReadyState {
        heartbeat: ago(mins(10)),
        ..silent.ready.unwrap()
    });
    let mut all = nodes.to_vec();
    all.push(silent);
    let t = thresholds();
    let csrs = [pending_csr("csr-a", mins(20))];
    let judged = |nodes: &[NodeSummary], csrs: &[CsrSummary]| {
        let mut f = judge(nodes, &leases, now(), &t);
        f.certificate_requests = CsrCheck::Checked(judge_csrs(csrs, now(), &t));
        f
    };
    let f = judged(&all, &csrs);
    assert_eq!(f.problems(), Problem::ALL.to_vec());
    let h = report(&f, &t, None).condition("Health").unwrap().clone();
    assert_eq!(h.reason, "NodesNotReady");
    assert_eq!(
        h.message,
        "1 node not Ready for longer than 5m: down. Also: 1 node without a recent heartbeat; \
         1 kubelet certificate signing request pending; 1 node under pressure; \
         1 node stuck terminating; 1 node unverified."
    );

    // Remove the worst one at a time: the next in the ordering takes over.
    let order: Vec<&str> = Problem::ALL.iter().map(|p| p.reason()).collect();
    assert_eq!(
        order,
        [
            "NodesNotReady",
            "StaleHeartbeats",
            "PendingCertificateRequests",
            "NodePressure",
            "NodesStuckTerminating",
            "NodesUnverified"
        ]
    );
    let health = |nodes: &[NodeSummary], csrs: &[CsrSummary]| {
        report(&judged(nodes, csrs), &t, None)
            .condition("Health")
            .unwrap()
            .reason
            .clone()
    };
    let without = |gone: &[&str]| -> Vec<NodeSummary> {
        all.iter()
            .filter(|n| !gone.contains(&n.name.as_str()))
            .cloned()
            .collect()
    };
    assert_eq!(health(&without(&["down"]), &csrs), "StaleHeartbeats");
    assert_eq!(
        health(&without(&["down", "silent"]), &csrs),
        "PendingCertificateRequests"
    );
    assert_eq!(health(&without(&["down", "silent"]), &[]), "NodePressure");
}

#[test]
fn message_names_at_most_ten_nodes_sorted_then_counts_the_rest() {
    let nodes: Vec<NodeSummary> = (0..13)
        .rev()
        .map(|i| not_ready(&format!("node-{i:02}"), ConditionStatus::False, mins(6)))
        .collect();
    let h = health(&nodes);
    assert_eq!(
        h.message,
        "13 nodes not Ready for longer than 5m: node-00, node-01, node-02, node-03, node-04, node-05, node-06, node-07, node-08, node-09 and 3 more."
    );
}

#[test]
fn many_finalizers_are_capped_in_the_message() {
    let fins: Vec<String> = (0..7).map(|i| format!("f{i}")).collect();
    let fins: Vec<&str> = fins.iter().map(String::as_str).collect();
    let h = health(&[deleting("n", mins(31), &fins)]);
    assert_eq!(
        h.message,
        "1 node stuck terminating for longer than 30m: n (finalizers: f0, f1, f2, f3, f4 and 2 more)."
    );
}

#[test]
fn data_has_counts_per_category_and_capped_sorted_lists() {
    let mut nodes: Vec<NodeSummary> = (0..30)
        .rev()
        .map(|i| not_ready(&format!("n{i:02}"), ConditionStatus::False, mins(6)))
        .collect();
    let mut c = healthy("cordoned");
    c.unschedulable = true;
    nodes.push(c);
    nodes.push(deleting("stuck", mins(40), &["example.com/f"]));
    let t = thresholds();
    let f = judge(&nodes, &leases_for(&nodes), now(), &t);
    let data = report(&f, &t, None).data.unwrap();
    assert_eq!(data["nodes_total"], 32);
    assert_eq!(data["nodes_ready"], 2);
    assert_eq!(data["ready_required"], 1);
    assert_eq!(data["not_ready"]["count"], 30);
    let listed = data["not_ready"]["nodes"].as_array().unwrap();
    assert_eq!(listed.len(), DATA_LIST_LIMIT);
    assert_eq!(listed[0], "n00");
    assert_eq!(listed[19], "n19");
    assert_eq!(data["cordoned"], json!({"count": 1, "nodes": ["cordoned"]}));
    assert_eq!(
        data["stuck_terminating"],
        json!({"count": 1, "nodes": [{"name": "stuck", "finalizers": ["example.com/f"]}]})
    );
    for empty in [
        "memory_pressure",
        "disk_pressure",
        "pid_pressure",
        "network_unavailable",
        "stale_heartbeat",
        "unverified",
    ] {
        assert_eq!(data[empty], json!({"count": 0, "nodes": []}), "{empty}");
    }
}

#[test]
fn data_stays_under_the_limit_with_the_longest_names() {
    // 253-character names (the Kubernetes maximum) in every category at once.
    let long = |i: usize| format!("{i:03}{}", "x".repeat(250));
    let nodes: Vec<NodeSummary> = (0..40)
        .map(|i| {
            let mut n = deleting(&long(i), mins(60), &[&"f".repeat(300), &"g".repeat(300)]);
            n.ready = None;
            n.memory_pressure = true;
            n.disk_pressure = true;
            n.pid_pressure = true;
            n.network_unavailable = true;
            n.unschedulable = true;
            n.taints.push(TaintSummary {
                key: "node.example.com/unverified".into(),
                time_added: None,
            });
            n
        })
        .collect();
    let t = thresholds();
    let f = judge(&nodes, &HashMap::new(), now(), &t);
    let r = report(&f, &t, None);
    job_report::validate(&r).unwrap();
    assert!(r.data_json().len() < job_report::MAX_DATA_BYTES);
    assert!(r.conditions.iter().all(|c| c.message.len() < 8 * 1024));
}

#[test]
fn same_input_gives_a_byte_identical_report_whatever_the_order() {
    let now = now();
    let cluster = crate::pulse::nodes::testing::synthetic_cluster(2000, 7, now);
    let leases: HashMap<String, Timestamp> = cluster
        .iter()
        .filter_map(|n| Some((n.lease.node.clone(), n.lease.renewed?)))
        .collect();
    let mut t = thresholds();
    t.verification_taints = vec![crate::pulse::nodes::testing::SYNTHETIC_TAINT.to_owned()];
    let forward: Vec<NodeSummary> = cluster.iter().map(|n| n.summary.clone()).collect();
    let csrs: Vec<CsrSummary> = testing::synthetic_csrs(300, 7, now)
        .iter()
        .map(testing::SyntheticCsr::summary)
        .collect();
    let mut shuffled = forward.clone();
    fastrand::Rng::with_seed(99).shuffle(&mut shuffled);
    let mut shuffled_csrs = csrs.clone();
    fastrand::Rng::with_seed(99).shuffle(&mut shuffled_csrs);
    let findings = |nodes: &[NodeSummary], csrs: &[CsrSummary]| {
        let mut f = judge(nodes, &leases, now, &t);
        f.certificate_requests = CsrCheck::Checked(judge_csrs(csrs, now, &t));
        f
    };
    let a = serde_json::to_vec(&report(&findings(&forward, &csrs), &t, Some(2))).unwrap();
    let b = serde_json::to_vec(&report(&findings(&shuffled, &shuffled_csrs), &t, Some(2))).unwrap();
    assert_eq!(a, b);
    // The generators make problems of every kind at this size.
    let f = findings(&forward, &csrs);
    assert_eq!(f.problems(), Problem::ALL.to_vec(), "{f:?}");
    let CsrCheck::Checked(c) = &f.certificate_requests else {
        panic!("checked")
    };
    assert!(c.pending.len() > 10 && c.pending_within_grace > 0, "{c:?}");
}

#[test]
fn messages_do_not_change_as_time_passes_while_state_is_unchanged() {
    // Two pulses 10 s apart (same leases renewed, same problems): identical conditions.
    let t = thresholds();
    let nodes = [
        not_ready("down", ConditionStatus::False, mins(20)),
        deleting("stuck", mins(50), &["example.com/f"]),
        healthy("ok"),
    ];
    let csrs = [pending_csr("csr-7xq2p", mins(20))];
    let first = report(&with_csrs(&nodes, &csrs, &t), &t, None);
    let later = now() + SignedDuration::from_secs(10);
    let leases: HashMap<_, _> = nodes
        .iter()
        .map(|n| (n.name.clone(), later - SignedDuration::from_secs(3)))
        .collect();
    let mut f = judge(&nodes, &leases, later, &t);
    f.certificate_requests = CsrCheck::Checked(judge_csrs(&csrs, later, &t));
    let second = report(&f, &t, None);
    assert_eq!(first, second);
    // With only the request left as a problem, its message is stable too.
    let only = [healthy("ok")];
    let first = report(&with_csrs(&only, &csrs, &t), &t, None);
    let leases: HashMap<_, _> = [("ok".to_owned(), later - SignedDuration::from_secs(3))].into();
    let mut f = judge(&only, &leases, later, &t);
    f.certificate_requests = CsrCheck::Checked(judge_csrs(&csrs, later, &t));
    assert_eq!(first, report(&f, &t, None));
    assert_eq!(
        first.condition("Health").unwrap().reason,
        "PendingCertificateRequests"
    );
}

#[test]
fn human_durations() {
    assert_eq!(human(SignedDuration::from_secs(30)), "30s");
    assert_eq!(human(mins(5)), "5m");
    assert_eq!(human(mins(90)), "1h30m");
    assert_eq!(human(SignedDuration::from_hours(48)), "48h");
    assert_eq!(human(SignedDuration::from_millis(500)), "500ms");
    assert_eq!(human(SignedDuration::ZERO), "0s");
}

#[test]
fn report_snapshot_with_every_kind_of_problem() {
    let mut pressured = healthy("worker-c");
    pressured.memory_pressure = true;
    pressured.pid_pressure = true;
    let mut cordoned = healthy("worker-d");
    cordoned.unschedulable = true;
    let nodes = [
        healthy("worker-a"),
        not_ready("worker-b", ConditionStatus::False, mins(12)),
        pressured,
        cordoned,
        deleting("worker-e", mins(90), &["example.com/node-cleanup"]),
        tainted("worker-f", "node.example.com/unverified", ago(mins(40))),
        not_ready("worker-g", ConditionStatus::Unknown, mins(1)),
    ];
    let mut leases = leases_for(&nodes);
    leases.insert("worker-a".into(), now() - mins(7));
    let t = Thresholds {
        expected_nodes: Some(6),
        ..thresholds()
    };
    let mut f = judge(&nodes, &leases, now(), &t);
    let csrs = [
        pending_csr("csr-7xq2p", mins(25)),
        csr(
            "csr-serving-h",
            Some(KubeletSigner::Serving),
            CsrState::Pending,
            Some(mins(15)),
            Some("worker-h"),
            "system:node:worker-h",
        ),
        pending_csr("csr-young", mins(2)),
    ];
    f.certificate_requests = CsrCheck::Checked(judge_csrs(&csrs, now(), &t));
    let r = report(&f, &t, Some(5));
    insta::assert_json_snapshot!(r);
}

mod durations {
    use proptest::prelude::*;

    use super::*;
    use crate::pulse::nodes::args::parse_duration;

    proptest! {
        /// Whatever `human` prints, the flag parser reads back as the same duration.
        #[test]
        fn human_output_parses_back(secs in 0i64..10_000_000) {
            let d = SignedDuration::from_secs(secs);
            prop_assert_eq!(parse_duration(&human(d)), Ok(d));
        }

        #[test]
        fn unit_suffixes_scale(n in 0i64..100_000) {
            prop_assert_eq!(parse_duration(&format!("{n}s")), Ok(SignedDuration::from_secs(n)));
            prop_assert_eq!(parse_duration(&format!("{n}m")), Ok(SignedDuration::from_mins(n)));
            prop_assert_eq!(parse_duration(&format!("{n}h")), Ok(SignedDuration::from_hours(n)));
        }
    }
}

// ---- certificate signing requests ---------------------------------------------------------------

#[test]
fn only_pending_kubelet_requests_past_the_grace_are_problems() {
    let t = thresholds();
    let old = Some(mins(30));
    let csrs = [
        pending_csr("csr-pending", mins(30)),
        csr(
            "csr-approved",
            Some(KubeletSigner::Client),
            CsrState::Approved,
            old,
            None,
            "",
        ),
        csr(
            "csr-denied",
            Some(KubeletSigner::Client),
            CsrState::Denied,
            old,
            None,
            "",
        ),
        csr(
            "csr-failed",
            Some(KubeletSigner::Serving),
            CsrState::Failed,
            old,
            None,
            "",
        ),
        // Another signer's request (e.g. kubernetes.io/kube-apiserver-client) is not ours.
        csr("csr-other", None, CsrState::Pending, old, None, "alice"),
    ];
    let f = judge_csrs(&csrs, now(), &t);
    assert_eq!(f.total, 5);
    assert_eq!(
        f.pending,
        vec![PendingCsr {
            name: "csr-pending".into(),
            signer: KubeletSigner::Client,
            node: Some(NODE.into()),
            requested_by: None,
        }]
    );
    assert_eq!(f.pending_within_grace, 0);
}

#[test]
fn pending_is_judged_after_the_grace_not_at_it() {
    let grace = Thresholds::default().csr_pending_grace;
    assert_eq!(grace, mins(10));
    let t = thresholds();
    let at = judge_csrs(&[pending_csr("c", grace)], now(), &t);
    assert!(at.pending.is_empty(), "exactly the grace is within it");
    assert_eq!(at.pending_within_grace, 1);
    let past = judge_csrs(
        &[pending_csr("c", grace + SignedDuration::from_secs(1))],
        now(),
        &t,
    );
    assert_eq!(past.pending.len(), 1);
    assert_eq!(past.pending_within_grace, 0);
    // A longer grace from the flag moves the boundary.
    let patient = Thresholds {
        csr_pending_grace: mins(60),
        ..thresholds()
    };
    assert!(
        judge_csrs(&[pending_csr("c", mins(30))], now(), &patient)
            .pending
            .is_empty()
    );
    // Undated: pending forever.
    let mut undated = pending_csr("c", mins(1));
    undated.created = None;
    assert_eq!(judge_csrs(&[undated], now(), &t).pending.len(), 1);
}

#[test]
fn a_bootstrap_request_alone_is_pending_certificate_requests_naming_its_node() {
    // Platform None: the worker booted, asked for its client certificate, nothing approved it;
    // there is no Node object yet.
    let pem = request_pem(&format!("system:node:{NODE}"));
    let request = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, pem);
    let summary = CsrSummary::new(CsrFields {
        name: "csr-7xq2p",
        created: ago(mins(20)),
        signer_name: KUBELET_CLIENT_SIGNER,
        username: BOOTSTRAPPER,
        request_base64: &request,
        state: CsrState::Pending,
    });
    let t = thresholds();
    let r = report(&with_csrs(&[], &[summary], &t), &t, None);
    let h = r.condition("Health").unwrap();
    assert_eq!(h.status, ConditionStatus::False);
    assert_eq!(h.reason, "PendingCertificateRequests");
    assert_eq!(
        h.message,
        "1 kubelet certificate signing request pending for longer than 10m: \
         csr-7xq2p (node prod-eu-1-worker-ignition-1, kubernetes.io/kube-apiserver-client-kubelet). \
         Check that each node is one you expect to join, then approve its request with \
         `oc adm certificate approve <name>` (or `kubectl certificate approve`), or deny it; \
         this adapter never approves requests."
    );
    assert_eq!(
        r.data.as_ref().unwrap()["pending_certificate_requests"],
        json!({
            "checked": true,
            "count": 1,
            "within_grace": 0,
            "requests": [{
                "name": "csr-7xq2p",
                "node": NODE,
                "signer": KUBELET_CLIENT_SIGNER
            }]
        })
    );
    job_report::validate(&r).unwrap();
}

#[test]
fn a_garbled_or_missing_request_names_the_requester_instead() {
    let t = thresholds();
    let summaries: Vec<CsrSummary> = [("csr-garbled", "%%% not base64"), ("csr-missing", "")]
        .into_iter()
        .map(|(name, request)| {
            CsrSummary::new(CsrFields {
                name,
                created: ago(mins(20)),
                signer_name: KUBELET_CLIENT_SIGNER,
                username: BOOTSTRAPPER,
                request_base64: request,
                state: CsrState::Pending,
            })
        })
        .collect();
    let h = report(&with_csrs(&[], &summaries, &t), &t, None)
        .condition("Health")
        .unwrap()
        .clone();
    assert!(
        h.message.starts_with(&format!(
            "2 kubelet certificate signing requests pending for longer than 10m: \
             csr-garbled (node unknown, requested by {BOOTSTRAPPER}, {KUBELET_CLIENT_SIGNER}), \
             csr-missing (node unknown, requested by {BOOTSTRAPPER}, {KUBELET_CLIENT_SIGNER}). "
        )),
        "{}",
        h.message
    );
    // No requester either: still named, never dropped.
    let anonymous = csr(
        "csr-anon",
        Some(KubeletSigner::Client),
        CsrState::Pending,
        Some(mins(20)),
        None,
        "",
    );
    let f = judge_csrs(&[anonymous], now(), &t);
    assert_eq!(f.pending[0].requested_by, None);
    assert_eq!(
        f.pending[0].describe(),
        format!("csr-anon (node unknown, {KUBELET_CLIENT_SIGNER})")
    );
}

#[test]
fn a_node_asking_for_another_nodes_certificate_is_named_with_both() {
    let t = thresholds();
    let odd = csr(
        "csr-odd",
        Some(KubeletSigner::Serving),
        CsrState::Pending,
        Some(mins(20)),
        Some("worker-b"),
        "system:node:worker-a",
    );
    let renewal = csr(
        "csr-renewal",
        Some(KubeletSigner::Client),
        CsrState::Pending,
        Some(mins(20)),
        Some("worker-a"),
        "system:node:worker-a",
    );
    let f = judge_csrs(&[renewal, odd], now(), &t);
    let described: Vec<String> = f.pending.iter().map(PendingCsr::describe).collect();
    assert_eq!(
        described,
        [
            format!(
                "csr-odd (node worker-b, requested by system:node:worker-a, {KUBELET_SERVING_SIGNER})"
            ),
            format!("csr-renewal (node worker-a, {KUBELET_CLIENT_SIGNER})"),
        ]
    );
}

#[test]
fn a_ready_nodes_pending_serving_request_is_still_reported() {
    let t = thresholds();
    let serving = csr(
        "csr-serving",
        Some(KubeletSigner::Serving),
        CsrState::Pending,
        Some(mins(45)),
        Some("worker-a"),
        "system:node:worker-a",
    );
    let r = report(&with_csrs(&[healthy("worker-a")], &[serving], &t), &t, None);
    assert_eq!(r.condition("Available").unwrap().reason, "NodesReady");
    let h = r.condition("Health").unwrap();
    assert_eq!(h.reason, "PendingCertificateRequests");
    assert!(
        h.message.starts_with(&format!(
            "1 kubelet certificate signing request pending for longer than 10m: \
             csr-serving (node worker-a, {KUBELET_SERVING_SIGNER})."
        )),
        "{}",
        h.message
    );
}

#[test]
fn requests_are_named_sorted_ten_at_most_then_counted() {
    let t = thresholds();
    let csrs: Vec<CsrSummary> = (0..12)
        .rev()
        .map(|i| pending_csr(&format!("csr-{i:02}"), mins(11)))
        .collect();
    let h = report(&with_csrs(&[], &csrs, &t), &t, None)
        .condition("Health")
        .unwrap()
        .clone();
    let named: Vec<&str> = h.message.matches("csr-").collect();
    assert_eq!(named.len(), 10);
    assert!(h.message.starts_with(
        "12 kubelet certificate signing requests pending for longer than 10m: csr-00 (node "
    ));
    assert!(
        h.message.contains("csr-09 (node prod-eu-1-worker-ignition-1, kubernetes.io/kube-apiserver-client-kubelet) and 2 more. Check that"),
        "{}",
        h.message
    );
    assert!(!h.message.contains("csr-10"));
}

#[test]
fn requests_that_could_not_be_listed_leave_the_node_findings_standing() {
    let t = thresholds();
    let message = "not allowed to list certificate signing requests: HTTP 403: nope. Grant it";
    let not_checked = CsrCheck::NotChecked {
        reason: "Forbidden",
        message: message.to_owned(),
    };
    // No node problem: Health stays True and says what was not checked.
    let mut f = judge(&[healthy("a")], &leases_for(&[healthy("a")]), now(), &t);
    f.certificate_requests = not_checked.clone();
    assert!(f.problems().is_empty());
    let r = report(&f, &t, None);
    job_report::validate(&r).unwrap();
    let c = |ty: &str| r.condition(ty).unwrap().clone();
    assert_eq!(
        (c("Applied").status, c("Applied").reason.as_str()),
        (ConditionStatus::True, "ChecksExecuted")
    );
    assert_eq!(
        c("Applied").message,
        "Checked 1 node and 1 node lease; certificate signing requests could not be listed (Forbidden)"
    );
    assert_eq!(c("Available").reason, "NodesReady");
    assert_eq!(
        (c("Health").status, c("Health").reason.as_str()),
        (ConditionStatus::True, "NoIssues")
    );
    assert_eq!(
        c("Health").message,
        format!("No issues on 1 node. Certificate signing requests were not checked: {message}.")
    );
    assert_eq!(
        r.data.as_ref().unwrap()["pending_certificate_requests"],
        json!({"checked": false, "reason": "Forbidden"})
    );

    // A node problem: it is reported as always, with the same note.
    let down = [not_ready("down", ConditionStatus::False, mins(10))];
    let mut f = judge(&down, &leases_for(&down), now(), &t);
    f.certificate_requests = not_checked;
    let h = report(&f, &t, None).condition("Health").unwrap().clone();
    assert_eq!(h.reason, "NodesNotReady");
    assert_eq!(
        h.message,
        format!(
            "1 node not Ready for longer than 5m: down. \
             Certificate signing requests were not checked: {message}."
        )
    );
}

#[test]
fn pending_requests_stay_within_the_limits_with_the_longest_names() {
    // 253-character names and requesters cut to the limit, no readable node.
    let long_user = format!("oidc:{}", "u".repeat(400));
    let csrs: Vec<CsrSummary> = (0..40)
        .map(|i| {
            CsrSummary::new(CsrFields {
                name: &format!("{i:03}{}", "c".repeat(250)),
                created: ago(mins(60)),
                signer_name: KUBELET_SERVING_SIGNER,
                username: &long_user,
                request_base64: "",
                state: CsrState::Pending,
            })
        })
        .collect();
    let t = thresholds();
    let r = report(&with_csrs(&[], &csrs, &t), &t, None);
    job_report::validate(&r).unwrap();
    assert!(r.data_json().len() < job_report::MAX_DATA_BYTES);
    let h = r.condition("Health").unwrap();
    assert_eq!(h.reason, "PendingCertificateRequests");
    assert!(h.message.len() < 8 * 1024, "{}", h.message.len());
    let listed = r.data.as_ref().unwrap()["pending_certificate_requests"]["requests"]
        .as_array()
        .unwrap()
        .len();
    assert!(listed > 0 && listed < 40, "{listed}");
}

/// Pins the whole report (every condition's text, `data` with its caps) over findings built
/// directly: each problem worst in turn, lists past the message and data limits, stuck nodes
/// with none, some and many finalizers, certificate requests checked and not, one node, a
/// healthy cluster with notes, and thresholds that word durations differently.
#[test]
fn reports_over_a_range_of_findings_are_pinned() {
    use std::fmt::Write as _;

    let names = |prefix: &str, n: usize| -> Vec<String> {
        (0..n).map(|i| format!("{prefix}-{i:02}")).collect()
    };
    let stuck = |name: &str, finalizers: usize| StuckNode {
        name: name.to_owned(),
        finalizers: (0..finalizers)
            .map(|i| format!("example.com/f{i}"))
            .collect(),
    };
    let pending = |i: usize| PendingCsr {
        name: format!("csr-{i:02}"),
        signer: if i.is_multiple_of(2) {
            KubeletSigner::Client
        } else {
            KubeletSigner::Serving
        },
        node: (!i.is_multiple_of(3)).then(|| format!("worker-{i}")),
        requested_by: match i % 4 {
            0 => Some("system:node:other".to_owned()),
            1 => Some(String::new()),
            _ => None,
        },
    };
    let long = |i: usize| format!("{}-{i:02}", "n".repeat(300));
    let full = Findings {
        total: 40,
        ready: 12,
        not_ready_within_grace: 2,
        not_ready: names("down", 12),
        memory_pressure: names("mem", 3),
        disk_pressure: [names("mem", 2), (0..15).map(long).collect()].concat(),
        pid_pressure: names("pid", 1),
        network_unavailable: names("mem", 1),
        cordoned: names("cordoned", 25),
        unverified: (0..11)
            .map(|i| UnverifiedNode {
                name: format!("new-{i:02}"),
                taints: vec!["a.example.com/unverified".into(), "b.example.com/x".into()],
            })
            .collect(),
        stuck_terminating: vec![stuck("gone-a", 0), stuck("gone-b", 3), stuck("gone-c", 8)],
        stale_heartbeat: names("silent", 10),
        leases: 39,
        certificate_requests: CsrCheck::Checked(CsrFindings {
            total: 30,
            pending: (0..25).map(pending).collect(),
            pending_within_grace: 3,
        }),
    };
    let not_checked = CsrCheck::NotChecked {
        reason: "Forbidden",
        message: "certificatesigningrequests is forbidden: User \"x\" cannot list".to_owned(),
    };
    // Each problem worst in turn: clear the worse ones one by one.
    let mut cases: Vec<(String, Findings)> = vec![("every problem".to_owned(), full.clone())];
    type Clear = fn(&mut Findings);
    let clears: [(&str, Clear); 6] = [
        ("not Ready", |f| f.not_ready.clear()),
        ("heartbeats", |f| f.stale_heartbeat.clear()),
        ("requests", |f| f.certificate_requests = CsrCheck::default()),
        ("pressure", |f| {
            f.memory_pressure.clear();
            f.disk_pressure.clear();
            f.pid_pressure.clear();
            f.network_unavailable.clear();
        }),
        ("stuck", |f| f.stuck_terminating.clear()),
        ("unverified", |f| f.unverified.clear()),
    ];
    let mut f = full.clone();
    for (what, clear) in clears {
        clear(&mut f);
        cases.push((format!("without {what} and the worse"), f.clone()));
    }
    let healthy = f;
    cases.push((
        "healthy, requests not checked".to_owned(),
        Findings {
            certificate_requests: not_checked.clone(),
            ..healthy.clone()
        },
    ));
    cases.push((
        "every problem, requests not checked".to_owned(),
        Findings {
            certificate_requests: not_checked,
            ..full.clone()
        },
    ));
    cases.push((
        "healthy, no notes".to_owned(),
        Findings {
            cordoned: Vec::new(),
            not_ready_within_grace: 0,
            ..healthy.clone()
        },
    ));
    cases.push((
        "one of each".to_owned(),
        Findings {
            total: 1,
            ready: 1,
            not_ready_within_grace: 1,
            not_ready: Vec::new(),
            memory_pressure: names("one", 1),
            disk_pressure: names("one", 1),
            pid_pressure: Vec::new(),
            network_unavailable: Vec::new(),
            cordoned: names("one", 1),
            unverified: Vec::new(),
            stuck_terminating: vec![stuck("one-00", 1)],
            stale_heartbeat: names("one", 1),
            leases: 1,
            certificate_requests: CsrCheck::Checked(CsrFindings {
                total: 1,
                pending: vec![pending(1)],
                pending_within_grace: 0,
            }),
        },
    ));
    cases.push(("nothing".to_owned(), Findings::default()));
    let thresholds = [
        Thresholds::default(),
        Thresholds {
            not_ready_grace: SignedDuration::from_secs(90),
            stuck_terminating_after: SignedDuration::from_hours(48),
            stale_heartbeat_after: SignedDuration::from_millis(1500),
            verification_grace: SignedDuration::from_mins(90),
            min_ready_nodes: 3,
            expected_nodes: Some(50),
            csr_pending_grace: SignedDuration::ZERO,
            ..thresholds()
        },
    ];
    let mut out = String::new();
    for (name, findings) in &cases {
        for (i, t) in thresholds.iter().enumerate() {
            let r = report(findings, t, (i == 1).then_some(7));
            let _ = writeln!(
                out,
                "[{name} | thresholds {i}]\n{}",
                serde_json::to_string(&r).unwrap()
            );
        }
    }
    insta::assert_snapshot!("reports_over_a_range_of_findings", out);
}
