//! The fakes behave like the recordings with several management clusters (issue 17 item 7):
//! the fake Maestro with several consumers, each with a work agent that can be stopped, refuses a
//! duplicate resource id whatever its state and consumer, answers the placement searches and
//! counts requests by kind; the [`testbed::placement`] world puts them together with the fake
//! HyperFleet API's `ManagementCluster` entities.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use hypershift_adapter::work::maestro::cloudevent::{AttrValue, CloudEvent};
use hypershift_adapter::work::maestro::manifestbundle::SpecEventBuilder;
use hypershift_adapter::work::maestro::proto::PublishRequest;
use hypershift_adapter::work::maestro::proto::cloud_event_service_client::CloudEventServiceClient;
use serde_json::{Value, json};
use testbed::maestro::{FakeMaestro, FakeOptions, MaestroCounts};
use testbed::placement::{McSpec, PlacementWorld};
use tonic::transport::Channel;

const SOURCE: &str = "hyperfleet-hypershift-controlplane";
const EAST_A: &str = "mgmt-us-east1-a";
const EAST_B: &str = "mgmt-us-east1-b";
const CLUSTER_1: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
const CLUSTER_2: &str = "019a6f1e-5c8d-7e3f-8a4b-2d3e4f5a6b7c";
/// A placement id: it does not contain the consumer, so the same id may be sent to any.
const PLACED_ID: &str = "0f6f7d1c-2b3a-5c4d-9e8f-7a6b5c4d3e2f";

/// A control-plane work of `cluster`, labelled as the adapter labels it.
fn work(cluster: &str) -> Value {
    json!({
        "metadata": {
            "name": format!("hostedcluster-{cluster}"),
            "labels": {"hyperfleet.io/adapter": "controlplane", "hyperfleet.io/cluster-id": cluster},
        },
        "spec": {"workload": {"manifests": [{
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("hc-{cluster}"), "namespace": "clusters"},
        }]}},
    })
}

/// The create event of `cluster`'s work on `consumer`, with `id` as its `resourceid` when given
/// (the server does not recompute ids, `maestro-protocol.md` §3.6).
fn create(consumer: &str, cluster: &str, id: Option<&str>) -> CloudEvent {
    let mut event = SpecEventBuilder::new(SOURCE, consumer)
        .create_request(&work(cluster))
        .unwrap();
    if let Some(id) = id {
        event
            .extensions
            .insert("resourceid".into(), AttrValue::String(id.into()));
    }
    event
}

async fn publish(
    grpc: &mut CloudEventServiceClient<Channel>,
    event: &CloudEvent,
) -> Result<(), tonic::Status> {
    grpc.publish(PublishRequest {
        event: Some(event.to_proto()),
    })
    .await
    .map(|_| ())
}

/// A fake with two consumers whose agents report only when told.
async fn two_consumers() -> (FakeMaestro, CloudEventServiceClient<Channel>) {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![EAST_A.into(), EAST_B.into()],
        agent_delay: None,
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let grpc = CloudEventServiceClient::connect(fake.grpc_url())
        .await
        .unwrap();
    (fake, grpc)
}

/// A plain-HTTP client (the workspace's reqwest has no default TLS provider).
fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .tls_backend_preconfigured(
            rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth(),
        )
        .build()
        .unwrap()
}

