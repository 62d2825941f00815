//! The folders of `adapter/src` say what each part is, and dependencies point one way:
//!
//! ```text
//! main, lib, cli ─► diagnose ─► pulse ─► placement ─► work
//!                                  │        └────────► hyperfleet
//!                                  └─► hypershift ───► hyperfleet
//! (every layer may use the leaves: message, duration, kubeconfig, input_file)
//! ```
//!
//! - `hyperfleet/` (the input) uses nothing of the crate but the leaves;
//! - `hypershift/` (the objects) uses `hyperfleet/` (the validated specs it is built from);
//! - `work/` (the transport) knows no HyperFleet or HyperShift type;
//! - `placement/` (which management cluster) uses `hyperfleet/` and `work/`;
//! - `pulse/`: the pipeline (its files outside the subcommand folders) uses no subcommand; a
//!   subcommand (`controlplane/`, `nodepool/`, `nodes/`) never imports another; nothing under
//!   `pulse/` uses `cli`;
//! - the pure parts of a pulse — the plan (`pulse/plan/`), the report (`pulse/report.rs`), the
//!   vocabulary and the tables (`pulse/step.rs`, `pulse/object.rs`, `pulse/table.rs`), the objects'
//!   parts the plan and the report call (`pulse/{controlplane,nodepool}/object.rs`) and
//!   placement's decision (`placement/select.rs`, `placement/entity.rs`) — use no async runtime,
//!   no HTTP or Kubernetes client, no logging, and no module of the transport that talks
//!   (`work::maestro`, `work::hub`, `work::backend`, `work::sync`), nor the inventory or the lease;
//! - no two files use each other, however indirectly (a folder's `mod.rs` and its own files
//!   excepted: it declares them and they use its types).
//!
//! This test reads every source file (up to its tests) and fails naming the file, the line and
//! the rule.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const LEAVES: [&str; 4] = ["message", "duration", "kubeconfig", "input_file"];
const SUBCOMMANDS: [&str; 3] = ["controlplane", "nodepool", "nodes"];

/// The files whose code must be pure, and the paths and crates they may not name.
const PURE: [&str; 9] = [
    "pulse/plan/",
    "pulse/report.rs",
    "pulse/step.rs",
    "pulse/object.rs",
    "pulse/table.rs",
    "pulse/controlplane/object.rs",
    "pulse/nodepool/object.rs",
    "placement/select.rs",
    "placement/entity.rs",
];
const IMPURE: [&str; 12] = [
    "tokio::",
    "kube::",
    "reqwest::",
    "tracing::",
    "hyper::",
    "tonic::",
    "crate::work::maestro",
    "crate::work::hub",
    "crate::work::backend",
    "crate::work::sync",
    "crate::placement::inventory",
    "crate::placement::lease",
];

/// One source file: its path under `src`, its module path, and its code up to its tests.
struct Source {
    path: PathBuf,
    module: Vec<String>,
    code: String,
}

fn module_of(path: &Path) -> Vec<String> {
    let mut parts: Vec<String> = path
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_owned()
        })
        .collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<Source>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            let code: String = text
                .split("#[cfg(test)]")
                .next()
                .unwrap_or_default()
                .lines()
                .map(|l| l.split("//").next().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n");
            let path = path.strip_prefix(root).unwrap().to_path_buf();
            let module = module_of(&path);
            out.push(Source { path, module, code });
        }
    }
}

/// The modules `source` names (`crate::a::b`, `super::c`), resolved to module paths, with the
/// line each is named on.
fn uses(source: &Source) -> Vec<(usize, Vec<String>)> {
    let named = regex::Regex::new(r"\b(crate|super(?:::super)*)((?:::[a-z_][a-z0-9_]*)+)").unwrap();
    let mut found = Vec::new();
    for (n, line) in source.code.lines().enumerate() {
        for c in named.captures_iter(line) {
            let mut module = match &c[1] {
                "crate" => Vec::new(),
                up => {
                    let ups = up.split("::").count();
                    let keep = source.module.len().saturating_sub(ups);
                    source.module[..keep].to_vec()
                }
            };
            module.extend(
                c[2].split("::")
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned),
            );
            found.push((n + 1, module));
        }
    }
    found
}

