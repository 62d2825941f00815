//! What the API concludes from the stored reports (`docs/hyperfleet-framework.md` §7.1; the
//! rules as the real server computes them, `api@541f6b4:pkg/services/aggregation.go`, checked
//! against `fixtures/hyperfleet/real-api/` and its `generations/`):
//!
//! | condition | status | observed_generation |
//! |---|---|---|
//! | `Reconciled` | True iff every required adapter's report is at the resource's generation with `Available=True`; while deleting, `Finalized=True` instead, and no active child left (`ReconciledWaitingForChildren` when only children remain) | the resource's generation |
//! | `LastKnownReconciled` | False while a required adapter has no report (`AdaptersMissingReports`); True when all report `Available=True` at one generation, or at mixed generations when it was already True; when some report False it stays True only if it was True and no False is at the tracked generation (its `observed_generation`) (`AdapterReportedNotAvailable`); otherwise False (`AdaptersNotAtSameGeneration`) | True: the common generation (mixed: the tracked one); False: the highest reported generation |
//! | `<Name>Successful` | one per required adapter with a report whose `Available` is True/False: its status, reason, message | the report's |
//!
//! Only required adapters count; a report above the resource's generation, without `Available`
//! or with `Available=Unknown` is no report here. Times: `created_time` is kept from the previous
//! condition (else the reference time, the resource's `updated_time`);
//! `last_transition_time` changes only with the status.

use std::collections::BTreeMap;

use jiff::Timestamp;

use super::{AdapterStatus, Condition};

/// One required adapter's `Available` signal.
#[derive(Debug, Clone)]
struct Snapshot {
    observed_time: Timestamp,
    available: bool,
    finalized: bool,
    generation: i64,
    reason: Option<String>,
    message: Option<String>,
}

/// The inputs of one recomputation.
pub(super) struct Input<'a> {
    pub generation: i64,
    /// The resource's `updated_time`.
    pub ref_time: Timestamp,
    pub deleting: bool,
    pub has_active_children: bool,
    pub required: &'a [String],
    pub statuses: &'a [AdapterStatus],
    pub previous: &'a [Condition],
}

/// `util.MapAdapterToConditionType` (§7.1): split on `-`, upper-case each part's first letter,
/// join, append `Successful`.
pub fn condition_type(adapter: &str) -> String {
    let mut out = String::new();
    for part in adapter.split('-') {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out.push_str("Successful");
    out
}

fn snapshots(input: &Input<'_>) -> BTreeMap<String, Snapshot> {
    let mut out = BTreeMap::new();
    for status in input.statuses {
        if !input.required.contains(&status.adapter)
            || status.observed_generation > input.generation
        {
            continue;
        }
        let find = |type_: &str| status.conditions.iter().find(|c| c["type"] == type_);
        let Some(available) = find("Available") else {
            continue;
        };
        let available_true = match available["status"].as_str() {
            Some("True") => true,
            Some("False") => false,
            _ => continue,
        };
        let text = |key: &str| available[key].as_str().map(str::to_owned);
        out.insert(
            status.adapter.clone(),
            Snapshot {
                observed_time: status.last_report_time,
                available: available_true,
                finalized: find("Finalized").is_some_and(|c| c["status"] == "True"),
                generation: status.observed_generation,
                reason: text("reason"),
                message: text("message"),
            },
        );
    }
    out
}

/// The resource's conditions after a change: `Reconciled`, `LastKnownReconciled`, then one
/// `<Name>Successful` per reporting required adapter in the configured order.
pub(super) fn aggregate(input: &Input<'_>) -> Vec<Condition> {
    let snaps = snapshots(input);
    let previous = |type_: &str| input.previous.iter().find(|c| c.type_ == type_);
    let mut out = vec![
        reconciled(input, &snaps, previous("Reconciled")),
        last_known_reconciled(input, &snaps, previous("LastKnownReconciled")),
    ];
    for adapter in input.required {
        let Some(snap) = snaps.get(adapter) else {
            continue;
        };
        let type_ = condition_type(adapter);
        let prev = previous(&type_);
        let status = status_word(snap.available);
        out.push(Condition {
            created_time: prev.map_or(input.ref_time, |p| p.created_time),
            last_transition_time: prev
                .filter(|p| p.status == status)
                .map_or(snap.observed_time, |p| p.last_transition_time),
            last_updated_time: snap.observed_time,
            type_,
            status,
            reason: snap.reason.clone(),
            message: snap.message.clone(),
            observed_generation: snap.generation,
        });
    }
    out
}

fn status_word(value: bool) -> &'static str {
    if value { "True" } else { "False" }
}

fn listed(names: &[&String]) -> String {
    let mut names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    names.sort_unstable();
    names.join(", ")
}

