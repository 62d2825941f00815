//! Strategic merge patch, following apimachinery's `strategicpatch` for lists of maps with a merge key:
//! patch elements merge field-wise into the first stored element with the same key, new elements come
//! first, stored-only elements keep their relative order, `$patch: delete|replace` and
//! `$setElementOrder/<field>` are honoured. Lists without a declared merge key are replaced.

use serde_json::{Map, Value};

/// Dotted field paths (e.g. `status.conditions`) whose lists merge by a key (e.g. `type`).
#[derive(Debug, Clone, Copy)]
pub struct MergeKeys(pub &'static [(&'static str, &'static str)]);

impl MergeKeys {
    /// No list merges by key: SMP behaves like a merge patch with directives.
    pub const NONE: MergeKeys = MergeKeys(&[]);

    fn key_for(&self, path: &str) -> Option<&'static str> {
        self.0.iter().find(|(p, _)| *p == path).map(|(_, key)| *key)
    }
}

/// Why a strategic merge patch failed; the server answers 500 with this message.
#[derive(Debug, Clone, PartialEq)]
pub struct SmpError(pub String);

const PATCH: &str = "$patch";
const SET_ORDER: &str = "$setElementOrder/";
const DELETE_PRIMITIVE: &str = "$deleteFromPrimitiveList/";

