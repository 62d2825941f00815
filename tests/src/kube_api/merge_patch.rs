//! JSON merge patch (RFC 7386): objects merge, `null` deletes, everything else (lists too) replaces.

use serde_json::Value;

/// Applies `patch` to `target` in place.
pub fn apply(target: &mut Value, patch: &Value) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(target_map) = target {
        for (key, value) in patch_map {
            if value.is_null() {
                target_map.remove(key);
            } else {
                apply(target_map.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn lists_are_replaced_whole() {
        let mut doc =
            json!({"status": {"conditions": [{"type": "A"}, {"type": "B"}], "active": 1}});
        apply(
            &mut doc,
            &json!({"status": {"conditions": [{"type": "C"}]}}),
        );
        assert_eq!(
            doc,
            json!({"status": {"conditions": [{"type": "C"}], "active": 1}})
        );
    }

    #[test]
    fn null_deletes_a_key() {
        let mut doc = json!({"a": {"b": 1, "c": 2}});
        apply(&mut doc, &json!({"a": {"b": null}}));
        assert_eq!(doc, json!({"a": {"c": 2}}));
    }
}
