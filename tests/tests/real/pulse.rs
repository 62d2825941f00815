//! A controlplane pulse Job on the real API server, its Pod run by the testbed's kubelet
//! (`testbed::kubelet`): `manifests/job.yaml` rendered with this checkout's values in a namespace
//! of the test with the RBAC of `manifests/rbac.yaml` (so the status-reporter's watch and PATCH
//! pass the real RBAC with a token from the real TokenRequest API), the adapter pointed at the
//! real Maestro (a consumer of the test, with its own agent) and the real HyperFleet API; then the
//! real job controller's verdict. And the kubelet-related faults of issue 24 item 3d, each ending
//! with a true, explained status on the Job.

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Namespace, Pod, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{Api, DynamicObject, PostParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};
use testbed::kubelet::{Kubelet, KubeletConfig, PodRun};
use testbed::real::{RealSystems, unique};

const SUITE: &str = "real::pulse";
/// The longest cluster name the HyperFleet API accepts.
const NAME_LEN: usize = 53;
/// How long a pulse may take to reach the job controller's verdict.
const VERDICT: Duration = Duration::from_secs(120);

/// What a test changes in the rendered Job before creating it.
type Edit<'a> = &'a dyn Fn(&mut Value);

/// A namespace of the test on the real servers, with the pulse Jobs' RBAC and secrets, and a
/// kubelet for its Pods.
struct Bed {
    real: &'static RealSystems,
    kube: kube::Client,
    ns: String,
    consumer: String,
    kubelet: Kubelet,
}

/// A pulse's end: the Job with the job controller's verdict, the Pod as the kubelet left it, the
/// kubelet's run (logs).
struct Outcome {
    job: Value,
    pod: Value,
    run: Option<PodRun>,
}

