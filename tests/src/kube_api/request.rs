//! What a request is about, parsed from its path like the API server's `RequestInfo`.

use std::collections::HashMap;

use http::Method;

use super::status::Target;

/// The resource a request addresses, e.g. `PATCH /apis/batch/v1/namespaces/a/jobs/b/status`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceRequest {
    /// API group, `""` for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    pub namespace: Option<String>,
    /// Plural resource name, e.g. `jobs`.
    pub resource: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

impl ResourceRequest {
    /// Parses `/api/v1/...` and `/apis/{group}/{version}/...`; `None` for anything else.
    pub fn parse(path: &str) -> Option<Self> {
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (group, version, rest) = match parts.as_slice() {
            ["api", version, rest @ ..] => ("", *version, rest),
            ["apis", group, version, rest @ ..] => (*group, *version, rest),
            _ => return None,
        };
        let (namespace, rest) = match rest {
            ["namespaces", ns, rest @ ..] if !rest.is_empty() => (Some((*ns).to_owned()), rest),
            _ => (None, rest),
        };
        let (resource, name, subresource) = match rest {
            [resource] => (*resource, None, None),
            [resource, name] => (*resource, Some(*name), None),
            [resource, name, sub] => (*resource, Some(*name), Some(*sub)),
            _ => return None,
        };
        if resource.is_empty() || name.is_some_and(str::is_empty) {
            return None;
        }
        Some(ResourceRequest {
            group: group.to_owned(),
            version: version.to_owned(),
            namespace,
            resource: resource.to_owned(),
            name: name.map(str::to_owned),
            subresource: subresource.map(str::to_owned),
        })
    }

    /// The RBAC verb: get, list, watch, create, update, patch, delete, deletecollection.
    pub fn verb(&self, method: &Method, query: &Query) -> &'static str {
        let named = self.name.is_some();
        match *method {
            Method::GET | Method::HEAD if query.is_watch() => "watch",
            Method::GET | Method::HEAD if named => "get",
            Method::GET | Method::HEAD => "list",
            Method::POST => "create",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE if named => "delete",
            Method::DELETE => "deletecollection",
            _ => "unknown",
        }
    }

    /// `jobs/status` or `jobs`, as RBAC names it.
    pub fn rbac_resource(&self) -> String {
        match &self.subresource {
            Some(sub) => format!("{}/{sub}", self.resource),
            None => self.resource.clone(),
        }
    }

    /// The target for `Status` messages and details.
    pub fn target(&self) -> Target {
        Target {
            group: self.group.clone(),
            resource: self.resource.clone(),
            name: self.name.clone(),
        }
    }
}

/// `(group, version)` from `/api/v1` or `/apis/g/v`.
pub fn split_api_prefix(prefix: &str) -> Option<(String, String)> {
    match prefix
        .trim_matches('/')
        .split('/')
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["api", version] => Some((String::new(), (*version).to_owned())),
        ["apis", group, version] => Some(((*group).to_owned(), (*version).to_owned())),
        _ => None,
    }
}

/// Decoded query parameters.
#[derive(Debug, Clone, Default)]
pub struct Query(HashMap<String, String>);

impl Query {
    /// Parses `a=b&c=d` with percent-decoding.
    pub fn parse(raw: Option<&str>) -> Self {
        let uri = format!("/?{}", raw.unwrap_or(""));
        let parsed = uri.parse::<http::Uri>().ok().and_then(|uri| {
            axum::extract::Query::<HashMap<String, String>>::try_from_uri(&uri).ok()
        });
        Query(parsed.map(|q| q.0).unwrap_or_default())
    }

    /// A parameter's value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// `watch=true` or `watch=1`.
    pub fn is_watch(&self) -> bool {
        matches!(self.get("watch"), Some("true" | "1"))
    }

    /// A boolean flag (`true`/`1`).
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_namespaced_subresource() {
        let r = ResourceRequest::parse("/apis/batch/v1/namespaces/a/jobs/b/status").unwrap();
        assert_eq!(r.group, "batch");
        assert_eq!(r.namespace.as_deref(), Some("a"));
        assert_eq!(r.name.as_deref(), Some("b"));
        assert_eq!(r.rbac_resource(), "jobs/status");
    }

    #[test]
    fn parses_cluster_scoped_core_lists() {
        let r = ResourceRequest::parse("/api/v1/nodes").unwrap();
        assert_eq!(
            (r.group.as_str(), r.resource.as_str(), r.name.clone()),
            ("", "nodes", None)
        );
        assert_eq!(r.namespace, None);
    }

    #[test]
    fn rejects_paths_outside_the_api() {
        assert_eq!(ResourceRequest::parse("/healthz"), None);
        assert_eq!(ResourceRequest::parse("/api/v1/a/b/c/d"), None);
    }

    #[test]
    fn verb_follows_method_name_and_watch() {
        let r = ResourceRequest::parse("/api/v1/namespaces/a/pods").unwrap();
        assert_eq!(
            r.verb(&Method::GET, &Query::parse(Some("watch=1"))),
            "watch"
        );
        assert_eq!(r.verb(&Method::GET, &Query::default()), "list");
    }
}
