//! The documentation the tests hold to the code: `README.md` and the pages under `docs/`.

use std::path::{Path, PathBuf};

/// The repository root (the parent of the `tests` crate).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// `README.md` and every `docs/*.md`, by their paths from the root, sorted. An unreadable `docs/`
/// gives the README alone (the tests that need a page then fail naming it).
pub fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_owned()];
    let entries = std::fs::read_dir(root().join("docs")).into_iter().flatten();
    for name in entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
    {
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    pages.sort();
    pages
}
