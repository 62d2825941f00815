//! What the recorded operator states give: every HostedCluster and NodePool the real HyperShift
//! operator wrote (`../shared/fixtures/hypershift-operator/`: snapshots, create and update
//! responses, watch events) is fed to the adapter's own mapping as the work agent would report it,
//! and the Applied / Available / Health (and, while deleting, Finalized) reasons must be the
//! table of `docs/recorded-operator-states.md` ("What the recorded operator states give") for the
//! object's state. That table is the expectation: a row that the recordings do not reach, a state
//! without a row, or a state that gives two different results fails.
//!
//! How an object reaches the mapping (the pulse's own functions, nothing re-implemented):
//! - not being deleted: a work whose manifest the agent reports `Applied`, `Available` and
//!   `StatusFeedbackSynced` True, with the object's `.status` as the `status` feedback value (none
//!   when the object has no status) → `report_observed` of `controlplane` / `nodepool`;
//! - `deletionTimestamp` set (the HyperFleet resource was deleted, the adapter requested the
//!   work's deletion on an earlier pulse): the finalizers and deletion timestamp fed back, the
//!   manifest `Available=False` for a watch `DELETED` event (the object is gone) →
//!   `report_deletion` with HyperFleet's `deleted_time` = the object's `deletionTimestamp` and
//!   "now" = the snapshot's `capturedAt` (the event's deletion time for watch events).
//!
//! `inputs/` is what was sent, not what the operator wrote, and is not read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use hypershift_adapter::hypershift::hostedcluster::status::types as hc_types;
use hypershift_adapter::hypershift::nodepool::status::{Desired, MachinesClock, types as np_types};
use hypershift_adapter::pulse::{controlplane, nodepool};
use hypershift_adapter::work::deletion::Progress;
use hypershift_adapter::work::feedback::ObjectDeletion;
use hypershift_adapter::work::manifestwork::{
    DELETION_TIMESTAMP_FEEDBACK_NAME, FINALIZERS_FEEDBACK_NAME, GENERATION_FEEDBACK_NAME,
    STATUS_FEEDBACK_NAME,
};
use hypershift_adapter::work::observed::OperatorClock;
use hypershift_adapter::work::outcome::WorkRef;
use hypershift_adapter::work::{ExistingWork, ManifestStatus, ResourceIdentity, WorkCondition};
use job_report::Report;
use serde_json::Value;

const CONSUMER: &str = "us-east-mgmt-01";
const HC_WORK: &str = "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
const NP_WORK: &str = "nodepool-019a6f2b-8d13-7a64-b5c2-3e9f0d7a1c58";
/// The adapter's defaults (`--deletion-stuck-after`, `--machines-stuck-after`).
const DELETION_STUCK_AFTER: Duration = Duration::from_secs(30 * 60);
const MACHINES_STUCK_AFTER: Duration = Duration::from_secs(15 * 60);
const OPERATOR_STUCK_AFTER: Duration = Duration::from_secs(10 * 60);

/// One recorded object and where it was found.
struct Recorded {
    /// `dir/file` and, for lists, the index.
    source: String,
    /// The watch event's type, for watch files.
    event: Option<String>,
    object: Value,
    /// The snapshot's `capturedAt`, when the object came from one.
    captured_at: Option<String>,
}

fn fixtures() -> Option<PathBuf> {
    job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/hypershift-operator")
}

