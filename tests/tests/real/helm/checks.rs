//! What the Helm suite holds the rendered and stored objects to.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use base64::Engine;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::api::{Api, ListParams, PostParams};
use kube::discovery::Discovery;
use serde_json::{Value, json};
use testbed::real::helm::{find, kind_name, namespace_objects, repo_path};

use super::site::{Adapter, Broker, IMAGE, PUBSUB_PROJECT, SiteFiles};

/// Helm's words when it refused (stderr).
pub fn refusal(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_owned()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo_path(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

fn yaml(rel: &str) -> Value {
    serde_saphyr::from_str(&read(rel)).unwrap_or_else(|e| panic!("parse {rel}: {e}"))
}

/// A ConfigMap value against the file it came from: the chart's template puts one empty line
/// before the text of every file it packages (`key: |` then `nindent`), which YAML keeps; the rest
/// is the file, byte for byte.
pub fn same_as_file(value: Option<&str>, file: &Path) -> anyhow::Result<()> {
    let shown = file.display();
    let value = value.with_context(|| format!("no ConfigMap key for {shown}"))?;
    let text = std::fs::read_to_string(file).with_context(|| format!("read {shown}"))?;
    let Some(rest) = value.strip_prefix('\n') else {
        bail!("the ConfigMap value of {shown} does not start with the chart's empty line");
    };
    if rest != text {
        let at = rest
            .bytes()
            .zip(text.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        bail!(
            "the ConfigMap value of {shown} differs from the file at byte {at} (lengths {} and {})",
            rest.len(),
            text.len()
        );
    }
    Ok(())
}

/// The env variables a task config requires of the Deployment (`params` with `source: env.X` and
/// `required: true`).
fn required_env(task_config: &str) -> Vec<String> {
    yaml(task_config)["params"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["required"] == true)
        .filter_map(|p| {
            p["source"]
                .as_str()?
                .strip_prefix("env.")
                .map(str::to_owned)
        })
        .collect()
}

/// One adapter's render: the objects the chart makes, its ConfigMaps against our files, the
/// Deployment's identity, security context, args and env, and the broker.
pub fn rendered_adapter(
    adapter: &Adapter,
    broker: Broker,
    site: &SiteFiles,
    docs: &[Value],
) -> anyhow::Result<()> {
    let mut kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    kinds.sort_unstable();
    ensure!(
        kinds
            == [
                "ConfigMap",
                "ConfigMap",
                "ConfigMap",
                "Deployment",
                "PodDisruptionBudget",
                "Service"
            ],
        "rendered kinds {kinds:?}: no RBAC, ServiceAccount or Secret of the chart's"
    );
    let config = find(docs, "ConfigMap", "-config")?;
    same_as_file(
        config["data"]["adapter-config.yaml"].as_str(),
        &repo_path(adapter.adapter_config),
    )?;
    let task = find(docs, "ConfigMap", "-task")?;
    same_as_file(
        task["data"]["task-config.yaml"].as_str(),
        &repo_path(adapter.task_config),
    )?;
    for cm in [config, task] {
        ensure!(
            cm["data"].as_object().map(serde_json::Map::len) == Some(1),
            "{}: extra keys",
            kind_name(cm)
        );
    }
    let adapter_config = yaml(adapter.adapter_config);
    ensure!(adapter_config["clients"]["broker"]["subscription_id"] == adapter.subscription);

    let deployment = find(docs, "Deployment", "")?;
    let pod = &deployment["spec"]["template"]["spec"];
    let annotations = &deployment["spec"]["template"]["metadata"]["annotations"];
    ensure!(
        annotations["checksum/config"].is_string()
            && annotations["checksum/task-config"].is_string()
    );
    ensure!(pod["serviceAccountName"] == "hypershift-adapter-framework");
    let chart = yaml("manifests/helm/upstream-chart/values.yaml");
    ensure!(
        pod["securityContext"] == chart["podSecurityContext"],
        "pod securityContext changed"
    );
    let containers = pod["containers"].as_array().context("containers")?;
    ensure!(containers.len() == 1, "one container");
    let c = &containers[0];
    ensure!(
        c["securityContext"] == chart["securityContext"],
        "container securityContext changed"
    );
    ensure!(c["image"] == format!("{}/{}:{}", IMAGE.0, IMAGE.1, IMAGE.2));
    let mut args = chart["args"].as_array().context("chart args")?.clone();
    args.extend([json!("--broker-topic"), json!(adapter.topic)]);
    ensure!(c["args"] == Value::Array(args), "args {}", c["args"]);

    let env = c["env"].as_array().context("env")?;
    let names: Vec<&str> = env.iter().filter_map(|e| e["name"].as_str()).collect();
    ensure!(
        names.len() == names.iter().collect::<BTreeSet<_>>().len(),
        "duplicate env names {names:?}"
    );
    let value = |name: &str| env.iter().find(|e| e["name"] == name);
    for name in required_env(adapter.task_config) {
        let entry = value(&name)
            .with_context(|| format!("env {name} (required by the task config) missing"))?;
        ensure!(
            entry["value"].as_str().is_some_and(|v| !v.is_empty())
                || entry["valueFrom"].is_object(),
            "env {name} is empty"
        );
    }
    ensure!(value("HYPERFLEET_API_BASE_URL").is_some_and(|e| e["value"] == site.api_url));
    for (name, v) in &site.env {
        ensure!(value(name).is_some_and(|e| e["value"] == *v), "env {name}");
    }

    let broker_yaml: Value = serde_saphyr::from_str(
        find(docs, "ConfigMap", "-broker")?["data"]["broker.yaml"]
            .as_str()
            .context("broker.yaml")?,
    )?;
    match broker {
        Broker::RabbitMq => {
            let rabbit = &broker_yaml["broker"]["rabbitmq"];
            ensure!(broker_yaml["broker"]["type"] == "rabbitmq");
            ensure!(
                rabbit["exchange"] == adapter.topic && rabbit["url"] == site.bare_amqp_url,
                "{rabbit}"
            );
            ensure!(value("HYPERFLEET_BROKER_TOPIC").is_none());
            let from = &value("BROKER_RABBITMQ_URL").context("BROKER_RABBITMQ_URL")?["valueFrom"]["secretKeyRef"];
            ensure!(
                from["name"] == "hypershift-adapter-broker" && from["key"] == "BROKER_RABBITMQ_URL"
            );
        }
        Broker::PubSub => {
            let pubsub = &broker_yaml["broker"]["googlepubsub"];
            ensure!(
                pubsub["project_id"] == PUBSUB_PROJECT && pubsub["topic"] == adapter.topic,
                "{pubsub}"
            );
            ensure!(value("HYPERFLEET_BROKER_TOPIC").is_some_and(|e| e["value"] == adapter.topic));
            ensure!(
                value("HYPERFLEET_BROKER_SUBSCRIPTION_ID")
                    .is_some_and(|e| e["value"] == adapter.subscription)
            );
            ensure!(value("BROKER_RABBITMQ_URL").is_none());
        }
    }
    token_mount(&adapter_config, pod, c)
}

/// The framework's API token: the chart's projected ServiceAccount token at adapter-config.yaml's
/// path, with the same audience, expiry and file as both pulse Jobs' `hyperfleet-api-token`.
fn token_mount(adapter_config: &Value, pod: &Value, c: &Value) -> anyhow::Result<()> {
    let path = adapter_config["clients"]["hyperfleet_api"]["auth"]["token_path"]
        .as_str()
        .context("auth.token_path")?;
    let (dir, _) = path.rsplit_once('/').context("token_path")?;
    let volume_at = |pod: &Value, c: &Value| -> anyhow::Result<Value> {
        let mount = c["volumeMounts"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| m["mountPath"] == dir)
            .with_context(|| format!("nothing mounted at {dir}"))?;
        let volume = pod["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["name"] == mount["name"])
            .context("the token volume")?;
        Ok(volume["projected"]["sources"].clone())
    };
    let framework = volume_at(pod, c)?;
    for job in ["manifests/job.yaml", "manifests/nodepool-job.yaml"] {
        let spec = &yaml(job)["spec"]["template"]["spec"];
        let adapter = &spec["containers"][0];
        ensure!(
            volume_at(spec, adapter)? == framework,
            "{job}'s HyperFleet API token {} differs from the framework's {framework}",
            volume_at(spec, adapter)?
        );
    }
    ensure!(
        framework
            == json!([{"serviceAccountToken": {
                "audience": "hyperfleet-api", "expirationSeconds": 600, "path": "token"}}]),
        "{framework}"
    );
    Ok(())
}

/// `rel`'s documents with `hyperfleet-system` replaced by `namespace`.
pub fn loose(rel: &str, namespace: &str) -> Vec<Value> {
    let text = read(rel).replace(
        "namespace: hyperfleet-system",
        &format!("namespace: {namespace}"),
    );
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    docs.into_iter().filter(|d| !d.is_null()).collect()
}

/// hypershift-adapter-base's render: the loose RBAC object for object, and the Secrets the Jobs
/// mount with the keys they mount, holding the files given.
pub fn rendered_base(docs: &[Value], namespace: &str, site: &SiteFiles) -> anyhow::Result<()> {
    let by_name = |docs: Vec<Value>| {
        let mut docs = docs;
        docs.sort_by_key(kind_name);
        docs
    };
    let rbac: Vec<Value> = docs
        .iter()
        .filter(|d| d["kind"] != "Secret")
        .cloned()
        .collect();
    let mut expected = loose("manifests/rbac.yaml", namespace);
    expected.extend(loose("manifests/hyperfleet/rbac.yaml", namespace));
    ensure!(
        by_name(rbac) == by_name(expected),
        "the base chart's RBAC differs from the loose YAML"
    );

    let decode = |secret: &Value, key: &str| -> anyhow::Result<Vec<u8>> {
        let text = secret["data"][key]
            .as_str()
            .with_context(|| format!("{} has no {key}", kind_name(secret)))?;
        Ok(base64::engine::general_purpose::STANDARD.decode(text)?)
    };
    for job in ["manifests/job.yaml", "manifests/nodepool-job.yaml"] {
        for volume in yaml(job)["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let Some(name) = volume["secret"]["secretName"].as_str() else {
                continue;
            };
            let secret = find(docs, "Secret", name)?;
            for item in volume["secret"]["items"].as_array().into_iter().flatten() {
                decode(secret, item["key"].as_str().unwrap_or_default())?;
            }
        }
    }
    // The projected ServiceAccount token by default: no static HyperFleet API token Secret.
    ensure!(find(docs, "Secret", "hypershift-adapter-hyperfleet-api").is_err());
    let files = [
        ("hypershift-adapter-maestro", "token", &site.maestro_token),
        ("hypershift-adapter-maestro", "ca.crt", &site.maestro_ca),
    ];
    for (name, key, file) in files {
        ensure!(
            decode(find(docs, "Secret", name)?, key)? == std::fs::read(file)?,
            "{name} {key}"
        );
    }
    let url = decode(
        find(docs, "Secret", "hypershift-adapter-broker")?,
        "BROKER_RABBITMQ_URL",
    )?;
    ensure!(
        url == std::fs::read_to_string(&site.rabbitmq_url)?
            .trim()
            .as_bytes(),
        "the broker URL"
    );
    Ok(())
}

/// Whether the real authorizer lets the ServiceAccount `sa` (namespace, name) do it.
pub async fn can(
    client: &kube::Client,
    sa: (&str, &str),
    (namespace, group, resource, verb): (&str, &str, &str, &str),
) -> anyhow::Result<bool> {
    let (sa_namespace, name) = sa;
    let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
    let review: SubjectAccessReview = serde_json::from_value(json!({
        "spec": {
            "user": format!("system:serviceaccount:{sa_namespace}:{name}"),
            "groups": ["system:serviceaccounts", format!("system:serviceaccounts:{sa_namespace}"), "system:authenticated"],
            "resourceAttributes": {
                "namespace": namespace, "group": group, "resource": resource,
                "subresource": subresource, "verb": verb
            }
        }
    }))?;
    let answer = Api::<SubjectAccessReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await?;
    Ok(answer.status.is_some_and(|s| s.allowed))
}

/// A question for the authorizer and its expected answer: (ServiceAccount namespace and name),
/// namespace, API group, resource (`resource/subresource`), verb, allowed.
type Grant<'a> = ((&'a str, &'a str), &'a str, &'a str, &'a str, &'a str, bool);

/// The grants of both identities, asked of the real authorizer: what the framework and the pulse
/// Jobs use, and nothing next to it (other verbs, other resources, other namespaces).
pub async fn grants(client: &kube::Client, ns: &str) -> anyhow::Result<()> {
    let framework = (ns, "hypershift-adapter-framework");
    let job = (ns, "hypershift-adapter");
    let cases: &[Grant] = &[
        (framework, ns, "batch", "jobs", "get", true),
        (framework, ns, "batch", "jobs", "create", true),
        (framework, ns, "batch", "jobs", "list", false),
        (framework, ns, "batch", "jobs", "update", false),
        (framework, ns, "batch", "jobs", "delete", false),
        (framework, ns, "batch", "jobs/status", "patch", false),
        (framework, ns, "", "pods", "get", false),
        (framework, ns, "", "secrets", "get", false),
        (framework, "default", "batch", "jobs", "create", false),
        (job, ns, "batch", "jobs/status", "get", true),
        (job, ns, "batch", "jobs/status", "patch", true),
        (job, ns, "", "pods", "get", true),
        (job, ns, "", "pods", "list", true),
        (job, ns, "", "pods", "watch", true),
        // The status-reporter's one Event per run: create, nothing else, not the core group's.
        (job, ns, "events.k8s.io", "events", "create", true),
        (job, ns, "events.k8s.io", "events", "patch", false),
        (job, ns, "events.k8s.io", "events", "update", false),
        (job, ns, "events.k8s.io", "events", "get", false),
        (job, ns, "events.k8s.io", "events", "list", false),
        (job, ns, "", "events", "create", false),
        (job, "default", "events.k8s.io", "events", "create", false),
        (job, ns, "coordination.k8s.io", "leases", "get", true),
        (job, ns, "coordination.k8s.io", "leases", "create", true),
        (job, ns, "coordination.k8s.io", "leases", "update", true),
        (job, ns, "coordination.k8s.io", "leases", "delete", false),
        (job, ns, "coordination.k8s.io", "leases", "list", false),
        (job, ns, "batch", "jobs", "create", false),
        (job, ns, "batch", "jobs", "get", false),
        (job, ns, "batch", "jobs/status", "update", false),
        (job, ns, "", "secrets", "get", false),
        (job, "default", "", "pods", "get", false),
    ];
    let mut wrong = Vec::new();
    for &(sa, namespace, group, resource, verb, allowed) in cases {
        if can(client, sa, (namespace, group, resource, verb)).await? != allowed {
            wrong.push(format!(
                "{} {verb} {group}/{resource} in {namespace}: expected {allowed}",
                sa.1
            ));
        }
    }
    ensure!(wrong.is_empty(), "grants: {wrong:#?}");
    Ok(())
}

/// The ReplicaSet the deployment controller made for `deployment`'s current pod template.
pub async fn wait_for_replica_set(
    client: &kube::Client,
    ns: &str,
    deployment: &Deployment,
) -> anyhow::Result<String> {
    let uid = deployment.metadata.uid.clone().unwrap_or_default();
    let wanted = deployment
        .spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.annotations.clone());
    let api: Api<ReplicaSet> = Api::namespaced(client.clone(), ns);
    for _ in 0..150 {
        for rs in api.list(&ListParams::default()).await?.items {
            let owned = rs
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.uid == uid);
            let annotations = rs
                .spec
                .as_ref()
                .and_then(|s| s.template.as_ref())
                .and_then(|t| t.metadata.as_ref())
                .and_then(|m| m.annotations.clone());
            if owned && annotations == wanted {
                return Ok(rs.metadata.name.unwrap_or_default());
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    bail!("no ReplicaSet for the current template of the Deployment after 30 s")
}

/// The upgrade changed the task config's checksum, not the adapter config's: a new pod template.
pub fn rolled(first: &Deployment, second: &Deployment) -> anyhow::Result<()> {
    let checksum = |d: &Deployment, key: &str| {
        d.spec
            .as_ref()?
            .template
            .metadata
            .as_ref()?
            .annotations
            .as_ref()?
            .get(key)
            .cloned()
    };
    ensure!(checksum(first, "checksum/config") == checksum(second, "checksum/config"));
    let (a, b) = (
        checksum(first, "checksum/task-config"),
        checksum(second, "checksum/task-config"),
    );
    ensure!(a.is_some() && a != b, "checksum/task-config {a:?} -> {b:?}");
    ensure!(
        second.metadata.generation > first.metadata.generation,
        "the Deployment's generation"
    );
    Ok(())
}

/// After the uninstalls: the namespace holds what it held before (Events aside), and no
/// cluster-scoped RBAC names it.
pub async fn nothing_left(
    client: &kube::Client,
    discovery: &Discovery,
    ns: &str,
    before: &BTreeSet<String>,
) -> anyhow::Result<()> {
    let mut now = BTreeSet::new();
    for _ in 0..120 {
        now = namespace_objects(client, discovery, ns).await?;
        if &now == before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let left: Vec<&String> = now.difference(before).collect();
    let gone: Vec<&String> = before.difference(&now).collect();
    ensure!(
        left.is_empty() && gone.is_empty(),
        "after uninstall: left {left:?}, gone {gone:?}"
    );
    let ours = |annotations: Option<&std::collections::BTreeMap<String, String>>| {
        annotations
            .and_then(|a| a.get("meta.helm.sh/release-namespace"))
            .is_some_and(|n| n == ns)
    };
    let roles = Api::<ClusterRole>::all(client.clone())
        .list(&ListParams::default())
        .await?;
    let bindings = Api::<ClusterRoleBinding>::all(client.clone())
        .list(&ListParams::default())
        .await?;
    ensure!(
        !roles
            .items
            .iter()
            .any(|r| ours(r.metadata.annotations.as_ref())),
        "a ClusterRole is left"
    );
    ensure!(
        !bindings
            .items
            .iter()
            .any(|r| ours(r.metadata.annotations.as_ref())),
        "a ClusterRoleBinding is left"
    );
    Ok(())
}

/// A pulse Job the installed framework created: the task config's Job with the site's settings,
/// and the upgrade's annotation exactly when `upgraded`.
pub fn pulse_job(
    job: &k8s_openapi::api::batch::v1::Job,
    site: &SiteFiles,
    upgraded: bool,
) -> anyhow::Result<()> {
    let job = serde_json::to_value(job)?;
    let annotations = &job["metadata"]["annotations"];
    ensure!(
        annotations["hyperfleet.io/generation"] == "1",
        "{annotations}"
    );
    ensure!(
        (annotations["helm-suite/task-config"] == "upgraded") == upgraded,
        "the Job's annotations {annotations}: upgraded config expected {upgraded}"
    );
    let pod = &job["spec"]["template"]["spec"];
    ensure!(pod["serviceAccountName"] == "hypershift-adapter");
    let adapter = pod["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == "adapter")
        .context("the adapter container")?;
    let env = |name: &str| {
        adapter["env"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["name"] == name)
            .map(|e| e["value"].clone())
    };
    let site_env = |name: &str| {
        site.env
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let tag = site_env("ADAPTER_IMAGE_TAG").context("ADAPTER_IMAGE_TAG")?;
    ensure!(
        adapter["image"] == format!("hypershift-adapter:{tag}"),
        "{}",
        adapter["image"]
    );
    ensure!(env("HYPERFLEET_API_URL") == Some(json!(site.api_url)));
    for name in [
        "MANAGEMENT_CLUSTER_CONSUMER",
        "MAESTRO_API_URL",
        "MAESTRO_GRPC_URL",
    ] {
        ensure!(
            env(name) == site_env(name).map(Value::from),
            "the Job's {name}"
        );
    }
    Ok(())
}

/// The framework's first report for a Job that has not reported: `JobRunning`, Unknown, on
/// Applied, Available and Health, as adapter `hypershift` at generation 1.
pub fn job_running(report: &Value) -> anyhow::Result<()> {
    ensure!(
        report["adapter"] == "hypershift" && report["observed_generation"] == 1,
        "{report}"
    );
    for type_ in ["Applied", "Available", "Health"] {
        let condition = report["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == type_)
            .with_context(|| format!("no {type_} in {report}"))?;
        ensure!(
            condition["status"] == "Unknown" && condition["reason"] == "JobRunning",
            "{type_}: {condition}"
        );
    }
    Ok(())
}
