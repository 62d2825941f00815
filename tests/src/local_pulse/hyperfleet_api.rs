//! A minimal HyperFleet API: `GET /api/hyperfleet/v1/clusters/{id}` answers the one simulated
//! cluster and `GET …/clusters/{id}/nodepools` its NodePools (bearer token required), so the
//! adapter reads its input exactly as in the Job (`HYPERFLEET_API_URL` +
//! `HYPERFLEET_API_TOKEN_FILE`). Between pulses the runner changes what is served as the real API
//! would after a PATCH (spec changed: `generation` + 1) or a DELETE (soft delete: `deleted_time`
//! and `deleted_by` set, `generation` + 1; `hyperfleet-framework.md` §6 and §7.1).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// Who deletes the cluster (`deleted_by`).
pub const DELETED_BY: &str = "jdoe@example.com";

/// The running fake; the server task ends with the runtime.
#[derive(Debug)]
pub struct FakeHyperfleetApi {
    url: String,
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    served: Mutex<Served>,
    token: String,
}

#[derive(Debug)]
struct Served {
    cluster: Value,
    /// NodePool objects of the cluster, as `GET …/nodepools` lists them.
    nodepools: Vec<Value>,
}

impl Shared {
    fn served(&self) -> MutexGuard<'_, Served> {
        self.served.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl FakeHyperfleetApi {
    /// Serves `cluster` (a HyperFleet cluster object with `id`), without NodePools, to callers
    /// presenting `token`.
    pub async fn start(cluster: Value, token: &str) -> anyhow::Result<FakeHyperfleetApi> {
        let shared = Arc::new(Shared {
            served: Mutex::new(Served {
                cluster,
                nodepools: Vec::new(),
            }),
            token: token.to_owned(),
        });
        let app = axum::Router::new()
            .route("/api/hyperfleet/v1/clusters/{id}", get(cluster_by_id))
            .route("/api/hyperfleet/v1/clusters/{id}/nodepools", get(nodepools))
            .with_state(Arc::clone(&shared));
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakeHyperfleetApi { url, shared })
    }

    /// The base URL (`HYPERFLEET_API_URL`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The cluster object as served now.
    pub fn cluster(&self) -> Value {
        self.shared.served().cluster.clone()
    }

    /// The served cluster's `generation` (0 when it has none).
    pub fn generation(&self) -> i64 {
        self.shared.served().cluster["generation"]
            .as_i64()
            .unwrap_or_default()
    }

    /// A PATCH of `spec.<key>`: a changed value bumps `generation`. Returns the generation.
    pub fn patch_spec(&self, key: &str, value: Value) -> i64 {
        let mut served = self.shared.served();
        if served.cluster["spec"][key] != value {
            served.cluster["spec"][key] = value;
            bump(&mut served.cluster);
        }
        served.cluster["generation"].as_i64().unwrap_or_default()
    }

    /// A DELETE at `deleted_time`: the first one sets `deleted_time`/`deleted_by` and bumps
    /// `generation`, on the cluster and on each of its NodePools (a cascaded soft delete); a
    /// repeated DELETE changes nothing. Returns the cluster's generation.
    pub fn delete_cluster(&self, deleted_time: &str) -> i64 {
        let mut served = self.shared.served();
        let Served { cluster, nodepools } = &mut *served;
        for object in std::iter::once(cluster).chain(nodepools.iter_mut()) {
            if object.get("deleted_time").is_none() {
                object["deleted_time"] = deleted_time.into();
                object["deleted_by"] = DELETED_BY.into();
                bump(object);
            }
        }
        served.cluster["generation"].as_i64().unwrap_or_default()
    }

    /// From now on `GET …/nodepools` lists these NodePool objects.
    pub fn set_nodepools(&self, nodepools: Vec<Value>) {
        self.shared.served().nodepools = nodepools;
    }

    /// The NodePools listed now.
    pub fn nodepools(&self) -> Vec<Value> {
        self.shared.served().nodepools.clone()
    }
}

