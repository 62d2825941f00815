//! Issue 33 on the real API server: the pulse Job rendered from the shipped template
//! (`manifests/job.yaml`) is admitted, the job controller makes its Pod, and the real
//! TokenRequest API, asked as the kubelet asks for the Pod's projected `hyperfleet-api-token`
//! source, mints a token bound to that Pod with audience `hyperfleet-api` and the template's
//! 600 s. The real adapter reads that token from its file and sends it with the configured
//! scheme to a recording HyperFleet API.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, ServiceAccount};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use serde_json::json;
use testbed::real::kube_access::{ensure_namespace, jwt_claims, projected_token};
use testbed::real::wait::eventually;
use testbed::real::{RealSystems, unique};

const SUITE: &str = "real::token";
const CLUSTER_ID: &str = "01a21835-66a6-78d4-97c7-838106ebf363";

/// The Pod the job controller made for Job `name` in `ns`.
async fn job_pod(client: &kube::Client, ns: &str, name: &str) -> Pod {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let selector = format!("batch.kubernetes.io/job-name={name}");
    eventually(Duration::from_secs(60), "the Job's Pod", || async {
        let list = pods.list(&ListParams::default().labels(&selector)).await?;
        Ok(list.items.into_iter().next())
    })
    .await
    .unwrap()
}

/// A HyperFleet API that records each `Authorization` header and answers 404.
async fn recording_api() -> (String, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().fallback(move |headers: HeaderMap| async move {
        let value = headers.get("authorization").and_then(|v| v.to_str().ok());
        record
            .lock()
            .unwrap()
            .push(value.unwrap_or_default().to_owned());
        (StatusCode::NOT_FOUND, r#"{"reason":"recorded"}"#)
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pulse_jobs_token_is_audience_bound_short_lived_and_sent_with_the_scheme() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let client = real.kube_client().await.unwrap();
    let ns = unique("sa-token");
    ensure_namespace(&client, &ns).await.unwrap();
    let account: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "hypershift-adapter"}})).unwrap();
    Api::<ServiceAccount>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &account)
        .await
        .unwrap();

    // The shipped template, admitted by the real API server; its Pod from the job controller.
    let job: Job = serde_json::from_value(crate::differential_kube::pulse_job(CLUSTER_ID)).unwrap();
    let job = Api::<Job>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &job)
        .await
        .unwrap();
    let pod = job_pod(&client, &ns, job.metadata.name.as_deref().unwrap()).await;
    let spec = pod.spec.clone().unwrap();
    let volume = spec
        .volumes
        .iter()
        .flatten()
        .find(|v| v.name == "hyperfleet-api-token");
    let sources = volume
        .and_then(|v| v.projected.clone())
        .unwrap()
        .sources
        .unwrap();
    let source = sources[0].service_account_token.clone().unwrap();
    assert_eq!(
        (
            source.audience.as_deref(),
            source.expiration_seconds,
            source.path.as_str()
        ),
        (Some("hyperfleet-api"), Some(600), "token")
    );
    let adapter = spec
        .containers
        .iter()
        .find(|c| c.name == "adapter")
        .unwrap();
    let env = |name: &str| {
        let var = adapter.env.iter().flatten().find(|e| e.name == name);
        var.and_then(|e| e.value.clone()).unwrap_or_default()
    };
    assert_eq!(
        env("HYPERFLEET_API_TOKEN_FILE"),
        "/var/run/secrets/hyperfleet/token"
    );
    assert_eq!(env("HYPERFLEET_API_AUTH_SCHEME"), "Bearer");

    // What the kubelet writes into the file: a TokenRequest bound to the Pod.
    let (name, uid) = (
        pod.metadata.name.clone().unwrap(),
        pod.metadata.uid.clone().unwrap(),
    );
    let token = projected_token(
        &client,
        (&ns, "hypershift-adapter"),
        &source,
        Some((&name, &uid)),
    )
    .await
    .unwrap();
    let claims = jwt_claims(&token).unwrap();
    assert_eq!(claims["aud"], json!(["hyperfleet-api"]), "{claims}");
    let lifetime = claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap();
    assert_eq!(lifetime, 600, "{claims}");
    assert_eq!(claims["kubernetes.io"]["pod"]["name"], json!(name));
    assert_eq!(
        claims["kubernetes.io"]["serviceaccount"]["name"],
        json!("hypershift-adapter")
    );

    // The adapter with the Job's env sends it with the Job's scheme, then with ServiceAccount.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, &token).unwrap();
    let (api, seen) = recording_api().await;
    for scheme in [env("HYPERFLEET_API_AUTH_SCHEME").as_str(), "ServiceAccount"] {
        let mut cmd = tokio::process::Command::new(testbed::binaries::path("hypershift-adapter"));
        cmd.arg("controlplane").env_clear();
        for var in adapter.env.iter().flatten() {
            cmd.env(&var.name, var.value.clone().unwrap_or_default());
        }
        let out = cmd
            .env("HYPERFLEET_API_URL", &api)
            .env("HYPERFLEET_API_TOKEN_FILE", &file)
            .env("HYPERFLEET_API_AUTH_SCHEME", scheme)
            .env("RESULTS_OUTPUT_PATH", dir.path().join("report.json"))
            .output()
            .await
            .unwrap();
        let logs = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{logs}");
        assert!(!logs.contains(&token), "the token is logged");
        let last = seen.lock().unwrap().last().cloned().unwrap_or_default();
        assert_eq!(last, format!("{scheme} {token}"));
    }
    assert_eq!(seen.lock().unwrap().len(), 2);
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    namespaces
        .delete(&ns, &DeleteParams::default())
        .await
        .unwrap();
}
