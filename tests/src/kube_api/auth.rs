//! Bearer-token authentication and the 403 bodies RBAC denials produce.

use http::{HeaderMap, Method, header};

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

/// The 403 a real server sends when `user` may not do this request.
pub fn forbidden(identity: &Identity, method: &Method, path: &str, query: &Query) -> ApiError {
    match ResourceRequest::parse(path) {
        Some(request) => {
            let verb = request.verb(method, query);
            let mut target = request.target();
            if verb == "list" || verb == "watch" {
                target.name = None;
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
