//! Reads and writes of single objects: GET, POST, PUT, PATCH, DELETE on a resource or its `/status`.

use serde_json::{Value, json};

use super::patch::{self, PatchType};
use super::request::ResourceRequest;
use super::resources::{Behaviour, ResourceKind};
use super::status::{ApiError, FieldError, Target};
use super::store::{Collection, EventType, ObjectKey, Store, resource_version_of};
use super::strategic_merge::MergeKeys;
use super::{jobs, pods};

/// A successful answer: the object, and `Warning` texts for the response headers.
#[derive(Debug, Default)]
pub struct Written {
    pub object: Value,
    pub warnings: Vec<String>,
}

impl From<Value> for Written {
    fn from(object: Value) -> Self {
        Written {
            object,
            warnings: Vec::new(),
        }
    }
}

/// How unknown fields in a write are treated (`?fieldValidation=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValidation {
    /// Dropped with a `Warning` header (the default).
    Warn,
    /// Dropped silently.
    Ignore,
    /// Rejected with a 422.
    Strict,
}

impl FieldValidation {
    /// Parses the `fieldValidation` query parameter.
    pub fn from_query(value: Option<&str>) -> Self {
        match value {
            Some("Strict") => FieldValidation::Strict,
            Some("Ignore") => FieldValidation::Ignore,
            _ => FieldValidation::Warn,
        }
    }
}

/// Which part of an object a write may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The main resource: everything except `status`.
    Main,
    /// The `/status` subresource: `status`, plus `metadata.labels` and `metadata.annotations`.
    Status,
}

/// Everything a write needs to know about its target.
#[derive(Debug)]
pub struct Address {
    pub kind: ResourceKind,
    pub collection: Collection,
    pub key: ObjectKey,
    pub target: Target,
}

impl Address {
    /// The address of a named object; `None` when the request names none.
    pub fn of(request: &ResourceRequest) -> Option<Self> {
        let name = request.name.clone()?;
        Some(Address {
            kind: ResourceKind::lookup(&request.group, &request.version, &request.resource),
            collection: Collection::new(&request.group, &request.resource),
            key: (request.namespace.clone().unwrap_or_default(), name),
            target: request.target(),
        })
    }

    fn name(&self) -> &str {
        &self.key.1
    }
}

/// GET: the stored object or a 404.
pub fn get(store: &Store, address: &Address) -> Result<Value, ApiError> {
    store
        .get(&address.collection, &address.key)
        .cloned()
        .ok_or_else(|| ApiError::not_found(&address.target))
}

/// POST to a collection: assigns the server-managed fields; 409 if the name is taken.
pub fn create(
    store: &mut Store,
    request: &ResourceRequest,
    body: &[u8],
) -> Result<Value, ApiError> {
    let mut object: Value = decode(body)?;
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let name = match (
        name.is_empty(),
        object
            .pointer("/metadata/generateName")
            .and_then(Value::as_str),
    ) {
        (false, _) => name,
        (true, Some(prefix)) => format!("{prefix}{:05x}", store.resource_version() % 0xfffff),
        (true, None) => {
            let kind = ResourceKind::lookup(&request.group, &request.version, &request.resource);
            let error = FieldError::required("metadata.name", "name or generateName is required");
            return Err(ApiError::invalid(
                &kind.kind_group(),
                "",
                &kind.group,
                &kind.kind,
                &[error],
            ));
        }
    };
    object["metadata"]["name"] = json!(name);
    let mut named = request.clone();
    named.name = Some(name);
    let Some(address) = Address::of(&named) else {
        return Err(ApiError::route_not_found());
    };
    if address.kind.behaviour == Behaviour::Event {
        // Decoded and validated before the name is looked up: a bad Event is a 400 or 422
        // even when its name is taken.
        super::events::check_create(&mut object, &address.key.0, address.name())?;
    }
    if store.get(&address.collection, &address.key).is_some() {
        return Err(ApiError::already_exists(&address.target));
    }
    insert_new(store, &address, object)
}