async fn list(fake: &FakeMaestro, query: &str) -> Value {
    http()
        .get(format!(
            "{}/api/maestro/v1/resource-bundles?{query}",
            fake.rest_url()
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn search(text: &str) -> String {
    format!("search={}", urlencode(text))
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Yields to the runtime until `done` holds (the automatic agent runs in spawned tasks); panics
/// after many rounds, naming `what`.
async fn until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..100_000 {
        if done() {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("never happened: {what}");
}

/// Recording `11v`: a create for an id that exists is refused with `maestro-6`; the primary key
/// holds also for a soft-deleted bundle (its agent stopped, so never hard-deleted) and whatever
/// consumer the second create names, so two pulses racing with the same placement id end with
/// one bundle.
#[tokio::test]
async fn a_duplicate_id_is_refused_even_soft_deleted_and_on_another_consumer() {
    let (fake, mut grpc) = two_consumers().await;
    publish(&mut grpc, &create(EAST_A, CLUSTER_1, Some(PLACED_ID)))
        .await
        .unwrap();
    let refused = publish(&mut grpc, &create(EAST_B, CLUSTER_1, Some(PLACED_ID)))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unknown);
    assert_eq!(
        refused.message(),
        "failed to create resource: maestro-6: This Resource already exists"
    );
    assert_eq!(fake.resource(PLACED_ID).unwrap().consumer, EAST_A);

    fake.stop_agent(EAST_A);
    let deleted = http()
        .delete(format!(
            "{}/api/maestro/v1/resource-bundles/{PLACED_ID}",
            fake.rest_url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    assert!(
        !fake.ack_delete(PLACED_ID),
        "a stopped agent acknowledges nothing"
    );
    assert!(fake.is_deleting(PLACED_ID), "soft-deleted, still stored");
    for consumer in [EAST_A, EAST_B] {
        let refused = publish(&mut grpc, &create(consumer, CLUSTER_1, Some(PLACED_ID)))
            .await
            .unwrap_err();
        assert_eq!(
            refused.message(),
            "failed to create resource: maestro-6: This Resource already exists",
            "{consumer}"
        );
    }
    assert_eq!(fake.resource_count(), 1);
    assert_eq!(
        fake.counts().publish_create,
        4,
        "refused creates counted too"
    );
}

/// A stopped agent applies nothing, reports no status (not even when a test asks) and leaves a
/// deleted bundle soft-deleted; the other consumer's agent is not affected. Started again, an
/// automatic agent catches up: applies what it missed and finishes the deletion.
#[tokio::test]
async fn a_stopped_agent_applies_nothing_and_catches_up_when_started() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![EAST_A.into(), EAST_B.into()],
        agent_delay: Some(std::time::Duration::ZERO),
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let mut grpc = CloudEventServiceClient::connect(fake.grpc_url())
        .await
        .unwrap();
    fake.stop_agent(EAST_A);
    assert!(!fake.agent_running(EAST_A) && fake.agent_running(EAST_B));
    let on_a = create(EAST_A, CLUSTER_1, None);
    let on_b = create(EAST_B, CLUSTER_2, None);
    publish(&mut grpc, &on_a).await.unwrap();
    publish(&mut grpc, &on_b).await.unwrap();
    let work_a = format!("hostedcluster-{CLUSTER_1}");
    let work_b = format!("hostedcluster-{CLUSTER_2}");
    until("the running agent reports", || {
        fake.resource(&work_b).unwrap().status.is_some()
    })
    .await;
    assert!(!fake.set_feedback(&work_a, &json!({"conditions": []})));
    assert!(!fake.apply(&work_a));
    assert_eq!(
        fake.resource(&work_a).unwrap().status,
        None,
        "never reported"
    );

    // Withdrawn while stopped: soft-deleted and listed with `deleted_at`, not hard-deleted.
    let id_a = fake.resource(&work_a).unwrap().id;
    http()
        .delete(format!(
            "{}/api/maestro/v1/resource-bundles/{id_a}",
            fake.rest_url()
        ))
        .send()
        .await
        .unwrap();
    let listed = list(&fake, &search(&format!("consumer_name='{EAST_A}'"))).await;
    assert_eq!(listed["total"], 1);
    assert!(listed["items"][0]["deleted_at"].is_string(), "{listed}");
    assert_eq!(fake.live_works(EAST_A, "controlplane"), 0);
    assert_eq!(fake.live_works(EAST_B, "controlplane"), 1);

    fake.start_agent(EAST_A);
    until("the restarted agent finishes the deletion", || {
        fake.resource(&id_a).is_none()
    })
    .await;
}

/// A restarted agent applies the live works it missed.
#[tokio::test]
async fn a_restarted_agent_applies_what_it_missed() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![EAST_A.into()],
        agent_delay: Some(std::time::Duration::ZERO),
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let mut grpc = CloudEventServiceClient::connect(fake.grpc_url())
        .await
        .unwrap();
    fake.stop_agent(EAST_A);
    publish(&mut grpc, &create(EAST_A, CLUSTER_1, None))
        .await
        .unwrap();
    let work_a = format!("hostedcluster-{CLUSTER_1}");
    // Give the (stopped) agent every chance to report before checking it did not.
    for _ in 0..1000 {
        tokio::task::yield_now().await;
    }
    assert_eq!(fake.resource(&work_a).unwrap().status, None);
    fake.start_agent(EAST_A);
    until("the restarted agent applies", || {
        fake.resource(&work_a)
            .unwrap()
            .status
            .is_some_and(|s| s["ObservedVersion"] == 1)
    })
    .await;
}

/// The placement searches (P-design "Requests", as recordings `11d`, `11f`, `11h`): one find
/// returns a cluster's control-plane works on every consumer (soft-deleted ones listed, with
/// `deleted_at`); a count (`page=1&size=1`) answers one item and the consumer's `total`. The
/// counters tell them apart.
#[tokio::test]
async fn the_placement_searches_find_and_count_across_consumers() {
    let (fake, mut grpc) = two_consumers().await;
    publish(&mut grpc, &create(EAST_A, CLUSTER_1, None))
        .await
        .unwrap();
    publish(&mut grpc, &create(EAST_B, CLUSTER_1, Some(PLACED_ID)))
        .await
        .unwrap();
    publish(&mut grpc, &create(EAST_B, CLUSTER_2, None))
        .await
        .unwrap();
    let before = fake.counts();

    let find = format!(
        "source='{SOURCE}' and payload->'metadata'->'labels'@>'{{\"hyperfleet.io/adapter\":\"controlplane\",\"hyperfleet.io/cluster-id\":\"{CLUSTER_1}\"}}'"
    );
    let found = list(&fake, &search(&find)).await;
    assert_eq!(
        (
            found["kind"].as_str(),
            found["page"].as_i64(),
            found["size"].as_i64(),
            found["total"].as_i64()
        ),
        (Some("ResourceBundleList"), Some(1), Some(2), Some(2))
    );
    let consumers: Vec<&str> = found["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["consumer_name"].as_str().unwrap())
        .collect();
    assert_eq!(consumers, [EAST_A, EAST_B], "oldest first");

    let count = |consumer: &str| {
        search(&format!(
            "source='{SOURCE}' and consumer_name='{consumer}' and payload->'metadata'->'labels'@>'{{\"hyperfleet.io/adapter\":\"controlplane\"}}'"
        )) + "&page=1&size=1"
    };
    let on_b = list(&fake, &count(EAST_B)).await;
    assert_eq!(
        (on_b["size"].as_i64(), on_b["total"].as_i64()),
        (Some(1), Some(2))
    );
    let on_a = list(&fake, &count(EAST_A)).await;
    assert_eq!(
        (on_a["size"].as_i64(), on_a["total"].as_i64()),
        (Some(1), Some(1))
    );
    let elsewhere = list(&fake, &count("mgmt-europe-west2-a")).await;
    assert_eq!(
        (elsewhere["size"].as_i64(), elsewhere["total"].as_i64()),
        (Some(0), Some(0))
    );

    assert_eq!(
        fake.counts().since(before),
        MaestroCounts {
            list_find: 1,
            list_count: 3,
            ..MaestroCounts::default()
        }
    );
    assert_eq!(before.publish_create, 3);
}

/// `(status, reason)` of `type_` on the served entity at `path`.
fn condition(world: &PlacementWorld, path: &str, type_: &str) -> (String, String) {
    let served = world.api().must("GET", path, None);
    let c = served["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == type_)
        .unwrap()
        .clone();
    (
        c["status"].as_str().unwrap().into(),
        c["reason"].as_str().unwrap().into(),
    )
}

/// The world starts one consumer and agent per management cluster (none for one unknown to Maestro)
/// and one entity each, with the spec docs/placement.md defines and the health its spec asks for;
/// the knobs move the entity's conditions as the aggregation does and stop the agent.
#[tokio::test]
async fn the_placement_world_serves_management_clusters_with_their_health() {
    let world = PlacementWorld::start(&[
        McSpec::new(EAST_A, "us-east1", 2),
        McSpec::new(EAST_B, "us-east1", 200).cordoned(),
        McSpec::new("mgmt-europe-west2-a", "europe-west2", 200).unhealthy(),
        McSpec::new("mgmt-europe-west2-b", "europe-west2", 200).unknown_to_maestro(),
    ])
    .await
    .unwrap();
    assert_eq!(
        world.maestro().consumers(),
        ["mgmt-europe-west2-a", EAST_A, EAST_B],
        "sorted; the unknown one is not registered"
    );
    let a = world.management_cluster(EAST_A).to_owned();
    let served = world.api().must("GET", &a, None);
    assert_eq!(
        served["spec"],
        json!({"region": "us-east1", "maestro_consumer": EAST_A, "max_hosted_clusters": 2})
    );
    assert_eq!(served["labels"], json!({"region": "us-east1"}));
    assert_eq!(condition(&world, &a, "Reconciled").0, "True");
    let cordoned = world
        .api()
        .must("GET", world.management_cluster(EAST_B), None);
    assert_eq!(cordoned["spec"]["cordoned"], true);
    let down = world.management_cluster("mgmt-europe-west2-a").to_owned();
    assert_eq!(
        condition(&world, &down, "LastKnownReconciled"),
        ("False".into(), "AdapterReportedNotAvailable".into())
    );

    // The region search serves the candidates; the inventory file holds every entity.
    let east = world.api().must(
        "GET",
        "/api/hyperfleet/v1/managementclusters?search=spec.region=%27us-east1%27",
        None,
    );
    assert_eq!(east["total"], 2);
    let inventory = world.inventory();
    assert_eq!(inventory["items"].as_array().unwrap().len(), 4);
    let env = world.file_inventory_env().unwrap();
    let file = &env
        .iter()
        .find(|(k, _)| k == "MANAGEMENT_CLUSTERS_FILE")
        .unwrap()
        .1;
    let written: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(written, inventory);
    assert!(
        world
            .adapter_env()
            .contains(&("MANAGEMENT_CLUSTERS_FROM_API".into(), "true".into()))
    );

    // Cordon: a spec edit, reported again at the new generation.
    world.cordon(EAST_A, true);
    let served = world.api().must("GET", &a, None);
    assert_eq!(
        (served["generation"].as_i64(), &served["spec"]["cordoned"]),
        (Some(2), &json!(true))
    );
    assert_eq!(condition(&world, &a, "Reconciled").0, "True");

    // Outage and its end.
    world.outage(EAST_A);
    assert!(!world.maestro().agent_running(EAST_A));
    assert_eq!(condition(&world, &a, "LastKnownReconciled").0, "False");
    world.restore(EAST_A);
    assert!(world.maestro().agent_running(EAST_A));
    assert_eq!(condition(&world, &a, "LastKnownReconciled").0, "True");

    // A cluster in a region, and the load (nothing placed yet).
    let id = world.create_cluster("us-east1", 7);
    let cluster = world
        .api()
        .must("GET", &PlacementWorld::cluster_path(&id), None);
    assert_eq!(cluster["spec"]["platform"]["gcp"]["region"], "us-east1");
    assert_eq!(cluster["name"].as_str().unwrap().len(), 53);
    assert_eq!(id.len(), 36);
    assert_eq!(
        world.load_per_consumer(),
        [
            (EAST_A.to_owned(), 0),
            (EAST_B.to_owned(), 0),
            ("mgmt-europe-west2-a".to_owned(), 0),
            ("mgmt-europe-west2-b".to_owned(), 0),
        ]
        .into_iter()
        .collect()
    );
}

/// A seeded work is stored as a create stores it (counted by the load search, its labels from
/// the work, no publish counted) and refused like a create for a known id; a work name two
/// bundles carry (one withdrawn, one re-placed elsewhere) names the live one.
#[tokio::test]
async fn seeded_works_count_as_load_and_a_work_name_names_the_live_bundle() {
    let (fake, mut grpc) = two_consumers().await;
    let seeded = fake.seed_work(SOURCE, EAST_A, &work(CLUSTER_2)).unwrap();
    assert_eq!(fake.live_works(EAST_A, "controlplane"), 1);
    assert_eq!(fake.counts(), MaestroCounts::default(), "nothing published");
    let again = fake
        .seed_work(SOURCE, EAST_A, &work(CLUSTER_2))
        .unwrap_err();
    assert!(again.to_string().contains("maestro-6"), "{again}");
    assert!(
        fake.seed_work(SOURCE, "mgmt-unknown", &work(CLUSTER_1))
            .is_err()
    );
    let counted = list(
        &fake,
        &(search(&format!(
            "source='{SOURCE}' and consumer_name='{EAST_A}' and payload->'metadata'->'labels'@>'{{\"hyperfleet.io/adapter\":\"controlplane\"}}'"
        )) + "&page=1&size=1"),
    )
    .await;
    assert_eq!(counted["total"], 1);
    assert_eq!(fake.resource(&seeded).unwrap().consumer, EAST_A);

    // Withdrawn from A (soft-deleted), re-placed on B with another id: the name finds B's.
    publish(&mut grpc, &create(EAST_A, CLUSTER_1, None))
        .await
        .unwrap();
    let name = format!("hostedcluster-{CLUSTER_1}");
    let withdrawn = fake.resource(&name).unwrap().id;
    fake.stop_agent(EAST_A);
    http()
        .delete(format!(
            "{}/api/maestro/v1/resource-bundles/{withdrawn}",
            fake.rest_url()
        ))
        .send()
        .await
        .unwrap();
    publish(&mut grpc, &create(EAST_B, CLUSTER_1, Some(PLACED_ID)))
        .await
        .unwrap();
    assert_eq!(fake.resource(&name).unwrap().id, PLACED_ID);
    assert!(
        fake.set_feedback(&name, &json!({"conditions": []})),
        "B's agent runs"
    );
}
