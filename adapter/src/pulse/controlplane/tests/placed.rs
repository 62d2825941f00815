//! The placed `controlplane` pulse against an in-memory Maestro
//! ([`FakeMaestro`](crate::work::maestro::placed::fake::FakeMaestro)) and inventory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;

use clap::Parser;
use job_report::ConditionStatus;
use serde_json::{Value, json};

use super::*;
use crate::hyperfleet::cluster::fixture::VALID;
use crate::placement::entity::{ManagementCluster, parse_list};
use crate::placement::inventory::Inventory;
use crate::placement::lease::fake::FakeLeases;
use crate::placement::lease::{LeaseApi, PlacementLock};
use crate::work::maestro::fake::FakeMaestro;
use crate::work::maestro::{BundleApi, MaestroWorkClient, placement_resource_id};

const ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
const REGION: &str = "europe-west2";
const SOURCE: &str = crate::work::backend::DEFAULT_SOURCE_ID;
const OLD: &str = "0d0c8c5e-2f7e-5b9a-9c1d-1f2e3d4c5b6a";
const OTHER: &str = "0d0c8c5e-2f7e-5b9a-9c1d-1f2e3d4c5b6b";

/// An inventory of entities (or an error), and how often it was asked.
struct FakeInventory {
    items: Result<Value, String>,
    asked: Mutex<Vec<String>>,
}

impl FakeInventory {
    fn of(items: Vec<Value>) -> Self {
        Self {
            items: Ok(Value::Array(items)),
            asked: Mutex::new(Vec::new()),
        }
    }

    fn all(&self) -> Result<Vec<ManagementCluster>, String> {
        self.items
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|v| parse_list(v, "inventory"))
    }
}

impl Inventory for FakeInventory {
    async fn candidates(&self, region: &str) -> Result<Vec<ManagementCluster>, String> {
        self.asked.lock().unwrap().push(format!("region {region}"));
        self.all()
    }

    async fn by_consumer(&self, consumer: &str) -> Result<Vec<ManagementCluster>, String> {
        self.asked
            .lock()
            .unwrap()
            .push(format!("consumer {consumer}"));
        Ok(self
            .all()?
            .into_iter()
            .filter(|m| {
                m.spec
                    .as_ref()
                    .is_ok_and(|s| s.maestro_consumer == consumer)
            })
            .collect())
    }
}

/// What a placed pulse talks to besides the work backend.
struct Placer<'a, W, I, L> {
    /// The work backend (it finds works on every management cluster).
    work: &'a W,
    /// The management clusters.
    inventory: &'a I,
    /// The placement lease (only a new placement uses it).
    lock: &'a PlacementLock<L>,
}

