//! The `ManagementCluster` entity as the HyperFleet API presents it (`fixtures/hyperfleet/real-api/47`,
//! `50`, `53`) and as the file inventory holds it (the same shape, `status` optional), and its
//! health from the aggregated conditions.

use serde_json::Value;

/// The spec keys this adapter defines for the entity (docs/placement.md).
pub const SPEC_REGION: &str = "region";
/// The Maestro consumer of the management cluster.
pub const SPEC_MAESTRO_CONSUMER: &str = "maestro_consumer";
/// Capacity in hosted control planes (integer ≥ 0).
pub const SPEC_MAX_HOSTED_CLUSTERS: &str = "max_hosted_clusters";
/// Optional: true = accepts no new control planes.
pub const SPEC_CORDONED: &str = "cordoned";

/// The spec of one management cluster, once every required key is there with the right type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McSpec {
    pub region: String,
    pub maestro_consumer: String,
    pub max_hosted_clusters: u64,
    pub cordoned: bool,
}

/// One aggregated condition of the entity (`status.conditions[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McCondition {
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub observed_generation: Option<i64>,
}

/// One `ManagementCluster` entity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagementCluster {
    /// `name`, else `id`, else `(unnamed)`: how messages name it.
    pub name: String,
    /// The spec, or why it is passed over (`invalid spec: <field> …`).
    pub spec: Result<McSpec, String>,
    /// The entity's `generation` (0 when absent).
    pub generation: i64,
    /// `deleted_time`, when the entity is being deleted.
    pub deleted_time: Option<String>,
    /// `status.conditions`; `None` when the item has no `status` (file inventory: the operator's
    /// word, taken as healthy).
    pub conditions: Option<Vec<McCondition>>,
}

/// The health class of a management cluster (docs/placement.md "Health of a management cluster").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// May receive new control planes.
    Healthy,
    /// An outage: the detail quotes the deciding condition.
    Unavailable(String),
    /// Not eligible for new control planes, not an outage.
    NotReady(String),
}