fn bump(object: &mut Value) {
    let generation = object["generation"].as_i64().unwrap_or_default();
    object["generation"] = (generation + 1).into();
}

fn authorized(shared: &Shared, headers: &HeaderMap) -> bool {
    let expected = format!("Bearer {}", shared.token);
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == expected)
}

async fn cluster_by_id(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if !authorized(&shared, &headers) {
        return error(StatusCode::UNAUTHORIZED, "missing or wrong bearer token");
    }
    let cluster = shared.served().cluster.clone();
    if cluster["id"] != id.as_str() {
        return error(StatusCode::NOT_FOUND, &format!("cluster {id} not found"));
    }
    Json(cluster).into_response()
}

/// A `NodePoolList` (`{items, page, size, total}`) of the cluster's NodePools, one page.
async fn nodepools(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if !authorized(&shared, &headers) {
        return error(StatusCode::UNAUTHORIZED, "missing or wrong bearer token");
    }
    let served = shared.served();
    if served.cluster["id"] != id.as_str() {
        return error(StatusCode::NOT_FOUND, &format!("cluster {id} not found"));
    }
    let items = served.nodepools.clone();
    let total = items.len();
    Json(json!({"items": items, "page": 1, "size": total, "total": total})).into_response()
}

fn error(status: StatusCode, reason: &str) -> Response {
    (
        status,
        Json(json!({"kind": "Error", "code": status.as_u16(), "reason": reason})),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    const TOKEN: &str = "t";

    async fn get(api: &FakeHyperfleetApi, path: &str, token: &str) -> (u16, Value) {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let response = reqwest::Client::new()
            .get(format!("{}/api/hyperfleet/v1/{path}", api.url()))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (
            status,
            serde_json::from_str(&response.text().await.unwrap()).unwrap(),
        )
    }

    fn cluster() -> Value {
        json!({"id": "c1", "generation": 3, "spec": {"openshift_version": "4.17.0"}})
    }

    #[tokio::test]
    async fn a_patch_and_a_delete_bump_the_generation_once_each() {
        let api = FakeHyperfleetApi::start(cluster(), TOKEN).await.unwrap();
        assert_eq!(api.patch_spec("openshift_version", json!("4.17.0")), 3);
        assert_eq!(api.patch_spec("openshift_version", json!("4.17.1")), 4);
        api.set_nodepools(vec![
            json!({"id": "n1", "name": "workers-a", "generation": 1}),
        ]);
        assert_eq!(api.delete_cluster("2026-11-26T10:00:00Z"), 5);
        assert_eq!(api.delete_cluster("2026-11-26T11:00:00Z"), 5);
        let (status, served) = get(&api, "clusters/c1", TOKEN).await;
        assert_eq!(status, 200);
        assert_eq!(served["deleted_time"], "2026-11-26T10:00:00Z");
        assert_eq!(served["deleted_by"], DELETED_BY);
        assert_eq!(served["spec"]["openshift_version"], "4.17.1");
        let (status, list) = get(&api, "clusters/c1/nodepools", TOKEN).await;
        assert_eq!(status, 200);
        assert_eq!(list["total"], 1);
        assert_eq!(list["items"][0]["deleted_time"], "2026-11-26T10:00:00Z");
        assert_eq!(list["items"][0]["generation"], 2);
        api.set_nodepools(vec![]);
        let (_, list) = get(&api, "clusters/c1/nodepools", TOKEN).await;
        assert_eq!(list, json!({"items": [], "page": 1, "size": 0, "total": 0}));
    }

    #[tokio::test]
    async fn other_clusters_and_wrong_tokens_are_refused() {
        let api = FakeHyperfleetApi::start(cluster(), TOKEN).await.unwrap();
        assert_eq!(get(&api, "clusters/c2/nodepools", TOKEN).await.0, 404);
        assert_eq!(get(&api, "clusters/c2", TOKEN).await.0, 404);
        assert_eq!(get(&api, "clusters/c1/nodepools", "other").await.0, 401);
        assert_eq!(get(&api, "clusters/c1", "other").await.0, 401);
    }
}
