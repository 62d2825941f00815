//! Connection settings of the Maestro client: URLs, TLS material, bearer token, deadlines.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::error::misconfigured;
use crate::work::WorkError;

/// Default per-call deadline for Publish and REST calls.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default gRPC decode limit (the gRPC default of 4 MiB is too small for status events with large feedback).
pub const DEFAULT_MAX_DECODE_BYTES: usize = 16 * 1024 * 1024;

/// Settings of a [`super::MaestroWorkClient`].
///
/// URLs: `http://` = plaintext, `https://` = TLS (rustls, ring) trusting [`Self::ca_file`] (required for
/// `https`: no system roots are compiled in), with an optional client certificate for mTLS.
#[derive(Clone, Debug)]
pub struct MaestroConfig {
    /// gRPC endpoint, e.g. `https://maestro-grpc:8090`.
    pub grpc_url: String,
    /// REST base URL, e.g. `https://maestro:8000` (the `/api/maestro/v1/...` path is appended).
    pub rest_url: String,
    /// Source id (`MAESTRO_SOURCE_ID`): CE `source` and part of every resource id.
    pub source_id: String,
    /// Consumer name (`MANAGEMENT_CLUSTER_CONSUMER`) = work namespace.
    pub consumer: String,
    /// PEM CA bundle to trust for `https` URLs.
    pub ca_file: Option<PathBuf>,
    /// PEM client certificate (mTLS), together with [`Self::client_key_file`].
    pub client_cert_file: Option<PathBuf>,
    /// PEM client key (mTLS).
    pub client_key_file: Option<PathBuf>,
    /// Bearer token for gRPC calls (also sent to REST, which ignores it unless a proxy checks it). Attached only to
    /// `https` URLs, never in plaintext.
    pub token: TokenSource,
    /// Per-call deadline.
    pub timeout: Duration,
    /// Maximum gRPC message size accepted when decoding.
    pub max_decode_bytes: usize,
}

/// The Maestro TLS material and bearer token flags, the same for the pulses (`WorkArgs`) and
/// `diagnose`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MaestroTlsArgs {
    /// PEM CA bundle trusted for `https` Maestro URLs (required for `https`).
    #[arg(long, env = "MAESTRO_CA_FILE", value_name = "FILE")]
    pub maestro_ca_file: Option<PathBuf>,

    /// PEM client certificate for Maestro mTLS (with `--maestro-client-key`).
    #[arg(
        long,
        env = "MAESTRO_CLIENT_CERT_FILE",
        value_name = "FILE",
        requires = "maestro_client_key"
    )]
    pub maestro_client_cert: Option<PathBuf>,

    /// PEM client key for Maestro mTLS (with `--maestro-client-cert`).
    #[arg(
        long,
        env = "MAESTRO_CLIENT_KEY_FILE",
        value_name = "FILE",
        requires = "maestro_client_cert"
    )]
    pub maestro_client_key: Option<PathBuf>,

    /// File holding Maestro's bearer token, re-read on every call (sent over TLS only).
    #[arg(long, env = "MAESTRO_TOKEN_FILE", value_name = "FILE")]
    pub maestro_token_file: Option<PathBuf>,
}

impl MaestroTlsArgs {
    /// Sets `config`'s TLS material and token source from these flags.
    pub fn apply_to(&self, config: &mut MaestroConfig) {
        config.ca_file.clone_from(&self.maestro_ca_file);
        config
            .client_cert_file
            .clone_from(&self.maestro_client_cert);
        config.client_key_file.clone_from(&self.maestro_client_key);
        if let Some(path) = &self.maestro_token_file {
            config.token = TokenSource::File(path.clone());
        }
    }
}