impl ManagementCluster {
    /// Parses one item of a list (API answer or file). Never fails: a bad spec is kept as the
    /// reason the item is passed over.
    pub fn from_value(item: &Value) -> Self {
        let text = |key: &str| {
            item.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let name = text("name")
            .or_else(|| text("id"))
            .unwrap_or("(unnamed)")
            .to_owned();
        let conditions = item.get("status").map(|status| {
            status
                .get("conditions")
                .and_then(Value::as_array)
                .map(|list| list.iter().map(condition).collect())
                .unwrap_or_default()
        });
        Self {
            name,
            spec: parse_spec(item.get("spec")),
            generation: item.get("generation").and_then(Value::as_i64).unwrap_or(0),
            deleted_time: text("deleted_time").map(str::to_owned),
            conditions,
        }
    }

    /// The condition `type_`, if reported.
    pub fn condition(&self, type_: &str) -> Option<&McCondition> {
        self.conditions
            .as_ref()
            .and_then(|c| c.iter().find(|c| c.type_ == type_))
    }

    /// The health rule: Healthy = `Reconciled` True at the entity's generation and no
    /// `deleted_time`; Unavailable = `LastKnownReconciled` False or `deleted_time`; NotReady =
    /// anything else. An item without `status` (file inventory) is Healthy unless deleted.
    pub fn health(&self) -> Health {
        if let Some(deleted) = &self.deleted_time {
            return Health::Unavailable(format!("deleted at {deleted}"));
        }
        if self.conditions.is_none() {
            return Health::Healthy;
        }
        if let Some(lkr) = self.condition("LastKnownReconciled")
            && lkr.status == "False"
        {
            return Health::Unavailable(describe(lkr, "LastKnownReconciled"));
        }
        match self.condition("Reconciled") {
            Some(c) if c.status == "True" && c.observed_generation == Some(self.generation) => {
                Health::Healthy
            }
            Some(c) if c.status == "True" => Health::NotReady(format!(
                "Reconciled=True at generation {} but the entity is at generation {}",
                c.observed_generation
                    .map_or_else(|| "(none)".to_owned(), |g| g.to_string()),
                self.generation
            )),
            Some(c) => Health::NotReady(describe(c, "Reconciled")),
            None => Health::NotReady("no Reconciled condition reported".to_owned()),
        }
    }
}

/// `Reconciled=False at generation 3 (ReconciledMissingAdapters)`.
fn describe(c: &McCondition, type_: &str) -> String {
    let generation = c
        .observed_generation
        .map_or_else(|| "(none)".to_owned(), |g| g.to_string());
    if c.reason.is_empty() {
        format!("{type_}={} at generation {generation}", c.status)
    } else {
        format!(
            "{type_}={} at generation {generation} ({})",
            c.status, c.reason
        )
    }
}

fn condition(value: &Value) -> McCondition {
    let text = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    McCondition {
        type_: text("type"),
        status: text("status"),
        reason: text("reason"),
        observed_generation: value.get("observed_generation").and_then(Value::as_i64),
    }
}

fn parse_spec(spec: Option<&Value>) -> Result<McSpec, String> {
    let Some(spec) = spec.and_then(Value::as_object) else {
        return Err(
            "invalid spec: spec is missing or not an object; set spec.region, spec.maestro_consumer and spec.max_hosted_clusters"
                .to_owned(),
        );
    };
    let string = |key: &str| match spec.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(format!("invalid spec: spec.{key} is empty; set it")),
        Some(other) => Err(format!(
            "invalid spec: spec.{key} must be a string, not {}",
            kind(other)
        )),
        None => Err(format!("invalid spec: spec.{key} is missing; set it")),
    };
    let region = string(SPEC_REGION)?;
    let maestro_consumer = string(SPEC_MAESTRO_CONSUMER)?;
    let max_hosted_clusters = match spec.get(SPEC_MAX_HOSTED_CLUSTERS) {
        Some(v) => v.as_u64().ok_or_else(|| {
            format!("invalid spec: spec.{SPEC_MAX_HOSTED_CLUSTERS} must be an integer ≥ 0, not {v}")
        })?,
        None => {
            return Err(format!(
                "invalid spec: spec.{SPEC_MAX_HOSTED_CLUSTERS} is missing; set it to the number of hosted control planes the management cluster holds"
            ));
        }
    };
    let cordoned = match spec.get(SPEC_CORDONED) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(format!(
                "invalid spec: spec.{SPEC_CORDONED} must be true or false, not {}",
                kind(other)
            ));
        }
    };
    Ok(McSpec {
        region,
        maestro_consumer,
        max_hosted_clusters,
        cordoned,
    })
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The items of a list answer `{"items": [...]}` or a bare array; `Err` names what is wrong.
pub fn parse_list(value: &Value, what: &str) -> Result<Vec<ManagementCluster>, String> {
    let items = match value {
        Value::Array(items) => items,
        Value::Object(map) => match map.get("items") {
            Some(Value::Array(items)) => items,
            Some(Value::Null) => return Ok(Vec::new()),
            Some(other) => {
                return Err(format!(
                    "{what}: `items` must be an array of ManagementCluster entities, not {}",
                    kind(other)
                ));
            }
            None => {
                return Err(format!(
                    "{what}: expected {{\"items\": [<ManagementCluster>...]}} or an array; there is no `items` key"
                ));
            }
        },
        other => {
            return Err(format!(
                "{what}: expected {{\"items\": [<ManagementCluster>...]}} or an array, not {}",
                kind(other)
            ));
        }
    };
    Ok(items.iter().map(ManagementCluster::from_value).collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn recorded(name: &str) -> Option<Value> {
        let dir = job_report::team_folder::find(
            env!("CARGO_MANIFEST_DIR"),
            "fixtures/hyperfleet/real-api",
        )?;
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        Some(v["response"]["body"].clone())
    }

    #[test]
    fn the_recorded_entity_before_its_health_report_is_unavailable_and_after_it_healthy() {
        let Some(created) = recorded("47-mgmt-create.json") else {
            return;
        };
        let mc = ManagementCluster::from_value(&created);
        assert_eq!(mc.name, "mgmt-use1-a");
        assert_eq!(
            mc.spec,
            Ok(McSpec {
                region: "us-east1".into(),
                maestro_consumer: "mgmt-use1-a".into(),
                max_hosted_clusters: 200,
                cordoned: false
            })
        );
        // No adapter ever reported: LastKnownReconciled False is an outage.
        assert_eq!(
            mc.health(),
            Health::Unavailable(
                "LastKnownReconciled=False at generation 1 (AdaptersMissingReports)".into()
            )
        );
        let Some(after) = recorded("50-mgmt-get-after-status.json") else {
            return;
        };
        assert_eq!(
            ManagementCluster::from_value(&after).health(),
            Health::Healthy
        );
        let Some(list) = recorded("53-mgmt-list.json") else {
            return;
        };
        let items = parse_list(&list, "list").unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].health(), Health::Healthy);
    }

    fn entity(status: Value) -> Value {
        json!({"id": "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b", "kind": "ManagementCluster",
               "name": "mgmt-use1-a", "generation": 3,
               "spec": {"region": "us-east1", "maestro_consumer": "mgmt-use1-a", "max_hosted_clusters": 200},
               "status": status})
    }

    fn cond(type_: &str, status: &str, reason: &str, generation: i64) -> Value {
        json!({"type": type_, "status": status, "reason": reason, "observed_generation": generation,
               "message": "m", "created_time": "2026-11-26T14:14:42Z",
               "last_transition_time": "2026-11-26T14:14:42Z", "last_updated_time": "2026-11-26T14:14:42Z"})
    }

    #[test]
    fn a_spec_edit_not_yet_reconciled_is_not_ready_not_an_outage() {
        let mc = ManagementCluster::from_value(&entity(json!({"conditions": [
            cond("Reconciled", "False", "ReconciledMissingAdapters", 3),
            cond("LastKnownReconciled", "True", "AllAdaptersReconciled", 2)]})));
        assert_eq!(
            mc.health(),
            Health::NotReady("Reconciled=False at generation 3 (ReconciledMissingAdapters)".into())
        );
        // Reconciled True but for an older generation: not ready either.
        let stale = ManagementCluster::from_value(&entity(json!({"conditions": [
            cond("Reconciled", "True", "ReconciledAll", 2),
            cond("LastKnownReconciled", "True", "AllAdaptersReconciled", 2)]})));
        assert!(matches!(stale.health(), Health::NotReady(d) if d.contains("generation 3")));
    }

    #[test]
    fn a_deleted_entity_is_unavailable_and_a_file_item_without_status_is_healthy() {
        let mut deleted =
            entity(json!({"conditions": [cond("Reconciled", "True", "ReconciledAll", 3)]}));
        deleted["deleted_time"] = json!("2026-11-26T14:20:00Z");
        assert!(matches!(
            ManagementCluster::from_value(&deleted).health(),
            Health::Unavailable(d) if d.contains("deleted")
        ));
        let mut bare = entity(Value::Null);
        bare.as_object_mut().unwrap().remove("status");
        assert_eq!(
            ManagementCluster::from_value(&bare).health(),
            Health::Healthy
        );
    }

    #[test]
    fn a_bad_spec_is_passed_over_naming_the_field_never_a_crash() {
        let cases = [
            (
                json!({"maestro_consumer": "c", "max_hosted_clusters": 1}),
                "spec.region is missing",
            ),
            (
                json!({"region": 7, "maestro_consumer": "c", "max_hosted_clusters": 1}),
                "spec.region must be a string",
            ),
            (
                json!({"region": "r", "max_hosted_clusters": 1}),
                "spec.maestro_consumer is missing",
            ),
            (
                json!({"region": "r", "maestro_consumer": "", "max_hosted_clusters": 1}),
                "spec.maestro_consumer is empty",
            ),
            (
                json!({"region": "r", "maestro_consumer": "c"}),
                "spec.max_hosted_clusters is missing",
            ),
            (
                json!({"region": "r", "maestro_consumer": "c", "max_hosted_clusters": -1}),
                "spec.max_hosted_clusters must be an integer",
            ),
            (
                json!({"region": "r", "maestro_consumer": "c", "max_hosted_clusters": "200"}),
                "spec.max_hosted_clusters must be an integer",
            ),
            (
                json!({"region": "r", "maestro_consumer": "c", "max_hosted_clusters": 1, "cordoned": "yes"}),
                "spec.cordoned must be true or false",
            ),
            (json!("text"), "spec is missing or not an object"),
        ];
        for (spec, want) in cases {
            let mc = ManagementCluster::from_value(&json!({"name": "mgmt-use1-a", "spec": spec}));
            let err = mc.spec.unwrap_err();
            assert!(
                err.starts_with("invalid spec: ") && err.contains(want),
                "{want}: {err}"
            );
        }
    }

    #[test]
    fn a_list_is_an_items_object_or_an_array_and_anything_else_is_named() {
        let item = entity(Value::Null);
        assert_eq!(
            parse_list(&json!({"items": [item.clone()]}), "f")
                .unwrap()
                .len(),
            1
        );
        assert_eq!(parse_list(&json!([item]), "f").unwrap().len(), 1);
        assert!(
            parse_list(&json!({"kind": "x"}), "f")
                .unwrap_err()
                .contains("no `items` key")
        );
        assert!(
            parse_list(&json!({"items": 3}), "f")
                .unwrap_err()
                .contains("`items` must be an array")
        );
        assert!(
            parse_list(&json!("x"), "f")
                .unwrap_err()
                .contains("not a string")
        );
    }
}
