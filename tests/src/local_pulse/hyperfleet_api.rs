//! A minimal HyperFleet API: `GET /api/hyperfleet/v1/clusters/{id}` answers the one simulated
//! cluster (bearer token required), so the adapter reads its input exactly as in the Job
//! (`HYPERFLEET_API_URL` + `HYPERFLEET_API_TOKEN_FILE`).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// The running fake; the server task ends with the runtime.
#[derive(Debug)]
pub struct FakeHyperfleetApi {
    url: String,
}

struct Shared {
    cluster: Value,
    token: String,
}

impl FakeHyperfleetApi {
    /// Serves `cluster` (a HyperFleet cluster object with `id`) to callers presenting `token`.
    pub async fn start(cluster: Value, token: &str) -> anyhow::Result<FakeHyperfleetApi> {
        let shared = Arc::new(Shared {
            cluster,
            token: token.to_owned(),
        });
        let app = axum::Router::new()
            .route("/api/hyperfleet/v1/clusters/{id}", get(cluster_by_id))
            .with_state(shared);
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakeHyperfleetApi { url })
    }

    /// The base URL (`HYPERFLEET_API_URL`).
    pub fn url(&self) -> &str {
        &self.url
    }
}

async fn cluster_by_id(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let expected = format!("Bearer {}", shared.token);
    let authorized = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == expected);
    if !authorized {
        return error(StatusCode::UNAUTHORIZED, "missing or wrong bearer token");
    }
    if shared.cluster["id"] != id.as_str() {
        return error(StatusCode::NOT_FOUND, &format!("cluster {id} not found"));
    }
    Json(shared.cluster.clone()).into_response()
}

fn error(status: StatusCode, reason: &str) -> Response {
    (
        status,
        Json(json!({"kind": "Error", "code": status.as_u16(), "reason": reason})),
    )
        .into_response()
}
