//! `docs-tables`: rewrites the condition tables of `docs/controlplane.md` and `docs/nodepool.md`
//! from the adapter's tables in code (`hypershift_adapter::pulse::{controlplane,nodepool}::table`).
//! The adapter's tests fail when a page and the code disagree; this makes them agree.
//!
//! `cargo run -p testbed --bin docs-tables` (from anywhere in the repository).

use std::path::Path;
use std::process::ExitCode;

use hypershift_adapter::pulse::table::{DELETION_HEADER, HEADER, Table};
use hypershift_adapter::pulse::{controlplane, nodepool};

/// `page` with the table block starting at `header` replaced by `table`.
fn replace(page: &str, header: &str, table: &str) -> Option<String> {
    let start = page.find(header)?;
    let end = start
        + page[start..]
            .split_inclusive('\n')
            .take_while(|l| l.starts_with('|'))
            .map(str::len)
            .sum::<usize>();
    Some(format!("{}{table}{}", &page[..start], &page[end..]))
}

fn main() -> ExitCode {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
    let tables: [(&str, Table); 2] = [
        ("controlplane.md", controlplane::table::TABLE),
        ("nodepool.md", nodepool::table::TABLE),
    ];
    for (name, table) in tables {
        let path = docs.join(name);
        let page = match std::fs::read_to_string(&path) {
            Ok(page) => page,
            Err(e) => {
                eprintln!("{}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        };
        let [rows, deletion] = table.render();
        let Some(page) = replace(&page, HEADER, &rows)
            .and_then(|page| replace(&page, DELETION_HEADER, &deletion))
        else {
            eprintln!("{}: no condition table to replace", path.display());
            return ExitCode::FAILURE;
        };
        if let Err(e) = std::fs::write(&path, page) {
            eprintln!("{}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("{} rewritten", path.display());
    }
    ExitCode::SUCCESS
}
