//! A HyperFleet API that behaves like the real one (openshift-hyperfleet/hyperfleet-api
//! @541f6b4) for what `fixtures/hyperfleet/real-api/` records: entities, generations, soft and
//! hard delete, status reports with the acceptance rules in order, and the aggregated conditions
//! HyperFleet concludes from them (`docs/hyperfleet-framework.md` §6, §7). An axum server on
//! 127.0.0.1:0; every answer is also available in-process ([`FakeHyperfleetApi::call`]).
//!
//! | route (prefix `/api/hyperfleet/v1`) | answers |
//! |---|---|
//! | `GET /{plural}` (`?search=`, see [`search`]; `page`, `size`) | list `{items, page, size, total}` as recorded, newest first (`created_time desc`, the server's default order; `order` is not applied), one page of `size` (default 20, at most 100; `page` at most 100000; 400 `Invalid query parameters` with the real `errors` list outside); child kinds listed flat, or under their parent |
//! | `POST /{plural}`, `POST /{parent}/{id}/{plural}` | 201 + resource (UUIDv7 `id`, `generation` 1); 400 body checks in the real order ([`writes`]), name rules; 409 `HYPERFLEET-CNF-001` same name; 409 `HYPERFLEET-CNF-003` parent deleted; flat POST of a child kind 422 |
//! | `GET`/`PATCH`/`DELETE /{plural}/{id}` (and nested under the parent) | 200 / 200 (`generation` + 1 when spec or labels change; body checks of [`writes`]; 409 `HYPERFLEET-CNF-003` once deleted) / 202 (first DELETE: `deleted_time`, `deleted_by`, `generation` + 1, cascaded to children) |
//! | `PUT …/{id}/statuses` | §7.4 rules 1–14 in order: 400 / 404 / 204 / 201; a stored `Finalized=True` from every required adapter at the current generation with no child left hard-deletes (then 404) |
//! | `GET …/{id}/statuses` | `{items, page, size, total}` |
//! | anything else | 404 `HYPERFLEET-NTF-000` |
//!
//! Auth: off as recorded, or a bearer token ([`Config::token`]): 401 `HYPERFLEET-AUT-001`
//! without an `Authorization` header, `HYPERFLEET-AUT-002` with another token. Tenancy is off.
//!
//! Time comes from a [`Clock`] the test sets (no sleeping for `observed_time` windows, rules 7
//! and 11): wall time by default.

mod aggregation;
#[cfg(test)]
mod behaviour;
pub mod management;
pub mod search;
mod writes;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;

pub use aggregation::condition_type;
pub use management::ManagementCluster;

use super::api::{self, Answer, Request, Stored};

/// The path prefix of every route.
pub const PREFIX: &str = "/api/hyperfleet/v1";
/// `created_by`/`updated_by`/`deleted_by` without auth (§7.1).
pub const SYSTEM_USER: &str = "system@hyperfleet.local";

/// One entity kind the server is configured with (`entities[]` of the API's config).
#[derive(Debug, Clone)]
pub struct Entity {
    pub kind: String,
    /// The path segment (`clusters`).
    pub plural: String,
    /// The owning kind of a child (`NodePool` → `Cluster`); deleting the parent cascades.
    pub parent: Option<String>,
    pub required_adapters: Vec<String>,
    /// Allowed `name` length, inclusive.
    pub name_length: (usize, usize),
}

impl Entity {
    fn new(kind: &str, plural: &str, parent: Option<&str>, required: &[&str]) -> Entity {
        Entity {
            kind: kind.into(),
            plural: plural.into(),
            parent: parent.map(Into::into),
            required_adapters: required.iter().map(|s| (*s).to_owned()).collect(),
            name_length: (3, 53),
        }
    }
}

/// Tokens the server accepts besides [`Config::token`], as a gateway's TokenReview decides
/// (e.g. the kube fake's ServiceAccount tokens for audience `hyperfleet-api`).
#[derive(Clone)]
pub struct TokenReview(pub Arc<dyn Fn(&str) -> bool + Send + Sync>);

impl std::fmt::Debug for TokenReview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenReview")
    }
}

/// What the server is configured with.
#[derive(Debug, Clone)]
pub struct Config {
    pub entities: Vec<Entity>,
    /// `Some`: every request must carry `Authorization: Bearer <token>` (or a token `review`
    /// accepts).
    pub token: Option<String>,
    pub review: Option<TokenReview>,
}

impl Config {
    /// The recorded server (`real-api/README.md`): Cluster (names 3–53; required `validation`,
    /// `dns`, `pullsecret`, `hypershift`), NodePool (child of Cluster, names 3–15; required
    /// `validation`, `hypershift`; cascade) and ManagementCluster (top-level, plural
    /// `managementclusters`, free-form spec; required `mgmt-health`). Auth off.
    pub fn recorded() -> Config {
        let mut nodepool = Entity::new(
            "NodePool",
            "nodepools",
            Some("Cluster"),
            &["validation", "hypershift"],
        );
        nodepool.name_length = (3, 15);
        Config {
            entities: vec![
                Entity::new(
                    "Cluster",
                    "clusters",
                    None,
                    &["validation", "dns", "pullsecret", "hypershift"],
                ),
                nodepool,
                Entity::new(
                    "ManagementCluster",
                    "managementclusters",
                    None,
                    &["mgmt-health"],
                ),
            ],
            token: None,
            review: None,
        }
    }

    /// The same, requiring `token`.
    pub fn with_token(mut self, token: &str) -> Config {
        self.token = Some(token.to_owned());
        self
    }

    /// The same, also accepting the tokens `review` accepts.
    pub fn with_review(mut self, review: impl Fn(&str) -> bool + Send + Sync + 'static) -> Config {
        self.review = Some(TokenReview(Arc::new(review)));
        self
    }

