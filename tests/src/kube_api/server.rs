//! The server handle, the HTTP entry point and the seeding/inspection API tests use.

use std::hash::{BuildHasher, RandomState};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header, request::Parts};
use k8s_openapi::api::rbac::v1::PolicyRule;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::auth::{self, Identity};
use super::faults::{Fault, FaultAction, Faults};
use super::objects::{self, Address, FieldValidation, Part, Written};
use super::recorder::RecordedRequest;
use super::request::{Query, ResourceRequest, split_api_prefix};
use super::resources::{ResourceKind, resource_for_kind};
use super::status::ApiError;
use super::status::Target;
use super::store::{Collection, Store};
use super::{list, pods, service_accounts, watch as watches};

/// Bodies above this size get a 413, like the real server's 3 MiB limit.
const BODY_LIMIT: usize = 3 * 1024 * 1024;

/// The user the valid token authenticates as.
const USER: &str = "system:serviceaccount:default:testbed";

/// A fake kube-apiserver on `127.0.0.1:<random port>`, plain HTTP.
///
/// Cloning shares the server; it stops when the last clone is dropped or on [`ApiServer::shutdown`].
#[derive(Clone)]
pub struct ApiServer {
    handle: Arc<Handle>,
}

impl std::fmt::Debug for ApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiServer")
            .field("url", &self.url())
            .finish_non_exhaustive()
    }
}

struct Handle {
    shared: Arc<Shared>,
    addr: SocketAddr,
    stop: watch::Sender<bool>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

/// State the request handler and the seeding API share.
struct Shared {
    store: Mutex<Store>,
    faults: Mutex<Faults>,
    /// `(group, resource)` pairs RBAC denies the valid token ([`ApiServer::deny`]).
    denied: Mutex<Vec<(String, String)>>,
    /// Whether a create needs its namespace to exist ([`ApiServer::require_namespaces`]).
    namespaces_required: std::sync::atomic::AtomicBool,
    /// When set, the namespace and the only rules the valid token is granted there
    /// ([`ApiServer::grant_only`]).
    granted: Mutex<Option<(String, Vec<PolicyRule>)>>,
    log: Mutex<Vec<RecordedRequest>>,
    token: String,
    /// A CA certificate for the kubeconfig, base64 PEM. The server speaks plain HTTP, so it is
    /// never used to verify anything; it is there because every real kubeconfig carries one,
    /// and a client without one loads the whole OS trust store at start-up instead.
    ca_data: String,
    stopped: watch::Receiver<bool>,
}

#[allow(
    clippy::expect_used,
    reason = "test set-up: rcgen with ring cannot fail to self-sign"
)]
fn kubeconfig_ca() -> String {
    use base64::Engine;
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let key = rcgen::KeyPair::generate().expect("CA key");
    let cert = params.self_signed(&key).expect("self-signed CA");
    base64::engine::general_purpose::STANDARD.encode(cert.pem())
}

