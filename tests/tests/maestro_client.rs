//! The real Maestro client against the fake Maestro: create/get, typed errors, TLS + bearer token, feedback.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use hypershift_adapter::work::maestro::bundle::ResourceBundle;
use hypershift_adapter::work::maestro::manifestbundle::SpecEventBuilder;
use hypershift_adapter::work::maestro::rest::ListQuery;
use hypershift_adapter::work::maestro::{
    MaestroConfig, MaestroWorkClient, TokenSource, resource_id,
};
use hypershift_adapter::work::{WorkClient, WorkError};
use serde_json::{Value, json};
use testbed::maestro::{FakeMaestro, FakeOptions};

const SOURCE: &str = "hyperfleet-adapter";
const CONSUMER: &str = "us-east-mgmt-01";
/// Kept short on purpose: the work name of the protocol doc's UUIDv5 vector
/// (`maestro-protocol.md`, resource id `471b5bed-…`), which a test below checks the id against.
const WORK: &str = "hostedcluster-abc123";
const HC: (&str, &str, &str, &str) = (
    "hypershift.openshift.io",
    "hostedclusters",
    "clusters",
    "my-cluster",
);

fn work() -> Value {
    json!({
        "apiVersion": "work.open-cluster-management.io/v1", "kind": "ManifestWork",
        "metadata": {"name": WORK,
                     "labels": {"hyperfleet.io/cluster-id": "abc123", "hyperfleet.io/adapter": "controlplane"},
                     "annotations": {"hyperfleet.io/generation": "1"}},
        "spec": {
            "workload": {"manifests": [{"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedCluster",
                                        "metadata": {"name": "my-cluster", "namespace": "clusters"},
                                        "spec": {"release": {"image": "quay.io/openshift-release-dev/ocp-release:4.19.3-multi"}}}]},
            "manifestConfigs": [{"resourceIdentifier": {"group": "hypershift.openshift.io", "resource": "hostedclusters",
                                                        "name": "my-cluster", "namespace": "clusters"},
                                 "feedbackRules": [{"type": "JSONPaths", "jsonPaths": [{"name": "status", "path": ".status"}]}],
                                 "updateStrategy": {"type": "ServerSideApply"}}],
            "deleteOption": {"propagationPolicy": "Foreground"}
        }
    })
}

/// The synthetic HostedCluster `.status` of protocol §7.
fn hosted_cluster_status() -> Value {
    json!({
        "conditions": [
            {"lastTransitionTime": "2026-01-10T10:05:00Z", "message": "The hosted control plane is available", "observedGeneration": 3, "reason": "AsExpected", "status": "True", "type": "Available"},
            {"lastTransitionTime": "2026-01-10T10:20:00Z", "message": "HostedCluster is at expected version", "observedGeneration": 3, "reason": "AsExpected", "status": "False", "type": "Progressing"},
            {"lastTransitionTime": "2026-01-10T10:05:00Z", "message": "The hosted cluster is not degraded", "observedGeneration": 3, "reason": "AsExpected", "status": "False", "type": "Degraded"}
        ],
        "controlPlaneEndpoint": {"host": "api.my-cluster.example.com", "port": 443},
        "version": {"desired": {"image": "quay.io/openshift-release-dev/ocp-release:4.19.3-multi", "version": "4.19.3"}}
    })
}

fn on_demand(consumers: &[&str]) -> FakeOptions {
    FakeOptions {
        consumers: consumers.iter().map(|c| (*c).to_owned()).collect(),
        agent_delay: None,
        ..FakeOptions::default()
    }
}

fn config(fake: &FakeMaestro, dir: &Path) -> MaestroConfig {
    let mut cfg = MaestroConfig::new(fake.grpc_url(), fake.rest_url(), SOURCE, CONSUMER);
    if let Some(ca) = fake.ca_pem() {
        std::fs::write(dir.join("ca.pem"), ca).unwrap();
        cfg.ca_file = Some(dir.join("ca.pem"));
    }
    if let Some(token) = fake.token() {
        std::fs::write(dir.join("token"), format!("{token}\n")).unwrap();
        cfg.token = TokenSource::File(dir.join("token"));
    }
    cfg.timeout = Duration::from_secs(5);
    cfg
}

