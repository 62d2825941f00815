//! Reading from the HyperFleet API: a cluster (`GET {base}/api/hyperfleet/v1/clusters/{id}`),
//! for a cluster being deleted its NodePools (`GET …/clusters/{id}/nodepools`), and one NodePool
//! (`GET …/clusters/{id}/nodepools/{nodepool_id}`), with an optional token read from a file
//! before every request ([`Auth`]).

use std::path::PathBuf;
use std::time::Duration;

use reqwest::header::HeaderValue;

use crate::hyperfleet::cluster::{ClusterInput, InputError};
use crate::hyperfleet::nodepool::NodePoolInput;
use crate::hyperfleet::nodepools::NodePools;
use crate::kubeconfig::error_chain;

/// Path of one cluster under the API base URL.
pub const CLUSTERS_PATH: &str = "/api/hyperfleet/v1/clusters";
/// Timeout of the whole request (connect + response).
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// Largest response body read.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// The `Authorization` scheme of the HyperFleet API token.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthScheme {
    #[default]
    #[value(name = "Bearer")]
    Bearer,
    /// The framework's scheme after its v0.3.1 (HYPERFLEET-1480), for gateways that expect it.
    #[value(name = "ServiceAccount")]
    ServiceAccount,
}

/// The HyperFleet API credentials: the flags of every subcommand that reads the API.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Auth {
    /// File holding the HyperFleet API token: the Job's projected ServiceAccount token (audience
    /// hyperfleet-api) or a Secret's; re-read before every request; never logged.
    #[arg(
        long = "hyperfleet-token-file",
        env = "HYPERFLEET_API_TOKEN_FILE",
        value_name = "FILE"
    )]
    pub token_file: Option<PathBuf>,

    /// How the token is sent: `Authorization: <scheme> <token>`.
    #[arg(
        long = "hyperfleet-auth-scheme",
        env = "HYPERFLEET_API_AUTH_SCHEME",
        value_enum,
        default_value_t,
        ignore_case = true
    )]
    pub scheme: AuthScheme,
}

impl Auth {
    /// The `Authorization` header (`None` without a token file), read now. A missing, empty or
    /// expired token (a JWT's `exp`, read unverified, not after now) is an error naming the file
    /// and the fix: an expired token is never sent.
    pub fn header(&self) -> Result<Option<HeaderValue>, String> {
        let Some(path) = &self.token_file else {
            return Ok(None);
        };
        let fix = "mount the projected ServiceAccount token there (a pod's serviceAccountToken volume, audience hyperfleet-api) or the Secret hypershift-adapter-hyperfleet-api (docs/helm.md)";
        let file = crate::input_file::HYPERFLEET_TOKEN;
        let text = file.read_text(path).map_err(|e| format!("{e}; {fix}"))?;
        let token = text.trim();
        let shown = path.display();
        if token.is_empty() {
            return Err(format!("the {} {shown} is empty; {fix}", file.what));
        }
        let now = jiff::Timestamp::now().as_second();
        if let Some(exp) = jwt_expiry(token).filter(|exp| *exp <= now) {
            return Err(format!(
                "the token in {shown} expired {} s ago (exp {exp}), so it is not sent: the kubelet refreshes a projected ServiceAccount token at 80% of its expirationSeconds, so check that the volume is a serviceAccountToken projection and the node's kubelet and clock; a static token must be replaced in the Secret hypershift-adapter-hyperfleet-api",
                now - exp
            ));
        }
        let scheme = match self.scheme {
            AuthScheme::Bearer => "Bearer",
            AuthScheme::ServiceAccount => "ServiceAccount",
        };
        let mut value = HeaderValue::from_str(&format!("{scheme} {token}"))
            .map_err(|_| format!("the token in {shown} holds characters a header cannot carry"))?;
        value.set_sensitive(true);
        Ok(Some(value))
    }
}

/// A JWT's `exp` (seconds since the epoch), read without verifying it; `None` for another token.
fn jwt_expiry(token: &str) -> Option<i64> {
    use base64::Engine as _;
    let payload = token
        .split('.')
        .nth(1)
        .filter(|_| token.split('.').count() == 3)?;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let bytes = engine.decode(payload.trim_end_matches('=')).ok()?;
    serde_json::from_slice::<serde_json::Value>(&bytes).ok()?["exp"].as_i64()
}

/// Why the cluster could not be read from the HyperFleet API.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The token file could not be read; the message names it.
    #[error("{message}")]
    TokenFile { message: String },
    #[error("bad HyperFleet API URL {url:?}: {message}")]
    Url { url: String, message: String },
    #[error("GET {url} failed: {message}")]
    Transport { url: String, message: String },
    #[error("GET {url} answered HTTP {status}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
    },
    #[error("GET {url}: the response body is larger than {MAX_BODY} bytes")]
    TooLarge { url: String },
    #[error("GET {url}: the answer is not a NodePool list: {message}")]
    NotAList { url: String, message: String },
    #[error("GET {url}: {source}")]
    Input {
        url: String,
        #[source]
        source: InputError,
    },
}

