//! REST reads: `GET /api/maestro/v1/resource-bundles/{id}` and the paged list (protocol §4).

use std::sync::Arc;

use super::bundle::{ResourceBundle, ResourceBundleList};
use super::config::MaestroConfig;
use super::error::{
    error_chain, from_rest_answer, from_rest_transport, invalid, misconfigured, protocol,
};
use super::tls;
use crate::work::WorkError;

/// Path prefix of the resource-bundle API.
pub const RESOURCE_BUNDLES_PATH: &str = "/api/maestro/v1/resource-bundles";

/// Page size the Go client uses at most (larger pages can exhaust the server's memory).
pub const MAX_LIST_PAGE_SIZE: u32 = 400;

/// Query of the paged list (absent parameters are not sent).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListQuery {
    /// TSL search, e.g. `source='s' and consumer_name='c'`.
    pub search: Option<String>,
    /// 1-based page.
    pub page: Option<u32>,
    /// Page size (the Go client uses at most [`MAX_LIST_PAGE_SIZE`]).
    pub size: Option<u32>,
    /// Ordering, e.g. `created_at asc` (without it the server's order, and so paging, is unspecified).
    pub order_by: Option<String>,
}

/// Search for every bundle of `source`, optionally only those of `consumer` (§4.2). Values are interpolated
/// into the server's query language without escaping, so values containing `'` are rejected.
pub fn search_for(source: &str, consumer: Option<&str>) -> Result<String, WorkError> {
    if let Some(value) = std::iter::once(source)
        .chain(consumer)
        .find(|v| v.contains('\''))
    {
        return Err(invalid(format!("search value {value:?} contains a quote")));
    }
    Ok(match consumer {
        Some(c) => format!("source='{source}' and consumer_name='{c}'"),
        None => format!("source='{source}'"),
    })
}

/// Search for the bundles of `source` (and of `consumer`, when given) whose payload carries every
/// label of `labels` (§4.2, recording `11h`):
/// `source='s' [and consumer_name='c'] and payload->'metadata'->'labels'@>'{"k":"v",...}'`.
/// Values containing `'` are rejected (they are interpolated without escaping).
pub fn label_search(
    source: &str,
    consumer: Option<&str>,
    labels: &[(&str, &str)],
) -> Result<String, WorkError> {
    let mut search = search_for(source, consumer)?;
    if labels.is_empty() {
        return Ok(search);
    }
    let mut map = serde_json::Map::new();
    for (k, v) in labels {
        if k.contains('\'') || v.contains('\'') {
            return Err(invalid(format!("label {k}={v:?} contains a quote")));
        }
        map.insert((*k).to_owned(), (*v).into());
    }
    let fragment = serde_json::Value::Object(map).to_string();
    search.push_str(&format!(" and payload->'metadata'->'labels'@>'{fragment}'"));
    Ok(search)
}

/// The query of a count: the first page of one item, whose `total` counts every match.
pub fn count_query(search: &str) -> ListQuery {
    ListQuery {
        search: Some(search.to_owned()),
        page: Some(1),
        size: Some(1),
        order_by: None,
    }
}

/// REST client for resource bundles.
#[derive(Debug, Clone)]
pub struct RestClient {
    http: reqwest::Client,
    base: String,
    config: Arc<MaestroConfig>,
}