#[tokio::test]
async fn create_then_get_shows_the_bundle() {
    let fake = FakeMaestro::start(on_demand(&[CONSUMER])).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();

    assert_eq!(
        client.get(WORK).await.unwrap(),
        None,
        "missing work is None (404)"
    );
    client.create(&work()).await.unwrap();
    assert_eq!(fake.publishes(), 1);

    let id = resource_id(SOURCE, CONSUMER, WORK).to_string();
    assert_eq!(id, "471b5bed-be6e-5516-8c05-3f1edc10b0ad");
    let stored = fake.resource(&id).expect("stored under the UUIDv5 id");
    assert_eq!(
        (
            stored.source.as_str(),
            stored.consumer.as_str(),
            stored.version
        ),
        (SOURCE, CONSUMER, 1)
    );

    let got = client
        .get(WORK)
        .await
        .unwrap()
        .expect("created work is visible");
    assert_eq!(got.labels["hyperfleet.io/cluster-id"], "abc123");
    assert_eq!(got.annotations["hyperfleet.io/generation"], "1");
    assert_eq!(got.source.as_deref(), Some(SOURCE));
    assert_eq!(got.version, Some(1));
    assert_eq!(got.observed_version, None, "agent has not reported yet");
    assert!(got.manifests.is_empty());
    assert_eq!(fake.rest_gets(), 2);

    // The wire event: binary mode, create_request, resourceversion 0.
    let events = fake.received_events();
    assert_eq!(events.len(), 1);
    assert!(events[0].ty.ends_with(".spec.create_request"));
    assert_eq!(
        events[0]
            .extension("resourceversion")
            .and_then(|v| v.as_integer()),
        Some(0)
    );
    assert_eq!(
        events[0].data_content_type.as_deref(),
        Some("application/json")
    );

    assert!(fake.apply(WORK));
    let got = client.get(WORK).await.unwrap().unwrap();
    assert_eq!(got.observed_version, Some(1));
    assert!(
        got.conditions
            .iter()
            .any(|c| c.type_ == "Applied" && c.status == "True")
    );
}

#[tokio::test]
async fn second_create_is_already_exists() {
    let fake = FakeMaestro::start(on_demand(&[CONSUMER])).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();
    client.create(&work()).await.unwrap();
    let err = client.create(&work()).await.unwrap_err();
    assert_eq!(
        err,
        WorkError::AlreadyExists {
            message: "failed to create resource: maestro-6: This Resource already exists".into()
        }
    );
    assert!(!err.is_transient());
}

#[tokio::test]
async fn unknown_consumer_is_consumer_not_found() {
    let fake = FakeMaestro::start(on_demand(&["someone-else"]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();
    let err = client.create(&work()).await.unwrap_err();
    assert!(
        matches!(&err, WorkError::ConsumerNotFound { message } if message.contains("fk_resources_consumers")),
        "{err:?}"
    );
    fake.add_consumer(CONSUMER);
    client.create(&work()).await.unwrap();
}

#[tokio::test]
async fn tls_and_bearer_token_path_with_token_file_reread() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.into()],
        agent_delay: None,
        ..FakeOptions::tls_with_token("t0ken")
    })
    .await
    .unwrap();
    assert!(fake.grpc_url().starts_with("https://") && fake.rest_url().starts_with("https://"));
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(&fake, dir.path());
    let client = MaestroWorkClient::new(cfg).unwrap();

    std::fs::write(dir.path().join("token"), "wrong").unwrap();
    let err = client.create(&work()).await.unwrap_err();
    assert_eq!(
        err,
        WorkError::Unauthenticated {
            message: "token not authenticated".into()
        }
    );
    assert!(!err.is_transient());

    std::fs::write(dir.path().join("token"), "t0ken").unwrap();
    client.create(&work()).await.unwrap();
    fake.set_feedback_raw(WORK, &hosted_cluster_status().to_string());
    let got = client.get(WORK).await.unwrap().unwrap();
    let (g, r, ns, n) = HC;
    assert_eq!(
        got.feedback_value(g, r, ns, n, "status"),
        Some(&hosted_cluster_status())
    );
}