/// The PEM text of base64 PEM (as a kubeconfig carries it).
fn pem_of(ca_data: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(ca_data)
        .map(|pem| String::from_utf8_lossy(&pem).into_owned())
        .unwrap_or_default()
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ApiServer {
    /// Binds `127.0.0.1:0` and serves in a background tokio task.
    ///
    /// # Panics
    /// If no loopback port can be bound: no test could run then.
    #[allow(
        clippy::expect_used,
        reason = "a test bed that cannot bind a loopback port cannot run any test"
    )]
    pub async fn start() -> ApiServer {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener
            .local_addr()
            .expect("local address of the listener");
        let (stop, stopped) = watch::channel(false);
        let token = format!("testbed-{:016x}", RandomState::new().hash_one(addr));
        let ca_data = kubeconfig_ca();
        let mut store = Store::default();
        store.root_ca = pem_of(&ca_data);
        let shared = Arc::new(Shared {
            store: Mutex::new(store),
            faults: Mutex::new(Faults::default()),
            denied: Mutex::new(Vec::new()),
            granted: Mutex::new(None),
            namespaces_required: std::sync::atomic::AtomicBool::new(false),
            log: Mutex::new(Vec::new()),
            token,
            ca_data,
            stopped: stopped.clone(),
        });
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        let mut until_stopped = stopped;
        tokio::spawn(async move {
            let stop_signal = async move {
                let _ = until_stopped.wait_for(|stopped| *stopped).await;
            };
            if let Err(error) = axum::serve(listener, app)
                .with_graceful_shutdown(stop_signal)
                .await
            {
                tracing::warn!(%error, "testbed API server stopped with an error");
            }
        });
        ApiServer {
            handle: Arc::new(Handle { shared, addr, stop }),
        }
    }

    /// Stops serving; open watches end and hanging requests are released.
    pub fn shutdown(&self) {
        self.handle.stop.send_replace(true);
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.handle.addr)
    }

    /// The valid bearer token. Another token gets a 401, no token a 403 as `system:anonymous`.
    pub fn token(&self) -> &str {
        &self.handle.shared.token
    }

    /// The user the valid token authenticates as (named in 403 bodies).
    pub fn user(&self) -> &str {
        USER
    }

    /// The kubeconfig text: one cluster (`server` = [`Self::url`]), one token user, namespace `default`.
    pub fn kubeconfig(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: testbed\n  cluster:\n    server: \"{}\"\n    certificate-authority-data: \"{}\"\nusers:\n- name: testbed\n  user:\n    token: \"{}\"\ncontexts:\n- name: testbed\n  context:\n    cluster: testbed\n    user: testbed\n    namespace: default\ncurrent-context: testbed\n",
            self.url(),
            self.handle.shared.ca_data,
            self.token()
        )
    }

    /// Writes [`Self::kubeconfig`] to `dir/kubeconfig` (for `KUBECONFIG` in a child process).
    ///
    /// # Panics
    /// If the file cannot be written.
    #[allow(
        clippy::expect_used,
        reason = "test set-up: a failure here is a failed test"
    )]
    pub fn write_kubeconfig(&self, dir: &Path) -> PathBuf {
        let path = dir.join("kubeconfig");
        std::fs::write(&path, self.kubeconfig()).expect("write kubeconfig");
        path
    }

    /// A kube client configured from [`Self::kubeconfig`].
    ///
    /// # Panics
    /// If kube-rs rejects the generated kubeconfig.
    #[allow(
        clippy::expect_used,
        reason = "test set-up: a failure here is a failed test"
    )]
    pub async fn client(&self) -> kube::Client {
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&self.kubeconfig())
            .expect("parse generated kubeconfig");
        let options = kube::config::KubeConfigOptions::default();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .expect("kube config from kubeconfig");
        kube::Client::try_from(config).expect("kube client")
    }

    // ---- seeding and inspection -------------------------------------------------------------

    /// A TokenReview of `token` for `audience`: the user a token minted by the TokenRequest API
    /// for that audience authenticates as; `None` for any other token.
    pub fn review_token(&self, token: &str, audience: &str) -> Option<String> {
        let store = self.store();
        let audiences = store.audiences.get(token)?;
        audiences
            .iter()
            .any(|a| a == audience)
            .then(|| store.tokens.get(token).cloned())
            .flatten()
    }

    fn store(&self) -> MutexGuard<'_, Store> {
        lock(&self.handle.shared.store)
    }

    fn address(prefix: &str, resource: &str, ns: Option<&str>, name: &str) -> Option<Address> {
        let (group, version) = split_api_prefix(prefix)?;
        Address::of(&ResourceRequest {
            group,
            version,
            namespace: ns.map(str::to_owned),
            resource: resource.to_owned(),
            name: Some(name.to_owned()),
            subresource: None,
        })
    }

    fn put(&self, prefix: &str, resource: &str, ns: Option<&str>, object: Value) -> Value {
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        match Self::address(prefix, resource, ns, &name) {
            Some(address) if !name.is_empty() => {
                match objects::seed(&mut self.store(), &address, object) {
                    Ok(stored) => stored,
                    Err(error) => panic!(
                        "seeding {resource} {name:?}: a real API server would refuse it: {}",
                        error.to_json()["message"]
                    ),
                }
            }
            _ => Value::Null,
        }
    }

    /// Stores a Job (`metadata.name` required, else nothing is stored and `null` returned)
    /// as the controller would have started it: uid, resourceVersion,
    /// creationTimestamp, `status.startTime`, `status.active: 1` (empty status with an external
    /// `spec.managedBy`), and the Job strategy's pod-template labels and selector. Replaces a Job
    /// of the same name. Panics when a real server would refuse the Job with a 422, e.g. a name
    /// over 63 bytes (it becomes a label value).
    pub fn create_job(&self, ns: &str, job: Value) -> Value {
        self.put("/apis/batch/v1", "jobs", Some(ns), job)
    }

    /// The stored Job.
    pub fn job(&self, ns: &str, name: &str) -> Option<Value> {
        self.object("/apis/batch/v1", "jobs", Some(ns), name)
    }

    /// Deletes a Job (as its TTL would); later requests for it get 404.
    pub fn delete_job(&self, ns: &str, name: &str) {
        self.delete_object("/apis/batch/v1", "jobs", Some(ns), name);
    }

    /// Stores a Pod: phase `Running` and a running container status for each spec container
    /// unless the object brings its own.
    pub fn create_pod(&self, ns: &str, pod: Value) -> Value {
        self.put("/api/v1", "pods", Some(ns), pod)
    }

    /// The stored Pod.
    pub fn pod(&self, ns: &str, name: &str) -> Option<Value> {
        self.object("/api/v1", "pods", Some(ns), name)
    }

    /// Sets `containerStatuses[container].state.terminated` (bumps the resourceVersion and emits
    /// a MODIFIED watch event). When all containers have terminated, the phase becomes
    /// `Succeeded` or `Failed`. Does nothing if the pod does not exist.
    pub fn terminate_container(
        &self,
        ns: &str,
        pod: &str,
        container: &str,
        exit_code: i32,
        reason: &str,
        message: Option<&str>,
    ) {
        let Some(address) = Self::address("/api/v1", "pods", Some(ns), pod) else {
            return;
        };
        let mut store = self.store();
        let Some(mut object) = store.get(&address.collection, &address.key).cloned() else {
            return;
        };
        pods::terminate_container(&mut object, container, exit_code, reason, message);
        pods::normalise_container_statuses(&mut object);
        store.commit(
            &address.collection,
            address.key,
            super::store::EventType::Modified,
            object,
        );
    }

    /// Stores (or replaces) a Node.
    pub fn put_node(&self, node: Value) {
        self.put("/api/v1", "nodes", None, node);
    }

    /// Stores (or replaces) a Lease.
    pub fn put_lease(&self, ns: &str, lease: Value) {
        self.put("/apis/coordination.k8s.io/v1", "leases", Some(ns), lease);
    }

    /// Stores (or replaces) a CertificateSigningRequest (cluster-scoped); it keeps the
    /// `creationTimestamp` it brings, so a test can seed one that has been pending for a while.
    pub fn put_csr(&self, csr: Value) {
        self.put(
            "/apis/certificates.k8s.io/v1",
            "certificatesigningrequests",
            None,
            csr,
        );
    }

    /// RBAC denies the valid token every verb on `resource` (as RBAC names it, e.g.
    /// `certificatesigningrequests` or `jobs/status`) in API `group` (`""` for the core group)
    /// from now on: each such request gets the 403 a real server sends, worded from the request.
    pub fn deny(&self, group: &str, resource: &str) {
        lock(&self.handle.shared.denied).push((group.to_owned(), resource.to_owned()));
    }

    /// From now on a create (POST) in a namespace that has no Namespace object (seed one with
    /// [`Self::put_object`] or POST it) is the real server's 404 `namespaces "<ns>" not found`
    /// (`details.kind` `namespaces`), which the hub backend reads as a consumer that does not
    /// exist. Without this call every namespace exists.
    pub fn require_namespaces(&self) {
        self.handle
            .shared
            .namespaces_required
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// From now on the valid token may do only what `rules` allow in `namespace`, as a Role
    /// bound there does (`manifests/rbac.yaml`): a request is allowed when it is in `namespace`
    /// and one rule names its API group, its resource (`jobs/status` for a subresource) and its
    /// verb (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`), each directly or by `*`, and, when the rule has `resourceNames`, its
    /// object's name (never a list, watch or create). Anything else — another namespace, a
    /// cluster-scoped resource — gets the 403 a real server sends. [`Self::deny`] still applies.
    pub fn grant_only(&self, namespace: &str, rules: Vec<PolicyRule>) {
        *lock(&self.handle.shared.granted) = Some((namespace.to_owned(), rules));
    }

    /// Stores (or replaces) any object under an API prefix such as
    /// `/apis/work.open-cluster-management.io/v1`; the resource is derived from `kind`
    /// (`ManifestWork` → `manifestworks`). Returns the stored object (`null` for a bad prefix).
    pub fn put_object(&self, api_path_prefix: &str, ns: Option<&str>, obj: Value) -> Value {
        let group = split_api_prefix(api_path_prefix)
            .map(|(group, _)| group)
            .unwrap_or_default();
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
        let resource = resource_for_kind(&group, kind);
        self.put(api_path_prefix, &resource, ns, obj)
    }

    /// A stored object, e.g. `object("/apis/work.open-cluster-management.io/v1", "manifestworks", Some("ns"), "name")`.
    pub fn object(
        &self,
        api_path_prefix: &str,
        resource: &str,
        ns: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let address = Self::address(api_path_prefix, resource, ns, name)?;
        self.store().get(&address.collection, &address.key).cloned()
    }

    /// Deletes a stored object (emits a DELETED watch event); returns it.
    pub fn delete_object(
        &self,
        api_path_prefix: &str,
        resource: &str,
        ns: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let address = Self::address(api_path_prefix, resource, ns, name)?;
        self.store().delete(&address.collection, &address.key)
    }

    /// Arms a fault for the next matching requests.
    pub fn inject(&self, fault: Fault) {
        lock(&self.handle.shared.faults).push(fault);
    }

    /// Every request received so far, in arrival order, faulted ones included.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.handle.shared.log).clone()
    }
}

