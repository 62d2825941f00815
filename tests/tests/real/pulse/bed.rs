//! The real servers of a pulse test: a namespace of its own with `manifests/rbac.yaml` and the
//! Job's Secrets, a cluster in the real HyperFleet API, `manifests/job.yaml` rendered for them,
//! the testbed's kubelet for its Pod, and the job controller's verdict.

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Namespace, Pod, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, DynamicObject, PostParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};
use testbed::kubelet::{Kubelet, KubeletConfig, PodRun};
use testbed::real::works::Sweep;
use testbed::real::{RealSystems, unique};

/// The longest cluster name the HyperFleet API accepts.
const NAME_LEN: usize = 53;
/// How long a pulse may take to reach the job controller's verdict.
const VERDICT: Duration = Duration::from_secs(120);

/// What a test changes in the rendered Job before creating it.
pub type Edit<'a> = &'a dyn Fn(&mut Value);

/// A namespace of the test on the real servers, with the pulse Jobs' RBAC and secrets, and a
/// kubelet for its Pods.
pub struct Bed {
    real: &'static RealSystems,
    kube: kube::Client,
    pub ns: String,
    consumer: String,
    pub kubelet: Kubelet,
    /// The works of the clusters the test created, deleted when the test ends (the consumer is
    /// the suite's).
    works: std::sync::Mutex<Vec<Sweep>>,
}

/// A pulse's end: the Job with the job controller's verdict, the Pod as the kubelet left it, the
/// kubelet's run (logs).
pub struct Outcome {
    pub job: Value,
    pub pod: Value,
    pub run: Option<PodRun>,
}

impl Bed {
    /// The namespace, `manifests/rbac.yaml` in it (its Role passed through `role`), the Job's two
    /// secrets, and a Maestro consumer with its own agent.
    pub async fn new(real: &'static RealSystems, prefix: &str, role: fn(&mut Value)) -> Bed {
        let kube = real.kube_client().await.unwrap();
        let ns = unique(prefix);
        let namespaces: Api<Namespace> = Api::all(kube.clone());
        let namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        namespaces
            .create(&PostParams::default(), &namespace)
            .await
            .unwrap();
        apply_rbac(&kube, &ns, role).await;
        create_secrets(real, &kube, &ns).await;
        let kubeconfig = kube::config::Kubeconfig::read_from(real.kubeconfig()).unwrap();
        let kubelet = Kubelet::new(kubeconfig, KubeletConfig::default())
            .await
            .unwrap();
        let consumer = consumer(real);
        Bed {
            real,
            kube,
            ns,
            consumer,
            kubelet,
            works: std::sync::Mutex::default(),
        }
    }

