//! The request log tests inspect.

use std::time::SystemTime;

use bytes::Bytes;
use http::Method;

/// One request the server received, with the status it answered.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: Method,
    pub path: String,
    /// The raw query string, if any.
    pub query: Option<String>,
    pub content_type: Option<String>,
    pub body: Bytes,
    /// The HTTP status returned; `None` while unanswered (a hanging fault).
    pub status: Option<u16>,
    pub time: SystemTime,
}

impl RecordedRequest {
    /// The body as UTF-8 text (lossy).
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body parsed as JSON, if it is JSON.
    pub fn body_json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}
