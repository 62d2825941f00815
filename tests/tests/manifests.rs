//! The manifests under `manifests/` against the binaries that run in them and the rules of the design:
//! every Kubernetes object parses as its k8s-openapi type with no unknown or misspelled field, every env var
//! is one the binaries accept (read from their `--help`), the containers are locked down, RBAC is exactly what
//! the containers use, the Job's deadlines fit together, no secret is inline, and the kind demo script names
//! only files that exist.
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
    "kind/kind-config.yaml",
    "kind/pulse/kustomization.yaml",
];
/// A strategic merge patch (it carries `$patch` directives): parsed as a Job, but not round-tripped.
const JOB_PATCH_FILE: &str = "kind/pulse/hub-backend.yaml";

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

/// Every `.yaml` file under `manifests/`, relative to it, sorted.
fn manifest_files() -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
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
            let mut names = env_markers(&help("hypershift-adapter", &[&sub, "--help"]));
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
        JOB_PATCH_FILE,
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
                "Job" if file == JOB_PATCH_FILE => {
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
        Some("Applied,Available,Health")
    );
}

#[test]
fn container_names_and_results_path_match_what_the_binaries_read() {
    let job = job();
    let pod = pod_spec(&job);
    let adapter = container(pod, "adapter");
    let reporter = container(pod, "status-reporter");

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
    let watched = env_value(reporter, "ADAPTER_CONTAINER_NAME").unwrap_or("adapter");
    assert_eq!(watched, adapter.name);

    // Both sides of the hand-off name the same file, inside the shared volume.
    let written = env_value(adapter, "RESULTS_OUTPUT_PATH").expect("adapter RESULTS_OUTPUT_PATH");
    let read = env_value(reporter, "RESULTS_PATH").expect("reporter RESULTS_PATH");
    assert_eq!(written, read);
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

#[test]
fn every_env_var_of_the_reporter_is_one_it_accepts() {
    let accepted = reporter_env();
    let job = job();
    let reporter = container(pod_spec(&job), "status-reporter");
    let unknown: Vec<String> = env_names(reporter)
        .into_iter()
        .filter(|n| !accepted.contains(n))
        .collect();
    assert!(
        unknown.is_empty(),
        "status-reporter does not read {unknown:?}; it accepts {accepted:?}"
    );
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
    let job = job();
    let pod = pod_spec(&job);
    let pod_sc = pod.security_context.as_ref().expect("pod securityContext");
    assert_eq!(pod_sc.run_as_non_root, Some(true));
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

#[test]
fn deadlines_ttl_and_volume_size_fit_together() {
    let job = job();
    let spec = job.spec.as_ref().unwrap();
    let deadline = spec.active_deadline_seconds.expect("activeDeadlineSeconds");
    let adapter = container(pod_spec(&job), "adapter");
    let budget: i64 = env_value(adapter, "RETRY_BUDGET_SECONDS")
        .expect("RETRY_BUDGET_SECONDS")
        .parse()
        .unwrap();
    // The adapter's budget, plus the attempt in flight when it runs out, ends before the reporter
    // stops waiting; otherwise a Maestro outage reads as AdapterTimeout instead of MaestroUnavailable.
    let request_timeout =
        i64::try_from(hypershift_adapter::maestro::config::DEFAULT_TIMEOUT.as_secs()).unwrap();
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
    let job = job();
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
                "{}: {} must be a file path, not the secret itself",
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
            assert!(
                volume.secret.is_some(),
                "{}: {path} is not from a Secret",
                e.name
            );
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
        ])
    );
    let job = job();
    let namespace = job.metadata.namespace.clone().unwrap();
    assert_eq!(role.metadata.namespace.as_ref(), Some(&namespace));
    assert_eq!(binding.metadata.namespace.as_ref(), Some(&namespace));
    assert_eq!(sa.metadata.namespace.as_ref(), Some(&namespace));
    assert_eq!(
        pod_spec(&job).service_account_name,
        sa.metadata.name.clone()
    );
    assert_eq!(binding.role_ref.kind, "Role");
    assert_eq!(Some(&binding.role_ref.name), role.metadata.name.as_ref());
    let subjects = binding.subjects.unwrap_or_default();
    assert_eq!(subjects.len(), 1);
    assert_eq!(subjects[0].kind, "ServiceAccount");
    assert_eq!(Some(&subjects[0].name), sa.metadata.name.as_ref());
    assert_eq!(subjects[0].namespace.as_ref(), Some(&namespace));

    // `hypershift-adapter nodes`: nodes [get, list] cluster-wide, leases [get, list] in kube-node-lease.
    let nodes = documents("manifests/rbac-nodes.yaml");
    let cluster_roles: Vec<ClusterRole> = nodes
        .iter()
        .filter(|d| d["kind"] == "ClusterRole")
        .map(|d| typed("rbac-nodes.yaml ClusterRole", d))
        .collect();
    assert_eq!(cluster_roles.len(), 1);
    assert_eq!(
        rules_of(cluster_roles[0].rules.as_deref().unwrap_or_default()),
        BTreeSet::from([rule("", "nodes", &["get", "list"])])
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

    // kind / hub backend: ManifestWorks [get, create] in the consumer namespace only.
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
            &["get", "create"]
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
/// Keys of the controlplane report's `data`, read back from the Job's `data.hyperfleet.io/<k>` annotations.
const DATA_KEYS: [&str; 2] = ["control_plane_endpoint", "version"];
const TASK_CONFIG: &str = "manifests/hyperfleet/adapter-task-config.yaml";
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
fn task_config_problems(config: &Value, job: &Value, adapter_name: &str) -> Vec<String> {
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
    match param("clusterId") {
        Some(p) if p["source"] == "event.id" && p["required"] == true => {}
        other => problem(format!(
            "clusterId must be required, from event.id: {other:?}"
        )),
    }
    let cluster_param = params
        .iter()
        .find(|p| p["source"]["api_call"].is_object())
        .cloned()
        .unwrap_or_default();
    if cluster_param["source"]["api_call"]["method"] != "GET"
        || cluster_param["source"]["api_call"]["url"] != "/clusters/{{ .clusterId }}"
        || cluster_param["required"] != true
    {
        problem(format!(
            "the cluster must come from a required GET /clusters/{{{{ .clusterId }}}} param: {cluster_param}"
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
    for awaited in AWAITED_CONDITIONS {
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
        problem("the task config's Job drifted from manifests/job.yaml".to_owned());
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
                if types != MANDATORY_TYPES {
                    problem(format!(
                        "payload {name}: condition types {types:?}, expected {MANDATORY_TYPES:?}"
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
            if keys.contains(&"expression") || keys.contains(&"field") || keys != DATA_KEYS {
                problem(format!(
                    "payload {name}: data must be an object with keys {DATA_KEYS:?}, got {data}"
                ));
            }
            for key in DATA_KEYS {
                let reads = str_at(data, &format!("/{key}/expression"))
                    .contains(&format!("\"data.hyperfleet.io/{key}\""));
                if !reads {
                    problem(format!(
                        "payload {name}: data.{key} must read the Job annotation data.hyperfleet.io/{key}"
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
        if call["method"] != "PUT" || call["url"] != "/clusters/{{ .clusterId }}/statuses" {
            problem(format!(
                "post action {}: must be PUT /clusters/{{{{ .clusterId }}}}/statuses",
                action["name"]
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
    let problems = task_config_problems(&document(TASK_CONFIG), &job_doc(), &adapter_name());
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
        let problems = task_config_problems(&bad, &job, &name);
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
        assert!(
            base.get("secret").is_some(),
            "only Secret volumes are dropped"
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
    let input = hypershift_adapter::cluster::ClusterInput::from_json(&read(
        "manifests/kind/cluster-spec.json",
    ))
    .unwrap();
    let id = input.id.clone().expect("cluster-spec.json has an id");
    hypershift_adapter::cluster::ClusterSpec::validate(&id, input.name.as_deref(), &input.spec)
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
