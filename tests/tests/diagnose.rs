//! `hypershift-adapter diagnose` through the testbed: the fake HyperFleet API, the fake
//! Kubernetes API server holding the pulse Jobs and their Pods, and the fake Maestro. One test per
//! row of issue 18's failure matrix, each breaking the chain at one link and asserting that the
//! verdict names that link with its evidence; a healthy cluster is reported healthy; hostile input
//! never crashes and the fakes see reads only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use hypershift_adapter::cli::{Cli, Command};
use hypershift_adapter::diagnose::chain::{Diagnosis, Mark};
use hypershift_adapter::hyperfleet::cluster::{ClusterInput, ClusterSpec};
use hypershift_adapter::pulse::controlplane;
use hypershift_adapter::work::WorkClient;
use hypershift_adapter::work::maestro::{MaestroConfig, MaestroWorkClient};
use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};
use testbed::hyperfleet::fake_api::{Clock, Config, FakeHyperfleetApi, PREFIX};
use testbed::ids::{CLUSTER_ID as ID, LONGEST_CLUSTER_NAME, NODEPOOL_ID};
use testbed::kube_api::ApiServer;
use testbed::local_pulse::scenario::{Stage, hosted_cluster_status};
use testbed::maestro::{FakeMaestro, FakeOptions};

const CLUSTER: &str = include_str!("../../adapter/tests/fixtures/cluster-valid.json");
const NS: &str = "hyperfleet-system";
const CONSUMER: &str = "mgmt-euw2-01";
const SOURCE: &str = "hyperfleet-hypershift-adapter";
const PRECONDITIONS: [&str; 3] = ["validation", "dns", "pullsecret"];

fn work_name() -> String {
    format!("hostedcluster-{ID}")
}

fn job_name(generation: i64) -> String {
    format!("hs-cp-{ID}-g{generation}")
}

/// The three fakes, a kubeconfig for the API server, and the cluster at generation 3.
struct World {
    hyperfleet: FakeHyperfleetApi,
    kube: ApiServer,
    maestro: FakeMaestro,
    dir: tempfile::TempDir,
    kubeconfig: std::path::PathBuf,
}

impl World {
    async fn start() -> World {
        let hyperfleet = FakeHyperfleetApi::start(Config::recorded(), Clock::wall())
            .await
            .unwrap();
        let kube = ApiServer::start().await;
        let maestro = FakeMaestro::start(FakeOptions {
            consumers: vec![CONSUMER.to_owned()],
            agent_delay: None,
            ..FakeOptions::default()
        })
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = kube.write_kubeconfig(dir.path());
        let world = World {
            hyperfleet,
            kube,
            maestro,
            dir,
            kubeconfig,
        };
        world.seed_cluster(3, None);
        world
    }

    fn seed_cluster(&self, generation: i64, deleted_time: Option<&str>) {
        let input = ClusterInput::from_json(CLUSTER).unwrap();
        let mut cluster = json!({
            "kind": "Cluster", "id": ID, "name": LONGEST_CLUSTER_NAME,
            "generation": generation, "spec": input.spec,
        });
        if let Some(t) = deleted_time {
            cluster["deleted_time"] = json!(t);
        }
        self.hyperfleet.seed(&cluster);
    }

    /// A status PUT as the framework sends it (`fixtures/hyperfleet/real-api/06-…`).
    fn report(&self, path: &str, adapter: &str, generation: i64, available: &str, reason: &str) {
        let condition = |t: &str, s: &str, r: &str| json!({"type": t, "status": s, "reason": r, "message": format!("{t} is {s}")});
        let body = json!({
            "adapter": adapter,
            "observed_generation": generation,
            "observed_time": Timestamp::now().to_string(),
            "conditions": [
                condition("Applied", "True", "ManifestWorkApplied"),
                condition("Available", available, reason),
                condition("Health", "True", "NoIssues"),
                condition("Finalized", "False", ""),
            ],
            "data": {}
        });
        let reply =
            self.hyperfleet
                .call("PUT", &format!("{path}/statuses"), Some(&body.to_string()));
        assert!(
            reply.status == 201 || reply.status == 204,
            "{adapter}: {} {}",
            reply.status,
            reply.body
        );
    }

    fn preconditions_met(&self, generation: i64) {
        for adapter in PRECONDITIONS {
            self.report(
                &format!("{PREFIX}/clusters/{ID}"),
                adapter,
                generation,
                "True",
                "Ready",
            );
        }
    }

    /// The work of generation `generation`, created as the pulse would.
    async fn create_work(&self, generation: i64) -> MaestroWorkClient {
        let input = ClusterInput::from_json(CLUSTER).unwrap();
        let spec = ClusterSpec::validate(ID, input.name.as_deref(), &input.spec).unwrap();
        let config = MaestroConfig::new(
            self.maestro.grpc_url(),
            self.maestro.rest_url(),
            SOURCE,
            CONSUMER,
        );
        let client = MaestroWorkClient::new(config).unwrap();
        client
            .create(&controlplane::manifest_work(
                &spec,
                CONSUMER,
                Some(generation),
            ))
            .await
            .unwrap();
        client
    }