/// Every HostedCluster and NodePool the operator's runs recorded.
fn recorded(dir: &Path) -> Vec<Recorded> {
    let mut found = Vec::new();
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.ends_with("inputs"))
        .collect();
    scenarios.sort();
    assert!(!scenarios.is_empty(), "no scenario folders in {dir:?}");
    for scenario in scenarios {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&scenario)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for file in files {
            let name = format!(
                "{}/{}",
                scenario.file_name().unwrap().to_string_lossy(),
                file.file_name().unwrap().to_string_lossy()
            );
            let value: Value = serde_json::from_slice(&std::fs::read(&file).unwrap())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            match &value {
                Value::Array(events) => {
                    for (i, e) in events.iter().enumerate() {
                        found.push(Recorded {
                            source: format!("{name}[{i}]"),
                            event: Some(e["type"].as_str().unwrap().to_owned()),
                            object: e["object"].clone(),
                            captured_at: None,
                        });
                    }
                }
                Value::Object(o) if o.contains_key("hostedclusters") => {
                    for key in ["hostedclusters", "nodepools"] {
                        for (i, object) in o[key].as_array().unwrap().iter().enumerate() {
                            found.push(Recorded {
                                source: format!("{name} {key}[{i}]"),
                                event: None,
                                object: object.clone(),
                                captured_at: o["capturedAt"].as_str().map(str::to_owned),
                            });
                        }
                    }
                }
                Value::Object(o) if o.contains_key("kind") => found.push(Recorded {
                    source: name,
                    event: None,
                    object: value.clone(),
                    captured_at: None,
                }),
                _ => panic!("{name}: neither a snapshot, a watch list nor an object"),
            }
        }
    }
    found
}

fn has_condition(object: &Value, type_: &str, status: &str) -> bool {
    object["status"]["conditions"].as_array().is_some_and(|l| {
        l.iter()
            .any(|c| c["type"] == type_ && c["status"] == status)
    })
}

/// Whether the object's conditions of `read` (the types the tables read) describe an older
/// spec than its `metadata.generation`: the operator has not reconciled its latest spec yet.
fn behind(object: &Value, read: &[&str]) -> bool {
    let generation = object["metadata"]["generation"].as_i64().unwrap_or(0);
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["type"].as_str().is_some_and(|t| read.contains(&t)))
        .filter_map(|c| c["observedGeneration"].as_i64())
        .any(|g| g < generation)
}

fn has_status(object: &Value) -> bool {
    object.get("status").is_some_and(|s| !s.is_null())
}

/// The table row an object belongs to (the row's first cell, exactly).
fn state(r: &Recorded) -> &'static str {
    let o = &r.object;
    let kind = o["kind"].as_str().unwrap();
    let deleting = o["metadata"]["deletionTimestamp"].is_string();
    let gone = r.event.as_deref() == Some("DELETED");
    match kind {
        "HostedCluster" => {
            if !has_status(o) {
                "HostedCluster created, no status yet"
            } else if gone {
                "HostedCluster gone (watch `DELETED`), deletion requested"
            } else if deleting && has_condition(o, "HostedClusterDestroyed", "True") {
                "HostedCluster deleting with a grace period (`HostedClusterDestroyed=True WaitingForGracePeriod`)"
            } else if deleting && o["metadata"]["name"] == "none3" {
                "HostedCluster deleting while the operator is down (finalizer held, status frozen)"
            } else if deleting {
                "HostedCluster deleting, operator running (finalizer held for < 1 s)"
            } else if behind(o, &hc_types::ALL) && has_condition(o, "ValidConfiguration", "False") {
                "HostedCluster spec ahead of its status (a condition's `observedGeneration` < `metadata.generation`), invalid configuration"
            } else if behind(o, &hc_types::ALL) {
                "HostedCluster spec ahead of its status (a condition's `observedGeneration` < `metadata.generation`: the operator's own `clusterID`/`infraID` writes, the release patch), blocked"
            } else if has_condition(o, "ValidConfiguration", "False") {
                "invalid configuration (`ValidConfiguration=False InvalidConfiguration`, `ReconciliationSucceeded=False`)"
            } else if o["status"]["version"]["history"]
                .as_array()
                .is_some_and(|h| h.len() > 1)
            {
                "update in progress (release changed, history entry `Partial` prepended), still blocked"
            } else if o["metadata"]["finalizers"]
                .as_array()
                .is_none_or(Vec::is_empty)
            {
                "first status, before the finalizer (release image not resolvable)"
            } else if has_condition(o, "ValidReleaseImage", "False")
                && has_condition(o, "Progressing", "False")
            {
                "blocked (`ValidReleaseImage=False PayloadArchNotFound`, `Progressing=False Blocked`, `Degraded=Unknown`)"
            } else {
                panic!(
                    "{}: a HostedCluster state the table does not know",
                    r.source
                )
            }
        }
        "NodePool" => {
            if gone {
                "NodePool gone (watch `DELETED`), deletion requested"
            } else if deleting {
                "NodePool deleting (finalizer held for < 1 s)"
            } else if !has_status(o) {
                "NodePool created, no status yet"
            } else if behind(o, &np_types::ALL) {
                "NodePool spec ahead of its status (a condition's `observedGeneration` < `metadata.generation`: the release patch)"
            } else if has_condition(o, "ValidReleaseImage", "False") {
                "NodePool `ValidReleaseImage=False ValidationFailed` (GCP and None)"
            } else {
                panic!("{}: a NodePool state the table does not know", r.source)
            }
        }
        other => panic!("{}: unexpected kind {other}", r.source),
    }
}