/// Applies `patch` to a copy of `original`.
pub fn apply(original: &Value, patch: &Value, keys: MergeKeys) -> Result<Value, SmpError> {
    let (Value::Object(original), Value::Object(patch)) = (original, patch) else {
        return Err(SmpError(
            "a strategic merge patch must be a JSON object".to_owned(),
        ));
    };
    let mut merged = original.clone();
    merge_map(&mut merged, patch, "", keys)?;
    Ok(Value::Object(merged))
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

fn merge_map(
    original: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    path: &str,
    keys: MergeKeys,
) -> Result<(), SmpError> {
    match patch.get(PATCH).and_then(Value::as_str) {
        Some("replace") => {
            *original = without_directives(patch);
            return Ok(());
        }
        Some("delete") => {
            original.clear();
            return Ok(());
        }
        _ => {}
    }
    let before = original.clone();
    for (field, value) in patch {
        if field.starts_with('$') {
            continue;
        }
        merge_field(original, field, value, &join(path, field), keys)?;
    }
    for (directive, value) in patch {
        if let Some(field) = directive.strip_prefix(DELETE_PRIMITIVE) {
            delete_from_primitive_list(original, field, value);
        }
    }
    for (directive, order) in patch {
        if let Some(field) = directive.strip_prefix(SET_ORDER) {
            set_element_order(
                original,
                &before,
                field,
                order,
                keys.key_for(&join(path, field)),
            );
        }
    }
    Ok(())
}

fn merge_field(
    original: &mut Map<String, Value>,
    field: &str,
    value: &Value,
    path: &str,
    keys: MergeKeys,
) -> Result<(), SmpError> {
    if value.is_null() {
        original.remove(field);
        return Ok(());
    }
    match (value, keys.key_for(path)) {
        (Value::Array(patch_list), Some(key)) => {
            let stored = match original.get(field) {
                Some(Value::Array(list)) => list.clone(),
                _ => Vec::new(),
            };
            let merged = merge_list(&stored, patch_list, key, path, keys)?;
            original.insert(field.to_owned(), Value::Array(merged));
        }
        (Value::Object(patch_map), _) => {
            let mut target = match original.remove(field) {
                Some(Value::Object(map)) => map,
                _ => Map::new(),
            };
            merge_map(&mut target, patch_map, path, keys)?;
            original.insert(field.to_owned(), Value::Object(target));
        }
        _ => {
            original.insert(field.to_owned(), value.clone());
        }
    }
    Ok(())
}

fn without_directives(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| !k.starts_with('$'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn key_of<'a>(element: &'a Value, key: &str) -> Option<&'a Value> {
    element.as_object().and_then(|m| m.get(key))
}

fn merge_list(
    stored: &[Value],
    patch: &[Value],
    key: &str,
    path: &str,
    keys: MergeKeys,
) -> Result<Vec<Value>, SmpError> {
    for element in patch {
        let Value::Object(map) = element else {
            return Err(SmpError(format!(
                "{} is not a map, but the list merges by key {key}",
                go_format(element)
            )));
        };
        if !map.contains_key(key) && map.get(PATCH).and_then(Value::as_str) != Some("replace") {
            return Err(SmpError(format!(
                "map: {} does not contain declared merge key: {key}",
                go_format(element)
            )));
        }
    }
    if patch
        .iter()
        .any(|e| e.get(PATCH).and_then(Value::as_str) == Some("replace"))
    {
        let replacement = patch
            .iter()
            .filter(|e| e.get(PATCH).is_none())
            .cloned()
            .collect();
        return Ok(replacement);
    }
    let mut merged: Vec<Value> = stored.to_vec();
    for element in patch
        .iter()
        .filter(|e| e.get(PATCH).and_then(Value::as_str) == Some("delete"))
    {
        let doomed = key_of(element, key);
        merged.retain(|e| key_of(e, key) != doomed);
    }
    let plain: Vec<&Value> = patch.iter().filter(|e| e.get(PATCH).is_none()).collect();
    for element in &plain {
        merge_element(&mut merged, element, key, path, keys)?;
    }
    let patch_order: Vec<&Value> = plain.iter().filter_map(|e| key_of(e, key)).collect();
    let server_order: Vec<&Value> = stored.iter().filter_map(|e| key_of(e, key)).collect();
    Ok(order(merged, &patch_order, &server_order, key))
}

fn merge_element(
    merged: &mut Vec<Value>,
    element: &Value,
    key: &str,
    path: &str,
    keys: MergeKeys,
) -> Result<(), SmpError> {
    let Value::Object(patch_map) = element else {
        return Ok(());
    };
    let wanted = key_of(element, key);
    if let Some(Value::Object(found)) = merged.iter_mut().find(|e| key_of(e, key) == wanted) {
        return merge_map(found, patch_map, path, keys);
    }
    let mut fresh = Map::new();
    merge_map(&mut fresh, patch_map, path, keys)?;
    merged.push(Value::Object(fresh));
    Ok(())
}

/// Patch items sorted by `patch_order`, stored-only items in stored order, interleaved like
/// apimachinery's `mergeSortedSlice`: when both are stored, stored order wins; otherwise the patch item first.
fn order(
    merged: Vec<Value>,
    patch_order: &[&Value],
    server_order: &[&Value],
    key: &str,
) -> Vec<Value> {
    let position = |list: &[&Value], element: &Value| {
        key_of(element, key).and_then(|k| list.iter().position(|x| *x == k))
    };
    let (mut patch_items, server_only): (Vec<Value>, Vec<Value>) = merged
        .into_iter()
        .partition(|e| position(patch_order, e).is_some());
    patch_items.sort_by_key(|e| position(patch_order, e));
    let mut result = Vec::with_capacity(patch_items.len() + server_only.len());
    let (mut left, mut right) = (
        patch_items.into_iter().peekable(),
        server_only.into_iter().peekable(),
    );
    loop {
        let take_right = match (left.peek(), right.peek()) {
            (None, None) => break,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (Some(l), Some(r)) => match (position(server_order, l), position(server_order, r)) {
                (Some(li), Some(ri)) => ri < li,
                _ => false,
            },
        };
        let next = if take_right {
            right.next()
        } else {
            left.next()
        };
        result.extend(next);
    }
    result
}

fn set_element_order(
    original: &mut Map<String, Value>,
    before: &Map<String, Value>,
    field: &str,
    order_list: &Value,
    key: Option<&str>,
) {
    let (Some(key), Some(Value::Array(wanted)), Some(Value::Array(list))) =
        (key, Some(order_list), original.get(field))
    else {
        return;
    };
    let patch_order: Vec<&Value> = wanted.iter().filter_map(|e| key_of(e, key)).collect();
    let stored: Vec<Value> = match before.get(field) {
        Some(Value::Array(list)) => list.clone(),
        _ => Vec::new(),
    };
    let server_order: Vec<&Value> = stored.iter().filter_map(|e| key_of(e, key)).collect();
    let ordered = order(list.clone(), &patch_order, &server_order, key);
    original.insert(field.to_owned(), Value::Array(ordered));
}

fn delete_from_primitive_list(original: &mut Map<String, Value>, field: &str, doomed: &Value) {
    if let (Some(Value::Array(list)), Value::Array(doomed)) = (original.get_mut(field), doomed) {
        list.retain(|v| !doomed.contains(v));
    }
}

/// Formats a JSON value the way Go's `%v` prints the decoded `interface{}`.
pub fn go_format(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), |f| f.to_string()),
        Value::String(s) => s.clone(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(go_format).collect::<Vec<_>>().join(" ")
        ),
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let parts: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{k}:{}", go_format(v)))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const KEYS: MergeKeys = MergeKeys(&[("status.conditions", "type")]);

    fn cond(kind: &str, status: &str) -> Value {
        json!({"type": kind, "status": status, "reason": format!("R{kind}")})
    }

    fn patch(doc: &Value, conditions: Value) -> Value {
        apply(doc, &json!({"status": {"conditions": conditions}}), KEYS).unwrap()
    }

    fn types(doc: &Value) -> Vec<String> {
        doc["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["type"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn new_elements_are_prepended() {
        let doc = patch(&json!({}), json!([cond("Applied", "True")]));
        let doc = patch(&doc, json!([cond("Available", "True")]));
        assert_eq!(types(&doc), ["Available", "Applied"]);
    }

    #[test]
    fn existing_elements_update_in_place_field_wise() {
        let doc =
            json!({"status": {"conditions": [cond("Available", "True"), cond("Applied", "True")]}});
        let doc = patch(&doc, json!([{"type": "Applied", "status": "False"}]));
        assert_eq!(types(&doc), ["Available", "Applied"]);
        assert_eq!(
            doc["status"]["conditions"][1],
            json!({"type": "Applied", "status": "False", "reason": "RApplied"})
        );
    }

    #[test]
    fn patch_delete_removes_by_key() {
        let doc =
            json!({"status": {"conditions": [cond("Available", "True"), cond("Applied", "True")]}});
        let doc = patch(&doc, json!([{"type": "Available", "$patch": "delete"}]));
        assert_eq!(types(&doc), ["Applied"]);
    }

    #[test]
    fn set_element_order_decides_the_order() {
        let doc = json!({"status": {"conditions": [cond("Applied", "True"), cond("Available", "True"), cond("Health", "True")]}});
        let body = json!({"status": {
            "$setElementOrder/conditions": [{"type": "Health"}, {"type": "Available"}, {"type": "Applied"}],
            "conditions": [{"type": "Health", "status": "False"}]}});
        let doc = apply(&doc, &body, KEYS).unwrap();
        assert_eq!(types(&doc), ["Health", "Available", "Applied"]);
        assert_eq!(doc["status"]["conditions"][0]["status"], "False");
    }

    #[test]
    fn duplicates_in_the_patch_collapse_and_only_the_first_stored_duplicate_changes() {
        let doc = patch(
            &json!({}),
            json!([cond("Available", "True"), cond("Available", "True")]),
        );
        assert_eq!(types(&doc), ["Available"]);
        let doc =
            json!({"status": {"conditions": [cond("Applied", "True"), cond("Applied", "False")]}});
        let doc = patch(&doc, json!([{"type": "Applied", "status": "Unknown"}]));
        assert_eq!(doc["status"]["conditions"][0]["status"], "Unknown");
        assert_eq!(doc["status"]["conditions"][1]["status"], "False");
    }

    #[test]
    fn an_element_without_the_merge_key_is_an_error_in_go_wording() {
        let body = json!({"status": {"conditions": [{"status": "True", "reason": "R"}]}});
        let error = apply(&json!({}), &body, KEYS).unwrap_err();
        assert_eq!(
            error.0,
            "map: map[reason:R status:True] does not contain declared merge key: type"
        );
    }

    #[test]
    fn lists_without_a_merge_key_are_replaced_and_null_deletes() {
        let doc = json!({"a": [1, 2], "b": {"c": 1, "d": 2}});
        let doc = apply(&doc, &json!({"a": [3], "b": {"c": null}}), KEYS).unwrap();
        assert_eq!(doc, json!({"a": [3], "b": {"d": 2}}));
    }
}
