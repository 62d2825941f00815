//! `hypershift-adapter`: parse args, install the rustls ring provider, start tracing, dispatch.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hypershift_adapter::nodes;
use tracing_subscriber::EnvFilter;

#[derive(Debug, Parser)]
#[command(name = "hypershift-adapter", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check the Nodes of a cluster through its API.
    Nodes(nodes::Args),
}

fn init_tracing(format: nodes::LogFormat) {
    let filter = EnvFilter::try_from_env("LOG_LEVEL").unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        nodes::LogFormat::Json => builder.json().flatten_event(true).init(),
        nodes::LogFormat::Plain => builder.with_ansi(false).init(),
    }
}

/// Exit 0 once a report is written (whatever it says), 1 when none could be written; clap
/// exits 2 on bad flags.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = Cli::parse();
    match cli.cmd {
        Command::Nodes(args) => {
            init_tracing(args.log_format);
            let cluster_id = args.cluster_id.clone().unwrap_or_default();
            match nodes::run_with_kube(args).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!(cluster_id, error = %e, "no report written");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
