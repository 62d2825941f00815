//! The spec validators' oracle: every input the repository holds (the fuzz corpora, the
//! fixtures) and thousands of generated mutations of the fixtures, run through
//! [`ClusterSpec::validate_with`](crate::hyperfleet::cluster::ClusterSpec::validate_with) and
//! [`NodePoolSpec::validate`](crate::hyperfleet::nodepool::NodePoolSpec::validate) (and, for a
//! NodePool that validates, `check_against` a few control planes), rendered and compared with the
//! snapshots in `adapter/tests/oracle/spec/`.
//!
//! The snapshots pin every violation (field, problem, order) and every value of a validated spec,
//! so a change to the validators' mechanics that changes what they answer fails here.
//! `UPDATE_ORACLE=1 cargo test -p hypershift-adapter --lib oracle` rewrites them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;
mod nodepool;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// `adapter/tests/oracle/spec/<name>`.
fn snapshot_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/oracle/spec")
        .join(name)
}

/// Compares `text` with the snapshot `name`, or rewrites it under `UPDATE_ORACLE=1`.
#[track_caller]
fn check_snapshot(name: &str, text: &str) {
    let path = snapshot_path(name);
    if std::env::var_os("UPDATE_ORACLE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with UPDATE_ORACLE=1 to write it",
            path.display()
        )
    });
    if want == text {
        return;
    }
    let (want_lines, got_lines): (Vec<&str>, Vec<&str>) =
        (want.lines().collect(), text.lines().collect());
    let at = want_lines
        .iter()
        .zip(&got_lines)
        .position(|(a, b)| a != b)
        .unwrap_or(want_lines.len().min(got_lines.len()));
    let case = want_lines[..at.min(want_lines.len())]
        .iter()
        .rev()
        .find(|l| l.starts_with("## "))
        .copied()
        .unwrap_or("(before the first case)");
    let around = |lines: &[&str]| {
        lines
            .iter()
            .skip(at.saturating_sub(2))
            .take(5)
            .map(|l| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    panic!(
        "{name} differs from the oracle at line {} (case {case}):\n  expected:\n{}\n  got:\n{}\n({} expected lines, {} got)",
        at + 1,
        around(&want_lines),
        around(&got_lines),
        want_lines.len(),
        got_lines.len(),
    );
}

/// The repository's files in `dir` (relative to the workspace root), sorted by name.
fn corpus(dir: &str) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            (name, text)
        })
        .collect();
    files.sort();
    files
}

/// One change to a spec: remove the value at a JSON pointer, or set it (making objects on the
/// way; a non-object on the way is replaced).
#[derive(Clone)]
enum Edit {
    Remove(String),
    Set(String, Value),
}

impl Edit {
    fn set(pointer: &str, value: Value) -> Self {
        Edit::Set(pointer.to_owned(), value)
    }

    fn remove(pointer: &str) -> Self {
        Edit::Remove(pointer.to_owned())
    }

    fn apply(&self, spec: &mut Map<String, Value>) {
        let (pointer, value) = match self {
            Edit::Remove(p) => (p, None),
            Edit::Set(p, v) => (p, Some(v)),
        };
        let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
        let mut root = Value::Object(std::mem::take(spec));
        edit_at(&mut root, &parts, value);
        if let Value::Object(map) = root {
            *spec = map;
        }
    }

    fn label(&self) -> String {
        match self {
            Edit::Remove(p) => format!("remove {p}"),
            Edit::Set(p, v) => format!("{p} = {}", show(v)),
        }
    }
}