fn condition(type_: &str, status: &str) -> WorkCondition {
    WorkCondition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: String::new(),
        message: String::new(),
        observed_generation: None,
        last_transition_time: String::new(),
    }
}

/// The work as the agent reports it for `object` (`gone`: the object is no longer there).
fn work_for(object: &Value, resource: &str, gone: bool) -> ExistingWork {
    let meta = &object["metadata"];
    let mut values = BTreeMap::new();
    if has_status(object) && !gone {
        values.insert(STATUS_FEEDBACK_NAME.to_owned(), object["status"].clone());
    }
    // What the agent feeds back for `.metadata.generation` (an Integer).
    if let Some(generation) = meta["generation"].as_i64() {
        values.insert(GENERATION_FEEDBACK_NAME.to_owned(), generation.into());
    }
    if let Some(t) = meta["deletionTimestamp"].as_str() {
        values.insert(
            DELETION_TIMESTAMP_FEEDBACK_NAME.to_owned(),
            Value::String(t.to_owned()),
        );
    }
    if let Some(f) = meta.get("finalizers") {
        values.insert(FINALIZERS_FEEDBACK_NAME.to_owned(), f.clone());
    }
    let available = if gone { "False" } else { "True" };
    ExistingWork {
        manifests: vec![ManifestStatus {
            resource: ResourceIdentity {
                group: "hypershift.openshift.io".to_owned(),
                version: "v1beta1".to_owned(),
                kind: object["kind"].as_str().unwrap().to_owned(),
                resource: resource.to_owned(),
                namespace: meta["namespace"].as_str().unwrap().to_owned(),
                name: meta["name"].as_str().unwrap().to_owned(),
            },
            conditions: vec![
                condition("Applied", "True"),
                condition("Available", available),
                condition("StatusFeedbackSynced", "True"),
            ],
            values,
        }],
        conditions: vec![condition("Applied", "True"), condition("Available", "True")],
        ..ExistingWork::default()
    }
}