#[tokio::test]
async fn missing_token_is_unauthenticated() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.into()],
        ..FakeOptions::tls_with_token("x")
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&fake, dir.path());
    cfg.token = TokenSource::None;
    let err = MaestroWorkClient::new(cfg)
        .unwrap()
        .create(&work())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        WorkError::Unauthenticated {
            message: "invalid token".into()
        }
    );
}

#[tokio::test]
async fn token_is_never_sent_in_plaintext() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.into()],
        token: Some("secret".into()),
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&fake, dir.path());
    assert!(cfg.grpc_url.starts_with("http://"));
    cfg.token = TokenSource::Static(hypershift_adapter::work::maestro::BearerToken::new(
        "secret",
    ));
    let err = MaestroWorkClient::new(cfg)
        .unwrap()
        .create(&work())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        WorkError::Unauthenticated {
            message: "invalid token".into()
        }
    );
}

#[tokio::test]
async fn tls_with_the_wrong_ca_is_a_config_error() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.into()],
        ..FakeOptions::tls_with_token("x")
    })
    .await
    .unwrap();
    let other = testbed::maestro::TestPki::generate().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(&fake, dir.path());
    std::fs::write(dir.path().join("ca.pem"), other.ca_pem).unwrap();
    let client = MaestroWorkClient::new(cfg).unwrap();
    for err in [
        client.create(&work()).await.unwrap_err(),
        client.get(WORK).await.unwrap_err(),
    ] {
        assert!(
            matches!(&err, WorkError::Config { message } if message.contains("invalid peer certificate")),
            "a CA mismatch is a configuration problem, not an outage: {err:?}"
        );
    }
}

#[tokio::test]
async fn server_down_is_unavailable() {
    let fake = FakeMaestro::start(on_demand(&[CONSUMER])).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(&fake, dir.path());
    drop(fake);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let client = MaestroWorkClient::new(cfg).unwrap();
    let err = client.create(&work()).await.unwrap_err();
    assert!(matches!(err, WorkError::Unavailable { .. }), "{err:?}");
    let err = client.get(WORK).await.unwrap_err();
    assert!(matches!(err, WorkError::Unavailable { .. }), "{err:?}");
}

#[tokio::test]
async fn injected_faults_and_slow_responses_are_transient() {
    let fake = FakeMaestro::start(on_demand(&[CONSUMER])).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&fake, dir.path());
    cfg.timeout = Duration::from_millis(300);
    let client = MaestroWorkClient::new(cfg).unwrap();
    fake.fail_next(2);
    assert!(client.create(&work()).await.unwrap_err().is_transient());
    let err = client.get(WORK).await.unwrap_err();
    assert!(
        err.is_transient() && err.message().contains("503"),
        "{err:?}"
    );
    client.create(&work()).await.unwrap();

    fake.set_latency(Duration::from_secs(2));
    let err = client.get(WORK).await.unwrap_err();
    assert!(err.is_transient(), "{err:?}");
    let err = client.create(&work()).await.unwrap_err();
    assert!(err.is_transient(), "deadline exceeded: {err:?}");
    assert_eq!(fake.publishes(), 3);
}

