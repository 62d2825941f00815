//! The manifests under `manifests/` against the binaries that run in them and the rules of the design:
//! every Kubernetes object parses as its k8s-openapi type with no unknown or misspelled field, every env var
//! is one the binaries accept (read from their `--help`), the containers are locked down, RBAC is exactly what
//! the containers use, the Job's deadlines fit together, no secret is inline, and the kind demo script names
//! only files that exist, renders both overlays to Jobs the subcommands accept, and, replayed with stand-ins for
//! docker, kind and kubectl against an in-process API server and the real adapter, ends with a ready NodePool.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Container, Namespace, PodSpec, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Sentinel's pulse interval while a cluster is not reconciled (design §1).
const PULSE_INTERVAL_SECONDS: i64 = 10;
/// The status-reporter waits `activeDeadlineSeconds` less this margin (`status-reporter/src/lib.rs`
/// `DEADLINE_MARGIN`, private there).
const REPORTER_DEADLINE_MARGIN_SECONDS: i64 = 10;
/// Env names the binaries accept that `--help` does not list (hidden aliases, design §4 and §5).
const REPORTER_ALIASES: &[&str] = &["RESULTS_INPUT_PATH", "POLL_INTERVAL"];
const ADAPTER_ALIASES: &[&str] = &["RESULTS_PATH"];
/// Files under `manifests/` that are not Kubernetes objects of a built-in kind, parsed as generic YAML.
const GENERIC_FILES: &[&str] = &[
    "hyperfleet/adapter-config.yaml",
    "hyperfleet/adapter-task-config.yaml",
    "hyperfleet/nodepool/adapter-config.yaml",
    "hyperfleet/nodepool/adapter-task-config.yaml",
    "kind/kind-config.yaml",
    "kind/pulse/kustomization.yaml",
    "kind/nodepool-pulse/kustomization.yaml",
];
/// Strategic merge patches (they carry `$patch` directives): parsed as Jobs, but not round-tripped.
const JOB_PATCH_FILE: &str = "kind/pulse/hub-backend.yaml";
const NODEPOOL_JOB_PATCH_FILE: &str = "kind/nodepool-pulse/hub-backend.yaml";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn read(rel: &str) -> String {
    let path = root().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The YAML documents of `rel` (relative to the repository root), empty documents skipped.
fn documents(rel: &str) -> Vec<Value> {
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(&read(rel)).unwrap_or_else(|e| panic!("parse {rel}: {e}"));
    docs.into_iter().filter(|d| !d.is_null()).collect()
}

fn document(rel: &str) -> Value {
    let mut docs = documents(rel);
    assert_eq!(docs.len(), 1, "{rel}: expected one YAML document");
    docs.remove(0)
}

/// Parses `doc` as `T` and checks that nothing was lost: k8s-openapi ignores unknown fields, so a
/// misspelled one (`readonly`, `runAsNonroot`) would otherwise vanish silently.
fn typed<T: DeserializeOwned + Serialize>(what: &str, doc: &Value) -> T {
    let object: T = serde_json::from_value(doc.clone())
        .unwrap_or_else(|e| panic!("{what}: not a valid {}: {e}", std::any::type_name::<T>()));
    let back = serde_json::to_value(&object).unwrap();
    assert_eq!(
        &back,
        doc,
        "{what}: fields were dropped or changed by parsing as {} (misspelled or misplaced?)",
        std::any::type_name::<T>()
    );
    object
}

/// Every `.yaml` file under `manifests/`, relative to it, sorted; not `manifests/helm/`: Helm charts
/// (templates, values, the vendored framework chart), which `tests/tests/real/helm.rs` renders with
/// the real Helm and holds to these files.
fn manifest_files() -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path == base.join("helm") {
                continue;
            }
            if path.is_dir() {
                walk(&path, base, out);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(
                    path.strip_prefix(base)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    let base = root().join("manifests");
    let mut files = Vec::new();
    walk(&base, &base, &mut files);
    files.sort();
    files
}

fn job_doc() -> Value {
    document("manifests/job.yaml")
}

fn job() -> Job {
    typed("manifests/job.yaml", &job_doc())
}

/// The NodePool's pulse Job (`hypershift-adapter nodepool`).
const NODEPOOL_JOB: &str = "manifests/nodepool-job.yaml";

fn nodepool_job_doc() -> Value {
    document(NODEPOOL_JOB)
}

/// Both pulse Jobs, for the rules they share (containers, deadlines, secrets).
fn pulse_jobs() -> Vec<(&'static str, Job)> {
    vec![
        ("manifests/job.yaml", job()),
        (NODEPOOL_JOB, typed(NODEPOOL_JOB, &nodepool_job_doc())),
    ]
}

fn pod_spec(job: &Job) -> &PodSpec {
    job.spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .expect("job.yaml has spec.template.spec")
}

fn container<'a>(spec: &'a PodSpec, name: &str) -> &'a Container {
    spec.containers
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("job.yaml has no container {name:?}"))
}

fn env_value<'a>(c: &'a Container, name: &str) -> Option<&'a str> {
    c.env
        .iter()
        .flatten()
        .find(|e| e.name == name)
        .and_then(|e| e.value.as_deref())
}

fn env_names(c: &Container) -> Vec<String> {
    c.env.iter().flatten().map(|e| e.name.clone()).collect()
}

/// Runs a built binary with an empty environment (so clap shows `[env: NAME=]` without values).
fn help(binary: &str, args: &[&str]) -> String {
    let out = Command::new(testbed::binaries::path(binary))
        .args(args)
        .env_clear()
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{binary} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The names in clap's `[env: NAME=…]` markers.
fn env_markers(help: &str) -> BTreeSet<String> {
    help.match_indices("[env: ")
        .filter_map(|(i, m)| {
            let rest = &help[i + m.len()..];
            rest.find('=').map(|end| rest[..end].to_owned())
        })
        .collect()
}

/// Subcommands listed under `Commands:` in clap's help (`help` excluded).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Env names each `hypershift-adapter` subcommand accepts, from `--help`.
fn adapter_env_by_subcommand() -> BTreeMap<String, BTreeSet<String>> {
    let top = help("hypershift-adapter", &["--help"]);
    let subs = subcommands(&top);
    assert!(!subs.is_empty(), "no subcommands found in:\n{top}");
    subs.into_iter()
        .map(|sub| {
            // A subcommand with subcommands of its own (`diagnose cluster|nodepool`): theirs.
            let own = help("hypershift-adapter", &[&sub, "--help"]);
            let mut names = env_markers(&own);
            for nested in subcommands(&own) {
                names.extend(env_markers(&help(
                    "hypershift-adapter",
                    &[&sub, &nested, "--help"],
                )));
            }
            assert!(
                names.contains("CLUSTER_ID"),
                "`hypershift-adapter {sub} --help` lists no CLUSTER_ID; the help parser is broken: {names:?}"
            );
            names.extend(ADAPTER_ALIASES.iter().map(|s| (*s).to_owned()));
            (sub, names)
        })
        .collect()
}

fn reporter_env() -> BTreeSet<String> {
    let mut names = env_markers(&help("status-reporter", &["--help"]));
    assert!(
        names.contains("RESULTS_PATH") && names.contains("ADAPTER_CONTAINER_NAME"),
        "status-reporter --help parse is broken: {names:?}"
    );
    names.extend(REPORTER_ALIASES.iter().map(|s| (*s).to_owned()));
    names
}

fn rules_of(rules: &[PolicyRule]) -> BTreeSet<(String, String, Vec<String>)> {
    rules
        .iter()
        .flat_map(|r| {
            assert!(
                r.resource_names.is_none() && r.non_resource_urls.is_none(),
                "unexpected rule shape: {r:?}"
            );
            let groups = r.api_groups.clone().unwrap_or_default();
            let resources = r.resources.clone().unwrap_or_default();
            let mut verbs = r.verbs.clone();
            verbs.sort();
            groups.into_iter().flat_map(move |g| {
                let verbs = verbs.clone();
                resources
                    .clone()
                    .into_iter()
                    .map(move |res| (g.clone(), res, verbs.clone()))
            })
        })
        .collect()
}

fn rule(group: &str, resource: &str, verbs: &[&str]) -> (String, String, Vec<String>) {
    let mut verbs: Vec<String> = verbs.iter().map(|v| (*v).to_owned()).collect();
    verbs.sort();
    (group.to_owned(), resource.to_owned(), verbs)
}

fn quantity_bytes(q: &str) -> u64 {
    let (number, unit) = q.split_at(q.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(q.len()));
    let n: u64 = number.parse().unwrap_or_else(|_| panic!("quantity {q:?}"));
    n * match unit {
        "" => 1,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        other => panic!("unit {other:?} in {q:?}"),
    }
}

#[test]
fn every_manifest_parses_as_its_kubernetes_type_without_unknown_fields() {
    let files = manifest_files();
    for required in [
        "job.yaml",
        "rbac.yaml",
        "rbac-nodes.yaml",
        "hyperfleet/adapter-task-config.yaml",
        "kind/kind-config.yaml",
        "kind/namespaces.yaml",
        "kind/hub-rbac.yaml",
        "kind/crds/manifestworks.work.open-cluster-management.io.yaml",
        "kind/crds/hostedclusters.hypershift.openshift.io-demo.yaml",
        "kind/crds/nodepools.hypershift.openshift.io-demo.yaml",
        JOB_PATCH_FILE,
        NODEPOOL_JOB_PATCH_FILE,
    ] {
        assert!(
            files.iter().any(|f| f == required),
            "manifests/{required} is missing"
        );
    }
    for file in &files {
        let rel = format!("manifests/{file}");
        let docs = documents(&rel);
        assert!(!docs.is_empty(), "{rel} is empty");
        if GENERIC_FILES.contains(&file.as_str()) {
            continue;
        }
        for (i, doc) in docs.iter().enumerate() {
            let what = format!("{rel} document {i}");
            let kind = doc["kind"].as_str().unwrap_or_default();
            match kind {
                "Job" if [JOB_PATCH_FILE, NODEPOOL_JOB_PATCH_FILE].contains(&file.as_str()) => {
                    let _: Job = serde_json::from_value(doc.clone()).unwrap();
                }
                "Job" => drop(typed::<Job>(&what, doc)),
                "ServiceAccount" => drop(typed::<ServiceAccount>(&what, doc)),
                "Role" => drop(typed::<Role>(&what, doc)),
                "RoleBinding" => drop(typed::<RoleBinding>(&what, doc)),
                "ClusterRole" => drop(typed::<ClusterRole>(&what, doc)),
                "ClusterRoleBinding" => drop(typed::<ClusterRoleBinding>(&what, doc)),
                "Namespace" => drop(typed::<Namespace>(&what, doc)),
                // Large generated schemas: checked to be CRDs, not round-tripped.
                "CustomResourceDefinition" => {
                    let crd: CustomResourceDefinition = serde_json::from_value(doc.clone())
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert!(
                        crd.spec.versions.iter().any(|v| v.served && v.storage),
                        "{what}: no served storage version"
                    );
                }
                other => panic!("{what}: unexpected kind {other:?}; add it to this test"),
            }
        }
    }
}

/// Issue 16: a crash says why. The adapter writes its fatal error where the kubelet reads the
/// termination message (its default path, the file the kubelet mounts), and with
/// `FallbackToLogsOnError` an adapter that wrote nothing and failed (abort, OOM kill) still gets
/// its last log lines there; the status-reporter's own failures show the same way.
#[test]
fn both_jobs_make_the_adapters_crash_cause_its_termination_message() {
    for (file, job) in [
        ("manifests/job.yaml", job()),
        (NODEPOOL_JOB, typed(NODEPOOL_JOB, &nodepool_job_doc())),
    ] {
        let pod = pod_spec(&job);
        for name in ["adapter", "status-reporter"] {
            let c = container(pod, name);
            assert_eq!(
                c.termination_message_policy.as_deref(),
                Some("FallbackToLogsOnError"),
                "{file}: container {name}"
            );
        }
        let adapter = container(pod, "adapter");
        // The adapter writes TERMINATION_MESSAGE_PATH, else the kubelet's default path: the Job
        // must not move the file without telling the adapter.
        let path = adapter
            .termination_message_path
            .as_deref()
            .unwrap_or(hypershift_adapter::pulse::DEFAULT_TERMINATION_MESSAGE_PATH);
        let told = adapter
            .env
            .iter()
            .flatten()
            .find(|e| e.name == "TERMINATION_MESSAGE_PATH")
            .and_then(|e| e.value.as_deref())
            .unwrap_or(hypershift_adapter::pulse::DEFAULT_TERMINATION_MESSAGE_PATH);
        assert_eq!(
            path, told,
            "{file}: the adapter writes where the kubelet reads"
        );
    }
}

#[test]
fn job_is_the_pulse_job_of_the_design() {
    let job = job();
    let meta = &job.metadata;
    assert_eq!(
        meta.name.as_deref(),
        Some("hs-cp-{{ .clusterId }}-g{{ .generation }}")
    );
    let labels = meta.labels.clone().unwrap_or_default();
    assert_eq!(
        labels.get("hyperfleet.io/cluster-id").map(String::as_str),
        Some("{{ .clusterId }}")
    );
    assert_eq!(
        labels.get("hyperfleet.io/adapter").map(String::as_str),
        Some("controlplane")
    );
    let annotations = meta.annotations.clone().unwrap_or_default();
    assert_eq!(
        annotations
            .get("hyperfleet.io/generation")
            .map(String::as_str),
        Some("{{ .generation }}")
    );
    let spec = job.spec.as_ref().unwrap();
    assert_eq!(spec.backoff_limit, Some(0), "the next pulse is the retry");
    let pod = pod_spec(&job);
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
    assert_eq!(
        pod.service_account_name.as_deref(),
        Some("hypershift-adapter")
    );
    let names: Vec<&str> = pod.containers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["adapter", "status-reporter"]);
    let adapter = container(pod, "adapter");
    assert_eq!(
        adapter.args.as_deref(),
        Some(&["controlplane".to_owned()][..])
    );
    assert!(
        adapter
            .image
            .as_deref()
            .is_some_and(|i| i.starts_with("hypershift-adapter:"))
    );
    let reporter = container(pod, "status-reporter");
    assert!(
        reporter
            .image
            .as_deref()
            .is_some_and(|i| i.starts_with("status-reporter:"))
    );

    // The reporter's downward-API inputs.
    let field = |name: &str| {
        reporter
            .env
            .iter()
            .flatten()
            .find(|e| e.name == name)
            .and_then(|e| e.value_from.as_ref())
            .and_then(|v| v.field_ref.as_ref())
            .map(|f| f.field_path.clone())
    };
    assert_eq!(
        field("JOB_NAME").as_deref(),
        Some("metadata.labels['batch.kubernetes.io/job-name']")
    );
    assert_eq!(
        field("JOB_NAMESPACE").as_deref(),
        Some("metadata.namespace")
    );
    assert_eq!(field("POD_NAME").as_deref(), Some("metadata.name"));
    // The reporter's own failures land on every type the API requires (contract §3).
    assert_eq!(
        env_value(reporter, "CONDITION_TYPE"),
        Some("Available,Applied,Health")
    );
}

#[test]
fn container_names_and_results_path_match_what_the_binaries_read() {
    // The reporter watches the container named ADAPTER_CONTAINER_NAME, default `adapter`.
    let reporter_help = help("status-reporter", &["--help"]);
    let marker = reporter_help
        .find("[env: ADAPTER_CONTAINER_NAME=")
        .expect("reporter help names ADAPTER_CONTAINER_NAME");
    assert!(
        reporter_help[marker..].starts_with("[env: ADAPTER_CONTAINER_NAME=]")
            && reporter_help[marker..]
                .lines()
                .take(3)
                .any(|l| l.contains("[default: adapter]")),
        "the reporter's default adapter container is no longer `adapter`"
    );
    for (file, job) in pulse_jobs() {
        let pod = pod_spec(&job);
        let adapter = container(pod, "adapter");
        let reporter = container(pod, "status-reporter");
        let watched = env_value(reporter, "ADAPTER_CONTAINER_NAME").unwrap_or("adapter");
        assert_eq!(watched, adapter.name, "{file}");

        // Both sides of the hand-off name the same file, inside the shared volume.
        let written =
            env_value(adapter, "RESULTS_OUTPUT_PATH").expect("adapter RESULTS_OUTPUT_PATH");
        let read = env_value(reporter, "RESULTS_PATH").expect("reporter RESULTS_PATH");
        assert_eq!(written, read, "{file}");
        let results_volume = pod
            .volumes
            .iter()
            .flatten()
            .find(|v| v.empty_dir.is_some())
            .expect("an emptyDir results volume");
        for (c, read_only) in [(adapter, false), (reporter, true)] {
            let mount = c
                .volume_mounts
                .iter()
                .flatten()
                .find(|m| m.name == results_volume.name)
                .unwrap_or_else(|| panic!("{} does not mount the results volume", c.name));
            assert!(
                Path::new(written).starts_with(&mount.mount_path),
                "{written} is not under {}'s mount {}",
                c.name,
                mount.mount_path
            );
            assert_eq!(
                mount.read_only.unwrap_or(false),
                read_only,
                "{}: results mount readOnly must be {read_only}",
                c.name
            );
        }
    }
}

