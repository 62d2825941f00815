//! `Status` bodies exactly as the real API server writes them (field order included).

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use serde::Serialize;
use serde_json::Value;

/// A `meta/v1 Status` object; serialized in the server's field order.
#[derive(Debug, Clone, Serialize)]
pub struct StatusBody {
    kind: &'static str,
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    metadata: serde_json::Map<String, Value>,
    status: &'static str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<Details>,
    code: u16,
}

/// `Status.details`; every field is optional, so `{}` is possible.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Details {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<Cause>,
    #[serde(rename = "retryAfterSeconds", skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u32>,
}

/// One `Status.details.causes` entry.
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// What identifies the object a `Status` talks about: `jobs.batch "name"`.
#[derive(Debug, Clone, Default)]
pub struct Target {
    pub group: String,
    pub resource: String,
    pub name: Option<String>,
}

impl Target {
    /// `jobs.batch`, or just `pods` for the core group.
    pub fn qualified_resource(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }

    /// `jobs.batch "name"`, or `jobs.batch` for a collection.
    pub fn described(&self) -> String {
        match &self.name {
            Some(name) => format!("{} {name:?}", self.qualified_resource()),
            None => self.qualified_resource(),
        }
    }

    fn details(&self) -> Details {
        Details {
            name: self.name.clone(),
            group: (!self.group.is_empty()).then(|| self.group.clone()),
            kind: Some(self.resource.clone()),
            ..Details::default()
        }
    }
}

/// An error answer: HTTP status, `Status` body and extra headers.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub body: Box<StatusBody>,
    pub retry_after: Option<u32>,
}

impl StatusBody {
    fn failure(
        code: u16,
        message: String,
        reason: Option<&'static str>,
        details: Option<Details>,
    ) -> Self {
        StatusBody {
            kind: "Status",
            api_version: "v1",
            metadata: serde_json::Map::new(),
            status: "Failure",
            message,
            reason,
            details,
            code,
        }
    }

    /// The human-readable message.
    #[cfg(test)]
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same failure with another message and details.
    pub fn with_message(mut self, message: String, details: Details) -> Self {
        self.message = message;
        self.details = Some(details);
        self
    }
}

impl ApiError {
    fn new(
        code: u16,
        message: String,
        reason: Option<&'static str>,
        details: Option<Details>,
    ) -> Self {
        ApiError {
            body: Box::new(StatusBody::failure(code, message, reason, details)),
            retry_after: None,
        }
    }

    /// 404 for a named object: `jobs.batch "x" not found`.
    pub fn not_found(target: &Target) -> Self {
        if target.name.is_none() {
            return Self::route_not_found();
        }
        Self::new(
            404,
            format!("{} not found", target.described()),
            Some("NotFound"),
            Some(target.details()),
        )
    }

    /// 404 for a path the server does not serve.
    pub fn route_not_found() -> Self {
        Self::new(
            404,
            "the server could not find the requested resource".to_owned(),
            Some("NotFound"),
            Some(Details::default()),
        )
    }

    /// 409 `AlreadyExists` on create.
    pub fn already_exists(target: &Target) -> Self {
        Self::new(
            409,
            format!("{} already exists", target.described()),
            Some("AlreadyExists"),
            Some(target.details()),
        )
    }

    /// 409 for a stale `metadata.resourceVersion`.
    pub fn conflict(target: &Target) -> Self {
        let message = format!(
            "Operation cannot be fulfilled on {}: the object has been modified; please apply your changes to the latest version and try again",
            target.described()
        );
        Self::new(409, message, Some("Conflict"), Some(target.details()))
    }

