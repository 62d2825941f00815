//! WATCH: newline-delimited `{"type":…,"object":…}` events, kept open and fed from the store's
//! broadcast channel until `timeoutSeconds` or server shutdown.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::header;
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use super::list::Selector;
use super::request::{Query, ResourceRequest};
use super::resources::ResourceKind;
use super::status::ApiError;
use super::store::{Collection, Event, EventType, Store};

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// Which events a watch delivers.
#[derive(Debug)]
struct Filter {
    collection: Collection,
    namespace: Option<String>,
    selector: Selector,
}

impl Filter {
    fn accepts(&self, event: &Event) -> bool {
        event.collection == self.collection
            && self.namespace.as_ref().is_none_or(|ns| *ns == event.key.0)
            && self.selector.matches(&event.object)
    }
}

struct WatchState {
    pending: VecDeque<Bytes>,
    events: broadcast::Receiver<Arc<Event>>,
    filter: Filter,
    deadline: Instant,
    shutdown: watch::Receiver<bool>,
    bookmarks: bool,
    bookmark_head: (String, String),
    last_rv: u64,
    done: bool,
}

/// Starts a watch: initial events (all objects for `resourceVersion` unset or `0`, otherwise the
/// kept history after it), then live events.
pub fn start(
    store: &Store,
    request: &ResourceRequest,
    query: &Query,
    shutdown: watch::Receiver<bool>,
) -> Result<Response, ApiError> {
    let kind = ResourceKind::lookup(&request.group, &request.version, &request.resource);
    let filter = Filter {
        collection: Collection::new(&request.group, &request.resource),
        namespace: request.namespace.clone(),
        selector: Selector::from_query(query, &kind)?,
    };
    let since = match query
        .get("resourceVersion")
        .filter(|v| !v.is_empty() && *v != "0")
    {
        Some(raw) => Some(raw.parse::<u64>().map_err(|_| {
            ApiError::bare_500(format!(
                "strconv.ParseUint: parsing {raw:?}: invalid syntax"
            ))
        })?),
        None => None,
    };
    let mut pending = VecDeque::new();
    let events = match since {
        None => {
            for (_, object) in store.iter(&filter.collection, filter.namespace.as_deref()) {
                if filter.selector.matches(object) {
                    pending.push_back(line(EventType::Added.as_str(), object));
                }
            }
            store.subscribe(store.resource_version()).map(|(_, rx)| rx)
        }
        Some(rv) => store.subscribe(rv).map(|(replay, rx)| {
            pending.extend(
                replay
                    .iter()
                    .filter(|e| filter.accepts(e))
                    .map(|e| line(e.kind.as_str(), &e.object)),
            );
            rx
        }),
    };
    let events = match events {
        Ok(rx) => rx,
        Err(oldest) => {
            let error = ApiError::expired(since.unwrap_or(0), oldest);
            pending.push_back(line("ERROR", &error.to_json()));
            let (_, rx) = store
                .subscribe(store.resource_version())
                .map_err(|_| error)?;
            return Ok(respond(finished(pending, rx, filter, shutdown)));
        }
    };
    let timeout = query
        .get("timeoutSeconds")
        .and_then(|s| s.parse().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    let state = WatchState {
        pending,
        events,
        filter,
        deadline: Instant::now() + timeout,
        shutdown,
        bookmarks: query.flag("allowWatchBookmarks"),
        bookmark_head: (kind.kind.clone(), kind.api_version()),
        last_rv: store.resource_version(),
        done: false,
    };
    Ok(respond(state))
}

fn finished(
    pending: VecDeque<Bytes>,
    events: broadcast::Receiver<Arc<Event>>,
    filter: Filter,
    shutdown: watch::Receiver<bool>,
) -> WatchState {
    WatchState {
        pending,
        events,
        filter,
        deadline: Instant::now(),
        shutdown,
        bookmarks: false,
        bookmark_head: (String::new(), String::new()),
        last_rv: 0,
        done: true,
    }
}

fn respond(state: WatchState) -> Response {
    let stream = futures::stream::unfold(state, next_chunk);
    let mut response = Body::from_stream(stream).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

fn line(kind: &str, object: &Value) -> Bytes {
    let mut bytes =
        serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap_or_default();
    bytes.push(b'\n');
    Bytes::from(bytes)
}

async fn next_chunk(mut state: WatchState) -> Option<(Result<Bytes, Infallible>, WatchState)> {
    loop {
        if let Some(chunk) = state.pending.pop_front() {
            return Some((Ok(chunk), state));
        }
        if state.done || *state.shutdown.borrow() {
            return None;
        }
        tokio::select! {
            received = state.events.recv() => match received {
                Ok(event) => {
                    state.last_rv = state.last_rv.max(event.resource_version);
                    if state.filter.accepts(&event) {
                        state.pending.push_back(line(event.kind.as_str(), &event.object));
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let error = ApiError::expired(state.last_rv, state.last_rv + 1);
                    state.pending.push_back(line("ERROR", &error.to_json()));
                    state.done = true;
                }
                Err(broadcast::error::RecvError::Closed) => state.done = true,
            },
            () = tokio::time::sleep_until(state.deadline) => {
                if state.bookmarks {
                    let (kind, api_version) = &state.bookmark_head;
                    let object = json!({"kind": kind, "apiVersion": api_version, "metadata": {"resourceVersion": state.last_rv.to_string()}});
                    state.pending.push_back(line("BOOKMARK", &object));
                }
                state.done = true;
            }
            _ = state.shutdown.changed() => state.done = true,
        }
    }
}