// ---- HTTP ---------------------------------------------------------------------------------------

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, BODY_LIMIT).await;
    let index = shared.record(&parts, body.as_ref().map(Bytes::clone).unwrap_or_default());
    let response = match body {
        Ok(body) => shared.serve(&parts, &body).await,
        Err(_) => ApiError::too_large().into_response(),
    };
    shared.answered(index, response.status());
    response
}

impl Shared {
    fn record(&self, parts: &Parts, body: Bytes) -> usize {
        let content_type = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut log = lock(&self.log);
        log.push(RecordedRequest {
            method: parts.method.clone(),
            path: parts.uri.path().to_owned(),
            query: parts.uri.query().map(str::to_owned),
            content_type,
            body,
            status: None,
            time: SystemTime::now(),
        });
        log.len() - 1
    }

    fn answered(&self, index: usize, status: StatusCode) {
        if let Some(entry) = lock(&self.log).get_mut(index) {
            entry.status = Some(status.as_u16());
        }
    }

    async fn serve(&self, parts: &Parts, body: &[u8]) -> Response {
        let path = parts.uri.path();
        let query = Query::parse(parts.uri.query());
        let identity = auth::authenticate(&parts.headers, |presented| {
            if presented == self.token {
                Some(USER.to_owned())
            } else {
                lock(&self.store).tokens.get(presented).cloned()
            }
        });
        let fault = lock(&self.faults).take(&parts.method, path);
        match fault {
            Some(FaultAction::Status(code)) => {
                let who = identity.clone().unwrap_or(Identity::Anonymous);
                return fault_status(code, &who, parts, &query).into_response();
            }
            Some(FaultAction::Delay(delay)) => tokio::time::sleep(delay).await,
            Some(FaultAction::Hang) => {
                let mut stopped = self.stopped.clone();
                let _ = stopped.wait_for(|stopped| *stopped).await;
                return ApiError::service_unavailable().into_response();
            }
            None => {}
        }
        match identity {
            Err(error) => error.into_response(),
            Ok(Identity::Anonymous) => {
                auth::forbidden(&Identity::Anonymous, &parts.method, path, &query).into_response()
            }
            Ok(user) if self.is_denied(path) || !self.is_granted(&parts.method, path, &query) => {
                auth::forbidden(&user, &parts.method, path, &query).into_response()
            }
            Ok(Identity::User(_)) => self
                .route(parts, &query, body)
                .unwrap_or_else(IntoResponse::into_response),
        }
    }

