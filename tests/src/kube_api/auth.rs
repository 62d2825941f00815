//! Bearer-token authentication and the 403 bodies RBAC denials produce.

use http::{HeaderMap, Method, header};
use k8s_openapi::api::rbac::v1::PolicyRule;

use super::request::{Query, ResourceRequest};
use super::status::{ApiError, Details, Target};

/// The user every unauthenticated request runs as.
pub const ANONYMOUS: &str = "system:anonymous";

/// Who sent a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// The valid token's user.
    User(String),
    /// No `Authorization` header.
    Anonymous,
}

impl Identity {
    /// The user name RBAC messages show.
    pub fn name(&self) -> &str {
        match self {
            Identity::User(name) => name,
            Identity::Anonymous => ANONYMOUS,
        }
    }
}

/// Checks the bearer token: one `users` knows authenticates as its user, none is anonymous,
/// anything else is a 401.
pub fn authenticate(
    headers: &HeaderMap,
    users: impl Fn(&str) -> Option<String>,
) -> Result<Identity, ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(Identity::Anonymous);
    };
    let presented = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match presented.and_then(users) {
        Some(user) => Ok(Identity::User(user)),
        None => Err(ApiError::unauthorized()),
    }
}

/// Whether one of `rules` allows `verb` on the request's resource, as RBAC decides it.
pub fn allowed(rules: &[PolicyRule], request: &ResourceRequest, verb: &str) -> bool {
    let resource = request.rbac_resource();
    let matches = |list: &[String], value: &str| list.iter().any(|v| v == "*" || v == value);
    rules.iter().any(|rule| {
        let names = rule.resource_names.as_deref().unwrap_or_default();
        let named = match (&request.name, names.is_empty()) {
            (_, true) => true,
            (Some(name), false) => {
                !matches!(verb, "list" | "watch" | "create") && names.contains(name)
            }
            (None, false) => false,
        };
        matches(
            rule.api_groups.as_deref().unwrap_or_default(),
            &request.group,
        ) && matches(rule.resources.as_deref().unwrap_or_default(), &resource)
            && matches(&rule.verbs, verb)
            && named
    })
}

/// The 403 a real server sends when `user` may not do this request.
pub fn forbidden(identity: &Identity, method: &Method, path: &str, query: &Query) -> ApiError {
    match ResourceRequest::parse(path) {
        Some(request) => {
            let verb = request.verb(method, query);
            let mut target = request.target();
            if verb == "list" || verb == "watch" {
                // As the API server's RequestInfo: a list or watch narrowed to one name by the
                // field selector names that object (in the message and the details).
                target.name = query.get("fieldSelector").and_then(exact_name);
            }
            ApiError::forbidden(
                &target,
                identity.name(),
                verb,
                &request.rbac_resource(),
                request.namespace.as_deref(),
            )
        }
        None => non_resource_forbidden(identity, method, path),
    }
}

/// The name a field selector requires exactly (`metadata.name=x` or `==`), if any.
fn exact_name(selector: &str) -> Option<String> {
    selector.split(',').find_map(|term| {
        let (key, value) = term.split_once("==").or_else(|| term.split_once('='))?;
        (key.trim() == "metadata.name" && !key.ends_with('!')).then(|| value.trim().to_owned())
    })
}