#[test]
fn every_env_var_of_the_reporter_is_one_it_accepts() {
    let accepted = reporter_env();
    for (file, job) in pulse_jobs() {
        let reporter = container(pod_spec(&job), "status-reporter");
        let unknown: Vec<String> = env_names(reporter)
            .into_iter()
            .filter(|n| !accepted.contains(n))
            .collect();
        assert!(
            unknown.is_empty(),
            "{file}: status-reporter does not read {unknown:?}; it accepts {accepted:?}"
        );
    }
}

/// Covers every subcommand `hypershift-adapter --help` lists. The Job runs `controlplane`: until that
/// subcommand is merged this test fails on its first assertion (the subcommand is missing), by design.
#[test]
fn every_env_var_of_the_adapter_is_one_its_subcommand_accepts() {
    let by_subcommand = adapter_env_by_subcommand();
    let job = job();
    let adapter = container(pod_spec(&job), "adapter");
    let overlay = document(&format!("manifests/{JOB_PATCH_FILE}"));
    let overlay_env: Vec<String> = overlay["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "adapter")
        .flat_map(|c| c["env"].as_array().cloned().unwrap_or_default())
        .filter(|e| e.get("$patch").is_none())
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect();

    let subcommand = adapter.args.as_ref().and_then(|a| a.first()).unwrap();
    let accepted = by_subcommand.get(subcommand).unwrap_or_else(|| {
        panic!(
            "the Job runs `hypershift-adapter {subcommand}`, but --help lists only {:?}",
            by_subcommand.keys().collect::<Vec<_>>()
        )
    });
    let unknown: Vec<String> = env_names(adapter)
        .into_iter()
        .chain(overlay_env)
        .filter(|n| !accepted.contains(n))
        .collect();
    assert!(
        unknown.is_empty(),
        "`hypershift-adapter {subcommand}` does not read {unknown:?}; it accepts {accepted:?}"
    );
}

#[test]
fn containers_are_locked_down_and_sized() {
    for (file, job) in pulse_jobs() {
        let pod = pod_spec(&job);
        let pod_sc = pod.security_context.as_ref().expect("pod securityContext");
        assert_eq!(pod_sc.run_as_non_root, Some(true), "{file}");
        assert!(pod.host_network.is_none() && pod.host_pid.is_none() && pod.host_ipc.is_none());
        for c in &pod.containers {
            let sc = c
                .security_context
                .as_ref()
                .unwrap_or_else(|| panic!("{}: no securityContext", c.name));
            assert_eq!(sc.run_as_non_root, Some(true), "{}", c.name);
            assert_eq!(sc.run_as_user, Some(65532), "{}", c.name);
            assert_eq!(sc.read_only_root_filesystem, Some(true), "{}", c.name);
            assert_eq!(sc.allow_privilege_escalation, Some(false), "{}", c.name);
            assert_ne!(sc.privileged, Some(true), "{}", c.name);
            let caps = sc.capabilities.as_ref().expect("capabilities");
            assert_eq!(
                caps.drop.as_deref(),
                Some(&["ALL".to_owned()][..]),
                "{}",
                c.name
            );
            assert!(caps.add.is_none(), "{}", c.name);
            assert_eq!(
                sc.seccomp_profile.as_ref().map(|p| p.type_.as_str()),
                Some("RuntimeDefault"),
                "{}",
                c.name
            );

            let resources = c.resources.as_ref().expect("resources");
            let requests = resources.requests.clone().unwrap_or_default();
            let limits = resources.limits.clone().unwrap_or_default();
            assert!(requests.contains_key("cpu"), "{}: cpu request", c.name);
            let request = quantity_bytes(&requests.get("memory").expect("memory request").0);
            let limit = quantity_bytes(&limits.get("memory").expect("memory limit").0);
            assert!(limit >= request, "{}: memory limit below request", c.name);
        }
        // Measured peaks (status-reporter ~9 MiB RSS; adapter target ≤ 16 MiB) must fit the requests.
        let request_of = |name: &str| {
            quantity_bytes(
                &container(pod, name)
                    .resources
                    .as_ref()
                    .unwrap()
                    .requests
                    .as_ref()
                    .unwrap()["memory"]
                    .0,
            )
        };
        assert!(request_of("status-reporter") >= 9 << 20);
        assert!(request_of("adapter") >= 16 << 20);
        assert!(
            pod.volumes.iter().flatten().all(|v| v.host_path.is_none()),
            "no hostPath volumes"
        );
    }
}

#[test]
fn deadlines_ttl_and_volume_size_fit_together() {
    for (file, job) in pulse_jobs() {
        let spec = job.spec.as_ref().unwrap();
        let deadline = spec
            .active_deadline_seconds
            .unwrap_or_else(|| panic!("{file}: activeDeadlineSeconds"));
        let adapter = container(pod_spec(&job), "adapter");
        let budget: i64 = env_value(adapter, "RETRY_BUDGET_SECONDS")
            .expect("RETRY_BUDGET_SECONDS")
            .parse()
            .unwrap();
        // The adapter's budget, plus the attempt in flight when it runs out, ends before the reporter
        // stops waiting; otherwise a Maestro outage reads as AdapterTimeout instead of MaestroUnavailable.
        let request_timeout =
            i64::try_from(hypershift_adapter::work::maestro::config::DEFAULT_TIMEOUT.as_secs())
                .unwrap();
        assert!(
            budget + request_timeout < deadline - REPORTER_DEADLINE_MARGIN_SECONDS,
            "RETRY_BUDGET_SECONDS {budget} + request timeout {request_timeout} must end before \
         activeDeadlineSeconds {deadline} - reporter margin {REPORTER_DEADLINE_MARGIN_SECONDS}"
        );
        let reporter = container(pod_spec(&job), "status-reporter");
        if let Some(max_wait) = env_value(reporter, "MAX_WAIT_TIME_SECONDS") {
            let max_wait: i64 = max_wait.parse().unwrap();
            assert!(max_wait < deadline && budget < max_wait);
        }

        // The framework reads the finished Job on the NEXT pulse: it must outlive at least two.
        let ttl = spec
            .ttl_seconds_after_finished
            .expect("ttlSecondsAfterFinished");
        assert!(
            ttl >= i32::try_from(2 * PULSE_INTERVAL_SECONDS).unwrap(),
            "ttlSecondsAfterFinished {ttl} is shorter than two pulses"
        );
        assert!(
            i64::from(ttl) <= deadline,
            "a TTL longer than a whole run delays fresh status for no gain"
        );

        let results = pod_spec(&job)
            .volumes
            .iter()
            .flatten()
            .find_map(|v| v.empty_dir.as_ref())
            .expect("emptyDir");
        let size = quantity_bytes(&results.size_limit.as_ref().expect("emptyDir sizeLimit").0);
        // A 1 MiB report plus the writer's temp file during the atomic rename.
        assert!(
            size >= 2 << 20,
            "sizeLimit {size} cannot hold a report and its temp file"
        );
    }
}

#[test]
fn no_secret_material_is_inline() {
    for file in manifest_files() {
        let rel = format!("manifests/{file}");
        let text = read(&rel);
        for needle in ["-----BEGIN", "eyJhbGci", "stringData"] {
            assert!(!text.contains(needle), "{rel} contains {needle:?}");
        }
        for doc in documents(&rel) {
            assert_ne!(doc["kind"], "Secret", "{rel} defines a Secret");
        }
    }
    for (file, job) in pulse_jobs() {
        let pod = pod_spec(&job);
        for c in &pod.containers {
            for e in c.env.iter().flatten() {
                let sensitive = ["TOKEN", "PASSWORD", "SECRET", "KEY", "CA"]
                    .iter()
                    .any(|w| e.name.split('_').any(|part| part == *w));
                if !sensitive {
                    continue;
                }
                assert!(
                    e.name.ends_with("_FILE"),
                    "{file} {}: {} must be a file path, not the secret itself",
                    c.name,
                    e.name
                );
                assert!(
                    e.value_from
                        .as_ref()
                        .is_none_or(|v| v.secret_key_ref.is_none()),
                    "{}: {} comes from a Secret as an env value",
                    c.name,
                    e.name
                );
                // The file lives on a read-only mount of a Secret volume.
                let path = e.value.as_deref().expect("a path");
                let mount = c
                    .volume_mounts
                    .iter()
                    .flatten()
                    .find(|m| Path::new(path).starts_with(&m.mount_path))
                    .unwrap_or_else(|| panic!("{}: {path} is on no mount", e.name));
                assert_eq!(mount.read_only, Some(true), "{}", e.name);
                let volume = pod
                    .volumes
                    .iter()
                    .flatten()
                    .find(|v| v.name == mount.name)
                    .unwrap();
                let token = volume.projected.as_ref().and_then(|p| p.sources.as_ref());
                let token =
                    token.is_some_and(|s| s.iter().all(|s| s.service_account_token.is_some()));
                assert!(
                    volume.secret.is_some() || token,
                    "{}: {path} is neither from a Secret nor a projected ServiceAccount token",
                    e.name
                );
            }
        }
    }
}

#[test]
fn rbac_is_exactly_what_the_containers_use() {
    let docs = documents("manifests/rbac.yaml");
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["ServiceAccount", "Role", "RoleBinding"]);
    let sa: ServiceAccount = typed("rbac.yaml ServiceAccount", &docs[0]);
    let role: Role = typed("rbac.yaml Role", &docs[1]);
    let binding: RoleBinding = typed("rbac.yaml RoleBinding", &docs[2]);

    assert_eq!(
        rules_of(role.rules.as_deref().unwrap_or_default()),
        BTreeSet::from([
            rule("batch", "jobs/status", &["get", "patch"]),
            rule("", "pods", &["get", "list", "watch"]),
            // The status-reporter's one Event per run: create only (a deterministic name; a
            // re-run's create is a 409, nothing is patched), and not the core group's events.
            rule("events.k8s.io", "events", &["create"]),
            // The controlplane adapter's placement lease (tests/tests/placement.rs holds the
            // requests it makes to these verbs).
            rule(
                "coordination.k8s.io",
                "leases",
                &["get", "create", "update"]
            ),
        ])
    );
    let job = job();
    let namespace = job.metadata.namespace.clone().unwrap();
    assert_eq!(role.metadata.namespace.as_ref(), Some(&namespace));
    assert_eq!(binding.metadata.namespace.as_ref(), Some(&namespace));
    assert_eq!(sa.metadata.namespace.as_ref(), Some(&namespace));
    // Both pulse Jobs run as this ServiceAccount in this namespace: the NodePool's containers do
    // what the control plane's do (one status PATCH, a watch of their own Pod) and nothing more.
    for (file, job) in pulse_jobs() {
        assert_eq!(job.metadata.namespace.as_ref(), Some(&namespace), "{file}");
        assert_eq!(
            pod_spec(&job).service_account_name,
            sa.metadata.name.clone(),
            "{file}"
        );
    }
    assert_eq!(binding.role_ref.kind, "Role");
    assert_eq!(Some(&binding.role_ref.name), role.metadata.name.as_ref());
    let subjects = binding.subjects.unwrap_or_default();
    assert_eq!(subjects.len(), 1);
    assert_eq!(subjects[0].kind, "ServiceAccount");
    assert_eq!(Some(&subjects[0].name), sa.metadata.name.as_ref());
    assert_eq!(subjects[0].namespace.as_ref(), Some(&namespace));

    // `hypershift-adapter nodes`: nodes and certificatesigningrequests [get, list] cluster-wide
    // (read only: nothing that could approve), leases [get, list] in kube-node-lease.
    let nodes = documents("manifests/rbac-nodes.yaml");
    let cluster_roles: Vec<ClusterRole> = nodes
        .iter()
        .filter(|d| d["kind"] == "ClusterRole")
        .map(|d| typed("rbac-nodes.yaml ClusterRole", d))
        .collect();
    assert_eq!(cluster_roles.len(), 1);
    assert_eq!(
        rules_of(cluster_roles[0].rules.as_deref().unwrap_or_default()),
        BTreeSet::from([
            rule("", "nodes", &["get", "list"]),
            rule(
                "certificates.k8s.io",
                "certificatesigningrequests",
                &["get", "list"]
            ),
        ])
    );
    let roles: Vec<Role> = nodes
        .iter()
        .filter(|d| d["kind"] == "Role")
        .map(|d| typed("rbac-nodes.yaml Role", d))
        .collect();
    assert_eq!(roles.len(), 1);
    assert_eq!(
        roles[0].metadata.namespace.as_deref(),
        Some("kube-node-lease")
    );
    assert_eq!(
        rules_of(roles[0].rules.as_deref().unwrap_or_default()),
        BTreeSet::from([rule("coordination.k8s.io", "leases", &["get", "list"])])
    );

    // kind / hub backend: ManifestWorks [get, create, patch (update), delete] in the consumer namespace only.
    let hub = documents("manifests/kind/hub-rbac.yaml");
    let hub_role: Role = typed(
        "hub-rbac.yaml Role",
        hub.iter().find(|d| d["kind"] == "Role").unwrap(),
    );
    assert_eq!(
        rules_of(hub_role.rules.as_deref().unwrap_or_default()),
        BTreeSet::from([rule(
            "work.open-cluster-management.io",
            "manifestworks",
            &["get", "create", "patch", "delete"]
        )])
    );
    let consumer = hub_role.metadata.namespace.clone().unwrap();
    let namespaces: Vec<String> = documents("manifests/kind/namespaces.yaml")
        .iter()
        .map(|d| d["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(namespaces.contains(&consumer) && namespaces.contains(&namespace));
    assert!(
        read("scripts/kind-demo.sh").contains(&format!("CONSUMER={consumer}\n")),
        "the demo's consumer must be the namespace the hub Role grants"
    );
}

/// The condition types the HyperFleet API requires in every status report (framework doc §7.4 rule 12).
const MANDATORY_TYPES: [&str; 3] = ["Applied", "Available", "Health"];
/// The other required adapters' conditions the preconditions wait for (framework doc §7.1).
const AWAITED_CONDITIONS: [&str; 3] = [
    "ValidationSuccessful",
    "DnsSuccessful",
    "PullsecretSuccessful",
];
/// The condition types of every status body: the mandatory three and `Finalized` (framework doc §6.5; False with
/// reason "" while the cluster is not being deleted, as in the framework's examples).
const REPORTED_TYPES: [&str; 4] = ["Applied", "Available", "Health", "Finalized"];
/// Keys of the controlplane report's `data` (sorted), read back from the Job's `data.hyperfleet.io/<k>`
/// annotations.
const DATA_KEYS: [&str; 4] = [
    "control_plane_endpoint",
    "desired_version",
    "management_cluster",
    "version",
];
const TASK_CONFIG: &str = "manifests/hyperfleet/adapter-task-config.yaml";
const NODEPOOL_TASK_CONFIG: &str = "manifests/hyperfleet/nodepool/adapter-task-config.yaml";
const NODEPOOL_ADAPTER_CONFIG: &str = "manifests/hyperfleet/nodepool/adapter-config.yaml";

/// How a `data` key of a report reaches the status body.
#[derive(Debug, Clone, Copy, PartialEq)]
enum DataKind {
    /// The annotation's text, `""` without one.
    Text,
    /// A JSON number: `int()` of the annotation, `optional.none()` (JSON null) without one or for
    /// the text `null`. Never a CEL `null`: the framework would marshal it as 0.
    Number,
}

/// What a task config must do, per the interface of the adapter subcommand its Job runs.
struct Contract {
    /// Params that must be required and come from these sources: (name, source).
    ids: &'static [(&'static str, &'static str)],
    /// The required param holding the object: GET of this URL.
    object_url: &'static str,
    /// Conditions of the object the preconditions wait for (True at its generation).
    awaited: &'static [&'static str],
    /// The report's `data` keys (sorted) and how each is typed in the body.
    data: &'static [(&'static str, DataKind)],
    /// The URL every status PUT goes to.
    status_url: &'static str,
}

/// `manifests/hyperfleet/adapter-task-config.yaml` and `hypershift-adapter controlplane`.
const CONTROLPLANE: Contract = Contract {
    ids: &[("clusterId", "event.id")],
    object_url: "/clusters/{{ .clusterId }}",
    awaited: &AWAITED_CONDITIONS,
    data: &[
        ("control_plane_endpoint", DataKind::Text),
        ("desired_version", DataKind::Text),
        ("management_cluster", DataKind::Text),
        ("version", DataKind::Text),
    ],
    status_url: "/clusters/{{ .clusterId }}/statuses",
};

