//! Immutable fields: a change the CRD's transition rules (`oldSelf`) refuse, named by the
//! HyperFleet spec field that sets it, with the value held and the value a pulse would send.

use serde_json::Value;

/// One immutable field whose value would change.
#[derive(Debug, Clone, PartialEq)]
pub struct ImmutableChange {
    /// The object's kind (`HostedCluster`, `NodePool`).
    pub kind: &'static str,
    /// The HyperFleet spec field that sets it (e.g. `spec.platform.gcp.region`), or the resource's `name`; a
    /// field without a spec counterpart (`spec.platform.type`) is named by its object path.
    pub field: &'static str,
    /// The object path, e.g. `spec.platform.gcp.region`.
    pub path: String,
    /// Value held on the management cluster (the work's object).
    pub old: Value,
    /// Value this pulse would send.
    pub new: Value,
}

impl std::fmt::Display for ImmutableChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path_note = if self.field == self.path {
            String::new()
        } else {
            format!(" ({} {})", self.kind, self.path)
        };
        write!(
            f,
            "{}{path_note}: {} → {}",
            self.field,
            show(&self.old),
            show(&self.new)
        )
    }
}

/// A value as it reads in a message: strings quoted, absent as `<not set>`, bounded.
pub fn show(value: &Value) -> String {
    const MAX: usize = 200;
    let text = match value {
        Value::Null => "<not set>".to_owned(),
        other => other.to_string(),
    };
    if text.chars().count() > MAX {
        let head: String = text.chars().take(MAX).collect();
        format!("{head}…")
    } else {
        text
    }
}

/// The object path (`spec.platform.gcp.region`) of a JSON pointer.
pub fn dotted(pointer: &str) -> String {
    pointer.trim_start_matches('/').replace('/', ".")
}

/// Every field of `fields` (`(field, the object holding it, its key)` with the object as a JSON
/// pointer, in report order) whose value, `read` at its pointer, differs between the `kind`
/// objects `old` and `new`; `spec_field` names the spec field that sets it.
pub(super) fn changes<F>(
    kind: &'static str,
    fields: &[(F, &str, &str)],
    spec_field: impl Fn(&F) -> &'static str,
    [old, new]: [&Value; 2],
    read: impl Fn(&Value, &str) -> Value,
) -> Vec<ImmutableChange> {
    fields
        .iter()
        .filter_map(|(field, object, key)| {
            let pointer = format!("{object}/{key}");
            let (old, new) = (read(old, &pointer), read(new, &pointer));
            (old != new).then(|| ImmutableChange {
                kind,
                field: spec_field(field),
                path: dotted(&pointer),
                old,
                new,
            })
        })
        .collect()
}

/// The value at `pointer` of `object`; when it is absent or null, `default` (else null).
pub(super) fn held(object: &Value, pointer: &str, default: Option<Value>) -> Value {
    match object.pointer(pointer) {
        None | Some(Value::Null) => default.unwrap_or(Value::Null),
        Some(value) => value.clone(),
    }
}
