//! TLS material for both transports: rustls with the ring provider only.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::config::MaestroConfig;
use super::error::misconfigured;
use crate::work::WorkError;

fn read(path: &Path, kind: crate::input_file::Kind) -> Result<Vec<u8>, WorkError> {
    kind.read(path).map_err(misconfigured)
}

fn config_error(what: &str, e: impl std::fmt::Display) -> WorkError {
    misconfigured(format!("{what}: {e}"))
}

/// PEM bytes of a client certificate chain and its key.
pub type PemIdentity = (Vec<u8>, Vec<u8>);

/// PEM contents of (CA, optional client cert + key) from the configured files.
pub fn pem_material(
    config: &MaestroConfig,
) -> Result<(Option<Vec<u8>>, Option<PemIdentity>), WorkError> {
    let ca = config
        .ca_file
        .as_deref()
        .map(|p| read(p, crate::input_file::MAESTRO_CA))
        .transpose()?;
    let identity = match (&config.client_cert_file, &config.client_key_file) {
        (Some(cert), Some(key)) => Some((
            read(cert, crate::input_file::MAESTRO_CLIENT_CERT)?,
            read(key, crate::input_file::MAESTRO_CLIENT_KEY)?,
        )),
        (None, None) => None,
        _ => {
            return Err(misconfigured(
                "client certificate and client key must be given together",
            ));
        }
    };
    Ok((ca, identity))
}

/// rustls client config for the REST client: roots = the configured CA, optional client certificate.
pub fn rustls_client_config(config: &MaestroConfig) -> Result<rustls::ClientConfig, WorkError> {
    let (ca, identity) = pem_material(config)?;
    let mut roots = rustls::RootCertStore::empty();
    if let Some(ca) = ca {
        for cert in CertificateDer::pem_slice_iter(&ca) {
            roots
                .add(cert.map_err(|e| config_error("CA file", e))?)
                .map_err(|e| config_error("CA file", e))?;
        }
    }
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| config_error("TLS", e))?
    .with_root_certificates(roots);
    match identity {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(&cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| config_error("client certificate", e))?;
            let key =
                PrivateKeyDer::from_pem_slice(&key).map_err(|e| config_error("client key", e))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| config_error("client certificate", e))
        }
        None => Ok(builder.with_no_client_auth()),
    }
}

/// tonic TLS config for `https` gRPC URLs.
pub fn tonic_client_tls(
    config: &MaestroConfig,
) -> Result<tonic::transport::ClientTlsConfig, WorkError> {
    let (ca, identity) = pem_material(config)?;
    let ca = ca.ok_or_else(|| misconfigured("an https gRPC URL requires a CA file"))?;
    let mut tls = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(ca));
    if let Some((cert, key)) = identity {
        tls = tls.identity(tonic::transport::Identity::from_pem(cert, key));
    }
    Ok(tls)
}
