//! The pure selection: which management cluster receives a new control plane, and why every
//! other candidate was passed over.
//!
//! Candidates are the inventory entries of the cluster's region. Passed over, each with its
//! reason: `region <r>`, `unhealthy: <detail>`, `cordoned`, `full: <load>/<max>`, `unknown
//! consumer`, `invalid spec: …`, `load unknown: <error>`. Among the rest the least live count
//! wins; ties go to the highest rendezvous hash (UUIDv5/SHA-1 of `<cluster id>/<consumer>`), so a
//! retried pulse picks the same one and different clusters order candidates differently.

use uuid::Uuid;

use super::entity::{Health, ManagementCluster};

/// A management cluster that may receive a new control plane (before its load is known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The entity's name (messages).
    pub name: String,
    /// Its Maestro consumer.
    pub consumer: String,
    /// `max_hosted_clusters`.
    pub max: u64,
}

/// A candidate passed over, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedOver {
    pub name: String,
    pub reason: String,
}

impl std::fmt::Display for PassedOver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.name, self.reason)
    }
}

/// The first screen, before any load is read: region, spec, health, cordon. `exclude` is a
/// consumer withdrawn in this pulse (failover) and the detail of why.
pub fn screen(
    region: &str,
    inventory: &[ManagementCluster],
    exclude: Option<(&str, &str)>,
) -> (Vec<Candidate>, Vec<PassedOver>) {
    let mut eligible = Vec::new();
    let mut passed = Vec::new();
    for mc in inventory {
        let pass = |reason: String| PassedOver {
            name: mc.name.clone(),
            reason,
        };
        let spec = match &mc.spec {
            Ok(spec) => spec,
            Err(why) => {
                passed.push(pass(why.clone()));
                continue;
            }
        };
        if spec.region != region {
            passed.push(pass(format!("region {}", spec.region)));
            continue;
        }
        if let Some((consumer, detail)) = exclude
            && consumer == spec.maestro_consumer
        {
            passed.push(pass(format!("unhealthy: {detail}")));
            continue;
        }
        match mc.health() {
            Health::Healthy => {}
            Health::Unavailable(d) | Health::NotReady(d) => {
                passed.push(pass(format!("unhealthy: {d}")));
                continue;
            }
        }
        if spec.cordoned {
            passed.push(pass("cordoned".to_owned()));
            continue;
        }
        eligible.push(Candidate {
            name: mc.name.clone(),
            consumer: spec.maestro_consumer.clone(),
            max: spec.max_hosted_clusters,
        });
    }
    (eligible, passed)
}

/// The rendezvous hash of `cluster_id` on `consumer`: UUIDv5 (namespace OID) of
/// `<cluster id>/<consumer>`, compared as bytes.
pub fn rendezvous(cluster_id: &str, consumer: &str) -> Uuid {
    Uuid::new_v5(
        &Uuid::NAMESPACE_OID,
        format!("{cluster_id}/{consumer}").as_bytes(),
    )
}

/// Orders the eligible candidates with their loads, best first: full ones and unknown loads are
/// passed over; then least live count, ties by highest [`rendezvous`] hash.
pub fn rank(
    cluster_id: &str,
    loaded: Vec<(Candidate, Result<u64, String>)>,
    passed: &mut Vec<PassedOver>,
) -> Vec<(Candidate, u64)> {
    let mut ranked = Vec::new();
    for (candidate, load) in loaded {
        match load {
            Err(e) => passed.push(PassedOver {
                name: candidate.name.clone(),
                reason: format!("load unknown: {e}"),
            }),
            Ok(load) if load >= candidate.max => passed.push(PassedOver {
                name: candidate.name.clone(),
                reason: format!("full: {load}/{}", candidate.max),
            }),
            Ok(load) => ranked.push((candidate, load)),
        }
    }
    ranked.sort_by(|(a, la), (b, lb)| {
        la.cmp(lb).then_with(|| {
            rendezvous(cluster_id, &b.consumer).cmp(&rendezvous(cluster_id, &a.consumer))
        })
    });
    ranked
}

