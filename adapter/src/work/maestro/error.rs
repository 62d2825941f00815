//! Turning Maestro's error texts (`maestro-<n>: <reason>`, protocol §3.7, §4.6) into [`WorkError`] kinds.

use crate::work::WorkError;

/// [`WorkError::Config`] saying `message`: a setting, a file or a URL that retrying will not fix.
pub(crate) fn misconfigured(message: impl Into<String>) -> WorkError {
    WorkError::Config {
        message: message.into(),
    }
}

/// [`WorkError::Invalid`] saying `message`: a request refused (here or by the server).
pub(crate) fn invalid(message: impl Into<String>) -> WorkError {
    WorkError::Invalid {
        message: message.into(),
    }
}

/// [`WorkError::Protocol`] saying `message`: an answer this client cannot decode.
pub(crate) fn protocol(message: impl Into<String>) -> WorkError {
    WorkError::Protocol {
        message: message.into(),
    }
}

/// [`WorkError::Unavailable`] saying `message`: a failure worth retrying.
pub(crate) fn unavailable(message: impl Into<String>) -> WorkError {
    WorkError::Unavailable {
        message: message.into(),
    }
}

/// Extracts the numeric code of the first `maestro-<n>` in `text`.
pub fn maestro_code(text: &str) -> Option<u32> {
    let (_, rest) = text.split_once("maestro-")?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// Classifies a server error message (gRPC status message or REST `code`+`reason`) by its text.
/// Returns `None` when the text carries no recognisable marker.
pub fn classify_message(message: &str) -> Option<WorkError> {
    let m = message.to_owned();
    let lower = message.to_ascii_lowercase();
    if lower.contains("fk_resources_consumers") || lower.contains("violates foreign key constraint")
    {
        return Some(WorkError::ConsumerNotFound { message: m });
    }
    if lower.contains("token not authenticated")
        || lower.contains("invalid token")
        || lower == "missing metadata"
    {
        return Some(WorkError::Unauthenticated { message: m });
    }
    if lower.contains("unauthorized to publish") || lower.contains("unauthorized to subscribe") {
        return Some(WorkError::Forbidden { message: m });
    }
    let kind = match maestro_code(message)? {
        6 if lower.contains("already exists") => WorkError::AlreadyExists { message: m },
        6 => WorkError::Conflict { message: m },
        7 | 404 => WorkError::NotFound { message: m },
        8 | 17 | 21 | 23 => WorkError::Invalid { message: m },
        1 | 15 => WorkError::Unauthenticated { message: m },
        4 | 11 => WorkError::Forbidden { message: m },
        26 => WorkError::Unavailable { message: m },
        _ => WorkError::Internal { message: m },
    };
    Some(kind)
}

/// TLS handshake failures that retrying will not fix: the server's certificate is not trusted (wrong CA file),
/// or the server rejected our client certificate.
fn classify_tls(message: &str) -> Option<WorkError> {
    let m = message.to_owned();
    if message.contains("invalid peer certificate") {
        return Some(misconfigured(format!(
            "TLS: server certificate not trusted (check the CA file): {m}"
        )));
    }
    if [
        "BadCertificate",
        "CertificateRequired",
        "UnknownCA",
        "CertificateUnknown",
    ]
    .iter()
    .any(|alert| message.contains(&format!("received fatal alert: {alert}")))
    {
        return Some(WorkError::Unauthenticated {
            message: format!("TLS: client certificate rejected: {m}"),
        });
    }
    None
}

/// Maps a gRPC status (from Publish) to a [`WorkError`].
pub fn from_grpc_status(status: &tonic::Status) -> WorkError {
    use tonic::Code;
    let mut message = status.message().to_owned();
    // Transport failures keep their cause (e.g. a TLS alert) in the source chain, not in the message.
    if let Some(source) = std::error::Error::source(status) {
        let cause = error_chain(source);
        if !message.contains(&cause) {
            message = format!("{message}: {cause}");
        }
    }
    if let Some(tls) = classify_tls(&message) {
        return tls;
    }
    match status.code() {
        Code::Unknown if status.message() == "transport error" => {
            WorkError::Unavailable { message }
        }
        Code::Unavailable
        | Code::DeadlineExceeded
        | Code::Cancelled
        | Code::ResourceExhausted
        | Code::Aborted => unavailable(format!("{:?}: {message}", status.code())),
        Code::Unauthenticated => WorkError::Unauthenticated { message },
        Code::PermissionDenied => WorkError::Forbidden { message },
        Code::InvalidArgument if message == "missing metadata" => {
            WorkError::Unauthenticated { message }
        }
        code => classify_message(&message).unwrap_or(match code {
            Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => {
                WorkError::Invalid { message }
            }
            Code::NotFound => WorkError::NotFound { message },
            Code::AlreadyExists => WorkError::AlreadyExists { message },
            _ => WorkError::Internal { message },
        }),
    }
}

/// What rustls says when the peer answered a TLS ClientHello with something that is not TLS.
const PLAINTEXT_PEER: &str = "received corrupt message of type InvalidContentType";
/// What hyper says when an HTTP/1.1 request gets an answer that is not HTTP/1.x (an HTTP/2-only
/// gRPC server, or a TLS server spoken to in plaintext); an HTTP/2 server's SETTINGS frame can
/// also arrive before the request went out (the second text).
const NOT_HTTP1: [&str; 2] = [
    "invalid HTTP version parsed",
    "received unexpected message from connection",
];

/// Wrong-endpoint failures that retrying will not fix, recognised in a transport message:
/// `setting` is the variable that holds `url`.
fn classify_endpoint(setting: &str, url: &str, message: &str) -> Option<WorkError> {
    (message.contains(PLAINTEXT_PEER) && url.starts_with("https://")).then(|| misconfigured(format!(
            "{setting} {url}: the TLS handshake failed because the server answered without TLS ({message}); use http:// for a plaintext server, or the server's TLS port"
        )))
}

/// Maps a failed gRPC call to `url` (`MAESTRO_GRPC_URL`): a server that answers but is not a gRPC
/// server, or plaintext where TLS was expected, is a configuration error naming the URL; other
/// failures as [`from_grpc_status`], transport failures with the URL added.
pub fn from_grpc_call(url: &str, status: &tonic::Status) -> WorkError {
    const SETTING: &str = "MAESTRO_GRPC_URL";
    let error = from_grpc_status(status);
    let message = error.message().to_owned();
    if let Some(e) = classify_endpoint(SETTING, url, &message) {
        return e;
    }
    // tonic, reading an HTTP/2 answer that is not gRPC (e.g. a REST server's JSON 404 body:
    // compression flag 123 = `{`), says one of these.
    if message.contains("invalid compression flag")
        || message.contains("grpc-status header missing")
    {
        return misconfigured(format!(
            "{SETTING} {url} answered, but not as a gRPC server ({message}). Expected the Maestro gRPC source endpoint (--grpc-server-bindport, 8090 by default; not the REST port, not the agent broker 8091)"
        ));
    }
    match error {
        WorkError::Unavailable { message } => {
            let hint = if url.starts_with("http://") && !message.contains("Connection refused") {
                "; if that server uses TLS, the URL must be https://"
            } else {
                ""
            };
            unavailable(format!("{SETTING} {url}: {message}{hint}"))
        }
        other => other,
    }
}

/// Maps a failed REST call to the Maestro REST API at `base` (`MAESTRO_API_URL`): transport
/// failures as [`from_reqwest`], except a server that does not speak HTTP/1.1 or plaintext where
/// TLS was expected, which are configuration errors naming the URL.
pub fn from_rest_transport(base: &str, err: &reqwest::Error) -> WorkError {
    const SETTING: &str = "MAESTRO_API_URL";
    let error = from_reqwest(err);
    let message = error.message().to_owned();
    if let Some(e) = classify_endpoint(SETTING, base, &message) {
        return e;
    }
    if NOT_HTTP1.iter().any(|m| message.contains(m)) {
        return misconfigured(format!(
            "{SETTING} {base}: the server does not answer HTTP/1.1 ({message}). Expected the Maestro REST API; a gRPC port (HTTP/2 only) or a TLS port called with http:// answers like this: check the port, and use https:// if the server has TLS"
        ));
    }
    error
}

/// Maps a non-success REST answer from `base` (`MAESTRO_API_URL`): a body that is a Kubernetes
/// `Status`, or a 404 whose body is not a Maestro error (`code: maestro-<n>`), means the URL is not
/// the Maestro REST API; everything else as [`from_rest_response`].
pub fn from_rest_answer(base: &str, status: u16, body: &str) -> WorkError {
    const SETTING: &str = "MAESTRO_API_URL";
    let value: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let field = |key: &str| value.as_ref()?.get(key)?.as_str();
    if field("kind") == Some("Status") && field("apiVersion") == Some("v1") {
        return misconfigured(format!(
            "{SETTING} {base} answered HTTP {status} like a Kubernetes API server (a v1 Status body: {}), not like Maestro. Expected the Maestro REST API",
            truncate(body, 512)
        ));
    }
    if status == 404 && !field("code").is_some_and(|c| c.starts_with("maestro-")) {
        return misconfigured(format!(
            "{SETTING} {base} answered HTTP 404 with a body that is not a Maestro error ({}). Expected the Maestro REST API, which answers a missing resource bundle with code maestro-7",
            truncate(body, 512)
        ));
    }
    from_rest_response(status, body)
}

/// Maps a non-success REST response (status and body text) to a [`WorkError`].
pub fn from_rest_response(status: u16, body: &str) -> WorkError {
    let message =
        rest_error_text(body).unwrap_or_else(|| format!("HTTP {status}: {}", truncate(body, 512)));
    match status {
        408 | 429 | 500.. => unavailable(format!("HTTP {status}: {message}")),
        403 if maestro_code(&message) == Some(1) => WorkError::Unauthenticated { message },
        400 | 422 => classify_message(&message)
            .filter(|e| matches!(e, WorkError::ConsumerNotFound { .. }))
            .unwrap_or(WorkError::Invalid { message }),
        401 | 403 | 404 | 409 => {
            let exists = message.to_ascii_lowercase().contains("already exists");
            from_http_status(status, exists, message)
        }
        // Absence is a 404's to say: a not-found code under any other status is an unexpected
        // answer, not "there is no such bundle" (on which a pulse would create one). Found by
        // fuzzing (`maestro_error`): HTTP 355 with a body naming maestro-7.
        _ => match classify_message(&message) {
            Some(WorkError::NotFound { .. }) => WorkError::Internal {
                message: format!("HTTP {status}: {message}"),
            },
            Some(e) => e,
            None => WorkError::Internal { message },
        },
    }
}

/// The [`WorkError`] kind an HTTP status names, alike for the Maestro REST API and a hub's API
/// server: `exists` tells a 409 that refused a create (the object exists) from a stale version.
pub fn from_http_status(status: u16, exists: bool, message: String) -> WorkError {
    match status {
        401 => WorkError::Unauthenticated { message },
        403 => WorkError::Forbidden { message },
        404 => WorkError::NotFound { message },
        409 if exists => WorkError::AlreadyExists { message },
        409 => WorkError::Conflict { message },
        400 | 422 => WorkError::Invalid { message },
        408 | 429 | 500.. => WorkError::Unavailable { message },
        _ => WorkError::Internal { message },
    }
}

/// Maps a transport failure of the REST client (connect, timeout, body read) to a [`WorkError`].
pub fn from_reqwest(err: &reqwest::Error) -> WorkError {
    let message = error_chain(err);
    if err.is_builder() {
        return WorkError::Config { message };
    }
    if err.is_decode() {
        return WorkError::Protocol { message };
    }
    classify_tls(&message).unwrap_or(WorkError::Unavailable { message })
}

/// `"<code>: <reason>"` from a Maestro REST error body (`{"kind":"Error","code":"maestro-7","reason":"..."}`).
fn rest_error_text(body: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let code = value.get("code")?.as_str()?;
    let reason = value
        .get("reason")
        .and_then(|r| r.as_str())
        .unwrap_or_default();
    Some(format!("{code}: {reason}"))
}

/// Display of an error and all its sources, joined by `: `.
pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let chain: Vec<String> = std::iter::successors(Some(err), |e| e.source())
        .map(ToString::to_string)
        .collect();
    chain.join(": ")
}

