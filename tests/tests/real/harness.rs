//! The harness itself: the kit's servers answer with the environment its `up` wrote, and a
//! consumer added by a test gets its own agent.

use testbed::real::{RealSystems, unique};

const SUITE: &str = "real::harness";

#[tokio::test]
async fn every_server_of_the_kit_answers() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let kube = real.kube_client().await.unwrap();
    let version = kube.apiserver_version().await.unwrap();
    assert_eq!(
        (version.major.as_str(), version.minor.as_str()),
        ("1", "36")
    );

    let http = reqwest::Client::new();
    let consumers: serde_json::Value = http
        .get(format!(
            "{}/api/maestro/v1/consumers",
            real.var("MAESTRO_API_URL")
        ))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let names: Vec<&str> = consumers["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    for base in ["mgmt-a", "mgmt-b", "mgmt-c"] {
        assert!(names.contains(&base), "{base} not among {names:?}");
    }

    let clusters = http
        .get(format!(
            "{}/api/hyperfleet/v1/clusters",
            real.var("HYPERFLEET_API_URL")
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(clusters.status(), 200);
}

#[tokio::test]
async fn a_consumer_of_a_test_gets_its_own_agent() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let consumer = real.consumer(&unique("harness"));
    let log = real
        .state_dir()
        .join(format!("logs/maestro-agent-{consumer}.log"));
    assert!(log.is_file(), "no agent log {}", log.display());
    let found = reqwest::get(format!(
        "{}/api/maestro/v1/consumers?search=name='{consumer}'",
        real.var("MAESTRO_API_URL")
    ))
    .await
    .unwrap()
    .json::<serde_json::Value>()
    .await
    .unwrap();
    assert_eq!(found["total"], 1, "{found}");
}

#[tokio::test]
async fn the_shared_kit_refuses_to_have_its_servers_stopped() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    assert!(!real.is_private());
    let refused = real
        .stop(&testbed::real::restart::Component::HyperfleetApi)
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("is not this process's private kit"),
        "{refused:#}"
    );
}
