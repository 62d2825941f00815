//! The fake enforces the server rules of protocol §6 (decoding, actions, REST envelope and error bodies), so
//! client tests against it mean something.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures::StreamExt;
use hypershift_adapter::work::maestro::cloudevent::{AttrValue, CloudEvent};
use hypershift_adapter::work::maestro::manifestbundle::SpecEventBuilder;
use hypershift_adapter::work::maestro::proto::cloud_event_service_client::CloudEventServiceClient;
use hypershift_adapter::work::maestro::proto::{self, PublishRequest, SubscriptionRequest};
use hypershift_adapter::work::maestro::testing::StatusEvent;
use serde_json::{Value, json};
use testbed::maestro::{FakeMaestro, FakeOptions};
use tonic::transport::Channel;

const SOURCE: &str = "src";
const CONSUMER: &str = "c1";

fn work() -> Value {
    json!({"metadata": {"name": "w1"},
           "spec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "ns"}}]}}})
}

async fn start() -> (FakeMaestro, CloudEventServiceClient<Channel>) {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.into()],
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

async fn publish(
    grpc: &mut CloudEventServiceClient<Channel>,
    event: proto::CloudEvent,
) -> Result<(), tonic::Status> {
    grpc.publish(PublishRequest { event: Some(event) })
        .await
        .map(|_| ())
}

fn create_event() -> CloudEvent {
    SpecEventBuilder::new(SOURCE, CONSUMER)
        .create_request(&work())
        .unwrap()
}

#[tokio::test]
async fn binary_mode_decoding_rules() {
    let (fake, mut grpc) = start().await;
    let mut empty = create_event().to_proto();
    empty.attributes.clear();
    let err = publish(&mut grpc, empty).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unknown);
    assert!(err.message().contains("EncodingUnknown"), "{err:?}");

    // Extensions without the `ce-` prefix are ignored by the reader.
    let mut unprefixed = create_event().to_proto();
    let keys: Vec<String> = unprefixed
        .attributes
        .keys()
        .filter(|k| k.starts_with("ce-"))
        .cloned()
        .collect();
    for key in keys {
        let value = unprefixed.attributes.remove(&key).unwrap();
        unprefixed
            .attributes
            .insert(key.trim_start_matches("ce-").to_owned(), value);
    }
    let err = publish(&mut grpc, unprefixed).await.unwrap_err();
    assert!(err.message().contains("clustername"), "{err:?}");

    let mut no_version = create_event().to_proto();
    no_version.spec_version.clear();
    assert!(publish(&mut grpc, no_version).await.is_err());

    let mut bad_action = create_event();
    bad_action.ty =
        "io.open-cluster-management.works.v1alpha1.manifestbundles.spec.explode_request".into();
    let err = publish(&mut grpc, bad_action.to_proto()).await.unwrap_err();
    assert_eq!(err.message(), "unsupported action explode_request");

    let mut invalid = create_event();
    invalid.data = Some(br#"{"manifests":[]}"#.to_vec());
    let err = publish(&mut grpc, invalid.to_proto()).await.unwrap_err();
    assert!(
        err.message().starts_with(
            "failed to create resource: maestro-8: the manifest bundle in the resource is invalid"
        ),
        "{err:?}"
    );

    // A string resourceversion is accepted (CE ToInteger).
    let mut string_version = create_event();
    string_version
        .extensions
        .insert("resourceversion".into(), AttrValue::String("0".into()));
    publish(&mut grpc, string_version.to_proto()).await.unwrap();
    assert_eq!(
        fake.resource("w1").unwrap().version,
        1,
        "version 0 on create becomes 1"
    );
    assert_eq!(
        fake.received_events().len(),
        4,
        "decodable events are logged, undecodable ones (no attributes, no spec_version) are not"
    );
    assert_eq!(fake.publishes(), 6);
}

#[tokio::test]
async fn rest_envelope_error_bodies_and_delete() {
    let (fake, mut grpc) = start().await;
    publish(&mut grpc, create_event().to_proto()).await.unwrap();
    let id = fake.resource("w1").unwrap().id;
    let http = reqwest::Client::builder()
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
        .unwrap();
    let base = format!("{}/api/maestro/v1", fake.rest_url());

    let bundle: Value = http
        .get(format!("{base}/resource-bundles/{id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let keys: Vec<&str> = bundle
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "consumer_name",
            "created_at",
            "delete_option",
            "href",
            "id",
            "kind",
            "manifest_configs",
            "manifests",
            "metadata",
            "name",
            "updated_at",
            "version"
        ]
    );
    assert_eq!(
        bundle["name"],
        id.as_str(),
        "name is the id for gRPC-created bundles"
    );
    assert_eq!(bundle["delete_option"], json!({}));
    assert_eq!(bundle["manifest_configs"], json!([]));
    assert!(bundle["metadata"]["creationTimestamp"].is_string());

    let list: Value = http
        .get(format!("{base}/resource-bundles?size=0"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        list,
        json!({"kind": "ResourceBundleList", "page": 1, "size": 0, "total": 1, "items": []})
    );

    let missing = http
        .get(format!("{base}/resource-bundles/nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let body: Value = missing.json().await.unwrap();
    assert_eq!(
        (body["kind"].as_str(), body["code"].as_str()),
        (Some("Error"), Some("maestro-7"))
    );
    assert_eq!(body["reason"], "Resource with id='nope' not found");

    let unknown: Value = http
        .get(format!("{base}/nothing"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(unknown["type"], "Error");
    assert_eq!(unknown["code"], "maestro-404");

    assert_eq!(
        http.delete(format!("{base}/resource-bundles/nope"))
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    fake.set_ack_deletes(false);
    assert_eq!(
        http.delete(format!("{base}/resource-bundles/{id}"))
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    let deleting: Value = http
        .get(format!("{base}/resource-bundles/{id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        deleting["deleted_at"].is_string() && deleting["metadata"]["deletionTimestamp"].is_string()
    );
}

#[tokio::test]
async fn resync_request_rebroadcasts_status_of_the_source_only() {
    let (fake, mut grpc) = start().await;
    publish(&mut grpc, create_event().to_proto()).await.unwrap();
    let other = SpecEventBuilder::new("other-source", CONSUMER)
        .create_request(&work())
        .unwrap();
    publish(&mut grpc, other.to_proto()).await.unwrap();

    let mut stream = grpc
        .subscribe(SubscriptionRequest {
            source: SOURCE.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut resync = create_event();
    resync.ty =
        "io.open-cluster-management.works.v1alpha1.manifestbundles.status.resync_request".into();
    resync.data = Some(br#"{"statusHashes":[]}"#.to_vec());
    tokio::time::sleep(Duration::from_millis(50)).await;
    publish(&mut grpc, resync.to_proto()).await.unwrap();

    let mut statuses = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_millis(500);
    while let Ok(Some(Ok(wire))) = tokio::time::timeout_at(deadline, stream.next()).await {
        let event = CloudEvent::from_proto(&wire).unwrap();
        if !event.is_heartbeat() {
            statuses.push(StatusEvent::decode(&event).unwrap());
        }
    }
    assert_eq!(
        statuses.len(),
        1,
        "only the subscribed source's resource: {statuses:?}"
    );
    assert_eq!(
        statuses[0].resource_id,
        hypershift_adapter::work::maestro::resource_id(SOURCE, CONSUMER, "w1").to_string()
    );
    assert_eq!(fake.resource_count(), 2);
}

/// A namespace one work's Namespace manifest created serves every other work on the simulated
/// management cluster (the control plane's work creates `clusters`, a NodePool's work uses it),
/// until it is removed again.
#[tokio::test]
async fn a_namespace_created_by_one_work_serves_the_others() {
    use hypershift_adapter::work::WorkClient;
    use hypershift_adapter::work::maestro::{MaestroConfig, MaestroWorkClient};

    let (fake, _) = start().await;
    fake.set_cluster_namespaces(&["default"]);
    let client = MaestroWorkClient::new(MaestroConfig::new(
        fake.grpc_url(),
        fake.rest_url(),
        SOURCE,
        CONSUMER,
    ))
    .unwrap();
    let config_map = |name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "clusters"}});
    let work = |name: &str, manifests: Vec<Value>| {
        json!({"apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
               "metadata": {"name": name, "namespace": CONSUMER},
               "spec": {"workload": {"manifests": manifests}}})
    };
    client
        .create(&work(
            "with-namespace",
            vec![
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "clusters"}}),
                config_map("a"),
            ],
        ))
        .await
        .unwrap();
    client
        .create(&work("without", vec![config_map("b")]))
        .await
        .unwrap();
    let applied = |name: &str| -> (String, String) {
        let status = fake.resource(name).unwrap().status.unwrap();
        let manifests = status["resourceStatus"].as_array().unwrap();
        let last = manifests.last().unwrap();
        let c = last["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Applied")
            .unwrap();
        (
            c["status"].as_str().unwrap().to_owned(),
            c["message"].as_str().unwrap().to_owned(),
        )
    };
    let missing = (
        "False".to_owned(),
        r#"Failed to apply manifest: namespaces "clusters" not found"#.to_owned(),
    );
    assert!(fake.apply("without"));
    assert_eq!(applied("without"), missing);
    assert!(fake.apply("with-namespace"));
    assert_eq!(applied("with-namespace").0, "True");
    assert!(fake.apply("without"));
    assert_eq!(applied("without").0, "True");
    // Removed behind the agents: the work without it fails again.
    fake.set_cluster_namespaces(&["default"]);
    assert!(fake.apply("without"));
    assert_eq!(applied("without"), missing);
}
