//! The reference pages under `docs/` (once the README's sections) say what the code does:
//! - each flag table marked `<!-- flags: NAME -->` says what the binary accepts: every row's flag
//!   and environment variable exist in the binary's `--help`, and every flag with an environment
//!   variable there has a row;
//! - the condition tables of `controlplane` and `nodepool` (rendered from the code's tables, which
//!   the adapter's own tests compare with these pages) name only reasons the adapter's code
//!   holds, the health rows in the code's order; the `nodes` severity order is the judge's;
//! - the `diagnose` samples are what `local-pulse --scenario diagnose` prints, and its chain table
//!   has a row for every link printed;
//! - the README's test command is the one `.ci/run` runs, and its quick-start commands name
//!   targets and files that exist.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::process::Command;

/// The pages, relative to the repository root.
const STATUS_REPORTER: &str = "docs/status-reporter.md";
const CONTROLPLANE: &str = "docs/controlplane.md";
const NODEPOOL: &str = "docs/nodepool.md";
const NODES: &str = "docs/nodes.md";
const DIAGNOSE: &str = "docs/diagnose.md";

/// The text of a page (`docs/….md`).
fn page(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `(flag, env)` pairs from the table after `<!-- flags: NAME -->`.
fn table(text: &str, name: &str) -> BTreeSet<(String, String)> {
    let marker = format!("<!-- flags: {name} -->");
    let start = text
        .find(&marker)
        .unwrap_or_else(|| panic!("no `{marker}` on the page"));
    text[start + marker.len()..]
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| l.starts_with('|'))
        .skip(2) // header and separator
        .map(|row| {
            let cells: Vec<&str> = row.split('|').collect();
            let first = |cell: &str| cell.split('`').nth(1).unwrap_or_default().to_owned();
            (first(cells[1]), first(cells[2]))
        })
        .collect()
}

/// `(flag, env)` pairs from clap's help: each `--flag` line and the `[env: NAME=]` marker in its
/// description. Flags without an environment variable (`--help`, `--version`) are left out.
fn help(binary: &str, args: &[&str]) -> BTreeSet<(String, String)> {
    let out = Command::new(testbed::binaries::path(binary))
        .args(args)
        .arg("--help")
        .env_clear()
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut pairs = BTreeSet::new();
    let mut flag: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        // `--flag`, or `-x, --flag` with a short form.
        let long = match trimmed.as_bytes() {
            [b'-', short, b',', b' ', ..] if short.is_ascii_alphabetic() => &trimmed[4..],
            _ => trimmed,
        };
        if let Some(rest) = long.strip_prefix("--") {
            flag = Some(format!("--{}", rest.split([' ', '=']).next().unwrap()));
        }
        if let (Some(f), Some(i)) = (&flag, line.find("[env: ")) {
            let env = line[i + 6..].split('=').next().unwrap().to_owned();
            pairs.insert((f.clone(), env));
        }
    }
    assert!(
        !pairs.is_empty(),
        "no env markers in `{binary} {args:?} --help`:\n{text}"
    );
    pairs
}

fn check(path: &str, name: &str, binary: &str, args: &[&str]) {
    let documented = table(&page(path), name);
    let accepted = help(binary, args);
    let missing: Vec<_> = accepted.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&accepted).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "{path} table `{name}` disagrees with --help:\n  not documented: {missing:?}\n  not accepted: {unknown:?}"
    );
}

#[test]
fn status_reporter_table_matches_its_flags() {
    check(STATUS_REPORTER, "status-reporter", "status-reporter", &[]);
}

#[test]
fn controlplane_table_matches_its_flags() {
    check(
        CONTROLPLANE,
        "hypershift-adapter controlplane",
        "hypershift-adapter",
        &["controlplane"],
    );
}

#[test]
fn nodepool_table_matches_its_flags() {
    check(
        NODEPOOL,
        "hypershift-adapter nodepool",
        "hypershift-adapter",
        &["nodepool"],
    );
}

