//! Authentication, injected faults and the request log.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use http::Method;
use k8s_openapi::api::batch::v1::Job;
use kube::api::Api;
use testbed::kube_api::{ApiServer, Fault, FaultAction};

const JOB: &str = "/apis/batch/v1/namespaces/exp-e/jobs/e";

async fn server_with_job() -> ApiServer {
    let server = ApiServer::start().await;
    seed_job(&server, "exp-e", "e");
    server
}

#[tokio::test]
async fn a_wrong_token_is_a_401_with_the_real_body() {
    let server = server_with_job().await;
    let reply = send_as(&server, Some("not-the-token"), "GET", JOB, None, b"").await;
    assert_eq!(reply.status, 401);
    assert_eq!(
        reply.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#
    );
}

#[tokio::test]
async fn no_token_is_a_403_for_system_anonymous() {
    let server = server_with_job().await;
    let reply = send_as(
        &server,
        None,
        "PATCH",
        &status_path("exp-e", "e"),
        Some(SMP),
        b"{}",
    )
    .await;
    assert_eq!(reply.status, 403);
    assert_eq!(
        reply.body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"jobs.batch \"e\" is forbidden: User \"system:anonymous\" cannot patch resource \"jobs/status\" in API group \"batch\" in the namespace \"exp-e\"","reason":"Forbidden","details":{"name":"e","group":"batch","kind":"jobs"},"code":403}"#
    );
}

#[tokio::test]
async fn an_injected_403_names_the_user_verb_resource_and_namespace() {
    let server = server_with_job().await;
    server.inject(Fault::new("/jobs/e", 1, FaultAction::Status(403)));
    let reply = send(&server, "GET", JOB, None, "").await;
    assert_eq!(reply.status, 403);
    assert_eq!(
        reply.json()["message"],
        format!(
            "jobs.batch \"e\" is forbidden: User \"{}\" cannot get resource \"jobs\" in API group \"batch\" in the namespace \"exp-e\"",
            server.user()
        )
    );
    assert!(server.user().starts_with("system:serviceaccount:"));
}

#[tokio::test]
async fn a_denied_resource_is_a_403_on_every_request_and_nothing_else_is() {
    let server = server_with_job().await;
    server.put_csr(serde_json::json!({"metadata": {"name": "csr-7xq2p"}, "spec": {"signerName": "kubernetes.io/kubelet-serving", "request": ""}}));
    server.deny("certificates.k8s.io", "certificatesigningrequests");
    let csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
    for _ in 0..2 {
        let reply = send(&server, "GET", &format!("{csrs}?limit=250"), None, "").await;
        assert_eq!(reply.status, 403);
        assert_eq!(
            reply.body,
            format!(
                r#"{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"certificatesigningrequests.certificates.k8s.io is forbidden: User \"{}\" cannot list resource \"certificatesigningrequests\" in API group \"certificates.k8s.io\" at the cluster scope","reason":"Forbidden","details":{{"group":"certificates.k8s.io","kind":"certificatesigningrequests"}},"code":403}}"#,
                server.user()
            )
        );
    }
    let reply = send(&server, "GET", &format!("{csrs}/csr-7xq2p"), None, "").await;
    assert_eq!(reply.status, 403);
    assert_eq!(
        reply.json()["message"],
        format!(
            "certificatesigningrequests.certificates.k8s.io \"csr-7xq2p\" is forbidden: User \"{}\" cannot get resource \"certificatesigningrequests\" in API group \"certificates.k8s.io\" at the cluster scope",
            server.user()
        )
    );
    // The approval subresource is another RBAC resource, and other resources are untouched.
    let approval = send(
        &server,
        "GET",
        &format!("{csrs}/csr-7xq2p/approval"),
        None,
        "",
    )
    .await;
    assert_ne!(approval.status, 403);
    assert_eq!(send(&server, "GET", JOB, None, "").await.status, 200);
    assert_eq!(
        send(&server, "GET", "/api/v1/nodes", None, "").await.status,
        200
    );
}

#[tokio::test]
async fn injected_401_404_500_and_503_have_real_bodies() {
    let server = server_with_job().await;
    for code in [401, 404, 500, 503] {
        server.inject(Fault::new("/jobs/e", 1, FaultAction::Status(code)));
    }
    let expected = [
        (
            401,
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#,
        ),
        (
            404,
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"jobs.batch \"e\" not found","reason":"NotFound","details":{"name":"e","group":"batch","kind":"jobs"},"code":404}"#,
        ),
        (
            500,
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: injected fault","reason":"InternalError","details":{"causes":[{"message":"injected fault"}]},"code":500}"#,
        ),
        (
            503,
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server is currently unable to handle the request","reason":"ServiceUnavailable","code":503}"#,
        ),
    ];
    for (code, body) in expected {
        let reply = send(&server, "GET", JOB, None, "").await;
        assert_eq!((reply.status, reply.body.as_str()), (code, body));
    }
    assert_eq!(
        send(&server, "GET", JOB, None, "").await.status,
        200,
        "every fault is spent"
    );
}

#[tokio::test]
async fn an_injected_429_carries_retry_after() {
    let server = server_with_job().await;
    server.inject(Fault::new("/jobs/e", 1, FaultAction::Status(429)));
    let reply = send(&server, "GET", JOB, None, "").await;
    assert_eq!(reply.status, 429);
    assert_eq!(reply.header("retry-after"), Some("1"));
    assert_eq!(reply.json()["reason"], "TooManyRequests");
}

