//! The framework as the chart installed it, run as a process: what a kubelet would start from the
//! stored Deployment (its container's command, args and env, its volumes' ConfigMaps and Secrets)
//! on the kit's real servers, through `testbed::real::framework` (a private network namespace
//! with forwarders to the kit).
//!
//! A kubelet mounts volumes at absolute paths (`/etc/adapter`, `/etc/broker/broker.yaml`,
//! `/var/run/secrets/hyperfleet`) and gives the Pod its ServiceAccount in-cluster. A process on
//! the shared machine cannot have either, so [`kubelet_view`] writes each mounted volume into a
//! directory of the test and rewrites every argument and env value that names a mounted path to
//! that directory; in-cluster access becomes a kubeconfig with a token of the Pod's
//! ServiceAccount from the real TokenRequest API (`HYPERFLEET_KUBERNETES_KUBE_CONFIG_PATH`), and
//! the API token file the adapter config names (`auth.token_path`, inside the chart's projected
//! ServiceAccount token mount) becomes `HYPERFLEET_API_AUTH_TOKEN_PATH` to the same file, holding a
//! token the real TokenRequest API minted with the volume's audience and expiry.
//! Everything else is the stored objects as they are.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail, ensure};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Container, Secret, Volume};
use kube::api::{Api, DeleteParams};
use serde_json::{Value, json};
use testbed::real::framework::{Framework, FrameworkSpec};
use testbed::real::helm::{Helm, Release, repo_path};
use testbed::real::hyperfleet_api::HyperfleetApi;
use testbed::real::kube_access::{projected_token, service_account_kubeconfig};
use testbed::real::sentinel::{Resources, Sentinel, SentinelSpec};
use testbed::real::wait::eventually;
use testbed::real::{RealSystems, unique};

use super::checks::{job_running, pulse_job, refusal, rolled, same_as_file};
use super::site::{Adapter, Broker, SiteFiles};
use super::{STEP, UPSTREAM, base_release};

/// The command of the chart's container (`values.yaml` `command`), which the kit's framework
/// binary stands for.
const CHART_COMMAND: &str = "/app/adapter";

/// Files of one mounted volume: file name → content.
type Files = BTreeMap<String, Vec<u8>>;
/// A volume's `items`: (key, file name) pairs.
type Items = Vec<(String, String)>;

/// What the stored Deployment `name` in `ns` would run, as a [`FrameworkSpec`]; the mounted files
/// are written under `dir`.
///
/// # Errors
/// When the Deployment uses something a kubelet would have to provide that this does not
/// (a fieldRef, a volume kind other than projected ConfigMaps and ServiceAccount tokens, ConfigMaps and
/// Secrets), or the
/// chart's command or argument shape changed.
pub async fn kubelet_view(
    real: &RealSystems,
    client: &kube::Client,
    ns: &str,
    name: &str,
    dir: &Path,
) -> anyhow::Result<FrameworkSpec> {
    let deployment = Api::<Deployment>::namespaced(client.clone(), ns)
        .get(name)
        .await?;
    let pod = deployment
        .spec
        .and_then(|s| s.template.spec)
        .context("no pod template")?;
    let [container] = pod.containers.as_slice() else {
        bail!("{} containers", pod.containers.len());
    };
    ensure!(
        container.command.as_deref() == Some(&[CHART_COMMAND.to_owned()][..]),
        "command {:?}",
        container.command
    );
    let volumes = pod.volumes.unwrap_or_default();
    let mut mounts: Vec<(String, PathBuf)> = Vec::new();
    for mount in container.volume_mounts.iter().flatten() {
        let volume = volumes
            .iter()
            .find(|v| v.name == mount.name)
            .with_context(|| format!("no volume {}", mount.name))?;
        let account = pod.service_account_name.as_deref().unwrap_or("default");
        let files = volume_files(client, (ns, account), volume).await?;
        let local = dir.join(&mount.name);
        std::fs::create_dir_all(&local)?;
        for (file, content) in &files {
            std::fs::write(local.join(file), content)?;
        }
        let target = match mount.sub_path.as_deref() {
            Some(sub) if !sub.is_empty() => local.join(sub),
            _ => local,
        };
        mounts.push((mount.mount_path.clone(), target));
    }
    // Longest mount path first, so a path is mapped by its closest mount.
    mounts.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
    let local = |path: &str| -> Option<PathBuf> {
        mounts.iter().find_map(|(mount, target)| {
            let rest = path.strip_prefix(mount.as_str())?;
            if rest.is_empty() {
                Some(target.clone())
            } else {
                rest.strip_prefix('/').map(|rest| target.join(rest))
            }
        })
    };
    let rewrite = |value: &str| match local(value) {
        Some(path) => path.to_string_lossy().into_owned(),
        None => value.to_owned(),
    };

    let args: Vec<String> = container
        .args
        .iter()
        .flatten()
        .map(|a| rewrite(a))
        .collect();
    ensure!(
        args.len() >= 5
            && args[0] == "serve"
            && args[1] == "--config"
            && args[3] == "--task-config",
        "args {args:?}: not the chart's serve --config … --task-config …"
    );
    let (config, task_config) = (args[2].clone(), args[4].clone());
    let mut env = container_env(client, ns, container, &rewrite).await?;

    // In-cluster access: the Pod's ServiceAccount, with a token from the real TokenRequest API.
    let account = pod
        .service_account_name
        .as_deref()
        .context("no serviceAccountName")?;
    let kubeconfig =
        service_account_kubeconfig(real, client, ns, account, 3600, &dir.join("kubeconfig"))
            .await?;
    env.insert(
        "HYPERFLEET_KUBERNETES_KUBE_CONFIG_PATH".into(),
        kubeconfig.to_string_lossy().into_owned(),
    );
    // The API token file the adapter config names, inside its projected token's mount.
    let adapter_config: Value = serde_saphyr::from_str(&std::fs::read_to_string(&config)?)?;
    let token_path = adapter_config["clients"]["hyperfleet_api"]["auth"]["token_path"]
        .as_str()
        .context("auth.token_path")?;
    let token = local(token_path).with_context(|| format!("nothing mounted at {token_path}"))?;
    ensure!(token.is_file(), "{} is not a mounted file", token_path);
    env.insert(
        "HYPERFLEET_API_AUTH_TOKEN_PATH".into(),
        token.to_string_lossy().into_owned(),
    );

    Ok(FrameworkSpec {
        name: name.to_owned(),
        config: PathBuf::from(&config),
        task_config: PathBuf::from(task_config),
        args: args[5..].to_vec(),
        env,
    })
}

