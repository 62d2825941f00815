//! Finding the workspace's built binaries, so tests and tools run the real programs.

use std::path::PathBuf;

/// The path of workspace binary `name` in the same target directory and profile as the running
/// executable (`target/debug/deps/e2e-…` and `target/release/local-pulse` both work).
///
/// `cargo test --workspace` builds the binaries first, because their packages have integration
/// tests. Panics with the command to run when the binary is missing.
pub fn path(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let mut dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let candidate = dir.join(name);
    assert!(
        candidate.is_file(),
        "{} is not built; run `cargo build --bins{}` (or the README's test command, which builds it)",
        candidate.display(),
        if dir.ends_with("release") {
            " --release"
        } else {
            ""
        }
    );
    candidate
}
