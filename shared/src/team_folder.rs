//! Finding the team folder (`../shared`, beside the repository) for tests that read its fixtures.
//!
//! The fixtures there (real CRDs, recorded Maestro answers, the HyperFleet framework's examples and
//! the API's OpenAPI spec) are not part of the repository. A test that needs one calls [`find`]:
//! on a clone without the team folder it prints one line naming what is missing and the test
//! returns early, so `cargo test --workspace` still passes there. CI sets [`REQUIRED_ENV`]
//! (`.ci/run` does), and then a missing folder fails the test instead of skipping it.

use std::io::Write;
use std::path::{Path, PathBuf};

/// When this variable is set to anything but `0`, a missing team folder is a test failure.
pub const REQUIRED_ENV: &str = "TEAM_FOLDER_REQUIRED";

/// The directory `shared/<relative>` in the nearest ancestor of `start` that has it, e.g.
/// `find(env!("CARGO_MANIFEST_DIR"), "fixtures/crds")`. `<repo>/../shared` for the main checkout;
/// a worktree one level deeper finds the same folder. `None` (after printing why) when no
/// ancestor has it and [`REQUIRED_ENV`] is unset.
///
/// # Panics
/// When the folder is missing and [`REQUIRED_ENV`] is set: CI must run these tests.
pub fn find(start: &str, relative: &str) -> Option<PathBuf> {
    let found = Path::new(start)
        .ancestors()
        .map(|dir| dir.join("shared").join(relative))
        .find(|dir| dir.is_dir());
    if found.is_none() {
        let line = format!(
            "skipped: the team folder's shared/{relative} is not beside this checkout (looked above {start})"
        );
        if required() {
            panic!("{line}, and {REQUIRED_ENV} is set");
        }
        // Straight to the process's stderr: the test harness captures `eprintln!`, and a skip
        // must be visible in a passing run.
        let _ = writeln!(std::io::stderr(), "{line}");
    }
    found
}

fn required() -> bool {
    std::env::var_os(REQUIRED_ENV).is_some_and(|v| v != "0" && !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_folder_in_an_ancestor_and_none_elsewhere() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let deep = root.path().join("wt/repo/crate");
        std::fs::create_dir_all(&deep).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(root.path().join("shared/fixtures/x"))
            .unwrap_or_else(|e| panic!("{e}"));
        let start = deep.to_str().unwrap_or_default();
        assert_eq!(
            find(start, "fixtures/x"),
            Some(root.path().join("shared/fixtures/x"))
        );
        if !required() {
            assert_eq!(find(start, "fixtures/not-there"), None);
        }
    }
}
