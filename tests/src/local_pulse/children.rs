//! What runs inside the re-executed `local-pulse` binary: the two containers of the Job.
//!
//! `cargo run -p testbed --bin local-pulse` does not build the other packages' binaries, so the
//! runner starts itself again with a hidden first argument, and the child calls the library entry
//! point of the real program (the same code `main.rs` of each binary calls). The failure
//! scenarios replace the adapter with a small stand-in.

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

/// The real `hypershift-adapter` (the rest of the arguments follow, e.g. `controlplane`).
pub const ADAPTER: &str = "__adapter";
/// The real `status-reporter`.
pub const STATUS_REPORTER: &str = "__status-reporter";
/// A stand-in adapter that logs an error and exits 1 without a report.
pub const ADAPTER_CRASH: &str = "__adapter-crash";
/// A stand-in adapter that never finishes.
pub const ADAPTER_HANG: &str = "__adapter-hang";
/// A stand-in adapter that writes a report the contract refuses, then exits 0.
pub const ADAPTER_INVALID_REPORT: &str = "__adapter-invalid-report";
/// A stand-in adapter that allocates memory without a report until the kernel kills it at its
/// container's memory limit (the kubelet reports `OOMKilled`); where no memory cgroup enforces
/// the limit, it exits 137 once past [`OOM_ALLOCATION`] (the kubelet's stand-in says
/// `OOMKilled` for that).
pub const ADAPTER_OOM_KILLED: &str = "__adapter-oom-killed";

/// The report the `invalid-report` stand-in writes: `Maybe` is not a condition status.
pub const INVALID_REPORT: &str =
    r#"{"conditions":[{"type":"Available","status":"Maybe","reason":"X"}]}"#;

/// Runs the child named by `args[1]`, if it names one; `None` for the runner itself.
pub fn dispatch(args: &[OsString]) -> Option<ExitCode> {
    let role = args.get(1)?.to_str()?;
    let rest = args.iter().skip(2).cloned();
    let code = match role {
        ADAPTER => hypershift_adapter::cli::run_from(
            std::iter::once(OsString::from("hypershift-adapter")).chain(rest),
        ),
        STATUS_REPORTER => status_reporter::main_from(
            std::iter::once(OsString::from("status-reporter")).chain(rest),
        ),
        ADAPTER_CRASH => {
            eprintln!(
                "error: simulated crash (local-pulse --scenario adapter-crash): \
                 the adapter exits 1 before writing a report"
            );
            ExitCode::FAILURE
        }
        ADAPTER_HANG => {
            eprintln!(
                "simulated hang (local-pulse --scenario hang): sleeping until killed, no report"
            );
            std::thread::sleep(Duration::from_secs(3600));
            ExitCode::FAILURE
        }
        ADAPTER_INVALID_REPORT => write_invalid_report(),
        ADAPTER_OOM_KILLED => allocate_until_killed(),
        _ => return None,
    };
    Some(code)
}

/// What the OOM stand-in allocates at most: twice the Job template's 128Mi limit.
pub const OOM_ALLOCATION: usize = 256 << 20;

/// Allocates and touches memory in 8 MiB steps up to [`OOM_ALLOCATION`]; exits 137 if still alive.
fn allocate_until_killed() -> ExitCode {
    eprintln!(
        "simulated runaway memory (local-pulse --scenario adapter OOM): allocating before writing a report"
    );
    let mut held: Vec<Vec<u8>> = Vec::new();
    while held.len() * (8 << 20) < OOM_ALLOCATION {
        held.push(vec![1u8; 8 << 20]);
    }
    eprintln!(
        "no memory limit stopped {} MiB: exit 137 as if OOM-killed",
        OOM_ALLOCATION >> 20
    );
    std::hint::black_box(&held);
    ExitCode::from(137)
}

/// Writes [`INVALID_REPORT`] atomically to `RESULTS_OUTPUT_PATH` (as the real adapter writes).
fn write_invalid_report() -> ExitCode {
    let Some(path) = std::env::var_os("RESULTS_OUTPUT_PATH") else {
        eprintln!("error: RESULTS_OUTPUT_PATH is not set");
        return ExitCode::FAILURE;
    };
    let path = std::path::PathBuf::from(path);
    // The contract's writer only writes valid reports: temp file in the same directory, rename.
    let tmp = path.with_extension("json.tmp");
    let written = std::fs::write(&tmp, INVALID_REPORT).and_then(|()| std::fs::rename(&tmp, &path));
    match written {
        Ok(()) => {
            eprintln!(
                "simulated bad report (local-pulse --scenario invalid-report): wrote {INVALID_REPORT}"
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            ExitCode::FAILURE
        }
    }
}