#[test]
fn diagnose_table_matches_its_flags() {
    check(
        DIAGNOSE,
        "hypershift-adapter diagnose nodepool",
        "hypershift-adapter",
        &["diagnose", "nodepool"],
    );
    // `diagnose cluster` takes the same flags but `--cluster-id`.
    let mut cluster = help("hypershift-adapter", &["diagnose", "cluster"]);
    cluster.insert(("--cluster-id".to_owned(), "CLUSTER_ID".to_owned()));
    assert_eq!(
        cluster,
        help("hypershift-adapter", &["diagnose", "nodepool"])
    );
}

#[test]
fn nodes_table_matches_its_flags() {
    check(
        NODES,
        "hypershift-adapter nodes",
        "hypershift-adapter",
        &["nodes"],
    );
}

#[test]
fn a_wrong_row_is_caught() {
    let mut fake = page(CONTROLPLANE);
    fake = fake.replace(
        "| `--consumer` | `MANAGEMENT_CLUSTER_CONSUMER`",
        "| `--consumer` | `CONSUMER`",
    );
    let documented = table(&fake, "hypershift-adapter controlplane");
    let accepted = help("hypershift-adapter", &["controlplane"]);
    assert_ne!(documented, accepted);
}

/// The text from the line containing `from` up to the next line starting with `to`.
fn section<'a>(text: &'a str, from: &str, to: &str) -> &'a str {
    let start = text.find(from).unwrap_or_else(|| panic!("no {from:?}"));
    let rest = &text[start..];
    let end = rest
        .match_indices('\n')
        .find(|(i, _)| rest[i + 1..].starts_with(to))
        .map_or(rest.len(), |(i, _)| i);
    &rest[..end]
}

/// The headings of the condition tables (each with the deletion stages' table after it).
const CONDITION_TABLES: &str = "## Condition reasons and what to do\n";

/// The adapter's product code (each file up to its tests), as one text.
fn adapter_code() -> String {
    fn walk(dir: &std::path::Path, out: &mut String) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push_str(text.split("#[cfg(test)]").next().unwrap_or_default());
            }
        }
    }
    let mut code = String::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapter/src"),
        &mut code,
    );
    code
}

/// The reasons a table names that the code outside the tables does not hold as a string.
fn invented(reasons: &[&str], code: &str) -> Vec<String> {
    reasons
        .iter()
        .filter(|r| !code.contains(&format!("\"{r}\"")) && !code.contains(&format!("`{r}`")))
        .map(|r| (*r).to_owned())
        .collect()
}

#[test]
fn the_condition_tables_name_only_reasons_the_adapter_reports() {
    use hypershift_adapter::pulse::{controlplane, nodepool};
    let code = adapter_code();
    let without_tables: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("row!("))
        .map(|l| format!("{l}\n"))
        .collect();
    for (name, table) in [
        ("controlplane", controlplane::table::TABLE),
        ("nodepool", nodepool::table::TABLE),
    ] {
        let reasons = table.reasons();
        assert!(reasons.len() > 30, "{name}: {reasons:?}");
        assert_eq!(
            invented(&reasons, &without_tables),
            Vec::<String>::new(),
            "{name}"
        );
        // The check can fail: a reason no code reports is caught.
        let mut more = reasons.clone();
        more.push("ManifestWorkRefused");
        assert_eq!(invented(&more, &without_tables), ["ManifestWorkRefused"]);
    }
}

const NODES_JUDGE_DOCS: &str = include_str!("../../adapter/src/pulse/nodes/judge.rs");

/// The reasons of the nodes page's row `Health=False | A > B > …`, in order.
fn documented_nodes_severity(page: &str) -> Vec<String> {
    let row = page
        .lines()
        .find(|l| l.starts_with("| Health=False |") && l.contains(" > "))
        .expect("a `Health=False | A > B > …` row on the nodes page");
    row.split('|')
        .nth(2)
        .unwrap_or_default()
        .split('>')
        .map(|r| r.trim().trim_matches('`').to_owned())
        .collect()
}