/// The file of the longest prefix of `module` that is one.
fn file_of<'a>(
    module: &[String],
    files: &'a BTreeMap<Vec<String>, PathBuf>,
) -> Option<&'a PathBuf> {
    (1..=module.len())
        .rev()
        .find_map(|k| files.get(&module[..k]))
}

/// Where a file sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    Input,
    Objects,
    Transport,
    Placement,
    Pipeline,
    Subcommand(&'static str),
    Diagnose,
    Leaf,
    Top,
}

fn layer(module: &[String]) -> Layer {
    let first = module.first().map_or("", String::as_str);
    let second = module.get(1).map_or("", String::as_str);
    match first {
        "hyperfleet" => Layer::Input,
        "hypershift" => Layer::Objects,
        "work" => Layer::Transport,
        "placement" => Layer::Placement,
        "pulse" => match SUBCOMMANDS.iter().find(|s| **s == second) {
            Some(sub) => Layer::Subcommand(sub),
            None => Layer::Pipeline,
        },
        "diagnose" => Layer::Diagnose,
        leaf if LEAVES.contains(&leaf) => Layer::Leaf,
        _ => Layer::Top,
    }
}

/// Why a file of `from` may not name `target`, if it may not.
fn forbidden(from: Layer, target: &[String]) -> Option<String> {
    let top = target.first().map_or("", String::as_str);
    let to = layer(target);
    if to == Layer::Leaf || top == "testing" || from == Layer::Top || from == to {
        return None;
    }
    let allowed: &[Layer] = match from {
        Layer::Leaf | Layer::Input | Layer::Transport => &[],
        Layer::Objects => &[Layer::Input],
        Layer::Placement => &[Layer::Input, Layer::Transport],
        Layer::Pipeline => &[
            Layer::Input,
            Layer::Objects,
            Layer::Transport,
            Layer::Placement,
        ],
        Layer::Subcommand(_) => &[
            Layer::Input,
            Layer::Objects,
            Layer::Transport,
            Layer::Placement,
            Layer::Pipeline,
        ],
        Layer::Diagnose => &[
            Layer::Input,
            Layer::Objects,
            Layer::Transport,
            Layer::Placement,
            Layer::Pipeline,
            Layer::Subcommand("controlplane"),
            Layer::Subcommand("nodepool"),
        ],
        Layer::Top => return None,
    };
    (!allowed.contains(&to)).then(|| format!("{from:?} may not use `crate::{}`", target.join("::")))
}

/// Every layering rule broken, as `path:line: why`.
fn layering(sources: &[Source]) -> Vec<String> {
    let mut broken = Vec::new();
    for source in sources {
        let from = layer(&source.module);
        for (line, target) in uses(source) {
            if let Some(why) = forbidden(from, &target) {
                broken.push(format!("{}:{line}: {why}", source.path.display()));
            }
        }
    }
    broken
}

/// Every impure name in a pure file, as `path:line: name`.
fn impurities(sources: &[Source]) -> Vec<String> {
    let mut found = Vec::new();
    for source in sources {
        let path = source.path.to_string_lossy().replace('\\', "/");
        if !PURE.iter().any(|p| path.starts_with(p) || path == *p) {
            continue;
        }
        for (n, line) in source.code.lines().enumerate() {
            for name in IMPURE.iter().filter(|name| line.contains(**name)) {
                found.push(format!("{path}:{}: {name}", n + 1));
            }
        }
    }
    found
}

