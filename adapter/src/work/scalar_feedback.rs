//! Status feedback a standard OCM hub can carry: one scalar value per JSONPath, and the object's
//! `status` rebuilt from those values on read.
//!
//! Why (upstream `open-cluster-management-io/ocm`, `pkg/work/spoke/statusfeedback/reader.go`): the
//! work agent evaluates each `jsonPaths[].path` with the Kubernetes JSONPath library
//! (`AllowMissingKeys(true)`) on the whole object; no result or a `null` yields no value; with its
//! alpha feature gate `RawFeedbackJsonString` off (the default, `feature/feature.go`) it keeps the
//! first result and accepts only `int64`, `string` and `bool`, anything else (an object, a list, a
//! float) is an error that turns the manifest's `StatusFeedbackSynced` False; with the gate on, a
//! non-scalar becomes `JsonRaw`, at most `--max-json-raw-length` (default and CRD `maxLength` 1024)
//! bytes. A whole HostedCluster `.status` is several KB, so the hub backend asks for scalars:
//!
//! | [`StatusValue`] | JSONPath | feedback name |
//! |---|---|---|
//! | `Field` | `.status.<a.b>` | `status.<a.b>` |
//! | `Where` | `.status.<list>[?(@.<key>=="<value>")].<field>` | `status.<list>[<key>=<value>].<field>` |
//! | `First` | `.status.<list>[*].<field>` | `status.<list>[*].<field>` |
//!
//! A filter never fails (an index out of range would: the library reports it as an error, which
//! would fail the whole sync), and a filter or `[*]` that matches several elements gives the
//! first (gate off) or a list (gate on; the reader takes its first element, as the agent without
//! the gate would). Each condition of a [`ScalarStatus`] is read by its `type` with
//! [`CONDITION_FIELDS`]; a condition that does not exist yields no value, so it is absent from the
//! rebuilt status, as it is from the object.
//!
//! [`rebuild`] turns the values back into a `status` object by their names alone, so the reader
//! needs no knowledge of the object's kind.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// Name prefix of every scalar status value.
pub const STATUS_PREFIX: &str = "status.";

/// The JSON type a value is declared with (the agent's `Integer`, `String`, `Boolean`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    String,
    Integer,
    Boolean,
}

/// The fields of a condition fed back one by one (`metav1.Condition` and HyperShift's
/// `NodePoolCondition` share them).
pub const CONDITION_FIELDS: [(&str, ValueKind); 5] = [
    ("status", ValueKind::String),
    ("reason", ValueKind::String),
    ("message", ValueKind::String),
    ("observedGeneration", ValueKind::Integer),
    ("lastTransitionTime", ValueKind::String),
];

/// One scalar of an object's `.status` (paths are dotted, relative to `.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusValue {
    /// `.status.<path>`.
    Field { path: &'static str, kind: ValueKind },
    /// `field` of the first element of the list `.status.<list>` whose `key` is `value`.
    Where {
        list: &'static str,
        key: &'static str,
        value: &'static str,
        field: &'static str,
        kind: ValueKind,
    },
    /// `field` of the first element of the list `.status.<list>`.
    First {
        list: &'static str,
        field: &'static str,
        kind: ValueKind,
    },
}

impl StatusValue {
    /// The feedback rule's name.
    pub fn name(&self) -> String {
        self.render(STATUS_PREFIX, |key, value| format!("{key}={value}"))
    }

    /// The feedback rule's JSONPath, on the whole object.
    pub fn json_path(&self) -> String {
        self.render(".status.", |key, value| format!("?(@.{key}==\"{value}\")"))
    }

    /// `prefix` and the value's place below `.status`, the element a [`Self::Where`] selects
    /// written by `select(key, value)`.
    fn render(&self, prefix: &str, select: fn(&str, &str) -> String) -> String {
        match self {
            Self::Field { path, .. } => format!("{prefix}{path}"),
            Self::Where {
                list,
                key,
                value,
                field,
                ..
            } => format!("{prefix}{list}[{}].{field}", select(key, value)),
            Self::First { list, field, .. } => format!("{prefix}{list}[*].{field}"),
        }
    }

    /// The declared type of the value.
    pub fn kind(&self) -> ValueKind {
        match self {
            Self::Field { kind, .. } | Self::Where { kind, .. } | Self::First { kind, .. } => *kind,
        }
    }
}

/// What of an object's status the hub feeds back: every field of each condition in
/// `conditions` (by type), and `values`.
#[derive(Debug, Clone, Copy)]
pub struct ScalarStatus {
    pub conditions: &'static [&'static str],
    pub values: &'static [StatusValue],
}

impl ScalarStatus {
    /// Every value, conditions first (in the order given), then `values`.
    pub fn all(&self) -> Vec<StatusValue> {
        let conditions = self.conditions.iter().flat_map(|t| {
            CONDITION_FIELDS
                .iter()
                .map(move |(field, kind)| StatusValue::Where {
                    list: "conditions",
                    key: "type",
                    value: t,
                    field,
                    kind: *kind,
                })
        });
        conditions.chain(self.values.iter().copied()).collect()
    }

