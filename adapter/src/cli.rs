//! The `hypershift-adapter` command line: subcommands, logging, the runtime, exit codes.
//!
//! `main.rs` only calls [`main`]; the local-pulse runner calls [`run_from`] with its own
//! arguments. Exit codes: 0 a report was written (whatever it says), 1 no report could be
//! written, 2 bad flags or configuration (`diagnose` has its own, see [`crate::diagnose`]). On a
//! non-zero exit (and on a panic) the cause is also the container's termination message
//! ([`crate::pulse::write_termination_message`]).

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

use crate::pulse::{controlplane, nodepool, nodes};

pub use crate::pulse::{EXIT_CONFIG, EXIT_NO_REPORT, LogFormat, results_path};

/// HyperFleet adapter Job for HyperShift.
#[derive(Debug, Parser)]
#[command(name = "hypershift-adapter", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Ship the cluster's HostedCluster in a ManifestWork (Maestro or OCM hub) and report its state.
    Controlplane(controlplane::Args),
    /// Ship a NodePool's HyperShift NodePool in a ManifestWork, after its cluster's control plane,
    /// and report its state.
    Nodepool(nodepool::Args),
    /// Check the Nodes of a cluster through its API.
    Nodes(nodes::Args),
    /// Say where a cluster or NodePool is stuck, and why (reads only).
    Diagnose(crate::diagnose::Args),
}

/// The process entry point: parses `std::env::args_os()`.
pub fn main() -> ExitCode {
    run_from(std::env::args_os())
}

/// Parses `args` (the first item is the program name), then installs the rustls ring provider,
/// starts tracing, builds a current-thread runtime and runs [`dispatch`] on it.
///
/// Must not be called from inside a tokio runtime (it starts its own); async callers such as a
/// local-pulse runner call [`init`] once and then await [`dispatch`] instead.
pub fn run_from<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // --help/--version print to stdout and exit 0; usage errors exit 2.
            let _ = e.print();
            if e.use_stderr() {
                crate::pulse::write_termination_message(&format!("bad flags: {e}"));
            }
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(EXIT_CONFIG));
        }
    };
    init(&cli);
    install_panic_message();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the async runtime");
            crate::pulse::write_termination_message(&format!(
                "cannot start the async runtime: {e}"
            ));
            return ExitCode::from(EXIT_NO_REPORT);
        }
    };
    runtime.block_on(dispatch(cli))
}

/// A panic (a bug) also says why in the termination message, then runs the default hook (the
/// message and location on stderr; the release build aborts).
fn install_panic_message() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        crate::pulse::write_termination_message(&format!("panic: {info}"));
        default(info);
    }));
}

/// Process-wide setup for `cli`: the rustls ring provider and the tracing subscriber (both keep
/// the first installation when called again).
pub fn init(cli: &Cli) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    match &cli.command {
        Command::Controlplane(args) => init_tracing(args.log_format, args.log_level.as_deref()),
        Command::Nodepool(args) => init_tracing(args.log_format, args.log_level.as_deref()),
        Command::Nodes(args) => init_tracing(args.log_format, None),
        Command::Diagnose(_) => init_tracing(LogFormat::Plain, Some("warn")),
    }
}

/// Runs the parsed subcommand to its exit code.
pub async fn dispatch(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Controlplane(args) => controlplane::execute(args).await,
        Command::Nodepool(args) => nodepool::execute(args).await,
        Command::Diagnose(args) => crate::diagnose::execute(args).await,
        Command::Nodes(args) => {
            let cluster_id = args.cluster_id.clone().unwrap_or_default();
            match nodes::run_with_kube(args).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!(cluster_id, error = %e, "no report written");
                    crate::pulse::write_termination_message(&format!("{e:#}"));
                    ExitCode::from(EXIT_NO_REPORT)
                }
            }
        }
    }
}

/// Starts the global subscriber on stderr: `level` (an `EnvFilter` directive such as `info` or
/// `hypershift_adapter=debug`), else `LOG_LEVEL`, else `info`. A second call (tests, a runner
/// calling [`run_from`] twice) keeps the first subscriber.
pub fn init_tracing(format: LogFormat, level: Option<&str>) {
    let filter = level
        .and_then(|l| EnvFilter::try_new(l).ok())
        .or_else(|| EnvFilter::try_from_env("LOG_LEVEL").ok())
        .unwrap_or_else(|| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Plain => builder.with_ansi(false).try_init(),
    };
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::{Path, PathBuf};

    use clap::CommandFactory;

    use super::*;

    #[test]
    fn command_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn results_path_prefers_flag_then_results_path_env_then_default() {
        assert_eq!(
            results_path(None, None),
            PathBuf::from("/results/adapter-report.json")
        );
        assert_eq!(
            results_path(None, Some("".into())),
            PathBuf::from("/results/adapter-report.json")
        );
        assert_eq!(
            results_path(None, Some("/r/a.json".into())),
            PathBuf::from("/r/a.json")
        );
        assert_eq!(
            results_path(Some(Path::new("/o/b.json")), Some("/r/a.json".into())),
            PathBuf::from("/o/b.json")
        );
    }

    /// `hypershift-adapter nodes --help`, short and long: the about, every flag, its env var and
    /// default, in order.
    #[test]
    fn nodes_help_is_pinned() {
        let mut cli = Cli::command();
        // Env values are hidden: the help shows those of the environment the test runs in.
        let nodes = cli
            .find_subcommand_mut("nodes")
            .unwrap()
            .clone()
            .mut_args(|a| a.hide_env_values(true));
        let mut nodes = nodes;
        let short = nodes.render_help().to_string();
        let long = nodes.render_long_help().to_string();
        insta::assert_snapshot!("nodes_help", format!("{short}\n----\n{long}"));
    }
}
