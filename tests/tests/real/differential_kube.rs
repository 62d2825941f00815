//! The fake Kubernetes API server (`testbed::kube_api`) pinned to the real kube-apiserver v1.36
//! of the kit: the same request sequences — the ones the status-reporter, the adapter's hub
//! backend, the placement lease, the `nodes` check and `diagnose` make, error paths included —
//! go to both servers through a recording proxy (`testbed::real::recording_proxy`), and the
//! answers must agree after [`normalizer`] (the complete list of what is ignored, and why).
//!
//! Where possible the requests are made by the project's own client code (`JobStatus`,
//! `adapter_pod::watch`, `HubWorkClient`, `PlacementLock`, `diagnose::read::pulses`), so the
//! sequence is the one the binaries send; the rest are raw requests shaped as that code shapes
//! them (paths, queries, content types, bodies).
//!
//! What the fake does not have is played by the test on the fake's side only: the real job
//! controller's first sync of a new Job (the fake's create already stores the controller's
//! `startTime`/`active`), and RBAC: the real side runs as a ServiceAccount bound to the shipped
//! Role (token from the TokenRequest API), the fake with [`ApiServer::grant_only`] and the same
//! rules.

mod hub_and_lease;
mod reporter_and_diagnose;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::rbac::v1::PolicyRule;
use serde_json::{Value, json};
use testbed::kube_api::ApiServer;
use testbed::real::differential::{Normalizer, compare, dump};
use testbed::real::recording_proxy::RecordingProxy;
use testbed::real::{RealSystems, unique};

const SUITE: &str = "real::differential_kube";

/// The user the fake's token authenticates as (named in its 403 bodies).
const FAKE_USER: &str = "system:serviceaccount:default:testbed";

/// What the comparison ignores, and why (`users`: the users the side's 403s may name).
pub fn normalizer(users: &[String]) -> Normalizer {
    const TIME: &str =
        "a clock reading of the server (the two servers do not run at the same instant)";
    let mut n = Normalizer::default()
        .mask("**/metadata/uid", "uid", "random per object (UUID)")
        .mask("**/details/uid", "uid", "random per object (UUID), in a DELETE's Status")
        .mask(
            "**/metadata/resourceVersion",
            "resourceVersion",
            "the etcd revision of a server shared with other tests; the fake counts from 1",
        )
        .mask(
            "**/metadata/continue",
            "continue",
            "an opaque token encoding the server's revision",
        )
        .drop(
            "**/metadata/managedFields",
            "the fake keeps no field ownership (no server-side apply; testbed::kube_api docs); no binary of the project reads it",
        )
        .mask(
            "**/ownerReferences/*/uid",
            "uid",
            "the owner's uid (random per object)",
        )
        .mask(
            "**/controller-uid",
            "uid",
            "the Job's uid copied into its selector and template labels",
        )
        .mask(
            "**/batch.kubernetes.io~1controller-uid",
            "uid",
            "the Job's uid copied into its selector and template labels",
        )
        .mask(
            "**/regarding/uid",
            "uid",
            "the Job's uid in an Event's regarding (random per object)",
        );
    for key in [
        "creationTimestamp",
        "deletionTimestamp",
        "startTime",
        "completionTime",
        "lastTransitionTime",
        "lastProbeTime",
        "lastHeartbeatTime",
        "lastUpdateTime",
        "renewTime",
        "acquireTime",
        "startedAt",
        "finishedAt",
        "eventTime",
    ] {
        n = n.time(&format!("**/{key}"), TIME);
    }
    for user in users {
        n = n.substitute(
            user,
            "<user>",
            "the user a 403 names: the fake's token user, the real side's ServiceAccount of this test",
        );
    }
    n
}

/// One server behind a recording proxy, in a namespace of this test.
pub struct Side {
    pub proxy: RecordingProxy,
    server: Server,
    pub ns: String,
    pub dir: tempfile::TempDir,
    users: Vec<String>,
    /// Per-side values replaced before the comparison (`from`, `to`): e.g. the name of the
    /// reporter's Event, a hash of the Job's uid ([`Side::substitute`]).
    names: Vec<(String, String)>,
    /// The Pod the real job controller made, copied to the fake (which has no controller).
    controller_pod: Arc<Mutex<Option<Value>>>,
}

enum Server {
    Fake(ApiServer),
    Real {
        kit: &'static RealSystems,
        admin: kube::Client,
    },
}