#[tokio::test]
async fn injected_feedback_round_trips_through_json_raw() {
    let fake = FakeMaestro::start(on_demand(&[CONSUMER])).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();
    client.create(&work()).await.unwrap();
    assert!(fake.set_feedback_raw(WORK, &hosted_cluster_status().to_string()));

    // The REST body carries the feedback as a JSON string.
    let bundle: ResourceBundle = client
        .rest()
        .get(&client.resource_id(WORK))
        .await
        .unwrap()
        .unwrap();
    let raw = &bundle.status.as_ref().unwrap().resource_status[0]
        .status_feedback
        .values[0]
        .field_value;
    assert_eq!(raw.type_, "JsonRaw");
    assert!(
        raw.json_raw
            .as_ref()
            .unwrap()
            .starts_with("{\"conditions\"")
    );

    let got = client.get(WORK).await.unwrap().unwrap();
    let (g, r, ns, n) = HC;
    assert_eq!(
        got.feedback_value(g, r, ns, n, "status"),
        Some(&hosted_cluster_status())
    );
    assert_eq!(
        got.feedback_value(g, "HostedCluster", ns, n, "status"),
        Some(&hosted_cluster_status())
    );
    assert_eq!(got.manifests[0].resource.kind, "HostedCluster");
}

#[tokio::test]
async fn one_mebibyte_feedback_decodes() {
    let fake = FakeMaestro::start(on_demand(&[CONSUMER])).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();
    client.create(&work()).await.unwrap();
    let mut status = hosted_cluster_status();
    let filler = "x".repeat(1024 * 1024 - status.to_string().len() - 16);
    status["filler"] = filler.into();
    let size = status.to_string().len();
    assert!(size > 1024 * 1024 - 32 && size <= 1024 * 1024, "{size}");
    fake.set_feedback_raw(WORK, &status.to_string());
    let got = client.get(WORK).await.unwrap().unwrap();
    let (g, r, ns, n) = HC;
    assert_eq!(got.feedback_value(g, r, ns, n, "status"), Some(&status));
}

#[tokio::test]
async fn malformed_json_raw_is_a_typed_error() {
    let fake = FakeMaestro::start(on_demand(&[CONSUMER])).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();
    client.create(&work()).await.unwrap();
    fake.set_feedback_raw(WORK, "{\"conditions\":[");
    let err = client.get(WORK).await.unwrap_err();
    match err {
        WorkError::MalformedFeedback {
            manifest, feedback, ..
        } => {
            assert_eq!(
                manifest,
                "hypershift.openshift.io/hostedclusters clusters/my-cluster"
            );
            assert_eq!(feedback, "status");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn delayed_agent_reports_status_later() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.into()],
        agent_delay: Some(Duration::from_millis(200)),
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();
    client.create(&work()).await.unwrap();
    assert_eq!(
        client.get(WORK).await.unwrap().unwrap().observed_version,
        None
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        if client.get(WORK).await.unwrap().unwrap().observed_version == Some(1) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "agent never reported"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn update_versions_and_soft_delete() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.into()],
        agent_delay: None,
        ack_deletes: false,
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();
    let events = SpecEventBuilder::new(SOURCE, CONSUMER);
    client.create(&work()).await.unwrap();

    let mut update = work();
    update["metadata"]["generation"] = 1.into();
    client
        .publisher()
        .publish(&events.update_request(&update).unwrap())
        .await
        .unwrap();
    assert_eq!(client.get(WORK).await.unwrap().unwrap().version, Some(2));
    let stale = client
        .publisher()
        .publish(&events.update_request(&update).unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(&stale, WorkError::Conflict { message } if message.ends_with("the latest version: 2")),
        "{stale:?}"
    );
    update["metadata"]["generation"] = 0.into();
    client
        .publisher()
        .publish(&events.update_request(&update).unwrap())
        .await
        .unwrap();
    assert_eq!(
        client.get(WORK).await.unwrap().unwrap().version,
        Some(3),
        "resourceversion 0 = unconditional"
    );

    client
        .publisher()
        .publish(&events.delete_request(&work()).unwrap())
        .await
        .unwrap();
    client
        .publisher()
        .publish(&events.delete_request(&work()).unwrap())
        .await
        .unwrap();
    let got = client
        .get(WORK)
        .await
        .unwrap()
        .expect("soft-deleted works stay visible");
    assert!(got.deleting.is_some());
    let err = client.create(&work()).await.unwrap_err();
    assert!(matches!(err, WorkError::AlreadyExists { .. }), "{err:?}");
    let err = client
        .publisher()
        .publish(&events.update_request(&update).unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, WorkError::Conflict { message } if message.contains("under deletion")),
        "{err:?}"
    );

    assert!(fake.ack_delete(WORK));
    assert_eq!(client.get(WORK).await.unwrap(), None);
    client.create(&work()).await.unwrap();
}