/// Stores a new object (POST) with the kind's server-side defaults, after the create-time
/// validation (a Job's label values, its name included): a 422 stores nothing. Like the real
/// server, it sets `creationTimestamp` to now whatever the body says.
///
/// A Job is answered as the API server stored it — with its defaults and an empty `status`
/// (whatever status the body brought) — and then started by the job controller the fake does
/// not have: a second write (a new resourceVersion, a MODIFIED event) adds the controller's
/// first status (`startTime`, `active: 1`, …), so a later GET sees it, as on a real cluster.
pub fn insert_new(store: &mut Store, address: &Address, object: Value) -> Result<Value, ApiError> {
    if address.kind.behaviour != Behaviour::Job {
        return insert(store, address, object, None);
    }
    let mut object = object;
    if let Some(map) = object.as_object_mut() {
        map.insert("status".into(), json!({}));
    }
    let mut created = prepare_new(store, address, object);
    if let Some(map) = created.as_object_mut() {
        map.insert("status".into(), json!({}));
    }
    let errors = jobs::validate_create(&created);
    if !errors.is_empty() {
        return Err(invalid(address, &errors));
    }
    let answer = store.commit(
        &address.collection,
        address.key.clone(),
        EventType::Added,
        created,
    );
    let mut started = answer.clone();
    jobs::default_status(&mut started);
    if started != answer {
        store.commit(
            &address.collection,
            address.key.clone(),
            EventType::Modified,
            started,
        );
    }
    Ok(answer)
}

/// Stores a seeded object as [`insert_new`] does, except that a valid `creationTimestamp` it
/// brings is kept (stored at whole seconds, as the server stores times): a seeded object may
/// have been created before the test started, e.g. a certificate signing request pending for
/// 20 minutes.
pub fn seed(store: &mut Store, address: &Address, object: Value) -> Result<Value, ApiError> {
    let created = object
        .pointer("/metadata/creationTimestamp")
        .and_then(Value::as_str)
        .and_then(|t| super::time::normalise(t).ok());
    insert(store, address, object, created)
}

fn insert(
    store: &mut Store,
    address: &Address,
    object: Value,
    created: Option<String>,
) -> Result<Value, ApiError> {
    let mut object = object;
    if address.kind.behaviour == Behaviour::Pod {
        super::service_accounts::admit(store, &address.key.0, &mut object);
    }
    let mut object = prepare_new(store, address, object);
    if let Some(created) = created {
        object["metadata"]["creationTimestamp"] = json!(created);
    }
    if address.kind.behaviour == Behaviour::Job {
        let errors = jobs::validate_create(&object);
        if !errors.is_empty() {
            return Err(invalid(address, &errors));
        }
    }
    let kind = if store.get(&address.collection, &address.key).is_some() {
        EventType::Modified
    } else {
        EventType::Added
    };
    Ok(store.commit(&address.collection, address.key.clone(), kind, object))
}

/// A new object with the server-assigned metadata and the kind's defaults.
fn prepare_new(store: &mut Store, address: &Address, mut object: Value) -> Value {
    store.stamp_new(
        &mut object,
        &address.key.0,
        address.kind.tracks_generation(),
    );
    object["metadata"]["name"] = json!(address.name());
    if let Some(map) = object.as_object_mut() {
        map.entry("apiVersion")
            .or_insert_with(|| json!(address.kind.api_version()));
        map.entry("kind")
            .or_insert_with(|| json!(address.kind.kind));
    }
    match address.kind.behaviour {
        Behaviour::Job => {
            jobs::default_on_create(&mut object);
            jobs::default_status(&mut object);
            // Store seeded conditions as a write would; a bad time is kept as given.
            let mut normalised = object.clone();
            if jobs::normalise_conditions(&mut normalised).is_ok() {
                object = normalised;
            }
        }
        Behaviour::Pod => {
            pods::default_status(&mut object);
            pods::normalise_container_statuses(&mut object);
        }
        Behaviour::Event => super::events::default_on_create(&mut object),
        Behaviour::Generic => {
            super::crd_defaults::apply(&address.kind.group, &address.kind.resource, &mut object);
        }
    }
    object
}