impl Side {
    async fn fake(ns: &str, controller_pod: Arc<Mutex<Option<Value>>>) -> Side {
        let server = ApiServer::start().await;
        // As on the real server, a create needs its namespace (this test's, made on both sides).
        server.require_namespaces();
        server.put_object(
            "/api/v1",
            None,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        );
        let proxy = RecordingProxy::start("fake", server.client().await)
            .await
            .unwrap();
        Side::new(proxy, Server::Fake(server), ns, controller_pod)
    }

    async fn real(
        kit: &'static RealSystems,
        ns: &str,
        controller_pod: Arc<Mutex<Option<Value>>>,
    ) -> Side {
        let admin = kit.kube_client().await.unwrap();
        let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> =
            kube::Api::all(admin.clone());
        let object = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        namespaces
            .create(&Default::default(), &object)
            .await
            .unwrap();
        // The Job's pods run as this account; without it the controller cannot create them.
        let accounts: kube::Api<k8s_openapi::api::core::v1::ServiceAccount> =
            kube::Api::namespaced(admin.clone(), ns);
        let sa =
            serde_json::from_value(json!({"metadata": {"name": "hypershift-adapter"}})).unwrap();
        accounts.create(&Default::default(), &sa).await.unwrap();
        let proxy = RecordingProxy::start("real", admin.clone()).await.unwrap();
        Side::new(proxy, Server::Real { kit, admin }, ns, controller_pod)
    }

    fn new(
        proxy: RecordingProxy,
        server: Server,
        ns: &str,
        controller_pod: Arc<Mutex<Option<Value>>>,
    ) -> Side {
        let users = match server {
            Server::Fake(_) => vec![FAKE_USER.to_owned()],
            Server::Real { .. } => Vec::new(),
        };
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("kubeconfig"), proxy.kubeconfig(ns)).unwrap();
        Side {
            proxy,
            server,
            ns: ns.to_owned(),
            dir,
            users,
            names: Vec::new(),
            controller_pod,
        }
    }

    /// From now on `from` (a value of this side, e.g. a name derived from a uid) reads as `to`
    /// in the comparison.
    pub fn substitute(&mut self, from: &str, to: &str) {
        self.names.push((from.to_owned(), to.to_owned()));
    }

    /// [`normalizer`] for this side: its users and its substitutions.
    fn normalizer(&self) -> Normalizer {
        self.names
            .iter()
            .fold(normalizer(&self.users), |n, (from, to)| {
                n.substitute(
                    from,
                    to,
                    "a name derived from a per-side uid (the reporter's Event: a hash of the Job's uid)",
                )
            })
    }

    /// The proxy's kubeconfig file (for the code that takes `--kubeconfig`).
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join("kubeconfig")
    }

    /// A client of the proxy.
    pub async fn client(&self) -> kube::Client {
        self.proxy.client(&self.ns).await.unwrap()
    }

    /// One raw request through the proxy (recorded there under `label`); the answer's body.
    pub async fn raw(
        &self,
        label: &str,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        self.proxy.step(label);
        let mut request = http::Request::builder()
            .method(method)
            .uri(path)
            .header(http::header::ACCEPT, "application/json");
        if let Some(ct) = content_type {
            request = request.header(http::header::CONTENT_TYPE, ct);
        }
        let bytes = body
            .map(|b| serde_json::to_vec(b).unwrap())
            .unwrap_or_default();
        let response = self
            .client()
            .await
            .send(request.body(kube::client::Body::from(bytes)).unwrap())
            .await
            .unwrap();
        let status = response.status().as_u16();
        let bytes = response.into_body().collect_bytes().await.unwrap();
        (status, testbed::real::differential::body_value(&bytes))
    }

    /// The real job controller's first sync of a new Job: its Pod created, `status.active` 1;
    /// returns the Pod's name. The fake has no controller (its create already stores that
    /// status): on the fake's side the Pod the real controller made is seeded as the API server
    /// stored it (the real side must run first). Not recorded.
    pub async fn job_controller_started(&self, job: &str) -> String {
        let pod = match &self.server {
            Server::Real { admin, .. } => {
                let pod = controller_pod(admin, &self.ns, job).await;
                *self.controller_pod.lock().unwrap() = Some(pod.clone());
                pod
            }
            Server::Fake(server) => {
                let mut pod = self
                    .controller_pod
                    .lock()
                    .unwrap()
                    .clone()
                    .expect("the real side runs first");
                let metadata = pod["metadata"].as_object_mut().unwrap();
                for key in [
                    "uid",
                    "resourceVersion",
                    "creationTimestamp",
                    "managedFields",
                ] {
                    metadata.remove(key);
                }
                let status = pod["status"].clone();
                let name = pod["metadata"]["name"].as_str().unwrap().to_owned();
                let mut seeded = server.create_pod(&self.ns, pod);
                // The seeding API makes a running Pod; put back the status a new Pod has.
                seeded["status"] = status;
                seeded["metadata"]
                    .as_object_mut()
                    .unwrap()
                    .remove("resourceVersion");
                let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
                    kube::Api::namespaced(server.client().await, &self.ns);
                let seeded = serde_json::from_value(seeded).unwrap();
                pods.replace_status(&name, &Default::default(), &seeded)
                    .await
                    .unwrap();
                return name;
            }
        };
        pod["metadata"]["name"].as_str().unwrap().to_owned()
    }

    /// From now on the requests run with only the rules of the Role in `manifest` (a file of
    /// `manifests/`): on the real side as ServiceAccount `account`, bound to that Role in this
    /// test's namespace, with a token from the TokenRequest API; on the fake with
    /// [`ApiServer::grant_only`].
    pub async fn grant_only(&mut self, manifest: &str, account: &str) {
        let role = role_of(manifest, &self.ns);
        match &self.server {
            Server::Fake(server) => {
                let rules: Vec<PolicyRule> = serde_json::from_value(role["rules"].clone()).unwrap();
                server.grant_only(&self.ns, rules);
            }
            Server::Real { kit, admin } => {
                let token = bind_and_mint(admin, &self.ns, account, &role).await;
                let config = format!(
                    "apiVersion: v1\nkind: Config\nclusters:\n- name: real\n  cluster:\n    server: \"{}\"\n    certificate-authority: \"{}\"\nusers:\n- name: sa\n  user:\n    token: \"{token}\"\ncontexts:\n- name: sa\n  context:\n    cluster: real\n    user: sa\n    namespace: {}\ncurrent-context: sa\n",
                    kit.var("REAL_KUBE_API_URL"),
                    kit.var("REAL_KUBE_CA_FILE"),
                    self.ns
                );
                let kubeconfig = kube::config::Kubeconfig::from_yaml(&config).unwrap();
                let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                    .await
                    .unwrap();
                self.proxy
                    .set_upstream(kube::Client::try_from(config).unwrap());
                self.users
                    .push(format!("system:serviceaccount:{}:{account}", self.ns));
            }
        }
    }
}