fn reconciled(
    input: &Input<'_>,
    snaps: &BTreeMap<String, Snapshot>,
    prev: Option<&Condition>,
) -> Condition {
    let generation = input.generation;
    let met = |snap: &Snapshot| {
        snap.generation == generation
            && if input.deleting {
                snap.finalized
            } else {
                snap.available
            }
    };
    let all_met =
        !input.required.is_empty() && input.required.iter().all(|a| snaps.get(a).is_some_and(met));
    let status = status_word(all_met && !(input.deleting && input.has_active_children));
    let (reason, message) = if status == "True" {
        (
            "ReconciledAll",
            "All required adapters reported Available=True or Finalized=True at the current generation"
                .to_owned(),
        )
    } else if input.deleting && all_met {
        (
            "ReconciledWaitingForChildren",
            "Deletion in progress. All required adapters reported Finalized=True but child resources still exist"
                .to_owned(),
        )
    } else {
        let missing: Vec<&String> = input
            .required
            .iter()
            .filter(|a| !snaps.get(*a).is_some_and(met))
            .collect();
        let reporting: Vec<&String> = input
            .required
            .iter()
            .filter(|a| snaps.contains_key(*a))
            .collect();
        let what = if input.deleting {
            "Finalized=True"
        } else {
            "Available=True"
        };
        (
            "ReconciledMissingAdapters",
            format!(
                "Required adapters not reporting {what}: [{}]. Currently reporting: [{}]",
                listed(&missing),
                listed(&reporting)
            ),
        )
    };
    // last_updated_time: the earliest report at the current generation, else the reference time.
    let last_updated = input
        .required
        .iter()
        .filter_map(|a| snaps.get(a))
        .filter(|s| s.generation == generation)
        .map(|s| s.observed_time)
        .min()
        .unwrap_or(input.ref_time);
    let last_transition = match prev {
        None => last_updated,
        Some(p) if p.status == status => p.last_transition_time,
        // A generation bump turns True into False at the resource's update time.
        Some(p) if p.status == "True" && generation > p.observed_generation => input.ref_time,
        Some(_) => last_updated,
    };
    Condition {
        type_: "Reconciled".into(),
        status,
        reason: Some(reason.into()),
        message: Some(message),
        observed_generation: generation,
        created_time: prev.map_or(input.ref_time, |p| p.created_time),
        last_updated_time: last_updated,
        last_transition_time: last_transition,
    }
}

fn last_known_reconciled(
    input: &Input<'_>,
    snaps: &BTreeMap<String, Snapshot>,
    prev: Option<&Condition>,
) -> Condition {
    let required = input.required;
    let missing = required.is_empty() || required.iter().any(|a| !snaps.contains_key(a));
    let reported: Vec<&Snapshot> = required.iter().filter_map(|a| snaps.get(a)).collect();
    let all_true = !missing && reported.iter().all(|s| s.available);
    let common = reported.first().map(|s| s.generation);
    let mixed = all_true && reported.iter().any(|s| Some(s.generation) != common);
    let prev_true = prev.is_some_and(|p| p.status == "True");
    let status = if missing {
        false
    } else if all_true {
        !mixed || prev_true
    } else if let Some(p) = prev.filter(|_| prev_true) {
        // Sticky: a failure counts only at the tracked generation.
        !reported
            .iter()
            .any(|s| !s.available && s.generation == p.observed_generation)
    } else {
        false
    };
    let generation = if required.is_empty() {
        1
    } else if status {
        match (all_true && !mixed, common, prev) {
            (true, Some(g), _) => g,
            (_, _, Some(p)) => p.observed_generation,
            _ => 1,
        }
    } else {
        reported
            .iter()
            .map(|s| s.generation)
            .max()
            .or(prev.map(|p| p.observed_generation))
            .unwrap_or(1)
    };
    let last_updated = if required.is_empty() {
        input.ref_time
    } else if all_true && !mixed {
        reported
            .iter()
            .map(|s| s.observed_time)
            .min()
            .unwrap_or(input.ref_time)
    } else {
        let failed_here = !status
            && reported
                .iter()
                .any(|s| s.generation == generation && !s.available);
        let at_generation = reported
            .iter()
            .filter(|s| s.generation == generation)
            .map(|s| s.observed_time)
            .min();
        match (failed_here, at_generation, prev) {
            (true, Some(t), _) => t,
            (_, _, Some(p)) => p.last_updated_time,
            _ => input.ref_time,
        }
    };
    let status = status_word(status);
    let (reason, message) = if status == "True" {
        (
            "AllAdaptersReconciled",
            "All required adapters report Available=True for the tracked generation",
        )
    } else if missing {
        (
            "AdaptersMissingReports",
            "Required adapters have not yet reported status",
        )
    } else if reported.iter().any(|s| !s.available) {
        (
            "AdapterReportedNotAvailable",
            "One or more required adapters report Available=False",
        )
    } else {
        (
            "AdaptersNotAtSameGeneration",
            "Required adapters do not report a consistent Available state",
        )
    };
    Condition {
        type_: "LastKnownReconciled".into(),
        status,
        reason: Some(reason.into()),
        message: Some(message.into()),
        observed_generation: generation,
        created_time: prev.map_or(input.ref_time, |p| p.created_time),
        last_updated_time: last_updated,
        last_transition_time: match prev {
            Some(p) if p.status == status => p.last_transition_time,
            _ => last_updated,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adapter_names_map_to_condition_types_as_documented() {
        for (adapter, expected) in [
            ("validation", "ValidationSuccessful"),
            ("dns", "DnsSuccessful"),
            ("pullsecret", "PullsecretSuccessful"),
            ("hypershift", "HypershiftSuccessful"),
            ("my-adapter", "MyAdapterSuccessful"),
            ("mgmt-health", "MgmtHealthSuccessful"),
        ] {
            assert_eq!(condition_type(adapter), expected);
        }
    }
}
