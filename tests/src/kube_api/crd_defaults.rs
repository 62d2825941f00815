//! The `default`s of the CRDs the fake serves with their real schema: the API server applies a
//! CRD's structural defaults to every custom resource it stores, so a ManifestWork reads back
//! with e.g. `spec.manifestConfigs[].feedbackScrapeType: Poll` and
//! `spec.deleteOption.propagationPolicy: Foreground` although the writer left them out.
//! Schema: `manifests/kind/crds/manifestworks.work.open-cluster-management.io.yaml` (the same
//! file the team folder's kit installs on its real API server).

use std::sync::OnceLock;

use serde_json::Value;

const MANIFEST_WORK_CRD: &str =
    include_str!("../../../manifests/kind/crds/manifestworks.work.open-cluster-management.io.yaml");

/// The `openAPIV3Schema` of ManifestWork v1 (`Null` if the embedded CRD cannot be read, which
/// a unit test rules out).
fn manifest_work_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let crd: Value = serde_saphyr::from_str(MANIFEST_WORK_CRD).unwrap_or(Value::Null);
        crd["spec"]["versions"]
            .as_array()
            .and_then(|versions| versions.iter().find(|v| v["name"] == "v1"))
            .map(|v| v["schema"]["openAPIV3Schema"].clone())
            .unwrap_or(Value::Null)
    })
}

/// Applies the CRD defaults of `(group, resource)` to `object`, when the fake knows its CRD.
pub fn apply(group: &str, resource: &str, object: &mut Value) {
    if (group, resource) == ("work.open-cluster-management.io", "manifestworks") {
        crate::openapi::apply_defaults(manifest_work_schema(), object);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_manifest_work_gets_the_crd_defaults_where_its_objects_are() {
        assert!(manifest_work_schema().is_object());
        let mut work = json!({"spec": {
            "workload": {"manifests": []},
            "deleteOption": {},
            "manifestConfigs": [{"resourceIdentifier": {"name": "x", "resource": "r"},
                                 "updateStrategy": {"serverSideApply": {}}}],
        }});
        apply(
            "work.open-cluster-management.io",
            "manifestworks",
            &mut work,
        );
        assert_eq!(
            work["spec"]["deleteOption"]["propagationPolicy"],
            "Foreground"
        );
        let config = &work["spec"]["manifestConfigs"][0];
        assert_eq!(config["feedbackScrapeType"], "Poll");
        assert_eq!(config["updateStrategy"]["type"], "Update");
        assert_eq!(
            config["updateStrategy"]["serverSideApply"]["fieldManager"],
            "work-agent"
        );
        let mut bare = json!({"spec": {"workload": {"manifests": []}}});
        apply(
            "work.open-cluster-management.io",
            "manifestworks",
            &mut bare,
        );
        assert_eq!(
            bare["spec"].get("deleteOption"),
            None,
            "no default where the parent is absent"
        );
    }
}
