#![allow(clippy::unwrap_used)]

use super::*;

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
    let f = judge(&all, &leases, now(), &t);
    assert_eq!(f.problems(), Problem::ALL.to_vec());
    let h = report(&f, &t, None).condition("Health").unwrap().clone();
    assert_eq!(h.reason, "NodesNotReady");
    assert_eq!(
        h.message,
        "1 node not Ready for longer than 5m: down. Also: 1 node without a recent heartbeat; 1 node under pressure; 1 node stuck terminating; 1 node unverified."
    );

    // Remove the worst one at a time: the next in the ordering takes over.
    let order: Vec<&str> = Problem::ALL.iter().map(|p| p.reason()).collect();
    assert_eq!(
        order,
        [
            "NodesNotReady",
            "StaleHeartbeats",
            "NodePressure",
            "NodesStuckTerminating",
            "NodesUnverified"
        ]
    );
    let without_down: Vec<NodeSummary> = all.iter().filter(|n| n.name != "down").cloned().collect();
    let f = judge(&without_down, &leases, now(), &t);
    assert_eq!(
        report(&f, &t, None).condition("Health").unwrap().reason,
        "StaleHeartbeats"
    );
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
    let mut shuffled = forward.clone();
    fastrand::Rng::with_seed(99).shuffle(&mut shuffled);
    let a = serde_json::to_vec(&report(&judge(&forward, &leases, now, &t), &t, Some(2))).unwrap();
    let b = serde_json::to_vec(&report(&judge(&shuffled, &leases, now, &t), &t, Some(2))).unwrap();
    assert_eq!(a, b);
    // The generator makes problems of every kind at this size.
    let f = judge(&forward, &leases, now, &t);
    assert_eq!(f.problems(), Problem::ALL.to_vec(), "{f:?}");
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
    let first = report(&judge(&nodes, &leases_for(&nodes), now(), &t), &t, None);
    let later = now() + SignedDuration::from_secs(10);
    let leases: HashMap<_, _> = nodes
        .iter()
        .map(|n| (n.name.clone(), later - SignedDuration::from_secs(3)))
        .collect();
    let second = report(&judge(&nodes, &leases, later, &t), &t, None);
    assert_eq!(first, second);
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
    let r = report(&judge(&nodes, &leases, now(), &t), &t, Some(5));
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