/// The container's env as a process gets it: values (paths under a mount rewritten), Secret and
/// ConfigMap keys resolved.
async fn container_env(
    client: &kube::Client,
    ns: &str,
    container: &Container,
    rewrite: &dyn Fn(&str) -> String,
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut env = BTreeMap::new();
    for var in container.env.iter().flatten() {
        let value = match (&var.value, &var.value_from) {
            (Some(value), None) => rewrite(value),
            (None, Some(from)) => {
                if let Some(key) = &from.secret_key_ref {
                    let secret = Api::<Secret>::namespaced(client.clone(), ns)
                        .get(&key.name)
                        .await?;
                    let bytes = secret
                        .data
                        .and_then(|d| d.get(&key.key).cloned())
                        .with_context(|| format!("{} has no {}", key.name, key.key))?;
                    String::from_utf8(bytes.0)?
                } else if let Some(key) = &from.config_map_key_ref {
                    let cm = Api::<ConfigMap>::namespaced(client.clone(), ns)
                        .get(&key.name)
                        .await?;
                    cm.data
                        .and_then(|d| d.get(&key.key).cloned())
                        .with_context(|| format!("{} has no {}", key.name, key.key))?
                } else {
                    bail!("env {}: a valueFrom this runner does not resolve", var.name);
                }
            }
            _ => String::new(),
        };
        ensure!(
            env.insert(var.name.clone(), value).is_none(),
            "env {} twice",
            var.name
        );
    }
    Ok(env)
}

/// The files a volume puts in its mount (a projected ServiceAccount token as the kubelet asks for
/// it, for the pod's ServiceAccount `account`).
async fn volume_files(
    client: &kube::Client,
    (ns, account): (&str, &str),
    volume: &Volume,
) -> anyhow::Result<Files> {
    let mut files = Files::new();
    let config_maps: Vec<(String, Option<Items>)> = if let Some(projected) = &volume.projected {
        let mut sources = Vec::new();
        for source in projected.sources.iter().flatten() {
            if let Some(token) = &source.service_account_token {
                let minted = projected_token(client, (ns, account), token, None).await?;
                files.insert(token.path.clone(), minted.into_bytes());
                continue;
            }
            let cm = source
                .config_map
                .as_ref()
                .with_context(|| format!("volume {}: a projected non-ConfigMap", volume.name))?;
            sources.push((cm.name.clone(), items(cm.items.as_deref())));
        }
        sources
    } else if let Some(cm) = &volume.config_map {
        vec![(cm.name.clone(), items(cm.items.as_deref()))]
    } else if let Some(secret) = &volume.secret {
        let name = secret.secret_name.clone().unwrap_or_default();
        let stored = Api::<Secret>::namespaced(client.clone(), ns)
            .get(&name)
            .await?;
        let data = stored.data.unwrap_or_default();
        for (key, path) in select(&data, items(secret.items.as_deref())) {
            let bytes = data
                .get(&key)
                .with_context(|| format!("{name} has no {key}"))?;
            files.insert(path, bytes.0.clone());
        }
        return Ok(files);
    } else {
        bail!("volume {}: a kind this runner does not mount", volume.name);
    };
    for (name, wanted) in config_maps {
        let data = Api::<ConfigMap>::namespaced(client.clone(), ns)
            .get(&name)
            .await?
            .data
            .unwrap_or_default();
        for (key, path) in select(&data, wanted) {
            let text = data
                .get(&key)
                .with_context(|| format!("{name} has no {key}"))?;
            files.insert(path, text.clone().into_bytes());
        }
    }
    Ok(files)
}

