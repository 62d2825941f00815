//! The condition tables against the pages that show them and the reports the pulses make.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use super::{DELETION_HEADER, HEADER, Table};
use crate::pulse::{controlplane, nodepool};

/// The table block of `page` that starts with `header`: up to its last `|` line.
fn block<'a>(page: &'a str, header: &str) -> &'a str {
    let start = page
        .find(header)
        .unwrap_or_else(|| panic!("no table {header:?}"));
    let rest = &page[start..];
    let end = rest
        .split_inclusive('\n')
        .take_while(|l| l.starts_with('|'))
        .map(str::len)
        .sum::<usize>();
    &rest[..end]
}

fn page(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(name);
    std::fs::read_to_string(&path).unwrap()
}

const TABLES: [(&str, Table); 2] = [
    ("controlplane.md", controlplane::table::TABLE),
    ("nodepool.md", nodepool::table::TABLE),
];

#[test]
fn the_pages_show_the_tables_as_they_are_in_the_code() {
    for (name, table) in TABLES {
        let page = page(name);
        let [rows, deletion] = table.render();
        assert_eq!(
            block(&page, HEADER),
            rows,
            "docs/{name}: `cargo run -p testbed --bin docs-tables` rewrites it"
        );
        assert_eq!(
            block(&page, DELETION_HEADER),
            deletion,
            "docs/{name}: `cargo run -p testbed --bin docs-tables` rewrites it"
        );
    }
}

/// Every reason of every report in the pulse oracle (`adapter/tests/oracle/pulse/`), by the
/// table of its object.
#[test]
fn every_reason_a_pulse_reports_is_in_its_objects_table() {
    let oracle = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/pulse");
    let mut checked = 0;
    for entry in std::fs::read_dir(&oracle).unwrap() {
        let group = entry.unwrap().path();
        let name = group.file_name().unwrap().to_string_lossy().into_owned();
        let table = if name.starts_with("nodepool") {
            TABLES[1].1
        } else {
            TABLES[0].1
        };
        let known = table.reasons();
        for file in std::fs::read_dir(&group).unwrap() {
            let path = file.unwrap().path();
            let snapshot: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for condition in snapshot["report"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let reason = condition["reason"].as_str().unwrap();
                assert!(
                    known.contains(&reason),
                    "{}: {reason} is not in the {name} table",
                    path.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 400, "{checked}");
}

#[test]
fn the_transport_reasons_are_the_backends_and_the_agents() {
    for (_, table) in TABLES {
        let mut transport: Vec<&str> = table
            .reasons()
            .into_iter()
            .filter(|r| table.is_transport(r))
            .collect();
        transport.sort_unstable();
        assert_eq!(
            transport,
            [
                "ApplyFailed",
                "ConsumerNotFound",
                "FeedbackNotSynced",
                "HubAuthFailed",
                "HubNamespaceNotFound",
                "HubUnavailable",
                "MaestroAuthFailed",
                "MaestroUnavailable"
            ]
        );
    }
}