    /// The work applied by the agent with `status` fed back.
    async fn applied_work(&self, generation: i64, status: &Value) {
        self.create_work(generation).await;
        assert!(self.maestro.apply(&work_name()));
        assert!(self.maestro.set_feedback(&work_name(), status));
    }

    /// A pulse Job as the task config creates it, with `status` and `annotations` written as the
    /// Job controller and the status-reporter would, and its Pod with `containers` states.
    async fn job(
        &self,
        name: &str,
        generation: i64,
        status: Value,
        annotations: &[(&str, &str)],
        containers: Option<Value>,
    ) {
        let labels = json!({
            "app.kubernetes.io/name": "hypershift-adapter",
            "app.kubernetes.io/component": "controlplane",
            "hyperfleet.io/cluster-id": ID,
            "hyperfleet.io/adapter": "controlplane",
        });
        self.kube.create_job(
            NS,
            json!({"apiVersion": "batch/v1", "kind": "Job",
                   "metadata": {"name": name, "namespace": NS, "labels": labels,
                                "annotations": {"hyperfleet.io/generation": generation.to_string()}},
                   "spec": {"backoffLimit": 0, "activeDeadlineSeconds": 300,
                            "template": {"metadata": {"labels": labels},
                                         "spec": {"restartPolicy": "Never", "containers": [
                                             {"name": "adapter", "image": "hypershift-adapter"},
                                             {"name": "status-reporter", "image": "status-reporter"}]}}}}),
        );
        let api: Api<Job> = Api::namespaced(self.kube.client().await, NS);
        if !annotations.is_empty() {
            let annotations: serde_json::Map<String, Value> = annotations
                .iter()
                .map(|(k, v)| ((*k).to_owned(), json!(v)))
                .collect();
            api.patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"annotations": annotations}})),
            )
            .await
            .unwrap();
        }
        api.patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": finished(status) })),
        )
        .await
        .unwrap();
        if let Some(containers) = containers {
            let mut pod_labels = labels.clone();
            pod_labels["batch.kubernetes.io/job-name"] = json!(name);
            pod_labels["job-name"] = json!(name);
            self.kube.create_pod(
                NS,
                json!({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": format!("{name}-x7k2p"), "namespace": NS, "labels": pod_labels},
                       "spec": {"restartPolicy": "Never", "containers": [
                           {"name": "adapter", "image": "hypershift-adapter"},
                           {"name": "status-reporter", "image": "status-reporter"}]},
                       "status": {"phase": "Failed", "containerStatuses": containers}}),
            );
        }
    }

    /// A finished pulse Job that reported generation `generation` with `available`.
    async fn reported_job(&self, generation: i64, reported: i64, available: (&str, &str, &str)) {
        let (status, reason, message) = available;
        self.job(
            &job_name(generation),
            generation,
            json!({"conditions": [
                {"type": "Applied", "status": "True", "reason": "ManifestWorkApplied", "message": "applied"},
                {"type": "Available", "status": status, "reason": reason, "message": message},
                {"type": "Health", "status": "True", "reason": "NoIssues", "message": "No degradation detected"},
                {"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"}],
                "succeeded": 1}),
            &[("hyperfleet.io/observed-generation", &reported.to_string())],
            Some(terminated(&[("adapter", 0, "Completed"), ("status-reporter", 0, "Completed")])),
        )
        .await;
    }

    /// Every link healthy at generation 3.
    async fn healthy(&self) {
        self.preconditions_met(3);
        self.applied_work(3, &hosted_cluster_status(Stage::Ready))
            .await;
        self.reported_job(
            3,
            3,
            ("True", "ControlPlaneReady", "Control plane is available"),
        )
        .await;
        self.report(
            &format!("{PREFIX}/clusters/{ID}"),
            "hypershift",
            3,
            "True",
            "ControlPlaneReady",
        );
    }

    fn args(&self, target: &[&str], extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = ["hypershift-adapter", "diagnose"]
            .iter()
            .chain(target)
            .map(|s| (*s).to_owned())
            .collect();
        args.extend(
            [
                "--hyperfleet-api",
                self.hyperfleet.url(),
                "--kubeconfig",
                &self.kubeconfig.display().to_string(),
                "--maestro-api-url",
                &self.maestro.rest_url(),
            ]
            .iter()
            .map(|s| (*s).to_owned()),
        );
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args
    }

    async fn diagnose_at(&self, now: Timestamp, extra: &[&str]) -> Diagnosis {
        diagnose(self.args(&["cluster", ID], extra), now).await
    }

    async fn diagnose(&self) -> Diagnosis {
        self.diagnose_at(Timestamp::now(), &[]).await
    }
}

