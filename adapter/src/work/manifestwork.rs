//! The ManifestWork (`work.open-cluster-management.io/v1`) that carries objects to a management
//! cluster, whatever they are: its name, its owner labels, the generation it was built from, how
//! each manifest is applied and fed back, and the check that an existing work is ours.

use std::collections::BTreeMap;

use serde_json::{Value, json};

pub const API_VERSION: &str = "work.open-cluster-management.io/v1";
pub const KIND: &str = "ManifestWork";
/// Annotation with the HyperFleet generation the work was built from (Maestro requires it on the
/// work, `hyperfleet-framework.md` §5.3).
pub const GENERATION_ANNOTATION: &str = "hyperfleet.io/generation";
/// Name of the feedback value that carries an object's `.status`.
pub const STATUS_FEEDBACK_NAME: &str = "status";
/// Names of the feedback values that carry an object's `.metadata.finalizers` (an array, raw
/// JSON) and `.metadata.deletionTimestamp` (a string): what a deletion waits for. The agent
/// returns no value for a path that does not exist (no deletion yet).
pub const FINALIZERS_FEEDBACK_NAME: &str = "finalizers";
pub const DELETION_TIMESTAMP_FEEDBACK_NAME: &str = "deletionTimestamp";
/// Name of the feedback value that carries an object's `.metadata.generation` (an `Integer`, on
/// Maestro's agent and on a standard OCM hub): the spec generation on the management cluster,
/// which its operator's `observedGeneration`s are compared with
/// ([`crate::hypershift::observed`]). Bumped by a spec change, not by a status write (the real
/// kube-apiserver; `fixtures/maestro/real/09d-*`).
pub const GENERATION_FEEDBACK_NAME: &str = "generation";
/// Its JSONPath.
pub const GENERATION_PATH: &str = ".metadata.generation";

/// `hostedcluster-<clusterId>`: the work carrying a cluster's HostedCluster.
pub fn hosted_cluster_work_name(cluster_id: &str) -> String {
    format!("hostedcluster-{cluster_id}")
}

/// `nodepool-<nodepoolId>`: the work carrying one HyperFleet NodePool's NodePool (the NodePool id
/// is unique on its own).
pub fn node_pool_work_name(nodepool_id: &str) -> String {
    format!("nodepool-{nodepool_id}")
}

/// A manifest's identity as the work's `manifestConfigs` and `deleteOption` name it (its JSON
/// form, without `namespace` for a cluster-scoped object).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ResourceIdentifier {
    /// API group (`""` for core).
    pub group: String,
    /// Plural resource, e.g. `hostedclusters`.
    pub resource: String,
    /// `""` for a cluster-scoped object.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
}

/// How the agent treats one manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Created when the management cluster lacks it, never changed, kept when the work is deleted
    /// (a Namespace other works share).
    Shared,
    /// Server-side applied, fed back (`status` ← `.status`, `generation` ←
    /// `.metadata.generation`, `finalizers` ← `.metadata.finalizers`, `deletionTimestamp` ←
    /// `.metadata.deletionTimestamp`) and deleted with the work.
    Owned,
}

/// One manifest of a work, in apply order.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkManifest {
    pub object: Value,
    pub identifier: ResourceIdentifier,
    pub delivery: Delivery,
}

/// The labels that make a work ours: every `(key, value)` must be on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub labels: Vec<(&'static str, String)>,
}