/// `items` as `(key, path)` pairs; `None` for all keys.
fn items(items: Option<&[k8s_openapi::api::core::v1::KeyToPath]>) -> Option<Items> {
    items.map(|items| {
        items
            .iter()
            .map(|i| (i.key.clone(), i.path.clone()))
            .collect()
    })
}

/// The `(key, file)` pairs a volume mounts from `data`: its items, or every key as a file.
fn select<V>(data: &BTreeMap<String, V>, items: Option<Items>) -> Items {
    items.unwrap_or_else(|| data.keys().map(|k| (k.clone(), k.clone())).collect())
}

/// The Job's annotations in both task configs, and the one the upgrade adds after them.
const JOB_ANNOTATIONS: &str =
    "        annotations:\n          hyperfleet.io/generation: \"{{ .generation }}\"\n";
/// The annotation the upgraded task config gives its Job.
pub const UPGRADED: &str = "helm-suite/task-config";
/// The label Sentinel selects the test's objects by (no `-` in the key: `testbed::real::sentinel`).
const LABEL: &str = "testrun";

/// The acceptance run of one adapter's release: the framework as the chart installed it (the
/// stored Deployment's command, args and env, its mounted ConfigMaps and Secrets:
/// [`kubelet_view`]) runs against the real HyperFleet API, RabbitMQ and API server, becomes
/// ready, creates the pulse Job for the event Sentinel publishes and reports `JobRunning`; after
/// `helm upgrade` with a changed task config (the Job gets one more annotation) and the roll (the
/// old process stopped, the new template's started, the first Job gone as by its TTL), the next
/// pulse Job is the new config's. The HyperFleet objects made are pushed on `made` (for cleanup).
///
/// The kit is shared, so the releases go into the test's namespace `ns`, and the task config is
/// the shipped one with `hyperfleet-system` (where it puts the Jobs) replaced by `ns`; the topic
/// is the test's own (the documented override of `args` and the exchange). The ConfigMap's
/// RabbitMQ URL is a closed port: only `BROKER_RABBITMQ_URL` from the Secret reaches the broker.
///
/// # Errors
/// The first step that does not happen, with the framework's and Sentinel's last log lines.
pub async fn through_the_chart(
    real: &RealSystems,
    helm: &Helm,
    client: &kube::Client,
    ns: &str,
    api: &HyperfleetApi,
    adapter: &Adapter,
    made: &mut Vec<String>,
) -> anyhow::Result<()> {
    let site = SiteFiles::new(real);
    let id = unique("helmpulse");
    let resources = if adapter.release.ends_with("nodepool") {
        Resources::NodePools
    } else {
        Resources::Clusters
    };
    let topic = format!("{id}-{}", resources.plural());
    let values = site.values_with(Broker::RabbitMq, |v| {
        v["broker"]["rabbitmq"]["url"] = json!("amqp://127.0.0.1:1/");
    });
    let chart: Value = serde_saphyr::from_str(&std::fs::read_to_string(repo_path(&format!(
        "{UPSTREAM}/values.yaml"
    )))?)?;
    let mut args = chart["args"].as_array().cloned().unwrap_or_default();
    args.extend([json!("--broker-topic"), json!(topic)]);
    let own_topic = site.write_json(
        "topic.yaml",
        &json!({"args": args, "broker": {"rabbitmq": {"exchange": topic}}}),
    );
    let shipped = std::fs::read_to_string(repo_path(adapter.task_config))?;
    ensure!(
        shipped.matches("hyperfleet-system").count() == 3 && shipped.contains(JOB_ANNOTATIONS),
        "{}: the namespace or the Job's annotations moved",
        adapter.task_config
    );
    let here = shipped.replace("hyperfleet-system", ns);
    let task = site.write("task-config.yaml", &here);
    let release = Release::new(adapter.release, UPSTREAM, ns)
        .values(repo_path(adapter.values))
        .values(&values)
        .values(&own_topic)
        .set_file("adapterConfig.yaml", repo_path(adapter.adapter_config))
        .set_file("adapterTaskConfig.yaml", &task);
    helm.install(&base_release(ns, &site))?;
    helm.install(&release)?;
    let name = format!("{}-hyperfleet-adapter", release.name);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let first = deployments.get(&name).await?;

    // Short paths: the runner's unix sockets live there.
    let run = tempfile::Builder::new().prefix("hp").tempdir_in("/tmp")?;
    let spec = kubelet_view(real, client, ns, &name, &run.path().join("m1")).await?;
    same_as_file(Some(&std::fs::read_to_string(&spec.task_config)?), &task)?;
    let mut framework = start_framework(real, spec, &run.path().join("f1")).await?;
    let sentinel = SentinelSpec::new(resources, &topic, (LABEL, &id));
    let sentinel = Sentinel::start(real, sentinel, &run.path().join("s")).await?;

    let (href, job_name) = pulse_object(api, resources, &id, made).await?;
    let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
    let job_named = |what: &'static str| {
        let (jobs, job_name) = (jobs.clone(), job_name.clone());
        eventually(STEP, what, move || {
            let (jobs, job_name) = (jobs.clone(), job_name.clone());
            async move { Ok(jobs.get_opt(&job_name).await?) }
        })
    };
    let logs = |framework: &Framework| {
        format!(
            "framework:\n{}\nsentinel:\n{}",
            framework.log_tail(30),
            sentinel.log_tail(10)
        )
    };
    let job = job_named("the pulse Job")
        .await
        .map_err(|e| e.context(logs(&framework)))?;
    pulse_job(&job, &site, false)?;
    let report = eventually(STEP, "the framework's report", || async {
        api.status_of(&href, "hypershift").await
    })
    .await?;
    job_running(&report)?;

    let changed = here.replacen(
        JOB_ANNOTATIONS,
        &format!("{JOB_ANNOTATIONS}          {UPGRADED}: upgraded\n"),
        1,
    );
    let upgraded = release.set_file(
        "adapterTaskConfig.yaml",
        site.write("upgraded.yaml", &changed),
    );
    let out = helm.upgrade(&upgraded)?;
    ensure!(out.status.success(), "upgrade: {}", refusal(&out));
    rolled(&first, &deployments.get(&name).await?)?;
    framework.stop();
    jobs.delete(&job_name, &DeleteParams::background()).await?;
    eventually(STEP, "the first Job gone", || async {
        Ok(jobs.get_opt(&job_name).await?.is_none().then_some(()))
    })
    .await?;
    let spec = kubelet_view(real, client, ns, &name, &run.path().join("m2")).await?;
    let framework = start_framework(real, spec, &run.path().join("f2")).await?;
    let job = job_named("the pulse Job of the new task config")
        .await
        .map_err(|e| e.context(logs(&framework)))?;
    pulse_job(&job, &site, true)
}