    fn by_plural(&self, plural: &str) -> Option<&Entity> {
        self.entities.iter().find(|e| e.plural == plural)
    }

    fn by_kind(&self, kind: &str) -> Option<&Entity> {
        self.entities.iter().find(|e| e.kind == kind)
    }
}

/// The server's notion of now: wall time, or a time the test sets and moves.
#[derive(Debug, Clone, Default)]
pub struct Clock(Arc<Mutex<Option<Timestamp>>>);

impl Clock {
    /// Follows the wall clock.
    pub fn wall() -> Clock {
        Clock::default()
    }

    /// Stands at `at` until set or advanced.
    pub fn at(at: Timestamp) -> Clock {
        Clock(Arc::new(Mutex::new(Some(at))))
    }

    pub fn now(&self) -> Timestamp {
        self.lock().unwrap_or_else(Timestamp::now)
    }

    pub fn set(&self, at: Timestamp) {
        *self.lock() = Some(at);
    }

    /// Moves a set clock on by `by` (a wall clock becomes a set one).
    pub fn advance(&self, by: SignedDuration) {
        let mut guard = self.lock();
        let now = guard.unwrap_or_else(Timestamp::now);
        *guard = Some(now + by);
    }

    fn lock(&self) -> MutexGuard<'_, Option<Timestamp>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One condition on a resource.
#[derive(Debug, Clone, PartialEq)]
struct Condition {
    type_: String,
    status: &'static str,
    reason: Option<String>,
    message: Option<String>,
    observed_generation: i64,
    created_time: Timestamp,
    last_updated_time: Timestamp,
    last_transition_time: Timestamp,
}

impl Condition {
    fn present(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), self.type_.clone().into());
        m.insert("status".into(), self.status.into());
        if let Some(r) = &self.reason {
            m.insert("reason".into(), r.clone().into());
        }
        if let Some(msg) = &self.message {
            m.insert("message".into(), msg.clone().into());
        }
        m.insert(
            "observed_generation".into(),
            self.observed_generation.into(),
        );
        m.insert("created_time".into(), time(self.created_time));
        m.insert("last_updated_time".into(), time(self.last_updated_time));
        m.insert(
            "last_transition_time".into(),
            time(self.last_transition_time),
        );
        Value::Object(m)
    }
}

/// One adapter's stored report.
#[derive(Debug, Clone)]
struct AdapterStatus {
    adapter: String,
    observed_generation: i64,
    /// The conditions as sent, each with `last_transition_time`.
    conditions: Vec<Value>,
    data: Value,
    metadata: Option<Value>,
    created_time: Timestamp,
    last_report_time: Timestamp,
}

impl AdapterStatus {
    fn present(&self) -> Value {
        let mut m = Map::new();
        m.insert("adapter".into(), self.adapter.clone().into());
        m.insert("conditions".into(), Value::Array(self.conditions.clone()));
        m.insert("created_time".into(), time(self.created_time));
        m.insert("data".into(), self.data.clone());
        m.insert("last_report_time".into(), time(self.last_report_time));
        if let Some(meta) = &self.metadata {
            m.insert("metadata".into(), meta.clone());
        }
        m.insert(
            "observed_generation".into(),
            self.observed_generation.into(),
        );
        Value::Object(m)
    }
}

#[derive(Debug, Clone)]
struct Resource {
    id: String,
    kind: String,
    name: String,
    labels: Map<String, Value>,
    spec: Value,
    generation: i64,
    owner: Option<String>,
    created_time: Timestamp,
    updated_time: Timestamp,
    deleted_time: Option<Timestamp>,
    created_by: String,
    updated_by: String,
    deleted_by: Option<String>,
    conditions: Vec<Condition>,
    statuses: Vec<AdapterStatus>,
}

/// How a write presents its conditions: the real server answers a write with the conditions in
/// the order it computed them, and a read in the database's order (by type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Computed,
    ByType,
}

#[derive(Debug, Default)]
struct State {
    /// Every resource, in creation order.
    resources: Vec<Resource>,
}

/// An answer: status, content type and body (`Value::Null` when empty).
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub content_type: Option<&'static str>,
    pub body: Value,
}

impl Reply {
    fn json(status: u16, body: Value) -> Reply {
        Reply {
            status,
            content_type: Some("application/json"),
            body,
        }
    }

    fn empty(status: u16) -> Reply {
        Reply {
            status,
            content_type: None,
            body: Value::Null,
        }
    }
}

struct Shared {
    config: Config,
    clock: Clock,
    state: Mutex<State>,
    /// Every HTTP request served, `METHOD /path?query`, in order.
    requests: Mutex<Vec<String>>,
}