#[tokio::test]
async fn list_with_search_and_paging() {
    let fake = FakeMaestro::start(on_demand(&[CONSUMER, "other"]))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();
    for i in 0..3 {
        let mut w = work();
        w["metadata"]["name"] = format!("hostedcluster-{i}").into();
        client.create(&w).await.unwrap();
    }
    let mut cfg = config(&fake, dir.path());
    cfg.consumer = "other".into();
    MaestroWorkClient::new(cfg)
        .unwrap()
        .create(&work())
        .await
        .unwrap();

    let query = |search: &str, page, size| ListQuery {
        search: Some(search.into()),
        page: Some(page),
        size: Some(size),
        order_by: None,
    };
    let all = client
        .rest()
        .list(&query(&format!("source='{SOURCE}'"), 1, 100))
        .await
        .unwrap();
    assert_eq!(
        (all.kind.as_str(), all.total, all.size, all.items.len()),
        ("ResourceBundleList", 4, 4, 4)
    );
    let ours = format!("source='{SOURCE}' and consumer_name='{CONSUMER}'");
    let page2 = client.rest().list(&query(&ours, 2, 2)).await.unwrap();
    assert_eq!((page2.page, page2.size, page2.total), (2, 1, 3));
    let either = format!("source='{SOURCE}' and (consumer_name='other' or consumer_name='nope')");
    assert_eq!(
        client
            .rest()
            .list(&query(&either, 1, 10))
            .await
            .unwrap()
            .total,
        1
    );
    let labels = r#"payload->'metadata'->'labels'@>'{"hyperfleet.io/cluster-id":"abc123"}'"#;
    assert_eq!(
        client
            .rest()
            .list(&query(labels, 1, 10))
            .await
            .unwrap()
            .total,
        4
    );
    let err = client
        .rest()
        .list(&query("bogus ~~ 1", 1, 10))
        .await
        .unwrap_err();
    assert!(
        // The real server's answer (pinned by real::differential_maestro).
        matches!(&err, WorkError::Invalid { message }
            if message == "maestro-21: Failed to parse search query: bogus ~~ 1"),
        "{err:?}"
    );
}

#[tokio::test]
async fn mutual_tls_with_client_certificate() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.into()],
        tls: true,
        mtls: true,
        agent_delay: None,
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pki = fake.pki().unwrap();

    let without = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();
    let err = without.create(&work()).await.unwrap_err();
    assert!(
        matches!(&err, WorkError::Unauthenticated { message } if message.contains("CertificateRequired")),
        "a missing client certificate is an auth failure, not an outage: {err:?}"
    );

    std::fs::write(dir.path().join("client.pem"), &pki.client_cert_pem).unwrap();
    std::fs::write(dir.path().join("client.key"), &pki.client_key_pem).unwrap();
    let mut cfg = config(&fake, dir.path());
    cfg.client_cert_file = Some(dir.path().join("client.pem"));
    cfg.client_key_file = Some(dir.path().join("client.key"));
    let with = MaestroWorkClient::new(cfg).unwrap();
    with.create(&work()).await.unwrap();
    assert!(with.get(WORK).await.unwrap().is_some());

    let mut half = config(&fake, dir.path());
    half.client_cert_file = Some(dir.path().join("client.pem"));
    assert!(matches!(
        MaestroWorkClient::new(half),
        Err(WorkError::Config { .. })
    ));
}