impl Drop for Side {
    fn drop(&mut self) {
        if let Server::Real { kit, .. } = &self.server {
            let _ = std::process::Command::new("kubectl")
                .args(["delete", "namespace", &self.ns, "--wait=false"])
                .env("KUBECONFIG", kit.kubeconfig())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

/// Waits for the job controller to start `job` (`status.active` 1) and returns its Pod.
async fn controller_pod(admin: &kube::Client, ns: &str, job: &str) -> Value {
    let jobs: kube::Api<k8s_openapi::api::batch::v1::Job> =
        kube::Api::namespaced(admin.clone(), ns);
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> = kube::Api::namespaced(admin.clone(), ns);
    let selector =
        kube::api::ListParams::default().labels(&format!("batch.kubernetes.io/job-name={job}"));
    for _ in 0..200 {
        let current = jobs.get(job).await.unwrap();
        let listed = pods.list(&selector).await.unwrap();
        if current.status.and_then(|s| s.active) == Some(1) && listed.items.len() == 1 {
            let mut pod = serde_json::to_value(&listed.items[0]).unwrap();
            pod["apiVersion"] = json!("v1");
            pod["kind"] = json!("Pod");
            return pod;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the job controller did not start Job {job} within 10 s");
}

/// The Role of `manifests/<manifest>` with its namespace set to `ns`.
fn role_of(manifest: &str, ns: &str) -> Value {
    let path = format!("{}/../manifests/{manifest}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    let mut role = docs
        .into_iter()
        .find(|d| d["kind"] == "Role")
        .unwrap_or_else(|| panic!("{path} has no Role"));
    role["metadata"]["namespace"] = json!(ns);
    role
}

/// Creates ServiceAccount `account`, `role` and a RoleBinding of one to the other in `ns`, and
/// returns a token of the account (TokenRequest, 10 minutes).
async fn bind_and_mint(admin: &kube::Client, ns: &str, account: &str, role: &Value) -> String {
    use k8s_openapi::api::authentication::v1::TokenRequest;
    use k8s_openapi::api::core::v1::ServiceAccount;
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
    let pp = kube::api::PostParams::default();
    let accounts: kube::Api<ServiceAccount> = kube::Api::namespaced(admin.clone(), ns);
    let sa = serde_json::from_value(json!({"metadata": {"name": account}})).unwrap();
    if let Err(e) = accounts.create(&pp, &sa).await {
        assert!(matches!(&e, kube::Error::Api(s) if s.code == 409), "{e}");
    }
    let roles: kube::Api<Role> = kube::Api::namespaced(admin.clone(), ns);
    let role: Role = serde_json::from_value(role.clone()).unwrap();
    let role_name = role.metadata.name.clone().unwrap();
    roles.create(&pp, &role).await.unwrap();
    let bindings: kube::Api<RoleBinding> = kube::Api::namespaced(admin.clone(), ns);
    let binding = serde_json::from_value(json!({
        "metadata": {"name": format!("{role_name}-{account}")},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role_name},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": ns}],
    }))
    .unwrap();
    bindings.create(&pp, &binding).await.unwrap();
    let request: TokenRequest = serde_json::from_value(json!({
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"audiences": [], "expirationSeconds": 600},
    }))
    .unwrap();
    let minted: TokenRequest = accounts
        .create_subresource("token", account, &pp, &request)
        .await
        .unwrap();
    minted.status.unwrap().token
}

/// The fake and the real server, each behind its proxy, in the same (new) namespace.
pub struct Pair {
    pub fake: Side,
    pub real: Side,
}

impl Pair {
    /// `None` (after one skip line) without the kit.
    pub async fn new(prefix: &str) -> Option<Pair> {
        let kit = RealSystems::get(SUITE)?;
        let ns = unique(prefix);
        let controller_pod = Arc::new(Mutex::new(None));
        Some(Pair {
            fake: Side::fake(&ns, Arc::clone(&controller_pod)).await,
            real: Side::real(kit, &ns, controller_pod).await,
        })
    }

    /// Asserts that both transcripts agree after normalization.
    pub fn assert_same(&self) {
        let fake = self.fake.proxy.transcript();
        let real = self.real.proxy.transcript();
        assert!(!fake.exchanges.is_empty(), "nothing was recorded");
        if let Err(report) = compare(
            &fake,
            &real,
            &self.fake.normalizer(),
            &self.real.normalizer(),
        ) {
            let files = dump(
                &self.fake.ns,
                (&fake, &self.fake.normalizer()),
                (&real, &self.real.normalizer()),
            );
            panic!("namespace {}: {report}{files}", self.fake.ns);
        }
    }
}

/// The pulse Job as the framework creates it: `manifests/job.yaml` with its placeholders filled
/// (a UUIDv7 cluster id and the highest generation, so the name and label values are as long as
/// they get).
pub fn pulse_job(cluster_id: &str) -> Value {
    let path = format!("{}/../manifests/job.yaml", env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(path).unwrap();
    for (name, value) in [
        ("clusterId", cluster_id),
        ("generation", "2147483647"),
        ("hyperfleetApiBaseUrl", "http://hyperfleet-api:8000"),
        ("managementClusterConsumer", "mgmt-a"),
        ("maestroSourceId", "hyperfleet-hypershift-adapter"),
        ("maestroApiUrl", "https://maestro:8000"),
        ("maestroGrpcUrl", "https://maestro-grpc:8090"),
        ("imageTag", "dev"),
        ("hyperfleetApiAuthScheme", "Bearer"),
    ] {
        text = text.replace(&format!("{{{{ .{name} }}}}"), value);
    }
    assert!(
        !text.contains("{{"),
        "a placeholder of job.yaml has no value"
    );
    let mut job: Value = serde_saphyr::from_str(&text).unwrap();
    job["metadata"].as_object_mut().unwrap().remove("namespace");
    job
}

#[test]
fn the_normalizer_masks_server_values_but_not_what_the_code_reads() {
    let n = normalizer(&["system:serviceaccount:ns:sa".to_owned()]);
    let job = json!({"metadata": {"uid": "u", "resourceVersion": "7", "generation": 1,
        "labels": {"batch.kubernetes.io/controller-uid": "u", "job-name": "j"}},
        "status": {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": "t"}]}});
    let out = n.apply(&job);
    assert_eq!(out["metadata"]["generation"], 1);
    assert_eq!(out["metadata"]["labels"]["job-name"], "j");
    assert_eq!(
        out["metadata"]["labels"]["batch.kubernetes.io/controller-uid"],
        "<uid>"
    );
    assert_eq!(out["status"]["conditions"][0]["status"], "True");
    assert_eq!(out["status"]["conditions"][0]["lastTransitionTime"], "t");
    let times = n.apply(&json!({"metadata": {"creationTimestamp": "2026-11-28T02:13:48Z"}}));
    assert_eq!(
        times["metadata"]["creationTimestamp"],
        "0000-00-00T00:00:00Z"
    );
}