/// The running fake; the server task ends with the runtime.
#[derive(Clone)]
pub struct FakeHyperfleetApi {
    url: String,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeHyperfleetApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeHyperfleetApi")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl FakeHyperfleetApi {
    /// Starts a server with `config`, telling time by `clock`.
    pub async fn start(config: Config, clock: Clock) -> anyhow::Result<FakeHyperfleetApi> {
        let shared = Arc::new(Shared {
            config,
            clock,
            state: Mutex::new(State::default()),
            requests: Mutex::default(),
        });
        let app = axum::Router::new()
            .fallback(serve)
            .with_state(Arc::clone(&shared));
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakeHyperfleetApi { url, shared })
    }

    /// The base URL (`HYPERFLEET_API_URL`), without the path prefix.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request served over HTTP so far, `METHOD /path?query` (query as sent), in order
    /// (not the in-process [`Self::call`]s): what a pulse cost.
    pub fn requests(&self) -> Vec<String> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn clock(&self) -> &Clock {
        &self.shared.clock
    }

    /// Every request served over HTTP so far, as `METHOD path` (not [`Self::call`]s), in order.
    pub fn served(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .map(|r| match r.split_once('?') {
                Some((path, _)) => path.to_owned(),
                None => r,
            })
            .collect()
    }

    /// Answers `method path` (path under [`PREFIX`], may hold `?query`) with `body` as the
    /// server would, without auth.
    pub fn call(&self, method: &str, path: &str, body: Option<&str>) -> Reply {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        self.shared.answer(method, path, query, body.unwrap_or(""))
    }

    /// Puts `object` into the store as the state the real server would have reached through
    /// its API (for tests that start mid-life, e.g. a cluster at generation 3): a resource
    /// presentation with `kind` (configured), `id`, `name`, `generation`, and optionally `spec`,
    /// `labels`, `owner_references.id` (a child's parent, which must be stored first),
    /// `deleted_time`/`deleted_by`. Its conditions are computed as after a change; reports are
    /// none. A stored resource with the same id is replaced (keeping its reports). Returns its
    /// path.
    ///
    /// # Panics
    /// When `object` lacks one of those fields, its kind is not configured or its parent is not
    /// stored: a test set-up error.
    pub fn seed(&self, object: &Value) -> String {
        let shared = &self.shared;
        let text = |key: &str| {
            object[key]
                .as_str()
                .unwrap_or_else(|| panic!("seed: `{key}` missing in {object}"))
                .to_owned()
        };
        let kind = text("kind");
        assert!(
            shared.config.by_kind(&kind).is_some(),
            "seed: kind {kind} is not configured"
        );
        let now = shared.clock.now();
        let parse_time = |key: &str| {
            object[key]
                .as_str()
                .and_then(|t| t.parse::<Timestamp>().ok())
        };
        let mut state = shared.state();
        let owner = object["owner_references"]["id"].as_str().map(str::to_owned);
        if let Some(owner) = &owner {
            assert!(
                state.resources.iter().any(|r| &r.id == owner),
                "seed: the parent {owner} is not stored"
            );
        }
        let id = text("id");
        let previous = state.resources.iter().position(|r| r.id == id);
        let resource = Resource {
            id: id.clone(),
            kind,
            name: text("name"),
            labels: object["labels"].as_object().cloned().unwrap_or_default(),
            spec: match &object["spec"] {
                Value::Null => json!({}),
                spec => spec.clone(),
            },
            generation: object["generation"]
                .as_i64()
                .unwrap_or_else(|| panic!("seed: `generation` missing in {object}")),
            owner,
            created_time: parse_time("created_time").unwrap_or(now),
            updated_time: parse_time("updated_time").unwrap_or(now),
            deleted_time: object
                .get("deleted_time")
                .map(|_| parse_time("deleted_time").unwrap_or(now)),
            created_by: SYSTEM_USER.into(),
            updated_by: SYSTEM_USER.into(),
            deleted_by: object.get("deleted_time").map(|_| {
                object["deleted_by"]
                    .as_str()
                    .unwrap_or(SYSTEM_USER)
                    .to_owned()
            }),
            conditions: Vec::new(),
            statuses: previous
                .map(|i| state.resources[i].statuses.clone())
                .unwrap_or_default(),
        };
        let index = match previous {
            Some(i) => {
                state.resources[i] = resource;
                i
            }
            None => {
                state.resources.push(resource);
                state.resources.len() - 1
            }
        };
        shared.recompute(&mut state, index);
        shared.href(&state, &state.resources[index])
    }

    /// Removes resource `id`, its children and their reports, as the hard delete does once
    /// every required adapter reported `Finalized=True` (for tests that skip those reports);
    /// false when it was not stored.
    pub fn remove(&self, id: &str) -> bool {
        let mut state = self.shared.state();
        let before = state.resources.len();
        let mut gone = vec![id.to_owned()];
        while let Some(next) = gone.pop() {
            let children: Vec<String> = state
                .resources
                .iter()
                .filter(|r| r.owner.as_deref() == Some(next.as_str()))
                .map(|r| r.id.clone())
                .collect();
            state.resources.retain(|r| r.id != next);
            gone.extend(children);
        }
        state.resources.len() != before
    }

    /// `call` for a JSON body, panicking on a non-2xx answer: returns the body.
    pub fn must(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let text = body.map(Value::to_string);
        let reply = self.call(method, path, text.as_deref());
        assert!(
            (200..300).contains(&reply.status),
            "{method} {path}: {} {}",
            reply.status,
            reply.body
        );
        reply.body
    }
}

async fn serve(
    axum::extract::State(shared): axum::extract::State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    shared
        .requests
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(format!(
            "{method} {}",
            uri.path_and_query().map_or(uri.path(), |pq| pq.as_str())
        ));
    let reply = match shared.refused(&headers, uri.path()) {
        Some(reply) => reply,
        None => shared.answer(
            method.as_str(),
            uri.path(),
            uri.query().unwrap_or(""),
            &String::from_utf8_lossy(&body),
        ),
    };
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    match reply.content_type {
        None => status.into_response(),
        Some(content_type) => (
            status,
            [(header::CONTENT_TYPE, content_type)],
            reply.body.to_string(),
        )
            .into_response(),
    }
}

fn time(t: Timestamp) -> Value {
    t.to_string().into()
}

/// A UUIDv7 (RFC 9562: 48-bit Unix milliseconds, version 7, variant 10, random rest),
/// lowercase, 36 characters.
fn uuid_v7(at: Timestamp) -> String {
    let millis = u64::try_from(at.as_millisecond()).unwrap_or_default() & 0xffff_ffff_ffff;
    let rand_a = fastrand::u16(..) & 0x0fff;
    let rand_b = fastrand::u64(..) & 0x3fff_ffff_ffff_ffff;
    let hi = (millis << 16) | 0x7000 | u64::from(rand_a);
    let lo = 0x8000_0000_0000_0000 | rand_b;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xffff,
        hi & 0xffff,
        lo >> 48,
        lo & 0xffff_ffff_ffff
    )
}

