//! The per-key `data` annotations: one Job annotation `data.hyperfleet.io/<key>` per top-level
//! key of a report's `data`, so that a reader without a JSON decoder (the HyperFleet framework's
//! CEL) can read each value on its own.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::names::{NAME_PART_RULE, is_name_part};
use crate::{DATA_ANNOTATION_PREFIX, MAX_DATA_ANNOTATIONS_BYTES};

/// The annotations for one report's `data`, and the keys that could not become one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataAnnotations {
    /// Full annotation key (`data.hyperfleet.io/<key>`) → value.
    pub annotations: BTreeMap<String, String>,
    /// Keys left out, in key order, each with why.
    pub skipped: Vec<SkippedKey>,
}

/// A top-level `data` key that got no annotation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedKey {
    pub key: String,
    /// The rule the key broke, e.g. that it cannot be an annotation name.
    pub why: String,
}

/// The annotation value for one `data` value: a JSON string as the string itself, anything else
/// (number, bool, null, object, array) as compact JSON text.
pub fn data_annotation_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One annotation per top-level key of `data` (none when `data` is absent).
///
/// A key that cannot be the name part of an annotation key ([`NAME_PART_RULE`]) is skipped. So
/// is, in key order, any key whose annotation would take the total of these annotations (keys
/// plus values, in bytes) past [`MAX_DATA_ANNOTATIONS_BYTES`]; see there why that bound keeps
/// the Job under the API server's 256 KiB annotation limit.
pub fn data_annotations(data: Option<&Map<String, Value>>) -> DataAnnotations {
    let mut out = DataAnnotations::default();
    let mut total = 0usize;
    for (key, value) in data.into_iter().flatten() {
        if !is_name_part(key) {
            out.skipped.push(SkippedKey {
                key: key.clone(),
                why: format!(
                    "it cannot be the name part of an annotation key, which must be {NAME_PART_RULE}"
                ),
            });
            continue;
        }
        let name = format!("{DATA_ANNOTATION_PREFIX}{key}");
        let text = data_annotation_value(value);
        let size = name.len() + text.len();
        if total + size > MAX_DATA_ANNOTATIONS_BYTES {
            out.skipped.push(SkippedKey {
                key: key.clone(),
                why: format!(
                    "its annotation ({size} bytes) would take the {DATA_ANNOTATION_PREFIX} annotations past {MAX_DATA_ANNOTATIONS_BYTES} bytes; the whole data is still in {}",
                    crate::REPORT_DATA_ANNOTATION
                ),
            });
            continue;
        }
        total += size;
        out.annotations.insert(name, text);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn strings_as_they_are_everything_else_as_compact_json() {
        let data = map(json!({
            "version": "4.17.0",
            "empty": "",
            "quoted": "say \"hi\"\n",
            "count": 3,
            "ratio": -0.5,
            "ready": true,
            "nothing": null,
            "nested": {"b": [1, 2], "a": {"x": "y"}},
            "list": ["a", 1, false],
        }));
        let got = data_annotations(Some(&data));
        let want: BTreeMap<String, String> = [
            ("version", "4.17.0"),
            ("empty", ""),
            ("quoted", "say \"hi\"\n"),
            ("count", "3"),
            ("ratio", "-0.5"),
            ("ready", "true"),
            ("nothing", "null"),
            ("nested", r#"{"a":{"x":"y"},"b":[1,2]}"#),
            ("list", r#"["a",1,false]"#),
        ]
        .into_iter()
        .map(|(k, v)| (format!("data.hyperfleet.io/{k}"), v.to_owned()))
        .collect();
        assert_eq!(got.annotations, want);
        assert!(got.skipped.is_empty());
    }

    #[test]
    fn no_data_no_annotations() {
        assert_eq!(data_annotations(None), DataAnnotations::default());
        assert_eq!(
            data_annotations(Some(&Map::new())),
            DataAnnotations::default()
        );
    }

    #[test]
    fn keys_that_cannot_be_annotation_names_are_skipped_the_rest_kept() {
        let long = "k".repeat(64);
        let data = map(json!({
            "ok": 1,
            "": 1,
            "with space": 1,
            "a/b": 1,
            "_lead": 1,
            "trail-": 1,
            "é": 1,
            (long.clone()): 1,
            ("k".repeat(63)): 1,
        }));
        let got = data_annotations(Some(&data));
        assert_eq!(
            got.annotations.keys().collect::<Vec<_>>(),
            [
                &format!("data.hyperfleet.io/{}", "k".repeat(63)),
                &"data.hyperfleet.io/ok".to_owned()
            ]
        );
        let skipped: Vec<&str> = got.skipped.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(
            skipped,
            [
                "",
                "_lead",
                "a/b",
                long.as_str(),
                "trail-",
                "with space",
                "é"
            ]
        );
        assert!(
            got.skipped[0].why.contains(NAME_PART_RULE),
            "{}",
            got.skipped[0].why
        );
    }

    #[test]
    fn keys_past_the_byte_budget_are_skipped_in_key_order() {
        // Each annotation: 19-byte prefix + 2-byte key + 1000-byte value = 1021 bytes.
        let per = DATA_ANNOTATION_PREFIX.len() + 2 + 1000;
        let fit = MAX_DATA_ANNOTATIONS_BYTES / per;
        let mut data = Map::new();
        for i in 0..fit + 2 {
            let key = format!(
                "{}{}",
                (b'a' + (i / 26) as u8) as char,
                (b'a' + (i % 26) as u8) as char
            );
            data.insert(key, Value::String("v".repeat(1000)));
        }
        // A small key after the big ones still fits in what is left.
        data.insert("zz".into(), json!(1));
        let got = data_annotations(Some(&data));
        assert_eq!(got.annotations.len(), fit + 1, "the fitting ones and zz");
        assert!(got.annotations.contains_key("data.hyperfleet.io/zz"));
        assert_eq!(got.skipped.len(), 2);
        assert!(
            got.skipped[0].why.contains("131072 bytes"),
            "{}",
            got.skipped[0].why
        );
        let total: usize = got.annotations.iter().map(|(k, v)| k.len() + v.len()).sum();
        assert!(total <= MAX_DATA_ANNOTATIONS_BYTES);
    }

    #[test]
    fn the_prefix_is_a_valid_annotation_prefix() {
        let prefix = DATA_ANNOTATION_PREFIX.strip_suffix('/').unwrap();
        assert!(crate::names::is_dns_subdomain(prefix));
        assert_eq!(
            crate::names::qualified_name_problem(&format!(
                "{DATA_ANNOTATION_PREFIX}{}",
                "k".repeat(63)
            )),
            None
        );
    }
}