impl Bed {
    /// The namespace, `manifests/rbac.yaml` in it (its Role passed through `role`), the Job's two
    /// secrets, and a Maestro consumer with its own agent.
    async fn new(real: &'static RealSystems, prefix: &str, role: fn(&mut Value)) -> Bed {
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
        }
    }

    /// A cluster created in the real HyperFleet API (its UUIDv7 id and the longest name).
    async fn create_cluster(&self) -> (String, String) {
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
        assert!(testbed::ids::is_uuid_v7(&id), "{id}");
        assert_eq!(created["generation"], 1);
        (id, name)
    }

    /// `manifests/job.yaml` for `cluster_id` at generation 1, in this namespace, pointed at the
    /// real Maestro (this test's consumer) and HyperFleet API; then `edit`.
    fn job(&self, cluster_id: &str, edit: Edit<'_>) -> Value {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../manifests/job.yaml"
        ))
        .unwrap();
        let mut rendered = text;
        for (placeholder, value) in [
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
        ] {
            rendered = rendered.replace(&format!("{{{{ .{placeholder} }}}}"), &value);
        }
        assert!(!rendered.contains("{{"), "a placeholder is left");
        let mut job: Value = serde_saphyr::from_str(&rendered).unwrap();
        job["metadata"]["namespace"] = json!(self.ns);
        edit(&mut job);
        job
    }

    /// Creates `job`, runs its Pod with the kubelet, and waits for the job controller's verdict
    /// (`Complete` or `Failed`).
    async fn pulse(&self, job: &Value) -> Outcome {
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
    async fn hosted_cluster(&self, name: &str) -> Value {
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
    fn conditions(&self) -> Vec<(String, String, String)> {
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

    fn message(&self, kind: &str) -> String {
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
    fn terminated(&self, container: &str) -> Value {
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

    fn explain(&self) -> String {
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

/// `manifests/rbac.yaml`'s Role as it is.
fn as_shipped(_: &mut Value) {}

/// The Role without `patch` on `jobs/status`: the status-reporter may read its Job but not
/// write it.
fn without_status_patch(role: &mut Value) {
    for rule in role["rules"].as_array_mut().unwrap() {
        if rule["resources"] == json!(["jobs/status"]) {
            rule["verbs"] = json!(["get"]);
        }
    }
}

/// The Job's container `name`.
fn container<'a>(job: &'a mut Value, name: &str) -> &'a mut Value {
    let containers = job["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .unwrap();
    containers.iter_mut().find(|c| c["name"] == name).unwrap()
}

/// Sets (or adds) env `name` of the adapter container.
fn set_adapter_env(job: &mut Value, name: &str, value: &str) {
    let env = container(job, "adapter")["env"].as_array_mut().unwrap();
    match env.iter_mut().find(|e| e["name"] == name) {
        Some(entry) => entry["value"] = json!(value),
        None => env.push(json!({"name": name, "value": value})),
    }
}

fn triples(expected: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    expected
        .iter()
        .map(|(t, s, r)| ((*t).to_owned(), (*s).to_owned(), (*r).to_owned()))
        .collect()
}

/// The conditions of a pulse whose adapter failed in a way the status-reporter detects
/// (`reason` on the three types the Job template names), with the job controller's `Failed`.
fn reporter_failure(reason: &str, failed: &str) -> Vec<(String, String, String)> {
    triples(&[
        ("Applied", "False", reason),
        ("Available", "False", reason),
        ("Failed", "True", failed),
        ("FailureTarget", "True", failed),
        ("Health", "False", reason),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controlplane_pulse_job_completes_with_the_reports_conditions() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::new(real, "pulse-cp", as_shipped).await;
    let (id, name) = bed.create_cluster().await;
    let outcome = bed.pulse(&bed.job(&id, &|_| {})).await;
    let explain = outcome.explain();
    println!("{explain}");
    assert_eq!(
        outcome.conditions(),
        triples(&[
            ("Applied", "True", "ManifestWorkCreated"),
            ("Available", "False", "Provisioning"),
            ("Complete", "True", "CompletionsReached"),
            ("Health", "True", "NoIssues"),
            ("SuccessCriteriaMet", "True", "CompletionsReached"),
        ]),
        "{explain}"
    );
    let annotations = &outcome.job["metadata"]["annotations"];
    assert_eq!(
        annotations["hyperfleet.io/observed-generation"], "1",
        "{explain}"
    );
    assert!(
        annotations["hyperfleet.io/report-data"].is_string(),
        "{explain}"
    );
    assert_eq!(outcome.pod["status"]["phase"], "Succeeded", "{explain}");
    for name in ["adapter", "status-reporter"] {
        let t = outcome.terminated(name);
        assert_eq!(
            (t["exitCode"].as_i64(), t["reason"].as_str()),
            (Some(0), Some("Completed")),
            "{name}: {explain}"
        );
        assert!(
            t["startedAt"].is_string() && t["finishedAt"].is_string(),
            "{name}: {explain}"
        );
    }
    // As a kubelet leaves a finished Pod: only the terminated state, Ready=False/PodCompleted.
    for status in outcome.pod["status"]["containerStatuses"]
        .as_array()
        .unwrap()
    {
        let states: Vec<&String> = status["state"].as_object().unwrap().keys().collect();
        assert_eq!(states, ["terminated"], "{explain}");
    }
    let ready = outcome.pod["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap();
    assert_eq!(
        (&ready["status"], &ready["reason"], ready.get("message")),
        (&json!("False"), &json!("PodCompleted"), None),
        "{explain}"
    );
    let hosted = bed.hosted_cluster(&name).await;
    assert_eq!(hosted["metadata"]["name"], name.as_str());
}

/// A Role without `patch` on `jobs/status`: the report is written, the status-reporter's PATCH
/// is refused (403) and it exits 1; the Pod fails, so the job controller fails the Job
/// (`BackoffLimitExceeded`, `backoffLimit: 0`) and the Job carries none of the report's
/// conditions. What an SRE sees is on the Pod: the reporter's last log lines name the refused
/// verb, resource, namespace and ServiceAccount.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reporters_patch_refused_by_rbac_fails_the_job_and_the_pod_says_why() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::new(real, "pulse-rbac", without_status_patch).await;
    let (id, _) = bed.create_cluster().await;
    let outcome = bed.pulse(&bed.job(&id, &|_| {})).await;
    let explain = outcome.explain();
    println!("{explain}");
    assert_eq!(
        outcome.conditions(),
        triples(&[
            ("Failed", "True", "BackoffLimitExceeded"),
            ("FailureTarget", "True", "BackoffLimitExceeded")
        ]),
        "{explain}"
    );
    assert_eq!(
        outcome.message("Failed"),
        "Job has reached the specified backoff limit",
        "{explain}"
    );
    assert!(
        outcome.job["metadata"]["annotations"]
            .get("hyperfleet.io/report-data")
            .is_none(),
        "{explain}"
    );
    assert_eq!(outcome.pod["status"]["phase"], "Failed", "{explain}");
    let adapter = outcome.terminated("adapter");
    assert_eq!(
        (adapter["exitCode"].as_i64(), adapter["reason"].as_str()),
        (Some(0), Some("Completed")),
        "{explain}"
    );
    let reporter = outcome.terminated("status-reporter");
    assert_eq!(
        (reporter["exitCode"].as_i64(), reporter["reason"].as_str()),
        (Some(1), Some("Error")),
        "{explain}"
    );
    let message = reporter["message"].as_str().unwrap_or_default();
    let user = format!("system:serviceaccount:{}:hypershift-adapter", bed.ns);
    for words in [
        "cannot patch resource",
        "jobs/status",
        user.as_str(),
        bed.ns.as_str(),
    ] {
        assert!(
            message.contains(words),
            "{words:?} not in the reporter's termination message: {message}\n{explain}"
        );
    }
}

/// The adapter cannot write its report (its `/results` mount made read-only): it exits 1 with
/// its fatal error as the termination message, which the status-reporter quotes in
/// `AdapterExitedWithError`; the job controller fails the Job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_adapter_crashing_is_adapter_exited_with_error_with_its_termination_message() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::new(real, "pulse-crash", as_shipped).await;
    let (id, _) = bed.create_cluster().await;
    let read_only_results = |job: &mut Value| {
        let mounts = container(job, "adapter")["volumeMounts"]
            .as_array_mut()
            .unwrap();
        let results = mounts.iter_mut().find(|m| m["name"] == "results").unwrap();
        results["readOnly"] = json!(true);
    };
    let outcome = bed.pulse(&bed.job(&id, &read_only_results)).await;
    let explain = outcome.explain();
    println!("{explain}");
    assert_eq!(
        outcome.conditions(),
        reporter_failure("AdapterExitedWithError", "BackoffLimitExceeded"),
        "{explain}"
    );
    let adapter = outcome.terminated("adapter");
    assert_eq!(
        (adapter["exitCode"].as_i64(), adapter["reason"].as_str()),
        (Some(1), Some("Error")),
        "{explain}"
    );
    let termination = adapter["message"].as_str().unwrap_or_default();
    assert!(
        termination.contains("Read-only file system"),
        "{termination}\n{explain}"
    );
    let applied = outcome.message("Applied");
    assert!(
        applied.contains("exit code 1") || applied.contains("exited with code 1"),
        "{applied}\n{explain}"
    );
    assert!(
        applied.contains(termination.trim()),
        "the reporter quotes the termination message: {applied}\n{explain}"
    );
}

/// The adapter's memory limit below what it needs to start (1Mi): the kernel OOM-kills it in its
/// memory cgroup, the kubelet reports `OOMKilled` (exit code 137), the status-reporter
/// `AdapterOOMKilled`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_adapter_oom_killed_is_adapter_oom_killed() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::new(real, "pulse-oom", as_shipped).await;
    assert!(
        bed.kubelet.memory_cgroups().is_some(),
        "no memory cgroup here: the kernel cannot OOM-kill the adapter"
    );
    let (id, _) = bed.create_cluster().await;
    let tiny = |job: &mut Value| {
        container(job, "adapter")["resources"] =
            json!({"requests": {"cpu": "20m", "memory": "1Mi"}, "limits": {"memory": "1Mi"}});
    };
    let outcome = bed.pulse(&bed.job(&id, &tiny)).await;
    let explain = outcome.explain();
    println!("{explain}");
    assert_eq!(
        outcome.conditions(),
        reporter_failure("AdapterOOMKilled", "BackoffLimitExceeded"),
        "{explain}"
    );
    let adapter = outcome.terminated("adapter");
    assert_eq!(
        (adapter["exitCode"].as_i64(), adapter["reason"].as_str()),
        (Some(137), Some("OOMKilled")),
        "{explain}"
    );
}

/// The adapter hangs (Maestro accepts connections and never answers; its retry budget outlasts
/// the Job): the status-reporter stops waiting at the deadline less its margin
/// (`AdapterTimeout`), then the job controller's `activeDeadlineSeconds` fails the Job
/// (`DeadlineExceeded`) and deletes the Pod, and the kubelet stops the adapter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_adapter_hanging_past_the_deadline_is_adapter_timeout_and_deadline_exceeded() {
    let Some(real) = RealSystems::get(SUITE) else {
        return;
    };
    let bed = Bed::new(real, "pulse-hang", as_shipped).await;
    let (id, _) = bed.create_cluster().await;
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            open.push(socket);
        }
    });
    let hang = |job: &mut Value| {
        job["spec"]["activeDeadlineSeconds"] = json!(30);
        set_adapter_env(job, "MAESTRO_API_URL", &url);
        set_adapter_env(job, "MAESTRO_GRPC_URL", &url);
    };
    let outcome = bed.pulse(&bed.job(&id, &hang)).await;
    held.abort();
    let explain = outcome.explain();
    println!("{explain}");
    assert_eq!(
        outcome.conditions(),
        reporter_failure("AdapterTimeout", "DeadlineExceeded"),
        "{explain}"
    );
    assert_eq!(
        outcome.message("Failed"),
        "Job was active longer than specified deadline",
        "{explain}"
    );
    let run = outcome.run.as_ref().expect("the kubelet's run");
    let adapter = run.container("adapter").unwrap();
    assert!(
        run.deleted && adapter.killed,
        "the kubelet stopped the adapter when the Pod was deleted: {explain}"
    );
}
