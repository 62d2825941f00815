//! The management cluster inventory: `MANAGEMENT_CLUSTERS_FILE` as `inventory::read_file` reads
//! it (bounded, `{"items": […]}` or an array of `ManagementCluster` entities), which is also
//! what `entity::parse_list` makes of the HyperFleet API's answer to
//! `GET /managementclusters?search=…`; then the placement of a new control plane of the
//! cluster's region: `select::screen` (region, spec, health, cordon), each candidate's load
//! search (`label_search` on the consumer, as `MaestroWorkClient::count` builds it), `select::rank`,
//! and the row when none can take it.
//!
//! Properties: an unreadable inventory is `InventoryUnavailable` naming the file and its
//! setting; every entity parses (a bad spec is kept as the reason it is passed over, naming the
//! field); a ranked candidate is of the region, healthy, not cordoned and below its capacity;
//! when none is left the row is `NoManagementClusterAvailable` naming every entity passed over.
#![no_main]

use hypershift_adapter::hyperfleet::{ADAPTER_LABEL, CONTROLPLANE_ADAPTER};
use hypershift_adapter::placement::entity::Health;
use hypershift_adapter::placement::inventory::read_file;
use hypershift_adapter::placement::select::{none_available_message, rank, screen};
use hypershift_adapter::placement::{
    inventory_unavailable_conditions, no_management_cluster_conditions,
};
use hypershift_adapter::work::maestro::rest::label_search;
use hypershift_fuzz::{CLUSTER_ID, assert_reasons, assert_writable, report_of, scratch_file};
use libfuzzer_sys::fuzz_target;

const SOURCE: &str = "hyperfleet-hypershift-adapter";

fuzz_target!(|data: &[u8]| {
    let path = scratch_file("management-clusters.json", data);
    let inventory = match read_file(&path) {
        Ok(inventory) => inventory,
        Err(detail) => {
            assert!(
                detail.contains("MANAGEMENT_CLUSTERS_FILE")
                    && detail.contains(&*path.to_string_lossy()),
                "the refusal must name the file and its setting: {detail}"
            );
            let report = report_of(inventory_unavailable_conditions(&detail));
            assert_writable(&report, "inventory");
            assert_reasons(&report, &["InventoryUnavailable"], "inventory");
            return;
        }
    };
    // The regions asked for: the recordings' and each entity's own.
    let mut regions = vec!["us-east1".to_owned(), "europe-west2".to_owned()];
    regions.extend(
        inventory
            .iter()
            .filter_map(|mc| mc.spec.as_ref().ok())
            .map(|s| s.region.clone()),
    );
    regions.truncate(4);
    for mc in &inventory {
        assert!(!mc.name.is_empty());
        if let Err(why) = &mc.spec {
            assert!(why.starts_with("invalid spec: spec"), "{why}");
        }
        if let Health::Unavailable(d) | Health::NotReady(d) = mc.health() {
            assert!(!d.is_empty());
        }
    }
    for region in &regions {
        let (eligible, mut passed) = screen(region, &inventory, None);
        assert_eq!(
            eligible.len() + passed.len(),
            inventory.len(),
            "every entity is judged once"
        );
        let loaded: Vec<_> = eligible
            .into_iter()
            .enumerate()
            .map(|(i, candidate)| {
                let labels = [(ADAPTER_LABEL, CONTROLPLANE_ADAPTER)];
                let load = label_search(SOURCE, Some(&candidate.consumer), &labels)
                    .map(|_| i as u64)
                    .map_err(|e| e.to_string());
                (candidate, load)
            })
            .collect();
        let ranked = rank(CLUSTER_ID, loaded, &mut passed);
        for (candidate, load) in &ranked {
            assert!(*load < candidate.max, "a full candidate was ranked");
            let mc = inventory
                .iter()
                .find(|mc| {
                    mc.spec
                        .as_ref()
                        .is_ok_and(|s| s.maestro_consumer == candidate.consumer)
                })
                .unwrap_or_else(|| panic!("a ranked candidate is not in the inventory"));
            let spec = mc.spec.as_ref().unwrap_or_else(|e| panic!("{e}"));
            assert!(!spec.cordoned);
        }
        for p in &passed {
            assert!(
                !p.reason.is_empty(),
                "{} passed over without a reason",
                p.name
            );
        }
        if ranked.is_empty() {
            let message = none_available_message(region, &passed);
            let report = report_of(no_management_cluster_conditions(message));
            assert_writable(&report, "placement");
            assert_reasons(&report, &["NoManagementClusterAvailable"], "placement");
        }
    }
});