impl FetchError {
    /// True when the cluster object itself is unreadable (not a transport or server problem).
    pub fn is_bad_input(&self) -> bool {
        matches!(self, Self::Input { .. })
    }
}

/// Fetches cluster `cluster_id` from the HyperFleet API at `base_url`.
pub async fn fetch_cluster(
    base_url: &str,
    cluster_id: &str,
    auth: &Auth,
    timeout: Duration,
) -> Result<ClusterInput, FetchError> {
    let (url, text) = get(base_url, cluster_id, "", auth, timeout).await?;
    ClusterInput::from_json(&text).map_err(|source| FetchError::Input { url, source })
}

/// Fetches NodePool `nodepool_id` of cluster `cluster_id` from the HyperFleet API at `base_url`
/// (the nested path checks that the NodePool belongs to the cluster: another cluster's answers 404).
pub async fn fetch_nodepool(
    base_url: &str,
    cluster_id: &str,
    nodepool_id: &str,
    auth: &Auth,
    timeout: Duration,
) -> Result<NodePoolInput, FetchError> {
    let suffix = format!("/nodepools/{nodepool_id}");
    let (url, text) = get(base_url, cluster_id, &suffix, auth, timeout).await?;
    NodePoolInput::from_json(&text).map_err(|source| FetchError::Input { url, source })
}

/// Lists the NodePools of cluster `cluster_id`: `GET {base}/api/hyperfleet/v1/clusters/{id}/nodepools`
/// (first page, the server's default size; `total` counts them all). Soft-deleted NodePools are
/// listed too, with their `deleted_time`.
pub async fn fetch_nodepools(
    base_url: &str,
    cluster_id: &str,
    auth: &Auth,
    timeout: Duration,
) -> Result<NodePools, FetchError> {
    let (url, text) = get(base_url, cluster_id, "/nodepools", auth, timeout).await?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| FetchError::NotAList {
            url: url.clone(),
            message: e.to_string(),
        })?;
    NodePools::from_list(&value).ok_or_else(|| FetchError::NotAList {
        url,
        message: "expected a NodePoolList object {items, page, size, total}".to_owned(),
    })
}

/// `GET {base}/api/hyperfleet/v1/clusters/{id}{suffix}`: the URL and the body text of a 2xx answer.
async fn get(
    base_url: &str,
    cluster_id: &str,
    suffix: &str,
    auth: &Auth,
    timeout: Duration,
) -> Result<(String, String), FetchError> {
    get_path(
        base_url,
        &format!("{CLUSTERS_PATH}/{cluster_id}{suffix}"),
        &[],
        auth,
        timeout,
    )
    .await
}

/// `GET {base}{path}?{query}`: the URL and the body text of a 2xx answer (at most 4 MiB).
pub async fn get_path(
    base_url: &str,
    path: &str,
    query: &[(&str, String)],
    auth: &Auth,
    timeout: Duration,
) -> Result<(String, String), FetchError> {
    let base = base_url.trim_end_matches('/');
    let mut url = format!("{base}{path}");
    if !query.is_empty() {
        let encoded: Vec<String> = query
            .iter()
            .map(|(k, v)| format!("{k}={}", percent_encode(v)))
            .collect();
        url = format!("{url}?{}", encoded.join("&"));
    }
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(FetchError::Url {
            url: base_url.to_owned(),
            message: "must start with http:// or https://".to_owned(),
        });
    }
    let authorization = auth
        .header()
        .map_err(|message| FetchError::TokenFile { message })?;
    let transport = |e: reqwest::Error| FetchError::Transport {
        url: url.clone(),
        message: error_chain(&e),
    };
    let http = reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .build()
        .map_err(transport)?;
    let mut request = http
        .get(&url)
        .header(reqwest::header::ACCEPT, "application/json");
    if let Some(value) = authorization {
        request = request.header(reqwest::header::AUTHORIZATION, value);
    }
    let response = request.send().await.map_err(transport)?;
    let status = response.status();
    let body = response.bytes().await.map_err(transport)?;
    if body.len() > MAX_BODY {
        return Err(FetchError::TooLarge { url });
    }
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        let mut body: String = text.chars().take(512).collect();
        if body.is_empty() {
            body = "(empty body)".to_owned();
        }
        return Err(FetchError::Status {
            url,
            status: status.as_u16(),
            body,
        });
    }
    let text = String::from_utf8_lossy(&body).into_owned();
    Ok((url, text))
}

/// Percent-encodes a query value (everything but RFC 3986 unreserved characters).
fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