/// The pulse of `cluster` in an inventory mode, as [`super::execute`] runs it: the work found
/// wherever it is, or placed.
async fn run_placed_on<W: WorkClient, I: Inventory + Sync, L: LeaseApi>(
    args: &Args,
    placer: Placer<'_, W, I, L>,
    cluster: ClusterInput,
    inputs: &PulseInputs,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<Report, ConfigError> {
    let pulse = super::pulse(args, cluster, inputs, Where::Placed)?;
    let deps = crate::pulse::act::Deps {
        work: placer.work,
        inventory: Some(placer.inventory),
        lock: Some(placer.lock),
        retry_budget: args.work.retry_budget,
    };
    Ok(crate::pulse::run::<ControlPlane, _, _, _>(&deps, &pulse, shutdown).await)
}

/// [`run_placed_on`], with the pulse recorded in the oracle ([`crate::testing`]): every
/// request to Maestro, the Lease API and the inventory, in order.
async fn run_placed<A: BundleApi, I: Inventory + Sync, L: LeaseApi>(
    args: &Args,
    placer: Placer<'_, A, I, L>,
    cluster: ClusterInput,
    inputs: &PulseInputs,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<Report, ConfigError> {
    use crate::testing::{Log, Trace, Traced, check};
    let log = Log::start();
    let trace = Trace::default();
    let api = Traced {
        inner: placer.work,
        trace: &trace,
    };
    let work = MaestroWorkClient::over(&api, SOURCE, "");
    let inventory = Traced {
        inner: placer.inventory,
        trace: &trace,
    };
    let lock = PlacementLock {
        api: placer
            .lock
            .api
            .as_ref()
            .map(|inner| Traced {
                inner,
                trace: &trace,
            })
            .map_err(Clone::clone),
        holder: placer.lock.holder.clone(),
        wait: placer.lock.wait,
    };
    let traced = Placer {
        work: &work,
        inventory: &inventory,
        lock: &lock,
    };
    let result = run_placed_on(args, traced, cluster, inputs, shutdown).await;
    let outcome = result.as_ref().map_err(ToString::to_string);
    check("controlplane-placed", outcome, &trace.requests(), &log);
    result
}

fn healthy(name: &str, max: u64) -> Value {
    json!({"id": "019a6f1e-4b7c-7d2e-9f3a-000000000001", "kind": "ManagementCluster", "name": name,
           "generation": 1, "labels": {"region": REGION},
           "spec": {"region": REGION, "maestro_consumer": name, "max_hosted_clusters": max},
           "status": {"conditions": [
               {"type": "LastKnownReconciled", "status": "True", "reason": "AllAdaptersReconciled", "observed_generation": 1},
               {"type": "Reconciled", "status": "True", "reason": "ReconciledAll", "observed_generation": 1}]}})
}

fn unavailable(name: &str) -> Value {
    let mut mc = healthy(name, 200);
    mc["status"]["conditions"] = json!([
        {"type": "LastKnownReconciled", "status": "False", "reason": "AdaptersMissingReports", "observed_generation": 1},
        {"type": "Reconciled", "status": "False", "reason": "ReconciledMissingAdapters", "observed_generation": 1}]);
    mc
}

fn reported() -> Option<Value> {
    Some(
        json!({"ObservedVersion": 1, "SequenceID": "1", "conditions": [
        {"type": "Applied", "status": "True", "reason": "AppliedManifestWorkComplete",
         "message": "Apply manifest work complete", "lastTransitionTime": "2026-11-26T03:36:30Z"}],
        "resourceStatus": []}),
    )
}

fn args(extra: &[&str]) -> Args {
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }
    let mut argv = vec![
        "x",
        "--management-clusters-file",
        "/unused.json",
        "--cluster-spec",
        "/unused.json",
        "--maestro-api-url",
        "http://r",
        "--maestro-grpc-url",
        "http://g",
        "--retry-budget",
        "1",
    ];
    argv.extend(extra);
    Cli::try_parse_from(argv).unwrap().args
}

fn cluster() -> ClusterInput {
    ClusterInput::from_json(VALID).unwrap()
}

fn deleting() -> ClusterInput {
    let mut c = cluster();
    c.deleted_time = Some("2026-11-26T15:00:00Z".to_owned());
    c
}

async fn pulse(maestro: &FakeMaestro, inventory: &FakeInventory, cluster: ClusterInput) -> Report {
    let leases = FakeLeases::default();
    pulse_with(maestro, inventory, &leases, cluster).await
}

fn lock(leases: &FakeLeases) -> PlacementLock<&FakeLeases> {
    PlacementLock {
        api: Ok(leases),
        holder: "hyperfleet-hypershift-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-1-x7k2p".to_owned(),
        wait: std::time::Duration::from_secs(20),
    }
}

async fn pulse_with(
    maestro: &FakeMaestro,
    inventory: &FakeInventory,
    leases: &FakeLeases,
    cluster: ClusterInput,
) -> Report {
    let inputs = PulseInputs {
        nodepools: Ok(crate::hyperfleet::nodepools::NodePools::default()),
        now: jiff::Timestamp::now(),
    };
    let lock = lock(leases);
    let placer = Placer {
        work: maestro,
        inventory,
        lock: &lock,
    };
    run_placed(&args(&[]), placer, cluster, &inputs, std::future::pending())
        .await
        .unwrap()
}

fn reason(report: &Report, t: &str) -> (ConditionStatus, String) {
    let c = report.condition(t).unwrap();
    (c.status, c.reason.clone())
}

fn management_cluster(report: &Report) -> &str {
    report.data.as_ref().unwrap()[crate::placement::DATA_MANAGEMENT_CLUSTER]
        .as_str()
        .unwrap()
}

fn placement_id(after: Option<&str>) -> String {
    placement_resource_id(SOURCE, &format!("hostedcluster-{ID}"), after).to_string()
}

#[tokio::test]
async fn a_new_cluster_goes_to_the_least_loaded_healthy_management_cluster_of_its_region() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a", "mgmt-euw2-b", "mgmt-use1-a"]);
    maestro.insert(
        OTHER,
        "mgmt-euw2-a",
        "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6c",
        reported(),
    );
    let mut elsewhere = healthy("mgmt-use1-a", 200);
    elsewhere["spec"]["region"] = json!("us-east1");
    let inventory = FakeInventory::of(vec![
        healthy("mgmt-euw2-a", 200),
        healthy("mgmt-euw2-b", 200),
        elsewhere,
    ]);
    let leases = FakeLeases::default();
    let report = pulse_with(&maestro, &inventory, &leases, cluster()).await;
    assert_eq!(
        reason(&report, "Applied"),
        (ConditionStatus::True, "ManifestWorkCreated".into())
    );
    assert_eq!(management_cluster(&report), "mgmt-euw2-b");
    // Cost of a create: 1 search, 1 count per candidate of the region, 1 count again under the
    // chosen one's lease, 1 publish; the lease: created, then released.
    let requests = maestro.requests();
    assert_eq!(requests.len(), 5, "{requests:#?}");
    assert!(requests[3].starts_with("list"), "{requests:#?}");
    assert_eq!(
        requests[4],
        format!("publish create_request {} mgmt-euw2-b", placement_id(None))
    );
    let lease = crate::placement::lease::lease_name("mgmt-euw2-b");
    assert_eq!(
        leases.requests(),
        [format!("create {lease}"), format!("replace {lease}")]
    );
    let released = leases.lease(&lease).unwrap().spec.unwrap();
    assert_eq!(released.holder_identity.as_deref(), Some(""));
    assert_eq!(
        *inventory.asked.lock().unwrap(),
        [format!("region {REGION}")]
    );
}