fn non_resource_forbidden(identity: &Identity, method: &Method, path: &str) -> ApiError {
    let verb = method.as_str().to_lowercase();
    let mut error = ApiError::forbidden(&Target::default(), identity.name(), &verb, "", None);
    error.body = Box::new(error.body.with_message(
        format!(
            "forbidden: User {:?} cannot {verb} path {path:?}",
            identity.name()
        ),
        Details::default(),
    ));
    error
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(value: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(value) = value {
            headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    fn users(token: &str) -> Option<String> {
        (token == "t").then(|| "u".to_owned())
    }

    #[test]
    fn the_right_token_authenticates_a_wrong_one_is_401_none_is_anonymous() {
        assert_eq!(
            authenticate(&headers(Some("Bearer t")), users).unwrap(),
            Identity::User("u".into())
        );
        assert_eq!(
            authenticate(&headers(Some("Bearer x")), users)
                .unwrap_err()
                .code(),
            401
        );
        assert_eq!(
            authenticate(&headers(None), users).unwrap(),
            Identity::Anonymous
        );
    }

    fn rule(groups: &[&str], resources: &[&str], verbs: &[&str], names: &[&str]) -> PolicyRule {
        let own = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        PolicyRule {
            api_groups: Some(own(groups)),
            resources: Some(own(resources)),
            verbs: own(verbs),
            resource_names: (!names.is_empty()).then(|| own(names)),
            ..PolicyRule::default()
        }
    }

    #[test]
    fn rules_allow_by_group_resource_subresource_verb_and_name() {
        let rules = [
            rule(&["batch"], &["jobs/status"], &["get", "patch"], &[]),
            rule(&[""], &["pods"], &["get", "list", "watch"], &[]),
            rule(&["coordination.k8s.io"], &["leases"], &["*"], &["l1"]),
        ];
        let allows = |path: &str, method: Method, query: &str| {
            let request = ResourceRequest::parse(path).unwrap();
            let verb = request.verb(&method, &Query::parse(Some(query)));
            allowed(&rules, &request, verb)
        };
        assert!(allows(
            "/apis/batch/v1/namespaces/n/jobs/j/status",
            Method::PATCH,
            ""
        ));
        assert!(!allows(
            "/apis/batch/v1/namespaces/n/jobs/j",
            Method::GET,
            ""
        ));
        assert!(!allows(
            "/apis/batch/v1/namespaces/n/jobs/j/status",
            Method::PUT,
            ""
        ));
        assert!(allows(
            "/api/v1/namespaces/n/pods",
            Method::GET,
            "watch=true"
        ));
        assert!(!allows(
            "/api/v1/namespaces/n/pods/p/status",
            Method::PATCH,
            ""
        ));
        assert!(allows(
            "/apis/coordination.k8s.io/v1/namespaces/n/leases/l1",
            Method::PUT,
            ""
        ));
        assert!(!allows(
            "/apis/coordination.k8s.io/v1/namespaces/n/leases/l2",
            Method::PUT,
            ""
        ));
        assert!(!allows(
            "/apis/coordination.k8s.io/v1/namespaces/n/leases",
            Method::POST,
            ""
        ));
    }

    #[test]
    fn list_denials_have_no_name() {
        let error = forbidden(
            &Identity::User("u".into()),
            &Method::GET,
            "/apis/batch/v1/namespaces/n/jobs",
            &Query::default(),
        );
        assert_eq!(
            error.body.message(),
            "jobs.batch is forbidden: User \"u\" cannot list resource \"jobs\" in API group \"batch\" in the namespace \"n\""
        );
    }

    #[test]
    fn list_and_watch_denials_by_field_selector_name_the_object() {
        let error = forbidden(
            &Identity::User("u".into()),
            &Method::GET,
            "/api/v1/namespaces/n/pods",
            &Query::parse(Some("watch=true&fieldSelector=metadata.name%3Dp1")),
        );
        assert_eq!(
            error.body.message(),
            "pods \"p1\" is forbidden: User \"u\" cannot watch resource \"pods\" in API group \"\" in the namespace \"n\""
        );
        assert_eq!(exact_name("metadata.name!=p"), None);
        assert_eq!(
            exact_name("status.phase=Running,metadata.name==p"),
            Some("p".into())
        );
    }

    #[test]
    fn cluster_scoped_denials_say_cluster_scope() {
        let error = forbidden(
            &Identity::Anonymous,
            &Method::GET,
            "/api/v1/nodes",
            &Query::default(),
        );
        assert_eq!(
            error.body.message(),
            "nodes is forbidden: User \"system:anonymous\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
        );
    }
}
