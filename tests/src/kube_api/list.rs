//! LIST responses and the field/label selectors LIST and WATCH share.

use serde_json::Value;

use super::request::Query;
use super::resources::ResourceKind;
use super::status::ApiError;
use super::store::{Collection, Store};

/// One `key=value` / `key!=value` / `key` / `!key` requirement.
#[derive(Debug, Clone, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    NotExists(String),
}

/// `fieldSelector` and `labelSelector` of a request.
#[derive(Debug, Clone, Default)]
pub struct Selector {
    fields: Vec<Requirement>,
    labels: Vec<Requirement>,
}

impl Selector {
    /// Parses both selectors of a request on `kind`; set-based label selectors (`in`, `notin`)
    /// and a field the resource cannot be selected by are a 400.
    pub fn from_query(query: &Query, kind: &ResourceKind) -> Result<Self, ApiError> {
        let fields = parse(query.get("fieldSelector").unwrap_or(""), false)?;
        for requirement in &fields {
            let (Requirement::Equals(key, _) | Requirement::NotEquals(key, _)) = requirement else {
                continue;
            };
            if !selectable_fields(kind).contains(&key.as_str()) {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {key}"
                )));
            }
        }
        Ok(Selector {
            fields,
            labels: parse(query.get("labelSelector").unwrap_or(""), true)?,
        })
    }

    /// Whether the selectors narrow the result (then no `remainingItemCount` is given).
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.labels.is_empty()
    }

    /// Whether an object matches both selectors.
    pub fn matches(&self, object: &Value) -> bool {
        let field = |path: &str| -> Option<String> {
            let pointer = format!("/{}", path.replace('.', "/"));
            object
                .pointer(&pointer)
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
        };
        let label = |key: &str| {
            object
                .pointer("/metadata/labels")
                .and_then(|l| l.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        self.fields
            .iter()
            .all(|r| satisfied(r, |k| Some(field(k).unwrap_or_default())))
            && self.labels.iter().all(|r| satisfied(r, label))
    }
}

/// The fields a LIST or WATCH of `kind` may select by (each resource's `ToSelectableFields`
/// in the API server; a custom resource has only the two metadata ones).
fn selectable_fields(kind: &ResourceKind) -> &'static [&'static str] {
    match (kind.group.as_str(), kind.resource.as_str()) {
        ("", "pods") => &[
            "metadata.name",
            "metadata.namespace",
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        ("batch", "jobs") => &["metadata.name", "metadata.namespace", "status.successful"],
        ("", "nodes") => &["metadata.name", "spec.unschedulable"],
        ("", "namespaces") => &["metadata.name", "status.phase"],
        ("", "secrets") => &["metadata.name", "metadata.namespace", "type"],
        ("certificates.k8s.io", "certificatesigningrequests") => {
            &["metadata.name", "spec.signerName"]
        }
        _ => &["metadata.name", "metadata.namespace"],
    }
}

fn satisfied(requirement: &Requirement, lookup: impl Fn(&str) -> Option<String>) -> bool {
    match requirement {
        Requirement::Equals(k, v) => lookup(k).as_deref() == Some(v.as_str()),
        Requirement::NotEquals(k, v) => lookup(k).as_deref() != Some(v.as_str()),
        Requirement::Exists(k) => lookup(k).is_some(),
        Requirement::NotExists(k) => lookup(k).is_none(),
    }
}

fn parse(raw: &str, labels: bool) -> Result<Vec<Requirement>, ApiError> {
    let mut requirements = Vec::new();
    for term in raw.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let requirement = if let Some((k, v)) = term.split_once("!=") {
            Requirement::NotEquals(k.trim().to_owned(), v.trim().to_owned())
        } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
            Requirement::Equals(k.trim().to_owned(), v.trim().to_owned())
        } else if labels && !term.contains(' ') {
            match term.strip_prefix('!') {
                Some(k) => Requirement::NotExists(k.to_owned()),
                None => Requirement::Exists(term.to_owned()),
            }
        } else {
            let which = if labels { "label" } else { "field" };
            return Err(ApiError::bad_request(format!(
                "unable to parse requirement: unsupported {which} selector {term:?}"
            )));
        };
        requirements.push(requirement);
    }
    Ok(requirements)
}