    /// Whether RBAC denies the request's resource to the valid token.
    fn is_denied(&self, path: &str) -> bool {
        let Some(request) = ResourceRequest::parse(path) else {
            return false;
        };
        let resource = request.rbac_resource();
        lock(&self.denied)
            .iter()
            .any(|(g, r)| *g == request.group && *r == resource)
    }

    /// Whether the rules of [`ApiServer::grant_only`] (when set) allow the request.
    fn is_granted(&self, method: &Method, path: &str, query: &Query) -> bool {
        let granted = lock(&self.granted);
        let Some((namespace, rules)) = granted.as_ref() else {
            return true;
        };
        let Some(request) = ResourceRequest::parse(path) else {
            return true;
        };
        request.namespace.as_deref() == Some(namespace.as_str())
            && auth::allowed(rules, &request, request.verb(method, query))
    }

    fn route(&self, parts: &Parts, query: &Query, body: &[u8]) -> Result<Response, ApiError> {
        let request =
            ResourceRequest::parse(parts.uri.path()).ok_or_else(ApiError::route_not_found)?;
        let content_type = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        let method = &parts.method;
        let mut store = lock(&self.store);
        let kind = ResourceKind::lookup(&request.group, &request.version, &request.resource);
        if !kind.namespaced && request.namespace.is_some() {
            // A cluster-scoped resource under /namespaces/{ns}/ is no route on a real server.
            return Err(ApiError::route_not_found());
        }
        let Some(address) = Address::of(&request) else {
            if *method == Method::POST
                && let Some(ns) = &request.namespace
                && self
                    .namespaces_required
                    .load(std::sync::atomic::Ordering::Relaxed)
                && store
                    .get(
                        &Collection::new("", "namespaces"),
                        &(String::new(), ns.clone()),
                    )
                    .is_none()
            {
                return Err(ApiError::not_found(&Target {
                    group: String::new(),
                    resource: "namespaces".into(),
                    name: Some(ns.clone()),
                }));
            }
            return match *method {
                Method::GET if query.is_watch() => {
                    watches::start(&store, &request, query, self.stopped.clone())
                }
                Method::GET => list::list_body(&store, &kind, request.namespace.as_deref(), query)
                    .map(json_bytes),
                Method::POST => objects::create(&mut store, &request, body)
                    .map(|o| json(StatusCode::CREATED, &o)),
                _ => Err(ApiError::method_not_allowed(method.as_str())),
            };
        };
        if address.kind.namespaced != request.namespace.is_some() {
            return Err(ApiError::route_not_found());
        }
        if request.resource == "serviceaccounts" && request.subresource.as_deref() == Some("token")
        {
            return match *method {
                Method::POST => service_accounts::request_token(&mut store, &address, body)
                    .map(|o| json(StatusCode::CREATED, &o)),
                _ => Err(ApiError::method_not_allowed(method.as_str())),
            };
        }
        let part = match request.subresource.as_deref() {
            None => Part::Main,
            Some("status") if address.kind.has_status => Part::Status,
            Some(_) => return Err(ApiError::route_not_found()),
        };
        let validation = FieldValidation::from_query(query.get("fieldValidation"));
        let written = match (method.clone(), part) {
            (Method::GET, _) => objects::get(&store, &address).map(Written::from),
            (Method::PUT, _) => objects::replace(&mut store, &address, part, body, validation),
            (Method::PATCH, _) => {
                objects::patch(&mut store, &address, part, content_type, body, validation)
            }
            (Method::DELETE, Part::Main) => {
                objects::delete(&mut store, &address).map(Written::from)
            }
            _ => Err(ApiError::method_not_allowed(method.as_str())),
        }?;
        let mut response = json(StatusCode::OK, &written.object);
        for warning in &written.warnings {
            let quoted = serde_json::to_string(warning).unwrap_or_default();
            if let Ok(value) = HeaderValue::from_str(&format!("299 - {quoted}")) {
                response.headers_mut().append(header::WARNING, value);
            }
        }
        Ok(response)
    }
}

fn fault_status(code: u16, identity: &Identity, parts: &Parts, query: &Query) -> ApiError {
    let request = ResourceRequest::parse(parts.uri.path());
    match code {
        401 => ApiError::unauthorized(),
        403 => auth::forbidden(identity, &parts.method, parts.uri.path(), query),
        404 => request.map_or_else(ApiError::route_not_found, |r| {
            ApiError::not_found(&r.target())
        }),
        429 => ApiError::too_many_requests(),
        500 => ApiError::internal("injected fault"),
        503 => ApiError::service_unavailable(),
        other => ApiError::other(other),
    }
}

fn json(code: StatusCode, object: &Value) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_vec(object).unwrap_or_default(),
    )
        .into_response()
}

fn json_bytes(body: Vec<u8>) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}
