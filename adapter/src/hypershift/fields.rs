//! Optional fields of the objects sent to a management cluster.

use serde_json::{Map, Value};

/// A JSON object of the `fields` that are set, in their order: an optional field is omitted
/// rather than sent empty (the HyperShift CRDs refuse many empty values).
pub(super) fn present(
    fields: impl IntoIterator<Item = (&'static str, Option<Value>)>,
) -> Map<String, Value> {
    fields
        .into_iter()
        .filter_map(|(key, value)| Some((key.to_owned(), value?)))
        .collect()
}

/// `list` when it has entries.
pub(super) fn nonempty<T>(list: &[T]) -> Option<&[T]> {
    (!list.is_empty()).then_some(list)
}

/// A JSON list of `list`'s entries, each as `entry` writes it, when it has entries.
pub(super) fn list_of<T>(list: &[T], entry: impl Fn(&T) -> Value) -> Option<Value> {
    nonempty(list).map(|list| list.iter().map(entry).collect())
}
