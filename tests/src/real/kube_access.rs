//! Kubernetes objects and identities on the kit's real API server: apply the project's manifests
//! (RBAC) as they are, and a kubeconfig for a ServiceAccount with a token from the real
//! TokenRequest API, so that a program run with it passes exactly the RBAC the manifests grant.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use k8s_openapi::api::authentication::v1::{BoundObjectReference, TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount, ServiceAccountTokenProjection};
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use serde_json::{Value, json};

use super::RealSystems;

/// The field manager of everything these helpers apply.
pub const FIELD_MANAGER: &str = "hypershift-adapter-real-tests";

/// Creates namespace `name` unless it exists.
///
/// # Errors
/// When the API server refuses otherwise.
pub async fn ensure_namespace(client: &kube::Client, name: &str) -> anyhow::Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": name}}))?;
    match namespaces.create(&PostParams::default(), &namespace).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(e) => Err(e).with_context(|| format!("create namespace {name}")),
    }
}

/// Server-side applies every document of the YAML file `path` (forcing ownership, so tests that
/// apply the same manifest concurrently agree), creating each document's namespace first.
///
/// # Errors
/// When the file cannot be read or parsed, a kind is unknown to the server, or the server
/// refuses a document.
pub async fn apply_file(client: &kube::Client, path: &Path) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))?;
    let documents: Vec<Value> =
        serde_saphyr::from_multiple(&text).with_context(|| format!("parse {}", path.display()))?;
    for document in documents.into_iter().filter(|d| d.is_object()) {
        apply(client, &document)
            .await
            .with_context(|| format!("apply {}", path.display()))?;
    }
    Ok(())
}

/// Server-side applies one object (forcing ownership).
///
/// # Errors
/// When its kind is unknown to the server or the server refuses it.
pub async fn apply(client: &kube::Client, object: &Value) -> anyhow::Result<()> {
    let api_version = object["apiVersion"].as_str().context("no apiVersion")?;
    let kind = object["kind"].as_str().context("no kind")?;
    let name = object["metadata"]["name"].as_str().context("no name")?;
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (resource, _) = kube::discovery::pinned_kind(client, &gvk)
        .await
        .with_context(|| format!("discover {api_version} {kind}"))?;
    let api: Api<DynamicObject> = match object["metadata"]["namespace"].as_str() {
        Some(namespace) => {
            ensure_namespace(client, namespace).await?;
            Api::namespaced_with(client.clone(), namespace, &resource)
        }
        None => Api::all_with(client.clone(), &resource),
    };
    api.patch(
        name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(object),
    )
    .await
    .with_context(|| format!("apply {kind} {name}"))?;
    Ok(())
}

/// A kubeconfig at `path` for ServiceAccount `namespace/name` on the kit's API server: the
/// cluster's CA and a token the real TokenRequest API minted for `seconds` (at least 600, the
/// API server's minimum). Returns `path`.
///
/// # Errors
/// When the ServiceAccount does not exist, the token request is refused or the file cannot be
/// written.
pub async fn service_account_kubeconfig(
    real: &RealSystems,
    client: &kube::Client,
    namespace: &str,
    name: &str,
    seconds: i64,
    path: &Path,
) -> anyhow::Result<PathBuf> {
    let token = service_account_token(client, namespace, name, seconds).await?;
    let ca = std::fs::read(real.var("REAL_KUBE_CA_FILE")).context("read the kit's CA")?;
    let kubeconfig = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "real", "cluster": {
            "server": real.var("REAL_KUBE_API_URL"),
            "certificate-authority-data": base64_encode(&ca),
        }}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": "real", "user": name, "namespace": namespace}}],
        "current-context": name,
    });
    write_private(path, kubeconfig.to_string().as_bytes())?;
    Ok(path.to_owned())
}

/// A token for ServiceAccount `namespace/name` from the TokenRequest API, valid `seconds`.
///
/// # Errors
/// When the ServiceAccount does not exist or the request is refused.
pub async fn service_account_token(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    seconds: i64,
) -> anyhow::Result<String> {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: vec![],
            expiration_seconds: Some(seconds.max(600)),
            bound_object_ref: None,
        },
        ..Default::default()
    };
    let answer = accounts
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .with_context(|| format!("TokenRequest for {namespace}/{name}"))?;
    let token = answer.status.map(|s| s.token).unwrap_or_default();
    if token.is_empty() {
        bail!("TokenRequest for {namespace}/{name} returned no token");
    }
    Ok(token)
}

/// The token a kubelet writes for a projected `source` of a pod running as ServiceAccount
/// `namespace/account`: a TokenRequest with the source's audience and `expirationSeconds` (the
/// kubelet's default 3600 when unset), bound to the pod `(name, uid)` when given, as the kubelet's
/// token manager asks.
///
/// # Errors
/// When the API server refuses the request.
pub async fn projected_token(
    client: &kube::Client,
    (namespace, account): (&str, &str),
    source: &ServiceAccountTokenProjection,
    pod: Option<(&str, &str)>,
) -> anyhow::Result<String> {
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: source.audience.iter().cloned().collect(),
            expiration_seconds: Some(source.expiration_seconds.unwrap_or(3600)),
            bound_object_ref: pod.map(|(name, uid)| BoundObjectReference {
                api_version: Some("v1".to_owned()),
                kind: Some("Pod".to_owned()),
                name: Some(name.to_owned()),
                uid: Some(uid.to_owned()),
            }),
        },
        ..Default::default()
    };
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let answer = accounts
        .create_token_request(account, &PostParams::default(), &request)
        .await
        .with_context(|| format!("TokenRequest for {namespace}/{account} ({pod:?})"))?;
    let token = answer.status.map(|s| s.token).unwrap_or_default();
    if token.is_empty() {
        bail!("TokenRequest for {namespace}/{account} returned no token");
    }
    Ok(token)
}

/// A JWT's payload (claims), decoded without verifying the signature.
///
/// # Errors
/// When `token` is not three base64url parts with a JSON payload.
pub fn jwt_claims(token: &str) -> anyhow::Result<Value> {
    use base64::Engine as _;
    let [_, payload, _] = token.split('.').collect::<Vec<_>>()[..] else {
        bail!("not a JWT");
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload)?;
    Ok(serde_json::from_slice(&bytes)?)
}

/// Writes `bytes` to `path` readable by the owner only (it holds a token).
fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("write {}", path.display()))?;
    file.write_all(bytes)?;
    Ok(())
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