#[tokio::test]
async fn a_steady_pulse_costs_one_maestro_request_and_names_where_the_work_lives() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a", "mgmt-euw2-b"]);
    maestro.insert(OLD, "mgmt-euw2-a", ID, reported());
    let inventory = FakeInventory::of(vec![
        healthy("mgmt-euw2-a", 200),
        healthy("mgmt-euw2-b", 200),
    ]);
    let report = pulse(&maestro, &inventory, cluster()).await;
    assert_eq!(maestro.requests().len(), 1, "{:#?}", maestro.requests());
    assert_eq!(*inventory.asked.lock().unwrap(), ["consumer mgmt-euw2-a"]);
    assert_eq!(management_cluster(&report), "mgmt-euw2-a");
    assert_eq!(reason(&report, "Health").0, ConditionStatus::True);
}

#[tokio::test]
async fn an_unknown_consumer_is_passed_over_for_the_next_candidate() {
    // mgmt-euw2-a is empty (first choice) but Maestro does not know it.
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-b"]);
    maestro.insert(
        OTHER,
        "mgmt-euw2-b",
        "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6c",
        reported(),
    );
    let inventory = FakeInventory::of(vec![
        healthy("mgmt-euw2-a", 200),
        healthy("mgmt-euw2-b", 200),
    ]);
    let report = pulse(&maestro, &inventory, cluster()).await;
    assert_eq!(management_cluster(&report), "mgmt-euw2-b");
    assert_eq!(reason(&report, "Applied").1, "ManifestWorkCreated");
}

#[tokio::test]
async fn no_candidate_left_is_a_refusal_listing_each_and_why() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a", "mgmt-euw2-b"]);
    maestro.insert(
        OTHER,
        "mgmt-euw2-a",
        "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6c",
        reported(),
    );
    let mut cordoned = healthy("mgmt-euw2-b", 200);
    cordoned["spec"]["cordoned"] = json!(true);
    let inventory = FakeInventory::of(vec![
        healthy("mgmt-euw2-a", 1),
        cordoned,
        unavailable("mgmt-euw2-c"),
    ]);
    let report = pulse(&maestro, &inventory, cluster()).await;
    for t in ["Applied", "Available", "Health"] {
        assert_eq!(
            reason(&report, t),
            (
                ConditionStatus::False,
                "NoManagementClusterAvailable".into()
            )
        );
    }
    let message = &report.condition("Applied").unwrap().message;
    for part in [
        "mgmt-euw2-a: full: 1/1",
        "mgmt-euw2-b: cordoned",
        "mgmt-euw2-c: unhealthy: LastKnownReconciled=False at generation 1 (AdaptersMissingReports)",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
    assert!(maestro.requests().iter().all(|r| r.starts_with("list")));
    // An empty region says so.
    let report = pulse(&maestro, &FakeInventory::of(vec![]), cluster()).await;
    let message = &report.condition("Applied").unwrap().message;
    assert!(
        message.contains("no ManagementCluster in region europe-west2"),
        "{message}"
    );
}

