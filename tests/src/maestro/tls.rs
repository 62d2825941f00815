//! Test PKI generated at runtime (rcgen, ring) and a TLS accept loop for the REST server.

use std::sync::Arc;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;

/// A CA and a server certificate for `127.0.0.1` and `localhost` signed by it (PEM).
#[derive(Debug, Clone)]
pub struct TestPki {
    /// CA certificate (give this to clients).
    pub ca_pem: String,
    /// Server certificate.
    pub server_cert_pem: String,
    /// Server private key.
    pub server_key_pem: String,
    /// Client certificate for mTLS (CN = user `hyperfleet-adapter`, O = group `hyperfleet`).
    pub client_cert_pem: String,
    /// Client private key.
    pub client_key_pem: String,
}

impl TestPki {
    /// Generates a fresh CA and server certificate.
    pub fn generate() -> anyhow::Result<Self> {
        use rcgen::{
            BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose,
            IsCa, KeyPair,
        };
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "fake-maestro test CA");
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate()?)?;
        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])?;
        params
            .distinguished_name
            .push(DnType::CommonName, "fake-maestro");
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &ca)?;
        let mut client = CertificateParams::new(Vec::<String>::new())?;
        client
            .distinguished_name
            .push(DnType::CommonName, "hyperfleet-adapter");
        client
            .distinguished_name
            .push(DnType::OrganizationName, "hyperfleet");
        client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let client_key = KeyPair::generate()?;
        let client_cert = client.signed_by(&client_key, &ca)?;
        Ok(Self {
            ca_pem: ca.pem(),
            server_cert_pem: cert.pem(),
            server_key_pem: key.serialize_pem(),
            client_cert_pem: client_cert.pem(),
            client_key_pem: client_key.serialize_pem(),
        })
    }

    /// rustls server config (ring, TLS 1.3 only like Maestro) for the REST server.
    pub fn rustls_server_config(&self) -> anyhow::Result<rustls::ServerConfig> {
        let chain = CertificateDer::pem_slice_iter(self.server_cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()?;
        let key = PrivateKeyDer::from_pem_slice(self.server_key_pem.as_bytes())?;
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(config)
    }
}

/// Serves `router` over TLS on `listener` until the task is aborted.
pub async fn serve_tls(listener: TcpListener, config: rustls::ServerConfig, router: Router) {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        // As the plaintext servers: TCP_NODELAY, Go's default for the real server.
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let router = router.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let service = TowerToHyperService::new(router);
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}
