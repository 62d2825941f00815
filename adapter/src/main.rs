//! `hypershift-adapter`: everything happens in [`hypershift_adapter::cli::main`].

use std::process::ExitCode;

fn main() -> ExitCode {
    hypershift_adapter::cli::main()
}
