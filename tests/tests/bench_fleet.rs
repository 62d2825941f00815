//! The fleet bench end to end at a small size: the real adapter places a fleet through the fakes in
//! the HyperFleet inventory mode, and the per-pulse request attribution gives the "Requests per
//! pulse" rows of docs/placement.md (create: 2 HyperFleet requests, 1 find + 1 count per
//! candidate + 1 count under the placement lease, the lease's Kubernetes requests; steady: 2
//! HyperFleet requests, 1 Maestro search, no lease). The bench itself fails on an unexpected
//! report, a cluster placed outside its region or a work held elsewhere than its report says.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

#[test]
fn the_fleet_bench_places_a_small_fleet_and_counts_the_readme_requests_per_pulse() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("load.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_bench-fleet"))
        .args([
            "--clusters",
            "24",
            "--regions",
            "2",
            "--per-region",
            "3",
            "--concurrency",
            "4",
            "--steady",
            "6",
            "--svg",
        ])
        .arg(&svg)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (create, steady) = stdout
        .split_once("== steady")
        .unwrap_or_else(|| panic!("no steady phase in\n{stdout}"));
    for (phase, line) in [
        (
            create,
            "HyperFleet MC search by region     1 / 1.000 / 1 (24)",
        ),
        (
            create,
            "Maestro find search                1 / 1.000 / 1 (24)",
        ),
        (create, "total 24, 1.000 per pulse"),
        (create, "per pulse at most: HyperFleet 2, Maestro REST "),
        (
            steady,
            "HyperFleet MC search by consumer   1 / 1.000 / 1 (6)",
        ),
        (steady, "total 0, 0.000 per pulse"),
        (
            steady,
            "per pulse at most: HyperFleet 2, Maestro REST 1 (+ publishes)",
        ),
    ] {
        assert!(phase.contains(line), "missing {line:?} in\n{stdout}");
    }
    // A count per candidate (3) and one more under the chosen one's lease; one more per candidate
    // found full under its lease (a race with another pulse's create), so 4 at least.
    let (min, max) = min_max(create, "Maestro count search");
    assert!(
        min == 4 && (4..=6).contains(&max),
        "{min}/{max} in\n{stdout}"
    );
    // The placement lease: created (or found) by every create, never by a steady pulse.
    let (min, _) = min_max(create, "Kubernetes lease create");
    assert!(min >= 1, "{stdout}");
    let (min, _) = min_max(create, "Kubernetes lease PUT");
    assert!(min >= 1, "released by every create: {stdout}");
    assert!(!steady.contains("Kubernetes lease"), "{stdout}");
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(
        plot.matches("<polyline").count(),
        6,
        "one line per management cluster"
    );
}

/// `(min, max)` of the "requests per pulse" row starting with `kind` (`kind  min / mean / max (total)`).
fn min_max(phase: &str, kind: &str) -> (u64, u64) {
    let line = phase
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(kind))
        .unwrap_or_else(|| panic!("no {kind:?} row in\n{phase}"));
    let numbers: Vec<&str> = line[kind.len()..].split_whitespace().collect();
    // ["4", "/", "4.000", "/", "4", "(96)"]
    (numbers[0].parse().unwrap(), numbers[4].parse().unwrap())
}