async fn diagnose(args: Vec<String>, now: Timestamp) -> Diagnosis {
    let cli = <Cli as clap::Parser>::try_parse_from(args).unwrap();
    let Command::Diagnose(args) = cli.command else {
        panic!("not diagnose")
    };
    hypershift_adapter::diagnose::run(&args, now).await
}

/// `status` as the real Job controller leaves a finished Job: no `active`, a `completionTime`
/// with `Complete`, a `FailureTarget` before `Failed` (the API server refuses anything else).
fn finished(mut status: Value) -> Value {
    let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    let is = |t: &str| {
        conditions
            .iter()
            .any(|c| c["type"] == t && c["status"] == "True")
    };
    if is("Complete") || is("Failed") {
        status["active"] = Value::Null;
    }
    if is("Complete") {
        status["completionTime"] = json!(
            Timestamp::now()
                .round(jiff::Unit::Second)
                .unwrap()
                .to_string()
        );
        if !is("SuccessCriteriaMet") {
            let mut with = vec![
                json!({"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"}),
            ];
            with.extend(conditions.iter().cloned());
            status["conditions"] = json!(with);
        }
    }
    if let Some(failed) = conditions
        .iter()
        .find(|c| c["type"] == "Failed" && c["status"] == "True")
    {
        let mut target = failed.clone();
        target["type"] = json!("FailureTarget");
        let mut with = vec![target];
        with.extend(conditions.iter().cloned());
        status["conditions"] = json!(with);
    }
    status
}

fn terminated(containers: &[(&str, i32, &str)]) -> Value {
    containers
        .iter()
        .map(|(name, code, reason)| {
            json!({"name": name, "ready": false, "restartCount": 0, "image": name, "imageID": "",
                   "state": {"terminated": {"exitCode": code, "reason": reason}}})
        })
        .collect()
}

fn mark(d: &Diagnosis, id: &str) -> Mark {
    d.links
        .iter()
        .find(|l| l.id == id)
        .unwrap_or_else(|| panic!("no link {id}"))
        .mark
}

fn evidence<'a>(d: &'a Diagnosis, id: &str) -> &'a str {
    &d.links.iter().find(|l| l.id == id).unwrap().evidence
}

/// The verdict is `status` at `link`, with every text in `words`.
#[track_caller]
fn assert_verdict(d: &Diagnosis, exit_code: u8, link: Option<&str>, words: &[&str]) {
    let text = d.text();
    assert_eq!((d.exit_code, d.verdict.link), (exit_code, link), "{text}");
    for word in words {
        assert!(text.contains(word), "{word:?} not in:\n{text}");
    }
}