/// The HyperFleet object whose event makes the pulse: a cluster (its other adapters report
/// `Available=True`), or a NodePool of a cluster (its `validation` reports). Its href and the
/// pulse Job's name at generation 1.
async fn pulse_object(
    api: &HyperfleetApi,
    resources: Resources,
    id: &str,
    made: &mut Vec<String>,
) -> anyhow::Result<(String, String)> {
    let labels = json!({ LABEL: id });
    let cluster = api
        .create_cluster(
            &format!("{id}-helm"),
            &labels,
            &testbed::local_pulse::cluster_object()["spec"],
        )
        .await?;
    let cluster_href = cluster["href"].as_str().unwrap_or_default().to_owned();
    made.push(cluster_href.clone());
    let (object, others, prefix) = match resources {
        Resources::Clusters => (cluster, &["validation", "dns", "pullsecret"][..], "hs-cp"),
        Resources::NodePools => {
            let nodepool = api
                .create_nodepool(
                    &cluster_href,
                    "workers-euw2-a1",
                    &labels,
                    &testbed::nodepool::gcp_spec(3, "4.17.0"),
                )
                .await?;
            (nodepool, &["validation"][..], "hs-np")
        }
    };
    let href = object["href"].as_str().unwrap_or_default().to_owned();
    if href != cluster_href {
        made.push(href.clone());
    }
    for other in others {
        ensure!(
            api.report_as(&href, other, true).await? == 201,
            "{other}'s report on {href}"
        );
    }
    let object_id = object["id"].as_str().unwrap_or_default();
    Ok((href, format!("{prefix}-{object_id}-g1")))
}

/// [`Framework::start`]; when it fails, its error lines too (the usage text it prints after an
/// error fills the tail the runner quotes).
async fn start_framework(
    real: &RealSystems,
    spec: FrameworkSpec,
    dir: &Path,
) -> anyhow::Result<Framework> {
    let log = dir.join(format!("framework-{}.log", spec.name));
    Framework::start(real, spec, dir).await.map_err(|e| {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let errors: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("\"level\":\"ERROR\"") || l.starts_with("Error:"))
            .collect();
        e.context(format!("its errors:\n{}", errors.join("\n")))
    })
}