fn truncate(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::type_complexity)]
mod tests {
    use super::*;
    use tonic::{Code, Status};

    fn grpc(msg: &str) -> WorkError {
        from_grpc_status(&Status::new(Code::Unknown, msg))
    }

    /// Found by fuzzing (`fuzz/corpus/maestro_error`): a not-found code under a status other than
    /// 404 read as "no such bundle", which `rest::bundle_or_none` turns into `None` and a pulse
    /// into a create. Only a 404 says a bundle is absent; the rest is an unexpected answer.
    #[test]
    fn only_a_404_says_a_bundle_is_absent() {
        let base = "http://maestro:8000";
        let url =
            format!("{base}/api/maestro/v1/resource-bundles/a7e844fe-9524-5d24-9a33-34edcc1457de");
        let not_found = r#"{"kind":"Error","id":"7","href":"/api/maestro/v1/errors/7","code":"maestro-7","reason":"Resource with id='d7d' not found"}"#;
        let fuzzed = r#"conditions"maestro-7","href":"/api/maestro/v1/errors/7","id":"7","kind":"Error","reason":"Resource with id='d7d}"#;
        for (status, body) in [
            (355, not_found),
            (355, fuzzed),
            (302, not_found),
            (418, not_found),
        ] {
            let error = from_rest_answer(base, status, body);
            assert!(
                matches!(error, WorkError::Internal { .. }),
                "HTTP {status}: {error:?}"
            );
            assert!(
                error.message().contains(&status.to_string())
                    || error.message().contains("maestro-7")
            );
            let read = super::super::rest::bundle_or_none(base, &url, Err(error));
            assert!(read.is_err(), "HTTP {status} read as {read:?}");
        }
        let read = super::super::rest::bundle_or_none(
            base,
            &url,
            Err(from_rest_answer(base, 404, not_found)),
        );
        assert!(matches!(read, Ok(None)), "{read:?}");
    }