/// `(apiGroup, resource, verb)` of every rule of the Role in `manifests/rbac-diagnose.yaml`.
fn diagnose_role_rules() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../manifests/rbac-diagnose.yaml"
    ))
    .unwrap();
    let role: Value = serde_saphyr::from_str(text.split("\n---\n").nth(1).unwrap()).unwrap();
    assert_eq!(role["kind"], "Role");
    assert_eq!(role["metadata"]["namespace"], NS);
    let mut granted = Vec::new();
    for rule in role["rules"].as_array().unwrap() {
        for group in rule["apiGroups"].as_array().unwrap() {
            for resource in rule["resources"].as_array().unwrap() {
                for verb in rule["verbs"].as_array().unwrap() {
                    granted.push((
                        group.as_str().unwrap().to_owned(),
                        resource.as_str().unwrap().to_owned(),
                        verb.as_str().unwrap().to_owned(),
                    ));
                }
            }
        }
    }
    let read_only = granted
        .iter()
        .all(|(_, _, verb)| verb == "get" || verb == "list");
    assert!(read_only, "{granted:?}");
    granted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_cluster_is_reported_healthy_and_nothing_is_written() {
    let world = World::start().await;
    world.healthy().await;
    let kube_before = world.kube.requests().len();
    let publishes = world.maestro.publishes();
    let hyperfleet_before = world.hyperfleet.served().len();

    let d = world.diagnose().await;
    assert_verdict(&d, 0, None, &["healthy"]);
    assert!(d.links.iter().all(|l| l.mark == Mark::Ok), "{}", d.text());
    assert_eq!(d.consumer.as_deref(), Some(CONSUMER));
    assert_eq!(d.generation, Some(3));
    assert!(evidence(&d, "maestro.work").contains(CONSUMER));

    let kube_after = world.kube.requests();
    let kube_new = &kube_after[kube_before..];
    assert!(!kube_new.is_empty());
    assert!(
        kube_new.iter().all(|r| r.method == http::Method::GET),
        "{kube_new:?}"
    );
    // Every Kubernetes request is a LIST that manifests/rbac-diagnose.yaml grants, in the Jobs'
    // namespace.
    let granted = diagnose_role_rules();
    for request in kube_new {
        let (group, resource) = if request.path == format!("/apis/batch/v1/namespaces/{NS}/jobs") {
            ("batch", "jobs")
        } else if request.path == format!("/api/v1/namespaces/{NS}/pods") {
            ("", "pods")
        } else {
            panic!("diagnose read {} {}", request.method, request.path)
        };
        assert!(
            granted.contains(&(group.to_owned(), resource.to_owned(), "list".to_owned())),
            "{group}/{resource} list is not granted: {granted:?}"
        );
    }
    let hyperfleet_new = &world.hyperfleet.served()[hyperfleet_before..];
    assert!(!hyperfleet_new.is_empty());
    assert!(
        hyperfleet_new.iter().all(|r| r.starts_with("GET ")),
        "{hyperfleet_new:?}"
    );
    assert_eq!(world.maestro.publishes(), publishes, "diagnose published");
    assert_eq!(world.maestro.calls("DELETE resource-bundle"), 0);
    assert!(world.maestro.calls("LIST resource-bundles") > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preconditions_never_met_name_the_adapter_and_the_generation() {
    let world = World::start().await;
    world.seed_cluster(2, None);
    world.preconditions_met(2);
    world.seed_cluster(3, None);
    for adapter in ["validation", "pullsecret"] {
        world.report(
            &format!("{PREFIX}/clusters/{ID}"),
            adapter,
            3,
            "True",
            "Ready",
        );
    }
    let d = world.diagnose().await;
    assert_verdict(
        &d,
        1,
        Some("hyperfleet.preconditions"),
        &[
            "not met at generation 3",
            "dns: DnsSuccessful",
            "its report: generation 2",
        ],
    );
    assert!(!evidence(&d, "hyperfleet.preconditions").contains("validation:"));
    assert_eq!(mark(&d, "framework.job"), Mark::Waiting);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_job_for_the_current_generation_points_at_the_framework() {
    let world = World::start().await;
    world.preconditions_met(3);
    world
        .reported_job(2, 2, ("True", "ControlPlaneReady", "ready"))
        .await;
    let d = world.diagnose().await;
    assert_verdict(
        &d,
        1,
        Some("framework.job"),
        &[
            "no Job labelled hyperfleet.io/adapter=controlplane",
            "for generation 3",
            &format!("newest: {} for generation 2", job_name(2)),
            "manifests/hyperfleet/rbac.yaml",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jobs_rbac_missing_is_unreadable_naming_the_role_to_apply() {
    let world = World::start().await;
    world.healthy().await;
    world.kube.deny("batch", "jobs");
    let d = world.diagnose().await;
    assert_verdict(
        &d,
        3,
        Some("framework.job"),
        &["HTTP 403", "manifests/rbac-diagnose.yaml"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_job_says_how_it_failed() {
    let failed = |reason: &str, message: &str| {
        json!({"conditions": [
            {"type": "Available", "status": "False", "reason": reason, "message": message},
            {"type": "Applied", "status": "False", "reason": reason, "message": message},
            {"type": "Health", "status": "False", "reason": reason, "message": message},
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}],
            "failed": 1})
    };
    let image_pull = json!([{"name": "adapter", "ready": false, "restartCount": 0, "image": "quay.io/x/hypershift-adapter:v9", "imageID": "",
        "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image \"quay.io/x/hypershift-adapter:v9\""}}}]);
    let cases: Vec<(&str, Value, Value, Vec<&str>)> = vec![
        (
            "crash",
            failed(
                "AdapterExitedWithError",
                "the adapter exited with code 1: no report could be written",
            ),
            terminated(&[("adapter", 1, "Error"), ("status-reporter", 0, "Completed")]),
            vec![
                "AdapterExitedWithError",
                "adapter exited 1 Error",
                "termination message",
            ],
        ),
        (
            "oom",
            failed("AdapterOOMKilled", "the adapter was OOM-killed"),
            terminated(&[
                ("adapter", 137, "OOMKilled"),
                ("status-reporter", 0, "Completed"),
            ]),
            vec![
                "AdapterOOMKilled",
                "adapter exited 137 OOMKilled",
                "memory limit",
            ],
        ),
        (
            "deadline",
            json!({"conditions": [{"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
                                   "message": "Job was active longer than specified deadline"}], "failed": 1}),
            terminated(&[("adapter", 137, "Error"), ("status-reporter", 137, "Error")]),
            vec![
                "failed without a report: DeadlineExceeded",
                "activeDeadlineSeconds",
            ],
        ),
        (
            "image pull",
            json!({"active": 1}),
            image_pull,
            vec![
                "adapter waiting ImagePullBackOff",
                "cannot start",
                "pull secret",
            ],
        ),
        (
            "invalid report",
            failed(
                "InvalidResultFormat",
                "conditions[1].status: must be True, False or Unknown",
            ),
            terminated(&[
                ("adapter", 0, "Completed"),
                ("status-reporter", 0, "Completed"),
            ]),
            vec!["InvalidResultFormat", "conditions[1].status", "JSON path"],
        ),
    ];
    for (case, status, containers, words) in cases {
        let world = World::start().await;
        world.preconditions_met(3);
        world
            .job(&job_name(3), 3, status, &[], Some(containers))
            .await;
        let d = world.diagnose().await;
        assert_eq!(d.verdict.link, Some("job.report"), "{case}:\n{}", d.text());
        assert_verdict(&d, 1, Some("job.report"), &words);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_older_than_what_the_api_holds_is_discarded() {
    let world = World::start().await;
    world.preconditions_met(3);
    world
        .applied_work(3, &hosted_cluster_status(Stage::Ready))
        .await;
    world.report(
        &format!("{PREFIX}/clusters/{ID}"),
        "hypershift",
        3,
        "True",
        "ControlPlaneReady",
    );
    // A pulse Job named for generation 3 whose report still describes generation 2.
    world
        .reported_job(3, 2, ("True", "ControlPlaneReady", "ready"))
        .await;
    let d = world.diagnose().await;
    assert_verdict(
        &d,
        1,
        Some("hyperfleet.status"),
        &["discarded: the Job reports generation 2, the API holds generation 3"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maestro_unreachable_is_unreadable_or_stuck_when_the_pulse_saw_it_too() {
    let world = World::start().await;
    world.healthy().await;
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let mut args = world.args(&["cluster", ID], &[]);
    let at = args.iter().position(|a| a == "--maestro-api-url").unwrap();
    args[at + 1] = closed.clone();
    let d = diagnose(args.clone(), Timestamp::now()).await;
    assert_verdict(
        &d,
        3,
        Some("maestro.work"),
        &["?", "Maestro could not be read"],
    );
    assert!(
        evidence(&d, "maestro.work").contains("onnect"),
        "{}",
        d.text()
    );

    // The pulse reported MaestroUnavailable too: the link is broken, not merely unread.
    world.kube.delete_job(NS, &job_name(3));
    world
        .job(
            &job_name(3),
            3,
            json!({"conditions": [
                {"type": "Applied", "status": "False", "reason": "MaestroUnavailable", "message": "Maestro unreachable after 240s"},
                {"type": "Available", "status": "Unknown", "reason": "MaestroUnavailable", "message": "Maestro unreachable after 240s"},
                {"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": ""}], "succeeded": 1}),
            &[("hyperfleet.io/observed-generation", "3")],
            None,
        )
        .await;
    let d = diagnose(args, Timestamp::now()).await;
    assert_verdict(
        &d,
        1,
        Some("maestro.work"),
        &[
            "the pulse reported MaestroUnavailable",
            "cannot reach Maestro either",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_consumer_shows_as_no_work_with_the_pulses_words() {
    let world = World::start().await;
    world.preconditions_met(3);
    world
        .job(
            &job_name(3),
            3,
            json!({"conditions": [
                {"type": "Applied", "status": "False", "reason": "ConsumerNotFound", "message": "Maestro has no consumer mgmt-euw2-99"},
                {"type": "Available", "status": "Unknown", "reason": "ConsumerNotFound", "message": "Maestro has no consumer mgmt-euw2-99"},
                {"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": ""}], "succeeded": 1}),
            &[("hyperfleet.io/observed-generation", "3")],
            None,
        )
        .await;
    let d = world.diagnose().await;
    assert_verdict(
        &d,
        1,
        Some("maestro.work"),
        &[
            "ConsumerNotFound",
            "mgmt-euw2-99",
            "not registered in Maestro",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_does_not_apply_is_in_progress_then_stuck() {
    let world = World::start().await;
    world.preconditions_met(3);
    world.create_work(3).await;
    world
        .reported_job(
            3,
            3,
            (
                "False",
                "Provisioning",
                "Control plane provisioning in progress",
            ),
        )
        .await;
    world.report(
        &format!("{PREFIX}/clusters/{ID}"),
        "hypershift",
        3,
        "False",
        "Provisioning",
    );
    let d = world.diagnose().await;
    assert_verdict(&d, 4, Some("agent.applied"), &["no Applied from the agent"]);

    let later = Timestamp::now() + jiff::SignedDuration::from_mins(10);
    let d = world.diagnose_at(later, &[]).await;
    assert_verdict(
        &d,
        1,
        Some("agent.applied"),
        &[
            &format!("no Applied from the agent of {CONSUMER}"),
            "more than 5m",
            "down, or disconnected from Maestro",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_rejected_by_admission_quotes_the_api_servers_message() {
    let Some(dir) = job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/maestro")
    else {
        return;
    };
    let recorded: Value =
        serde_json::from_slice(&std::fs::read(dir.join("real/06-apply-failure.json")).unwrap())
            .unwrap();
    let denial = recorded["body"]["status"]["resourceStatus"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["conditions"].as_array().unwrap())
        .find(|c| c["type"] == "Applied" && c["status"] == "False")
        .unwrap()["message"]
        .as_str()
        .unwrap()
        .trim_start_matches("Failed to apply manifest: ")
        .to_owned();
    let world = World::start().await;
    world.preconditions_met(3);
    world.create_work(3).await;
    assert!(world.maestro.fail_apply(&work_name(), Some(&denial)));
    world
        .reported_job(3, 3, ("False", "ApplyFailed", "the agent could not apply"))
        .await;
    let d = world.diagnose().await;
    assert_verdict(
        &d,
        1,
        Some("agent.applied"),
        &["could not apply", "denied request", "admission policy"],
    );
}

/// A Ready HostedCluster status with `condition` added.
fn ready_with(condition: Value, version: Option<Value>) -> Value {
    let mut status = hosted_cluster_status(Stage::Ready);
    status["conditions"].as_array_mut().unwrap().push(condition);
    if let Some(version) = version {
        status["version"] = version;
    }
    status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_conditions_are_read_with_the_adapters_tables() {
    let upgrading = json!({"desired": {"version": "4.19.4"}, "history": [
        {"state": "Partial", "version": "4.19.4"}, {"state": "Completed", "version": "4.19.3"}]});
    let cases = [
        (
            "WIF",
            ready_with(
                json!({"type": "ValidGCPWorkloadIdentity", "status": "False", "reason": "InvalidWorkloadIdentity",
                              "message": "workload identity pool provider hyperfleet-oidc not found"}),
                None,
            ),
            vec![
                "Health=False InvalidWorkloadIdentity",
                "hyperfleet-oidc not found",
            ],
        ),
        (
            "etcd",
            hosted_cluster_status(Stage::Degraded),
            vec!["Health=False Degraded", "EtcdQuorumLost"],
        ),
        (
            "upgrade failing",
            ready_with(
                json!({"type": "ClusterVersionFailing", "status": "True", "reason": "ClusterOperatorDegraded",
                              "message": "Cluster operator kube-apiserver is degraded"}),
                Some(upgrading),
            ),
            vec!["Health=False UpgradeFailed", "kube-apiserver is degraded"],
        ),
        (
            "infrastructure",
            ready_with(
                json!({"type": "PlatformCredentialsFound", "status": "False", "reason": "PlatformCredentialsNotFound",
                              "message": "failed to get platform credentials"}),
                None,
            ),
            vec![
                "Health=False PlatformCredentialsNotFound",
                "failed to get platform credentials",
            ],
        ),
    ];
    for (case, status, words) in cases {
        let world = World::start().await;
        world.preconditions_met(3);
        world.applied_work(3, &status).await;
        world
            .reported_job(3, 3, ("True", "ControlPlaneReady", "ready"))
            .await;
        let d = world.diagnose().await;
        assert_eq!(
            d.verdict.link,
            Some("hypershift.hostedcluster"),
            "{case}:\n{}",
            d.text()
        );
        assert_verdict(&d, 1, Some("hypershift.hostedcluster"), &words);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recorded_invalid_release_image_is_named_in_the_operators_words() {
    let Some(dir) =
        job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/hypershift-operator")
    else {
        return;
    };
    let snapshot: Value =
        serde_json::from_slice(&std::fs::read(dir.join("b-gke-like/03-after-3min.json")).unwrap())
            .unwrap();
    let gcp2 = snapshot["hostedclusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|hc| hc["metadata"]["name"] == "gcp2")
        .unwrap();
    let world = World::start().await;
    world.preconditions_met(3);
    world.applied_work(3, &gcp2["status"]).await;
    world
        .reported_job(3, 3, ("False", "Blocked", "blocked"))
        .await;
    let d = world.diagnose().await;
    assert_verdict(
        &d,
        1,
        Some("hypershift.hostedcluster"),
        &[
            "ReleaseImageInvalid",
            "ValidReleaseImage=False (PayloadArchNotFound)",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_held_by_nodepools_or_finalizers_says_for_how_long() {
    let world = World::start().await;
    let deleted = (Timestamp::now() - jiff::SignedDuration::from_mins(45)).to_string();
    world.healthy().await;
    world.hyperfleet.seed(&json!({
        "kind": "NodePool", "id": NODEPOOL_ID, "name": "workers-euw2-a1", "generation": 1,
        "owner_references": {"id": ID}, "spec": {"replicas": 3}}));
    world.seed_cluster(4, Some(&deleted));
    world
        .reported_job(
            4,
            4,
            (
                "False",
                "Deleting",
                "NodePools of the cluster are still listed",
            ),
        )
        .await;
    let d = world.diagnose().await;
    assert_verdict(
        &d,
        1,
        Some("hypershift.hostedcluster"),
        &["still lists 1 NodePools", NODEPOOL_ID, "more than 30m ago"],
    );
    assert_eq!(mark(&d, "hyperfleet.preconditions"), Mark::Ok);

    // No NodePools left: the HostedCluster's finalizer holds the work's deletion.
    assert!(world.hyperfleet.remove(NODEPOOL_ID));
    world.seed_cluster(4, Some(&deleted));
    assert!(
        world
            .maestro
            .hold_delete(&work_name(), &["hypershift.openshift.io/finalizer"])
    );
    assert!(world.maestro.apply(&work_name()));
    let config = MaestroConfig::new(
        world.maestro.grpc_url(),
        world.maestro.rest_url(),
        SOURCE,
        CONSUMER,
    );
    MaestroWorkClient::new(config)
        .unwrap()
        .delete(&work_name())
        .await
        .unwrap();
    world.maestro.apply(&work_name());
    let d = world.diagnose().await;
    assert_verdict(
        &d,
        1,
        Some("hypershift.hostedcluster"),
        &["deleting since", "more than 30m ago"],
    );
    // Within the limit it is a deletion in progress, not a held one.
    let d = world
        .diagnose_at(Timestamp::now(), &["--deletion-stuck-after", "2h"])
        .await;
    assert_eq!(
        mark(&d, "hypershift.hostedcluster"),
        Mark::Waiting,
        "{}",
        d.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnose_nodepool_reads_the_nested_object_and_the_nodepool_jobs() {
    let world = World::start().await;
    world.hyperfleet.seed(&json!({
        "kind": "NodePool", "id": NODEPOOL_ID, "name": "workers-euw2-a1", "generation": 2,
        "owner_references": {"id": ID}, "spec": {"replicas": 3}}));
    let args = world.args(&["nodepool", NODEPOOL_ID, "--cluster-id", ID], &[]);
    let d = diagnose(args, Timestamp::now()).await;
    assert_eq!((d.kind, d.generation), ("nodepool", Some(2)));
    assert_verdict(
        &d,
        1,
        Some("hyperfleet.preconditions"),
        &[
            &format!("diagnose nodepool {NODEPOOL_ID} (cluster {ID})"),
            "validation: no ValidationSuccessful",
        ],
    );
    assert!(!evidence(&d, "hyperfleet.preconditions").contains("dns"));
    let served = world.hyperfleet.served();
    assert!(
        served.contains(&format!(
            "GET /api/hyperfleet/v1/clusters/{ID}/nodepools/{NODEPOOL_ID}"
        )),
        "{served:?}"
    );
}

/// A server that answers every request with the first half of a JSON document.
async fn truncating_server() -> String {
    let app = axum::Router::new().fallback(|| async {
        (
            [(http::header::CONTENT_TYPE, "application/json")],
            r#"{"kind": "ResourceBundleList", "items": [{"id": "019a"#,
        )
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_json_from_every_system_is_unreadable_not_a_crash() {
    let world = World::start().await;
    let url = truncating_server().await;
    let kubeconfig = world.dir.path().join("truncating-kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {url}\nusers:\n- name: u\n  user: {{}}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
        ),
    )
    .unwrap();
    let args: Vec<String> = [
        "hypershift-adapter",
        "diagnose",
        "cluster",
        ID,
        "--hyperfleet-api",
        &url,
        "--kubeconfig",
        &kubeconfig.display().to_string(),
        "--maestro-api-url",
        &url,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let d = diagnose(args, Timestamp::now()).await;
    assert_verdict(&d, 3, Some("hyperfleet.object"), &["not JSON"]);
    for id in [
        "hyperfleet.object",
        "framework.job",
        "maestro.work",
        "hyperfleet.status",
    ] {
        assert_eq!(mark(&d, id), Mark::Unknown, "{id}: {}", d.text());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_or_missing_token_is_unreadable_naming_the_setting() {
    let hyperfleet = FakeHyperfleetApi::start(
        Config::recorded().with_token("hf-token-7f3a9c"),
        Clock::wall(),
    )
    .await
    .unwrap();
    let world = World::start().await;
    let wrong = world.dir.path().join("token");
    std::fs::write(&wrong, "not-the-token-5d2e").unwrap();
    let mut args = world.args(
        &["cluster", ID],
        &["--hyperfleet-token-file", &wrong.display().to_string()],
    );
    let at = args.iter().position(|a| a == "--hyperfleet-api").unwrap();
    args[at + 1] = hyperfleet.url().to_owned();
    let d = diagnose(args.clone(), Timestamp::now()).await;
    assert_verdict(
        &d,
        3,
        Some("hyperfleet.object"),
        &[
            "HTTP 401",
            "refused the credentials",
            "HYPERFLEET_API_TOKEN_FILE",
        ],
    );
    assert!(!d.text().contains("not-the-token-5d2e") && !d.json().contains("not-the-token-5d2e"));

    let missing = world.dir.path().join("no-such-token");
    let at = args
        .iter()
        .position(|a| a == "--hyperfleet-token-file")
        .unwrap();
    args[at + 1] = missing.display().to_string();
    let d = diagnose(args, Timestamp::now()).await;
    assert_verdict(
        &d,
        3,
        Some("hyperfleet.object"),
        &["HYPERFLEET_API_TOKEN_FILE", "no-such-token"],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_messages_are_bounded_and_credentials_removed() {
    let world = World::start().await;
    world.preconditions_met(3);
    let huge = format!("Bearer eyJhbGciOiJSUzI1NiJ9.s3cr3t {}", "x".repeat(200_000));
    world
        .job(
            &job_name(3),
            3,
            json!({"conditions": [
                {"type": "Available", "status": "False", "reason": "AdapterExitedWithError", "message": huge},
                {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}], "failed": 1}),
            &[],
            Some(terminated(&[("adapter", 2, "Error")])),
        )
        .await;
    let d = world.diagnose().await;
    assert_verdict(&d, 1, Some("job.report"), &["AdapterExitedWithError"]);
    let text = d.text();
    assert!(!text.contains("s3cr3t"), "{text}");
    assert!(text.lines().all(|l| l.len() <= 600), "a line is too long");
    assert!(d.json().len() < 16 * 1024);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_without_pods_and_two_jobs_for_one_generation_are_read_plainly() {
    let world = World::start().await;
    world.preconditions_met(3);
    world
        .job(
            &job_name(3),
            3,
            json!({"conditions": [{"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
                                   "message": "Job was active longer than specified deadline"}], "failed": 1}),
            &[],
            None,
        )
        .await;
    let d = world.diagnose().await;
    assert_verdict(
        &d,
        1,
        Some("job.report"),
        &["no Pods (not created yet, or already deleted)"],
    );

    // A second Job for generation 3 (created in the same second or later): the newest is read,
    // the name breaking a tie.
    world
        .job(
            &format!("{}-retry", job_name(3)),
            3,
            json!({"active": 1}),
            &[],
            None,
        )
        .await;
    let d = world.diagnose().await;
    assert!(
        evidence(&d, "framework.job").contains("2 Jobs for this generation"),
        "{}",
        d.text()
    );
    assert!(
        evidence(&d, "framework.job").contains("-retry"),
        "{}",
        d.text()
    );
    assert_eq!(mark(&d, "job.report"), Mark::Waiting, "{}", d.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_prints_text_or_one_json_document_and_exits_with_the_verdict() {
    let world = World::start().await;
    world.healthy().await;
    let run = |extra: &[&str]| {
        let args = world.args(&["cluster", ID], extra);
        std::process::Command::new(testbed::binaries::path("hypershift-adapter"))
            .args(&args[1..])
            .env_clear()
            .output()
            .unwrap()
    };
    let out = tokio::task::block_in_place(|| run(&[]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(&format!(
            "diagnose cluster {ID}, generation 3, consumer {CONSUMER}"
        )),
        "{text}"
    );
    assert!(text.contains("✓ maestro.work"), "{text}");

    world.kube.delete_job(NS, &job_name(3));
    world.seed_cluster(4, None);
    let out = tokio::task::block_in_place(|| run(&["-o", "json"]));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["verdict"]["status"], "stuck");
    assert_eq!(doc["verdict"]["link"], "hyperfleet.preconditions");
    assert_eq!(doc["exit_code"], 1);
    assert_eq!(doc["links"].as_array().unwrap().len(), 8);

    let out = tokio::task::block_in_place(|| run(&["--timeout-per-system", "soon"]));
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid value 'soon' for '--timeout-per-system"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_system_that_never_answers_is_unreadable_after_its_timeout() {
    use testbed::kube_api::{Fault, FaultAction};
    let world = World::start().await;
    world.healthy().await;
    world.kube.inject(Fault::new(
        &format!("/namespaces/{NS}/jobs"),
        1,
        FaultAction::Hang,
    ));
    let d = world
        .diagnose_at(Timestamp::now(), &["--timeout-per-system", "1s"])
        .await;
    assert_verdict(
        &d,
        3,
        Some("framework.job"),
        &["timed out after 1s", "did not answer in time"],
    );
    // The other systems were read all the same.
    assert_eq!(mark(&d, "maestro.work"), Mark::Ok, "{}", d.text());
    assert_eq!(mark(&d, "hyperfleet.object"), Mark::Ok, "{}", d.text());
}
