//! `status-reporter`: everything lives in the library so tests and the local pulse run the same code.

fn main() -> std::process::ExitCode {
    status_reporter::main_from(std::env::args_os())
}