    #[test]
    fn publish_error_strings_map_to_kinds() {
        let cases: [(&str, fn(&WorkError) -> bool); 8] = [
            (
                "failed to create resource: maestro-6: This Resource already exists",
                |e| matches!(e, WorkError::AlreadyExists { .. }),
            ),
            (
                "failed to create resource: maestro-9: Unable to create Resource: ERROR: insert or update on table \"resources\" violates foreign key constraint \"fk_resources_consumers\" (SQLSTATE 23503)",
                |e| matches!(e, WorkError::ConsumerNotFound { .. }),
            ),
            (
                "failed to create resource: maestro-8: the manifest bundle in the resource is invalid, manifests: Required value",
                |e| matches!(e, WorkError::Invalid { .. }),
            ),
            (
                "failed to get resource: maestro-7: Resource with id='55c61e54-a3f6-563d-9fec-b1fe297bdfdb' not found",
                |e| matches!(e, WorkError::NotFound { .. }),
            ),
            (
                "failed to update resource: maestro-6: the resource is under deletion, id: 55c61e54",
                |e| matches!(e, WorkError::Conflict { .. }),
            ),
            (
                "failed to update resource: maestro-6: the resource version is not the latest, the latest version: 3",
                |e| matches!(e, WorkError::Conflict { .. }),
            ),
            ("token not authenticated", |e| {
                matches!(e, WorkError::Unauthenticated { .. })
            }),
            (
                "unauthorized to publish the event from source hyperfleet-adapter",
                |e| matches!(e, WorkError::Forbidden { .. }),
            ),
        ];
        for (msg, check) in cases {
            let err = grpc(msg);
            assert!(check(&err), "{msg} -> {err:?}");
            assert_eq!(err.message(), msg, "the server message is kept");
            assert!(!err.is_transient());
        }
    }

