//! The fake's REST API: resource-bundle get/list/delete (§4) with Maestro's error bodies and list envelope.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use super::state::{Resource, Shared};

/// The counter of lists asking `size=1` (a count: the caller reads `total`).
pub const LIST_COUNT: &str = "LIST resource-bundles count";
/// The counter of every other list (a find).
pub const LIST_FIND: &str = "LIST resource-bundles find";

/// Maximum page size the server accepts.
const MAX_PAGE_SIZE: i64 = 65500;

/// The REST router.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/api/maestro/v1/resource-bundles", get(list))
        .route("/api/maestro/v1/consumers", get(list_consumers))
        .route("/api/maestro/v1/consumers/{id}", get(get_consumer))
        .route(
            "/api/maestro/v1/resource-bundles/{id}",
            get(get_one).delete(delete_one),
        )
        .fallback(unknown_route)
        .with_state(shared)
}

/// Maestro error body (§4.6).
pub fn error_body(status: StatusCode, code: u32, reason: &str) -> Response {
    let body = json!({
        "kind": "Error", "id": code.to_string(), "href": format!("/api/maestro/v1/errors/{code}"),
        "code": format!("maestro-{code}"), "reason": reason, "operation_id": new_op_id(),
    });
    (status, axum::Json(body)).into_response()
}

fn new_op_id() -> String {
    hypershift_adapter::work::maestro::manifestbundle::new_event_id()
}

async fn unknown_route(uri: Uri) -> Response {
    let body = json!({
        "type": "Error", "id": "404", "href": "/api/maestro/v1/errors/404", "code": "maestro-404",
        "reason": format!("The requested resource '{}' doesn't exist", uri.path()),
    });
    (StatusCode::NOT_FOUND, axum::Json(body)).into_response()
}

async fn get_one(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    if shared.enter("GET resource-bundle").await {
        return error_body(
            StatusCode::SERVICE_UNAVAILABLE,
            9,
            "injected fault: service unavailable",
        );
    }
    let found = shared.lock().resources.get(&id).map(Resource::to_rest);
    match found {
        Some(bundle) => axum::Json(bundle).into_response(),
        None => error_body(
            StatusCode::NOT_FOUND,
            7,
            &format!("Resource with id='{id}' not found"),
        ),
    }
}

async fn delete_one(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    if shared.enter("DELETE resource-bundle").await {
        return error_body(
            StatusCode::SERVICE_UNAVAILABLE,
            9,
            "injected fault: service unavailable",
        );
    }
    if shared.mark_deleting(&id) {
        shared.schedule_delete_ack(&id);
    }
    StatusCode::NO_CONTENT.into_response()
}

async fn list(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    if shared.enter("LIST resource-bundles").await {
        return error_body(
            StatusCode::SERVICE_UNAVAILABLE,
            9,
            "injected fault: service unavailable",
        );
    }
    // The count idiom (`page=1&size=1`, read `total`) is told apart from a find.
    shared.count(if query.get("size").map(String::as_str) == Some("1") {
        LIST_COUNT
    } else {
        LIST_FIND
    });
    let parse = |key: &str, default: i64| -> Result<i64, String> {
        match query.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("Bad request: invalid {key} {v:?}")),
        }
    };
    let page = match parse("page", 1) {
        Ok(p) => p.max(1),
        Err(r) => return error_body(StatusCode::BAD_REQUEST, 21, &r),
    };
    let size = match parse("size", 100) {
        Ok(s) if !(0..=MAX_PAGE_SIZE).contains(&s) => MAX_PAGE_SIZE,
        Ok(s) => s,
        Err(r) => return error_body(StatusCode::BAD_REQUEST, 21, &r),
    };
    let filter = match query.get("search").filter(|s| !s.trim().is_empty()) {
        None => None,
        Some(s) => match Search::parse(s) {
            Ok(f) => Some(f),
            Err(e) => return search_error(s, &e),
        },
    };
    // Only the page is rendered: a count (`size=1`) over thousands of bundles must not copy
    // every payload (the fleet bench measures the adapter, not this fake).
    let (total, items) = {
        let st = shared.lock();
        let mut all: Vec<&Resource> = st
            .resources
            .values()
            .filter(|r| filter.as_ref().is_none_or(|f| f.matches(r)))
            .collect();
        all.sort_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then_with(|| a.id.cmp(&b.id))
        });
        let total = all.len();
        let start = usize::try_from((page - 1).saturating_mul(size))
            .unwrap_or(usize::MAX)
            .min(total);
        let end = start
            .saturating_add(usize::try_from(size).unwrap_or(0))
            .min(total);
        let items: Vec<Value> = all[start..end].iter().map(|r| r.to_rest()).collect();
        (total, items)
    };
    axum::Json(json!({
        "kind": "ResourceBundleList", "page": page, "size": items.len(), "total": total, "items": items,
    }))
    .into_response()
}

