//! HyperShift: the objects the adapter ships to a management cluster (`hypershift.openshift.io`),
//! built from a validated HyperFleet spec as the current HyperShift API accepts them, the fields
//! they may not change after creation, and how to read their fed-back status
//! (`hypershift-api.md`).

mod conditions;
mod fields;
pub mod hostedcluster;
pub mod immutable;
pub mod nodepool;

use serde_json::Value;

/// API group of HostedCluster and NodePool.
pub const GROUP: &str = "hypershift.openshift.io";
/// Their `apiVersion`.
pub const API_VERSION: &str = "hypershift.openshift.io/v1beta1";

/// The object of `kind` in the HyperShift API group among a work's manifests.
pub fn find_in<'a>(workload: &'a [Value], kind: &str) -> Option<&'a Value> {
    workload.iter().find(|m| {
        m["kind"] == kind
            && m["apiVersion"]
                .as_str()
                .is_some_and(|v| v.starts_with(&format!("{GROUP}/")))
    })
}

/// Where the object of `kind` a work carries lives, `(namespace, name)`; what the work does not
/// say is `fallback`'s.
pub fn place_in(workload: &[Value], kind: &str, fallback: (&str, &str)) -> (String, String) {
    let object = find_in(workload, kind);
    let read = |field: &str, default: &str| {
        object
            .and_then(|o| o["metadata"][field].as_str())
            .unwrap_or(default)
            .to_owned()
    };
    (read("namespace", fallback.0), read("name", fallback.1))
}

/// Test support: fails unless every HostedCluster/NodePool condition type a `status.rs` reads —
/// its `types` constants, and the literal after `condition("`, `.is("` and `is_true("`, in every
/// `const …: [&str; N]` list and first in a tuple line `("Type", …)` — is in `fed_back`, the list a
/// hub without raw JSON feedback carries back (work/scalar_feedback.rs).
#[cfg(test)]
pub(crate) fn assert_fed_back(source: &str, constants: &[&str], fed_back: &[&str]) {
    let code = source.split("#[cfg(test)]").next().unwrap_or_default();
    let code = code
        .split("pub const FED_BACK_CONDITIONS")
        .collect::<Vec<_>>();
    let code = format!(
        "{}{}",
        code[0],
        code.get(1)
            .and_then(|rest| rest.split_once("];"))
            .map_or("", |(_, after)| after)
    );
    let mut read: Vec<String> = constants.iter().map(|c| (*c).to_owned()).collect();
    let literal = |after: &str| after.split('"').next().unwrap_or_default().to_owned();
    for call in ["condition(\"", ".is(\"", "is_true(\""] {
        read.extend(code.split(call).skip(1).map(literal));
    }
    for list in code.split(": [&str; ").skip(1) {
        let body = list.split("];").next().unwrap_or_default();
        read.extend(body.split('"').skip(1).step_by(2).map(str::to_owned));
    }
    for line in code.lines() {
        if let Some(after) = line.trim_start().strip_prefix("(\"") {
            read.push(literal(after));
        }
    }
    assert!(read.len() >= 8, "{read:?}");
    for type_ in &read {
        assert!(
            fed_back.contains(&type_.as_str()),
            "{type_} is read but a hub does not feed it back: add it to FED_BACK_CONDITIONS (the condition_types! list)"
        );
    }
}

/// Test support: every object of `kind` the real HyperShift operator's recorded runs hold
/// (`shared/fixtures/hypershift-operator/`: create/update responses, snapshots, watch events; not
/// `inputs/`, what was sent), each with where it was found; `None` without the team folder.
#[cfg(test)]
pub(crate) fn recorded_objects(kind: &str) -> Option<Vec<(String, Value)>> {
    let dir =
        job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/hypershift-operator")?;
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && !p.ends_with("inputs"))
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten())
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let name = file
            .strip_prefix(&dir)
            .unwrap_or(&file)
            .display()
            .to_string();
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let value: Value = serde_json::from_str(&text).unwrap_or_default();
        let objects: Vec<(String, Value)> = match &value {
            Value::Array(events) => events
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    (
                        format!("{name} event {i} {}", e["type"].as_str().unwrap_or("?")),
                        e["object"].clone(),
                    )
                })
                .collect(),
            Value::Object(o) if o.contains_key("capturedAt") => ["hostedclusters", "nodepools"]
                .iter()
                .flat_map(|list| value[list].as_array().cloned().unwrap_or_default())
                .map(|o| (name.clone(), o))
                .collect(),
            _ => vec![(name, value.clone())],
        };
        found.extend(
            objects
                .into_iter()
                .filter(|(_, o)| o["kind"] == kind)
                .map(|(at, o)| {
                    (
                        format!("{at} {}", o["metadata"]["name"].as_str().unwrap_or("?")),
                        o,
                    )
                }),
        );
    }
    assert!(found.len() > 5, "{kind}: {found:?}");
    Some(found)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn objects_are_found_by_kind_in_the_hypershift_group() {
        let workload = [
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "clusters"}}),
            json!({"apiVersion": "other.io/v1", "kind": "NodePool", "metadata": {"name": "x"}}),
            json!({"apiVersion": API_VERSION, "kind": "NodePool", "metadata": {"namespace": "clusters", "name": "np"}}),
        ];
        assert_eq!(find_in(&workload, "NodePool"), Some(&workload[2]));
        assert!(find_in(&workload[..2], "NodePool").is_none());
        assert_eq!(
            place_in(&workload, "NodePool", ("ns", "fallback")),
            ("clusters".to_owned(), "np".to_owned())
        );
        assert_eq!(
            place_in(&workload[..2], "NodePool", ("ns", "fallback")),
            ("ns".to_owned(), "fallback".to_owned())
        );
    }
}