    #[test]
    fn interceptor_and_transport_codes() {
        let e = from_grpc_status(&Status::new(Code::Unauthenticated, "invalid token"));
        assert!(matches!(e, WorkError::Unauthenticated { .. }));
        let e = from_grpc_status(&Status::new(Code::InvalidArgument, "missing metadata"));
        assert!(matches!(e, WorkError::Unauthenticated { .. }));
        let e = from_grpc_status(&Status::new(Code::Unknown, "resource cannot be empty"));
        assert!(matches!(e, WorkError::Internal { .. }));
        for code in [Code::Unavailable, Code::DeadlineExceeded] {
            let e = from_grpc_status(&Status::new(code, "tcp connect error: Connection refused"));
            assert!(e.is_transient(), "{code:?}");
            assert!(e.message().contains("Connection refused"));
        }
        let e = grpc("failed to create resource: maestro-26: Database advisory lock error");
        assert!(e.is_transient());
        let e = grpc("unsupported action delete_everything");
        assert!(matches!(e, WorkError::Internal { .. }) && !e.is_transient());
    }

    #[test]
    fn rest_error_bodies_map_to_kinds() {
        let not_found = r#"{"code":"maestro-7","href":"/api/maestro/v1/errors/7","id":"7","kind":"Error","operation_id":"x","reason":"Resource with id='abc' not found"}"#;
        let e = from_rest_response(404, not_found);
        assert_eq!(
            e,
            WorkError::NotFound {
                message: "maestro-7: Resource with id='abc' not found".into()
            }
        );
        let unknown_route = r#"{"type":"Error","id":"404","href":"/api/maestro/v1/errors/404","code":"maestro-404","reason":"The requested resource '/x' doesn't exist"}"#;
        assert!(matches!(
            from_rest_response(404, unknown_route),
            WorkError::NotFound { .. }
        ));
        let table: [(u16, u32, &str, fn(&WorkError) -> bool); 12] = [
            (403, 1, "Invalid token provided", |e| {
                matches!(e, WorkError::Unauthenticated { .. })
            }),
            (403, 4, "Forbidden to perform this action", |e| {
                matches!(e, WorkError::Forbidden { .. })
            }),
            (
                409,
                6,
                "An entity with the specified unique values already exists",
                |e| matches!(e, WorkError::AlreadyExists { .. }),
            ),
            (400, 8, "General validation failure", |e| {
                matches!(e, WorkError::Invalid { .. })
            }),
            (500, 9, "Unspecified error", |e| e.is_transient()),
            (405, 10, "HTTP Method not implemented", |e| {
                matches!(e, WorkError::Internal { .. })
            }),
            (403, 11, "Account is unauthorized", |e| {
                matches!(e, WorkError::Forbidden { .. })
            }),
            (
                401,
                15,
                "Account authentication could not be verified",
                |e| matches!(e, WorkError::Unauthenticated { .. }),
            ),
            (400, 17, "Unable to read request body", |e| {
                matches!(e, WorkError::Invalid { .. })
            }),
            (400, 21, "Bad request", |e| {
                matches!(e, WorkError::Invalid { .. })
            }),
            (400, 23, "Failed to parse search query", |e| {
                matches!(e, WorkError::Invalid { .. })
            }),
            (500, 26, "Database advisory lock error", |e| {
                e.is_transient()
            }),
        ];
        for (status, code, reason, check) in table {
            let body = format!(
                r#"{{"kind":"Error","id":"{code}","href":"/api/maestro/v1/errors/{code}","code":"maestro-{code}","reason":"{reason}"}}"#
            );
            let e = from_rest_response(status, &body);
            assert!(check(&e), "{status} maestro-{code} -> {e:?}");
            assert!(e.message().contains(reason));
        }
        assert!(from_rest_response(502, "<html>bad gateway</html>").is_transient());
    }

    #[test]
    fn tls_failures_are_not_transient() {
        let e = from_grpc_status(&Status::new(
            Code::Unavailable,
            "invalid peer certificate: UnknownIssuer",
        ));
        assert!(matches!(e, WorkError::Config { .. }), "{e:?}");
        let e = from_grpc_status(&Status::new(
            Code::Unavailable,
            "received fatal alert: CertificateRequired",
        ));
        assert!(matches!(e, WorkError::Unauthenticated { .. }), "{e:?}");
    }

