//! The folders of `adapter/src` say what each part is, and dependencies point one way:
//!
//! ```text
//! cli ─► pulse/{controlplane, nodepool, nodes} ─► hypershift ─► hyperfleet
//!                                              ├─► placement ─► hyperfleet, work
//!                                              └─► work
//! (every layer may use the leaves: message, duration, kubeconfig, input_file)
//! ```
//!
//! - `hyperfleet/` (the input) uses nothing of the crate but the leaves;
//! - `hypershift/` (the objects) uses `hyperfleet/` (the validated specs it is built from);
//! - `work/` (the transport) knows no HyperFleet or HyperShift type;
//! - `placement/` (which management cluster) uses `hyperfleet/` and `work/`, never a subcommand;
//! - a subcommand under `pulse/` never imports another; what they share lives below them (or in
//!   `pulse/mod.rs`, the process edge).
//!
//! This test reads every source file and fails on a `crate::…` or `super::super::…` path that
//! breaks those rules, naming the file, the line and the rule.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

const LEAVES: [&str; 4] = ["message", "duration", "kubeconfig", "input_file"];
const SUBCOMMANDS: [&str; 3] = ["controlplane", "nodepool", "nodes"];

/// Where a file sits.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Layer {
    Input,
    Objects,
    Transport,
    Placement,
    /// `pulse/mod.rs`: the edge shared by the subcommands.
    PulseEdge,
    Subcommand(String),
    Leaf,
    /// `cli.rs`, `lib.rs`, `main.rs`: wiring.
    Top,
}

fn layer(relative: &Path) -> Layer {
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let first = parts[0].trim_end_matches(".rs");
    match first {
        "hyperfleet" => Layer::Input,
        "hypershift" => Layer::Objects,
        "work" => Layer::Transport,
        "placement" => Layer::Placement,
        "pulse" if parts.len() == 2 && parts[1] == "mod.rs" => Layer::PulseEdge,
        "pulse" => Layer::Subcommand(parts[1].trim_end_matches(".rs").to_owned()),
        leaf if LEAVES.contains(&leaf) => Layer::Leaf,
        _ => Layer::Top,
    }
}

/// Why `target` (the module a path names, e.g. `work`, `pulse::nodes`) may not be used from
/// `from`, if it may not.
fn forbidden(from: &Layer, target: &[&str]) -> Option<String> {
    let top = target.first().copied().unwrap_or_default();
    // `testing` is the test support (the pulse oracle), used by tests only.
    if LEAVES.contains(&top) || top == "testing" {
        return None;
    }
    let allowed: &[&str] = match from {
        Layer::Top | Layer::PulseEdge => return None,
        Layer::Leaf => &[],
        Layer::Input => &["hyperfleet"],
        Layer::Objects => &["hypershift", "hyperfleet"],
        Layer::Transport => &["work"],
        Layer::Placement => &["placement", "hyperfleet", "work"],
        Layer::Subcommand(own) => {
            if top == "pulse"
                && let Some(sub) = target.get(1)
                && SUBCOMMANDS.contains(sub)
                && sub != own
            {
                return Some(format!(
                    "subcommand `{own}` imports subcommand `{sub}`: move what they share below pulse/"
                ));
            }
            &[
                "pulse",
                "hyperfleet",
                "hypershift",
                "work",
                "placement",
                "cli",
            ]
        }
    };
    (!allowed.contains(&top)).then(|| format!("{from:?} may not use `crate::{top}`"))
}

/// Every rule broken in `files` (`(path relative to src, text)`), as `path:line: why`.
fn violations(files: &[(PathBuf, String)]) -> Vec<String> {
    let crate_path = regex::Regex::new(r"\bcrate::([a-z_]+)(?:::([a-z_]+))?").unwrap();
    let up_two = regex::Regex::new(r"\bsuper::super::([a-z_]+)").unwrap();
    let mut found = Vec::new();
    for (path, text) in files {
        let from = layer(path);
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            let mut targets: Vec<Vec<&str>> = crate_path
                .captures_iter(code)
                .map(|c| {
                    [c.get(1), c.get(2)]
                        .into_iter()
                        .flatten()
                        .map(|m| m.as_str())
                        .collect()
                })
                .collect();
            // `super::super::x` from pulse/<sub>/<file>.rs is `pulse::x`.
            if let Layer::Subcommand(_) = from
                && path.components().count() == 3
            {
                targets.extend(
                    up_two
                        .captures_iter(code)
                        .map(|c| vec!["pulse", c.get(1).map_or("", |m| m.as_str())]),
                );
            }
            for target in targets {
                if let Some(why) = forbidden(&from, &target) {
                    found.push(format!("{}:{}: {why}", path.display(), n + 1));
                }
            }
        }
    }
    found
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((path.strip_prefix(root).unwrap().to_path_buf(), text));
        }
    }
}

#[test]
fn dependencies_point_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    assert!(files.len() > 30, "read only {} files", files.len());
    for folder in [
        "hyperfleet",
        "hypershift",
        "work",
        "pulse/controlplane",
        "pulse/nodepool",
        "pulse/nodes",
    ] {
        assert!(
            root.join(folder).is_dir(),
            "adapter/src/{folder} is the layout"
        );
    }
    let broken = violations(&files);
    assert!(broken.is_empty(), "layering broken:\n{}", broken.join("\n"));
}

#[test]
fn the_check_catches_each_kind_of_violation() {
    let file = |path: &str, text: &str| (PathBuf::from(path), text.to_owned());
    let cases = [
        file("work/outcome.rs", "use crate::hypershift::nodepool;"),
        file(
            "work/hub.rs",
            "crate::pulse::nodes::source::tune(&mut c, t);",
        ),
        file("hyperfleet/nodepool.rs", "use crate::work::ExistingWork;"),
        file(
            "hypershift/nodepool/mod.rs",
            "use crate::pulse::nodepool::owner;",
        ),
        file(
            "pulse/nodepool/run.rs",
            "use crate::pulse::controlplane::owner;",
        ),
        file(
            "pulse/nodepool/run.rs",
            "let w = super::super::controlplane::manifest_work(s);",
        ),
        file("message.rs", "use crate::work::WorkError;"),
    ];
    for case in &cases {
        assert_eq!(violations(std::slice::from_ref(case)).len(), 1, "{case:?}");
    }
    let fine = [
        file(
            "pulse/nodepool/run.rs",
            "use crate::work::sync; use crate::message::cond; super::super::shutdown_signal()",
        ),
        file(
            "hypershift/nodepool/mod.rs",
            "use crate::hyperfleet::nodepool::NodePoolSpec;",
        ),
        file(
            "work/sync.rs",
            "// crate::pulse::controlplane is only named in a comment",
        ),
        file(
            "cli.rs",
            "use crate::pulse::{controlplane, nodepool, nodes};",
        ),
    ];
    assert!(violations(&fine).is_empty(), "{:?}", violations(&fine));
}