/// The ManifestWork `name` in the consumer's namespace, labelled with `owner`, stamped with
/// `generation` when known, carrying `manifests` in order. `Shared` manifests are `CreateOnly`
/// and orphaned when the work is deleted (`SelectivelyOrphan`); without any, deletion is
/// `Foreground`.
pub fn manifest_work(
    name: &str,
    consumer: &str,
    owner: &Owner,
    generation: Option<i64>,
    manifests: Vec<WorkManifest>,
) -> Value {
    let labels: BTreeMap<&str, &str> = owner.labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut metadata = json!({"name": name, "namespace": consumer, "labels": labels});
    if let Some(generation) = generation {
        metadata["annotations"] = json!({GENERATION_ANNOTATION: generation.to_string()});
    }
    let configs: Vec<Value> = manifests
        .iter()
        .map(|m| match m.delivery {
            Delivery::Shared => json!({
                "resourceIdentifier": m.identifier,
                "updateStrategy": {"type": "CreateOnly"},
            }),
            Delivery::Owned => json!({
                "resourceIdentifier": m.identifier,
                "feedbackRules": [{
                    "type": "JSONPaths",
                    "jsonPaths": [
                        {"name": STATUS_FEEDBACK_NAME, "path": ".status"},
                        {"name": GENERATION_FEEDBACK_NAME, "path": GENERATION_PATH},
                        {"name": FINALIZERS_FEEDBACK_NAME, "path": ".metadata.finalizers"},
                        {"name": DELETION_TIMESTAMP_FEEDBACK_NAME, "path": ".metadata.deletionTimestamp"},
                    ],
                }],
                "updateStrategy": {"type": "ServerSideApply"},
            }),
        })
        .collect();
    let orphans: Vec<&ResourceIdentifier> = manifests
        .iter()
        .filter(|m| m.delivery == Delivery::Shared)
        .map(|m| &m.identifier)
        .collect();
    let delete_option = if orphans.is_empty() {
        json!({"propagationPolicy": "Foreground"})
    } else {
        json!({
            "propagationPolicy": "SelectivelyOrphan",
            "selectivelyOrphans": {"orphaningRules": orphans},
        })
    };
    let objects: Vec<Value> = manifests.into_iter().map(|m| m.object).collect();
    json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": metadata,
        "spec": {
            "workload": {"manifests": objects},
            "manifestConfigs": configs,
            "deleteOption": delete_option,
        },
    })
}

/// JSONPath of the hub's `finalizers` value: `[*]` rather than the whole list, which the hub's
/// agent refuses without its `RawFeedbackJsonString` gate (a list is not a scalar). It gives the
/// first finalizer (gate off) or all of them (gate on; a list, or one string when there is one).
pub const HUB_FINALIZERS_PATH: &str = ".metadata.finalizers[*]";

/// Makes `work` (built by [`manifest_work`]) one a standard OCM hub can feed back: the feedback
/// rule of each [`Delivery::Owned`] manifest (the one with the [`STATUS_FEEDBACK_NAME`] value)
/// asks for the scalars of `status` instead of the whole `.status`
/// ([`super::scalar_feedback`]), the generation, the first finalizer ([`HUB_FINALIZERS_PATH`]) and the deletion
/// timestamp. The hub backend rebuilds the `status` value from them on read.
pub fn use_scalar_feedback(work: &mut Value, status: &super::scalar_feedback::ScalarStatus) {
    let configs = work
        .pointer_mut("/spec/manifestConfigs")
        .and_then(Value::as_array_mut);
    let rules = configs
        .into_iter()
        .flatten()
        .filter_map(|config| config.get_mut("feedbackRules")?.as_array_mut())
        .flatten();
    for rule in rules {
        let whole_status = rule["jsonPaths"]
            .as_array()
            .is_some_and(|paths| paths.iter().any(|p| p["name"] == STATUS_FEEDBACK_NAME));
        if !whole_status {
            continue;
        }
        let mut paths = status.json_paths();
        paths.push(json!({"name": GENERATION_FEEDBACK_NAME, "path": GENERATION_PATH}));
        paths.push(json!({"name": FINALIZERS_FEEDBACK_NAME, "path": HUB_FINALIZERS_PATH}));
        paths.push(json!({"name": DELETION_TIMESTAMP_FEEDBACK_NAME, "path": ".metadata.deletionTimestamp"}));
        rule["jsonPaths"] = Value::Array(paths);
    }
}

/// A Namespace object, for a [`Delivery::Shared`] manifest.
pub fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