    proptest::proptest! {
        #[test]
        fn any_server_text_is_classified_and_kept(msg in ".{0,200}", status in 100u16..600) {
            let e = from_grpc_status(&Status::new(Code::Unknown, msg.clone()));
            proptest::prop_assert!(e.message().contains(msg.as_str()));
            let body = serde_json::json!({"code": format!("maestro-{status}"), "reason": msg}).to_string();
            let e = from_rest_response(status, &body);
            proptest::prop_assert!(e.message().contains(msg.as_str()));
            proptest::prop_assert_eq!(e.is_transient(), status >= 500 || status == 429 || status == 408);
        }
    }

    #[test]
    fn a_grpc_url_that_is_not_a_grpc_server_names_the_url() {
        const URL: &str = "http://maestro.example:8000";
        // What tonic says when the REST port answers a Publish with its JSON 404 body.
        let not_grpc = Status::new(
            Code::Internal,
            "protocol error: received message with invalid compression flag: 123 (valid flags are 0 and 1) while receiving response with status: 404 Not Found",
        );
        let e = from_grpc_call(URL, &not_grpc);
        assert!(matches!(e, WorkError::Config { .. }), "{e:?}");
        assert!(
            e.message().contains(
                "MAESTRO_GRPC_URL http://maestro.example:8000 answered, but not as a gRPC server"
            ),
            "{e}"
        );
        assert!(e.message().contains("8090"), "{e}");

        let plaintext = Status::new(
            Code::Unavailable,
            "received corrupt message of type InvalidContentType",
        );
        let e = from_grpc_call("https://maestro.example:8090", &plaintext);
        assert!(matches!(e, WorkError::Config { .. }), "{e:?}");
        assert!(e.message().contains("answered without TLS"), "{e}");
        // Over http:// the same text is not a TLS mismatch (and cannot occur); it stays transient.
        assert!(from_grpc_call("http://maestro.example:8090", &plaintext).is_transient());

        // Maestro's own errors are unchanged; transport failures keep the URL and stay transient.
        let unknown = Status::new(
            Code::Unknown,
            "failed to create resource: maestro-6: This Resource already exists",
        );
        assert!(matches!(
            from_grpc_call(URL, &unknown),
            WorkError::AlreadyExists { .. }
        ));
        let e = from_grpc_call(
            URL,
            &Status::new(Code::Unavailable, "connection error: broken pipe"),
        );
        assert!(e.is_transient());
        assert!(
            e.message()
                .starts_with("MAESTRO_GRPC_URL http://maestro.example:8000: "),
            "{e}"
        );
        assert!(e.message().contains("must be https://"), "{e}");
        let e = from_grpc_call(
            URL,
            &Status::new(Code::Unavailable, "tcp connect error: Connection refused"),
        );
        assert!(!e.message().contains("https://"), "{e}");
    }

    #[test]
    fn a_rest_url_that_is_not_maestro_names_the_url() {
        const BASE: &str = "http://api.example:6443";
        let kube = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden","reason":"Forbidden","code":403}"#;
        let e = from_rest_answer(BASE, 403, kube);
        assert!(matches!(e, WorkError::Config { .. }), "{e:?}");
        assert!(e.message().contains("MAESTRO_API_URL http://api.example:6443 answered HTTP 403 like a Kubernetes API server"), "{e}");
        let e = from_rest_answer(BASE, 404, "404 page not found");
        assert!(matches!(e, WorkError::Config { .. }), "{e:?}");
        assert!(e.message().contains("not a Maestro error"), "{e}");
        // The recorded Maestro bodies keep their meaning (11a: unknown id; an auth refusal).
        let missing = r#"{"code":"maestro-7","href":"/api/maestro/v1/errors/7","id":"7","kind":"Error","operation_id":"x","reason":"Resource with id='a' not found"}"#;
        assert!(matches!(
            from_rest_answer(BASE, 404, missing),
            WorkError::NotFound { .. }
        ));
        let forbidden = r#"{"kind":"Error","id":"11","href":"/api/maestro/v1/errors/11","code":"maestro-11","reason":"Account is unauthorized"}"#;
        assert!(matches!(
            from_rest_answer(BASE, 403, forbidden),
            WorkError::Forbidden { .. }
        ));
        assert!(from_rest_answer(BASE, 502, "<html>bad gateway</html>").is_transient());
    }

    #[test]
    fn code_extraction() {
        assert_eq!(maestro_code("x: maestro-404: y"), Some(404));
        assert_eq!(maestro_code("maestro-"), None);
        assert_eq!(maestro_code("no code"), None);
    }
}