    /// The `jsonPaths` entries (`{name, path}`) of a feedback rule.
    pub fn json_paths(&self) -> Vec<Value> {
        self.all()
            .iter()
            .map(|v| serde_json::json!({"name": v.name(), "path": v.json_path()}))
            .collect()
    }
}

/// A `status` object rebuilt from the scalar values among `values` (those named
/// `status.…`), or `None` when there is none. A list value (the agent's gate on, several
/// matches) stands for its first element; `null` for no value.
pub fn rebuild(values: &BTreeMap<String, Value>) -> Option<Value> {
    let mut status = Map::new();
    let mut any = false;
    for (name, value) in values {
        let Some(rest) = name.strip_prefix(STATUS_PREFIX) else {
            continue;
        };
        let value = match value {
            Value::Array(items) => match items.first() {
                Some(first) => first.clone(),
                None => continue,
            },
            Value::Null => continue,
            other => other.clone(),
        };
        any |= place(&mut status, rest, value).is_some();
    }
    any.then_some(Value::Object(status))
}

/// Puts `value` where the name `rest` (without the prefix) says; `None` for a name this module
/// does not write.
fn place(status: &mut Map<String, Value>, rest: &str, value: Value) -> Option<()> {
    let Some((list, selector_and_field)) = rest.split_once('[') else {
        return set_path(status, rest, value);
    };
    let (selector, field) = selector_and_field.split_once("].")?;
    let items = list_at(status, list)?;
    let element = if selector == "*" {
        if items.is_empty() {
            items.push(Value::Object(Map::new()));
        }
        &mut items[0]
    } else {
        let (key, wanted) = selector.split_once('=')?;
        let at = items.iter().position(|e| e[key] == wanted);
        let at = at.unwrap_or_else(|| {
            let mut element = Map::new();
            element.insert(key.to_owned(), Value::from(wanted));
            items.push(Value::Object(element));
            items.len() - 1
        });
        &mut items[at]
    };
    set_path(element.as_object_mut()?, field, value)
}

/// The object that holds the last segment of the dotted `path` (created, with its parents, when
/// missing), and that segment; `None` when something else is on the way.
fn parent<'a, 'p>(
    object: &'a mut Map<String, Value>,
    path: &'p str,
) -> Option<(&'a mut Map<String, Value>, &'p str)> {
    match path.rsplit_once('.') {
        Some((parents, last)) => Some((object_at(object, parents)?, last)),
        None => Some((object, path)),
    }
}

/// The list at the dotted `path`, created (with its parents) when missing.
fn list_at<'a>(object: &'a mut Map<String, Value>, path: &str) -> Option<&'a mut Vec<Value>> {
    let (parent, last) = parent(object, path)?;
    parent
        .entry(last.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
}

/// The object at the dotted `path`, created when missing; `None` when something else is there.
fn object_at<'a>(
    object: &'a mut Map<String, Value>,
    path: &str,
) -> Option<&'a mut Map<String, Value>> {
    path.split('.').try_fold(object, |current, segment| {
        current
            .entry(segment.to_owned())
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
    })
}