/// The pulse's report for a recorded object, and the "now" it was judged at.
fn report_for(r: &Recorded, now: &str) -> Report {
    let o = &r.object;
    let meta = &o["metadata"];
    let place = (
        meta["namespace"].as_str().unwrap(),
        meta["name"].as_str().unwrap(),
    );
    let generation = meta["generation"].as_i64();
    let gone = r.event.as_deref() == Some("DELETED");
    let now_ts: jiff::Timestamp = now.parse().unwrap();
    match (
        o["kind"].as_str().unwrap(),
        meta["deletionTimestamp"].as_str(),
    ) {
        ("HostedCluster", None) => {
            let work = WorkRef {
                consumer: CONSUMER,
                name: HC_WORK,
            };
            controlplane::report_observed(
                work,
                &work_for(o, "hostedclusters", false),
                place,
                generation,
                operator_clock(now_ts),
            )
        }
        ("HostedCluster", Some(deleted_time)) => {
            let work = WorkRef {
                consumer: CONSUMER,
                name: HC_WORK,
            };
            let existing = work_for(o, "hostedclusters", gone);
            let stuck = controlplane::deletion::is_stuck(
                deleted_time,
                controlplane::deletion::Clock {
                    now: now_ts,
                    stuck_after: DELETION_STUCK_AFTER,
                },
            );
            controlplane::deletion::report_deletion(
                work,
                place,
                &controlplane::deletion::Stage::Requested {
                    now: false,
                    hc: ObjectDeletion::from_manifest(existing.manifests.first()),
                },
                None,
                deleted_time,
                stuck,
                generation,
            )
        }
        ("NodePool", None) => {
            let work = WorkRef {
                consumer: CONSUMER,
                name: NP_WORK,
            };
            let clock = MachinesClock {
                now: now_ts,
                stuck_after: MACHINES_STUCK_AFTER,
            };
            nodepool::report_observed(
                work,
                &work_for(o, "nodepools", false),
                place,
                &Desired::of(o),
                (clock, operator_clock(now_ts)),
                generation,
            )
        }
        ("NodePool", Some(deleted_time)) => {
            let work = WorkRef {
                consumer: CONSUMER,
                name: NP_WORK,
            };
            let existing = work_for(o, "nodepools", gone);
            let stuck = hypershift_adapter::work::deletion::is_late(
                deleted_time,
                hypershift_adapter::work::deletion::Clock {
                    now: now_ts,
                    stuck_after: DELETION_STUCK_AFTER,
                },
            );
            nodepool::report_deletion(
                work,
                place,
                &Progress::Requested {
                    now: false,
                    object: ObjectDeletion::from_manifest(existing.manifests.first()),
                },
                deleted_time,
                stuck,
                generation,
            )
        }
        (other, _) => panic!("{}: unexpected kind {other}", r.source),
    }
}

/// The adapter's default `--operator-stuck-after`, at `now`.
fn operator_clock(now: jiff::Timestamp) -> OperatorClock {
    OperatorClock {
        now,
        stuck_after: OPERATOR_STUCK_AFTER,
    }
}

/// "now" for an object: the snapshot's capture time, else its deletion time, else its creation.
fn now_of(r: &Recorded) -> String {
    let meta = &r.object["metadata"];
    r.captured_at
        .clone()
        .or_else(|| meta["deletionTimestamp"].as_str().map(str::to_owned))
        .unwrap_or_else(|| meta["creationTimestamp"].as_str().unwrap().to_owned())
}

/// `[Applied, Available, Health, Finalized]` as the table writes them: ``True `Reason` ``, `—`.
fn cells(report: &Report) -> [String; 4] {
    ["Applied", "Available", "Health", "Finalized"].map(|t| {
        report.condition(t).map_or_else(
            || "—".to_owned(),
            |c| format!("{} `{}`", c.status.as_str(), c.reason),
        )
    })
}

/// Every Health=False names a condition of the object in the operator's words: `Type=Status
/// (Reason)` (deletion rows excepted: their Health is about the deletion).
fn assert_health_quotes_the_operator(r: &Recorded, report: &Report) {
    let health = report.condition("Health").unwrap();
    if health.status.as_str() != "False" || report.condition("Finalized").is_some() {
        return;
    }
    let quoted = r.object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| {
            health.message.contains(&format!(
                "{}={} ({})",
                c["type"].as_str().unwrap(),
                c["status"].as_str().unwrap(),
                c["reason"].as_str().unwrap_or_default()
            ))
        });
    assert!(
        quoted,
        "{}: Health does not quote the operator: {}",
        r.source, health.message
    );
}

/// The page's rows: first cell → the four condition cells.
fn documented_rows() -> BTreeMap<String, [String; 4]> {
    let page = std::fs::read_to_string(format!("{}/../{PAGE}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{PAGE}: {e}"));
    let start = page
        .find(TITLE)
        .unwrap_or_else(|| panic!("no {TITLE:?} in {PAGE}"));
    page[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|row| {
            let c: Vec<&str> = row.split('|').map(str::trim).collect();
            assert_eq!(c.len(), 8, "7 columns expected: {row}");
            (c[1].to_owned(), [c[3], c[4], c[5], c[6]].map(str::to_owned))
        })
        .collect()
}

