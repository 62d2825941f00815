use std::process::ExitCode;

use clap::Parser;
use status_reporter::config::{Args, Config};
use status_reporter::{Exit, kube_client, logging, run};

fn main() -> ExitCode {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args = Args::parse();
    logging::init(args.log_format, &args.log_level);
    let kubeconfig = args.kubeconfig.clone();
    let config = match Config::from_args(args) {
        Ok(config) => config,
        Err(e) => {
            tracing::error!(error = %e, "bad configuration");
            return Exit::BadConfig.into();
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the async runtime");
            return Exit::NotWritten.into();
        }
    };
    runtime
        .block_on(async {
            let client = match kube_client(kubeconfig.as_deref()).await {
                Ok(client) => client,
                Err(e) => {
                    tracing::error!(error = %e, "cannot build a Kubernetes client from the kubeconfig or the in-cluster service account");
                    return Exit::BadConfig;
                }
            };
            run(config, client, shutdown_signal()).await
        })
        .into()
}

/// Resolves on SIGTERM (the kubelet stopping the Pod) or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
