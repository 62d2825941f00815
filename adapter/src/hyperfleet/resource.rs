//! The generic resource presentation the HyperFleet API serves for clusters and NodePools
//! (`hyperfleet-framework.md` §7.1): `{id, name, generation, deleted_time, owner_references,
//! spec, …}`, or, from a file, just a `spec`. Only what the adapter reads is kept; the spec stays
//! raw JSON for its kind's validation.

use serde_json::{Map, Value};

use super::spec::json_kind;

/// Why an input could not be read at all (before field validation). `kind` is `cluster` or
/// `NodePool`.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{kind} input is not valid JSON: {source}")]
    Json {
        kind: &'static str,
        source: serde_json::Error,
    },
    #[error("{kind} input must be a JSON object (a HyperFleet {kind} or its spec), found {found}")]
    NotAnObject {
        kind: &'static str,
        found: &'static str,
    },
    #[error("{kind} object field `{field}` must be {expected}, found {found}")]
    Field {
        kind: &'static str,
        field: &'static str,
        expected: &'static str,
        found: &'static str,
    },
}

/// A HyperFleet resource as the adapter reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resource {
    pub id: Option<String>,
    pub name: Option<String>,
    pub generation: Option<i64>,
    /// `deleted_time` (RFC 3339) while the resource is being deleted (soft delete,
    /// `hyperfleet-framework.md` §6).
    pub deleted_time: Option<String>,
    /// `owner_references.id` (a NodePool's cluster).
    pub owner_id: Option<String>,
    pub spec: Map<String, Value>,
}

impl Resource {
    /// Parses a resource of `kind` or a bare spec from JSON text.
    pub fn from_json(text: &str, kind: &'static str) -> Result<Self, InputError> {
        let value =
            serde_json::from_str(text).map_err(|source| InputError::Json { kind, source })?;
        Self::from_value(value, kind)
    }

    /// A JSON object with an object-valued `spec` is a resource; any other object is a bare spec.
    pub fn from_value(value: Value, kind: &'static str) -> Result<Self, InputError> {
        let Value::Object(mut object) = value else {
            return Err(InputError::NotAnObject {
                kind,
                found: json_kind(&value),
            });
        };
        if !matches!(object.get("spec"), Some(Value::Object(_))) {
            return Ok(Resource {
                spec: object,
                ..Resource::default()
            });
        }
        let field = |field: &'static str, expected: &'static str, v: &Value| InputError::Field {
            kind,
            field,
            expected,
            found: json_kind(v),
        };
        let string = |object: &Map<String, Value>, name: &'static str| match object.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(field(name, "a string", v)),
        };
        let id = string(&object, "id")?;
        let name = string(&object, "name")?;
        let deleted_time = string(&object, "deleted_time")?.filter(|t| !t.is_empty());
        let generation = match object.get("generation") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_i64()
                    .ok_or_else(|| field("generation", "an integer", v))?,
            ),
        };
        let owner_id = match object.get("owner_references") {
            None | Some(Value::Null) => None,
            Some(Value::Object(owner)) => match owner.get("id") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(v) => return Err(field("owner_references.id", "a string", v)),
            },
            Some(v) => return Err(field("owner_references", "an object {id, kind, href}", v)),
        };
        let Some(Value::Object(spec)) = object.remove("spec") else {
            return Err(InputError::NotAnObject {
                kind,
                found: "nothing",
            });
        };
        Ok(Resource {
            id,
            name,
            generation,
            deleted_time,
            owner_id,
            spec,
        })
    }
}