/// The page with the table, and its title.
const PAGE: &str = "docs/recorded-operator-states.md";
const TITLE: &str = "# What the recorded operator states give";

/// The derived row: the operator stays down past `--deletion-stuck-after`.
const STUCK_ROW: &str =
    "HostedCluster deleting while the operator is down, judged 31 min after the delete";

#[test]
fn every_recorded_operator_state_gives_its_documented_row() {
    let Some(dir) = fixtures() else { return };
    let objects = recorded(&dir);
    let expected = documented_rows();
    let mut seen: BTreeMap<&str, BTreeSet<[String; 4]>> = BTreeMap::new();
    let mut sources: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &objects {
        let state = state(r);
        let report = report_for(r, &now_of(r));
        job_report::validate(&report).unwrap_or_else(|e| panic!("{}: {e:?}", r.source));
        assert_health_quotes_the_operator(r, &report);
        seen.entry(state).or_default().insert(cells(&report));
        *sources.entry(state).or_default() += 1;
        // The operator down for longer than the deletion may take: the same frozen object later.
        if state.starts_with("HostedCluster deleting while the operator is down")
            && r.event.is_none()
        {
            let deleted: jiff::Timestamp = r.object["metadata"]["deletionTimestamp"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            let later = deleted + jiff::SignedDuration::from_mins(31);
            let report = report_for(r, &later.to_string());
            let health = &report.condition("Health").unwrap().message;
            assert!(
                health.contains("hypershift.openshift.io/finalizer"),
                "{}: {health}",
                r.source
            );
            seen.entry(STUCK_ROW).or_default().insert(cells(&report));
            *sources.entry(STUCK_ROW).or_default() += 1;
        }
    }
    let mut problems = Vec::new();
    for (state, outcomes) in &seen {
        match expected.get(*state) {
            None => problems.push(format!("no row in {PAGE} for {state:?}: {outcomes:?}")),
            Some(row) if outcomes.len() != 1 || !outcomes.contains(row) => problems.push(format!(
                "{state:?}: {PAGE} says {row:?}, the recordings give {outcomes:?}"
            )),
            Some(_) => {}
        }
    }
    for state in expected.keys() {
        if !seen.contains_key(state.as_str()) {
            problems.push(format!("{PAGE} row {state:?} matches no recorded object"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Every kind of file was read.
    assert!(objects.iter().any(|r| r.event.is_some()), "watch events");
    assert!(objects.iter().any(|r| r.captured_at.is_some()), "snapshots");
    assert!(
        objects
            .iter()
            .any(|r| r.source.contains("-response-") && r.object["kind"] == "NodePool"),
        "responses"
    );
    eprintln!("recorded objects per state: {sources:?}");
}

#[test]
fn the_blocked_cluster_says_what_the_operator_says() {
    let Some(dir) = fixtures() else { return };
    let blocked = recorded(&dir)
        .into_iter()
        .find(|r| r.source == "b-gke-like/03-after-3min.json hostedclusters[0]")
        .expect("gcp2 three minutes after create");
    let report = report_for(&blocked, &now_of(&blocked));
    let health = report.condition("Health").unwrap();
    assert_eq!(health.reason, controlplane::RELEASE_IMAGE_INVALID);
    let release = blocked.object["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "ValidReleaseImage")
        .unwrap();
    let message = release["message"].as_str().unwrap();
    assert!(
        health.message.contains(&format!(
            "HostedCluster ValidReleaseImage=False (PayloadArchNotFound): {message}"
        )),
        "{}",
        health.message
    );
    assert!(
        health.message.contains("Progressing=False (Blocked)"),
        "{}",
        health.message
    );
    let available = report.condition("Available").unwrap();
    assert_eq!(available.reason, controlplane::BLOCKED);
    assert!(
        available
            .message
            .contains("Blocked by: ValidReleaseImage=False (PayloadArchNotFound)"),
        "{}",
        available.message
    );
}