impl MaestroConfig {
    /// Settings with defaults: no TLS material, no token, [`DEFAULT_TIMEOUT`], [`DEFAULT_MAX_DECODE_BYTES`].
    pub fn new(
        grpc_url: impl Into<String>,
        rest_url: impl Into<String>,
        source_id: impl Into<String>,
        consumer: impl Into<String>,
    ) -> Self {
        Self {
            grpc_url: grpc_url.into(),
            rest_url: rest_url.into(),
            source_id: source_id.into(),
            consumer: consumer.into(),
            ca_file: None,
            client_cert_file: None,
            client_key_file: None,
            token: TokenSource::None,
            timeout: DEFAULT_TIMEOUT,
            max_decode_bytes: DEFAULT_MAX_DECODE_BYTES,
        }
    }

    /// The bearer token to send to `url`, re-read now: only over TLS (`https://`), like the Go
    /// client, never in plaintext.
    pub async fn token_for(&self, url: &str) -> Result<Option<BearerToken>, WorkError> {
        if url.starts_with("https://") {
            self.token.current().await
        } else {
            Ok(None)
        }
    }
}

/// Where the bearer token comes from.
#[derive(Clone, Debug, Default)]
pub enum TokenSource {
    /// No token.
    #[default]
    None,
    /// Read from this file on **every** call (rotated projected tokens work); surrounding whitespace trimmed.
    File(PathBuf),
    /// A fixed token (tests).
    Static(BearerToken),
}

impl TokenSource {
    /// The current token, re-reading the file. An empty file counts as no token.
    pub async fn current(&self) -> Result<Option<BearerToken>, WorkError> {
        match self {
            Self::None => Ok(None),
            Self::Static(t) => Ok(Some(t.clone())),
            Self::File(path) => {
                let text = crate::input_file::MAESTRO_TOKEN
                    .read_text(path)
                    .map_err(misconfigured)?;
                let token = text.trim();
                Ok((!token.is_empty()).then(|| BearerToken::new(token)))
            }
        }
    }
}

/// A bearer token. Its `Debug` output is redacted; it is never logged.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(String);

impl BearerToken {
    /// Wraps a token value.
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// The `Authorization` header value, `Bearer <token>`.
    pub fn header_value(&self) -> String {
        format!("Bearer {}", self.0)
    }

    /// [`Self::header_value`] as a header value of either transport (`reqwest`'s, tonic's).
    pub fn header<T: TryFrom<String>>(&self) -> Result<T, WorkError> {
        T::try_from(self.header_value())
            .map_err(|_| misconfigured("bearer token is not a valid header value"))
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(<redacted>)")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::type_complexity)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_token() {
        let mut cfg = MaestroConfig::new("http://g", "http://r", "s", "c");
        cfg.token = TokenSource::Static(BearerToken::new("s3cr3t"));
        let text = format!("{cfg:?}");
        assert!(!text.contains("s3cr3t"), "{text}");
        assert!(text.contains("redacted"));
    }

    #[tokio::test]
    async fn token_file_is_reread_on_every_call() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "one\n").unwrap();
        let source = TokenSource::File(path.clone());
        assert_eq!(
            source.current().await.unwrap(),
            Some(BearerToken::new("one"))
        );
        std::fs::write(&path, "two").unwrap();
        assert_eq!(
            source.current().await.unwrap(),
            Some(BearerToken::new("two"))
        );
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(
            source.current().await,
            Err(WorkError::Config { .. })
        ));
    }

    /// A Config error is `AdapterMisconfigured` (work/outcome.rs).
    #[tokio::test]
    async fn an_oversized_or_endless_token_file_is_a_config_error_naming_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, vec![b'a'; 64 * 1024 + 1]).unwrap();
        for file in [path, PathBuf::from("/dev/zero")] {
            let err = TokenSource::File(file.clone()).current().await.unwrap_err();
            let WorkError::Config { message } = &err else {
                panic!("{err:?}");
            };
            assert!(
                message.contains(&file.display().to_string())
                    && message.contains("MAESTRO_TOKEN_FILE must name a file of at most 64 KiB"),
                "{message}"
            );
        }
    }
}