#[tokio::test]
async fn a_fault_matches_only_its_method_and_only_times_requests() {
    let server = server_with_job().await;
    server.inject(Fault::new("/status", 2, FaultAction::Status(500)).on(Method::PATCH));
    assert_eq!(
        send(&server, "GET", &status_path("exp-e", "e"), None, "")
            .await
            .status,
        200
    );
    for expected in [500, 500, 200] {
        let reply = send(
            &server,
            "PATCH",
            &status_path("exp-e", "e"),
            Some(SMP),
            r#"{"status":{}}"#,
        )
        .await;
        assert_eq!(reply.status, expected);
    }
}

#[tokio::test]
async fn kube_rs_sees_an_injected_500_as_an_api_error() {
    let server = server_with_job().await;
    server.inject(Fault::new("/jobs/e", 1, FaultAction::Status(500)));
    let jobs: Api<Job> = Api::namespaced(server.client().await, "exp-e");
    match jobs.get("e").await {
        Err(kube::Error::Api(status)) => assert_eq!(
            (status.code, status.reason.as_str()),
            (500, "InternalError")
        ),
        other => panic!("expected a 500, got {other:?}"),
    }
    assert!(jobs.get("e").await.is_ok());
}

#[tokio::test]
async fn kube_rs_default_client_retries_an_injected_503_by_itself() {
    let server = server_with_job().await;
    server.inject(Fault::new("/jobs/e", 1, FaultAction::Status(503)));
    let jobs: Api<Job> = Api::namespaced(server.client().await, "exp-e");
    assert!(
        jobs.get("e").await.is_ok(),
        "kube 5 retries 429/503/504 unless Config::default_retry is off"
    );
    let statuses: Vec<_> = server.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [Some(503), Some(200)]);
}

#[tokio::test]
async fn a_delay_fault_answers_normally_after_the_delay() {
    let server = server_with_job().await;
    server.inject(Fault::new(
        "/jobs/e",
        1,
        FaultAction::Delay(Duration::from_millis(300)),
    ));
    let started = Instant::now();
    let reply = send(&server, "GET", JOB, None, "").await;
    assert_eq!(reply.status, 200);
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn a_hang_fault_never_answers_and_is_logged_unanswered() {
    let server = server_with_job().await;
    server.inject(Fault::new("/jobs/e", 1, FaultAction::Hang));
    let outcome = tokio::time::timeout(
        Duration::from_millis(300),
        send(&server, "GET", JOB, None, ""),
    )
    .await;
    assert!(outcome.is_err(), "the request must still be pending");
    let log = server.requests();
    assert_eq!(
        log.last().map(|r| (r.path.as_str(), r.status)),
        Some((JOB, None))
    );
    assert_eq!(
        send(&server, "GET", JOB, None, "").await.status,
        200,
        "the next request is served"
    );
}

#[tokio::test]
async fn the_request_log_records_method_path_query_body_and_status() {
    let server = server_with_job().await;
    server.inject(Fault::new("/jobs/e", 1, FaultAction::Status(500)));
    send(&server, "GET", JOB, None, "").await;
    send(
        &server,
        "PATCH",
        &format!("{}?fieldManager=me", status_path("exp-e", "e")),
        Some(SMP),
        r#"{"status":{}}"#,
    )
    .await;
    let log = server.requests();
    assert_eq!(log.len(), 2);
    assert_eq!(
        (log[0].method.clone(), log[0].status),
        (Method::GET, Some(500))
    );
    assert_eq!(log[1].query.as_deref(), Some("fieldManager=me"));
    assert_eq!(log[1].content_type.as_deref(), Some(SMP));
    assert_eq!(log[1].body_text(), r#"{"status":{}}"#);
    assert_eq!(log[1].status, Some(200));
}

#[tokio::test]
async fn unknown_routes_are_a_404_status() {
    let server = ApiServer::start().await;
    let reply = send(&server, "GET", "/version/nope", None, "").await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.json()["reason"], "NotFound");
}

#[tokio::test]
async fn the_kubeconfig_file_configures_kube_rs() {
    let server = server_with_job().await;
    let dir = tempfile::tempdir().unwrap();
    let path = server.write_kubeconfig(dir.path());
    let kubeconfig = kube::config::Kubeconfig::read_from(&path).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    assert_eq!(
        config.cluster_url.to_string().trim_end_matches('/'),
        server.url()
    );
    let jobs: Api<Job> = Api::namespaced(kube::Client::try_from(config).unwrap(), "exp-e");
    assert!(jobs.get("e").await.is_ok());
}

#[tokio::test]
async fn shutdown_ends_open_watches_and_stops_serving() {
    use futures::StreamExt;
    use k8s_openapi::api::core::v1::Pod;
    let server = ApiServer::start().await;
    let pods: Api<Pod> = Api::namespaced(server.client().await, "ns");
    let mut stream = pods.watch(&Default::default(), "0").await.unwrap().boxed();
    server.shutdown();
    let end = tokio::time::timeout(Duration::from_secs(10), stream.next()).await;
    assert!(matches!(end, Ok(None)), "the watch stream ends");
    let addr = server.url().trim_start_matches("http://").to_owned();
    let mut refused = false;
    for _ in 0..50 {
        if tokio::net::TcpStream::connect(&addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused, "the listener is closed");
}