#[tokio::test]
async fn an_unreadable_inventory_is_inventory_unavailable_and_nothing_is_sent() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a"]);
    let inventory = FakeInventory {
        items: Err(
            "GET http://h/api/hyperfleet/v1/managementclusters answered HTTP 500: boom".into(),
        ),
        asked: Mutex::new(Vec::new()),
    };
    let report = pulse(&maestro, &inventory, cluster()).await;
    assert_eq!(
        reason(&report, "Available"),
        (ConditionStatus::Unknown, "InventoryUnavailable".into())
    );
    assert_eq!(reason(&report, "Applied").0, ConditionStatus::False);
    assert!(
        report
            .condition("Applied")
            .unwrap()
            .message
            .contains("HTTP 500")
    );
    assert_eq!(maestro.requests().len(), 1);
}

#[tokio::test]
async fn a_work_never_applied_on_an_unavailable_management_cluster_fails_over_once() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a", "mgmt-euw2-b"]);
    maestro.insert(OLD, "mgmt-euw2-a", ID, None);
    let inventory = FakeInventory::of(vec![
        unavailable("mgmt-euw2-a"),
        healthy("mgmt-euw2-b", 200),
    ]);
    let report = pulse(&maestro, &inventory, cluster()).await;
    assert_eq!(
        reason(&report, "Applied"),
        (ConditionStatus::True, "FailedOverBeforeApply".into())
    );
    assert_eq!(reason(&report, "Available").0, ConditionStatus::False);
    assert_eq!(reason(&report, "Health").0, ConditionStatus::True);
    let applied = &report.condition("Applied").unwrap().message;
    assert!(
        applied.contains("mgmt-euw2-a")
            && applied.contains("mgmt-euw2-b")
            && applied.contains("LastKnownReconciled=False"),
        "{applied}"
    );
    assert_eq!(management_cluster(&report), "mgmt-euw2-b");
    let publishes: Vec<String> = maestro
        .requests()
        .into_iter()
        .filter(|r| r.starts_with("publish"))
        .collect();
    assert_eq!(
        publishes,
        [
            format!("publish delete_request {OLD} mgmt-euw2-a"),
            format!(
                "publish create_request {} mgmt-euw2-b",
                placement_id(Some(OLD))
            ),
        ]
    );
    // The next pulse finds the new work and stays with it (the withdrawn one is soft-deleted).
    let next = pulse(&maestro, &inventory, cluster()).await;
    assert_eq!(management_cluster(&next), "mgmt-euw2-b");
    assert!(
        maestro
            .requests()
            .iter()
            .filter(|r| r.starts_with("publish"))
            .count()
            == 2
    );
}

#[tokio::test]
async fn an_applied_control_plane_on_an_unavailable_management_cluster_stays_and_health_says_so() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a", "mgmt-euw2-b"]);
    maestro.insert(OLD, "mgmt-euw2-a", ID, reported());
    let inventory = FakeInventory::of(vec![
        unavailable("mgmt-euw2-a"),
        healthy("mgmt-euw2-b", 200),
    ]);
    let report = pulse(&maestro, &inventory, cluster()).await;
    assert_eq!(
        reason(&report, "Health"),
        (
            ConditionStatus::False,
            "ManagementClusterUnavailable".into()
        )
    );
    let message = &report.condition("Health").unwrap().message;
    for part in [
        "mgmt-euw2-a",
        "LastKnownReconciled=False",
        "restore the management cluster",
        "deleting and recreating",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
    assert!(
        maestro.requests().iter().all(|r| r.starts_with("list")),
        "never a move"
    );
    assert_eq!(management_cluster(&report), "mgmt-euw2-a");
    // A management cluster no entity names any more is unavailable too.
    let gone = pulse(
        &maestro,
        &FakeInventory::of(vec![healthy("mgmt-euw2-b", 200)]),
        cluster(),
    )
    .await;
    assert_eq!(reason(&gone, "Health").1, "ManagementClusterUnavailable");
}

