//! What a NodePool update may not change: the CRD's transition rules (`oldSelf`,
//! `hypershift-api.md` §3.1–§3.2) on the fields the adapter sends — `clusterName`,
//! `platform.type`, `arch`, `management.upgradeType` — plus `metadata.name`/`namespace`
//! (renaming would make the work agent delete the NodePool and create another one). Everything
//! else (replicas, autoscaling, release, machine type, zone, disks, labels, tags) rolls out in
//! place or through new machines. Each is named by the spec field that sets it, in the spelling
//! of the spec ([`Shape`]): `management.upgradeType` in HyperFleet's, `management.upgrade_type`
//! in the flat one.

use serde_json::Value;

use crate::hyperfleet::nodepool::Shape;
use crate::hypershift::immutable::{ImmutableChange, changes, held};

/// The spec field that sets a NodePool field, in the spelling of the spec's shape.
type Field = fn(Shape) -> &'static str;

/// `(spec field, the NodePool object holding the field, its key)`, in report order.
const IMMUTABLE: &[(Field, &str, &str)] = &[
    (|_| "name", "/metadata", "name"),
    (|_| "metadata.namespace", "/metadata", "namespace"),
    (|_| "spec.clusterName", "/spec", "clusterName"),
    (|_| "platform.type", "/spec/platform", "type"),
    (|_| "arch", "/spec", "arch"),
    (Shape::upgrade_type_field, "/spec/management", "upgradeType"),
];

/// The value at `pointer` of a NodePool; an omitted `spec.arch` is what the API server defaults
/// it to, `amd64`.
fn read(np: &Value, pointer: &str) -> Value {
    let default = (pointer == "/spec/arch").then(|| Value::from("amd64"));
    held(np, pointer, default)
}

/// Every immutable field whose value differs between the NodePool on the management cluster
/// (`old`) and the one built now (`new`) from a spec of `shape`, in a fixed order. Empty: the
/// update may be sent.
pub fn immutable_changes(old: &Value, new: &Value, shape: Shape) -> Vec<ImmutableChange> {
    changes(super::KIND, IMMUTABLE, |f| f(shape), [old, new], read)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use serde_json::json;

    use super::*;
    use crate::hyperfleet::nodepool::fixture;
    use crate::hypershift::nodepool::{Placement, node_pool};

    const PLACEMENT: Placement<'static> = Placement {
        namespace: "clusters",
        cluster_name: "prod-eu-1",
        default_subnet: Some("hcp-psc-subnet"),
        region: Some("europe-west2"),
        release_image: Some("quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"),
    };

    fn np(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
        node_pool(&fixture::spec_with(edit), &PLACEMENT)
    }

    #[test]
    fn scaling_release_and_machines_may_change() {
        let old = np(|_| {});
        let new = np(|s| {
            s.insert("replicas".into(), json!(5));
            s.insert(
                "release".into(),
                json!({"image": "quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64"}),
            );
            let gcp = s["platform"]["gcp"].as_object_mut().unwrap();
            gcp.insert("machine_type".into(), json!("n2-standard-16"));
            gcp.insert("zone".into(), json!("europe-west2-b"));
        });
        assert_ne!(old, new);
        assert!(immutable_changes(&old, &new, Shape::Flat).is_empty());
        let autoscaled = np(|s| {
            s.remove("replicas");
            s.insert("autoscaling".into(), json!({"min": 1, "max": 4}));
        });
        assert!(immutable_changes(&old, &autoscaled, Shape::Flat).is_empty());
    }

    #[test]
    fn platform_arch_and_upgrade_type_are_named_with_old_and_new() {
        let old = np(|_| {});
        let new = np(|s| {
            s.insert("platform".into(), json!({"type": "none"}));
            s.insert("arch".into(), json!("arm64"));
        });
        let changes = immutable_changes(&old, &new, Shape::Flat);
        let fields: Vec<&str> = changes.iter().map(|c| c.field).collect();
        assert_eq!(fields, ["platform.type", "arch", "management.upgrade_type"]);
        assert_eq!(
            changes[0].to_string(),
            r#"platform.type (NodePool spec.platform.type): "GCP" → "None""#
        );
    }

    #[test]
    fn an_omitted_arch_is_amd64_and_a_rename_is_a_change() {
        let mut old = np(|_| {});
        old["spec"].as_object_mut().unwrap().remove("arch");
        assert!(immutable_changes(&old, &np(|_| {}), Shape::Flat).is_empty());
        let mut renamed = np(|_| {});
        renamed["metadata"]["name"] = json!("other-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b");
        renamed["spec"]["clusterName"] = json!("other");
        let fields: Vec<&str> = immutable_changes(&old, &renamed, Shape::Flat)
            .iter()
            .map(|c| c.field)
            .collect();
        assert_eq!(fields, ["name", "spec.clusterName"]);
    }

    #[test]
    fn hyperfleet_specs_name_the_upgrade_type_in_their_spelling() {
        let old = node_pool(&fixture::hyperfleet_spec_with(|_| {}), &PLACEMENT);
        let spec = fixture::hyperfleet_spec_with(|s| {
            s.insert("management".into(), json!({"upgradeType": "InPlace"}));
            s.insert("nodeCount".into(), json!(7));
        });
        let changes = immutable_changes(&old, &node_pool(&spec, &PLACEMENT), spec.shape);
        let fields: Vec<&str> = changes.iter().map(|c| c.field).collect();
        assert_eq!(fields, ["management.upgradeType"]);
        assert_eq!(
            changes[0].to_string(),
            r#"management.upgradeType (NodePool spec.management.upgradeType): "Replace" → "InPlace""#
        );
    }
}

