//! A kubeconfig (`KUBECONFIG`: the hub's, the hosted cluster's for `nodes`, the framework
//! cluster's for `diagnose`, the Job's own for the placement lease and the status-reporter), as
//! the adapter loads it (`kubeconfig::load`: bounded read, the files it names read bounded and
//! inlined, kube-rs's configuration) and as the status-reporter does (`read_kubeconfig`, then
//! kube-rs's `Config::from_custom_kubeconfig`), then the client both build from it
//! (`kube::Client::try_from`: TLS material parsed) unless it names an exec plugin or an auth
//! provider (those run commands).
//!
//! The files a kubeconfig may name by a relative path (`ca.crt`, `client.crt`, `client.key`,
//! `token`) are there, valid, beside it.
//!
//! Properties: every refusal says why (a non-empty message), and becomes the rows that name it
//! (`InvalidKubeconfig` for `nodes`, `AdapterMisconfigured` for the hub backend); bounded time
//! and memory whatever the YAML (aliases, deep nesting) and whatever files it names.
#![no_main]

use std::path::Path;
use std::sync::LazyLock;

use hypershift_adapter::pulse::controlplane;
use hypershift_adapter::pulse::nodes::source::SourceError;
use hypershift_fuzz::{assert_reasons, assert_writable, block_on, scratch, scratch_file};
use libfuzzer_sys::fuzz_target;

/// The files beside the kubeconfig: a CA and a client certificate and key (rcgen), a token.
static BESIDE: LazyLock<()> = LazyLock::new(|| {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let key = rcgen::KeyPair::generate().unwrap_or_else(|e| panic!("key: {e}"));
    let cert = rcgen::CertificateParams::new(vec!["hub.example.com".to_owned()])
        .and_then(|p| p.self_signed(&key))
        .unwrap_or_else(|e| panic!("certificate: {e}"));
    for (name, text) in [
        ("ca.crt", cert.pem()),
        ("client.crt", cert.pem()),
        ("client.key", key.serialize_pem()),
        ("token", "eyJhbGciOiJSUzI1NiJ9.e30.c2ln\n".to_owned()),
    ] {
        scratch_file(name, text.as_bytes());
    }
});

fn refused(message: &str, path: &Path) {
    assert!(
        !message.trim().is_empty(),
        "a kubeconfig refused without a reason"
    );
    let nodes = SourceError::Config {
        path: Some(path.to_owned()),
        message: message.to_owned(),
    };
    assert_eq!(nodes.reason(), "InvalidKubeconfig");
    let report = controlplane::report_adapter_misconfigured(message, Some(1));
    assert_writable(&report, "kubeconfig");
    assert_reasons(&report, &["AdapterMisconfigured"], "kubeconfig");
}

/// Whether building a client from `user` would run a command.
fn runs_commands(config: &kube::Config) -> bool {
    config.auth_info.exec.is_some() || config.auth_info.auth_provider.is_some()
}

fuzz_target!(|data: &[u8]| {
    LazyLock::force(&BESIDE);
    let _ = scratch();
    let path = scratch_file("kubeconfig", data);
    block_on(async {
        match hypershift_adapter::kubeconfig::load(Some(&path)).await {
            Ok(config) if !runs_commands(&config) => {
                if let Err(e) = kube::Client::try_from(config) {
                    refused(&hypershift_adapter::kubeconfig::error_chain(&e), &path);
                }
            }
            Ok(_) => {}
            Err(message) => refused(&message, &path),
        }
        match status_reporter::read_kubeconfig(&path) {
            Ok(file) => match kube::Config::from_custom_kubeconfig(file, &Default::default()).await
            {
                Ok(config) if !runs_commands(&config) => {
                    if let Err(e) = kube::Client::try_from(config) {
                        assert!(!e.to_string().is_empty());
                    }
                }
                Ok(_) => {}
                Err(e) => assert!(!e.to_string().is_empty()),
            },
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    });
});