/// The generation a work was built from: its [`GENERATION_ANNOTATION`], when it is an integer
/// ≥ 1. Takes any annotation map.
pub fn work_generation<K, V>(annotations: impl IntoIterator<Item = (K, V)>) -> Option<i64>
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    annotations
        .into_iter()
        .find(|(k, _)| k.as_ref() == GENERATION_ANNOTATION)
        .and_then(|(_, v)| v.as_ref().parse::<i64>().ok())
        .filter(|g| *g >= 1)
}

/// Whether an existing work belongs to this adapter and object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ownership {
    Ours,
    /// Someone else's: each owner label key with the value the work has (`None` = missing).
    NotOurs {
        found: Vec<(String, Option<String>)>,
    },
}

impl std::fmt::Display for Ownership {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ownership::Ours => f.write_str("labels that match (ownership was checked wrongly)"),
            Ownership::NotOurs { found } => {
                let found = found.iter().map(|(k, v)| (k.as_str(), v.as_deref()));
                let labels = label_list(found.map(|(k, v)| (k, v.unwrap_or("<missing>"))));
                write!(f, "labels {labels}")
            }
        }
    }
}

impl Owner {
    /// `k=v and k=v`, for messages.
    pub fn describe(&self) -> String {
        label_list(self.labels.iter().map(|(k, v)| (*k, v.as_str())))
    }
}

/// `k=v and k=v`.
fn label_list<'a>(labels: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let labels: Vec<String> = labels.map(|(k, v)| format!("{k}={v}")).collect();
    labels.join(" and ")
}

/// Checks the labels of an existing work against `owner`. Takes any label map (`&BTreeMap`,
/// `&HashMap`).
pub fn ownership<K, V>(labels: impl IntoIterator<Item = (K, V)>, owner: &Owner) -> Ownership
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    let mut found: Vec<(String, Option<String>)> = owner
        .labels
        .iter()
        .map(|(k, _)| ((*k).to_owned(), None))
        .collect();
    for (key, value) in labels {
        if let Some(slot) = found.iter_mut().find(|(k, _)| k == key.as_ref()) {
            slot.1 = Some(value.as_ref().to_owned());
        }
    }
    let ours = owner
        .labels
        .iter()
        .zip(&found)
        .all(|((_, want), (_, have))| have.as_deref() == Some(want.as_str()));
    if ours {
        Ownership::Ours
    } else {
        Ownership::NotOurs { found }
    }
}

/// Shorthand for `ownership(..) == Ownership::Ours`.
pub fn is_ours<K, V>(labels: impl IntoIterator<Item = (K, V)>, owner: &Owner) -> bool
where
    K: AsRef<str>,
    V: AsRef<str>,
{
    ownership(labels, owner) == Ownership::Ours
}

/// How a pulse's generation relates to the generation the work carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenerationCheck {
    /// Same generation, or either side unknown (a work without the annotation cannot be
    /// compared, so it is left as it is): nothing to send.
    Current,
    /// The pulse is newer: build and compare, then update.
    Newer,
    /// The pulse is older than the work: never roll back.
    Older { pulse: i64, held: i64 },
}