/// `manifests/hyperfleet/nodepool/adapter-task-config.yaml` and `hypershift-adapter nodepool`
/// (`/work/nodepool-interface.md`): the NodePool's id from the event, its cluster's from the
/// event's owner reference, the nested GET and PUT, validation awaited (a NodePool's required
/// adapters are `[validation, hypershift]`), every key of the nodepool report.
const NODEPOOL: Contract = Contract {
    ids: &[
        ("nodepoolId", "event.id"),
        ("clusterId", "event.owner_references.id"),
    ],
    object_url: "/clusters/{{ .clusterId }}/nodepools/{{ .nodepoolId }}",
    awaited: &["ValidationSuccessful"],
    data: &[
        ("autoscaling_max", DataKind::Number),
        ("autoscaling_min", DataKind::Number),
        ("current_replicas", DataKind::Number),
        ("desired_replicas", DataKind::Number),
        ("management_cluster", DataKind::Text),
        ("node_versions", DataKind::Text),
        ("ready_nodes", DataKind::Number),
        ("unready_nodes", DataKind::Number),
        ("version", DataKind::Text),
    ],
    status_url: "/clusters/{{ .clusterId }}/nodepools/{{ .nodepoolId }}/statuses",
};
const ADAPTER_CONFIG: &str = "manifests/hyperfleet/adapter-config.yaml";

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Every mapping key outside the embedded manifest that is not snake_case (the framework decodes strictly and
/// knows only snake_case keys since v0.2.0: `byName`, `postActions`, `apiCall` fail the load).
fn non_snake_keys(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let here = format!("{path}.{k}");
                if k == "manifest" {
                    continue;
                }
                let snake = k.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                    && k.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                if !snake {
                    out.push(format!("{here}: key is not snake_case"));
                }
                non_snake_keys(child, &here, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                non_snake_keys(child, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// What is wrong with a task config, judged by the rules the lead's contract and the framework doc set
/// (the deep schema/CEL/API conformance lives in its own test file). Empty = fine.
fn task_config_problems(
    contract: &Contract,
    config: &Value,
    job: &Value,
    adapter_name: &str,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut problem = |s: String| problems.push(s);
    let top: BTreeSet<&str> = config
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    if !top.is_subset(&BTreeSet::from([
        "params",
        "preconditions",
        "resources",
        "post",
    ])) {
        problem(format!("top-level keys {top:?}"));
    }
    let mut keys = Vec::new();
    non_snake_keys(config, "", &mut keys);
    keys.into_iter().for_each(&mut problem);

    // params
    let params = config["params"].as_array().cloned().unwrap_or_default();
    let param = |name: &str| params.iter().find(|p| p["name"] == name).cloned();
    for (name, source) in contract.ids {
        match param(name) {
            Some(p) if p["source"] == *source && p["required"] == true => {}
            other => problem(format!("{name} must be required, from {source}: {other:?}")),
        }
    }
    let cluster_param = params
        .iter()
        .find(|p| p["source"]["api_call"].is_object())
        .cloned()
        .unwrap_or_default();
    if cluster_param["source"]["api_call"]["method"] != "GET"
        || cluster_param["source"]["api_call"]["url"] != contract.object_url
        || cluster_param["required"] != true
    {
        problem(format!(
            "the object must come from a required GET {} param: {cluster_param}",
            contract.object_url
        ));
    }
    let cluster_name = cluster_param["name"].as_str().unwrap_or("cluster");
    match param("generation") {
        Some(p)
            if p["source"] == format!("{cluster_name}.generation").as_str()
                && p["type"] == "int"
                && p["required"] == true => {}
        other => problem(format!(
            "generation must be required, type int, from {cluster_name}.generation: {other:?}"
        )),
    }
    for p in &params {
        let from_env = p["source"].as_str().is_some_and(|s| s.starts_with("env."));
        if from_env && p["required"] != true && p.get("default").is_none_or(Value::is_null) {
            problem(format!(
                "param {} from {}: neither required nor a default, so an unset variable fails at render time",
                p["name"], p["source"]
            ));
        }
    }

    // preconditions: each awaited condition True at the cluster's current generation
    let expressions: Vec<&str> = config["preconditions"]
        .as_array()
        .map(|a| a.iter().filter_map(|p| p["expression"].as_str()).collect())
        .unwrap_or_default();
    // deletion: the deleting flag from the fresh GET's deleted_time, and no precondition holds a deleting cluster
    // (the other adapters are finalizing too; framework doc §6)
    let deleting = params
        .iter()
        .find(|p| {
            p["source"]["expression"] == format!("{cluster_name}.?deleted_time.hasValue()").as_str()
        })
        .and_then(|p| p["name"].as_str())
        .unwrap_or("<no deleting param>")
        .to_owned();
    for e in &expressions {
        if !e.trim_start().starts_with(&format!("{deleting} || ")) {
            problem(format!(
                "precondition {e:?} does not let a deleting cluster ({deleting}) through"
            ));
        }
    }
    for awaited in contract.awaited {
        let checked = expressions.iter().any(|e| {
            e.contains(&format!("c.type == \"{awaited}\""))
                && e.contains("c.status == \"True\"")
                && e.contains("observed_generation")
                && e.contains("== generation")
        });
        if !checked {
            problem(format!(
                "no precondition waits for {awaited} True at the current generation"
            ));
        }
    }

    // resources: the Job of manifests/job.yaml, found by its name
    let resources = config["resources"].as_array().cloned().unwrap_or_default();
    if resources.len() != 1 {
        problem(format!("expected one resource, found {}", resources.len()));
    }
    let resource = resources.first().cloned().unwrap_or_default();
    if resource["manifest"] != *job {
        problem("the task config's Job drifted from its manifests/*job.yaml".to_owned());
    }
    if resource.get("lifecycle").is_some() || resource.get("recreate_on_change").is_some() {
        problem(
            "lifecycle/recreate_on_change would make the framework delete Jobs (RBAC grants get, create)"
                .to_owned(),
        );
    }
    if resource["transport"]["client"] != "kubernetes" {
        problem("transport.client must be kubernetes".to_owned());
    }
    if resource["discovery"]["by_name"] != job["metadata"]["name"]
        || resource["discovery"]["namespace"] != job["metadata"]["namespace"]
    {
        problem(format!(
            "discovery {} does not find the Job it creates",
            resource["discovery"]
        ));
    }

    // post: payloads with the three conditions as a list, sent by a PUT with the same `when`
    let payloads = config["post"]["payloads"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if payloads.is_empty() {
        problem("no post.payloads".to_owned());
    }
    for payload in &payloads {
        let name = payload["name"].as_str().unwrap_or_default();
        let build = &payload["build"];
        if payload["when"]["expression"].as_str().is_none() {
            problem(format!(
                "payload {name} has no `when`: it would report when the preconditions are not met"
            ));
        }
        if build["adapter"] != adapter_name {
            problem(format!("payload {name}: adapter must be {adapter_name:?}"));
        }
        match build["conditions"].as_array() {
            None => problem(format!("payload {name}: conditions must be a YAML list")),
            Some(list) => {
                let types: Vec<&str> = list.iter().map(|c| str_at(c, "/type")).collect();
                if types != REPORTED_TYPES {
                    problem(format!(
                        "payload {name}: condition types {types:?}, expected {REPORTED_TYPES:?}"
                    ));
                }
                for c in list {
                    for field in ["status", "reason", "message"] {
                        if c.get(field).is_none() {
                            problem(format!("payload {name}: {} has no {field}", c["type"]));
                        }
                    }
                }
            }
        }
        if build["observed_generation"]["expression"]
            .as_str()
            .is_none()
        {
            problem(format!(
                "payload {name}: observed_generation must be an expression (a JSON number)"
            ));
        }
        if build["observed_time"]["expression"] != "now()" {
            problem(format!("payload {name}: observed_time must be now()"));
        }
        let data = &build["data"];
        if !data.is_null() {
            let keys: Vec<&str> = data
                .as_object()
                .map(|m| m.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let want: Vec<&str> = contract.data.iter().map(|(k, _)| *k).collect();
            if keys.contains(&"expression") || keys.contains(&"field") || keys != want {
                problem(format!(
                    "payload {name}: data must be an object with keys {want:?}, got {data}"
                ));
            }
            for (key, kind) in contract.data {
                let expression = str_at(data, &format!("/{key}/expression"));
                let annotation = format!("\"data.hyperfleet.io/{key}\"");
                if !expression.contains(&annotation) {
                    problem(format!(
                        "payload {name}: data.{key} must read the Job annotation data.hyperfleet.io/{key}"
                    ));
                }
                let typed = match kind {
                    DataKind::Text => expression.contains(".orValue(\"\")"),
                    DataKind::Number => expression.contains(&format!(
                        "optional.of(int(resources.pulseJob.metadata.annotations[{annotation}]))"
                    )) && expression.contains("optional.none()")
                        && expression.contains(".orValue(\"null\") != \"null\""),
                };
                if !typed {
                    problem(format!(
                        "payload {name}: data.{key} must be {kind:?}: {expression:?}"
                    ));
                }
            }
        }
    }
    let actions = config["post"]["post_actions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut sent = BTreeSet::new();
    for action in &actions {
        let call = &action["api_call"];
        let body = call["body"].as_str().unwrap_or_default();
        let payload = payloads.iter().find(|p| {
            p["name"]
                .as_str()
                .is_some_and(|n| body == format!("{{{{ .{n} }}}}"))
        });
        let Some(payload) = payload else {
            problem(format!(
                "post action {}: body {body:?} names no payload",
                action["name"]
            ));
            continue;
        };
        sent.insert(payload["name"].as_str().unwrap_or_default().to_owned());
        if call["method"] != "PUT" || call["url"] != contract.status_url {
            problem(format!(
                "post action {}: must be PUT {}",
                action["name"], contract.status_url
            ));
        }
        if action["when"] != payload["when"] {
            problem(format!(
                "post action {}: its `when` differs from its payload's",
                action["name"]
            ));
        }
    }
    if sent.len() != payloads.len() {
        problem(format!(
            "payloads sent by no post action: only {sent:?} are"
        ));
    }
    problems
}

fn adapter_name() -> String {
    document(ADAPTER_CONFIG)["adapter"]["name"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn task_config_embeds_job_yaml_and_reports_as_the_contract_says() {
    let problems = task_config_problems(
        &CONTROLPLANE,
        &document(TASK_CONFIG),
        &job_doc(),
        &adapter_name(),
    );
    assert!(
        problems.is_empty(),
        "{TASK_CONFIG}:\n  {}",
        problems.join("\n  ")
    );
}

/// A defect to inject into a parsed config.
type Injection = Box<dyn Fn(&mut Value)>;

/// Each defect the checker above is there for, injected into the real task config, is reported.
#[test]
fn task_config_checker_catches_each_injected_defect() {
    let good = document(TASK_CONFIG);
    let job = job_doc();
    let name = adapter_name();
    let cases: Vec<(&str, Injection, &str)> = vec![
        (
            "Job drift",
            Box::new(|c| c["resources"][0]["manifest"]["spec"]["backoffLimit"] = 1.into()),
            "drifted",
        ),
        (
            "camelCase key",
            Box::new(|c| {
                let d = c["resources"][0]["discovery"].as_object_mut().unwrap();
                let v = d.remove("by_name").unwrap();
                d.insert("byName".into(), v);
            }),
            "byName: key is not snake_case",
        ),
        (
            "discovery name",
            Box::new(|c| c["resources"][0]["discovery"]["by_name"] = "other".into()),
            "does not find the Job",
        ),
        (
            "conditions as a map",
            Box::new(|c| {
                c["post"]["payloads"][0]["build"]["conditions"] =
                    serde_json::json!({"Applied": {"status": "True"}});
            }),
            "conditions must be a YAML list",
        ),
        (
            "missing Health",
            Box::new(|c| {
                c["post"]["payloads"][0]["build"]["conditions"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
            "condition types",
        ),
        (
            "data left as text",
            Box::new(|c| {
                c["post"]["payloads"][0]["build"]["data"] = serde_json::json!({
                    "expression": "resources.pulseJob.metadata.annotations[\"hyperfleet.io/report-data\"]"
                });
            }),
            "data must be an object",
        ),
        (
            "observed_generation as a template string",
            Box::new(|c| {
                c["post"]["payloads"][0]["build"]["observed_generation"] =
                    "{{ .generation }}".into();
            }),
            "observed_generation must be an expression",
        ),
        (
            "env param without required or default",
            Box::new(|c| {
                let p = c["params"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|p| p["name"] == "imageTag")
                    .unwrap();
                p.as_object_mut().unwrap().remove("required");
            }),
            "neither required nor a default",
        ),
        (
            "generation without type int",
            Box::new(|c| {
                let p = c["params"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|p| p["name"] == "generation")
                    .unwrap();
                p.as_object_mut().unwrap().remove("type");
            }),
            "generation must be required, type int",
        ),
        (
            "precondition without generation",
            Box::new(|c| {
                c["preconditions"][1]["expression"] =
                    "cluster.status.conditions.exists(c, c.type == \"DnsSuccessful\" && c.status == \"True\")"
                        .into();
            }),
            "DnsSuccessful",
        ),
        (
            "precondition holding a deleting cluster",
            Box::new(|c| {
                let e = c["preconditions"][2]["expression"]
                    .as_str()
                    .unwrap()
                    .replacen("isDeleting || ", "", 1);
                c["preconditions"][2]["expression"] = e.into();
            }),
            "does not let a deleting cluster (isDeleting) through",
        ),
        (
            "no deleting param",
            Box::new(|c| {
                c["params"]
                    .as_array_mut()
                    .unwrap()
                    .retain(|p| p["name"] != "isDeleting");
            }),
            "(<no deleting param>) through",
        ),
        (
            "errorPayload without Finalized",
            Box::new(|c| {
                c["post"]["payloads"][1]["build"]["conditions"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
            "payload errorPayload: condition types",
        ),
        (
            "payload without when",
            Box::new(|c| {
                c["post"]["payloads"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("when");
            }),
            "has no `when`",
        ),
        (
            "post action without when",
            Box::new(|c| {
                c["post"]["post_actions"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("when");
            }),
            "differs from its payload's",
        ),
        (
            "POST instead of PUT",
            Box::new(|c| c["post"]["post_actions"][0]["api_call"]["method"] = "POST".into()),
            "must be PUT",
        ),
        (
            "wrong adapter name",
            Box::new(|c| {
                c["post"]["payloads"][1]["build"]["adapter"] = "hypershift-controlplane".into()
            }),
            "adapter must be",
        ),
    ];
    for (what, inject, expected) in cases {
        let mut bad = good.clone();
        inject(&mut bad);
        let problems = task_config_problems(&CONTROLPLANE, &bad, &job, &name);
        assert!(
            problems.iter().any(|p| p.contains(expected)),
            "{what}: expected a problem containing {expected:?}, got {problems:?}"
        );
    }
}

#[test]
fn kind_overlay_swaps_only_the_backend_and_its_inputs() {
    let overlay = document(&format!("manifests/{JOB_PATCH_FILE}"));
    let job = job_doc();
    let pod = &overlay["spec"]["template"]["spec"];
    let base_pod = &job["spec"]["template"]["spec"];
    let deleted = |list: &Value, key: &str| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .filter(|e| e["$patch"] == "delete")
            .map(|e| e[key].as_str().unwrap().to_owned())
            .collect()
    };
    let names = |list: &Value, key: &str| -> Vec<String> {
        list.as_array()
            .map(|a| {
                a.iter()
                    .map(|e| e[key].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    // Every deletion names something job.yaml has, so the patch cannot silently stop applying.
    let adapter = &pod["containers"][0];
    assert_eq!(adapter["name"], "adapter");
    let base_adapter = &base_pod["containers"][0];
    for name in deleted(&adapter["env"], "name") {
        assert!(
            names(&base_adapter["env"], "name").contains(&name),
            "{name}"
        );
    }
    for path in deleted(&adapter["volumeMounts"], "mountPath") {
        assert!(
            names(&base_adapter["volumeMounts"], "mountPath").contains(&path),
            "{path}"
        );
    }
    for volume in deleted(&pod["volumes"], "name") {
        let base = base_pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == volume.as_str())
            .unwrap_or_else(|| panic!("job.yaml has no volume {volume}"));
        let token = base["projected"]["sources"][0].get("serviceAccountToken");
        assert!(
            base.get("secret").is_some() || token.is_some(),
            "only credential volumes (Secrets, the projected token) are dropped"
        );
    }
    let env = |name: &str| {
        adapter["env"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .and_then(|e| e["value"].as_str())
            .map(str::to_owned)
    };
    assert_eq!(env("WORK_BACKEND").as_deref(), Some("hub"));
    let spec_file = env("CLUSTER_SPEC_FILE").expect("CLUSTER_SPEC_FILE");
    assert!(
        names(&adapter["volumeMounts"], "mountPath")
            .iter()
            .any(|m| Path::new(&spec_file).starts_with(m))
    );

    // The demo's cluster spec is one the adapter accepts.
    let input = hypershift_adapter::hyperfleet::cluster::ClusterInput::from_json(&read(
        "manifests/kind/cluster-spec.json",
    ))
    .unwrap();
    let id = input.id.clone().expect("cluster-spec.json has an id");
    hypershift_adapter::hyperfleet::cluster::ClusterSpec::validate(
        &id,
        input.name.as_deref(),
        &input.spec,
    )
    .unwrap_or_else(|v| panic!("manifests/kind/cluster-spec.json is invalid: {v:?}"));
    let script = read("scripts/kind-demo.sh");
    assert!(script.contains(&format!("CLUSTER_ID={id}\n")));
    // The rendered Job name becomes a label value: at most 63 characters.
    let rendered = job["metadata"]["name"]
        .as_str()
        .unwrap()
        .replace("{{ .clusterId }}", &id)
        .replace("{{ .generation }}", "99");
    assert!(rendered.len() <= 63, "{rendered} is longer than 63");
}

#[test]
fn kind_demo_script_parses_and_names_only_existing_files() {
    let script = root().join("scripts/kind-demo.sh");
    let out = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = read("scripts/kind-demo.sh");
    assert!(text.contains("set -euo pipefail"));
    let paths: BTreeSet<&str> = text
        .match_indices("manifests/")
        .map(|(i, _)| {
            let rest = &text[i..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || "._-/".contains(c)))
                .unwrap_or(rest.len());
            rest[..end].trim_end_matches('.')
        })
        .collect();
    assert!(paths.len() >= 6, "found too few manifest paths: {paths:?}");
    for path in paths {
        assert!(
            root().join(path).exists(),
            "the script names {path}, which does not exist"
        );
    }
    for target in ["adapter", "status-reporter"] {
        assert!(read("Dockerfile").contains(&format!(" AS {target}\n")));
    }
}

/// The longest cluster id (a UUIDv7, 36 characters) and generation (int32, 10 digits) the API produces.
const LONGEST_ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
const LONGEST_GENERATION: &str = "2147483647";
const FRAMEWORK_RBAC: &str = "manifests/hyperfleet/rbac.yaml";
const DRYRUN: &str = "manifests/hyperfleet/dryrun";

/// A lowercase UUIDv7: 8-4-4-4-12 hex digits, version nibble 7, variant 8–b.
fn is_uuid_v7(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(c),
        })
        && b[14] == b'7'
        && matches!(b[19], b'8' | b'9' | b'a' | b'b')
}

/// `text` with each `{{ .name }}` replaced by `values[name]`; panics on a placeholder without a value.
fn render(text: &str, values: &BTreeMap<String, String>) -> String {
    let mut out = text.to_owned();
    for (name, value) in values {
        out = out.replace(&format!("{{{{ .{name} }}}}"), value);
    }
    assert!(!out.contains("{{"), "a placeholder has no value: {out}");
    out
}

/// The values of job.yaml's placeholders: the task config's env params from `env` (else their default), the
/// given cluster id and generation.
fn job_values(
    env: &BTreeMap<String, String>,
    id: &str,
    generation: &str,
) -> BTreeMap<String, String> {
    job_values_of(TASK_CONFIG, env, &[("clusterId", id)], generation)
}

/// The values of a pulse Job's placeholders: `task_config`'s env params from `env` (else their default),
/// the given ids (param name, value) and generation.
fn job_values_of(
    task_config: &str,
    env: &BTreeMap<String, String>,
    ids: &[(&str, &str)],
    generation: &str,
) -> BTreeMap<String, String> {
    let config = document(task_config);
    let mut values: BTreeMap<String, String> = ids
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    values.insert("generation".to_owned(), generation.to_owned());
    for p in config["params"].as_array().unwrap() {
        let Some(var) = p["source"].as_str().and_then(|s| s.strip_prefix("env.")) else {
            continue;
        };
        let name = p["name"].as_str().unwrap().to_owned();
        let value = env
            .get(var)
            .cloned()
            .or_else(|| p["default"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("{var} is required and not set"));
        values.insert(name, value);
    }
    values
}

/// A label value (≤ 63 bytes, `(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?`): why `v` is not one.
fn label_value_problem(v: &str) -> Option<String> {
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let well_formed = v.is_empty()
        || (alnum(v.chars().next())
            && alnum(v.chars().last())
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)));
    if v.len() > 63 {
        Some(format!("{v:?} is {} bytes, more than 63", v.len()))
    } else if !well_formed {
        Some(format!("{v:?} is not a label value"))
    } else {
        None
    }
}

/// What the API server would refuse in a rendered Job's name and labels, including the labels it adds itself
/// (`batch.kubernetes.io/job-name` and `job-name` = the name; framework doc §8).
fn job_name_and_label_problems(job: &Value) -> Vec<String> {
    let name = str_at(job, "/metadata/name");
    let mut problems = Vec::new();
    let dns_label = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !dns_label {
        problems.push(format!(
            "name {name:?} ({} bytes) is not a DNS-1123 label",
            name.len()
        ));
    }
    let mut values = vec![name.to_owned(), name.to_owned()];
    for pointer in ["/metadata/labels", "/spec/template/metadata/labels"] {
        if let Some(labels) = job.pointer(pointer).and_then(Value::as_object) {
            values.extend(
                labels
                    .values()
                    .map(|v| v.as_str().unwrap_or_default().to_owned()),
            );
        }
    }
    problems.extend(values.iter().filter_map(|v| label_value_problem(v)));
    problems
}

fn rendered_job(id: &str, generation: &str) -> Value {
    let values = job_values(&dryrun_env(), id, generation);
    serde_saphyr::from_str(&render(&read("manifests/job.yaml"), &values)).unwrap()
}

#[test]
fn job_names_and_label_values_fit_with_the_longest_id_and_generation() {
    assert!(is_uuid_v7(LONGEST_ID));
    let values = job_values(&dryrun_env(), LONGEST_ID, LONGEST_GENERATION);
    let job: Value = serde_saphyr::from_str(&render(&read("manifests/job.yaml"), &values)).unwrap();
    let problems = job_name_and_label_problems(&job);
    assert!(problems.is_empty(), "{problems:?}");
    let name = str_at(&job, "/metadata/name");
    assert_eq!(name, format!("hs-cp-{LONGEST_ID}-g{LONGEST_GENERATION}"));
    assert_eq!(name.len(), 54);
    // The framework finds the Job it created by the same name.
    let config = document(TASK_CONFIG);
    let by_name = render(str_at(&config, "/resources/0/discovery/by_name"), &values);
    assert_eq!(by_name, name);
    // Still a valid Job once rendered.
    drop(typed::<Job>("rendered job.yaml", &job));
}

#[test]
fn job_name_and_label_checks_catch_what_the_api_server_refuses() {
    let good = rendered_job(LONGEST_ID, LONGEST_GENERATION);
    let cases: Vec<(&str, Injection, &str)> = vec![
        (
            "the old name pattern",
            Box::new(|j| {
                j["metadata"]["name"] =
                    format!("hypershift-controlplane-{LONGEST_ID}-gen{LONGEST_GENERATION}").into();
            }),
            "is not a DNS-1123 label",
        ),
        (
            "a 64-byte name",
            Box::new(|j| j["metadata"]["name"] = "a".repeat(64).into()),
            "more than 63",
        ),
        (
            "an upper-case name",
            Box::new(|j| j["metadata"]["name"] = "HS-cp-1".into()),
            "is not a DNS-1123 label",
        ),
        (
            "a 64-byte template label value",
            Box::new(|j| {
                j["spec"]["template"]["metadata"]["labels"]["hyperfleet.io/cluster-id"] =
                    format!("{LONGEST_ID}-{LONGEST_ID}").into();
            }),
            "more than 63",
        ),
        (
            "a label value with a slash",
            Box::new(|j| j["metadata"]["labels"]["hyperfleet.io/adapter"] = "a/b".into()),
            "is not a label value",
        ),
    ];
    for (what, inject, expected) in cases {
        let mut bad = good.clone();
        inject(&mut bad);
        let problems = job_name_and_label_problems(&bad);
        assert!(
            problems.iter().any(|p| p.contains(expected)),
            "{what}: expected {expected:?} in {problems:?}"
        );
    }
}

/// What is wrong with the framework's RBAC (ServiceAccount, Role, RoleBinding): least privilege for what the
/// task config makes the framework do (GET + POST of Jobs by name, framework doc §5.1/§5.2), in the Jobs'
/// namespace, bound to the framework's own ServiceAccount, not the Job's.
fn framework_rbac_problems(docs: &[Value], job: &Job) -> Vec<String> {
    let kinds: Vec<&str> = docs.iter().map(|d| str_at(d, "/kind")).collect();
    if kinds != ["ServiceAccount", "Role", "RoleBinding"] {
        return vec![format!("kinds {kinds:?}")];
    }
    let sa: ServiceAccount = typed("framework ServiceAccount", &docs[0]);
    let role: Role = typed("framework Role", &docs[1]);
    let binding: RoleBinding = typed("framework RoleBinding", &docs[2]);
    let mut problems = Vec::new();
    let granted = rules_of(role.rules.as_deref().unwrap_or_default());
    let wanted = BTreeSet::from([rule("batch", "jobs", &["get", "create"])]);
    if granted != wanted {
        problems.push(format!("rules {granted:?}, expected exactly {wanted:?}"));
    }
    let namespace = job.metadata.namespace.clone();
    for (what, ns) in [
        ("ServiceAccount", &sa.metadata.namespace),
        ("Role", &role.metadata.namespace),
        ("RoleBinding", &binding.metadata.namespace),
    ] {
        if *ns != namespace {
            problems.push(format!(
                "{what} namespace {ns:?}, the Jobs' is {namespace:?}"
            ));
        }
    }
    if binding.role_ref.kind != "Role"
        || Some(&binding.role_ref.name) != role.metadata.name.as_ref()
    {
        problems.push(format!("roleRef {:?}", binding.role_ref));
    }
    let subjects = binding.subjects.unwrap_or_default();
    let bound = subjects.len() == 1
        && subjects[0].kind == "ServiceAccount"
        && Some(&subjects[0].name) == sa.metadata.name.as_ref()
        && subjects[0].namespace == sa.metadata.namespace;
    if !bound {
        problems.push(format!("subjects {subjects:?}"));
    }
    if sa.metadata.name == pod_spec(job).service_account_name {
        problems.push("the framework must not share the Job's ServiceAccount".to_owned());
    }
    problems
}

#[test]
fn framework_rbac_is_least_privilege_for_this_task_config() {
    let problems = framework_rbac_problems(&documents(FRAMEWORK_RBAC), &job());
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn framework_rbac_checker_catches_each_injected_defect() {
    let good = documents(FRAMEWORK_RBAC);
    type DocsInjection = Box<dyn Fn(&mut Vec<Value>)>;
    let cases: Vec<(&str, DocsInjection, &str)> = vec![
        (
            "an extra verb",
            Box::new(|d| {
                d[1]["rules"][0]["verbs"]
                    .as_array_mut()
                    .unwrap()
                    .push("delete".into())
            }),
            "rules",
        ),
        (
            "jobs/status",
            Box::new(|d| {
                d[1]["rules"][0]["resources"] = serde_json::json!(["jobs", "jobs/status"])
            }),
            "rules",
        ),
        (
            "another namespace",
            Box::new(|d| d[1]["metadata"]["namespace"] = "default".into()),
            "Role namespace",
        ),
        (
            "bound to the Job's ServiceAccount",
            Box::new(|d| {
                d[0]["metadata"]["name"] = "hypershift-adapter".into();
                d[2]["subjects"][0]["name"] = "hypershift-adapter".into();
            }),
            "must not share",
        ),
        (
            "bound to another ServiceAccount",
            Box::new(|d| d[2]["subjects"][0]["name"] = "default".into()),
            "subjects",
        ),
    ];
    for (what, inject, expected) in cases {
        let mut bad = good.clone();
        inject(&mut bad);
        let problems = framework_rbac_problems(&bad, &job());
        assert!(
            problems.iter().any(|p| p.contains(expected)),
            "{what}: expected {expected:?} in {problems:?}"
        );
    }
}

#[test]
fn adapter_config_is_hypershift_on_the_kubernetes_transport() {
    let config = document(ADAPTER_CONFIG);
    assert_eq!(config["adapter"]["name"], "hypershift");
    // The framework refuses to start unless major.minor equals its own (v0.3.x).
    let version = str_at(&config, "/adapter/version");
    assert!(version.starts_with("0.3."), "adapter.version {version:?}");
    let clients = config["clients"].as_object().unwrap();
    assert!(
        !clients.contains_key("maestro"),
        "clients.maestro switches the whole adapter to the Maestro transport"
    );
    assert!(clients.contains_key("kubernetes") && clients.contains_key("hyperfleet_api"));
    let token = str_at(&config, "/clients/hyperfleet_api/auth/token_path");
    assert!(
        token.starts_with('/'),
        "token_path must be absolute: {token:?}"
    );
    // base_url comes from the same variable the task config requires and passes to the Job.
    assert!(
        config["clients"]["hyperfleet_api"]
            .get("base_url")
            .is_none()
    );
    let task = document(TASK_CONFIG);
    assert!(
        task["params"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["source"] == "env.HYPERFLEET_API_BASE_URL" && p["required"] == true)
    );
}

fn dryrun_json(file: &str) -> Value {
    serde_json::from_str(&read(&format!("{DRYRUN}/{file}")))
        .unwrap_or_else(|e| panic!("{DRYRUN}/{file}: {e}"))
}

fn dryrun_env() -> BTreeMap<String, String> {
    read(&format!("{DRYRUN}/dryrun.env"))
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

/// The body the dry-run API client serves for `method url`: the first entry in file order whose method and
/// unanchored Go regexp match (framework doc §4).
fn served<'a>(responses: &'a Value, method: &str, url: &str) -> Option<&'a Value> {
    responses["responses"].as_array()?.iter().find_map(|entry| {
        let m = &entry["match"];
        let pattern = regex::Regex::new(str_at(m, "/urlPattern")).unwrap();
        ((m["method"] == method || m["method"] == "*") && pattern.is_match(url))
            .then(|| &entry["responses"][0]["body"])
    })
}

/// The awaited conditions that are not True at the cluster's current generation (the preconditions' rule).
fn awaited_not_met(cluster: &Value) -> Vec<&'static str> {
    awaited_not_met_of(cluster, &AWAITED_CONDITIONS)
}

/// The `awaited` conditions that are not True at the object's current generation.
fn awaited_not_met_of(object: &Value, awaited: &[&'static str]) -> Vec<&'static str> {
    let generation = object["generation"].as_f64().unwrap_or(-1.0);
    let conditions = object["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    awaited
        .iter()
        .copied()
        .filter(|t| {
            !conditions.iter().any(|c| {
                c["type"] == *t
                    && c["status"] == "True"
                    && c["observed_generation"].as_f64() == Some(generation)
            })
        })
        .collect()
}

/// What does not match between the dry-run discovery file and the Job the framework renders for the dry-run
/// event: the one key is the rendered name, the object is that Job plus what the API server and the
/// status-reporter add, and the per-key data annotations agree with `hyperfleet.io/report-data`.
fn discovery_problems(discovery: &Value, expected: &Value) -> Vec<String> {
    discovery_problems_of(discovery, expected, &DATA_KEYS)
}

/// [`discovery_problems`] for a Job whose report has the `data` keys `keys`. The status-reporter writes
/// a string value as itself and any other as compact JSON text.
fn discovery_problems_of(discovery: &Value, expected: &Value, data_keys: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    let name = str_at(expected, "/metadata/name");
    let keys: Vec<&String> = discovery
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    if keys != [name] {
        return vec![format!("keys {keys:?}, expected [{name:?}]")];
    }
    let mut job = discovery[name].clone();
    let _: Job = serde_json::from_value(job.clone()).unwrap_or_else(|e| panic!("not a Job: {e}"));
    let types: Vec<&str> = job["status"]["conditions"]
        .as_array()
        .map(|a| a.iter().map(|c| str_at(c, "/type")).collect())
        .unwrap_or_default();
    for t in MANDATORY_TYPES {
        if !types.contains(&t) {
            problems.push(format!("no {t} condition on the Job"));
        }
    }
    let annotations = job["metadata"]["annotations"].as_object_mut().unwrap();
    let report_data: Value = serde_json::from_str(
        annotations["hyperfleet.io/report-data"]
            .as_str()
            .unwrap_or("null"),
    )
    .unwrap_or_default();
    let per_key: serde_json::Map<String, Value> = annotations
        .iter()
        .filter_map(|(k, v)| {
            k.strip_prefix("data.hyperfleet.io/")
                .map(|k| (k.to_owned(), v.clone()))
        })
        .collect();
    let written: serde_json::Map<String, Value> = report_data
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
            (k.clone(), Value::String(text))
        })
        .collect();
    if written != per_key {
        problems.push(format!("report-data {report_data} disagrees with the data.hyperfleet.io/* annotations {per_key:?}"));
    }
    for key in data_keys {
        if !per_key.contains_key(*key) {
            problems.push(format!("no data.hyperfleet.io/{key} annotation"));
        }
    }
    if annotations.get("hyperfleet.io/observed-generation")
        != expected["metadata"]["annotations"].get("hyperfleet.io/generation")
    {
        problems.push("hyperfleet.io/observed-generation is not the Job's generation".to_owned());
    }
    annotations.retain(|k, _| {
        !(k.starts_with("data.hyperfleet.io/")
            || k == "hyperfleet.io/report-data"
            || k == "hyperfleet.io/observed-generation")
    });
    // What the API server adds (framework doc §5.2).
    let object = job.as_object_mut().unwrap();
    object.remove("status");
    let meta = object["metadata"].as_object_mut().unwrap();
    for k in ["uid", "resourceVersion", "generation", "creationTimestamp"] {
        meta.remove(k);
    }
    let spec = object["spec"].as_object_mut().unwrap();
    for k in [
        "selector",
        "completions",
        "parallelism",
        "completionMode",
        "suspend",
    ] {
        spec.remove(k);
    }
    let labels = spec["template"]["metadata"]["labels"]
        .as_object_mut()
        .unwrap();
    for k in [
        "batch.kubernetes.io/controller-uid",
        "batch.kubernetes.io/job-name",
        "controller-uid",
        "job-name",
    ] {
        labels.remove(k);
    }
    if job != *expected {
        problems.push(
            "the discovered Job is not the pulse Job's manifest rendered for the dry-run event"
                .to_owned(),
        );
    }
    problems
}

#[test]
fn dry_run_inputs_fit_the_task_config_and_each_other() {
    let event = dryrun_json("event.json");
    for field in ["specversion", "id", "source", "type"] {
        assert!(
            !str_at(&event, &format!("/{field}")).is_empty(),
            "event.json: no {field}"
        );
    }
    let id = str_at(&event, "/data/id");
    assert!(is_uuid_v7(id), "event.json data.id {id:?} is not a UUIDv7");
    assert_eq!(event["data"]["kind"], "Cluster");

    // The cluster GET is answered with this cluster, which satisfies the preconditions; the PUT is answered.
    let url = format!("/api/hyperfleet/v1/clusters/{id}");
    let responses = dryrun_json("api-responses.json");
    let cluster = served(&responses, "GET", &url).expect("no response for the cluster GET");
    assert_eq!(cluster["id"], id);
    assert_eq!(cluster["generation"], event["data"]["generation"]);
    assert!(
        awaited_not_met(cluster).is_empty(),
        "{:?}",
        awaited_not_met(cluster)
    );
    let put =
        served(&responses, "PUT", &format!("{url}/statuses")).expect("no response for the PUT");
    assert_eq!(put["adapter"], adapter_name());
    // The other file: one adapter still at the previous generation, so nothing is created or reported.
    let waiting = dryrun_json("api-responses-waiting.json");
    let waiting_cluster = served(&waiting, "GET", &url).unwrap();
    assert_eq!(awaited_not_met(waiting_cluster), ["DnsSuccessful"]);
    // The deleting file: the same cluster after a DELETE (deleted_time set, generation bumped past the event's),
    // nobody at the new generation yet: the preconditions would hold it, deletion passes them. The PUT is answered
    // 204 (this adapter has reported before and the first body says Available=Unknown: rule 13).
    let deleting = dryrun_json("api-responses-deleting.json");
    let deleting_cluster = served(&deleting, "GET", &url).unwrap();
    assert_eq!(deleting_cluster["id"], id);
    assert!(deleting_cluster["deleted_time"].is_string());
    assert_eq!(
        deleting_cluster["generation"].as_u64(),
        cluster["generation"].as_u64().map(|g| g + 1)
    );
    assert_eq!(awaited_not_met(deleting_cluster), AWAITED_CONDITIONS);
    let answer = deleting["responses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["match"]["method"] == "PUT")
        .map(|e| &e["responses"][0]);
    assert_eq!(answer.map(|a| &a["statusCode"]), Some(&Value::from(204)));

    let generation = cluster["generation"].as_u64().unwrap().to_string();
    let values = job_values(&dryrun_env(), id, &generation);
    let expected: Value =
        serde_saphyr::from_str(&render(&read("manifests/job.yaml"), &values)).unwrap();
    let problems = discovery_problems(&dryrun_json("discovery.json"), &expected);
    assert!(problems.is_empty(), "{DRYRUN}/discovery.json: {problems:?}");
}

#[test]
fn dry_run_checks_catch_each_injected_defect() {
    let event = dryrun_json("event.json");
    let id = str_at(&event, "/data/id");
    assert!(
        !is_uuid_v7("019a6f1e-4b7c-4d2e-9f3a-1c2d3e4f5a6b"),
        "a UUIDv4"
    );
    assert!(!is_uuid_v7("2a9f3c7d"), "a short id");
    let mut cluster = served(
        &dryrun_json("api-responses.json"),
        "GET",
        &format!("/api/hyperfleet/v1/clusters/{id}"),
    )
    .unwrap()
    .clone();
    cluster["generation"] = 4.into();
    assert_eq!(
        awaited_not_met(&cluster),
        AWAITED_CONDITIONS,
        "a newer generation"
    );

    let expected: Value = serde_saphyr::from_str(&render(
        &read("manifests/job.yaml"),
        &job_values(&dryrun_env(), id, "3"),
    ))
    .unwrap();
    let good = dryrun_json("discovery.json");
    let name = str_at(&expected, "/metadata/name").to_owned();
    let cases: Vec<(&str, Injection, &str)> = vec![
        (
            "another name",
            Box::new(|d| {
                let m = d.as_object_mut().unwrap();
                let (k, v) = m
                    .iter()
                    .next()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .unwrap();
                m.remove(&k);
                m.insert(format!("{k}x"), v);
            }),
            "keys",
        ),
        (
            "an image drift",
            {
                let name = name.clone();
                Box::new(move |d| {
                    d[&name]["spec"]["template"]["spec"]["containers"][0]["image"] = "x:1".into()
                })
            },
            "manifest rendered for the dry-run event",
        ),
        (
            "data annotation disagreeing with report-data",
            {
                let name = name.clone();
                Box::new(move |d| {
                    d[&name]["metadata"]["annotations"]["data.hyperfleet.io/version"] =
                        "4.20.0".into()
                })
            },
            "disagrees",
        ),
        (
            "no Applied condition",
            {
                let name = name.clone();
                Box::new(move |d| {
                    d[&name]["status"]["conditions"]
                        .as_array_mut()
                        .unwrap()
                        .retain(|c| c["type"] != "Applied");
                })
            },
            "no Applied condition",
        ),
    ];
    for (what, inject, expected_problem) in cases {
        let mut bad = good.clone();
        inject(&mut bad);
        let problems = discovery_problems(&bad, &expected);
        assert!(
            problems.iter().any(|p| p.contains(expected_problem)),
            "{what}: expected {expected_problem:?} in {problems:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The NodePool: manifests/nodepool-job.yaml and its framework deployment (manifests/hyperfleet/nodepool/), held to
// the interface of `hypershift-adapter nodepool` and to the same rules as the control plane's
// ---------------------------------------------------------------------------------------------------------------

/// A NodePool id the API could produce (UUIDv7, 36 characters): the longest there is.
const LONGEST_NODEPOOL_ID: &str = "019a6f2b-8d13-7a64-b5c2-3e9f0d7a1c58";
const NODEPOOL_DRYRUN: &str = "manifests/hyperfleet/nodepool/dryrun";

fn labels_at<'a>(job: &'a Value, pointer: &str) -> &'a serde_json::Map<String, Value> {
    job.pointer(pointer)
        .and_then(Value::as_object)
        .unwrap_or_else(|| panic!("no {pointer}"))
}

#[test]
fn nodepool_job_is_the_pulse_job_of_the_interface() {
    let doc = nodepool_job_doc();
    let job: Job = typed(NODEPOOL_JOB, &doc);
    assert_eq!(
        job.metadata.name.as_deref(),
        Some("hs-np-{{ .nodepoolId }}-g{{ .generation }}")
    );
    let want_labels = serde_json::json!({
        "app.kubernetes.io/name": "hypershift-adapter",
        "app.kubernetes.io/component": "nodepool",
        "hyperfleet.io/cluster-id": "{{ .clusterId }}",
        "hyperfleet.io/nodepool-id": "{{ .nodepoolId }}",
        "hyperfleet.io/adapter": "nodepool",
    });
    for pointer in ["/metadata/labels", "/spec/template/metadata/labels"] {
        assert_eq!(
            Value::Object(labels_at(&doc, pointer).clone()),
            want_labels,
            "{pointer}"
        );
    }
    for pointer in [
        "/metadata/annotations",
        "/spec/template/metadata/annotations",
    ] {
        assert_eq!(
            doc.pointer(pointer),
            Some(&serde_json::json!({"hyperfleet.io/generation": "{{ .generation }}"})),
            "{pointer}"
        );
    }
    let pod = pod_spec(&job);
    let names: Vec<&str> = pod.containers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["adapter", "status-reporter"]);
    let adapter = container(pod, "adapter");
    assert_eq!(adapter.args.as_deref(), Some(&["nodepool".to_owned()][..]));
    for (name, value) in [
        ("CLUSTER_ID", "{{ .clusterId }}"),
        ("NODEPOOL_ID", "{{ .nodepoolId }}"),
        ("GENERATION", "{{ .generation }}"),
        ("HYPERFLEET_API_URL", "{{ .hyperfleetApiBaseUrl }}"),
        (
            "HYPERFLEET_API_TOKEN_FILE",
            "/var/run/secrets/hyperfleet/token",
        ),
        ("WORK_BACKEND", "maestro"),
        (
            "MANAGEMENT_CLUSTER_CONSUMER",
            "{{ .managementClusterConsumer }}",
        ),
        ("MAESTRO_SOURCE_ID", "{{ .maestroSourceId }}"),
        ("MAESTRO_API_URL", "{{ .maestroApiUrl }}"),
        ("MAESTRO_GRPC_URL", "{{ .maestroGrpcUrl }}"),
    ] {
        assert_eq!(env_value(adapter, name), Some(value), "adapter {name}");
    }
    // The NodePool is fetched from the API: no spec file in the Job.
    assert_eq!(env_value(adapter, "NODEPOOL_SPEC_FILE"), None);
    let reporter = container(pod, "status-reporter");
    assert_eq!(
        env_value(reporter, "CONDITION_TYPE"),
        Some("Available,Applied,Health")
    );
}

/// `nodepool-job.yaml` turned back into `job.yaml` by undoing exactly what the interface changes: the name, the
/// component/adapter labels and the nodepool-id label, the subcommand and the NODEPOOL_ID variable.
fn nodepool_job_as_controlplane(nodepool: &Value) -> Value {
    let mut job = nodepool.clone();
    job["metadata"]["name"] = "hs-cp-{{ .clusterId }}-g{{ .generation }}".into();
    for pointer in ["/metadata/labels", "/spec/template/metadata/labels"] {
        let labels = job
            .pointer_mut(pointer)
            .and_then(Value::as_object_mut)
            .unwrap();
        labels.remove("hyperfleet.io/nodepool-id");
        for key in ["app.kubernetes.io/component", "hyperfleet.io/adapter"] {
            if labels.get(key).is_some_and(|v| v == "nodepool") {
                labels.insert(key.to_owned(), "controlplane".into());
            }
        }
    }
    let adapter = &mut job["spec"]["template"]["spec"]["containers"][0];
    if adapter["args"] == serde_json::json!(["nodepool"]) {
        adapter["args"] = serde_json::json!(["controlplane"]);
    }
    if let Some(env) = adapter["env"].as_array_mut() {
        env.retain(|e| e["name"] != "NODEPOOL_ID");
    }
    job
}

/// Built like the control plane's Job: same security contexts, resources, volumes, deadlines, TTL, reporter and
/// backend settings; a change to one of them in either file (drift) fails here.
#[test]
fn nodepool_job_is_built_like_job_yaml() {
    assert_eq!(
        nodepool_job_as_controlplane(&nodepool_job_doc()),
        job_doc(),
        "{NODEPOOL_JOB} differs from manifests/job.yaml beyond the name, labels, subcommand and NODEPOOL_ID"
    );
    let cases: Vec<(&str, Injection)> = vec![
        (
            "a longer deadline",
            Box::new(|j| j["spec"]["activeDeadlineSeconds"] = 600.into()),
        ),
        (
            "a writable root filesystem",
            Box::new(|j| {
                j["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRootFilesystem"] =
                    false.into()
            }),
        ),
        (
            "only Available for the reporter's failures",
            Box::new(|j| {
                j["spec"]["template"]["spec"]["containers"][1]["env"][5]["value"] =
                    "Available".into()
            }),
        ),
        (
            "the hub backend",
            Box::new(|j| {
                j["spec"]["template"]["spec"]["containers"][0]["env"][5]["value"] = "hub".into()
            }),
        ),
    ];
    for (what, inject) in cases {
        let mut bad = nodepool_job_doc();
        inject(&mut bad);
        assert_ne!(nodepool_job_as_controlplane(&bad), job_doc(), "{what}");
    }
}

/// The Job runs `hypershift-adapter nodepool`; every variable it sets must be one that subcommand reads. Until
/// the subcommand is merged (the lead's `adapter/src/pulse/nodepool/`) this test fails on its first assertion,
/// naming the subcommands `--help` lists, by design: it cannot pass against a binary without `nodepool`.
#[test]
fn every_env_var_of_the_nodepool_adapter_is_one_its_subcommand_accepts() {
    let by_subcommand = adapter_env_by_subcommand();
    let job: Job = typed(NODEPOOL_JOB, &nodepool_job_doc());
    let adapter = container(pod_spec(&job), "adapter");
    let subcommand = adapter.args.as_ref().and_then(|a| a.first()).unwrap();
    assert_eq!(subcommand, "nodepool");
    let accepted = by_subcommand.get(subcommand).unwrap_or_else(|| {
        panic!(
            "{NODEPOOL_JOB} runs `hypershift-adapter {subcommand}`, but --help lists only {:?}",
            by_subcommand.keys().collect::<Vec<_>>()
        )
    });
    assert!(
        accepted.contains("NODEPOOL_ID"),
        "`hypershift-adapter nodepool --help` lists no NODEPOOL_ID: {accepted:?}"
    );
    let unknown: Vec<String> = env_names(adapter)
        .into_iter()
        .filter(|n| !accepted.contains(n))
        .collect();
    assert!(
        unknown.is_empty(),
        "`hypershift-adapter nodepool` does not read {unknown:?}; it accepts {accepted:?}"
    );
}

#[test]
fn nodepool_job_names_and_label_values_fit_with_the_longest_ids_and_generation() {
    assert!(is_uuid_v7(LONGEST_NODEPOOL_ID) && is_uuid_v7(LONGEST_ID));
    let values = job_values_of(
        NODEPOOL_TASK_CONFIG,
        &dryrun_env(),
        &[
            ("nodepoolId", LONGEST_NODEPOOL_ID),
            ("clusterId", LONGEST_ID),
        ],
        LONGEST_GENERATION,
    );
    let job: Value = serde_saphyr::from_str(&render(&read(NODEPOOL_JOB), &values)).unwrap();
    let problems = job_name_and_label_problems(&job);
    assert!(problems.is_empty(), "{problems:?}");
    let name = str_at(&job, "/metadata/name");
    assert_eq!(
        name,
        format!("hs-np-{LONGEST_NODEPOOL_ID}-g{LONGEST_GENERATION}")
    );
    assert_eq!(name.len(), 54);
    for pointer in ["/metadata/labels", "/spec/template/metadata/labels"] {
        for (key, value) in labels_at(&job, pointer) {
            assert!(
                value.as_str().unwrap().len() <= 63,
                "{pointer} {key}={value}"
            );
        }
    }
    // The framework finds the Job it created by the same name.
    let config = document(NODEPOOL_TASK_CONFIG);
    let by_name = render(str_at(&config, "/resources/0/discovery/by_name"), &values);
    assert_eq!(by_name, name);
    drop(typed::<Job>("rendered nodepool-job.yaml", &job));
    // With both ids the name could not be created: the check can fail.
    let mut both = job.clone();
    both["metadata"]["name"] =
        format!("hs-np-{LONGEST_ID}-{LONGEST_NODEPOOL_ID}-g{LONGEST_GENERATION}").into();
    assert!(
        job_name_and_label_problems(&both)
            .iter()
            .any(|p| p.contains("is not a DNS-1123 label"))
    );
}

fn nodepool_adapter_name() -> String {
    document(NODEPOOL_ADAPTER_CONFIG)["adapter"]["name"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn nodepool_task_config_embeds_nodepool_job_yaml_and_reports_as_the_interface_says() {
    let problems = task_config_problems(
        &NODEPOOL,
        &document(NODEPOOL_TASK_CONFIG),
        &nodepool_job_doc(),
        &nodepool_adapter_name(),
    );
    assert!(
        problems.is_empty(),
        "{NODEPOOL_TASK_CONFIG}:\n  {}",
        problems.join("\n  ")
    );
    // The same adapter on the API as the control plane's (HypershiftSuccessful on both objects).
    assert_eq!(nodepool_adapter_name(), adapter_name());
}

#[test]
fn nodepool_task_config_checker_catches_each_injected_defect() {
    let good = document(NODEPOOL_TASK_CONFIG);
    let job = nodepool_job_doc();
    let name = nodepool_adapter_name();
    let set_param = |c: &mut Value, name: &str, key: &str, value: Value| {
        let p = c["params"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|p| p["name"] == name)
            .unwrap();
        p[key] = value;
    };
    let cases: Vec<(&str, Injection, &str)> = vec![
        (
            "Job drift",
            Box::new(|c| {
                c["resources"][0]["manifest"]["spec"]["template"]["spec"]["containers"][0]["args"] =
                    serde_json::json!(["controlplane"])
            }),
            "drifted",
        ),
        (
            "the control plane's Job embedded",
            Box::new(|c| c["resources"][0]["manifest"] = job_doc()),
            "drifted",
        ),
        (
            "cluster id from event.id",
            Box::new(move |c| set_param(c, "clusterId", "source", "event.id".into())),
            "clusterId must be required, from event.owner_references.id",
        ),
        (
            "the cluster GET instead of the NodePool's",
            Box::new(|c| {
                c["params"][2]["source"]["api_call"]["url"] = "/clusters/{{ .clusterId }}".into()
            }),
            "the object must come from a required GET /clusters/{{ .clusterId }}/nodepools/{{ .nodepoolId }}",
        ),
        (
            "a cluster adapter awaited",
            Box::new(|c| {
                let e = c["preconditions"][0]["expression"]
                    .as_str()
                    .unwrap()
                    .replace("ValidationSuccessful", "DnsSuccessful");
                c["preconditions"][0]["expression"] = e.into();
            }),
            "no precondition waits for ValidationSuccessful",
        ),
        (
            "a deleting NodePool held",
            Box::new(|c| {
                let e = c["preconditions"][0]["expression"]
                    .as_str()
                    .unwrap()
                    .replacen("isDeleting || ", "", 1);
                c["preconditions"][0]["expression"] = e.into();
            }),
            "does not let a deleting cluster (isDeleting) through",
        ),
        (
            "PUT to the cluster's statuses",
            Box::new(|c| {
                c["post"]["post_actions"][0]["api_call"]["url"] =
                    "/clusters/{{ .clusterId }}/statuses".into()
            }),
            "must be PUT /clusters/{{ .clusterId }}/nodepools/{{ .nodepoolId }}/statuses",
        ),
        (
            "a CEL null for a missing number",
            Box::new(|c| {
                let e = c["post"]["payloads"][0]["build"]["data"]["ready_nodes"]["expression"]
                    .as_str()
                    .unwrap()
                    .replace("optional.none()", "null");
                c["post"]["payloads"][0]["build"]["data"]["ready_nodes"]["expression"] = e.into();
            }),
            "data.ready_nodes must be Number",
        ),
        (
            "a number left as text",
            Box::new(|c| {
                c["post"]["payloads"][0]["build"]["data"]["desired_replicas"]["expression"] =
                    "resources.?pulseJob.?metadata.?annotations[?\"data.hyperfleet.io/desired_replicas\"].orValue(\"\")".into()
            }),
            "data.desired_replicas must be Number",
        ),
        (
            "a missing data key",
            Box::new(|c| {
                c["post"]["payloads"][0]["build"]["data"]
                    .as_object_mut()
                    .unwrap()
                    .remove("node_versions");
            }),
            "data must be an object with keys",
        ),
        (
            "payload without when",
            Box::new(|c| {
                c["post"]["payloads"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("when");
            }),
            "has no `when`",
        ),
        (
            "observed_generation as a template string",
            Box::new(|c| {
                c["post"]["payloads"][1]["build"]["observed_generation"] =
                    "{{ .generation }}".into();
            }),
            "observed_generation must be an expression",
        ),
        (
            "a delete lifecycle",
            Box::new(|c| {
                c["resources"][0]["lifecycle"] =
                    serde_json::json!({"delete": {"when": {"expression": "isDeleting"}}});
            }),
            "lifecycle/recreate_on_change",
        ),
    ];
    for (what, inject, expected) in cases {
        let mut bad = good.clone();
        inject(&mut bad);
        let problems = task_config_problems(&NODEPOOL, &bad, &job, &name);
        assert!(
            problems.iter().any(|p| p.contains(expected)),
            "{what}: expected a problem containing {expected:?}, got {problems:?}"
        );
    }
}

/// One framework RBAC for both deployments: the NodePool's task config makes the framework do what the control
/// plane's does (GET and POST of a Job by name in hyperfleet-system; no lifecycle, no update), so the same Role fits
/// and nothing is widened.
#[test]
fn framework_rbac_is_least_privilege_for_the_nodepool_task_config_too() {
    let nodepool: Job = typed(NODEPOOL_JOB, &nodepool_job_doc());
    let problems = framework_rbac_problems(&documents(FRAMEWORK_RBAC), &nodepool);
    assert!(problems.is_empty(), "{problems:?}");
    let config = document(NODEPOOL_TASK_CONFIG);
    let resources = config["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 1);
    let resource = &resources[0];
    assert_eq!(resource["manifest"]["kind"], "Job");
    assert!(resource.get("lifecycle").is_none() && resource.get("recreate_on_change").is_none());
    assert!(resource["discovery"]["by_name"].is_string());
    assert!(resource["discovery"].get("by_selectors").is_none());
    assert_eq!(
        resource["discovery"]["namespace"],
        documents(FRAMEWORK_RBAC)[1]["metadata"]["namespace"]
    );
    // The NodePool deployment runs as the same ServiceAccount (in-cluster config, no kubeconfig).
    assert_eq!(
        document(NODEPOOL_ADAPTER_CONFIG)["clients"]["kubernetes"]["kube_config_path"],
        ""
    );
}

#[test]
fn nodepool_adapter_config_is_hypershift_on_the_kubernetes_transport_with_its_own_subscription() {
    let config = document(NODEPOOL_ADAPTER_CONFIG);
    let controlplane = document(ADAPTER_CONFIG);
    assert_eq!(config["adapter"], controlplane["adapter"]);
    let clients = config["clients"].as_object().unwrap();
    assert!(!clients.contains_key("maestro"));
    assert_eq!(
        config["clients"]["hyperfleet_api"],
        controlplane["clients"]["hyperfleet_api"]
    );
    assert_eq!(
        config["clients"]["kubernetes"],
        controlplane["clients"]["kubernetes"]
    );
    let subscription = |c: &Value| str_at(c, "/clients/broker/subscription_id").to_owned();
    assert_eq!(subscription(&config), "hypershift-nodepool");
    assert_ne!(subscription(&config), subscription(&controlplane));
    // Only the subscription differs.
    let mut same = config.clone();
    same["clients"]["broker"] = controlplane["clients"]["broker"].clone();
    assert_eq!(same, controlplane);
    let task = document(NODEPOOL_TASK_CONFIG);
    assert!(
        task["params"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["source"] == "env.HYPERFLEET_API_BASE_URL" && p["required"] == true)
    );
}

fn nodepool_dryrun_json(file: &str) -> Value {
    serde_json::from_str(&read(&format!("{NODEPOOL_DRYRUN}/{file}")))
        .unwrap_or_else(|e| panic!("{NODEPOOL_DRYRUN}/{file}: {e}"))
}

/// The nodepool report's `data` keys (sorted).
fn nodepool_data_keys() -> Vec<&'static str> {
    NODEPOOL.data.iter().map(|(k, _)| *k).collect()
}

/// The NodePool Job the framework renders for the dry-run event, at `generation`.
fn nodepool_dryrun_job(generation: &str) -> Value {
    let event = nodepool_dryrun_json("event.json");
    let values = job_values_of(
        NODEPOOL_TASK_CONFIG,
        &dryrun_env(),
        &[
            ("nodepoolId", str_at(&event, "/data/id")),
            ("clusterId", str_at(&event, "/data/owner_references/id")),
        ],
        generation,
    );
    serde_saphyr::from_str(&render(&read(NODEPOOL_JOB), &values)).unwrap()
}

#[test]
fn nodepool_dry_run_inputs_fit_the_task_config_and_each_other() {
    let event = nodepool_dryrun_json("event.json");
    for field in ["specversion", "id", "source", "type"] {
        assert!(
            !str_at(&event, &format!("/{field}")).is_empty(),
            "event.json: no {field}"
        );
    }
    assert!(is_uuid_v7(str_at(&event, "/id")));
    let id = str_at(&event, "/data/id");
    let cluster_id = str_at(&event, "/data/owner_references/id");
    assert!(is_uuid_v7(id), "event.json data.id {id:?} is not a UUIDv7");
    assert!(is_uuid_v7(cluster_id), "owner_references.id {cluster_id:?}");
    assert_ne!(id, cluster_id);
    assert_eq!(event["data"]["kind"], "NodePool");
    assert_eq!(event["data"]["owner_references"]["kind"], "Cluster");
    let url = format!("/api/hyperfleet/v1/clusters/{cluster_id}/nodepools/{id}");
    assert_eq!(event["data"]["href"], url.as_str());

    // The NodePool GET is answered with this NodePool (the longest name a NodePool may have), validation done at
    // its generation; the PUT is answered.
    let responses = nodepool_dryrun_json("api-responses.json");
    let nodepool = served(&responses, "GET", &url).expect("no response for the NodePool GET");
    assert_eq!(nodepool["id"], id);
    assert_eq!(nodepool["kind"], "NodePool");
    assert_eq!(nodepool["owner_references"]["id"], cluster_id);
    assert_eq!(nodepool["generation"], event["data"]["generation"]);
    assert_eq!(
        str_at(nodepool, "/name").len(),
        15,
        "the longest NodePool name"
    );
    assert!(label_value_problem(str_at(nodepool, "/name")).is_none());
    assert!(awaited_not_met_of(nodepool, NODEPOOL.awaited).is_empty());
    let put =
        served(&responses, "PUT", &format!("{url}/statuses")).expect("no response for the PUT");
    assert_eq!(put["adapter"], nodepool_adapter_name());
    // Waiting: validation still at the previous generation, so nothing is created or reported.
    let waiting = nodepool_dryrun_json("api-responses-waiting.json");
    assert_eq!(
        awaited_not_met_of(served(&waiting, "GET", &url).unwrap(), NODEPOOL.awaited),
        ["ValidationSuccessful"]
    );
    // Deleting: deleted_time set, generation bumped past the event's, validation not at it; the PUT answered 204
    // (the first body says Available=Unknown and this adapter has reported before: rule 13).
    let deleting = nodepool_dryrun_json("api-responses-deleting.json");
    let deleting_nodepool = served(&deleting, "GET", &url).unwrap();
    assert_eq!(deleting_nodepool["id"], id);
    assert!(deleting_nodepool["deleted_time"].is_string());
    assert_eq!(
        deleting_nodepool["generation"].as_u64(),
        nodepool["generation"].as_u64().map(|g| g + 1)
    );
    assert_eq!(
        awaited_not_met_of(deleting_nodepool, NODEPOOL.awaited),
        ["ValidationSuccessful"]
    );
    let answer = deleting["responses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["match"]["method"] == "PUT")
        .map(|e| &e["responses"][0]);
    assert_eq!(answer.map(|a| &a["statusCode"]), Some(&Value::from(204)));
    // The control plane's URL patterns do not answer the NodePool's requests (and the other way round).
    assert!(
        served(
            &responses,
            "GET",
            &format!("/api/hyperfleet/v1/clusters/{cluster_id}")
        )
        .is_none()
    );

    let generation = nodepool["generation"].as_u64().unwrap().to_string();
    let problems = discovery_problems_of(
        &nodepool_dryrun_json("discovery.json"),
        &nodepool_dryrun_job(&generation),
        &nodepool_data_keys(),
    );
    assert!(
        problems.is_empty(),
        "{NODEPOOL_DRYRUN}/discovery.json: {problems:?}"
    );
}

#[test]
fn nodepool_dry_run_checks_catch_each_injected_defect() {
    let expected = nodepool_dryrun_job("3");
    let good = nodepool_dryrun_json("discovery.json");
    let name = str_at(&expected, "/metadata/name").to_owned();
    let keys = nodepool_data_keys();
    let cases: Vec<(&str, Injection, &str)> = vec![
        (
            "the control plane's Job",
            Box::new(|d| {
                let m = d.as_object_mut().unwrap();
                let v = m.values().next().unwrap().clone();
                m.clear();
                m.insert("hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g3".into(), v);
            }),
            "keys",
        ),
        (
            "a number annotation disagreeing with report-data",
            {
                let name = name.clone();
                Box::new(move |d| {
                    d[&name]["metadata"]["annotations"]["data.hyperfleet.io/ready_nodes"] =
                        "2".into()
                })
            },
            "disagrees",
        ),
        (
            "a missing node_versions annotation",
            {
                let name = name.clone();
                Box::new(move |d| {
                    d[&name]["metadata"]["annotations"]
                        .as_object_mut()
                        .unwrap()
                        .remove("data.hyperfleet.io/node_versions");
                })
            },
            "node_versions",
        ),
        (
            "the subcommand drifted",
            {
                let name = name.clone();
                Box::new(move |d| {
                    d[&name]["spec"]["template"]["spec"]["containers"][0]["args"] =
                        serde_json::json!(["controlplane"])
                })
            },
            "manifest rendered for the dry-run event",
        ),
    ];
    for (what, inject, expected_problem) in cases {
        let mut bad = good.clone();
        inject(&mut bad);
        let problems = discovery_problems_of(&bad, &expected, &keys);
        assert!(
            problems.iter().any(|p| p.contains(expected_problem)),
            "{what}: expected {expected_problem:?} in {problems:?}"
        );
    }
}

// ---- The kind demo: both overlays, the NodePool, and a replay of scripts/kind-demo.sh --------------------------

/// The kind overlays: (directory, the Job template it patches, the subcommand that Job runs, the env var naming the
/// spec file its ConfigMap provides).
const KIND_OVERLAYS: [(&str, &str, &str, &str); 2] = [
    (
        "manifests/kind/pulse",
        "manifests/job.yaml",
        "controlplane",
        "CLUSTER_SPEC_FILE",
    ),
    (
        "manifests/kind/nodepool-pulse",
        NODEPOOL_JOB,
        "nodepool",
        "NODEPOOL_SPEC_FILE",
    ),
];
const KIND_SCRIPT: &str = "scripts/kind-demo.sh";
const KIND_CLUSTER_SPEC: &str = "manifests/kind/cluster-spec.json";
const KIND_NODEPOOL_SPEC: &str = "manifests/kind/nodepool-spec.json";
const KIND_HUB_RBAC: &str = "manifests/kind/hub-rbac.yaml";
const KIND_MANIFESTWORK_CRD: &str =
    "manifests/kind/crds/manifestworks.work.open-cluster-management.io.yaml";

/// The strategic-merge key of the Job lists the kind overlays patch (`patchMergeKey` in k8s.io/api: containers,
/// env and volumes by `name`, volumeMounts by `mountPath`). Any other list in a patch replaces the base's.
fn merge_key(field: &str) -> Option<&'static str> {
    match field {
        "containers" | "initContainers" | "env" | "volumes" => Some("name"),
        "volumeMounts" => Some("mountPath"),
        _ => None,
    }
}

/// `patch` applied to `base` as kustomize applies a strategic merge patch to a Job: maps merge, the lists of
/// [`merge_key`] merge by key (the patch's items first, in its order, then the base's other items, as kustomize v5
/// orders them), `$patch: delete` removes the item with that key. Stricter than kustomize, which ignores them: a
/// deletion of an item the base lacks and any other `$` directive are errors, so a patch cannot silently stop
/// applying.
fn strategic_merge(base: &Value, patch: &Value, path: &str) -> Result<Value, String> {
    let (Value::Object(base), Value::Object(patch)) = (base, patch) else {
        return Ok(patch.clone());
    };
    let mut out = base.clone();
    for (field, value) in patch {
        let at = format!("{path}.{field}");
        if field.starts_with('$') {
            return Err(format!("{at}: directive not supported here"));
        }
        let merged = match (out.get(field), merge_key(field)) {
            (Some(Value::Array(items)), Some(key)) => merge_list(items, value, key, &at)?,
            (Some(old), _) => strategic_merge(old, value, &at)?,
            (None, _) => {
                if value.to_string().contains("\"$patch\"") {
                    return Err(format!("{at}: a directive where the base has nothing"));
                }
                value.clone()
            }
        };
        out.insert(field.clone(), merged);
    }
    Ok(Value::Object(out))
}

fn merge_list(base: &[Value], patch: &Value, key: &str, path: &str) -> Result<Value, String> {
    let items = patch
        .as_array()
        .ok_or_else(|| format!("{path}: not a list"))?;
    let mut rest = base.to_vec();
    let mut head = Vec::new();
    for item in items {
        let k = item[key]
            .as_str()
            .ok_or_else(|| format!("{path}: an item without {key}"))?;
        let found = rest.iter().position(|b| b[key] == k);
        match item.get("$patch").map(|d| d.as_str()) {
            Some(Some("delete")) => {
                let i = found
                    .ok_or_else(|| format!("{path}: deletes {key}={k}, which the base lacks"))?;
                rest.remove(i);
            }
            Some(other) => return Err(format!("{path}[{k}]: $patch {other:?} not supported")),
            None => match found {
                Some(i) => {
                    let old = rest.remove(i);
                    head.push(strategic_merge(&old, item, &format!("{path}[{k}]"))?);
                }
                None => head.push(item.clone()),
            },
        }
    }
    head.extend(rest);
    Ok(Value::Array(head))
}

/// What `kubectl kustomize --load-restrictor LoadRestrictionsNone <dir>` prints for a kind overlay (one Job): its
/// one resource with each of its patches applied, the patch's own name ignored (the target selects the Job).
/// Refuses kustomization fields it does not implement.
fn render_overlay(dir: &str) -> Result<Value, String> {
    let kustomization = document(&format!("{dir}/kustomization.yaml"));
    let keys: BTreeSet<&str> = kustomization
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    if keys != BTreeSet::from(["apiVersion", "kind", "resources", "patches"]) {
        return Err(format!("{dir}: kustomization fields {keys:?}"));
    }
    let resources = kustomization["resources"].as_array().unwrap();
    let [resource] = resources.as_slice() else {
        return Err(format!("{dir}: expected one resource, got {resources:?}"));
    };
    let base_path = Path::new(dir).join(resource.as_str().unwrap());
    let mut job = document(&normalize(&base_path));
    for p in kustomization["patches"].as_array().unwrap() {
        if p["target"] != serde_json::json!({"group": "batch", "version": "v1", "kind": "Job"}) {
            return Err(format!("{dir}: patch target {}", p["target"]));
        }
        let patch = document(&format!("{dir}/{}", p["path"].as_str().unwrap()));
        let fields: BTreeSet<&str> = patch
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        if fields != BTreeSet::from(["apiVersion", "kind", "metadata", "spec"])
            || patch["metadata"].as_object().map(|m| m.len()) != Some(1)
            || patch["kind"] != job["kind"]
            || patch["apiVersion"] != job["apiVersion"]
        {
            return Err(format!("{dir}: the patch is not a Job patch of spec only"));
        }
        job["spec"] = strategic_merge(&job["spec"], &patch["spec"], ".spec")?;
    }
    Ok(job)
}

/// `a/b/../../c` → `c` (relative to the repository root).
fn normalize(path: &Path) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.to_str().unwrap().split('/') {
        match part {
            ".." => drop(parts.pop()),
            "." | "" => {}
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// `NAME=value` at the start of a line of the script (the value up to a space or the line's end).
fn script_var(script: &str, name: &str) -> String {
    script
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .and_then(|v| v.split_whitespace().next())
        .unwrap_or_else(|| panic!("{KIND_SCRIPT} sets no {name}"))
        .to_owned()
}

/// The single-quoted value of `name='…'` in the script.
fn script_literal(script: &str, name: &str) -> String {
    script
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}='")))
        .and_then(|v| v.strip_suffix('\''))
        .unwrap_or_else(|| panic!("{KIND_SCRIPT} sets no {name}='…'"))
        .to_owned()
}

fn adapter_env(job: &Value) -> BTreeMap<String, String> {
    job["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "adapter")
        .unwrap()["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let value = e["value"]
                .as_str()
                .unwrap_or_else(|| panic!("adapter env {} has no value", e["name"]));
            (e["name"].as_str().unwrap().to_owned(), value.to_owned())
        })
        .collect()
}

#[test]
fn kind_overlays_render_to_hub_jobs_their_subcommands_accept() {
    let by_subcommand = adapter_env_by_subcommand();
    let script = read(KIND_SCRIPT);
    for (dir, base, subcommand, spec_env) in KIND_OVERLAYS {
        let job = render_overlay(dir).unwrap_or_else(|e| panic!("{e}"));
        drop(typed::<Job>(dir, &job));
        assert!(
            script.contains(&format!("run_job {dir} ")),
            "{KIND_SCRIPT} does not run {dir}"
        );

        // The adapter runs the subcommand of its base, reads only what that subcommand accepts, on the hub, and
        // nothing of Maestro or the HyperFleet API is left.
        let adapter = &job["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(adapter["name"], "adapter", "{dir}");
        assert_eq!(adapter["args"], serde_json::json!([subcommand]), "{dir}");
        let env = adapter_env(&job);
        let accepted = &by_subcommand[subcommand];
        let unknown: Vec<&String> = env.keys().filter(|n| !accepted.contains(*n)).collect();
        assert!(
            unknown.is_empty(),
            "{dir}: `hypershift-adapter {subcommand}` does not read {unknown:?}; it accepts {accepted:?}"
        );
        assert_eq!(
            env.get("WORK_BACKEND").map(String::as_str),
            Some("hub"),
            "{dir}"
        );
        let leftovers: Vec<&String> = env
            .keys()
            .filter(|n| n.starts_with("MAESTRO_") || n.starts_with("HYPERFLEET_API"))
            .collect();
        assert!(leftovers.is_empty(), "{dir}: {leftovers:?}");

        // The spec file is the item of a ConfigMap volume the script creates, mounted where the env var points.
        let pod = &job["spec"]["template"]["spec"];
        let spec_file = Path::new(&env[spec_env]).to_path_buf();
        let mount = adapter["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| spec_file.starts_with(m["mountPath"].as_str().unwrap()))
            .unwrap_or_else(|| panic!("{dir}: {spec_env} is under no mount"));
        assert_eq!(mount["readOnly"], true, "{dir}");
        let volume = pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == mount["name"])
            .unwrap();
        let config_map = volume["configMap"]["name"]
            .as_str()
            .unwrap_or_else(|| panic!("{dir}: {spec_env} is not from a ConfigMap"));
        let item = volume["configMap"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| {
                Path::new(mount["mountPath"].as_str().unwrap()).join(i["path"].as_str().unwrap())
                    == spec_file
            })
            .unwrap_or_else(|| panic!("{dir}: no item of {config_map} is {}", spec_file.display()));
        let key = item["key"].as_str().unwrap();
        assert!(
            script.contains(&format!("create configmap {config_map} "))
                && (script.contains(&format!("--from-literal={key}="))
                    || script.contains(&format!("--from-file={key}="))),
            "{KIND_SCRIPT} does not create ConfigMap {config_map} with key {key}"
        );
        let secrets: Vec<&Value> = pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v.get("secret").is_some())
            .collect();
        assert!(
            secrets.is_empty(),
            "{dir}: kind has no Secrets: {secrets:?}"
        );

        // Nothing else differs from the base: the same Job without the adapter's env and mounts and the volumes.
        let strip = |j: &Value| {
            let mut j = j.clone();
            let pod = &mut j["spec"]["template"]["spec"];
            pod["volumes"] = Value::Null;
            let adapter = &mut pod["containers"][0];
            adapter["env"] = Value::Null;
            adapter["volumeMounts"] = Value::Null;
            j
        };
        assert_eq!(
            strip(&job),
            strip(&document(base)),
            "{dir} changes more than the backend's inputs"
        );
    }
}

#[test]
fn kind_overlay_renderer_is_strict_and_agrees_with_kubectl_kustomize() {
    // A deletion of something the base lacks, and an unknown directive, are errors.
    let base = serde_json::json!({"template": {"spec": {"containers": [
        {"name": "adapter", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]}}});
    let patch = |env: Value| serde_json::json!({"template": {"spec": {"containers": [{"name": "adapter", "env": env}]}}});
    let merged = strategic_merge(
        &base,
        &patch(serde_json::json!([{"name": "B", "value": "3"}, {"name": "C", "value": "4"}, {"name": "A", "$patch": "delete"}])),
        "",
    )
    .unwrap();
    assert_eq!(
        merged["template"]["spec"]["containers"][0]["env"],
        serde_json::json!([{"name": "B", "value": "3"}, {"name": "C", "value": "4"}])
    );
    let missing = strategic_merge(
        &base,
        &patch(serde_json::json!([{"name": "Z", "$patch": "delete"}])),
        "",
    );
    assert!(missing.unwrap_err().contains("which the base lacks"));
    let replace = strategic_merge(
        &base,
        &patch(serde_json::json!([{"name": "A", "$patch": "replace"}])),
        "",
    );
    assert!(replace.unwrap_err().contains("not supported"));

    // The renderer gives what kubectl's kustomize gives (kubectl is on the project's machines; a checkout without it
    // still has the checks above and the replay below, which use this renderer).
    let Ok(out) = Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
    else {
        eprintln!("skipped the comparison with kubectl kustomize: no kubectl on PATH");
        return;
    };
    assert!(out.status.success());
    for (dir, ..) in KIND_OVERLAYS {
        let out = Command::new("kubectl")
            .args([
                "kustomize",
                "--load-restrictor",
                "LoadRestrictionsNone",
                dir,
            ])
            .current_dir(root())
            .env("KUBECONFIG", "/dev/null")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{dir}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let kubectl: Value =
            serde_saphyr::from_str(&String::from_utf8(out.stdout).unwrap()).unwrap();
        assert_eq!(
            render_overlay(dir).unwrap(),
            kubectl,
            "{dir}: the renderer and kubectl kustomize differ"
        );
    }
}

/// The facts of the demo's HostedCluster a NodePool is checked against, as the NodePool pulse reads them from the
/// control plane's work: the HostedCluster the controlplane adapter builds from the demo's cluster spec, running the
/// version the script's injected status reports.
fn demo_control_plane() -> hypershift_adapter::hyperfleet::nodepool::ControlPlane {
    use hypershift_adapter::hyperfleet::cluster::{ClusterInput, ClusterSpec};
    let input = ClusterInput::from_json(&read(KIND_CLUSTER_SPEC)).unwrap();
    let spec = ClusterSpec::validate(
        input.id.as_deref().unwrap(),
        input.name.as_deref(),
        &input.spec,
    )
    .unwrap_or_else(|v| panic!("{KIND_CLUSTER_SPEC}: {v:?}"));
    let hc = hypershift_adapter::hypershift::hostedcluster::hosted_cluster(&spec);
    let status: Value =
        serde_json::from_str(&script_literal(&read(KIND_SCRIPT), "hc_status")).unwrap();
    let version = status["version"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["state"] == "Completed")
        .and_then(|h| h["version"].as_str())
        .expect("the injected HostedCluster status has a Completed version")
        .to_owned();
    // The status reports the release the adapter asked for as the desired and completed one: no rollout.
    let image = hc["spec"]["release"]["image"].as_str().unwrap();
    assert_eq!(status["version"]["desired"]["image"], image);
    assert!(
        status["version"]["history"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["state"] == "Completed" && h["image"] == image)
    );
    let text = |pointer: &str| {
        hc.pointer(pointer)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    hypershift_adapter::hyperfleet::nodepool::ControlPlane {
        name: text("/metadata/name").unwrap_or_default(),
        platform: text("/spec/platform/type").unwrap_or_default(),
        region: text("/spec/platform/gcp/region"),
        psc_subnet: text("/spec/platform/gcp/networkConfig/privateServiceConnectSubnet/name"),
        release_image: text("/spec/release/image"),
        version,
    }
}

#[test]
fn kind_nodepool_is_valid_and_fits_the_demo_cluster() {
    use hypershift_adapter::hyperfleet::nodepool::{MAX_NAME_LEN, NodePoolInput, NodePoolSpec};
    let cluster: Value = serde_json::from_str(&read(KIND_CLUSTER_SPEC)).unwrap();
    let input = NodePoolInput::from_json(&read(KIND_NODEPOOL_SPEC)).unwrap();
    let id = input.id.clone().expect("an id");
    let name = input.name.clone().expect("a name");
    assert!(is_uuid_v7(&id), "{id}");
    assert!(name.len() <= MAX_NAME_LEN, "{name}");
    assert_eq!(
        input.cluster_id.as_deref(),
        cluster["id"].as_str(),
        "owner_references.id"
    );
    assert_eq!(input.generation, Some(1), "the first pulse's generation");
    assert_eq!(input.deleted_time, None);
    let spec = NodePoolSpec::validate(
        &id,
        input.cluster_id.as_deref().unwrap(),
        Some(&name),
        &input.spec,
    )
    .unwrap_or_else(|v| panic!("{KIND_NODEPOOL_SPEC} is invalid: {v:?}"));

    // It fits the demo's HostedCluster: GCP, a zone in its region, a release not newer than the control plane's.
    let control_plane = demo_control_plane();
    assert_eq!(control_plane.platform, "GCP");
    assert_eq!(
        control_plane.region.as_deref(),
        cluster["spec"]["platform"]["gcp"]["region"].as_str()
    );
    assert_eq!(
        control_plane.version,
        cluster["spec"]["release"]["version"].as_str().unwrap(),
        "the script's HostedCluster status must report the release the cluster spec asks for"
    );
    let violations = spec.check_against(&control_plane);
    assert!(violations.is_empty(), "{violations:?}");
    // The same check refuses a zone elsewhere and a newer release.
    let mut other = input.spec.clone();
    other["platform"]["gcp"]["zones"] = serde_json::json!(["us-central1-a"]);
    other["release"]["image"] = "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64".into();
    let other = NodePoolSpec::validate(&id, &spec.cluster_id, Some(&name), &other).unwrap();
    let fields: Vec<&str> = other
        .check_against(&control_plane)
        .iter()
        .map(|v| v.field)
        .collect();
    assert_eq!(fields, ["platform.gcp.zones", "release.image"]);

    // The script names the same NodePool.
    let script = read(KIND_SCRIPT);
    assert_eq!(script_var(&script, "NODEPOOL_ID"), id);
    assert_eq!(script_var(&script, "NODEPOOL_NAME"), name);
    assert_eq!(
        script_var(&script, "CLUSTER_ID"),
        cluster["id"].as_str().unwrap()
    );

    // Its Job, rendered with the demo's ids and the largest generation, is a name and labels the API server takes.
    let values: BTreeMap<String, String> = [
        ("nodepoolId", id.as_str()),
        ("clusterId", cluster["id"].as_str().unwrap()),
        ("generation", LONGEST_GENERATION),
        (
            "managementClusterConsumer",
            &script_var(&script, "CONSUMER"),
        ),
        ("imageTag", &script_var(&script, "TAG")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let rendered = render_overlay("manifests/kind/nodepool-pulse").unwrap();
    let job: Value = serde_json::from_str(&render(&rendered.to_string(), &values)).unwrap();
    let problems = job_name_and_label_problems(&job);
    assert!(problems.is_empty(), "{problems:?}");
    let job_name = str_at(&job, "/metadata/name");
    assert_eq!(job_name, format!("hs-np-{id}-g{LONGEST_GENERATION}"));
    assert!(job_name.len() <= 63, "{job_name}");
}

#[test]
fn kind_hub_rbac_lets_both_pulse_jobs_read_and_create_their_works() {
    let script = read(KIND_SCRIPT);
    let consumer = script_var(&script, "CONSUMER");
    let hub = documents(KIND_HUB_RBAC);
    let role: Role = typed(
        "hub-rbac Role",
        hub.iter().find(|d| d["kind"] == "Role").unwrap(),
    );
    let binding: RoleBinding = typed(
        "hub-rbac RoleBinding",
        hub.iter().find(|d| d["kind"] == "RoleBinding").unwrap(),
    );
    assert_eq!(role.metadata.namespace.as_deref(), Some(consumer.as_str()));
    assert_eq!(
        binding.metadata.namespace.as_deref(),
        Some(consumer.as_str())
    );
    assert_eq!(Some(&binding.role_ref.name), role.metadata.name.as_ref());
    let rules = rules_of(role.rules.as_deref().unwrap_or_default());
    for (dir, ..) in KIND_OVERLAYS {
        let job: Job = typed(dir, &render_overlay(dir).unwrap());
        let sa = pod_spec(&job).service_account_name.clone().unwrap();
        let ns = job.metadata.namespace.clone().unwrap();
        assert!(
            binding
                .subjects
                .iter()
                .flatten()
                .any(|s| s.kind == "ServiceAccount"
                    && s.name == sa
                    && s.namespace.as_deref() == Some(ns.as_str())),
            "{KIND_HUB_RBAC} does not bind {ns}/{sa}, which {dir} runs as"
        );
        // Both pulses get works by name (the NodePool's also the control plane's) and create theirs.
        for verb in ["get", "create"] {
            assert!(
                rules
                    .iter()
                    .any(|(g, r, v)| g == "work.open-cluster-management.io"
                        && r == "manifestworks"
                        && v.iter().any(|x| x == verb)),
                "{KIND_HUB_RBAC}: no {verb} on manifestworks"
            );
        }
    }
}

/// Stand-ins for the script's tools: `kubectl` records each call (its arguments, and what `apply -f -` reads) in a
/// directory per call, named so the calls sort in order, and prints the overlay the test rendered for `kustomize`;
/// `docker` and `kind` do nothing (no cluster exists yet, so `kind create cluster` runs too).
const FAKE_KUBECTL: &str = r#"#!/usr/bin/env bash
set -euo pipefail
call=$(mktemp -d "$FAKE_CALLS/$(date +%s%N)-XXXXXX")
printf '%s\0' "$@" >"$call/args"
case " $* " in
*" kustomize "*)
  overlay=${!#}
  cat "$FAKE_RENDERED/${overlay//\//_}.json"
  ;;
*" apply -f - "*) cat >"$call/stdin" ;;
esac
"#;
const FAKE_NOOP: &str = "#!/usr/bin/env bash\nexit 0\n";

/// One `kubectl` call of the script.
struct KubectlCall {
    namespace: Option<String>,
    args: Vec<String>,
    stdin: Option<String>,
}

/// Runs the script with the stand-ins; returns its `kubectl` calls in order.
fn run_kind_script(dir: &Path) -> Vec<KubectlCall> {
    let bin = dir.join("bin");
    let calls = dir.join("calls");
    let rendered = dir.join("rendered");
    for d in [&bin, &calls, &rendered] {
        std::fs::create_dir_all(d).unwrap();
    }
    for (name, text) in [
        ("kubectl", FAKE_KUBECTL),
        ("docker", FAKE_NOOP),
        ("kind", FAKE_NOOP),
    ] {
        let path = bin.join(name);
        std::fs::write(&path, text).unwrap();
        let mut permissions = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&path, permissions).unwrap();
    }
    for (overlay, ..) in KIND_OVERLAYS {
        let job = render_overlay(overlay).unwrap();
        std::fs::write(
            rendered.join(format!("{}.json", overlay.replace('/', "_"))),
            serde_json::to_string_pretty(&job).unwrap(),
        )
        .unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg(root().join(KIND_SCRIPT))
        .env("PATH", path)
        .env("FAKE_CALLS", &calls)
        .env("FAKE_RENDERED", &rendered)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{KIND_SCRIPT} failed with the stand-ins:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&calls)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    let result = dirs
        .iter()
        .map(|d| {
            let raw = std::fs::read(d.join("args")).unwrap();
            let mut all: Vec<String> = raw
                .split(|b| *b == 0)
                .map(|a| String::from_utf8(a.to_vec()).unwrap())
                .collect();
            all.pop(); // after the last NUL
            let mut namespace = None;
            let mut args = Vec::new();
            let mut it = all.into_iter();
            while let Some(a) = it.next() {
                if a == "-n" {
                    namespace = it.next();
                } else {
                    args.push(a);
                }
            }
            let stdin = std::fs::read_to_string(d.join("stdin")).ok();
            KubectlCall {
                namespace,
                args,
                stdin,
            }
        })
        .collect();
    // The next run starts with no calls.
    std::fs::remove_dir_all(&calls).unwrap();
    result
}

/// What the kind cluster would hold, as far as the pulses see it: the ConfigMaps the script wrote, the Jobs that
/// exist (a Job applied again under its name does not run again), the ManifestWorks on an API server.
struct KindReplay {
    server: testbed::kube_api::ApiServer,
    dir: tempfile::TempDir,
    config_maps: BTreeMap<(String, String), BTreeMap<String, String>>,
    jobs: BTreeMap<(String, String), BTreeMap<String, String>>,
    /// Each Job that ran: its name and the report its adapter wrote.
    ran: Vec<(String, job_report::Report)>,
    /// The `(group, resource, verb, namespace)` of every request the adapters made.
    requests: Vec<(String, String, String, String)>,
}

const WORKS_PREFIX: &str = "/apis/work.open-cluster-management.io/v1";

impl KindReplay {
    async fn replay(&mut self, calls: Vec<KubectlCall>) {
        for call in calls {
            let ns = call
                .namespace
                .clone()
                .unwrap_or_else(|| "default".to_owned());
            let args: Vec<&str> = call.args.iter().map(String::as_str).collect();
            match args.as_slice() {
                ["create", "configmap", name, rest @ ..] => {
                    let mut data = BTreeMap::new();
                    for flag in rest {
                        if let Some(kv) = flag.strip_prefix("--from-literal=") {
                            let (k, v) = kv.split_once('=').unwrap();
                            data.insert(k.to_owned(), v.to_owned());
                        } else if let Some(kv) = flag.strip_prefix("--from-file=") {
                            let (k, path) = kv.split_once('=').unwrap();
                            data.insert(k.to_owned(), read(path));
                        } else {
                            assert!(
                                ["--dry-run=client", "-o", "yaml"].contains(flag),
                                "create configmap {flag}"
                            );
                        }
                    }
                    self.config_maps.insert((ns, (*name).to_owned()), data);
                }
                ["apply", "-f", "-"] => {
                    let text = call.stdin.unwrap_or_default();
                    // The ConfigMap pipe: the stand-in's `create` printed nothing, the ConfigMap is recorded above.
                    if text.trim().is_empty() {
                        continue;
                    }
                    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
                    for doc in docs.into_iter().filter(|d| !d.is_null()) {
                        assert_eq!(
                            doc["kind"], "Job",
                            "the script applies from stdin only Jobs"
                        );
                        self.run_job(doc).await;
                    }
                }
                ["apply", "-f", file] => assert!(root().join(file).is_file(), "{file}"),
                [
                    "patch",
                    "manifestwork",
                    name,
                    "--subresource=status",
                    "--type=merge",
                    "-p",
                    patch,
                ] => {
                    self.patch_status(&ns, name, patch).await;
                }
                ["delete", "job", "-l", selector, "--ignore-not-found"] => {
                    let (k, v) = selector.split_once('=').unwrap();
                    self.jobs.retain(|(n, _), labels| {
                        *n != ns || labels.get(k).map(String::as_str) != Some(v)
                    });
                }
                ["delete", "manifestwork", rest @ ..] => {
                    let (flag, names) = rest.split_last().unwrap();
                    assert_eq!(*flag, "--ignore-not-found");
                    for name in names {
                        self.server
                            .delete_object(WORKS_PREFIX, "manifestworks", Some(&ns), name);
                    }
                }
                ["kustomize" | "wait" | "get" | "describe" | "config", ..] => {}
                other => panic!("the replay does not know `kubectl {other:?}`; teach it"),
            }
        }
    }

    /// Runs the adapter container of `job` as the kubelet would: ConfigMap volumes as files, the results volume as
    /// a directory, the env as written, the hub reached with the API server's kubeconfig.
    async fn run_job(&mut self, job: Value) {
        let name = str_at(&job, "/metadata/name").to_owned();
        let ns = str_at(&job, "/metadata/namespace").to_owned();
        let typed_job: Job = typed(&name, &job);
        let labels: BTreeMap<String, String> =
            typed_job.metadata.labels.clone().unwrap_or_default();
        if self.jobs.contains_key(&(ns.clone(), name.clone())) {
            return; // unchanged: no new pod
        }
        self.jobs.insert((ns.clone(), name.clone()), labels);
        let pod = pod_spec(&typed_job);
        let adapter = container(pod, "adapter");
        let pod_dir = self.dir.path().join(&name);
        let mut mounts: Vec<(String, PathBuf)> = Vec::new();
        for (i, mount) in adapter.volume_mounts.iter().flatten().enumerate() {
            let dir = pod_dir.join(format!("volume-{i}"));
            std::fs::create_dir_all(&dir).unwrap();
            let volume = pod
                .volumes
                .iter()
                .flatten()
                .find(|v| v.name == mount.name)
                .unwrap_or_else(|| panic!("{name}: no volume {}", mount.name));
            if let Some(cm) = &volume.config_map {
                let data = self
                    .config_maps
                    .get(&(ns.clone(), cm.name.clone()))
                    .unwrap_or_else(|| {
                        panic!("{name}: ConfigMap {} was not created before it", cm.name)
                    });
                for item in cm.items.iter().flatten() {
                    let text = data.get(&item.key).unwrap_or_else(|| {
                        panic!("{name}: ConfigMap {} has no {}", cm.name, item.key)
                    });
                    std::fs::write(dir.join(&item.path), text).unwrap();
                }
            } else {
                assert!(
                    volume.empty_dir.is_some(),
                    "{name}: volume {} is neither a ConfigMap nor an emptyDir; kind has nothing else",
                    volume.name
                );
            }
            mounts.push((mount.mount_path.clone(), dir));
        }
        let local = |value: &str| {
            mounts
                .iter()
                .find_map(|(at, dir)| {
                    value
                        .strip_prefix(at.as_str())
                        .and_then(|rest| rest.strip_prefix('/'))
                        .map(|rest| dir.join(rest).display().to_string())
                })
                .unwrap_or_else(|| value.to_owned())
        };
        let mut env: BTreeMap<String, String> = adapter
            .env
            .iter()
            .flatten()
            .map(|e| {
                (
                    e.name.clone(),
                    local(
                        e.value
                            .as_deref()
                            .unwrap_or_else(|| panic!("{name}: {} has no value", e.name)),
                    ),
                )
            })
            .collect();
        // The NodePool the pulse reads is the one HyperFleet would send at the Job's generation.
        if let Some(file) = env.get("NODEPOOL_SPEC_FILE") {
            let nodepool: Value =
                serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
            assert_eq!(
                nodepool["generation"].to_string(),
                env["GENERATION"],
                "{name}: the ConfigMap's NodePool is at another generation than the Job"
            );
        }
        let kubeconfig = self.server.write_kubeconfig(&pod_dir);
        env.insert("KUBECONFIG".to_owned(), kubeconfig.display().to_string());
        let before = self.server.requests().len();
        let out = tokio::process::Command::new(testbed::binaries::path("hypershift-adapter"))
            .args(adapter.args.iter().flatten())
            .env_clear()
            .envs(&env)
            .output()
            .await
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for r in &self.server.requests()[before..] {
            let parts: Vec<&str> = r.path.trim_start_matches('/').split('/').collect();
            let (group, ns, resource, named) = match parts.as_slice() {
                ["apis", group, _, "namespaces", ns, resource, rest @ ..] => {
                    (*group, *ns, *resource, !rest.is_empty())
                }
                _ => panic!(
                    "{name}: the adapter requested {} {}, not a namespaced resource",
                    r.method, r.path
                ),
            };
            let verb = match (r.method.as_str(), named) {
                ("GET", true) => "get",
                ("GET", false) => "list",
                ("POST", _) => "create",
                ("PUT", _) => "update",
                ("PATCH", _) => "patch",
                ("DELETE", _) => "delete",
                (m, _) => panic!("{name}: {m} {}", r.path),
            };
            self.requests.push((
                group.to_owned(),
                resource.to_owned(),
                verb.to_owned(),
                ns.to_owned(),
            ));
        }
        let report = job_report::parse(
            &std::fs::read(&env["RESULTS_OUTPUT_PATH"]).unwrap(),
            "Available",
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        self.ran.push((name, report));
    }

    /// `kubectl patch manifestwork <name> --subresource=status --type=merge -p <patch>`; the work must still be one
    /// the ManifestWork CRD accepts.
    async fn patch_status(&self, ns: &str, name: &str, patch: &str) {
        use kube::api::{Api, DynamicObject, Patch, PatchParams};
        let patch: Value = serde_json::from_str(patch)
            .unwrap_or_else(|e| panic!("the status patch of {name} is not JSON ({e}): {patch}"));
        let api: Api<DynamicObject> = Api::namespaced_with(
            self.server.client().await,
            ns,
            &hypershift_adapter::work::hub::manifest_work_resource(),
        );
        api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap_or_else(|e| panic!("patch the status of {ns}/{name}: {e}"));
        let work = self
            .server
            .object(WORKS_PREFIX, "manifestworks", Some(ns), name)
            .unwrap();
        let schema = testbed::openapi::crd_schema(&root().join(KIND_MANIFESTWORK_CRD), "v1");
        let outcome = testbed::openapi::validate(&schema, &work);
        assert!(
            outcome.errors.is_empty(),
            "{name} after the patch: {:?}",
            outcome.errors
        );
        // The status fed back is one the object's real CRD accepts (the team's CRD fixtures, when beside the
        // checkout).
        let Some(crds) = job_report::team_folder::find(env!("CARGO_MANIFEST_DIR"), "fixtures/crds")
        else {
            return;
        };
        for manifest in patch["status"]["resourceStatus"]["manifests"]
            .as_array()
            .unwrap()
        {
            let meta = &manifest["resourceMeta"];
            let file = format!(
                "{}.{}-TechPreviewNoUpgrade.yaml",
                meta["resource"].as_str().unwrap(),
                meta["group"].as_str().unwrap()
            );
            let schema =
                testbed::openapi::crd_schema(&crds.join(&file), meta["version"].as_str().unwrap());
            for value in manifest["statusFeedback"]["values"].as_array().unwrap() {
                let raw = value["fieldValue"]["jsonRaw"].as_str().unwrap();
                let status: Value = serde_json::from_str(raw).unwrap();
                let outcome = testbed::openapi::validate(&schema["properties"]["status"], &status);
                assert!(
                    outcome.errors.is_empty(),
                    "the {} status fed back on {name} is not one {file} accepts: {:?}",
                    meta["kind"],
                    outcome.errors
                );
            }
        }
    }
}

/// A condition as (type, status, reason).
type Triple = (String, String, String);

fn reasons(report: &job_report::Report) -> Vec<Triple> {
    report
        .conditions
        .iter()
        .map(|c| {
            (
                c.type_.clone(),
                c.status.as_str().to_owned(),
                c.reason.clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kind_demo_replays_to_a_ready_nodepool_with_the_real_adapter() {
    let script = read(KIND_SCRIPT);
    let cluster_id = script_var(&script, "CLUSTER_ID");
    let nodepool_id = script_var(&script, "NODEPOOL_ID");
    let consumer = script_var(&script, "CONSUMER");
    let nodepool: Value = serde_json::from_str(&read(KIND_NODEPOOL_SPEC)).unwrap();
    let cluster: Value = serde_json::from_str(&read(KIND_CLUSTER_SPEC)).unwrap();
    let replicas = nodepool["spec"]["replicas"].as_i64().unwrap();
    let release = cluster["spec"]["release"]["version"].as_str().unwrap();
    let mut replay = KindReplay {
        server: testbed::kube_api::ApiServer::start().await,
        dir: tempfile::tempdir().unwrap(),
        config_maps: BTreeMap::new(),
        jobs: BTreeMap::new(),
        ran: Vec::new(),
        requests: Vec::new(),
    };
    let cp = |g: u32| format!("hs-cp-{cluster_id}-g{g}");
    let np = |g: u32| format!("hs-np-{nodepool_id}-g{g}");
    let t = |c: &str, s: &str, r: &str| (c.to_owned(), s.to_owned(), r.to_owned());
    let mut first: Vec<(String, Vec<Triple>)> = Vec::new();
    // Twice: a second run on the same cluster must show the same steps.
    for run in 0..2 {
        let calls = run_kind_script(replay.dir.path());
        replay.ran.clear();
        replay.replay(calls).await;
        let names: Vec<&str> = replay.ran.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [cp(1), cp(2), np(1), np(2)],
            "run {run}: the Jobs that ran"
        );
        let report = |i: usize| &replay.ran[i].1;
        assert_eq!(
            report(0).condition("Applied").unwrap().reason,
            "ManifestWorkCreated"
        );
        assert_eq!(
            report(0).condition("Available").unwrap().status.as_str(),
            "False"
        );
        // Pulse 2 is generation 2 (same spec): the work is brought to it, and generation 2 is not
        // reflected until the agent applies it; the message names the serving control plane.
        assert_eq!(
            reasons(report(1)),
            [
                t("Applied", "True", "ManifestWorkUpdated"),
                t("Available", "False", "Updating"),
                t("Health", "True", "NoIssues"),
            ],
            "the second control-plane pulse: {:?}",
            report(1).conditions
        );
        assert!(
            report(1).condition("Available").unwrap().message.contains(
                "HostedCluster of generation 1 on the management cluster: Available=True (ControlPlaneReady)"
            ),
            "{:?}",
            report(1).conditions
        );
        assert_eq!(
            reasons(report(2)),
            [
                t("Applied", "True", "ManifestWorkCreated"),
                t("Available", "False", "Provisioning"),
                t("Health", "True", "NoIssues"),
            ],
            "the first NodePool pulse: {:?}",
            report(2).conditions
        );
        assert_eq!(report(2).observed_generation, Some(1));
        let ready = report(3);
        assert_eq!(
            reasons(ready),
            [
                t("Applied", "True", "ManifestWorkUpdated"),
                t("Available", "False", "Updating"),
                t("Health", "True", "NoIssues"),
            ],
            "the second NodePool pulse: {:?}",
            ready.conditions
        );
        let data = ready.data.clone().unwrap();
        assert_eq!(data["desired_replicas"], replicas);
        assert_eq!(data["current_replicas"], replicas);
        assert_eq!(data["ready_nodes"], replicas);
        assert_eq!(data["unready_nodes"], 0);
        assert_eq!(data["version"], release);
        assert_eq!(data["node_versions"][0]["ocp_version"], release);
        // The work now holds generation 2, and the NodePool the feedback was injected for.
        let work = replay
            .server
            .object(
                WORKS_PREFIX,
                "manifestworks",
                Some(&consumer),
                &format!("nodepool-{nodepool_id}"),
            )
            .unwrap();
        assert_eq!(
            work["metadata"]["annotations"]["hyperfleet.io/generation"],
            "2"
        );
        let manifests = work["spec"]["workload"]["manifests"].as_array().unwrap();
        let meta = &work["status"]["resourceStatus"]["manifests"][0]["resourceMeta"];
        let ordinal = usize::try_from(meta["ordinal"].as_u64().unwrap()).unwrap();
        assert_eq!(manifests[ordinal]["kind"], meta["kind"]);
        assert_eq!(manifests[ordinal]["metadata"]["name"], meta["name"]);
        assert_eq!(
            manifests[ordinal]["metadata"]["namespace"],
            meta["namespace"]
        );
        let hc_work = replay
            .server
            .object(
                WORKS_PREFIX,
                "manifestworks",
                Some(&consumer),
                &format!("hostedcluster-{cluster_id}"),
            )
            .unwrap();
        let hc_meta = &hc_work["status"]["resourceStatus"]["manifests"][0]["resourceMeta"];
        let hc_ordinal = usize::try_from(hc_meta["ordinal"].as_u64().unwrap()).unwrap();
        assert_eq!(
            hc_work["spec"]["workload"]["manifests"][hc_ordinal]["kind"],
            hc_meta["kind"]
        );

        let run_reasons: Vec<(String, Vec<Triple>)> = replay
            .ran
            .iter()
            .map(|(n, r)| (n.clone(), reasons(r)))
            .collect();
        if run == 0 {
            first = run_reasons;
        } else {
            assert_eq!(run_reasons, first, "the second run differs from the first");
        }
    }

    // Everything the adapters did on the hub is granted by manifests/kind/hub-rbac.yaml.
    let hub = documents(KIND_HUB_RBAC);
    let role: Role = typed(
        "hub-rbac Role",
        hub.iter().find(|d| d["kind"] == "Role").unwrap(),
    );
    let granted = rules_of(role.rules.as_deref().unwrap_or_default());
    let used: BTreeSet<(String, String, String, String)> =
        replay.requests.iter().cloned().collect();
    assert!(
        used.iter().any(|(_, _, v, _)| v == "create") && used.iter().any(|(_, _, v, _)| v == "get")
    );
    for (group, resource, verb, ns) in &used {
        assert_eq!(
            Some(ns),
            role.metadata.namespace.as_ref(),
            "{verb} {resource} in {ns}"
        );
        assert!(
            granted
                .iter()
                .any(|(g, r, v)| g == group && r == resource && v.contains(verb)),
            "{KIND_HUB_RBAC} does not grant {verb} on {group}/{resource}; the pulses use it"
        );
    }
}