impl RestClient {
    /// Builds the HTTP client (rustls/ring, CA and client cert from `config`, per-call timeout).
    pub fn new(config: Arc<MaestroConfig>) -> Result<Self, WorkError> {
        let tls = tls::rustls_client_config(&config)?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            .build()
            .map_err(|e| misconfigured(format!("REST client: {}", error_chain(&e))))?;
        let base = config.rest_url.trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(misconfigured(format!(
                "REST URL must be http:// or https://: {base:?}"
            )));
        }
        Ok(Self { http, base, config })
    }

    /// `GET /resource-bundles/{id}`; `Ok(None)` on 404.
    pub async fn get(&self, id: &str) -> Result<Option<ResourceBundle>, WorkError> {
        let url = format!("{}{RESOURCE_BUNDLES_PATH}/{id}", self.base);
        let answer = self.get_json(&url, &ListQuery::default()).await;
        bundle_or_none(&self.base, &url, answer)
    }

    /// One page of `GET /resource-bundles?search=&page=&size=`.
    pub async fn list(&self, query: &ListQuery) -> Result<ResourceBundleList, WorkError> {
        let url = format!("{}{RESOURCE_BUNDLES_PATH}", self.base);
        self.get_json(&url, query).await
    }

    /// Every bundle matching `search`, fetched in pages of [`MAX_LIST_PAGE_SIZE`] ordered by creation time.
    /// Soft-deleted bundles are included (check `deleted_at`).
    pub async fn list_all(&self, search: &str) -> Result<Vec<ResourceBundle>, WorkError> {
        let mut items = Vec::new();
        for page in 1u32.. {
            let query = ListQuery {
                search: Some(search.to_owned()),
                page: Some(page),
                size: Some(MAX_LIST_PAGE_SIZE),
                order_by: Some("created_at asc".to_owned()),
            };
            let list = self.list(&query).await?;
            let count = list.items.len();
            items.extend(list.items);
            let total = usize::try_from(list.total).unwrap_or(0);
            if count < MAX_LIST_PAGE_SIZE as usize || items.len() >= total {
                break;
            }
        }
        Ok(items)
    }

    async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        query: &ListQuery,
    ) -> Result<T, WorkError> {
        let operation_id = super::manifestbundle::new_event_id();
        tracing::debug!(%url, %operation_id, "maestro REST GET");
        let mut request = self
            .http
            .get(url)
            .query(query)
            .header("accept", "application/json");
        if let Some(token) = self.config.token_for(&self.base).await? {
            let mut value: reqwest::header::HeaderValue = token.header()?;
            value.set_sensitive(true);
            request = request.header(reqwest::header::AUTHORIZATION, value);
        }
        let transport = |e: reqwest::Error| from_rest_transport(&self.base, &e);
        let response = request.send().await.map_err(transport)?;
        let status = response.status().as_u16();
        let body = response.bytes().await.map_err(transport)?;
        decode_answer(&self.base, url, status, &body)
    }
}

/// What an answer of the REST API at `base` to `GET url` says: the body decoded as `T` for a
/// 2xx status, else the error the status and body describe ([`from_rest_answer`]). A 2xx body
/// that is not a `T` is [`WorkError::Protocol`].
pub fn decode_answer<T: serde::de::DeserializeOwned>(
    base: &str,
    url: &str,
    status: u16,
    body: &[u8],
) -> Result<T, WorkError> {
    if !(200..300).contains(&status) {
        let text = String::from_utf8_lossy(body);
        return Err(from_rest_answer(base, status, &text));
    }
    serde_json::from_slice(body)
        .map_err(|e| protocol(format!("GET {url}: response is not the expected JSON: {e}")))
}

/// The bundle a `GET url` of one resource bundle read, `None` when Maestro says there is none
/// (`maestro-7`). Any other 404 (`maestro-404`, an unknown route) means the URL does not lead to
/// the resource-bundles API, which creating would not help: a [`WorkError::Config`].
pub fn bundle_or_none(
    base: &str,
    url: &str,
    answer: Result<ResourceBundle, WorkError>,
) -> Result<Option<ResourceBundle>, WorkError> {
    match answer {
        Ok(bundle) => Ok(Some(bundle)),
        Err(WorkError::NotFound { message }) if super::error::maestro_code(&message) == Some(7) => {
            Ok(None)
        }
        Err(WorkError::NotFound { message }) => Err(misconfigured(format!(
            "MAESTRO_API_URL {base}: GET {url} answered 404 without the Maestro not-found code maestro-7 ({message}). Expected the Maestro REST API, serving {RESOURCE_BUNDLES_PATH}"
        ))),
        Err(e) => Err(e),
    }
}