/// Pins the immutable changes found between NodePools (field, path, old and new value, in order,
/// and how each reads) over a grid of edits to a built NodePool, each against the unedited one
/// both ways, in both spec shapes, and between what was sent to the real operator and what it held.
#[cfg(test)]
mod pinned {
    #![allow(clippy::unwrap_used)]

    use std::fmt::Write as _;

    use serde_json::json;

    use super::*;
    use crate::hyperfleet::nodepool::fixture;
    use crate::hypershift::immutable::show;
    use crate::hypershift::nodepool::{Placement, node_pool};

    type Edit = fn(&mut Value);

    fn edits() -> Vec<(&'static str, Edit)> {
        vec![
            ("nothing", |_| {}),
            ("replicas, release, machine type", |np| {
                np["spec"]["replicas"] = json!(7);
                np["spec"]["release"]["image"] = json!("img:4.17.1");
                np["spec"]["platform"]["gcp"]["machineType"] = json!("n2-standard-16");
            }),
            ("name", |np| np["metadata"]["name"] = json!("other")),
            ("namespace", |np| {
                np["metadata"]["namespace"] = json!("other")
            }),
            ("cluster name", |np| {
                np["spec"]["clusterName"] = json!("other")
            }),
            ("platform None", |np| {
                np["spec"]["platform"] = json!({"type": "None"})
            }),
            ("arch arm64", |np| np["spec"]["arch"] = json!("arm64")),
            ("arch removed", |np| {
                np["spec"].as_object_mut().unwrap().remove("arch");
            }),
            ("arch null", |np| np["spec"]["arch"] = Value::Null),
            ("upgrade type", |np| {
                np["spec"]["management"]["upgradeType"] = json!("InPlace")
            }),
            ("no management", |np| {
                np["spec"].as_object_mut().unwrap().remove("management");
            }),
            ("long cluster name", |np| {
                np["spec"]["clusterName"] = json!("c".repeat(300))
            }),
        ]
    }

    fn write_changes(out: &mut String, label: &str, old: &Value, new: &Value) {
        for shape in [Shape::Flat, Shape::HyperFleet] {
            let changes = immutable_changes(old, new, shape);
            let _ = writeln!(out, "[{label}, {shape:?}] {} change(s)", changes.len());
            for c in &changes {
                let _ = writeln!(out, "  {} | {c}", c.kind);
                // The whole values where the message bounds them.
                if [&c.old, &c.new]
                    .iter()
                    .any(|v| !v.is_null() && show(v) != v.to_string())
                {
                    let _ = writeln!(out, "    old {}\n    new {}", c.old, c.new);
                }
            }
        }
    }

    #[test]
    fn changes_over_a_grid_of_edits() {
        let placement = Placement {
            namespace: "clusters",
            cluster_name: "prod-eu-1",
            default_subnet: Some("hcp-psc-subnet"),
            region: Some("europe-west2"),
            release_image: Some("img:4.17.0"),
        };
        let base = node_pool(&fixture::spec(), &placement);
        let mut out = String::new();
        for (label, edit) in edits() {
            let mut np = base.clone();
            edit(&mut np);
            write_changes(&mut out, &format!("fixture → {label}"), &base, &np);
            write_changes(&mut out, &format!("{label} → fixture"), &np, &base);
        }
        write_changes(&mut out, "empty objects", &json!({}), &Value::Null);
        insta::assert_snapshot!("node_pool_changes_grid", out);
    }

    #[test]
    fn sent_against_what_the_real_operator_held() {
        let Some(recorded) = crate::hypershift::recorded_objects("NodePool") else {
            return;
        };
        let dir = job_report::team_folder::find(
            env!("CARGO_MANIFEST_DIR"),
            "fixtures/hypershift-operator",
        )
        .unwrap();
        let mut out = String::new();
        for (source, held) in recorded {
            let name = held["metadata"]["name"].as_str().unwrap();
            let sent = std::fs::read_to_string(dir.join(format!("inputs/np-{name}.json"))).unwrap();
            let sent: Value = serde_json::from_str(&sent).unwrap();
            write_changes(&mut out, &format!("sent → {source}"), &sent, &held);
        }
        insta::assert_snapshot!("recorded_changes", out);
    }
}