/// PUT: a full object; an empty `metadata.resourceVersion` is an unconditional update.
pub fn replace(
    store: &mut Store,
    address: &Address,
    part: Part,
    body: &[u8],
    validation: FieldValidation,
) -> Result<Written, ApiError> {
    let old = get(store, address)?;
    let new: Value = decode(body)?;
    if new
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .is_some_and(|n| n != address.name())
    {
        return Err(ApiError::bad_request(
            "the name of the object does not match the name on the URL".to_owned(),
        ));
    }
    let shown = new.clone();
    write(
        store,
        address,
        part,
        &old,
        new,
        &Sent {
            body: &shown,
            validation,
        },
    )
}

/// PATCH with any of the four patch types.
pub fn patch(
    store: &mut Store,
    address: &Address,
    part: Part,
    content_type: Option<&str>,
    body: &[u8],
    validation: FieldValidation,
) -> Result<Written, ApiError> {
    let patch_type = PatchType::from_content_type(content_type)?;
    let old = get(store, address)?;
    let keys = if patch_type == PatchType::Strategic {
        address.kind.merge_keys
    } else {
        MergeKeys::NONE
    };
    let patched = patch::apply(patch_type, &old, body, keys)?;
    let shown: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    write(
        store,
        address,
        part,
        &old,
        patched,
        &Sent {
            body: &shown,
            validation,
        },
    )
}

/// DELETE: removes the object and answers with it. An object with `metadata.finalizers` is only
/// marked (`deletionTimestamp`, `deletionGracePeriodSeconds: 0`, a MODIFIED event) and stays until
/// a write removes the last finalizer; deleting it again answers the object unchanged.
pub fn delete(store: &mut Store, address: &Address) -> Result<Value, ApiError> {
    let old = get(store, address)?;
    if !has_finalizers(&old) {
        return store
            .delete(&address.collection, &address.key)
            .ok_or_else(|| ApiError::not_found(&address.target));
    }
    if old.pointer("/metadata/deletionTimestamp").is_some() {
        return Ok(old);
    }
    let mut marked = old;
    marked["metadata"]["deletionTimestamp"] = json!(super::time::now());
    marked["metadata"]["deletionGracePeriodSeconds"] = json!(0);
    // The API server bumps a non-zero generation when it sets the deletionTimestamp.
    if let Some(generation) = marked
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .filter(|g| *g > 0)
    {
        marked["metadata"]["generation"] = json!(generation + 1);
    }
    Ok(store.commit(
        &address.collection,
        address.key.clone(),
        EventType::Modified,
        marked,
    ))
}

fn has_finalizers(object: &Value) -> bool {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty())
}

/// What the client sent, for unknown-field handling.
#[derive(Debug)]
struct Sent<'a> {
    /// The request body as JSON (shown in a strict-mode 422).
    body: &'a Value,
    validation: FieldValidation,
}

impl Sent<'_> {
    /// `Warning` texts for dropped fields, or the strict-mode 422.
    fn unknown_fields(&self, unknown: &[String]) -> Result<Vec<String>, ApiError> {
        let texts: Vec<String> = unknown
            .iter()
            .map(|f| format!("unknown field {f:?}"))
            .collect();
        match self.validation {
            FieldValidation::Strict if !texts.is_empty() => {
                Err(ApiError::strict_decoding(self.body, &texts.join(", ")))
            }
            FieldValidation::Warn => Ok(texts),
            _ => Ok(Vec::new()),
        }
    }
}

