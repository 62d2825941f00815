//! The README's flag tables say what the binaries accept: every row's flag and environment
//! variable exist in the binary's `--help`, and every flag with an environment variable there has
//! a row.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::process::Command;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap()
}

/// `(flag, env)` pairs from the table after `<!-- flags: NAME -->`.
fn table(readme: &str, name: &str) -> BTreeSet<(String, String)> {
    let marker = format!("<!-- flags: {name} -->");
    let start = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("no `{marker}` in README.md"));
    readme[start + marker.len()..]
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
        if let Some(rest) = trimmed
            .strip_prefix("--")
            .or_else(|| trimmed.strip_prefix("-h, --"))
        {
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

fn check(name: &str, binary: &str, args: &[&str]) {
    let documented = table(&readme(), name);
    let accepted = help(binary, args);
    let missing: Vec<_> = accepted.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&accepted).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "README table `{name}` disagrees with --help:\n  not documented: {missing:?}\n  not accepted: {unknown:?}"
    );
}

#[test]
fn status_reporter_table_matches_its_flags() {
    check("status-reporter", "status-reporter", &[]);
}

#[test]
fn controlplane_table_matches_its_flags() {
    check(
        "hypershift-adapter controlplane",
        "hypershift-adapter",
        &["controlplane"],
    );
}

#[test]
fn nodes_table_matches_its_flags() {
    check("hypershift-adapter nodes", "hypershift-adapter", &["nodes"]);
}

#[test]
fn a_wrong_row_is_caught() {
    let mut fake = readme();
    fake = fake.replace(
        "| `--consumer` | `MANAGEMENT_CLUSTER_CONSUMER`",
        "| `--consumer` | `CONSUMER`",
    );
    let documented = table(&fake, "hypershift-adapter controlplane");
    let accepted = help("hypershift-adapter", &["controlplane"]);
    assert_ne!(documented, accepted);
}