/// The real server's answer to a search it cannot run (measured): one that does not parse is a 400
/// `maestro-21` quoting the query; one that parses but names a column the table lacks, or a label
/// fragment that is not JSON, is PostgreSQL's error in a 500 `maestro-9`.
fn search_error(query: &str, error: &str) -> Response {
    if let Some(column) = error.strip_prefix("unknown column ") {
        let column = column.trim_matches('"');
        return error_body(
            StatusCode::INTERNAL_SERVER_ERROR,
            9,
            &format!(
                "Unable to list resources: ERROR: column resources.{column} does not exist (SQLSTATE 42703)"
            ),
        );
    }
    if error.starts_with("label selector ") {
        return error_body(
            StatusCode::INTERNAL_SERVER_ERROR,
            9,
            "Unable to list resources: ERROR: invalid input syntax for type json (SQLSTATE 22P02)",
        );
    }
    error_body(
        StatusCode::BAD_REQUEST,
        21,
        &format!("Failed to parse search query: {query}"),
    )
}

/// `GET /consumers[?search=name='<n>']` (the only search the callers make; another one is a
/// 400 as above): every registered consumer, by name, in Maestro's list envelope.
async fn list_consumers(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let wanted = match query.get("search").filter(|s| !s.trim().is_empty()) {
        None => None,
        Some(s) => {
            let value = s
                .trim()
                .strip_prefix("name")
                .map(str::trim_start)
                .and_then(|v| v.strip_prefix('='))
                .map(str::trim)
                .and_then(|v| v.strip_prefix('\''))
                .and_then(|v| v.strip_suffix('\''));
            match value {
                Some(v) => Some(v.to_owned()),
                None => return search_error(s, "unsupported consumer search"),
            }
        }
    };
    let items: Vec<Value> = shared
        .lock()
        .consumers
        .iter()
        .filter(|(name, _)| wanted.as_ref().is_none_or(|w| w == *name))
        .map(|(name, c)| c.to_rest(name))
        .collect();
    axum::Json(json!({
        "kind": "ConsumerList", "page": 1, "size": items.len(), "total": items.len(), "items": items,
    }))
    .into_response()
}

/// `GET /consumers/{id}`: the consumer, or `maestro-7` (404).
async fn get_consumer(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    let found = shared
        .lock()
        .consumers
        .iter()
        .find(|(_, c)| c.id == id)
        .map(|(name, c)| c.to_rest(name));
    match found {
        Some(consumer) => axum::Json(consumer).into_response(),
        None => error_body(
            StatusCode::NOT_FOUND,
            7,
            &format!("Consumer with id='{id}' not found"),
        ),
    }
}

/// The subset of Maestro's search language the Go client generates (§4.2): terms joined by `and`, each an
/// equality on `source`/`consumer_name`/`name`/`id`, a parenthesised `or` of those, or a label JSONB fragment.
#[derive(Debug)]
struct Search(Vec<Term>);

#[derive(Debug)]
enum Term {
    Any(Vec<Term>),
    Column(String, String),
    LabelsContain(BTreeMap<String, String>),
    LabelNot(String, String),
    LabelExists(String),
    LabelIn(String, Vec<String>),
}

const LABELS: &str = "payload->'metadata'->'labels'";

impl Search {
    fn parse(text: &str) -> Result<Self, String> {
        split_top(text, " and ")
            .into_iter()
            .map(Term::parse)
            .collect::<Result<_, _>>()
            .map(Search)
    }

    fn matches(&self, res: &Resource) -> bool {
        self.0.iter().all(|t| t.matches(res))
    }
}