#[test]
fn the_nodes_severity_order_is_the_judges_everywhere_it_is_listed() {
    use hypershift_adapter::pulse::nodes::Problem;
    let judged: Vec<&str> = Problem::ALL.iter().map(|p| p.reason()).collect();
    assert_eq!(documented_nodes_severity(&page(NODES)), judged, "{NODES}");
    // The judge's module docs: `//! 1. `NodesNotReady` — …`.
    let listed: Vec<&str> = NODES_JUDGE_DOCS
        .lines()
        .filter_map(|l| l.strip_prefix("//! "))
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()) && l.contains(". `"))
        .filter_map(|l| l.split('`').nth(1))
        .collect();
    assert_eq!(listed, judged, "adapter/src/pulse/nodes/judge.rs docs");
    // The check can fail: a swapped pair on the page is caught.
    let swapped = page(NODES).replace(
        "`StaleHeartbeats` > `PendingCertificateRequests`",
        "`PendingCertificateRequests` > `StaleHeartbeats`",
    );
    assert_ne!(
        documented_nodes_severity(&swapped),
        judged,
        "a swap is caught"
    );
}

/// The Health reasons of the `| health N…` rows in `text` (lines stripped of `prefix`), in order:
/// the backticked names in the Health cell (column 4).
fn health_rows(text: &str, prefix: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .filter(|l| l.starts_with("| health "))
        .map(|row| {
            row.split('|')
                .nth(4)
                .unwrap_or_default()
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// The controlplane's health list as the code orders it: per row the reason during an upgrade
/// (if any), then its reason; consecutive rows with the same reasons are one documented row.
fn coded_health_rows() -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for row in hypershift_adapter::pulse::controlplane::HEALTH_ROWS {
        let mut reasons: Vec<String> = row
            .during_upgrade
            .map(|(r, _)| r.to_owned())
            .into_iter()
            .collect();
        reasons.push(row.reason.to_owned());
        if rows.last() != Some(&reasons) {
            rows.push(reasons);
        }
    }
    rows
}

#[test]
fn the_health_rows_are_the_codes_in_its_order_everywhere_they_are_listed() {
    let coded = coded_health_rows();
    let page = page(CONTROLPLANE);
    let page_table = section(&page, CONDITION_TABLES, "#");
    assert_eq!(health_rows(page_table, ""), coded, "{CONTROLPLANE}");
    // Two rows swapped are caught.
    let mut lines: Vec<&str> = page_table.lines().collect();
    let three = lines
        .iter()
        .position(|l| l.starts_with("| health 3"))
        .unwrap();
    lines.swap(three, three + 1);
    assert_ne!(health_rows(&lines.join("\n"), ""), coded);
}

/// The text output of `hypershift-adapter diagnose` after each step of
/// `local-pulse --scenario diagnose` (the lines it prints as `   | …`), in step order.
fn diagnose_scenario_outputs() -> Vec<String> {
    let out = Command::new(testbed::binaries::path("local-pulse"))
        .args(["--scenario", "diagnose"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "local-pulse --scenario diagnose:\n{stdout}"
    );
    let mut outputs: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    for line in stdout.lines() {
        if let Some(text) = line.strip_prefix("   | ") {
            current.get_or_insert_with(String::new).push_str(text);
            current.as_mut().unwrap().push('\n');
        } else if let Some(done) = current.take() {
            outputs.push(done);
        }
    }
    outputs.extend(current);
    outputs
}

/// `text` with every RFC 3339 time replaced by `<time>` (the runs' clocks differ).
fn without_times(text: &str) -> String {
    let time = regex::Regex::new(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z").unwrap();
    time.replace_all(text.trim_end(), "<time>").into_owned()
}

/// Whether two outputs of diagnose are the same, times aside. A line cut at diagnose's bound
/// (ending in `…`) is cut where the bytes run out, and times differ in length from run to run
/// (`…:52.1Z` vs `…:52.123456789Z`): two cut lines are the same when the shorter is a prefix of
/// the longer.
fn same_output(a: &str, b: &str) -> bool {
    let (a, b) = (without_times(a), without_times(b));
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    a.len() == b.len()
        && a.iter().zip(&b).all(|(x, y)| {
            x == y
                || match (x.strip_suffix('…'), y.strip_suffix('…')) {
                    (Some(x), Some(y)) => x.starts_with(y) || y.starts_with(x),
                    _ => false,
                }
        })
}

const DIAGNOSE_SAMPLE: &str = "<!-- diagnose sample: local-pulse --scenario diagnose, step ";

/// `(step, text)` of each sample on the page: the ```` ```text ```` block after
/// [`DIAGNOSE_SAMPLE`]`N -->`.
fn diagnose_samples(page: &str) -> Vec<(usize, String)> {
    page.match_indices(DIAGNOSE_SAMPLE)
        .map(|(at, _)| {
            let rest = &page[at + DIAGNOSE_SAMPLE.len()..];
            let step: usize = rest.split(' ').next().unwrap().parse().unwrap();
            let block = rest
                .split_once("```text\n")
                .and_then(|(_, b)| b.split_once("\n```"))
                .map(|(b, _)| b.to_owned())
                .unwrap_or_else(|| panic!("no ```text block after the step {step} marker"));
            (step, block)
        })
        .collect()
}

#[test]
fn the_diagnose_samples_are_what_the_scenario_prints() {
    let page = page(DIAGNOSE);
    let samples = diagnose_samples(&page);
    assert!(
        samples.len() >= 3,
        "the diagnose section shows too few samples: {samples:?}"
    );
    let outputs = diagnose_scenario_outputs();
    assert_eq!(outputs.len(), 9, "{outputs:#?}");
    for (step, sample) in &samples {
        let output = &outputs[step - 1];
        assert!(
            same_output(sample, output),
            "{DIAGNOSE} sample of step {step} differs from what diagnose prints now:\n{output}\n\n{DIAGNOSE}:\n{sample}"
        );
    }
    assert!(
        samples.iter().any(|(_, s)| s.contains("verdict: healthy")),
        "no healthy sample"
    );
    // Every link the code prints has a row in the page's chain table, and the table has no
    // other.
    let linked = |text: &str| -> BTreeSet<String> {
        text.lines()
            .filter_map(|l| {
                let (mark, rest) = l.split_once(' ')?;
                ["✓", "✗", "?", "…"]
                    .contains(&mark)
                    .then(|| rest.split(' ').next().unwrap().to_owned())
            })
            .collect()
    };
    let printed: BTreeSet<String> = outputs.iter().flat_map(|o| linked(o)).collect();
    let table: BTreeSet<String> = page
        .lines()
        .filter(|l| l.starts_with("| `") && !l.starts_with("| `--"))
        .flat_map(|l| {
            let first = l.split('|').nth(1).unwrap_or_default();
            first
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    // The cluster chain prints hypershift.hostedcluster; the NodePool's hypershift.nodepool
    // shares its row.
    let mut expected = printed.clone();
    expected.insert("hypershift.nodepool".to_owned());
    assert_eq!(
        table, expected,
        "{DIAGNOSE} chain table vs the links printed"
    );
}

#[test]
fn a_changed_diagnose_sample_is_caught() {
    let page =
        format!("{DIAGNOSE_SAMPLE}4 -->\n```text\nverdict: healthy at 2026-11-26T22:48:15Z\n```\n");
    let samples = diagnose_samples(&page);
    assert_eq!(
        samples,
        [(4, "verdict: healthy at 2026-11-26T22:48:15Z".to_owned())]
    );
    assert_eq!(
        without_times(&samples[0].1),
        without_times("verdict: healthy at 2027-01-02T03:04:05.123456Z\n")
    );
    assert_ne!(
        without_times(&samples[0].1),
        without_times("verdict: stuck at 2026-11-26T22:48:15Z")
    );
    assert!(!same_output(
        &samples[0].1,
        "verdict: stuck at 2026-11-26T22:48:15Z"
    ));
    // Cut at the bound after times of other lengths: the same; a cut line that says something
    // else, or an uncut line against a cut one: not.
    assert!(same_output(
        "deleted at 2026-11-27T00:13:52.04280125Z; Deleting (deleted in Hyper…",
        "deleted at 2026-11-27T00:13:52.042801257Z; Deleting (deleted in HyperF…"
    ));
    assert!(!same_output(
        "deleted at 2026-11-27T00:13:52Z; Deleting (deleted in Hyper…",
        "deleted at 2026-11-27T00:13:52Z; Finalized (deleted in Hy…"
    ));
    assert!(!same_output(
        "deleted at 2026-11-27T00:13:52Z; Deleting (deleted in HyperFleet)",
        "deleted at 2026-11-27T00:13:52Z; Deleting (deleted in HyperF…"
    ));
}

/// The commands of the README's ```` ```sh ```` blocks, one per line, comments and continuation
/// lines joined.
fn sh_commands(text: &str) -> Vec<String> {
    let mut commands = Vec::new();
    for block in text.split("```sh\n").skip(1) {
        let body = block.split("```").next().unwrap_or_default();
        let mut command = String::new();
        for line in body.lines() {
            let line = line.split(" #").next().unwrap_or_default().trim();
            match line.strip_suffix('\\') {
                Some(part) => command.push_str(part),
                None => {
                    command.push_str(line);
                    let whole = command.split_whitespace().collect::<Vec<_>>().join(" ");
                    if !whole.is_empty() {
                        commands.push(whole);
                    }
                    command.clear();
                }
            }
        }
    }
    commands
}

#[test]
fn the_readmes_test_commands_are_what_ci_and_cargo_run() {
    let readme = page("README.md");
    let commands = sh_commands(&readme);
    // The test command: `.ci/run` runs it (with `--locked`), in the step that says so.
    assert!(
        commands.iter().any(|c| c == "cargo test --workspace"),
        "README.md has no `cargo test --workspace` block: {commands:#?}"
    );
    let ci = page(".ci/run");
    let step = ci
        .split("\nstep ")
        .find(|s| s.starts_with("\"tests (the README's test command"))
        .expect(".ci/run has a step running the README's test command");
    assert!(
        step.lines()
            .any(|l| l.trim() == "cargo test --workspace --locked"),
        ".ci/run's test step does not run the README's command:\n{step}"
    );
    // The real servers' command names the test target `tests/tests/real/main.rs` builds.
    assert!(
        commands
            .iter()
            .any(|c| c == "REAL_SYSTEMS_STATE=<state dir> cargo test -p testbed --test real"),
        "README.md has no real-servers command: {commands:#?}"
    );
    assert!(
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/real/main.rs")).is_file()
    );
    // The quick start's binaries and script exist.
    for (command, path) in [
        (
            "cargo run --release -p testbed --bin local-pulse",
            "tests/src/bin/local-pulse.rs",
        ),
        ("scripts/kind-demo.sh", "scripts/kind-demo.sh"),
    ] {
        assert!(
            commands.iter().any(|c| c == command),
            "README.md has no `{command}`: {commands:#?}"
        );
        let file = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
        assert!(std::path::Path::new(&file).is_file(), "{path}");
    }
}

#[test]
fn sh_blocks_are_read_command_by_command() {
    let text = "x\n```sh\ncargo test --workspace   # all\nhelm install a \\\n  -f b.yaml\n```\n\
                ```text\nnot a command\n```\n  ```sh\n  one\n  ```\n";
    assert_eq!(
        sh_commands(text),
        ["cargo test --workspace", "helm install a -f b.yaml", "one"]
    );
}
