//! What `hypershift-adapter diagnose` reads, all at once: the HyperFleet object and its
//! `…/statuses` list, a deleting cluster's NodePool list, the pulse Jobs and their Pods (as
//! kube-rs lists them), the Maestro works (as the REST list gives them); judged by
//! `diagnose::judge_all`, rendered as text and JSON.
//!
//! Input: a JSON object `{"kind", "object", "statuses", "nodepools", "jobs", "pods", "works"}`;
//! a part that is missing or does not deserialize is a read that failed (`?` links).
//!
//! Properties: the diagnosis always has its eight links, every line one line of at most 512
//! bytes, an exit code of the documented ones, a `?` or `✗` link says what it saw, and the text
//! and JSON render.
#![no_main]

use std::time::Duration;

use hypershift_adapter::diagnose::chain::{
    EXIT_HEALTHY, EXIT_IN_PROGRESS, EXIT_STUCK, EXIT_UNREADABLE, MAX_LINE, Mark,
};
use hypershift_adapter::diagnose::judge::{Kind, Observations, Settings};
use hypershift_adapter::diagnose::judge_all;
use hypershift_adapter::diagnose::read::{Failure, Pulses, Read};
use hypershift_fuzz::{CLUSTER_ID, NODEPOOL_ID, now, operator_clock};
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn part<T: DeserializeOwned>(input: &Value, key: &str) -> Read<T> {
    match input.get(key) {
        None => Err(Failure::new(
            Some(503),
            &format!("GET {key}: upstream unavailable"),
        )),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| Failure::new(None, &format!("{key}: the answer is not JSON: {e}"))),
    }
}

fn settings(kind: Kind) -> Settings {
    Settings {
        kind,
        id: match kind {
            Kind::Cluster => CLUSTER_ID,
            Kind::NodePool => NODEPOOL_ID,
        }
        .to_owned(),
        cluster_id: CLUSTER_ID.to_owned(),
        adapter: "hypershift".to_owned(),
        preconditions: vec!["validation".to_owned(), "dns".to_owned()],
        namespace: "hyperfleet-system".to_owned(),
        selector: "hyperfleet.io/adapter=controlplane".to_owned(),
        source: "hyperfleet-hypershift-adapter".to_owned(),
        agent_stale_after: Duration::from_secs(300),
        deletion_stuck_after: Duration::from_secs(1800),
        machines_stuck_after: Duration::from_secs(900),
        operator_stuck_after: operator_clock().stuck_after,
        now: now(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let kind = if input["kind"] == "nodepool" {
        Kind::NodePool
    } else {
        Kind::Cluster
    };
    let observations = Observations {
        object: part(&input, "object"),
        statuses: part(&input, "statuses"),
        nodepools: input.get("nodepools").map(|_| part(&input, "nodepools")),
        pulses: part(&input, "jobs").map(|jobs| Pulses {
            jobs,
            pods: part(&input, "pods"),
        }),
        works: part(&input, "works"),
    };
    let diagnosis = judge_all(&settings(kind), &observations);
    assert_eq!(diagnosis.links.len(), 8, "links: {:?}", diagnosis.links);
    assert!(
        [EXIT_HEALTHY, EXIT_STUCK, EXIT_UNREADABLE, EXIT_IN_PROGRESS]
            .contains(&diagnosis.exit_code),
        "exit code {}",
        diagnosis.exit_code
    );
    for link in &diagnosis.links {
        for text in [&link.evidence, &link.meaning, &link.action] {
            assert!(
                text.len() <= MAX_LINE && !text.contains('\n'),
                "{}: {text:?}",
                link.id
            );
        }
        if matches!(link.mark, Mark::Broken | Mark::Unknown) {
            assert!(!link.evidence.trim().is_empty(), "{} says nothing", link.id);
        }
    }
    let text = diagnosis.text();
    assert!(text.lines().count() >= 10, "{text}");
    let json: Value = serde_json::from_str(&diagnosis.json())
        .unwrap_or_else(|e| panic!("the JSON output does not parse: {e}"));
    assert_eq!(json["exit_code"], diagnosis.exit_code);
});
