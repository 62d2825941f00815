//! A recording proxy in front of a Kubernetes API server (the fake or the real one), so that
//! the project's own client code (the status-reporter's `JobStatus`, the adapter's hub work
//! client, placement lease, diagnose's reads) can be run unchanged against either server while
//! every request it makes and every answer it gets is written into a [`Transcript`].
//!
//! The proxy listens on plain HTTP on `127.0.0.1`; clients reach it through
//! [`RecordingProxy::kubeconfig`] (no credentials: the proxy's upstream `kube::Client` carries
//! them — the fake's token, the real server's admin certificate or a service-account token).
//! Watch answers are streamed through and each event line is recorded as one exchange (method
//! `event`) when it passes; `BOOKMARK` events are passed on but not recorded (a real server sends
//! them when it chooses).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::StreamExt;
use http::{HeaderValue, StatusCode, header};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::differential::{EVENT, Transcript, body_value};

struct Inner {
    upstream: Mutex<kube::Client>,
    label: Mutex<String>,
    transcript: Mutex<Transcript>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Inner {
    fn record(&self, method: &str, target: &str, status: u16, body: Value) {
        let label = lock(&self.label).clone();
        lock(&self.transcript).record(&label, method, target, status, body);
    }
}

/// The proxy; it stops when dropped.
pub struct RecordingProxy {
    inner: Arc<Inner>,
    addr: SocketAddr,
    _stop: watch::Sender<bool>,
}

impl RecordingProxy {
    /// Starts a proxy in front of `upstream`, recording as `side` (`fake` or `real`).
    ///
    /// # Errors
    /// When no loopback port can be bound.
    pub async fn start(side: &str, upstream: kube::Client) -> anyhow::Result<RecordingProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let inner = Arc::new(Inner {
            upstream: Mutex::new(upstream),
            label: Mutex::new(String::new()),
            transcript: Mutex::new(Transcript::new(side)),
        });
        let app = Router::new()
            .fallback(forward)
            .with_state(Arc::clone(&inner));
        let (stop, mut stopped) = watch::channel(false);
        tokio::spawn(async move {
            let until = async move {
                let _ = stopped.wait_for(|s| *s).await;
            };
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(until)
                .await;
        });
        Ok(RecordingProxy {
            inner,
            addr,
            _stop: stop,
        })
    }

    /// From now on requests go to `upstream` (e.g. a client with a service-account token).
    pub fn set_upstream(&self, upstream: kube::Client) {
        *lock(&self.inner.upstream) = upstream;
    }

    /// The label of the exchanges recorded from now on (what the code is doing).
    pub fn step(&self, label: &str) {
        label.clone_into(&mut lock(&self.inner.label));
    }

    /// Records an exchange that did not pass through the proxy (e.g. the outcome the product
    /// code drew from the answers, as JSON).
    pub fn note(&self, what: &str, value: Value) {
        self.inner.record("outcome", what, 0, value);
    }

    /// Everything recorded so far.
    pub fn transcript(&self) -> Transcript {
        lock(&self.inner.transcript).clone()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A kubeconfig naming the proxy, no credentials, namespace `namespace`.
    pub fn kubeconfig(&self, namespace: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: proxy\n  cluster:\n    server: \"{}\"\nusers:\n- name: proxy\n  user: {{}}\ncontexts:\n- name: proxy\n  context:\n    cluster: proxy\n    user: proxy\n    namespace: {namespace}\ncurrent-context: proxy\n",
            self.url()
        )
    }

    /// A client of the proxy.
    ///
    /// # Errors
    /// When kube-rs refuses the generated kubeconfig.
    pub async fn client(&self, namespace: &str) -> anyhow::Result<kube::Client> {
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&self.kubeconfig(namespace))?;
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
        Ok(kube::Client::try_from(config)?)
    }
}

fn is_watch(query: Option<&str>) -> bool {
    query.is_some_and(|q| q.split('&').any(|kv| kv == "watch=true" || kv == "watch=1"))
}

async fn forward(State(inner): State<Arc<Inner>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let method = parts.method.to_string();
    let target = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_owned(), |pq| pq.as_str().to_owned());
    let body = axum::body::to_bytes(body, 64 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let mut upstream = http::Request::builder()
        .method(parts.method.clone())
        .uri(target.as_str());
    for name in [header::CONTENT_TYPE, header::ACCEPT] {
        if let Some(value) = parts.headers.get(&name) {
            upstream = upstream.header(name, value);
        }
    }
    // Watch streams uncompressed (kube-rs does the same for its own watches).
    upstream = upstream.header(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    let Ok(upstream) = upstream.body(kube::client::Body::from(body.to_vec())) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let client = lock(&inner.upstream).clone();
    let response = match client.send(upstream).await {
        Ok(response) => response,
        Err(error) => {
            inner.record(&method, &target, 502, Value::String(error.to_string()));
            return (StatusCode::BAD_GATEWAY, error.to_string()).into_response();
        }
    };
    let status = response.status();
    let content_type = response.headers().get(header::CONTENT_TYPE).cloned();
    let warnings: Vec<HeaderValue> = response
        .headers()
        .get_all(header::WARNING)
        .iter()
        .cloned()
        .collect();
    if status.is_success() && is_watch(parts.uri.query()) {
        inner.record(&method, &target, status.as_u16(), Value::Null);
        return stream_events(inner, status, content_type, response.into_body());
    }
    let bytes = response
        .into_body()
        .collect_bytes()
        .await
        .unwrap_or_default();
    inner.record(&method, &target, status.as_u16(), body_value(&bytes));
    let mut answer = (status, Bytes::from(bytes.to_vec())).into_response();
    if let Some(ct) = content_type {
        answer.headers_mut().insert(header::CONTENT_TYPE, ct);
    }
    for warning in warnings {
        answer.headers_mut().append(header::WARNING, warning);
    }
    answer
}

/// Passes a watch body through line by line, recording each event but bookmarks.
fn stream_events(
    inner: Arc<Inner>,
    status: StatusCode,
    content_type: Option<HeaderValue>,
    body: kube::client::Body,
) -> Response {
    let frames = http_body_util::BodyStream::new(body);
    let mut pending: Vec<u8> = Vec::new();
    let lines = frames.map(move |frame| {
        let Ok(frame) = frame else {
            return Err(std::io::Error::other("the upstream watch broke"));
        };
        let Ok(data) = frame.into_data() else {
            return Ok(Bytes::new());
        };
        pending.extend_from_slice(&data);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let event = body_value(&line);
            let kind = event
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            if kind != "BOOKMARK" && !event.is_null() {
                inner.record(EVENT, &kind, 0, event);
            }
        }
        Ok(data)
    });
    let mut answer = Response::new(axum::body::Body::from_stream(lines));
    *answer.status_mut() = status;
    if let Some(ct) = content_type {
        answer.headers_mut().insert(header::CONTENT_TYPE, ct);
    }
    answer
}