/// The groups of files that use each other (strongly connected, more than a `mod.rs` and one
/// of its own files).
fn circles(sources: &[Source]) -> Vec<Vec<PathBuf>> {
    let files: BTreeMap<Vec<String>, PathBuf> = sources
        .iter()
        .map(|s| (s.module.clone(), s.path.clone()))
        .collect();
    let mut graph: BTreeMap<&PathBuf, BTreeSet<&PathBuf>> = BTreeMap::new();
    for source in sources {
        let edges = graph.entry(&source.path).or_default();
        for (_, target) in uses(source) {
            if let Some(file) = file_of(&target, &files).filter(|f| **f != source.path) {
                edges.insert(file);
            }
        }
    }
    let reaches = |from: &PathBuf| {
        let mut seen = BTreeSet::new();
        let mut next = vec![from];
        while let Some(file) = next.pop() {
            for to in graph.get(file).into_iter().flatten() {
                if seen.insert(*to) {
                    next.push(to);
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&PathBuf, BTreeSet<&PathBuf>> =
        graph.keys().map(|f| (*f, reaches(f))).collect();
    let mut groups: Vec<Vec<PathBuf>> = Vec::new();
    for (file, reached) in &reach {
        let mut group: Vec<PathBuf> = reached
            .iter()
            .filter(|other| reach[*other].contains(*file))
            .map(|f| (*f).clone())
            .collect();
        group.sort();
        let own_child = |g: &[PathBuf]| {
            g.len() == 2
                && g.iter().any(|m| {
                    m.file_name().is_some_and(|n| n == "mod.rs")
                        && g.iter()
                            .any(|c| c != m && c.starts_with(m.parent().unwrap()))
                })
        };
        if group.len() > 1 && !own_child(&group) && !groups.contains(&group) {
            groups.push(group);
        }
    }
    groups
}

fn all_sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    assert!(files.len() > 60, "read only {} files", files.len());
    files
}

#[test]
fn dependencies_point_one_way() {
    let broken = layering(&all_sources());
    assert!(broken.is_empty(), "layering broken:\n{}", broken.join("\n"));
}

#[test]
fn the_plan_the_report_and_placements_decision_are_pure() {
    let sources = all_sources();
    for pure in PURE {
        assert!(
            sources
                .iter()
                .any(|s| s.path.to_string_lossy().starts_with(pure)),
            "adapter/src/{pure} is the layout"
        );
    }
    let found = impurities(&sources);
    assert!(
        found.is_empty(),
        "impure code in a pure module:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_two_files_use_each_other() {
    let found = circles(&all_sources());
    assert!(found.is_empty(), "files using each other: {found:#?}");
}

fn source(path: &str, code: &str) -> Source {
    let path = PathBuf::from(path);
    let module = module_of(&path);
    Source {
        path,
        module,
        code: code.to_owned(),
    }
}

#[test]
fn the_checks_catch_each_kind_of_violation() {
    let layered = [
        source("work/outcome.rs", "use crate::hypershift::nodepool;"),
        source(
            "hyperfleet/nodepool/mod.rs",
            "use crate::work::ExistingWork;",
        ),
        source(
            "hypershift/nodepool/mod.rs",
            "use crate::pulse::nodepool::owner;",
        ),
        source(
            "pulse/nodepool/run.rs",
            "use crate::pulse::controlplane::owner;",
        ),
        source(
            "pulse/nodepool/run.rs",
            "let w = super::super::controlplane::manifest_work(s);",
        ),
        source(
            "pulse/act.rs",
            "use crate::pulse::controlplane::ControlPlane;",
        ),
        source("pulse/plan/work.rs", "use crate::cli::EXIT_CONFIG;"),
        source("placement/select.rs", "use crate::pulse::step::Outcome;"),
        source("message.rs", "use crate::work::WorkError;"),
    ];
    for case in &layered {
        assert_eq!(
            layering(std::slice::from_ref(case)).len(),
            1,
            "{}",
            case.path.display()
        );
    }
    let fine = [
        source(
            "pulse/nodepool/run.rs",
            "use crate::work::sync; super::super::shutdown_signal()",
        ),
        source(
            "pulse/controlplane/object.rs",
            "use crate::pulse::object::Object;",
        ),
        source(
            "diagnose/plan.rs",
            "use crate::pulse::controlplane::ControlPlane;",
        ),
        source(
            "cli.rs",
            "use crate::pulse::{controlplane, nodepool, nodes};",
        ),
    ];
    assert!(layering(&fine).is_empty(), "{:?}", layering(&fine));
    for impure in [
        source("pulse/plan/work.rs", "tracing::info!(\"x\");"),
        source(
            "pulse/report.rs",
            "use crate::work::maestro::MaestroWorkClient;",
        ),
        source("placement/select.rs", "tokio::time::sleep(d).await;"),
    ] {
        assert_eq!(
            impurities(std::slice::from_ref(&impure)).len(),
            1,
            "{}",
            impure.path.display()
        );
    }
    let circle = [
        source("pulse/plan/place.rs", "use super::work::done;"),
        source("pulse/plan/work.rs", "use super::place::plan;"),
    ];
    assert_eq!(circles(&circle).len(), 1);
    let parent_and_child = [
        source("pulse/plan/mod.rs", "use work::done; mod work;"),
        source("pulse/plan/work.rs", "use super::Source;"),
    ];
    assert!(circles(&parent_and_child).is_empty());
}