/// Helpers of the characterization tests (`pinned` modules) of `work/`: the fuzz corpora (in
/// the repository) and the recorded real Maestro answers (team folder, skipped when absent).
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) mod pin_inputs {
    use std::path::{Path, PathBuf};

    /// Every file of `fuzz/corpus/<target>`, sorted by name: `(name, bytes)`.
    pub(crate) fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fuzz/corpus")
            .join(target);
        files(&dir)
    }

    /// Every recorded real answer (`fixtures/maestro/real/*.json`) as JSON, sorted by name;
    /// `None` (one line on stderr) without the team folder.
    pub(crate) fn real() -> Option<Vec<(String, serde_json::Value)>> {
        let dir =
            job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/maestro/real")?;
        Some(
            files(&dir)
                .into_iter()
                .filter(|(name, _)| name.ends_with(".json"))
                .map(|(name, bytes)| (name, serde_json::from_slice(&bytes).unwrap()))
                .collect(),
        )
    }

    /// A plain-HTTP server that records every request (`METHOD path?query`, the headers named
    /// in [`RECORDED_HEADERS`], the body) and answers each from `answer`: `(status, content
    /// type, body)`.
    pub(crate) struct Recorder {
        pub(crate) url: String,
        requests: Log,
    }

    /// The request headers a [`Recorder`] writes down.
    pub(crate) const RECORDED_HEADERS: [&str; 4] =
        ["accept", "authorization", "content-type", "x-operation-id"];

    type Answer = Box<dyn Fn(&str, &str) -> (u16, &'static str, String) + Send + Sync>;
    type Log = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

    impl Recorder {
        /// Serves on 127.0.0.1 until the test's runtime ends; `answer(method, path and query)`.
        pub(crate) async fn start(
            answer: impl Fn(&str, &str) -> (u16, &'static str, String) + Send + Sync + 'static,
        ) -> Self {
            use axum::extract::State;
            let requests = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let state: (Log, std::sync::Arc<Answer>) =
                (requests.clone(), std::sync::Arc::new(Box::new(answer)));
            let app = axum::Router::new()
                .fallback(
                    |State((log, answer)): State<(Log, std::sync::Arc<Answer>)>,
                     method: axum::http::Method,
                     uri: axum::http::Uri,
                     headers: axum::http::HeaderMap,
                     body: String| async move {
                        let target = uri.path_and_query().map_or("", |p| p.as_str()).to_owned();
                        let mut line = format!("{method} {target}");
                        for name in RECORDED_HEADERS {
                            if let Some(v) = headers.get(name) {
                                line.push_str(&format!(" [{name}: {}]", v.to_str().unwrap()));
                            }
                        }
                        if !body.is_empty() {
                            line.push_str(&format!(" body {body}"));
                        }
                        log.lock().unwrap().push(line);
                        let (status, content_type, body) = answer(method.as_str(), &target);
                        (
                            axum::http::StatusCode::from_u16(status).unwrap(),
                            [(axum::http::header::CONTENT_TYPE, content_type)],
                            body,
                        )
                    },
                )
                .with_state(state);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}", listener.local_addr().unwrap());
            tokio::spawn(async move { axum::serve(listener, app).await });
            Self { url, requests }
        }

        /// The requests recorded since the last call.
        pub(crate) fn take(&self) -> Vec<String> {
            std::mem::take(&mut *self.requests.lock().unwrap())
        }

        /// `text` with this server's URL (and its port) replaced by `SERVER`/`PORT`.
        pub(crate) fn scrub(&self, text: &str) -> String {
            let port = self.url.rsplit(':').next().unwrap();
            text.replace(&self.url, "http://SERVER")
                .replace(&format!(":{port}"), ":PORT")
        }
    }

    /// FNV-1a (64 bit) of `bytes`, in hex: large outputs are pinned by their digest.
    pub(crate) fn digest(bytes: &[u8]) -> String {
        let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        });
        format!("{hash:016x}")
    }

    /// `work` in one line, its workload (the manifests, pinned elsewhere) by digest.
    pub(crate) fn work_line(work: &crate::work::ExistingWork) -> String {
        let workload = serde_json::to_vec(&work.workload).unwrap();
        let rest = crate::work::ExistingWork {
            workload: Vec::new(),
            ..work.clone()
        };
        format!("{rest:?} workload {}", digest(&workload))
    }

    fn files(dir: &PathBuf) -> Vec<(String, Vec<u8>)> {
        let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&path).unwrap())
            })
            .collect();
        out.sort();
        out
    }
}