/// Sets (`Some`) or removes the value at `parts` below `here`: list entries by index (only
/// existing ones), objects made on the way when setting.
fn edit_at(here: &mut Value, parts: &[&str], value: Option<&Value>) {
    let Some((first, rest)) = parts.split_first() else {
        return;
    };
    if let Value::Array(items) = here {
        let Some(i) = first.parse::<usize>().ok().filter(|i| *i < items.len()) else {
            return;
        };
        match (rest.is_empty(), value) {
            (true, Some(v)) => items[i] = v.clone(),
            (true, None) => {
                items.remove(i);
            }
            (false, _) => edit_at(&mut items[i], rest, value),
        }
        return;
    }
    if !here.is_object() {
        if value.is_none() {
            return;
        }
        *here = Value::Object(Map::new());
    }
    let Value::Object(map) = here else { return };
    match (rest.is_empty(), value) {
        (true, Some(v)) => {
            map.insert((*first).to_owned(), v.clone());
        }
        (true, None) => {
            map.remove(*first);
        }
        (false, None) => {
            if let Some(next) = map.get_mut(*first) {
                edit_at(next, rest, None);
            }
        }
        (false, Some(_)) => {
            let next = map
                .entry((*first).to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            edit_at(next, rest, value);
        }
    }
}

/// A value for a case label: compact JSON, long strings and lists shortened.
fn show(value: &Value) -> String {
    match value {
        Value::String(s) if s.chars().count() > 40 => {
            let head: String = s.chars().take(12).collect();
            format!("{head:?}…({} chars)", s.chars().count())
        }
        Value::Array(items) if items.len() > 4 => format!("[{} entries]", items.len()),
        Value::Object(map) if map.len() > 4 => format!("{{{} keys}}", map.len()),
        Value::Array(items) => {
            format!("[{}]", items.iter().map(show).collect::<Vec<_>>().join(","))
        }
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{k:?}:{}", show(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

/// The generic values every field is set to: a wrong type of each kind, empty, too long, a
/// value no rule accepts, and removal.
fn generic_values() -> Vec<Option<Value>> {
    use serde_json::json;
    vec![
        None,
        Some(Value::Null),
        Some(json!("")),
        Some(json!(0)),
        Some(json!(42)),
        Some(json!(-1)),
        Some(json!(1.5)),
        Some(json!(true)),
        Some(json!(false)),
        Some(json!([])),
        Some(json!({})),
        Some(json!(["x"])),
        Some(json!([{}])),
        Some(json!("x")),
        Some(json!("Not Valid!")),
        Some(json!("a".repeat(300))),
    ]
}

/// Every pointer inside `value` (objects, lists and leaves), depth first.
fn pointers(value: &Value, prefix: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = format!("{prefix}/{k}");
                out.push(p.clone());
                pointers(v, &p, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let p = format!("{prefix}/{i}");
                out.push(p.clone());
                pointers(v, &p, out);
            }
        }
        _ => {}
    }
}

/// Edits setting `pointer` to every generic value and to `specific` values.
fn edits_of(pointer: &str, specific: Vec<Value>) -> Vec<Edit> {
    let mut out: Vec<Edit> = generic_values()
        .into_iter()
        .map(|v| match v {
            None => Edit::remove(pointer),
            Some(v) => Edit::set(pointer, v),
        })
        .collect();
    out.extend(specific.into_iter().map(|v| Edit::set(pointer, v)));
    out
}

/// `{:#?}` of `got`, or only its lines that differ from `base`'s when both have as many lines
/// (lossless given the base, which the snapshot shows in full).
fn against_base(got: &str, base: &str) -> String {
    let (g, b): (Vec<&str>, Vec<&str>) = (got.lines().collect(), base.lines().collect());
    if g.len() != b.len() {
        return format!("  (full)\n{}\n", indent(got));
    }
    let mut out = String::new();
    for (i, (x, y)) in g.iter().zip(&b).enumerate() {
        if x != y {
            let _ = writeln!(out, "  @{i}: {}", x.trim_start());
        }
    }
    if out.is_empty() {
        out.push_str("  (= base)\n");
    }
    out
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The violations, one `  field: problem` line each.
fn violations(v: &[crate::hyperfleet::spec::SpecViolation]) -> String {
    let mut out = String::new();
    for v in v {
        let _ = writeln!(out, "  {}: {}", v.field, v.problem);
    }
    out
}