#[tokio::test]
async fn a_record_that_cannot_be_read_leaves_health_as_the_work_says_and_says_why() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a"]);
    maestro.insert(OLD, "mgmt-euw2-a", ID, reported());
    let inventory = FakeInventory {
        items: Err("GET …/managementclusters answered HTTP 401: unauthorized".into()),
        asked: Mutex::new(Vec::new()),
    };
    let report = pulse(&maestro, &inventory, cluster()).await;
    let health = report.condition("Health").unwrap();
    assert_eq!(health.status, ConditionStatus::True);
    assert!(
        health.message.contains("could not be read") && health.message.contains("HTTP 401"),
        "{}",
        health.message
    );
}

#[tokio::test]
async fn two_pulses_racing_end_with_one_work_the_loser_carries_on_with_the_winners() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a", "mgmt-euw2-b"]);
    let inventory = FakeInventory::of(vec![
        healthy("mgmt-euw2-a", 200),
        healthy("mgmt-euw2-b", 200),
    ]);
    let winner = pulse(&maestro, &inventory, cluster()).await;
    let winner_mc = management_cluster(&winner).to_owned();
    // The loser's search ran before the winner's create: it saw no work, and (the winner's work
    // now counted) chooses the other management cluster, with the same placement id.
    *maestro.stale_searches.lock().unwrap() = 1;
    let loser = pulse(&maestro, &inventory, cluster()).await;
    assert_eq!(management_cluster(&loser), winner_mc);
    assert_eq!(reason(&loser, "Applied").0, ConditionStatus::True);
    let bundles = maestro.bundles.lock().unwrap();
    assert_eq!(bundles.len(), 1, "one work: {bundles:#?}");
    assert_eq!(bundles[0].id, placement_id(None));
    let creates: Vec<String> = maestro
        .requests()
        .into_iter()
        .filter(|r| r.contains("create_request"))
        .collect();
    assert_eq!(
        creates.len(),
        2,
        "the loser's create was refused: {creates:?}"
    );
    assert_ne!(creates[0], creates[1], "on another consumer, same id");
}

#[tokio::test]
async fn a_second_live_work_no_agent_applied_is_withdrawn_and_the_applied_one_kept() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a", "mgmt-euw2-b"]);
    maestro.insert(OLD, "mgmt-euw2-a", ID, None);
    maestro.insert(OTHER, "mgmt-euw2-b", ID, reported());
    let inventory = FakeInventory::of(vec![
        healthy("mgmt-euw2-a", 200),
        healthy("mgmt-euw2-b", 200),
    ]);
    let report = pulse(&maestro, &inventory, cluster()).await;
    assert_eq!(management_cluster(&report), "mgmt-euw2-b");
    let publishes: Vec<String> = maestro
        .requests()
        .into_iter()
        .filter(|r| r.starts_with("publish"))
        .collect();
    assert_eq!(
        publishes,
        [format!("publish delete_request {OLD} mgmt-euw2-a")]
    );
}

#[tokio::test]
async fn two_applied_works_are_a_double_placement_and_nothing_is_deleted() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a", "mgmt-euw2-b"]);
    maestro.insert(OLD, "mgmt-euw2-a", ID, reported());
    maestro.insert(OTHER, "mgmt-euw2-b", ID, reported());
    let inventory = FakeInventory::of(vec![
        healthy("mgmt-euw2-a", 200),
        healthy("mgmt-euw2-b", 200),
    ]);
    let report = pulse(&maestro, &inventory, cluster()).await;
    assert_eq!(
        reason(&report, "Health"),
        (ConditionStatus::False, "DoublePlacement".into())
    );
    let message = &report.condition("Health").unwrap().message;
    assert!(
        message.contains(OLD) && message.contains(OTHER),
        "{message}"
    );
    assert!(maestro.requests().iter().all(|r| r.starts_with("list")));
}