/// Compares the pulse's generation with the work's
/// [`GENERATION_ANNOTATION`]. A work without the
/// annotation holds a spec of no known generation: a pulse with a generation is newer (it
/// stamps its own, after the same immutable-field checks), so that a report never claims a
/// generation the work does not carry.
pub fn generation_check(pulse: Option<i64>, held: Option<i64>) -> GenerationCheck {
    match (pulse, held) {
        (Some(p), Some(h)) if p > h => GenerationCheck::Newer,
        (Some(_), None) => GenerationCheck::Newer,
        (Some(p), Some(h)) if p < h => GenerationCheck::Older { pulse: p, held: h },
        _ => GenerationCheck::Current,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::collections::{BTreeMap, HashMap};

    use super::*;

    const ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";

    fn owner(adapter: &str) -> Owner {
        Owner {
            labels: vec![
                ("hyperfleet.io/cluster-id", ID.to_owned()),
                ("hyperfleet.io/adapter", adapter.to_owned()),
            ],
        }
    }

    fn owned(name: &str) -> WorkManifest {
        WorkManifest {
            object: json!({"apiVersion": "example.io/v1", "kind": "Thing", "metadata": {"name": name, "namespace": "ns"}}),
            identifier: ResourceIdentifier {
                group: "example.io".into(),
                resource: "things".into(),
                namespace: "ns".into(),
                name: name.into(),
            },
            delivery: Delivery::Owned,
        }
    }

    #[test]
    fn generations() {
        assert_eq!(generation_check(Some(3), Some(2)), GenerationCheck::Newer);
        assert_eq!(
            generation_check(Some(2), Some(3)),
            GenerationCheck::Older { pulse: 2, held: 3 }
        );
        assert_eq!(generation_check(Some(3), Some(3)), GenerationCheck::Current);
        assert_eq!(generation_check(None, Some(3)), GenerationCheck::Current);
        // A work without a generation is brought to the pulse's (it then carries it).
        assert_eq!(generation_check(Some(3), None), GenerationCheck::Newer);
        assert_eq!(generation_check(None, None), GenerationCheck::Current);
    }

    #[test]
    fn a_work_with_only_owned_manifests_is_deleted_in_the_foreground() {
        let work = manifest_work("w", "mgmt-1", &owner("nodepool"), Some(2), vec![owned("a")]);
        assert_eq!(
            work["spec"]["deleteOption"],
            json!({"propagationPolicy": "Foreground"})
        );
        assert_eq!(work["metadata"]["annotations"][GENERATION_ANNOTATION], "2");
        assert_eq!(
            work["metadata"]["labels"]["hyperfleet.io/adapter"],
            "nodepool"
        );
        let config = &work["spec"]["manifestConfigs"][0];
        assert_eq!(config["updateStrategy"]["type"], "ServerSideApply");
        assert_eq!(
            config["resourceIdentifier"],
            json!({"group": "example.io", "resource": "things", "namespace": "ns", "name": "a"})
        );
        assert_eq!(
            config["feedbackRules"][0]["jsonPaths"][0],
            json!({"name": "status", "path": ".status"})
        );
    }

    #[test]
    fn shared_manifests_are_create_only_and_orphaned() {
        let shared = WorkManifest {
            object: namespace("clusters"),
            identifier: ResourceIdentifier {
                group: String::new(),
                resource: "namespaces".into(),
                namespace: String::new(),
                name: "clusters".into(),
            },
            delivery: Delivery::Shared,
        };
        let work = manifest_work(
            "w",
            "mgmt-1",
            &owner("controlplane"),
            None,
            vec![shared, owned("a")],
        );
        assert!(work["metadata"].get("annotations").is_none());
        assert_eq!(
            work["spec"]["manifestConfigs"][0]["updateStrategy"]["type"],
            "CreateOnly"
        );
        assert!(
            work["spec"]["manifestConfigs"][0]
                .get("feedbackRules")
                .is_none()
        );
        assert_eq!(
            work["spec"]["deleteOption"],
            json!({"propagationPolicy": "SelectivelyOrphan",
                   "selectivelyOrphans": {"orphaningRules": [{"group": "", "resource": "namespaces", "name": "clusters"}]}})
        );
    }

    #[test]
    fn ownership_requires_every_owner_label_to_match() {
        let ours = BTreeMap::from([
            ("hyperfleet.io/cluster-id".to_owned(), ID.to_owned()),
            (
                "hyperfleet.io/adapter".to_owned(),
                "controlplane".to_owned(),
            ),
            ("other".to_owned(), "x".to_owned()),
        ]);
        assert!(is_ours(&ours, &owner("controlplane")));
        assert!(!is_ours(&ours, &owner("nodepool")));

        let other_adapter = HashMap::from([
            ("hyperfleet.io/cluster-id", ID),
            ("hyperfleet.io/adapter", "nodepool"),
        ]);
        let found = ownership(&other_adapter, &owner("controlplane"));
        assert_eq!(
            found,
            Ownership::NotOurs {
                found: vec![
                    ("hyperfleet.io/cluster-id".into(), Some(ID.into())),
                    ("hyperfleet.io/adapter".into(), Some("nodepool".into())),
                ]
            }
        );
        assert_eq!(
            found.to_string(),
            format!("labels hyperfleet.io/cluster-id={ID} and hyperfleet.io/adapter=nodepool")
        );
        let unlabelled: BTreeMap<String, String> = BTreeMap::new();
        assert_eq!(
            ownership(&unlabelled, &owner("controlplane")).to_string(),
            "labels hyperfleet.io/cluster-id=<missing> and hyperfleet.io/adapter=<missing>"
        );
    }

    #[test]
    fn generations_are_integers_from_one() {
        let g = |v: &str| work_generation([(GENERATION_ANNOTATION, v)]);
        assert_eq!(g("3"), Some(3));
        assert_eq!(g("0"), None);
        assert_eq!(g("x"), None);
        assert_eq!(work_generation([("other", "3")]), None);
    }

    #[test]
    fn scalar_feedback_replaces_only_the_whole_status_rule() {
        use crate::work::scalar_feedback::{ScalarStatus, StatusValue, ValueKind};
        const SPEC: ScalarStatus = ScalarStatus {
            conditions: &["Available"],
            values: &[StatusValue::Field {
                path: "replicas",
                kind: ValueKind::Integer,
            }],
        };
        let shared = WorkManifest {
            object: namespace("clusters"),
            identifier: ResourceIdentifier {
                group: String::new(),
                resource: "namespaces".into(),
                namespace: String::new(),
                name: "clusters".into(),
            },
            delivery: Delivery::Shared,
        };
        let mut work = manifest_work(
            "w",
            "mgmt-1",
            &owner("nodepool"),
            Some(1),
            vec![shared, owned("a")],
        );
        let before = work.clone();
        use_scalar_feedback(&mut work, &SPEC);
        assert_eq!(
            work["spec"]["manifestConfigs"][0], before["spec"]["manifestConfigs"][0],
            "a CreateOnly manifest has no feedback"
        );
        let paths = &work["spec"]["manifestConfigs"][1]["feedbackRules"][0]["jsonPaths"];
        let pairs: Vec<(&str, &str)> = paths
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["name"].as_str().unwrap(), p["path"].as_str().unwrap()))
            .collect();
        assert_eq!(pairs.len(), 5 + 1 + 3);
        assert_eq!(
            pairs[0],
            (
                "status.conditions[type=Available].status",
                ".status.conditions[?(@.type==\"Available\")].status"
            )
        );
        assert_eq!(pairs[5], ("status.replicas", ".status.replicas"));
        assert_eq!(
            pairs[6],
            (GENERATION_FEEDBACK_NAME, ".metadata.generation"),
            "an Integer a standard hub feeds back"
        );
        assert_eq!(pairs[7], (FINALIZERS_FEEDBACK_NAME, HUB_FINALIZERS_PATH));
        assert_eq!(
            pairs[8],
            (
                DELETION_TIMESTAMP_FEEDBACK_NAME,
                ".metadata.deletionTimestamp"
            )
        );
        assert!(
            !pairs.iter().any(|(name, _)| *name == STATUS_FEEDBACK_NAME),
            "no whole status on a hub"
        );
        assert_eq!(work["spec"]["workload"], before["spec"]["workload"]);
    }
}