#[tokio::test]
async fn list_all_pages_through_more_than_one_page() {
    use hypershift_adapter::work::maestro::rest::{MAX_LIST_PAGE_SIZE, search_for};
    let fake = FakeMaestro::start(on_demand(&[CONSUMER])).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();
    let n = MAX_LIST_PAGE_SIZE as usize + 5;
    for i in 0..n {
        let mut w = work();
        w["metadata"]["name"] = format!("work-{i}").into();
        client.create(&w).await.unwrap();
    }
    let all = client
        .rest()
        .list_all(&search_for(SOURCE, Some(CONSUMER)).unwrap())
        .await
        .unwrap();
    assert_eq!(all.len(), n);
    let mut ids: Vec<&str> = all.iter().map(|b| b.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "no duplicates across pages");
    assert_eq!(fake.calls("LIST resource-bundles"), 2);
    assert!(search_for("a'b", None).is_err());
}

fn with_image(image: &str) -> Value {
    let mut w = work();
    w["spec"]["workload"]["manifests"][0]["spec"]["release"]["image"] = image.into();
    w
}

const IMAGE_2: &str = "quay.io/openshift-release-dev/ocp-release:4.19.4-multi";

#[tokio::test]
async fn work_client_update_is_guarded_by_the_version_read() {
    let fake = FakeMaestro::start(on_demand(&[CONSUMER])).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();
    client.create(&work()).await.unwrap();
    assert!(fake.apply(WORK));
    let first = client.get(WORK).await.unwrap().unwrap();
    assert_eq!((first.version, first.observed_version), (Some(1), Some(1)));
    assert_eq!(
        first.workload,
        work()["spec"]["workload"]["manifests"]
            .as_array()
            .unwrap()
            .clone()
    );
    assert_eq!(first.resource_version, None);

    let publishes = fake.publishes();
    client.update(&with_image(IMAGE_2), &first).await.unwrap();
    assert_eq!(fake.publishes(), publishes + 1, "one Publish per update");
    let second = client.get(WORK).await.unwrap().unwrap();
    assert_eq!(second.version, Some(2));
    assert_eq!(
        second.observed_version,
        Some(1),
        "the agent has not applied it yet"
    );
    assert_eq!(second.workload[0]["spec"]["release"]["image"], IMAGE_2);
    assert!(fake.apply(WORK));
    assert_eq!(
        client.get(WORK).await.unwrap().unwrap().observed_version,
        Some(2)
    );
    // The stored metadata is the one sent with the update, verbatim.
    let meta = &fake.resource(WORK).unwrap().metadata;
    assert_eq!(
        (meta["generation"].clone(), meta["resourceVersion"].clone()),
        (json!(1), json!("1"))
    );

    // Stale: what was read before the update.
    let stale = client
        .update(&with_image(IMAGE_2), &first)
        .await
        .unwrap_err();
    assert!(
        matches!(&stale, WorkError::Conflict { message } if message.ends_with("the latest version: 2")),
        "{stale:?}"
    );
    assert_eq!(
        fake.resource(WORK).unwrap().version,
        2,
        "a refused update changes nothing"
    );

    // Unchanged spec: accepted, and the version still bumps (recording 09f).
    let fresh = client.get(WORK).await.unwrap().unwrap();
    client.update(&with_image(IMAGE_2), &fresh).await.unwrap();
    assert_eq!(client.get(WORK).await.unwrap().unwrap().version, Some(3));

    // Unknown id.
    let other = json!({"metadata": {"name": "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"},
                       "spec": work()["spec"].clone()});
    let err = client.update(&other, &fresh).await.unwrap_err();
    assert!(matches!(err, WorkError::NotFound { .. }), "{err:?}");
}