#[tokio::test]
async fn deletion_finds_the_work_on_its_consumer_and_deletes_it_there() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a", "mgmt-euw2-b"]);
    maestro.insert(OTHER, "mgmt-euw2-b", ID, reported());
    let inventory = FakeInventory::of(vec![
        healthy("mgmt-euw2-a", 200),
        healthy("mgmt-euw2-b", 200),
    ]);
    let report = pulse(&maestro, &inventory, deleting()).await;
    assert_eq!(management_cluster(&report), "mgmt-euw2-b");
    assert_eq!(
        maestro.requests().last().unwrap(),
        &format!("publish delete_request {OTHER} mgmt-euw2-b")
    );
    assert!(inventory.asked.lock().unwrap().is_empty());
    // Nothing found anywhere: gone.
    let empty = FakeMaestro::with_consumers(&[]);
    let report = pulse(&empty, &inventory, deleting()).await;
    assert_eq!(reason(&report, "Finalized").0, ConditionStatus::True);
}

#[tokio::test]
async fn an_invalid_spec_sends_nothing_and_reads_nothing() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a"]);
    let inventory = FakeInventory::of(vec![healthy("mgmt-euw2-a", 200)]);
    let mut bad = cluster();
    bad.spec.insert("gcp_region".into(), json!("not-a-region"));
    let report = pulse(&maestro, &inventory, bad).await;
    assert_eq!(reason(&report, "Applied").1, "InvalidClusterSpec");
    assert!(maestro.requests().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_failed_search_is_maestro_unavailable_naming_no_management_cluster() {
    let mut maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a"]);
    maestro.list_error = Some(crate::work::WorkError::Unavailable {
        message: "connection refused".into(),
    });
    let inventory = FakeInventory::of(vec![healthy("mgmt-euw2-a", 200)]);
    let report = pulse(&maestro, &inventory, cluster()).await;
    assert_eq!(reason(&report, "Applied").1, "MaestroUnavailable");
    let message = &report.condition("Applied").unwrap().message;
    assert!(message.contains(crate::placement::NOT_LOCATED), "{message}");
    assert!(
        report
            .data
            .as_ref()
            .is_none_or(|d| d.get(crate::placement::DATA_MANAGEMENT_CLUSTER).is_none())
    );
    assert!(inventory.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_steady_pulse_never_touches_the_placement_lease() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a"]);
    maestro.insert(OLD, "mgmt-euw2-a", ID, reported());
    let inventory = FakeInventory::of(vec![healthy("mgmt-euw2-a", 200)]);
    let leases = FakeLeases::default();
    let report = pulse_with(&maestro, &inventory, &leases, cluster()).await;
    assert_eq!(management_cluster(&report), "mgmt-euw2-a");
    assert!(leases.requests().is_empty(), "{:?}", leases.requests());
}

#[tokio::test]
async fn a_management_cluster_filled_by_another_pulse_before_the_lease_is_passed_over_as_full() {
    let maestro = std::sync::Arc::new(FakeMaestro::with_consumers(&["mgmt-euw2-a", "mgmt-euw2-b"]));
    maestro.insert(
        OTHER,
        "mgmt-euw2-a",
        "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6c",
        reported(),
    );
    let inventory = FakeInventory::of(vec![healthy("mgmt-euw2-a", 2), healthy("mgmt-euw2-b", 2)]);
    let leases = FakeLeases::default();
    // Ranked b (0/2) before a (1/2); before this pulse got b's lease, another pulse placed two
    // works on b: b is full when counted under its lease, and a takes the cluster.
    let other = maestro.clone();
    leases.on_next("create", move |_| {
        other.insert(
            "0d0c8c5e-2f7e-5b9a-9c1d-1f2e3d4c5b61",
            "mgmt-euw2-b",
            "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a61",
            None,
        );
        other.insert(
            "0d0c8c5e-2f7e-5b9a-9c1d-1f2e3d4c5b62",
            "mgmt-euw2-b",
            "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a62",
            None,
        );
        None
    });
    let report = pulse_with(&maestro, &inventory, &leases, cluster()).await;
    assert_eq!(
        reason(&report, "Applied"),
        (ConditionStatus::True, "ManifestWorkCreated".into())
    );
    assert_eq!(management_cluster(&report), "mgmt-euw2-a");
}

#[tokio::test]
async fn a_forbidden_lease_is_placement_lock_unavailable_and_nothing_is_published() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a"]);
    let inventory = FakeInventory::of(vec![healthy("mgmt-euw2-a", 200)]);
    let leases = FakeLeases::default();
    leases.on_next("create", |_| {
        Some(crate::placement::lease::LeaseError::Unusable(
            "HTTP 403 Forbidden: leases.coordination.k8s.io is forbidden: User \"system:serviceaccount:hyperfleet:hypershift-adapter\" cannot create resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"hyperfleet\"".into(),
        ))
    });
    let report = pulse_with(&maestro, &inventory, &leases, cluster()).await;
    assert_eq!(
        reason(&report, "Applied"),
        (ConditionStatus::False, "PlacementLockUnavailable".into())
    );
    assert_eq!(
        reason(&report, "Available"),
        (ConditionStatus::Unknown, "PlacementLockUnavailable".into())
    );
    assert_eq!(
        reason(&report, "Health"),
        (ConditionStatus::False, "PlacementLockUnavailable".into())
    );
    let applied = &report.condition("Applied").unwrap().message;
    assert!(
        applied.contains("403 Forbidden")
            && applied.contains("manifests/rbac.yaml")
            && applied.contains("JOB_NAMESPACE"),
        "{applied}"
    );
    assert!(
        maestro.requests().iter().all(|r| r.starts_with("list")),
        "{:#?}",
        maestro.requests()
    );
}

#[tokio::test]
async fn a_lock_that_cannot_be_built_places_nothing() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a"]);
    let inventory = FakeInventory::of(vec![healthy("mgmt-euw2-a", 200)]);
    let lock: PlacementLock<&FakeLeases> = PlacementLock {
        api: Err("kubeconfig: no in-cluster service account token".to_owned()),
        holder: "x".to_owned(),
        wait: std::time::Duration::from_secs(20),
    };
    let inputs = PulseInputs {
        nodepools: Ok(crate::hyperfleet::nodepools::NodePools::default()),
        now: jiff::Timestamp::now(),
    };
    let placer = Placer {
        work: &maestro,
        inventory: &inventory,
        lock: &lock,
    };
    let report = run_placed(
        &args(&[]),
        placer,
        cluster(),
        &inputs,
        std::future::pending(),
    )
    .await
    .unwrap();
    assert_eq!(
        reason(&report, "Applied"),
        (ConditionStatus::False, "PlacementLockUnavailable".into())
    );
    assert!(maestro.requests().iter().all(|r| r.starts_with("list")));
}