/// Pins what every classifier makes of a grid of gRPC statuses, REST answers (status × body),
/// the recorded real error answers and the `maestro_error` fuzz corpus: each [`WorkError`]'s
/// variant and message text.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod pinned {
    use std::fmt::Write as _;

    use tonic::{Code, Status};

    use super::pin_inputs::{corpus, real};
    use super::*;
    use crate::work::maestro::bundle::ResourceBundle;
    use crate::work::maestro::rest::{RESOURCE_BUNDLES_PATH, bundle_or_none, decode_answer};

    const BASE: &str = "http://maestro:8000";
    const URLS: [&str; 3] = [
        "http://maestro-grpc:8090",
        "https://maestro-grpc:8090",
        "maestro-grpc:8090",
    ];

    fn messages() -> Vec<String> {
        let mut out: Vec<String> = [
            "",
            "transport error",
            "missing metadata",
            "Missing Metadata",
            "invalid token",
            "token not authenticated",
            "unauthorized to publish the event from source hyperfleet-adapter",
            "unauthorized to subscribe the event from source hyperfleet-adapter",
            "resource cannot be empty",
            "unsupported action delete_everything",
            "failed to create resource: maestro-6: This Resource already exists",
            "failed to create resource: maestro-6: THIS RESOURCE ALREADY EXISTS",
            "failed to update resource: maestro-6: the resource version is not the latest, the latest version: 3",
            "failed to update resource: maestro-6: the resource is under deletion, id: 55c61e54",
            "failed to get resource: maestro-7: Resource with id='55c61e54' not found",
            "failed to create resource: maestro-8: the manifest bundle in the resource is invalid, manifests: Required value",
            "failed to create resource: maestro-9: Unable to create Resource: ERROR: insert or update on table \"resources\" violates foreign key constraint \"fk_resources_consumers\" (SQLSTATE 23503)",
            "ERROR: violates FOREIGN KEY constraint",
            "maestro-1: Invalid token provided",
            "maestro-4: Forbidden to perform this action",
            "maestro-10: HTTP Method not implemented",
            "maestro-11: Account is unauthorized",
            "maestro-15: Account authentication could not be verified",
            "maestro-17: Unable to read request body",
            "maestro-21: Bad request",
            "maestro-23: Failed to parse search query",
            "maestro-26: Database advisory lock error",
            "maestro-404: The requested resource '/x' doesn't exist",
            "maestro-99999999999999: overflow",
            "maestro-: no digits",
            "x maestro-7 and maestro-6 already exists",
            "invalid peer certificate: UnknownIssuer",
            "received fatal alert: BadCertificate",
            "received fatal alert: CertificateRequired",
            "received fatal alert: UnknownCA",
            "received fatal alert: CertificateUnknown",
            "received fatal alert: HandshakeFailure",
            "received corrupt message of type InvalidContentType",
            "protocol error: received message with invalid compression flag: 123 (valid flags are 0 and 1) while receiving response with status: 404 Not Found",
            "grpc-status header missing, mapped from HTTP status code 404",
            "tcp connect error: Connection refused (os error 111)",
            "connection error: broken pipe",
            "invalid HTTP version parsed",
            "ünïcödé maestro-6 already exists",
        ]
        .map(str::to_owned)
        .to_vec();
        out.push("y".repeat(600));
        out
    }

    fn bodies() -> Vec<String> {
        let error = |code: &str, reason: &str| {
            format!(
                r#"{{"kind":"Error","id":"{code}","href":"/api/maestro/v1/errors/{code}","code":"maestro-{code}","reason":"{reason}","operation_id":"op"}}"#
            )
        };
        let mut out = vec![
            error("1", "Invalid token provided"),
            error("4", "Forbidden to perform this action"),
            error("6", "An entity with the specified unique values already exists"),
            error("6", "the resource version is not the latest"),
            error("7", "Resource with id='abc' not found"),
            error("8", "General validation failure"),
            error("9", "Unable to create Resource: violates foreign key constraint \\\"fk_resources_consumers\\\""),
            error("10", "HTTP Method not implemented"),
            error("11", "Account is unauthorized"),
            error("15", "Account authentication could not be verified"),
            error("17", "Unable to read request body"),
            error("21", "Bad request"),
            error("23", "Failed to parse search query"),
            error("26", "Database advisory lock error"),
            r#"{"type":"Error","id":"404","href":"/api/maestro/v1/errors/404","code":"maestro-404","reason":"The requested resource '/x' doesn't exist"}"#.to_owned(),
            r#"{"code":"maestro-7"}"#.to_owned(),
            r#"{"code":"maestro-7","reason":5}"#.to_owned(),
            r#"{"code":"other-7","reason":"r"}"#.to_owned(),
            r#"{"code":7,"reason":"r"}"#.to_owned(),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden","reason":"Forbidden","code":403}"#.to_owned(),
            r#"{"kind":"Status","apiVersion":"v2"}"#.to_owned(),
            r#"{"kind":"Status","apiVersion":"v1","code":"maestro-7","reason":"both"}"#.to_owned(),
            "404 page not found".to_owned(),
            String::new(),
            "<html>bad gateway</html>".to_owned(),
            "null".to_owned(),
            "[]".to_owned(),
            r#"conditions"maestro-7","href":"/api/maestro/v1/errors/7","id":"7","kind":"Error","reason":"Resource with id='d7d}"#.to_owned(),
            "token not authenticated".to_owned(),
            "ERROR: violates foreign key constraint".to_owned(),
        ];
        // A long body whose 512th byte falls inside a multi-byte character.
        out.push(format!("{}é{}", "x".repeat(511), "z".repeat(100)));
        out
    }

    const STATUSES: [u16; 24] = [
        100, 204, 301, 302, 355, 400, 401, 403, 404, 405, 407, 408, 409, 410, 418, 422, 429, 451,
        499, 500, 502, 503, 504, 599,
    ];

    fn codes() -> impl Iterator<Item = Code> {
        (0..=17).map(Code::from)
    }

    #[test]
    fn grpc_statuses() {
        let mut out = String::new();
        for message in messages() {
            let _ = writeln!(out, "[{message}]");
            for code in codes() {
                let status = Status::new(code, message.clone());
                let _ = writeln!(out, "  {code:?}: {:?}", from_grpc_status(&status));
                for url in URLS {
                    let _ = writeln!(out, "    {url}: {:?}", from_grpc_call(url, &status));
                }
            }
        }
        // A transport failure keeps its cause in the source chain.
        for (message, cause) in [
            ("transport error", "received fatal alert: BadCertificate"),
            ("transport error", "tcp connect error"),
            (
                "error trying to connect",
                "invalid peer certificate: UnknownIssuer",
            ),
            ("already says tcp connect error", "tcp connect error"),
        ] {
            let status =
                Status::from_error(Box::new(Chained(message, std::io::Error::other(cause))));
            let _ = writeln!(out, "[sourced {message}] {:?}", from_grpc_status(&status));
            for url in URLS {
                let _ = writeln!(out, "  {url}: {:?}", from_grpc_call(url, &status));
            }
        }
        insta::assert_snapshot!("grpc_statuses", out);
    }

    /// An error `.0` caused by an error `.1`.
    #[derive(Debug)]
    struct Chained(&'static str, std::io::Error);

    impl std::fmt::Display for Chained {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Chained {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.1)
        }
    }

    #[test]
    fn rest_answers() {
        let url = format!("{BASE}{RESOURCE_BUNDLES_PATH}/a7e844fe-9524-5d24-9a33-34edcc1457de");
        let mut out = String::new();
        for body in bodies() {
            let _ = writeln!(out, "[{body}]");
            for status in STATUSES {
                let answer = from_rest_answer(BASE, status, &body);
                let read = bundle_or_none(BASE, &url, Err(answer.clone()));
                let _ = writeln!(
                    out,
                    "  {status}: {answer:?}\n    response: {:?}\n    get: {read:?}",
                    from_rest_response(status, &body)
                );
            }
        }
        for message in messages() {
            let _ = writeln!(
                out,
                "[classify {message}] {:?} / code {:?}",
                classify_message(&message),
                maestro_code(&message)
            );
        }
        insta::assert_snapshot!("rest_answers", out);
    }

    /// The fuzz target `maestro_error`'s path, over its corpus.
    #[test]
    fn maestro_error_corpus() {
        let url = format!("{BASE}{RESOURCE_BUNDLES_PATH}/a7e844fe-9524-5d24-9a33-34edcc1457de");
        let mut out = String::new();
        for (name, data) in corpus("maestro_error") {
            let [hi, lo, code, body @ ..] = data.as_slice() else {
                continue;
            };
            let status = u16::from_be_bytes([*hi, *lo]);
            let answer: Result<ResourceBundle, WorkError> = decode_answer(BASE, &url, status, body);
            let summary = answer.as_ref().map(|b| b.id.clone()).map_err(Clone::clone);
            let read = bundle_or_none(BASE, &url, answer);
            let message = String::from_utf8_lossy(body);
            let code = Code::from(i32::from(*code % 17));
            let grpc = from_grpc_call(URLS[0], &Status::new(code, message.as_ref()));
            let _ = writeln!(
                out,
                "[{name}] HTTP {status}: {summary:?}\n  get: {:?}\n  {code:?}: {grpc:?}",
                read.map(|b| b.map(|b| b.id))
            );
        }
        insta::assert_snapshot!("maestro_error_corpus", out);
    }

    /// The recorded real error answers: REST non-2xx bodies and gRPC Publish failures.
    #[test]
    fn real_error_answers() {
        let Some(real) = real() else { return };
        let mut out = String::new();
        for (name, answer) in real {
            let request = &answer["request"];
            match request["protocol"].as_str() {
                Some("http") => {
                    let status = u16::try_from(answer["status"].as_u64().unwrap()).unwrap();
                    let body = match &answer["body"] {
                        serde_json::Value::Null => String::new(),
                        body => body.to_string(),
                    };
                    let path = request["path"].as_str().unwrap();
                    let url = format!("{BASE}{path}");
                    let answer: Result<ResourceBundle, WorkError> =
                        decode_answer(BASE, &url, status, body.as_bytes());
                    let read = bundle_or_none(BASE, &url, answer);
                    let _ = writeln!(
                        out,
                        "[{name}] HTTP {status}: {:?}",
                        read.map(|b| b.map(|b| b.id))
                    );
                    if !(200..300).contains(&status) {
                        let _ =
                            writeln!(out, "  response: {:?}", from_rest_response(status, &body));
                    }
                }
                Some("grpc") if answer["status"] != "OK" => {
                    let code =
                        Code::from(i32::try_from(answer["grpc_code"].as_i64().unwrap()).unwrap());
                    let message = answer["body"]["message"].as_str().unwrap();
                    let status = Status::new(code, message);
                    let _ = writeln!(out, "[{name}] {code:?}: {:?}", from_grpc_status(&status));
                    for url in URLS {
                        let _ = writeln!(out, "  {url}: {:?}", from_grpc_call(url, &status));
                    }
                }
                _ => {}
            }
        }
        insta::assert_snapshot!("real_error_answers", out);
    }
}