    /// 401 for an unknown bearer token.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized".to_owned(), Some("Unauthorized"), None)
    }

    /// 403 RBAC denial, worded from the request.
    pub fn forbidden(
        target: &Target,
        user: &str,
        verb: &str,
        resource: &str,
        namespace: Option<&str>,
    ) -> Self {
        let scope = match namespace {
            Some(ns) => format!("in the namespace {ns:?}"),
            None => "at the cluster scope".to_owned(),
        };
        let message = format!(
            "{} is forbidden: User {user:?} cannot {verb} resource {resource:?} in API group {:?} {scope}",
            target.described(),
            target.group
        );
        Self::new(403, message, Some("Forbidden"), Some(target.details()))
    }

    /// 429 with `Retry-After: 1`.
    pub fn too_many_requests() -> Self {
        let details = Details {
            retry_after_seconds: Some(1),
            ..Details::default()
        };
        let mut error = Self::new(
            429,
            "Too many requests, please try again later.".to_owned(),
            Some("TooManyRequests"),
            Some(details),
        );
        error.retry_after = Some(1);
        error
    }

    /// 500 `InternalError` wrapping a cause.
    pub fn internal(cause: &str) -> Self {
        let details = Details {
            causes: vec![Cause {
                reason: None,
                message: cause.to_owned(),
                field: None,
            }],
            ..Details::default()
        };
        Self::new(
            500,
            format!("Internal error occurred: {cause}"),
            Some("InternalError"),
            Some(details),
        )
    }

    /// 500 without reason or details, as the server answers for storage/merge failures.
    pub fn bare_500(message: String) -> Self {
        Self::new(500, message, None, None)
    }

    /// 503 `ServiceUnavailable`.
    pub fn service_unavailable() -> Self {
        Self::new(
            503,
            "the server is currently unable to handle the request".to_owned(),
            Some("ServiceUnavailable"),
            None,
        )
    }

    /// The generic 422 a failed JSON-patch answers with.
    pub fn generic_invalid() -> Self {
        Self::new(
            422,
            "the server rejected our request due to an error in our request".to_owned(),
            Some("Invalid"),
            Some(Details::default()),
        )
    }

    /// 422 `Job.batch "b" is invalid: [...]` from field errors.
    pub fn invalid(
        kind_group: &str,
        name: &str,
        group: &str,
        kind: &str,
        errors: &[FieldError],
    ) -> Self {
        let mut messages: Vec<String> = Vec::new();
        for error in errors {
            let text = error.to_string();
            if !messages.contains(&text) {
                messages.push(text);
            }
        }
        let joined = match messages.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let details = Details {
            name: Some(name.to_owned()),
            group: (!group.is_empty()).then(|| group.to_owned()),
            kind: Some(kind.to_owned()),
            causes: errors.iter().map(FieldError::cause).collect(),
            retry_after_seconds: None,
        };
        Self::new(
            422,
            format!("{kind_group} {name:?} is invalid: {joined}"),
            Some("Invalid"),
            Some(details),
        )
    }

    /// 422 for a patch that could not be decoded into the object (e.g. a bad time).
    pub fn invalid_patch(patched: &Value, problem: &str) -> Self {
        let shown = serde_json::to_string(&patched.to_string()).unwrap_or_default();
        let error = FieldError::invalid("patch", Some(shown), problem);
        let details = Details {
            causes: vec![error.cause()],
            ..Details::default()
        };
        Self::new(
            422,
            format!(" \"\" is invalid: {error}"),
            Some("Invalid"),
            Some(details),
        )
    }

    /// 422 for unknown fields under `?fieldValidation=Strict`; the body is shown as Go prints it.
    pub fn strict_decoding(sent: &Value, problem: &str) -> Self {
        let shown = format!("{:?}", super::strategic_merge::go_format(sent));
        let error = FieldError::invalid(
            "patch",
            Some(shown),
            &format!("strict decoding error: {problem}"),
        );
        let details = Details {
            causes: vec![error.cause()],
            ..Details::default()
        };
        Self::new(
            422,
            format!(" \"\" is invalid: {error}"),
            Some("Invalid"),
            Some(details),
        )
    }

    /// 400 `BadRequest`.
    pub fn bad_request(message: String) -> Self {
        // Measured on v1.36: no 400 carries `details` (bad limit, selector, continue token,
        // body or patch that does not decode).
        Self::new(400, message, Some("BadRequest"), None)
    }

    /// 413 for bodies over 3 MiB.
    pub fn too_large() -> Self {
        Self::new(
            413,
            "Request entity too large: limit is 3145728".to_owned(),
            Some("RequestEntityTooLarge"),
            None,
        )
    }

    /// 415 for a PATCH with an unsupported content type.
    pub fn unsupported_media_type() -> Self {
        Self::new(
            415,
            "415: Unsupported Media Type".to_owned(),
            Some("UnsupportedMediaType"),
            Some(Details::default()),
        )
    }

    /// 405 for a verb a route does not support.
    pub fn method_not_allowed(method: &str) -> Self {
        Self::new(
            405,
            format!("the server does not allow this method on the requested resource ({method})"),
            Some("MethodNotAllowed"),
            Some(Details::default()),
        )
    }

    /// 410 for a watch from a resourceVersion older than the kept history.
    pub fn expired(requested: u64, oldest: u64) -> Self {
        Self::new(
            410,
            format!("too old resource version: {requested} ({oldest})"),
            Some("Expired"),
            None,
        )
    }

    /// Any other code, used by injected faults.
    pub fn other(code: u16) -> Self {
        let reason = StatusCode::from_u16(code)
            .ok()
            .and_then(|c| c.canonical_reason())
            .unwrap_or("Unknown");
        Self::new(code, reason.to_owned(), None, None)
    }

    /// The HTTP status code.
    #[cfg(test)]
    pub fn code(&self) -> u16 {
        self.body.code
    }

    /// The body as JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(&self.body).unwrap_or(Value::Null)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code =
            StatusCode::from_u16(self.body.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self.body).unwrap_or_default();
        let mut response =
            (code, [(header::CONTENT_TYPE, "application/json")], body).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// One validation failure, like apimachinery's `field.Error`.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    field: String,
    kind: FieldErrorKind,
    /// The offending value already formatted (`"x"`, `1`), if shown.
    value: Option<String>,
    detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum FieldErrorKind {
    Invalid,
    Required,
}

