//! The fake's Subscribe stream and status events, decoded with the adapter's CloudEvent/status decoders;
//! authorization and stale agent reports.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures::StreamExt;
use hypershift_adapter::work::maestro::cloudevent::CloudEvent;
use hypershift_adapter::work::maestro::config::DEFAULT_MAX_DECODE_BYTES;
use hypershift_adapter::work::maestro::proto::cloud_event_service_client::CloudEventServiceClient;
use hypershift_adapter::work::maestro::proto::{self, SubscriptionRequest};
use hypershift_adapter::work::maestro::testing::StatusEvent;
use hypershift_adapter::work::maestro::{MaestroConfig, MaestroWorkClient, resource_id};
use hypershift_adapter::work::{WorkClient, WorkError};
use serde_json::{Value, json};
use testbed::maestro::{FakeMaestro, FakeOptions};
use tonic::Streaming;

const SOURCE: &str = "hyperfleet-adapter";
const CONSUMER: &str = "us-east-mgmt-01";
const WORK: &str = "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";

fn work() -> Value {
    json!({
        "metadata": {"name": WORK, "labels": {"hyperfleet.io/cluster-id": "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"}},
        "spec": {
            "workload": {"manifests": [{"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
                                        "metadata": {"name": "my-cluster", "namespace": "clusters"}}]},
            "manifestConfigs": [{"resourceIdentifier": {"group": "hypershift.openshift.io", "resource": "hostedclusters",
                                                        "name": "my-cluster", "namespace": "clusters"},
                                 "feedbackRules": [{"type": "JSONPaths", "jsonPaths": [{"name": "status", "path": ".status"}]}]}]
        }
    })
}

fn client(fake: &FakeMaestro) -> MaestroWorkClient {
    MaestroWorkClient::new(MaestroConfig::new(
        fake.grpc_url(),
        fake.rest_url(),
        SOURCE,
        CONSUMER,
    ))
    .unwrap()
}

async fn subscribe(
    fake: &FakeMaestro,
    max_decode: usize,
) -> (String, Streaming<proto::CloudEvent>) {
    let mut grpc = CloudEventServiceClient::connect(fake.grpc_url())
        .await
        .unwrap()
        .max_decoding_message_size(max_decode);
    let response = grpc
        .subscribe(SubscriptionRequest {
            source: SOURCE.into(),
            cluster_name: String::new(),
            data_type: "io.open-cluster-management.works.v1alpha1.manifestbundles".into(),
        })
        .await
        .unwrap();
    let id = response
        .metadata()
        .get("subscription-id")
        .expect("subscription-id header")
        .to_str()
        .unwrap()
        .to_owned();
    (id, response.into_inner())
}

/// Next non-heartbeat event; counts heartbeats seen on the way.
async fn next_status(
    stream: &mut Streaming<proto::CloudEvent>,
    heartbeats: &mut usize,
) -> Result<StatusEvent, tonic::Status> {
    loop {
        let wire = tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .expect("event in time")
            .expect("open")?;
        let event = CloudEvent::from_proto(&wire).unwrap();
        if event.is_heartbeat() {
            *heartbeats += 1;
            continue;
        }
        return Ok(StatusEvent::decode(&event).unwrap());
    }
}

#[tokio::test]
async fn status_events_stream_with_heartbeats_string_versions_and_large_feedback() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.into()],
        agent_delay: None,
        status_version_as_string: true,
        heartbeat: Duration::from_millis(20),
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let (subscription_id, mut stream) = subscribe(&fake, DEFAULT_MAX_DECODE_BYTES).await;
    assert!(!subscription_id.is_empty());
    let mut heartbeats = 0;
    let client = client(&fake);
    client.create(&work()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(60)).await;

    // > 4 MiB status event: needs the raised decode limit.
    let big = json!({"conditions": [], "blob": "y".repeat(5 * 1024 * 1024)});
    assert!(fake.set_feedback(WORK, &big));
    // The agent's first report of a new version says only that it is applied (real agent).
    let applied = next_status(&mut stream, &mut heartbeats).await.unwrap();
    assert_eq!(applied.status.conditions.len(), 1, "{applied:?}");
    let status = next_status(&mut stream, &mut heartbeats).await.unwrap();
    assert!(heartbeats > 0, "heartbeats are sent and skipped");
    assert_eq!(
        status.resource_id,
        resource_id(SOURCE, CONSUMER, WORK).to_string()
    );
    assert_eq!(
        status.resource_version, 1,
        "string resourceversion accepted"
    );
    assert_eq!(status.metadata.as_ref().unwrap().name, WORK);
    assert!(
        status
            .metadata
            .as_ref()
            .unwrap()
            .creation_timestamp
            .is_some()
    );
    assert_eq!(
        status.status.resource_status[0].feedback("status").unwrap(),
        Some(big)
    );
    assert!(!status.is_deleted());

    client
        .publisher()
        .publish(&client.events().delete_request(&work()).unwrap())
        .await
        .unwrap();
    fake.ack_delete(WORK);
    let last = next_status(&mut stream, &mut heartbeats).await.unwrap();
    assert!(last.is_deleted(), "final event carries Deleted=True");
    assert_eq!(
        client.get(WORK).await.unwrap(),
        None,
        "hard-deleted after the ack"
    );

    fake.kill_subscriptions();
    let err = next_status(&mut stream, &mut heartbeats).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unavailable);
}

#[tokio::test]
async fn default_grpc_limit_is_too_small_for_large_status_events() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.into()],
        agent_delay: None,
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let (_, mut stream) = subscribe(&fake, 4 * 1024 * 1024).await;
    client(&fake).create(&work()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    fake.set_feedback(WORK, &json!({"blob": "z".repeat(5 * 1024 * 1024)}));
    // The small "applied" report first (real agent), then the large one.
    next_status(&mut stream, &mut 0).await.unwrap();
    let err = next_status(&mut stream, &mut 0).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::OutOfRange, "{err:?}");
}

#[tokio::test]
async fn stale_agent_reports_are_dropped() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.into()],
        agent_delay: None,
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let client = client(&fake);
    client.create(&work()).await.unwrap();
    assert!(!fake.report_status(WORK, 7));
    assert_eq!(
        client.get(WORK).await.unwrap().unwrap().observed_version,
        None
    );
    assert!(fake.report_status(WORK, 1));
    assert_eq!(
        client.get(WORK).await.unwrap().unwrap().observed_version,
        Some(1)
    );
}

#[tokio::test]
async fn unauthorized_source_is_forbidden() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.into()],
        allowed_sources: Some(vec!["someone-else".into()]),
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let err = client(&fake).create(&work()).await.unwrap_err();
    assert_eq!(
        err,
        WorkError::Forbidden {
            message: format!("unauthorized to publish the event from source {SOURCE}")
        }
    );
    assert_eq!(fake.resource_count(), 0);
}