/// Serialises one page of a LIST directly into bytes (no intermediate `Value` of the whole list).
/// Items of a built-in resource carry no `apiVersion`/`kind` (the list names them once, as the
/// real server's typed lists do); items of a custom resource keep theirs (measured on v1.36).
pub fn list_body(
    store: &Store,
    kind: &ResourceKind,
    namespace: Option<&str>,
    query: &Query,
) -> Result<Vec<u8>, ApiError> {
    let selector = Selector::from_query(query, kind)?;
    let limit = match query.get("limit") {
        Some(raw) => Some(raw.parse::<usize>().map_err(|_| {
            ApiError::bad_request(format!("strconv.ParseInt: parsing {raw:?}: invalid syntax"))
        })?),
        None => None,
    };
    let collection = Collection::new(&kind.group, &kind.resource);
    let page = store
        .page(
            &collection,
            namespace,
            &|o| selector.matches(o),
            limit,
            query.get("continue"),
        )
        .map_err(ApiError::bad_request)?;
    let mut metadata = serde_json::Map::new();
    metadata.insert(
        "resourceVersion".into(),
        Value::String(store.resource_version().to_string()),
    );
    if let Some(token) = page.continue_token {
        metadata.insert("continue".into(), Value::String(token));
        if let (Some(remaining), true) = (page.remaining, selector.is_empty()) {
            metadata.insert("remainingItemCount".into(), Value::from(remaining));
        }
    }
    let head = serde_json::json!({"kind": format!("{}List", kind.kind), "apiVersion": kind.api_version(), "metadata": metadata});
    let mut body = serde_json::to_vec(&head).map_err(|e| ApiError::internal(&e.to_string()))?;
    body.pop(); // the closing brace; items follow
    body.extend_from_slice(b",\"items\":[");
    for (i, item) in page.items.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        let written = if kind.is_builtin() {
            serde_json::to_writer(&mut body, &WithoutTypeMeta(item))
        } else {
            serde_json::to_writer(&mut body, item)
        };
        written.map_err(|e| ApiError::internal(&e.to_string()))?;
    }
    body.extend_from_slice(b"]}");
    Ok(body)
}

/// An object serialised without its `apiVersion` and `kind` (no copy).
struct WithoutTypeMeta<'a>(&'a Value);

impl serde::Serialize for WithoutTypeMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Value::Object(map) = self.0 else {
            return self.0.serialize(serializer);
        };
        let mut out = serializer.serialize_map(None)?;
        for (key, value) in map {
            if key != "apiVersion" && key != "kind" {
                out.serialize_entry(key, value)?;
            }
        }
        out.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn query(raw: &str) -> Query {
        Query::parse(Some(raw))
    }

    fn pods() -> ResourceKind {
        ResourceKind::lookup("", "v1", "pods")
    }

    #[test]
    fn field_selector_on_metadata_name() {
        let selector =
            Selector::from_query(&query("fieldSelector=metadata.name%3Dp1"), &pods()).unwrap();
        assert!(selector.matches(&json!({"metadata": {"name": "p1"}})));
        assert!(!selector.matches(&json!({"metadata": {"name": "p2"}})));
    }

    #[test]
    fn label_selector_equality_inequality_and_existence() {
        let selector =
            Selector::from_query(&query("labelSelector=app%3Dx,tier!%3Ddb,team"), &pods()).unwrap();
        assert!(selector.matches(&json!({"metadata": {"labels": {"app": "x", "team": "t"}}})));
        assert!(
            !selector
                .matches(&json!({"metadata": {"labels": {"app": "x", "tier": "db", "team": "t"}}}))
        );
        assert!(!selector.matches(&json!({"metadata": {"labels": {"app": "x"}}})));
    }

    #[test]
    fn set_based_selectors_are_rejected() {
        assert!(Selector::from_query(&query("labelSelector=app%20in%20(a,b)"), &pods()).is_err());
    }

    #[test]
    fn fields_a_resource_cannot_be_selected_by_are_a_400() {
        let error =
            Selector::from_query(&query("fieldSelector=metadata.labels%3Dx"), &pods()).unwrap_err();
        assert_eq!(error.code(), 400);
        assert_eq!(
            error.body.message(),
            "field label not supported: metadata.labels"
        );
        assert!(
            Selector::from_query(&query("fieldSelector=status.phase%3DRunning"), &pods()).is_ok()
        );
        let leases = ResourceKind::lookup("coordination.k8s.io", "v1", "leases");
        assert!(
            Selector::from_query(&query("fieldSelector=status.phase%3DRunning"), &leases).is_err()
        );
    }

    #[test]
    fn list_body_is_valid_json_with_items() {
        let mut store = Store::default();
        let kind = ResourceKind::lookup("", "v1", "nodes");
        let nodes = Collection::new("", "nodes");
        store.commit(
            &nodes,
            (String::new(), "n1".into()),
            super::super::store::EventType::Added,
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
        );
        let body: Value =
            serde_json::from_slice(&list_body(&store, &kind, None, &Query::default()).unwrap())
                .unwrap();
        assert_eq!(body["kind"], "NodeList");
        assert_eq!(body["items"][0]["metadata"]["name"], "n1");
        assert_eq!(body["items"][0].get("kind"), None);
    }
}
