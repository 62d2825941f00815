//! PATCH content types and applying a patch body to an object.

use serde_json::Value;

use super::status::ApiError;
use super::strategic_merge::{self, MergeKeys};
use super::{json_patch, merge_patch};

/// The four patch flavours the API server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/strategic-merge-patch+json`
    Strategic,
    /// `application/merge-patch+json` (RFC 7386)
    Merge,
    /// `application/json-patch+json` (RFC 6902)
    Json,
    /// `application/apply-patch+yaml`: server-side apply, simplified to a merge patch of the
    /// applied fields (no field managers, so never a 409 conflict). JSON bodies only.
    Apply,
}

impl PatchType {
    /// The patch type for a `Content-Type` header; anything else is a 415.
    pub fn from_content_type(content_type: Option<&str>) -> Result<Self, ApiError> {
        let media = content_type
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim();
        match media {
            "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Ok(PatchType::Apply),
            _ => Err(ApiError::unsupported_media_type()),
        }
    }
}

/// Applies a patch body to a copy of `original`.
pub fn apply(
    kind: PatchType,
    original: &Value,
    body: &[u8],
    keys: MergeKeys,
) -> Result<Value, ApiError> {
    let patch: Value = serde_json::from_slice(body).map_err(|e| match kind {
        PatchType::Apply => ApiError::bad_request(format!(
            "error decoding YAML: this test bed accepts JSON apply bodies only: {e}"
        )),
        _ => ApiError::bad_request(format!("error decoding patch: {e}")),
    })?;
    match kind {
        PatchType::Strategic => {
            strategic_merge::apply(original, &patch, keys).map_err(|e| ApiError::bare_500(e.0))
        }
        PatchType::Json => {
            json_patch::apply(original, &patch).map_err(|_| ApiError::generic_invalid())
        }
        PatchType::Merge | PatchType::Apply => {
            if !patch.is_object() {
                return Err(ApiError::bad_request(
                    "error decoding patch: the patch must be a JSON object".to_owned(),
                ));
            }
            let mut patched = original.clone();
            merge_patch::apply(&mut patched, &patch);
            Ok(patched)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_json_is_unsupported() {
        let error = PatchType::from_content_type(Some("application/json")).unwrap_err();
        assert_eq!(error.code(), 415);
    }

    #[test]
    fn parameters_after_the_media_type_are_ignored() {
        let kind =
            PatchType::from_content_type(Some("application/merge-patch+json; charset=utf-8"))
                .unwrap();
        assert_eq!(kind, PatchType::Merge);
    }
}
