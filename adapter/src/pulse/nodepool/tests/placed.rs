//! NodePools follow their cluster's control plane in the placement modes
//! ([`run_placed_on`]), against the in-memory Maestro.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;

use clap::Parser;
use job_report::{ConditionStatus, Report};
use serde_json::{Value, json};

use super::args::Args;
use crate::hyperfleet::nodepool::NodePoolInput;
use crate::hyperfleet::nodepool::fixture::{CLUSTER_ID, ID, NAME, raw};
use crate::placement::entity::{ManagementCluster, parse_list};
use crate::placement::inventory::Inventory;
use crate::work::maestro::MaestroWorkClient;
use crate::work::maestro::fake::FakeMaestro;
use crate::work::maestro::resource_id;

const CP: &str = "0d0c8c5e-2f7e-5b9a-9c1d-1f2e3d4c5b6a";
const SOURCE: &str = crate::work::backend::DEFAULT_SOURCE_ID;

struct Records(Value, Mutex<u32>);

impl Inventory for Records {
    async fn candidates(&self, _region: &str) -> Result<Vec<ManagementCluster>, String> {
        panic!("a NodePool pulse never selects")
    }

    async fn by_consumer(&self, consumer: &str) -> Result<Vec<ManagementCluster>, String> {
        *self.1.lock().unwrap() += 1;
        Ok(parse_list(&self.0, "records")?
            .into_iter()
            .filter(|m| {
                m.spec
                    .as_ref()
                    .is_ok_and(|s| s.maestro_consumer == consumer)
            })
            .collect())
    }
}

fn record(name: &str, lkr: &str) -> Value {
    json!({"kind": "ManagementCluster", "name": name, "generation": 1,
           "spec": {"region": "europe-west2", "maestro_consumer": name, "max_hosted_clusters": 200},
           "status": {"conditions": [
               {"type": "LastKnownReconciled", "status": lkr, "reason": "R", "observed_generation": 1},
               {"type": "Reconciled", "status": lkr, "reason": "R", "observed_generation": 1}]}})
}

fn args() -> Args {
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }
    Cli::try_parse_from([
        "x",
        "--management-clusters-file",
        "/unused.json",
        "--nodepool-spec",
        "/unused.json",
        "--maestro-api-url",
        "http://r",
        "--maestro-grpc-url",
        "http://g",
        "--retry-budget",
        "1",
    ])
    .unwrap()
    .args
}

fn input() -> NodePoolInput {
    NodePoolInput::from_value(json!({
        "id": ID, "name": NAME, "generation": 2,
        "owner_references": {"id": CLUSTER_ID, "kind": "Cluster", "href": "/x"},
        "spec": raw(),
    }))
    .unwrap()
}

async fn pulse(maestro: &FakeMaestro, records: &Records) -> Report {
    run_placed(
        &args(),
        (maestro, records),
        input(),
        "2026-11-26T12:00:00Z".parse().unwrap(),
        std::future::pending(),
    )
    .await
    .unwrap()
}

/// Placement (`--management-clusters-file`, `--management-clusters-from-api`), as
/// [`super::execute`] runs it: the NodePool goes where its cluster's control plane is (found by
/// one search on every management cluster).
async fn run_placed_on<W: crate::work::WorkClient, I: Inventory + Sync>(
    args: &Args,
    (work, inventory): (&W, &I),
    input: NodePoolInput,
    now: jiff::Timestamp,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<Report, super::args::ConfigError> {
    let pulse = super::run::pulse(args, input, now, crate::pulse::step::Where::Placed)?;
    let deps: crate::pulse::act::Deps<'_, _, _, crate::placement::lease::KubeLeases> =
        crate::pulse::act::Deps {
            work,
            inventory: Some(inventory),
            lock: None,
            retry_budget: args.work.retry_budget,
        };
    Ok(crate::pulse::run::<super::NodePool, _, _, _>(&deps, &pulse, shutdown).await)
}

/// [`run_placed_on`], with the pulse recorded in the oracle ([`crate::testing`]).
async fn run_placed<A: crate::work::maestro::BundleApi, I: Inventory + Sync>(
    args: &Args,
    (api, inventory): (&A, &I),
    input: NodePoolInput,
    now: jiff::Timestamp,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<Report, super::args::ConfigError> {
    use crate::testing::{Log, Trace, Traced, check};
    let log = Log::start();
    let trace = Trace::default();
    let api = Traced {
        inner: api,
        trace: &trace,
    };
    let inventory = Traced {
        inner: inventory,
        trace: &trace,
    };
    let work = MaestroWorkClient::over(&api, SOURCE, "");
    let result = run_placed_on(args, (&work, &inventory), input, now, shutdown).await;
    let outcome = result.as_ref().map_err(ToString::to_string);
    check("nodepool-placed", outcome, &trace.requests(), &log);
    result
}

fn reported() -> Option<Value> {
    Some(json!({"ObservedVersion": 1, "conditions": [
        {"type": "Applied", "status": "True", "reason": "AppliedManifestWorkComplete", "message": "m",
         "lastTransitionTime": "2026-11-26T03:36:30Z"}], "resourceStatus": []}))
}

#[tokio::test]
async fn the_nodepool_work_goes_to_the_control_planes_consumer_with_the_standard_id() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-a", "mgmt-euw2-b"]);
    maestro.insert(CP, "mgmt-euw2-b", CLUSTER_ID, reported());
    let records = Records(
        json!([record("mgmt-euw2-a", "True"), record("mgmt-euw2-b", "True")]),
        Mutex::new(0),
    );
    let report = pulse(&maestro, &records).await;
    assert_eq!(
        report.data.as_ref().unwrap()["management_cluster"],
        json!("mgmt-euw2-b")
    );
    let nodepool_work = format!("nodepool-{ID}");
    let standard = resource_id(SOURCE, "mgmt-euw2-b", &nodepool_work).to_string();
    let requests = maestro.requests();
    assert!(requests[0].starts_with("list "), "{requests:#?}");
    assert_eq!(requests[1], format!("get {standard}"), "{requests:#?}");
    assert!(
        requests.iter().all(|r| !r.contains("mgmt-euw2-a")),
        "nothing on the other management cluster: {requests:#?}"
    );
    assert_eq!(*records.1.lock().unwrap(), 1);
}

#[tokio::test]
async fn an_unavailable_management_cluster_is_the_nodepools_health_too() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-b"]);
    maestro.insert(CP, "mgmt-euw2-b", CLUSTER_ID, reported());
    let records = Records(json!([record("mgmt-euw2-b", "False")]), Mutex::new(0));
    let report = pulse(&maestro, &records).await;
    let health = report.condition("Health").unwrap();
    assert_eq!(health.status, ConditionStatus::False);
    assert_eq!(health.reason, "ManagementClusterUnavailable");
    assert!(health.message.contains("mgmt-euw2-b"), "{}", health.message);
}

#[tokio::test]
async fn without_a_control_plane_anywhere_the_nodepool_waits_and_sends_nothing() {
    let maestro = FakeMaestro::with_consumers(&["mgmt-euw2-b"]);
    let records = Records(json!([record("mgmt-euw2-b", "True")]), Mutex::new(0));
    let report = pulse(&maestro, &records).await;
    assert!(maestro.requests().iter().all(|r| !r.starts_with("publish")));
    assert_ne!(
        report.condition("Applied").unwrap().status,
        ConditionStatus::True
    );
    assert!(
        report
            .data
            .as_ref()
            .is_none_or(|d| d.get("management_cluster").is_none())
    );
}