/// The common tail of PUT and PATCH: decode, preconditions, validation, no-op detection, commit.
fn write(
    store: &mut Store,
    address: &Address,
    part: Part,
    old: &Value,
    mut new: Value,
    sent: &Sent<'_>,
) -> Result<Written, ApiError> {
    let mut unknown = Vec::new();
    if address.kind.behaviour == Behaviour::Job {
        unknown = jobs::normalise_conditions(&mut new)
            .map_err(|problem| ApiError::invalid_patch(&new, &problem))?;
    }
    if address.kind.behaviour == Behaviour::Pod {
        pods::normalise_container_statuses(&mut new);
    }
    super::crd_defaults::apply(&address.kind.group, &address.kind.resource, &mut new);
    let warnings = sent.unknown_fields(&unknown)?;
    check_resource_version(old, &new, &address.target)?;
    check_uid(old, &new, address)?;
    let result = project(old, new, part, &address.kind);
    if address.kind.behaviour == Behaviour::Job && part == Part::Status {
        let errors = jobs::validate_status_update(old, &result);
        if !errors.is_empty() {
            return Err(invalid(address, &errors));
        }
    }
    if &result == old {
        return Ok(Written {
            object: result,
            warnings,
        });
    }
    // The last finalizer of an object being deleted is gone: the deletion completes.
    if result.pointer("/metadata/deletionTimestamp").is_some() && !has_finalizers(&result) {
        let object = store.commit(
            &address.collection,
            address.key.clone(),
            EventType::Deleted,
            result,
        );
        return Ok(Written { object, warnings });
    }
    let object = store.commit(
        &address.collection,
        address.key.clone(),
        EventType::Modified,
        result,
    );
    Ok(Written { object, warnings })
}

fn invalid(address: &Address, errors: &[FieldError]) -> ApiError {
    ApiError::invalid(
        &address.kind.kind_group(),
        address.name(),
        &address.kind.group,
        &address.kind.kind,
        errors,
    )
}

/// A non-empty `metadata.resourceVersion` must parse and equal the stored one.
fn check_resource_version(old: &Value, new: &Value, target: &Target) -> Result<(), ApiError> {
    let Some(wanted) = new
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())
    else {
        return Ok(());
    };
    let wanted: u64 = wanted.parse().map_err(|_| {
        ApiError::bare_500(format!(
            "strconv.ParseUint: parsing {wanted:?}: invalid syntax"
        ))
    })?;
    if Some(wanted) == resource_version_of(old) {
        Ok(())
    } else {
        Err(ApiError::conflict(target))
    }
}

fn check_uid(old: &Value, new: &Value, address: &Address) -> Result<(), ApiError> {
    let wanted = new
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty());
    match wanted {
        Some(uid) if Some(uid) != old.pointer("/metadata/uid").and_then(Value::as_str) => {
            let error = FieldError::invalid(
                "metadata.uid",
                Some(format!("{uid:?}")),
                "field is immutable",
            );
            Err(invalid(address, &[error.clone(), error]))
        }
        _ => Ok(()),
    }
}

/// The stored result of a write to `part`: a status write keeps everything but status, labels and
/// annotations; a main write keeps status and the server-managed metadata.
fn project(old: &Value, new: Value, part: Part, kind: &ResourceKind) -> Value {
    let has_status = kind.has_status;
    let mut result = match part {
        Part::Status => {
            let mut result = old.clone();
            copy(&new, &mut result, "status");
            for field in ["labels", "annotations"] {
                copy_meta(&new, &mut result, field);
            }
            result
        }
        Part::Main => {
            let mut result = new;
            if has_status {
                copy(old, &mut result, "status");
            }
            for field in [
                "uid",
                "creationTimestamp",
                "namespace",
                "name",
                "generation",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
            ] {
                copy_meta(old, &mut result, field);
            }
            if kind.tracks_generation() && old.get("spec") != result.get("spec") {
                let generation = old
                    .pointer("/metadata/generation")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                result["metadata"]["generation"] = json!(generation + 1);
            }
            result
        }
    };
    copy_meta(old, &mut result, "resourceVersion");
    result
}

fn copy(from: &Value, to: &mut Value, field: &str) {
    if let Some(to) = to.as_object_mut() {
        match from.get(field) {
            Some(value) => to.insert(field.to_owned(), value.clone()),
            None => to.remove(field),
        };
    }
}

fn copy_meta(from: &Value, to: &mut Value, field: &str) {
    if !to.get("metadata").is_some_and(Value::is_object) {
        to["metadata"] = json!({});
    }
    copy(&from["metadata"], &mut to["metadata"], field);
}

fn decode(body: &[u8]) -> Result<Value, ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding body: {e}")))?;
    if value.is_object() {
        Ok(value)
    } else {
        Err(ApiError::bad_request(
            "the body must be a JSON object".to_owned(),
        ))
    }
}