#[tokio::test]
async fn work_client_delete_requested_in_progress_and_gone() {
    let fake = FakeMaestro::start(on_demand(&[CONSUMER])).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();
    client.create(&work()).await.unwrap();
    assert!(fake.apply(WORK));
    let before = client.get(WORK).await.unwrap().unwrap();

    let publishes = fake.publishes();
    client.delete(WORK).await.unwrap();
    assert_eq!(fake.publishes(), publishes + 1, "one Publish per delete");
    let event = fake.received_events().pop().unwrap();
    assert!(event.ty.ends_with(".spec.delete_request") && event.data.is_none());
    let requested = client
        .get(WORK)
        .await
        .unwrap()
        .expect("soft-deleted works stay visible");
    assert!(requested.deleting.is_some());
    assert!(fake.apply(WORK), "the agent reports the deletion");
    let deleting = client.get(WORK).await.unwrap().unwrap();
    let condition = deleting.condition("Deleting").expect("Deleting condition");
    assert_eq!(
        (
            condition.status.as_str(),
            condition.reason.as_str(),
            condition.observed_generation
        ),
        ("True", "WorkDeleting", Some(1))
    );
    assert_eq!(
        deleting.manifests, before.manifests,
        "manifest conditions and feedback stay as they were"
    );

    // Twice: fine.
    client.delete(WORK).await.unwrap();
    // Update while deleting: refused without a request when the read says so ...
    let publishes = fake.publishes();
    let err = client
        .update(&with_image(IMAGE_2), &deleting)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, WorkError::Conflict { message } if message.contains("under deletion")),
        "{err:?}"
    );
    assert_eq!(fake.publishes(), publishes);
    // ... and by the server when the read is older than the delete (recording 10f).
    let err = client
        .update(&with_image(IMAGE_2), &before)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, WorkError::Conflict { message } if message.contains("maestro-6: the resource is under deletion")),
        "{err:?}"
    );
    // A create racing the delete (recording 10h).
    let err = client.create(&work()).await.unwrap_err();
    assert!(matches!(err, WorkError::AlreadyExists { .. }), "{err:?}");

    assert!(fake.ack_delete(WORK));
    assert_eq!(client.get(WORK).await.unwrap(), None, "gone: 404");
    // A delete after it is gone: the server answers OK for an unknown id (recording 11u).
    client.delete(WORK).await.unwrap();
    let err = client
        .update(&with_image(IMAGE_2), &before)
        .await
        .unwrap_err();
    assert!(matches!(err, WorkError::NotFound { .. }), "{err:?}");
    client.create(&work()).await.unwrap();
}