/// Pins the ManifestWork built for a range of manifest sets (each delivery, with and without a
/// generation), the hub's scalar rewrite of it, and the ownership and generation reads.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod pinned {
    use std::fmt::Write as _;

    use super::*;
    use crate::work::scalar_feedback::{ScalarStatus, StatusValue, ValueKind};

    const SPEC: ScalarStatus = ScalarStatus {
        conditions: &["Available", "Degraded"],
        values: &[StatusValue::First {
            list: "nodes",
            field: "ready",
            kind: ValueKind::Boolean,
        }],
    };

    fn manifest(delivery: Delivery, namespace: &str, name: &str) -> WorkManifest {
        WorkManifest {
            object: json!({"kind": "Thing", "metadata": {"name": name, "namespace": namespace}}),
            identifier: ResourceIdentifier {
                group: if namespace.is_empty() {
                    String::new()
                } else {
                    "example.io".into()
                },
                resource: "things".into(),
                namespace: namespace.into(),
                name: name.into(),
            },
            delivery,
        }
    }

    #[test]
    fn works_built() {
        let owner = Owner {
            labels: vec![
                ("hyperfleet.io/cluster-id", "c-1".to_owned()),
                ("hyperfleet.io/adapter", "a".to_owned()),
            ],
        };
        let sets: Vec<Vec<WorkManifest>> = vec![
            vec![],
            vec![manifest(Delivery::Owned, "ns", "a")],
            vec![
                manifest(Delivery::Shared, "", "ns"),
                manifest(Delivery::Owned, "ns", "a"),
            ],
            vec![
                manifest(Delivery::Shared, "", "ns"),
                manifest(Delivery::Shared, "x", "s"),
                manifest(Delivery::Owned, "ns", "a"),
                manifest(Delivery::Owned, "", "b"),
            ],
        ];
        let mut out = String::new();
        for manifests in sets {
            for generation in [None, Some(0), Some(7)] {
                let mut work = manifest_work("w", "mgmt-1", &owner, generation, manifests.clone());
                let _ = writeln!(out, "{}", serde_json::to_string_pretty(&work).unwrap());
                use_scalar_feedback(&mut work, &SPEC);
                let _ = writeln!(out, "scalar: {}", work["spec"]["manifestConfigs"]);
            }
        }
        let mut odd = json!({"spec": {"manifestConfigs": [{}, {"feedbackRules": [{"jsonPaths": "x"}, {"jsonPaths": [{"name": "other"}]}]}]}});
        use_scalar_feedback(&mut odd, &SPEC);
        let mut none = json!({"spec": {}});
        use_scalar_feedback(&mut none, &SPEC);
        let _ = writeln!(out, "odd: {odd} {none}");
        insta::assert_snapshot!("works_built", out);
    }

    #[test]
    fn ownership_and_generation() {
        let owner = Owner {
            labels: vec![("k1", "v1".to_owned()), ("k2", "v2".to_owned())],
        };
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} / {} / {}",
            owner.describe(),
            Ownership::Ours,
            namespace("n")
        );
        for labels in [
            vec![],
            vec![("k1", "v1"), ("k2", "v2")],
            vec![("k1", "v1"), ("k2", "v2"), ("k3", "x")],
            vec![("k1", "v1"), ("k2", "x")],
            vec![("k2", "v2"), ("k1", "v1"), ("k1", "other")],
            vec![("K1", "v1"), ("k2", "v2")],
        ] {
            let found = ownership(labels.clone(), &owner);
            let _ = writeln!(
                out,
                "{labels:?}: {found:?} {found} {}",
                is_ours(labels.clone(), &owner)
            );
        }
        for value in ["1", "0", "-1", "x", " 2", "9223372036854775807", ""] {
            let _ = writeln!(
                out,
                "generation {value:?}: {:?} {:?}",
                work_generation([(GENERATION_ANNOTATION, value)]),
                work_generation([
                    ("other", "1"),
                    (GENERATION_ANNOTATION, value),
                    (GENERATION_ANNOTATION, "5")
                ])
            );
        }
        let _ = writeln!(
            out,
            "{} {}",
            hosted_cluster_work_name("c"),
            node_pool_work_name("n")
        );
        insta::assert_snapshot!("ownership_and_generation", out);
    }
}