/// Pins every request the REST client sends (method, path, query, headers) and what it makes of
/// the answers: bundles, lists, pages, counts, errors (texts included), transport failures.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod pinned {
    use std::fmt::Write as _;

    use super::*;
    use crate::work::maestro::error::pin_inputs::Recorder;

    const ID: &str = "a7e844fe-9524-5d24-9a33-34edcc1457de";

    fn bundle(i: usize) -> serde_json::Value {
        serde_json::json!({"id": format!("id-{i}"), "kind": "ResourceBundle", "version": 1,
                           "metadata": {"name": format!("w-{i}")}})
    }

    /// Answers by path: `…/{ID}` a bundle, `…/missing` maestro-7, `…/route` maestro-404,
    /// `…/kube` a Kubernetes Status, `…/html` a 502, `…/bad` a body that is not a bundle; a
    /// list `total` 0, 3, 401 or 900 bundles by search, paged by `page`/`size`.
    fn answer(_method: &str, target: &str) -> (u16, &'static str, String) {
        const JSON: &str = "application/json";
        let path = target.split('?').next().unwrap();
        let query: std::collections::HashMap<String, String> = target
            .split_once('?')
            .map(|(_, q)| {
                q.split('&')
                    .filter_map(|kv| kv.split_once('='))
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect()
            })
            .unwrap_or_default();
        match path.rsplit('/').next().unwrap() {
            ID => (200, JSON, bundle(0).to_string()),
            "missing" => (404, JSON, r#"{"kind":"Error","id":"7","href":"/api/maestro/v1/errors/7","code":"maestro-7","reason":"Resource with id='missing' not found"}"#.to_owned()),
            "route" => (404, JSON, r#"{"type":"Error","id":"404","href":"/api/maestro/v1/errors/404","code":"maestro-404","reason":"The requested resource '/x' doesn't exist"}"#.to_owned()),
            "kube" => (403, JSON, r#"{"kind":"Status","apiVersion":"v1","status":"Failure","code":403}"#.to_owned()),
            "html" => (502, "text/html", "<html>bad gateway</html>".to_owned()),
            "bad" => (200, JSON, r#"{"kind":"ResourceBundle"}"#.to_owned()),
            "resource-bundles" => {
                let search = query.get("search").cloned().unwrap_or_default();
                let total: usize = if search.contains("none") {
                    0
                } else if search.contains("many") {
                    900
                } else if search.contains("edge") {
                    401
                } else if search.contains("bad") {
                    return (400, JSON, r#"{"kind":"Error","id":"23","href":"/api/maestro/v1/errors/23","code":"maestro-23","reason":"Failed to parse search query"}"#.to_owned());
                } else {
                    3
                };
                let page: usize = query.get("page").map_or(1, |p| p.parse().unwrap());
                let size: usize = query.get("size").map_or(100, |s| s.parse().unwrap());
                let items: Vec<_> = (0..total).skip((page - 1) * size).take(size).map(bundle).collect();
                let body = serde_json::json!({"kind": "ResourceBundleList", "page": page,
                    "size": items.len(), "total": total, "items": items});
                (200, JSON, body.to_string())
            }
            _ => (500, JSON, "{}".to_owned()),
        }
    }

    fn client(url: &str) -> RestClient {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut config = MaestroConfig::new("http://grpc:8090", url, "src", "mgmt-1");
        config.token = super::super::config::TokenSource::Static(
            super::super::config::BearerToken::new("t0ken"),
        );
        config.timeout = std::time::Duration::from_secs(5);
        RestClient::new(Arc::new(config)).unwrap()
    }

    fn ids(items: &[ResourceBundle]) -> Vec<&str> {
        items.iter().map(|b| b.id.as_str()).collect()
    }

    #[tokio::test]
    async fn requests_and_answers() {
        let server = Recorder::start(answer).await;
        let rest = client(&format!("{}/", server.url));
        let mut out = String::new();
        for id in [ID, "missing", "route", "kube", "html", "bad", "x y?z"] {
            let got = rest.get(id).await.map(|b| b.map(|b| b.id));
            let _ = writeln!(
                out,
                "get {id}: {}\n  {:?}",
                server.scrub(&format!("{got:?}")),
                server.take()
            );
        }
        let queries = [
            ListQuery::default(),
            count_query("source='s'"),
            ListQuery {
                search: Some(
                    "source='s' and payload->'metadata'->'labels'@>'{\"a\":\"b c\"}'".into(),
                ),
                page: Some(2),
                size: Some(2),
                order_by: Some("created_at asc".into()),
            },
            ListQuery {
                search: Some("bad".into()),
                ..ListQuery::default()
            },
        ];
        for query in queries {
            let got = rest
                .list(&query)
                .await
                .map(|l| (l.page, l.size, l.total, ids(&l.items).join(",")));
            let _ = writeln!(
                out,
                "list {query:?}: {}\n  {:?}",
                server.scrub(&format!("{got:?}")),
                server.take()
            );
        }
        for search in ["none", "three", "edge", "many", "bad"] {
            let all = rest.list_all(search).await.map(|items| items.len());
            // What MaestroWorkClient::count asks and reads.
            let count = rest
                .list(&count_query(search))
                .await
                .map(|list| u64::try_from(list.total).unwrap_or(0));
            let _ = writeln!(
                out,
                "list_all/count {search}: {all:?} {count:?}\n  {:?}",
                server.take()
            );
        }
        for (source, consumer, labels) in [
            ("s", None, vec![]),
            ("s", Some("c"), vec![]),
            ("s", Some("c"), vec![("a", "b"), ("k", "v\"w")]),
            ("s'", None, vec![]),
            ("s", Some("c'"), vec![]),
            ("s", None, vec![("a'", "b")]),
            ("s", None, vec![("a", "b'")]),
        ] {
            let _ = writeln!(
                out,
                "search {source} {consumer:?} {labels:?}: {:?} / {:?}",
                search_for(source, consumer),
                label_search(source, consumer, &labels)
            );
        }
        insta::assert_snapshot!("rest_requests", out);
    }

    #[tokio::test]
    async fn transport_failures() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut out = String::new();
        // Nothing listens on a port just freed.
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}", listener.local_addr().unwrap())
        };
        // Answers anything with bytes that are not HTTP.
        let garbage = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let garbage_url = format!("http://{}", garbage.local_addr().unwrap());
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = garbage.accept().await else {
                    return;
                };
                tokio::spawn(async move {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let mut buf = [0u8; 1024];
                    let _ = socket.read(&mut buf).await;
                    let _ = socket.write_all(b"SSH-2.0-OpenSSH_9.6\r\n\r\n").await;
                });
            }
        });
        let server = Recorder::start(answer).await;
        let https = server.url.replace("http://", "https://");
        for url in [closed.clone(), garbage_url.clone(), https.clone()] {
            let got = client(&url).get(ID).await;
            let text = format!("{got:?}")
                .replace(&closed, "http://CLOSED")
                .replace(&garbage_url, "http://GARBAGE")
                .replace(&https, "https://SERVER");
            let _ = writeln!(out, "{}", server.scrub(&text));
        }
        for url in ["maestro:8000", "ftp://maestro", ""] {
            let mut config = MaestroConfig::new("http://grpc:8090", url, "src", "mgmt-1");
            config.timeout = std::time::Duration::from_secs(1);
            let _ = writeln!(
                out,
                "new {url:?}: {:?}",
                RestClient::new(Arc::new(config)).map(|_| ())
            );
        }
        insta::assert_snapshot!("rest_transport_failures", out);
    }
}