#[tokio::test]
async fn deletion_hangs_while_the_hosted_cluster_has_finalizers() {
    let fake = FakeMaestro::start(FakeOptions {
        consumers: vec![CONSUMER.into()],
        ..FakeOptions::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, dir.path())).unwrap();
    client.create(&work()).await.unwrap();
    wait_until(|| async { client.get(WORK).await.unwrap().unwrap().observed_version == Some(1) })
        .await;
    assert!(fake.hold_delete(WORK, &["hypershift.openshift.io/finalizer"]));
    client.delete(WORK).await.unwrap();
    wait_until(|| async {
        client
            .get(WORK)
            .await
            .unwrap()
            .unwrap()
            .condition("Deleting")
            .is_some()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(fake.is_deleting(WORK), "held by the finalizer");
    assert!(fake.release_delete(WORK));
    assert_eq!(client.get(WORK).await.unwrap(), None);

    // Without finalizers the agent finishes at once.
    client.create(&work()).await.unwrap();
    wait_until(|| async { client.get(WORK).await.unwrap().unwrap().observed_version == Some(1) })
        .await;
    client.delete(WORK).await.unwrap();
    wait_until(|| async { client.get(WORK).await.unwrap().is_none() }).await;
}

async fn wait_until<F, Fut>(mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "condition never met"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The fake's bundles say what the real server said after an update, two no-op updates, a delete
/// held by a finalizer and at the end (recordings `09c`, `09h`, `10b`, `10c`, `10r2`, `10k`): the
/// same keys, versions, and work and manifest conditions (type, status, reason,
/// observedGeneration, in order).
#[tokio::test]
async fn the_fake_reports_update_and_delete_states_like_the_recorded_maestro() {
    let Some(dir) = job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/maestro")
    else {
        return;
    };
    let recorded = |file: &str| -> Value {
        let text = std::fs::read_to_string(dir.join("real").join(file)).unwrap();
        serde_json::from_str::<Value>(&text).unwrap()["body"].clone()
    };
    let fake = FakeMaestro::start(on_demand(&[CONSUMER])).await.unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let client = MaestroWorkClient::new(config(&fake, tmp.path())).unwrap();
    let bundle = |fake: &FakeMaestro| fake.resource(WORK).unwrap().to_rest();

    client.create(&work()).await.unwrap();
    assert!(fake.set_feedback_raw(WORK, &hosted_cluster_status().to_string()));
    let read = client.get(WORK).await.unwrap().unwrap();
    client.update(&with_image(IMAGE_2), &read).await.unwrap();
    assert!(fake.apply(WORK));
    assert_eq!(
        shape(&bundle(&fake)),
        shape(&recorded("09c-update-bundle-after-agent.json")),
        "09c"
    );

    // 09f (guarded, unchanged) and 09g (resourceversion 0, unconditional).
    let read = client.get(WORK).await.unwrap().unwrap();
    client.update(&with_image(IMAGE_2), &read).await.unwrap();
    let mut unconditional = with_image(IMAGE_2);
    unconditional["metadata"]["generation"] = 0.into();
    let events = SpecEventBuilder::new(SOURCE, CONSUMER);
    client
        .publisher()
        .publish(&events.update_request(&unconditional).unwrap())
        .await
        .unwrap();
    assert!(fake.apply(WORK));
    assert_eq!(
        shape(&bundle(&fake)),
        shape(&recorded("09h-bundle-after-unconditional-update.json")),
        "09h"
    );

    assert!(fake.hold_delete(WORK, &["hypershift.openshift.io/finalizer"]));
    client.delete(WORK).await.unwrap();
    assert!(fake.apply(WORK));
    assert_eq!(
        shape(&bundle(&fake)),
        shape(&recorded("10b-delete-bundle-immediately.json")),
        "10b"
    );
    assert_eq!(
        shape(&bundle(&fake)),
        shape(&recorded("10c-delete-bundle-deleting.json")),
        "10c"
    );
    assert!(fake.release_delete(WORK));
    let gone = client.rest().get(&client.resource_id(WORK)).await.unwrap();
    assert!(gone.is_none());
    assert_eq!(recorded("10k-delete-final-404.json")["code"], "maestro-7");

    // The admission-denied bundle, deleted (10r2).
    client.create(&work()).await.unwrap();
    assert!(fake.fail_apply(
        WORK,
        Some("refused by an admission policy of this management cluster")
    ));
    client.delete(WORK).await.unwrap();
    assert!(fake.apply(WORK));
    assert_eq!(
        shape(&bundle(&fake)),
        shape(&recorded("10r2-rest-delete-bundle-immediately.json")),
        "10r2"
    );
}

/// What must agree between a fake and a recorded bundle.
fn shape(bundle: &Value) -> Value {
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    let condition =
        |c: &Value| json!([c["type"], c["status"], c["reason"], c["observedGeneration"]]);
    let status = &bundle["status"];
    let manifest = &status["resourceStatus"][0];
    json!({
        "keys": keys(bundle),
        "status_keys": keys(status),
        "version": bundle["version"],
        "observed": status["ObservedVersion"],
        "deleting": [bundle["deleted_at"].is_string(), bundle["metadata"]["deletionTimestamp"].is_string()],
        "work": status["conditions"].as_array().unwrap().iter().map(condition).collect::<Vec<_>>(),
        "manifest": manifest["conditions"].as_array().unwrap().iter().map(condition).collect::<Vec<_>>(),
        "feedback": manifest["statusFeedback"].get("values").is_some(),
    })
}