impl Term {
    fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        if let Some(inner) = t.strip_prefix('(').and_then(|s| s.strip_suffix(')')) {
            return split_top(inner, " or ")
                .into_iter()
                .map(Term::parse)
                .collect::<Result<_, _>>()
                .map(Term::Any);
        }
        if let Some(rest) = t.strip_prefix(LABELS) {
            if let Some(json) = rest.strip_prefix("@>") {
                let map: BTreeMap<String, String> = serde_json::from_str(unquote(json)?)
                    .map_err(|e| format!("label selector {json}: {e}"))?;
                return Ok(Term::LabelsContain(map));
            }
            let rest = rest
                .strip_prefix("->>")
                .ok_or_else(|| format!("unsupported term {t:?}"))?;
            let close = rest[1..]
                .find('\'')
                .ok_or_else(|| format!("unterminated key in {t:?}"))?
                + 2;
            let key = unquote(&rest[..close])?.to_owned();
            let op = &rest[close..];
            if op == "<>null" {
                return Ok(Term::LabelExists(key));
            }
            if let Some(v) = op.strip_prefix("<>") {
                return Ok(Term::LabelNot(key, unquote(v)?.to_owned()));
            }
            if let Some(list) = op.strip_prefix("in(").and_then(|s| s.strip_suffix(')')) {
                let values = list
                    .split(',')
                    .map(|v| unquote(v).map(str::to_owned))
                    .collect::<Result<_, _>>()?;
                return Ok(Term::LabelIn(key, values));
            }
            return Err(format!("unsupported label operator in {t:?}"));
        }
        let (column, value) = t
            .split_once('=')
            .ok_or_else(|| format!("unsupported term {t:?}"))?;
        let column = column.trim();
        if !matches!(column, "source" | "consumer_name" | "name" | "id") {
            return Err(format!("unknown column {column:?}"));
        }
        Ok(Term::Column(
            column.to_owned(),
            unquote(value.trim())?.to_owned(),
        ))
    }

    fn matches(&self, res: &Resource) -> bool {
        let label = |k: &str| {
            res.metadata
                .get("labels")
                .and_then(|l| l.get(k))
                .and_then(Value::as_str)
        };
        match self {
            Term::Any(terms) => terms.iter().any(|t| t.matches(res)),
            Term::Column(c, v) => match c.as_str() {
                "source" => &res.source == v,
                "consumer_name" => &res.consumer == v,
                _ => &res.id == v,
            },
            Term::LabelsContain(map) => map.iter().all(|(k, v)| label(k) == Some(v.as_str())),
            Term::LabelNot(k, v) => label(k).is_some_and(|l| l != v),
            Term::LabelExists(k) => label(k).is_some(),
            Term::LabelIn(k, values) => label(k).is_some_and(|l| values.iter().any(|v| v == l)),
        }
    }
}

fn unquote(s: &str) -> Result<&str, String> {
    s.trim()
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .ok_or_else(|| format!("expected a quoted value: {s}"))
}

/// Splits on `sep` outside parentheses and quotes.
fn split_top<'a>(text: &'a str, sep: &str) -> Vec<&'a str> {
    let (mut depth, mut quoted, mut start, mut out) = (0i32, false, 0usize, Vec::new());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' => quoted = !quoted,
            b'(' if !quoted => depth += 1,
            b')' if !quoted => depth -= 1,
            _ if !quoted && depth == 0 && text[i..].starts_with(sep) => {
                out.push(&text[start..i]);
                i += sep.len();
                start = i;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&text[start..]);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn search_terms_parse() {
        let s = Search::parse(r#"payload->'metadata'->'labels'@>'{"a/b":"c"}'"#).unwrap();
        assert!(
            matches!(&s.0[..], [Term::LabelsContain(m)] if m["a/b"] == "c"),
            "{s:?}"
        );
        let s = Search::parse("source='s' and (consumer_name='a' or consumer_name='b')").unwrap();
        assert_eq!(s.0.len(), 2, "{s:?}");
        let s = Search::parse("payload->'metadata'->'labels'->>'env'in('a','b')").unwrap();
        assert!(
            matches!(&s.0[..], [Term::LabelIn(k, v)] if k == "env" && v.len() == 2),
            "{s:?}"
        );
        let s = Search::parse("payload->'metadata'->'labels'->>'a'<>null").unwrap();
        assert!(
            matches!(&s.0[..], [Term::LabelExists(k)] if k == "a"),
            "{s:?}"
        );
        assert!(Search::parse("bogus ~~ 1").is_err());
    }
}