/// The problem+json kinds the fake answers with (`api@541f6b4:pkg/errors/errors.go`).
#[derive(Debug, Clone, Copy)]
enum Problem {
    /// HYPERFLEET-VAL-000
    Validation,
    /// HYPERFLEET-VAL-005
    BadRequest,
    /// HYPERFLEET-VAL-006
    Malformed,
    /// HYPERFLEET-VAL-007
    Search,
    /// HYPERFLEET-NTF-000
    NoEndpoint,
    /// HYPERFLEET-NTF-001
    NotFound,
    /// HYPERFLEET-CNF-001
    Exists,
    /// HYPERFLEET-CNF-003
    State,
    /// HYPERFLEET-AUT-001
    NoCredentials,
    /// HYPERFLEET-AUT-002
    BadCredentials,
}

impl Problem {
    fn parts(self) -> (u16, &'static str, &'static str, &'static str) {
        match self {
            Problem::Validation => (
                400,
                "HYPERFLEET-VAL-000",
                "validation-error",
                "Validation Failed",
            ),
            Problem::BadRequest => (400, "HYPERFLEET-VAL-005", "bad-request", "Bad Request"),
            Problem::Malformed => (
                400,
                "HYPERFLEET-VAL-006",
                "malformed-request",
                "Malformed Request",
            ),
            Problem::Search => (
                400,
                "HYPERFLEET-VAL-007",
                "validation-error",
                "Invalid Search Query",
            ),
            Problem::NoEndpoint => (404, "HYPERFLEET-NTF-000", "not-found", "Endpoint Not Found"),
            Problem::NotFound => (404, "HYPERFLEET-NTF-001", "not-found", "Resource Not Found"),
            Problem::Exists => (409, "HYPERFLEET-CNF-001", "conflict", "Resource Conflict"),
            Problem::State => (409, "HYPERFLEET-CNF-003", "conflict", "State Conflict"),
            Problem::NoCredentials => (
                401,
                "HYPERFLEET-AUT-001",
                "authentication-error",
                "Authentication Required",
            ),
            Problem::BadCredentials => (
                401,
                "HYPERFLEET-AUT-002",
                "authentication-error",
                "Invalid Credentials",
            ),
        }
    }