impl FieldError {
    /// `field: Invalid value: VALUE: detail` (VALUE omitted when `None`).
    pub fn invalid(field: &str, value: Option<String>, detail: &str) -> Self {
        FieldError {
            field: field.to_owned(),
            kind: FieldErrorKind::Invalid,
            value,
            detail: detail.to_owned(),
        }
    }

    /// `field: Required value: detail`.
    pub fn required(field: &str, detail: &str) -> Self {
        FieldError {
            field: field.to_owned(),
            kind: FieldErrorKind::Required,
            value: None,
            detail: detail.to_owned(),
        }
    }

    fn body(&self) -> String {
        match (self.kind, &self.value) {
            (FieldErrorKind::Invalid, Some(value)) => {
                format!("Invalid value: {value}: {}", self.detail)
            }
            (FieldErrorKind::Invalid, None) => format!("Invalid value: {}", self.detail),
            // The server's `field.Required(path, "")` has no detail and no colon.
            (FieldErrorKind::Required, _) if self.detail.is_empty() => "Required value".to_owned(),
            (FieldErrorKind::Required, _) => format!("Required value: {}", self.detail),
        }
    }

    fn cause(&self) -> Cause {
        let reason = match self.kind {
            FieldErrorKind::Invalid => "FieldValueInvalid",
            FieldErrorKind::Required => "FieldValueRequired",
        };
        Cause {
            reason: Some(reason),
            message: self.body(),
            field: Some(self.field.clone()),
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: &str) -> Target {
        Target {
            group: "batch".into(),
            resource: "jobs".into(),
            name: Some(name.into()),
        }
    }

    #[test]
    fn not_found_body_matches_the_real_server() {
        let body = serde_json::to_string(&ApiError::not_found(&job("nope")).body).unwrap();
        assert_eq!(
            body,
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"jobs.batch \"nope\" not found","reason":"NotFound","details":{"name":"nope","group":"batch","kind":"jobs"},"code":404}"#
        );
    }

    #[test]
    fn forbidden_body_names_verb_resource_group_and_namespace() {
        let error = ApiError::forbidden(
            &job("e"),
            "job-status-patcher",
            "get",
            "jobs/status",
            Some("exp-e"),
        );
        assert_eq!(
            serde_json::to_string(&error.body).unwrap(),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"jobs.batch \"e\" is forbidden: User \"job-status-patcher\" cannot get resource \"jobs/status\" in API group \"batch\" in the namespace \"exp-e\"","reason":"Forbidden","details":{"name":"e","group":"batch","kind":"jobs"},"code":403}"#
        );
    }

    #[test]
    fn invalid_deduplicates_messages_but_keeps_every_cause() {
        let error = FieldError::invalid("metadata.uid", Some("\"u\"".into()), "field is immutable");
        let api = ApiError::invalid("Job.batch", "d", "batch", "Job", &[error.clone(), error]);
        assert_eq!(
            api.body.message,
            "Job.batch \"d\" is invalid: metadata.uid: Invalid value: \"u\": field is immutable"
        );
        assert_eq!(
            api.to_json()["details"]["causes"].as_array().unwrap().len(),
            2
        );
    }
}