/// Sets the dotted `path` to `value`; `None` when it cannot be (something else on the way, an
/// empty last segment).
fn set_path(object: &mut Map<String, Value>, path: &str, value: Value) -> Option<()> {
    let (parent, last) = parent(object, path).filter(|(_, last)| !last.is_empty())?;
    parent.insert(last.to_owned(), value);
    Some(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    const SPEC: ScalarStatus = ScalarStatus {
        conditions: &["Available"],
        values: &[
            StatusValue::Field {
                path: "controlPlaneEndpoint.port",
                kind: ValueKind::Integer,
            },
            StatusValue::Where {
                list: "version.history",
                key: "state",
                value: "Completed",
                field: "version",
                kind: ValueKind::String,
            },
            StatusValue::First {
                list: "nodesInfo.nodeVersions",
                field: "readyNodeCount",
                kind: ValueKind::Integer,
            },
        ],
    };

    #[test]
    fn names_and_paths_follow_the_agents_jsonpath_syntax() {
        let all = SPEC.all();
        assert_eq!(all.len(), 5 + 3);
        assert_eq!(all[0].name(), "status.conditions[type=Available].status");
        assert_eq!(
            all[0].json_path(),
            ".status.conditions[?(@.type==\"Available\")].status"
        );
        assert_eq!(all[3].kind(), ValueKind::Integer);
        assert_eq!(all[5].json_path(), ".status.controlPlaneEndpoint.port");
        assert_eq!(
            all[6].json_path(),
            ".status.version.history[?(@.state==\"Completed\")].version"
        );
        assert_eq!(
            all[7].name(),
            "status.nodesInfo.nodeVersions[*].readyNodeCount"
        );
        assert_eq!(
            all[7].json_path(),
            ".status.nodesInfo.nodeVersions[*].readyNodeCount"
        );
        let names: std::collections::BTreeSet<String> = all.iter().map(StatusValue::name).collect();
        assert_eq!(names.len(), all.len(), "names are unique");
    }

    #[test]
    fn the_status_is_rebuilt_from_the_names_alone() {
        let values: BTreeMap<String, Value> = [
            ("status.conditions[type=Available].status", json!("True")),
            (
                "status.conditions[type=Available].observedGeneration",
                json!(3),
            ),
            ("status.conditions[type=Degraded].status", json!("False")),
            ("status.controlPlaneEndpoint.port", json!(443)),
            (
                "status.version.history[state=Completed].version",
                json!(["4.19.3", "4.19.1"]),
            ),
            ("status.nodesInfo.nodeVersions[*].readyNodeCount", json!(2)),
            ("status.ignored", Value::Null),
            ("finalizers", json!("hypershift.openshift.io/finalizer")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(
            rebuild(&values).unwrap(),
            json!({
                "conditions": [
                    {"type": "Available", "status": "True", "observedGeneration": 3},
                    {"type": "Degraded", "status": "False"},
                ],
                "controlPlaneEndpoint": {"port": 443},
                "version": {"history": [{"state": "Completed", "version": "4.19.3"}]},
                "nodesInfo": {"nodeVersions": [{"readyNodeCount": 2}]},
            })
        );
        let none: BTreeMap<String, Value> = [("finalizers".to_owned(), json!("x"))]
            .into_iter()
            .collect();
        assert_eq!(rebuild(&none), None, "no status value, no status");
    }
}

/// Pins the scalar feedback rules (names, paths, kinds of every value shape) and what
/// [`rebuild`] makes of the `work_feedback` fuzz corpus and of a grid of edge-case names.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod pinned {
    use std::fmt::Write as _;

    use serde_json::json;

    use super::*;
    use crate::work::maestro::error::pin_inputs::corpus;

    const SPEC: ScalarStatus = ScalarStatus {
        conditions: &["Available", "Degraded", "ValidReleaseImage"],
        values: &[
            StatusValue::Field {
                path: "version.desired.image",
                kind: ValueKind::String,
            },
            StatusValue::Field {
                path: "replicas",
                kind: ValueKind::Integer,
            },
            StatusValue::Where {
                list: "version.history",
                key: "state",
                value: "Completed",
                field: "version",
                kind: ValueKind::String,
            },
            StatusValue::First {
                list: "nodes",
                field: "ready",
                kind: ValueKind::Boolean,
            },
        ],
    };

    #[test]
    fn rules() {
        let mut out = String::new();
        for value in SPEC.all() {
            let _ = writeln!(
                out,
                "{:?} {} {} {:?}",
                value,
                value.name(),
                value.json_path(),
                value.kind()
            );
        }
        let _ = writeln!(out, "{}", Value::Array(SPEC.json_paths()));
        let empty = ScalarStatus {
            conditions: &[],
            values: &[],
        };
        let _ = writeln!(out, "{:?}", empty.json_paths());
        insta::assert_snapshot!("scalar_rules", out);
    }

    fn rebuilt(values: &[(&str, Value)]) -> Option<Value> {
        rebuild(
            &values
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn rebuilds() {
        let mut out = String::new();
        let cases: Vec<Vec<(&str, Value)>> = vec![
            vec![],
            vec![("status", json!({"a": 1}))],
            vec![("status.", json!(1))],
            vec![("status.a", json!(1)), ("status.a.b", json!(2))],
            vec![("status.a.b", json!(2)), ("status.a", json!(1))],
            vec![("status.a[", json!(1))],
            vec![("status.a[x]", json!(1))],
            vec![("status.a[x].b", json!(1))],
            vec![("status.a[*].b", json!(1)), ("status.a[*].c", json!([]))],
            vec![
                ("status.a[*].b", json!([1, 2])),
                ("status.a[k=v].c", json!(3)),
            ],
            vec![("status.a[k=v]x", json!(1))],
            vec![("status.a[k=v].", json!(1))],
            vec![
                ("status.a[k=v].c.d", json!(1)),
                ("status.a[k=w].c", json!(2)),
                ("status.a[k=v].e", json!(null)),
            ],
            vec![("status.a", json!(1)), ("status.a[k=v].c", json!(2))],
            vec![("status.a.b", json!(1)), ("status.a.b[*].c", json!(2))],
            vec![
                ("status.a[k=v].c", json!(2)),
                ("status.a[k=v].c.d", json!(3)),
            ],
            vec![
                ("status.a[=v].c", json!(1)),
                ("status.a[k=].c", json!(2)),
                ("status.[k=v].c", json!(3)),
            ],
            vec![("status..a", json!(1)), ("status.a..b", json!(2))],
            vec![
                ("status.x", json!([[1], 2])),
                ("status.y", json!({"o": 1})),
                ("status.z", json!(false)),
            ],
            vec![("finalizers", json!("f")), ("generation", json!(3))],
        ];
        for case in cases {
            let _ = writeln!(out, "{case:?}\n  {:?}", rebuilt(&case));
        }
        for (name, data) in corpus("work_feedback") {
            let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(&data) else {
                continue;
            };
            let values: BTreeMap<String, Value> = map.into_iter().collect();
            let _ = writeln!(out, "[{name}] {:?}", rebuild(&values));
        }
        insta::assert_snapshot!("scalar_rebuilds", out);
    }
}