    /// A cluster created in the real HyperFleet API (its UUIDv7 id and the longest name).
    pub async fn create_cluster(&self) -> (String, String) {
        let suffix = unique("c");
        let name = format!("{}{}", "p".repeat(NAME_LEN - suffix.len()), suffix);
        let mut cluster = testbed::local_pulse::cluster_object();
        let body = json!({"kind": "Cluster", "name": name, "labels": {"suite": "real-pulse"}, "spec": cluster["spec"].take()});
        let url = format!(
            "{}/api/hyperfleet/v1/clusters",
            self.real.var("HYPERFLEET_API_URL")
        );
        let response = reqwest::Client::new()
            .post(url)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201, "POST /clusters");
        let created: Value = response.json().await.unwrap();
        let id = created["id"].as_str().unwrap().to_owned();
        self.works
            .lock()
            .unwrap()
            .push(Sweep::cluster(self.real, &self.consumer, &id));
        assert!(testbed::ids::is_uuid_v7(&id), "{id}");
        assert_eq!(created["generation"], 1);
        (id, name)
    }

    /// `manifests/job.yaml` for `cluster_id` at generation 1, in this namespace, pointed at the
    /// real Maestro (this test's consumer) and HyperFleet API; then `edit`.
    pub fn job(&self, cluster_id: &str, edit: Edit<'_>) -> Value {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../manifests/job.yaml"
        ))
        .unwrap();
        let values = [
            ("clusterId", cluster_id.to_owned()),
            ("generation", "1".to_owned()),
            (
                "hyperfleetApiBaseUrl",
                self.real.var("HYPERFLEET_API_URL").to_owned(),
            ),
            ("managementClusterConsumer", self.consumer.clone()),
            (
                "maestroSourceId",
                hypershift_adapter::work::backend::DEFAULT_SOURCE_ID.to_owned(),
            ),
            ("maestroApiUrl", self.real.var("MAESTRO_API_URL").to_owned()),
            (
                "maestroGrpcUrl",
                self.real.var("MAESTRO_GRPC_URL").to_owned(),
            ),
            ("imageTag", "dev".to_owned()),
            ("hyperfleetApiAuthScheme", "Bearer".to_owned()),
        ];
        let mut job = testbed::pulse_job::render_template(&text, &values).unwrap();
        job["metadata"]["namespace"] = json!(self.ns);
        edit(&mut job);
        job
    }

    /// Creates `job`, runs its Pod with the kubelet, and waits for the job controller's verdict
    /// (`Complete` or `Failed`).
    pub async fn pulse(&self, job: &Value) -> Outcome {
        let name = job["metadata"]["name"].as_str().unwrap().to_owned();
        let serving = self
            .kubelet
            .serve(&self.ns, &format!("batch.kubernetes.io/job-name={name}"));
        let jobs: Api<Job> = Api::namespaced(self.kube.clone(), &self.ns);
        let job: Job = serde_json::from_value(job.clone()).unwrap();
        jobs.create(&PostParams::default(), &job).await.unwrap();
        let until = tokio::time::Instant::now() + VERDICT;
        let mut pod = Value::Null;
        loop {
            let current = serde_json::to_value(jobs.get(&name).await.unwrap()).unwrap();
            if let Some(seen) = self.pod_of(&name).await {
                pod = seen;
            }
            if finished(&current) {
                let run = serving.wait_for(&name, Duration::from_secs(60)).await;
                return Outcome {
                    job: current,
                    pod,
                    run,
                };
            }
            assert!(
                tokio::time::Instant::now() < until,
                "no verdict on Job {name} within {VERDICT:?}: {current:#}\n{}",
                self.explain(&serving)
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The Job's Pod as stored (`None` once gone).
    async fn pod_of(&self, job: &str) -> Option<Value> {
        let pods: Api<Pod> = Api::namespaced(self.kube.clone(), &self.ns);
        let list = pods
            .list(
                &kube::api::ListParams::default()
                    .labels(&format!("batch.kubernetes.io/job-name={job}")),
            )
            .await
            .ok()?;
        list.items
            .into_iter()
            .next()
            .map(|p| serde_json::to_value(p).unwrap())
    }

    fn explain(&self, serving: &testbed::kubelet::Serving) -> String {
        let runs = serving.finished();
        let logs: Vec<String> = runs
            .iter()
            .flat_map(|r| {
                r.containers
                    .iter()
                    .map(|c| format!("--- {} ({:?})\n{}", c.name, c.terminated, c.log_text()))
            })
            .collect();
        format!(
            "{}\n--- kube-controller-manager\n{}",
            logs.join("\n"),
            self.real.log_tail("kube-controller-manager", 20)
        )
    }

    /// The HostedCluster the real agent applied for cluster `name` (`clusters/<name>`), waited for.
    pub async fn hosted_cluster(&self, name: &str) -> Value {
        let resource = ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "hypershift.openshift.io",
            "v1beta1",
            "HostedCluster",
        ));
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.kube.clone(), "clusters", &resource);
        for _ in 0..120 {
            if let Ok(Some(found)) = api.get_opt(name).await {
                return serde_json::to_value(found).unwrap();
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        panic!(
            "the agent of {} did not apply HostedCluster clusters/{name}\n{}",
            self.consumer,
            self.real
                .log_tail(&format!("maestro-agent-{}", self.consumer), 30)
        );
    }
}

impl Outcome {
    /// `(type, status, reason)` of the Job's conditions, sorted by type.
    pub fn conditions(&self) -> Vec<(String, String, String)> {
        let mut out: Vec<(String, String, String)> = self.job["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
                (s("type"), s("status"), s("reason"))
            })
            .collect();
        out.sort();
        out
    }

    pub fn message(&self, kind: &str) -> String {
        let found = self.job["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == kind);
        found
            .and_then(|c| c["message"].as_str())
            .unwrap_or_default()
            .to_owned()
    }

    /// A container's `state.terminated` on the stored Pod.
    pub fn terminated(&self, container: &str) -> Value {
        let statuses = self.pod["status"]["containerStatuses"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let found = statuses
            .into_iter()
            .find(|s| s["name"] == container)
            .unwrap_or(Value::Null);
        found["state"]["terminated"].clone()
    }

    pub fn explain(&self) -> String {
        let logs: Vec<String> = self
            .run
            .iter()
            .flat_map(|r| {
                r.containers
                    .iter()
                    .map(|c| format!("--- {} ({:?})\n{}", c.name, c.terminated, c.log_text()))
            })
            .collect();
        format!(
            "Job: {:#}\nPod status: {:#}\n{}",
            self.job["status"],
            self.pod["status"],
            logs.join("\n")
        )
    }
}

/// The job controller's verdict is in: `Complete` or `Failed` is `True`.
fn finished(job: &Value) -> bool {
    job["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True")
}

/// The Maestro consumer of this suite's tests (with its own agent), registered once per test
/// process: each `up --consumers` call takes the kit's lock and starts an agent, and the tests'
/// clusters have names of their own.
fn consumer(real: &RealSystems) -> String {
    static CONSUMER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    real.consumer(CONSUMER.get_or_init(|| unique("pulse")))
}

/// `manifests/rbac.yaml` in namespace `ns`, its Role passed through `role`.
async fn apply_rbac(kube: &kube::Client, ns: &str, role: fn(&mut Value)) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../manifests/rbac.yaml"
    ))
    .unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    let post = PostParams::default();
    for mut doc in docs.into_iter().filter(|d| d.is_object()) {
        doc["metadata"]["namespace"] = json!(ns);
        match doc["kind"].as_str().unwrap() {
            "ServiceAccount" => {
                let api: Api<ServiceAccount> = Api::namespaced(kube.clone(), ns);
                api.create(&post, &serde_json::from_value(doc).unwrap())
                    .await
                    .unwrap();
            }
            "Role" => {
                role(&mut doc);
                let api: Api<Role> = Api::namespaced(kube.clone(), ns);
                api.create(&post, &serde_json::from_value(doc).unwrap())
                    .await
                    .unwrap();
            }
            "RoleBinding" => {
                for subject in doc["subjects"].as_array_mut().unwrap() {
                    subject["namespace"] = json!(ns);
                }
                let api: Api<RoleBinding> = Api::namespaced(kube.clone(), ns);
                api.create(&post, &serde_json::from_value(doc).unwrap())
                    .await
                    .unwrap();
            }
            other => panic!("rbac.yaml has a {other}"),
        }
    }
}

/// The Job's secrets: Maestro's CA and token (the kit's Maestro is plaintext, so neither is
/// used; the files must exist), the HyperFleet API's token (JWT is off in the kit).
async fn create_secrets(real: &RealSystems, kube: &kube::Client, ns: &str) {
    let ca = std::fs::read_to_string(real.var("REAL_KUBE_CA_FILE")).unwrap();
    let api: Api<Secret> = Api::namespaced(kube.clone(), ns);
    for (name, data) in [
        (
            "hypershift-adapter-maestro",
            json!({"ca.crt": ca, "token": unique("maestro-token")}),
        ),
        (
            "hypershift-adapter-hyperfleet-api",
            json!({"token": unique("hyperfleet-token")}),
        ),
    ] {
        let secret =
            serde_json::from_value(json!({"metadata": {"name": name}, "stringData": data}))
                .unwrap();
        api.create(&PostParams::default(), &secret).await.unwrap();
    }
}