    fn by_code(code: &str) -> Problem {
        match code {
            "HYPERFLEET-VAL-006" => Problem::Malformed,
            _ => Problem::Validation,
        }
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn problem(&self, problem: Problem, detail: &str, instance: &str) -> Reply {
        let (status, code, type_, title) = problem.parts();
        let now = self.clock.now();
        Reply {
            status,
            content_type: Some("application/problem+json"),
            body: json!({
                "type": format!("https://api.hyperfleet.io/errors/{type_}"),
                "title": title,
                "status": status,
                "detail": detail,
                "instance": instance,
                "code": code,
                "timestamp": time(now),
                "trace_id": uuid_v7(now),
            }),
        }
    }

    /// The 400 of a list query whose `page` or `size` is refused: the problem with the
    /// real API's `errors` list.
    fn invalid_query(&self, errors: Vec<Value>, path: &str) -> Reply {
        let mut reply = self.problem(Problem::Validation, "Invalid query parameters", path);
        reply.body["errors"] = Value::Array(errors);
        reply
    }

    /// Rule 0: the bearer token, when one is configured.
    fn refused(&self, headers: &HeaderMap, path: &str) -> Option<Reply> {
        let token = self.config.token.as_ref()?;
        match headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
        {
            None => {
                Some(self.problem(Problem::NoCredentials, "missing authorization header", path))
            }
            Some(v)
                if v.strip_prefix("Bearer ").is_some_and(|presented| {
                    presented == token
                        || self
                            .config
                            .review
                            .as_ref()
                            .is_some_and(|r| (r.0)(presented))
                }) =>
            {
                None
            }
            Some(_) => Some(self.problem(Problem::BadCredentials, "invalid JWT token", path)),
        }
    }

    fn answer(&self, method: &str, path: &str, query: &str, body: &str) -> Reply {
        let no_endpoint = || {
            self.problem(
                Problem::NoEndpoint,
                &format!("The requested endpoint '{path}' does not exist"),
                path,
            )
        };
        let Some(rest) = path.strip_prefix(PREFIX) else {
            return no_endpoint();
        };
        let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
        let config = &self.config;
        // Resolve `/{plural}[/{id}[/{child-plural}[/{id}]]][/statuses]`.
        let (entity, parent, id, statuses) = match segments.as_slice() {
            [plural] => (config.by_plural(plural), None, None, false),
            [plural, id] => (config.by_plural(plural), None, Some(*id), false),
            [plural, id, "statuses"] => (config.by_plural(plural), None, Some(*id), true),
            [parent_plural, parent_id, child_plural, rest @ ..] => {
                let Some(parent) = config.by_plural(parent_plural) else {
                    return no_endpoint();
                };
                let child = config
                    .by_plural(child_plural)
                    .filter(|c| c.parent.as_deref() == Some(parent.kind.as_str()));
                match rest {
                    [] => (child, Some((parent, *parent_id)), None, false),
                    [id] => (child, Some((parent, *parent_id)), Some(*id), false),
                    [id, "statuses"] => (child, Some((parent, *parent_id)), Some(*id), true),
                    _ => return no_endpoint(),
                }
            }
            _ => return no_endpoint(),
        };
        let Some(entity) = entity else {
            return no_endpoint();
        };
        let query = query_pairs(query);
        let mut state = self.state();
        // A nested request whose parent does not exist: the parent's 404, except for statuses
        // (the child's 404); a create or PATCH checks its body first (measured on the real API).
        let parent_missing = || {
            parent
                .filter(|(p, pid)| find(&state, &p.kind, pid, None).is_none())
                .map(|(p, pid)| self.not_found(&p.kind, pid, path))
        };
        let owner = parent.map(|(_, pid)| pid);
        if !statuses
            && matches!(method, "GET" | "DELETE")
            && let Some(reply) = parent_missing()
        {
            return reply;
        }
        match (method, id, statuses) {
            ("GET", None, _) => self.list(&state, entity, owner, &query, path),
            ("POST", None, _) => {
                let missing = parent_missing();
                self.create(&mut state, entity, (owner, missing), body, path)
            }
            ("GET", Some(id), false) => match find(&state, &entity.kind, id, owner) {
                Some(i) => Reply::json(200, self.present(&state, i, Order::ByType)),
                None => self.not_found(&entity.kind, id, path),
            },
            ("PATCH", Some(id), false) => {
                let missing = parent_missing();
                self.patch(&mut state, entity, (id, owner, missing), body, path)
            }
            ("DELETE", Some(id), false) => self.delete(&mut state, entity, id, owner, path),
            ("GET", Some(id), true) => {
                match (page_and_size(&query), find(&state, &entity.kind, id, owner)) {
                    (Err(errors), _) => self.invalid_query(errors, path),
                    (Ok(_), None) => self.not_found(&entity.kind, id, path),
                    (Ok((page, size)), Some(i)) => {
                        let all = &state.resources[i].statuses;
                        let skip =
                            usize::try_from((page - 1).saturating_mul(size)).unwrap_or(usize::MAX);
                        let items: Vec<Value> = all
                            .iter()
                            .skip(skip)
                            .take(usize::try_from(size).unwrap_or(usize::MAX))
                            .map(AdapterStatus::present)
                            .collect();
                        Reply::json(
                            200,
                            json!({"items": items, "page": page, "size": items.len(), "total": all.len()}),
                        )
                    }
                }
            }
            ("PUT", Some(id), true) => self.put_status(&mut state, entity, id, owner, body, path),
            // POST …/statuses: Go's plain-text 405 (§7.2).
            _ => Reply {
                status: 405,
                content_type: Some("text/plain; charset=utf-8"),
                // Go's http.Error ends the text with a newline.
                body: Value::String("Method Not Allowed\n".into()),
            },
        }
    }

    fn not_found(&self, kind: &str, id: &str, path: &str) -> Reply {
        self.problem(
            Problem::NotFound,
            &format!("{kind} with id='{id}' not found"),
            path,
        )
    }

    fn present(&self, state: &State, index: usize, order: Order) -> Value {
        let r = &state.resources[index];
        let mut m = Map::new();
        m.insert("id".into(), r.id.clone().into());
        m.insert("kind".into(), r.kind.clone().into());
        m.insert("href".into(), self.href(state, r).into());
        m.insert("name".into(), r.name.clone().into());
        if !r.labels.is_empty() {
            m.insert("labels".into(), Value::Object(r.labels.clone()));
        }
        m.insert("spec".into(), r.spec.clone());
        m.insert("generation".into(), r.generation.into());
        if let Some(owner) = &r.owner
            && let Some(o) = state.resources.iter().find(|o| &o.id == owner)
        {
            m.insert(
                "owner_references".into(),
                json!({"id": o.id, "kind": o.kind, "href": self.href(state, o)}),
            );
        }
        let mut conditions: Vec<&Condition> = r.conditions.iter().collect();
        if order == Order::ByType {
            conditions.sort_by(|a, b| a.type_.cmp(&b.type_));
        }
        m.insert(
            "status".into(),
            json!({"conditions": conditions.iter().map(|c| c.present()).collect::<Vec<_>>()}),
        );
        m.insert("tenancy".into(), json!({}));
        m.insert("created_time".into(), time(r.created_time));
        m.insert("created_by".into(), r.created_by.clone().into());
        m.insert("updated_time".into(), time(r.updated_time));
        m.insert("updated_by".into(), r.updated_by.clone().into());
        if let (Some(t), Some(by)) = (r.deleted_time, &r.deleted_by) {
            m.insert("deleted_time".into(), time(t));
            m.insert("deleted_by".into(), by.clone().into());
        }
        Value::Object(m)
    }

    fn href(&self, state: &State, r: &Resource) -> String {
        let plural = self
            .config
            .by_kind(&r.kind)
            .map_or("", |e| e.plural.as_str());
        match r
            .owner
            .as_ref()
            .and_then(|o| state.resources.iter().find(|p| &p.id == o))
        {
            Some(parent) => format!("{}/{}/{}", self.href(state, parent), plural, r.id),
            None => format!("{PREFIX}/{plural}/{}", r.id),
        }
    }

    fn list(
        &self,
        state: &State,
        entity: &Entity,
        owner: Option<&str>,
        query: &[(String, String)],
        path: &str,
    ) -> Reply {
        let search = match query.iter().find(|(k, _)| k == "search") {
            None => None,
            Some((_, s)) if s.is_empty() => None,
            Some((_, s)) => match search::parse(s) {
                Some(parsed) => Some(parsed),
                None => {
                    return match search::refusal(s, &entity.kind) {
                        Some(detail) => self.problem(Problem::BadRequest, &detail, path),
                        None => self.problem(Problem::Search, &search::unsupported(s), path),
                    };
                }
            },
        };
        let (page, size) = match page_and_size(query) {
            Ok(p) => p,
            Err(errors) => return self.invalid_query(errors, path),
        };
        // The default order, `created_time desc`: the newest first (the later stored first
        // among equal times).
        let mut indices: Vec<usize> = (0..state.resources.len()).collect();
        indices.sort_by(|&a, &b| {
            let (ra, rb) = (&state.resources[a], &state.resources[b]);
            rb.created_time.cmp(&ra.created_time).then(b.cmp(&a))
        });
        let matching: Vec<Value> = indices
            .into_iter()
            .filter(|&i| {
                let r = &state.resources[i];
                r.kind == entity.kind && owner.is_none_or(|o| r.owner.as_deref() == Some(o))
            })
            .map(|i| self.present(state, i, Order::ByType))
            .filter(|v| search.as_ref().is_none_or(|s| s.matches(v)))
            .collect();
        let total = matching.len();
        let skip = usize::try_from((page - 1).saturating_mul(size)).unwrap_or(usize::MAX);
        let items: Vec<Value> = matching
            .into_iter()
            .skip(skip)
            .take(usize::try_from(size).unwrap_or(usize::MAX))
            .collect();
        Reply::json(
            200,
            json!({"items": items, "page": page, "size": items.len(), "total": total}),
        )
    }

    /// `parent_missing`: the 404 of a nested create whose parent does not exist, answered once
    /// the body passed its checks (as the real API does).
    fn create(
        &self,
        state: &mut State,
        entity: &Entity,
        (owner, parent_missing): (Option<&str>, Option<Reply>),
        body: &str,
        path: &str,
    ) -> Reply {
        let request = match writes::create(body, entity) {
            Ok(r) => r,
            Err((problem, detail)) => return self.problem(problem, &detail, path),
        };
        if entity.parent.is_some() && owner.is_none() {
            // §7.2: a child kind is created under its parent only.
            let parent_plural = entity
                .parent
                .as_deref()
                .and_then(|k| self.config.by_kind(k))
                .map_or("", |p| p.plural.as_str());
            let mut reply = self.problem(
                Problem::Validation,
                &format!(
                    "kind {:?} is a child kind; create it via /{parent_plural}/{{id}}/{}",
                    entity.kind, entity.plural
                ),
                path,
            );
            reply.status = 422;
            reply.body["status"] = 422.into();
            return reply;
        }
        if let Some(reply) = parent_missing {
            return reply;
        }
        let name = request["name"].as_str().unwrap_or_default();
        let labels = match request.get("labels") {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        let spec = request.get("spec").cloned().unwrap_or_else(|| json!({}));
        if let Some(owner) = owner
            && let Some(p) = state.resources.iter().find(|r| r.id == owner)
            && p.deleted_time.is_some()
        {
            return self.problem(
                Problem::State,
                &format!("{} '{owner}' is marked for deletion", p.kind),
                path,
            );
        }
        if state
            .resources
            .iter()
            .any(|r| r.kind == entity.kind && r.name == name && r.owner.as_deref() == owner)
        {
            return self.problem(
                Problem::Exists,
                &format!("This {} already exists", entity.kind),
                path,
            );
        }
        let now = self.clock.now();
        state.resources.push(Resource {
            id: uuid_v7(now),
            kind: entity.kind.clone(),
            name: name.to_owned(),
            labels,
            spec,
            generation: 1,
            owner: owner.map(str::to_owned),
            created_time: now,
            updated_time: now,
            deleted_time: None,
            created_by: SYSTEM_USER.into(),
            updated_by: SYSTEM_USER.into(),
            deleted_by: None,
            conditions: Vec::new(),
            statuses: Vec::new(),
        });
        let index = state.resources.len() - 1;
        self.recompute(state, index);
        Reply::json(201, self.present(state, index, Order::Computed))
    }

    fn patch(
        &self,
        state: &mut State,
        entity: &Entity,
        (id, owner, parent_missing): (&str, Option<&str>, Option<Reply>),
        body: &str,
        path: &str,
    ) -> Reply {
        let request = match writes::patch(body) {
            Ok(r) => r,
            Err((problem, detail)) => return self.problem(problem, &detail, path),
        };
        if let Some(reply) = parent_missing {
            return reply;
        }
        let Some(index) = find(state, &entity.kind, id, owner) else {
            return self.not_found(&entity.kind, id, path);
        };
        if request.values().all(Value::is_null) {
            return self.problem(
                Problem::BadRequest,
                "at least one field must be provided for update",
                path,
            );
        }
        if state.resources[index].deleted_time.is_some() {
            return self.problem(
                Problem::State,
                &format!("{} '{id}' is marked for deletion", entity.kind),
                path,
            );
        }
        let resource = &mut state.resources[index];
        let mut changed = false;
        match request.get("spec") {
            None | Some(Value::Null) => {}
            Some(spec @ Value::Object(_)) => {
                changed |= resource.spec != *spec;
                resource.spec = spec.clone();
            }
            // Refused by `writes::patch`.
            Some(_) => {}
        }
        match request.get("labels") {
            None | Some(Value::Null) => {}
            Some(Value::Object(labels)) => {
                changed |= resource.labels != *labels;
                resource.labels = labels.clone();
            }
            // Refused by `writes::patch`.
            Some(_) => {}
        }
        if !changed {
            return Reply::json(200, self.present(state, index, Order::ByType));
        }
        resource.generation += 1;
        resource.updated_time = self.clock.now();
        resource.updated_by = SYSTEM_USER.into();
        let order = self.recompute(state, index);
        Reply::json(200, self.present(state, index, order))
    }

    fn delete(
        &self,
        state: &mut State,
        entity: &Entity,
        id: &str,
        owner: Option<&str>,
        path: &str,
    ) -> Reply {
        let Some(index) = find(state, &entity.kind, id, owner) else {
            // The real API's DELETE names no id (measured: `Cluster not found`).
            return self.problem(
                Problem::NotFound,
                &format!("{} not found", entity.kind),
                path,
            );
        };
        let now = self.clock.now();
        let id = state.resources[index].id.clone();
        self.delete_tree(state, &id, now);
        let index = find(state, &entity.kind, &id, None).unwrap_or(index);
        let presented = self.present(state, index, Order::Computed);
        // A kind without required adapters has nobody to wait for: gone once no child remains.
        if entity.required_adapters.is_empty()
            && !state
                .resources
                .iter()
                .any(|r| r.owner.as_deref() == Some(id.as_str()))
        {
            state.resources.remove(index);
        }
        Reply::json(202, presented)
    }

    /// Soft-deletes `id` and (cascade) its children: `deleted_time`, `deleted_by` and
    /// `generation` + 1 on the first DELETE only; conditions recomputed children first.
    fn delete_tree(&self, state: &mut State, id: &str, now: Timestamp) {
        let Some(index) = state.resources.iter().position(|r| r.id == id) else {
            return;
        };
        let r = &mut state.resources[index];
        if r.deleted_time.is_none() {
            r.deleted_time = Some(now);
            r.deleted_by = Some(SYSTEM_USER.into());
            r.generation += 1;
        }
        let children: Vec<String> = state
            .resources
            .iter()
            .filter(|r| r.owner.as_deref() == Some(id))
            .map(|r| r.id.clone())
            .collect();
        for child in &children {
            self.delete_tree(state, child, now);
        }
        if let Some(index) = state.resources.iter().position(|r| r.id == id) {
            self.recompute(state, index);
        }
    }

    fn put_status(
        &self,
        state: &mut State,
        entity: &Entity,
        id: &str,
        owner: Option<&str>,
        body: &str,
        path: &str,
    ) -> Reply {
        let now = self.clock.now();
        // Rules 1–7.
        let request = match api::check_request(body, now) {
            Ok(r) => r,
            Err(answer) => return self.rejected(&answer, path),
        };
        // Rule 8.
        let Some(index) = find(state, &entity.kind, id, owner) else {
            return self.not_found(&entity.kind, id, path);
        };
        let resource = &state.resources[index];
        let existing = resource
            .statuses
            .iter()
            .position(|s| s.adapter == request.adapter);
        let stored = Stored {
            generation: resource.generation,
            report: existing.map(|i| {
                let s = &resource.statuses[i];
                (s.observed_generation, s.last_report_time)
            }),
        };
        // Rules 9–14.
        match api::classify(&request, now, stored) {
            Answer::Stored => {}
            Answer::Discarded(_) => return Reply::empty(204),
            answer @ Answer::Rejected { .. } => return self.rejected(&answer, path),
        }
        let reported_at = request.observed_time.unwrap_or(now);
        let upserted = upsert(&mut state.resources[index], existing, &request, reported_at);
        let presented = state.resources[index].statuses[upserted].present();
        if state.resources[index].deleted_time.is_some()
            && request.status_of("Finalized") == Some("True")
            && self.hard_delete(state, index)
        {
            return Reply::json(201, presented);
        }
        if matches!(request.status_of("Available"), Some("True" | "False")) {
            self.recompute(state, index);
        }
        Reply::json(201, presented)
    }

    fn rejected(&self, answer: &Answer, path: &str) -> Reply {
        match answer {
            Answer::Rejected { code, detail } => self.problem(Problem::by_code(code), detail, path),
            other => self.problem(Problem::Validation, &format!("{other:?}"), path),
        }
    }

    /// Hard delete (§6.6): every required adapter's stored report is at the current generation
    /// with `Finalized=True`, and no child (active or soft-deleted) remains.
    fn hard_delete(&self, state: &mut State, index: usize) -> bool {
        let r = &state.resources[index];
        let required = self
            .config
            .by_kind(&r.kind)
            .map(|e| e.required_adapters.clone())
            .unwrap_or_default();
        let finalized = required.iter().all(|a| {
            r.statuses.iter().any(|s| {
                &s.adapter == a
                    && s.observed_generation == r.generation
                    && s.conditions
                        .iter()
                        .any(|c| c["type"] == "Finalized" && c["status"] == "True")
            })
        });
        let has_children = state
            .resources
            .iter()
            .any(|c| c.owner.as_deref() == Some(r.id.as_str()));
        if !finalized || has_children {
            return false;
        }
        state.resources.remove(index);
        true
    }

    /// Recomputes the conditions of resource `index`; `Computed` when they changed.
    fn recompute(&self, state: &mut State, index: usize) -> Order {
        let r = &state.resources[index];
        let required = self
            .config
            .by_kind(&r.kind)
            .map(|e| e.required_adapters.clone())
            .unwrap_or_default();
        if required.is_empty() {
            return Order::ByType;
        }
        let has_active_children = state
            .resources
            .iter()
            .any(|c| c.owner.as_deref() == Some(r.id.as_str()) && c.deleted_time.is_none());
        let conditions = aggregation::aggregate(&aggregation::Input {
            generation: r.generation,
            ref_time: r.updated_time,
            deleting: r.deleted_time.is_some(),
            has_active_children,
            required: &required,
            statuses: &r.statuses,
            previous: &r.conditions,
        });
        if conditions == r.conditions {
            return Order::ByType;
        }
        state.resources[index].conditions = conditions;
        Order::Computed
    }
}

/// Stores the report (§7.3): each condition's `last_transition_time` is the report's time, kept
/// from the previous report when that condition's status did not change. The DAO writes only a
/// newer report (higher generation, or the same one observed later); otherwise the stored one
/// stays and is answered (§7.4 note on equal `observed_time`). Returns the index.
fn upsert(
    resource: &mut Resource,
    existing: Option<usize>,
    request: &Request,
    reported_at: Timestamp,
) -> usize {
    let previous = existing.map(|i| resource.statuses[i].clone());
    if let Some(p) = &previous
        && !(p.observed_generation < request.observed_generation
            || (p.observed_generation == request.observed_generation
                && p.last_report_time < reported_at))
    {
        return existing.unwrap_or_default();
    }
    let conditions = request
        .conditions
        .iter()
        .map(|c| {
            let mut c = c.clone();
            let kept = previous.as_ref().and_then(|p| {
                p.conditions
                    .iter()
                    .find(|o| o["type"] == c["type"] && o["status"] == c["status"])
                    .map(|o| o["last_transition_time"].clone())
            });
            if let Value::Object(m) = &mut c {
                m.retain(|k, v| {
                    ["type", "status", "reason", "message"].contains(&k.as_str()) && !v.is_null()
                });
                m.insert(
                    "last_transition_time".into(),
                    kept.unwrap_or_else(|| time(reported_at)),
                );
            }
            c
        })
        .collect();
    let status = AdapterStatus {
        adapter: request.adapter.clone(),
        observed_generation: request.observed_generation,
        conditions,
        data: request.data.clone().unwrap_or_else(|| json!({})),
        metadata: request.metadata.clone(),
        created_time: previous.as_ref().map_or(reported_at, |p| p.created_time),
        last_report_time: reported_at,
    };
    match existing {
        Some(i) => {
            resource.statuses[i] = status;
            i
        }
        None => {
            resource.statuses.push(status);
            resource.statuses.len() - 1
        }
    }
}

/// The index of resource `id` of `kind`, owned by `owner` when given.
fn find(state: &State, kind: &str, id: &str, owner: Option<&str>) -> Option<usize> {
    state.resources.iter().position(|r| {
        r.kind == kind && r.id == id && owner.is_none_or(|o| r.owner.as_deref() == Some(o))
    })
}

/// `validateName` (`api@541f6b4:pkg/handlers/validation.go`): required, length, then pattern.
fn name_error(name: &str, (min, max): (usize, usize)) -> Option<String> {
    if name.is_empty() {
        return Some("name is required".into());
    }
    if name.len() < min {
        return Some(format!("name must be at least {min} characters"));
    }
    if name.len() > max {
        return Some(format!("name must be at most {max} characters"));
    }
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let pattern = name.starts_with(ok_char)
        && name.ends_with(ok_char)
        && name.chars().all(|c| ok_char(c) || c == '-');
    (!pattern).then(|| {
        "name must start and end with lowercase letter or number, and contain only lowercase \
         letters, numbers, and hyphens"
            .to_owned()
    })
}

/// The default and largest list page size of the real API (`pkg/services` `NewListArguments`
/// and `pkg/handlers/list_params.go` upstream: size 20 unless asked, at most 100, page ≥ 1).
pub const DEFAULT_PAGE_SIZE: i64 = 20;
/// The largest `size` a list accepts.
pub const MAX_PAGE_SIZE: i64 = 100;

/// The largest `page` a list accepts (measured on the real API: `page must be at most 100000`).
pub const MAX_PAGE: i64 = 100_000;

/// `page` and `size` of a list query: defaults 1 and [`DEFAULT_PAGE_SIZE`] (also for an empty
/// value); `Err` lists what is wrong as the real API does (measured: `size` before `page`,
/// each `{constraint, field, message, value}`; `format` for a value that is not an `int64`,
/// `min` below 1, `max` above [`MAX_PAGE_SIZE`] or [`MAX_PAGE`]).
fn page_and_size(query: &[(String, String)]) -> Result<(i64, i64), Vec<Value>> {
    let mut errors = Vec::new();
    let mut value = |key: &str, default: i64, max: i64| {
        let Some((_, raw)) = query.iter().find(|(k, _)| k == key) else {
            return default;
        };
        if raw.trim().is_empty() {
            return default;
        }
        let error = |constraint: &str, message: String, value: Value| json!({"constraint": constraint, "field": key, "message": message, "value": value});
        match raw.trim().parse::<i64>() {
            Ok(n) if n < 1 => {
                errors.push(error("min", format!("{key} must be at least 1"), n.into()))
            }
            Ok(n) if n > max => {
                errors.push(error(
                    "max",
                    format!("{key} must be at most {max}"),
                    n.into(),
                ));
            }
            Ok(n) => return n,
            Err(_) => errors.push(error(
                "format",
                "must be a valid integer".to_owned(),
                raw.as_str().into(),
            )),
        }
        default
    };
    let size = value("size", DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
    let page = value("page", 1, MAX_PAGE);
    if errors.is_empty() {
        Ok((page, size))
    } else {
        Err(errors)
    }
}

/// `a=b&c=d` with `%xx` and `+` decoded.
fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = s
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_lowercase_uuid_v7() {
        let at: Timestamp = "2026-11-26T14:14:42Z".parse().unwrap();
        let id = uuid_v7(at);
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "7", "{id}");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        assert_eq!(id, id.to_lowercase());
        assert_ne!(uuid_v7(at), id);
    }

    #[test]
    fn names_are_checked_like_the_handler() {
        assert_eq!(name_error("", (3, 15)).unwrap(), "name is required");
        assert_eq!(
            name_error("ab", (3, 15)).unwrap(),
            "name must be at least 3 characters"
        );
        assert_eq!(
            name_error("workers-a-123456", (3, 15)).unwrap(),
            "name must be at most 15 characters"
        );
        assert!(
            name_error("-abc", (3, 15))
                .unwrap()
                .starts_with("name must start")
        );
        assert!(name_error("Abc", (3, 15)).is_some());
        assert_eq!(name_error("workers-a-12345", (3, 15)), None);
    }

    #[test]
    fn queries_are_percent_decoded() {
        assert_eq!(
            query_pairs("search=labels.team=%27platform%27&page=1"),
            vec![
                ("search".to_owned(), "labels.team='platform'".to_owned()),
                ("page".to_owned(), "1".to_owned())
            ]
        );
    }
}