/// The Applied message of `NoManagementClusterAvailable`: every candidate and why it was passed
/// over, or that the region has none.
pub fn none_available_message(region: &str, passed: &[PassedOver]) -> String {
    if passed.is_empty() {
        return format!(
            "No management cluster can take this control plane: no ManagementCluster in region {region}. Nothing was sent. Register a ManagementCluster for region {region} (or add one to the inventory file); the next pulse places the cluster"
        );
    }
    let list: Vec<String> = passed.iter().map(ToString::to_string).collect();
    format!(
        "No management cluster in region {region} can take this control plane; nothing was sent. Passed over: {}. Add capacity, uncordon or restore a management cluster of region {region}; the next pulse places the cluster",
        list.join("; ")
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::{Value, json};

    use super::*;

    const CLUSTER: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";

    fn mc(name: &str, region: &str, extra: Value, status: Option<Value>) -> ManagementCluster {
        let mut spec =
            json!({"region": region, "maestro_consumer": name, "max_hosted_clusters": 200});
        for (k, v) in extra.as_object().unwrap() {
            spec[k] = v.clone();
        }
        let mut item =
            json!({"kind": "ManagementCluster", "name": name, "generation": 1, "spec": spec});
        if let Some(status) = status {
            item["status"] = status;
        }
        ManagementCluster::from_value(&item)
    }

    fn healthy() -> Option<Value> {
        Some(json!({"conditions": [
            {"type": "Reconciled", "status": "True", "reason": "ReconciledAll", "observed_generation": 1},
            {"type": "LastKnownReconciled", "status": "True", "reason": "AllAdaptersReconciled", "observed_generation": 1}]}))
    }

    #[test]
    fn the_screen_passes_over_other_regions_unhealthy_cordoned_and_invalid_with_reasons() {
        let inventory = vec![
            mc("mgmt-use1-a", "us-east1", json!({}), healthy()),
            mc("mgmt-euw2-a", "europe-west2", json!({}), healthy()),
            mc(
                "mgmt-use1-b",
                "us-east1",
                json!({}),
                Some(json!({"conditions": [
                {"type": "LastKnownReconciled", "status": "False", "reason": "AdaptersMissingReports", "observed_generation": 1}]})),
            ),
            mc(
                "mgmt-use1-c",
                "us-east1",
                json!({"cordoned": true}),
                healthy(),
            ),
            mc(
                "mgmt-use1-d",
                "us-east1",
                json!({"max_hosted_clusters": "lots"}),
                healthy(),
            ),
            mc("mgmt-use1-e", "us-east1", json!({}), None),
        ];
        let (eligible, passed) = screen("us-east1", &inventory, None);
        let names: Vec<&str> = eligible.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["mgmt-use1-a", "mgmt-use1-e"]);
        let reasons: Vec<String> = passed.iter().map(ToString::to_string).collect();
        assert_eq!(
            reasons,
            [
                "mgmt-euw2-a: region europe-west2",
                "mgmt-use1-b: unhealthy: LastKnownReconciled=False at generation 1 (AdaptersMissingReports)",
                "mgmt-use1-c: cordoned",
                "mgmt-use1-d: invalid spec: spec.max_hosted_clusters must be an integer ≥ 0, not \"lots\"",
            ]
        );
        // A consumer withdrawn in this pulse is not chosen again.
        let (eligible, passed) = screen(
            "us-east1",
            &inventory,
            Some(("mgmt-use1-a", "LastKnownReconciled=False")),
        );
        assert_eq!(eligible.len(), 1);
        assert!(
            passed
                .iter()
                .any(|p| p.to_string() == "mgmt-use1-a: unhealthy: LastKnownReconciled=False")
        );
    }

    fn cand(name: &str, max: u64) -> Candidate {
        Candidate {
            name: name.into(),
            consumer: name.into(),
            max,
        }
    }

    #[test]
    fn the_least_loaded_wins_full_and_unknown_loads_are_passed_over() {
        let mut passed = Vec::new();
        let ranked = rank(
            CLUSTER,
            vec![
                (cand("mgmt-use1-a", 200), Ok(150)),
                (cand("mgmt-use1-b", 200), Ok(200)),
                (cand("mgmt-use1-c", 200), Ok(12)),
                (cand("mgmt-use1-d", 0), Ok(0)),
                (cand("mgmt-use1-e", 200), Err("HTTP 500".into())),
            ],
            &mut passed,
        );
        let names: Vec<&str> = ranked.iter().map(|(c, _)| c.name.as_str()).collect();
        assert_eq!(names, ["mgmt-use1-c", "mgmt-use1-a"]);
        let reasons: Vec<String> = passed.iter().map(ToString::to_string).collect();
        assert_eq!(
            reasons,
            [
                "mgmt-use1-b: full: 200/200",
                "mgmt-use1-d: full: 0/0",
                "mgmt-use1-e: load unknown: HTTP 500"
            ]
        );
    }

    #[test]
    fn ties_are_deterministic_and_spread_over_a_thousand_clusters() {
        let candidates = ["mgmt-use1-a", "mgmt-use1-b", "mgmt-use1-c"];
        let mut wins: BTreeMap<String, usize> = BTreeMap::new();
        for i in 0..1000u32 {
            let id = format!("019a6f1e-4b7c-7d2e-9f3a-{i:012x}");
            let loaded = || candidates.iter().map(|c| (cand(c, 200), Ok(5))).collect();
            let first = rank(&id, loaded(), &mut Vec::new())[0].0.name.clone();
            // A retried pulse picks the same one, whatever the inventory's order.
            let mut reversed: Vec<_> = loaded();
            reversed.reverse();
            assert_eq!(rank(&id, reversed, &mut Vec::new())[0].0.name, first);
            *wins.entry(first).or_default() += 1;
        }
        assert_eq!(wins.len(), 3, "{wins:?}");
        for (name, n) in &wins {
            assert!((250..=420).contains(n), "{name} won {n} of 1000: {wins:?}");
        }
    }

    #[test]
    fn the_refusal_message_lists_every_candidate_or_says_the_region_has_none() {
        let none = none_available_message("us-east1", &[]);
        assert!(
            none.contains("no ManagementCluster in region us-east1"),
            "{none}"
        );
        let some = none_available_message(
            "us-east1",
            &[
                PassedOver {
                    name: "mgmt-use1-a".into(),
                    reason: "full: 200/200".into(),
                },
                PassedOver {
                    name: "mgmt-use1-b".into(),
                    reason: "cordoned".into(),
                },
            ],
        );
        assert!(
            some.contains("mgmt-use1-a: full: 200/200; mgmt-use1-b: cordoned"),
            "{some}"
        );
    }
}
