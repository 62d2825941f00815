//! JSON patch (RFC 6902): add, remove, replace, move, copy, test.

use serde_json::Value;

/// Why a JSON patch failed; the server answers every one with the generic 422.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPatchError(pub String);

/// Applies the operations in order to a copy of `doc`; all or nothing.
pub fn apply(doc: &Value, patch: &Value) -> Result<Value, JsonPatchError> {
    let ops = patch
        .as_array()
        .ok_or_else(|| err("a JSON patch must be an array"))?;
    let mut result = doc.clone();
    for op in ops {
        apply_op(&mut result, op)?;
    }
    Ok(result)
}

fn err(message: &str) -> JsonPatchError {
    JsonPatchError(message.to_owned())
}

fn field<'a>(op: &'a Value, name: &str) -> Result<&'a Value, JsonPatchError> {
    op.get(name)
        .ok_or_else(|| JsonPatchError(format!("operation lacks {name:?}")))
}

fn str_field<'a>(op: &'a Value, name: &str) -> Result<&'a str, JsonPatchError> {
    field(op, name)?
        .as_str()
        .ok_or_else(|| JsonPatchError(format!("{name:?} must be a string")))
}

fn apply_op(doc: &mut Value, op: &Value) -> Result<(), JsonPatchError> {
    let path = str_field(op, "path")?;
    match str_field(op, "op")? {
        "add" => add(doc, path, field(op, "value")?.clone()),
        "remove" => remove(doc, path).map(drop),
        "replace" => {
            remove(doc, path)?;
            add(doc, path, field(op, "value")?.clone())
        }
        "move" => {
            let value = remove(doc, str_field(op, "from")?)?;
            add(doc, path, value)
        }
        "copy" => {
            let value = doc
                .pointer(&pointer(str_field(op, "from")?)?)
                .cloned()
                .ok_or_else(|| err("from not found"))?;
            add(doc, path, value)
        }
        "test" => match doc.pointer(&pointer(path)?) {
            Some(actual) if actual == field(op, "value")? => Ok(()),
            _ => Err(JsonPatchError(format!("test failed at {path}"))),
        },
        other => Err(JsonPatchError(format!("unknown op {other:?}"))),
    }
}

fn pointer(path: &str) -> Result<String, JsonPatchError> {
    if path.is_empty() || path.starts_with('/') {
        Ok(path.to_owned())
    } else {
        Err(err("path must start with /"))
    }
}

/// Splits `/a/b~1c` into the parent pointer and the unescaped last token.
fn split(path: &str) -> Result<(String, String), JsonPatchError> {
    let path = pointer(path)?;
    let idx = path
        .rfind('/')
        .ok_or_else(|| err("cannot address the document root"))?;
    let last = path[idx + 1..].replace("~1", "/").replace("~0", "~");
    Ok((path[..idx].to_owned(), last))
}

fn parent<'a>(doc: &'a mut Value, path: &str) -> Result<(&'a mut Value, String), JsonPatchError> {
    let (parent, last) = split(path)?;
    let parent = doc
        .pointer_mut(&parent)
        .ok_or_else(|| JsonPatchError(format!("no parent for {path}")))?;
    Ok((parent, last))
}

fn index(token: &str, len: usize, allow_end: bool) -> Result<usize, JsonPatchError> {
    if allow_end && token == "-" {
        return Ok(len);
    }
    let idx: usize = token
        .parse()
        .map_err(|_| JsonPatchError(format!("bad array index {token:?}")))?;
    let limit = if allow_end {
        len
    } else {
        len.saturating_sub(1)
    };
    if idx > limit || (!allow_end && len == 0) {
        return Err(JsonPatchError(format!("array index {idx} out of range")));
    }
    Ok(idx)
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), JsonPatchError> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (target, last) = parent(doc, path)?;
    match target {
        Value::Object(map) => {
            map.insert(last, value);
            Ok(())
        }
        Value::Array(list) => {
            let idx = index(&last, list.len(), true)?;
            list.insert(idx, value);
            Ok(())
        }
        _ => Err(JsonPatchError(format!(
            "cannot add below a scalar at {path}"
        ))),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, JsonPatchError> {
    let (target, last) = parent(doc, path)?;
    match target {
        Value::Object(map) => map
            .remove(&last)
            .ok_or_else(|| JsonPatchError(format!("nothing at {path}"))),
        Value::Array(list) => {
            let idx = index(&last, list.len(), false)?;
            Ok(list.remove(idx))
        }
        _ => Err(JsonPatchError(format!("nothing at {path}"))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn add_appends_with_dash() {
        let doc = json!({"status": {"conditions": [{"type": "Health"}]}});
        let out = apply(
            &doc,
            &json!([{"op": "add", "path": "/status/conditions/-", "value": {"type": "Applied"}}]),
        );
        assert_eq!(
            out.unwrap(),
            json!({"status": {"conditions": [{"type": "Health"}, {"type": "Applied"}]}})
        );
    }

    #[test]
    fn add_into_a_missing_list_fails() {
        let doc = json!({"status": {}});
        assert!(
            apply(
                &doc,
                &json!([{"op": "add", "path": "/status/conditions/-", "value": {}}])
            )
            .is_err()
        );
    }

    #[test]
    fn a_failing_test_rejects_the_whole_patch() {
        let doc = json!({"a": [1, 2]});
        let patch = json!([{"op": "replace", "path": "/a/0", "value": 9}, {"op": "test", "path": "/a/1", "value": 3}]);
        assert!(apply(&doc, &patch).is_err());
    }

    #[test]
    fn replace_move_copy_and_remove() {
        let doc = json!({"a": {"b~c": 1, "d/e": 2}, "l": [1, 2, 3]});
        let patch = json!([
            {"op": "replace", "path": "/a/b~0c", "value": 5},
            {"op": "copy", "from": "/a/d~1e", "path": "/x"},
            {"op": "move", "from": "/l/0", "path": "/l/-"},
            {"op": "remove", "path": "/l/0"}
        ]);
        assert_eq!(
            apply(&doc, &patch).unwrap(),
            json!({"a": {"b~c": 5, "d/e": 2}, "x": 2, "l": [3, 1]})
        );
    }
}