#[tokio::test(start_paused = true)]
async fn a_lease_held_for_the_whole_wait_passes_over_busy_and_the_next_candidate_takes_it() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a", "mgmt-euw2-b"]);
    maestro.insert(
        OTHER,
        "mgmt-euw2-a",
        "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6c",
        reported(),
    );
    let inventory = FakeInventory::of(vec![
        healthy("mgmt-euw2-a", 200),
        healthy("mgmt-euw2-b", 200),
    ]);
    let leases = FakeLeases::default();
    let holder = "hyperfleet-hypershift-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6d-1-zz9zz";
    leases.seed(crate::placement::lease::fake::held_by(
        &crate::placement::lease::lease_name("mgmt-euw2-b"),
        holder,
        0,
    ));
    let report = pulse_with(&maestro, &inventory, &leases, cluster()).await;
    assert_eq!(management_cluster(&report), "mgmt-euw2-a");

    // Only one candidate, held: NoManagementClusterAvailable naming the holder and the wait.
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-b"]);
    let inventory = FakeInventory::of(vec![healthy("mgmt-euw2-b", 200)]);
    let report = pulse_with(&maestro, &inventory, &leases, cluster()).await;
    let applied = report.condition("Applied").unwrap();
    assert_eq!(applied.reason, "NoManagementClusterAvailable");
    assert!(
        applied.message.contains(&format!(
            "mgmt-euw2-b: busy: placement lease held by {holder} for 20s"
        )),
        "{}",
        applied.message
    );
}

#[tokio::test]
async fn a_release_refused_with_409_does_not_change_the_report() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a"]);
    let inventory = FakeInventory::of(vec![healthy("mgmt-euw2-a", 200)]);
    let leases = FakeLeases::default();
    leases.on_next("replace", |_| {
        Some(crate::placement::lease::LeaseError::Conflict(
            "HTTP 409 Conflict: the object has been modified".into(),
        ))
    });
    let report = pulse_with(&maestro, &inventory, &leases, cluster()).await;
    assert_eq!(
        reason(&report, "Applied"),
        (ConditionStatus::True, "ManifestWorkCreated".into())
    );
}
