//! Installing the way HyperFleet installs adapters (issue 25, `docs/helm.md`): the framework's own
//! chart (`manifests/helm/upstream-chart`, vendored at 3f746a5) with `manifests/helm/controlplane.yaml`
//! or `nodepool.yaml` plus a site file made from `site.example.yaml`, and `hypershift-adapter-base`
//! beside them, with the kit's real Helm and API server: lint and render for both releases and both
//! broker types, the ConfigMaps against the files under `manifests/hyperfleet/`, the base chart
//! against the loose RBAC, every object server-side applied, the grants checked by the real
//! authorizer, and install → upgrade (the checksum rolls the Deployment) → uninstall (nothing left).

mod checks;
mod pulse;
mod site;

use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ServiceAccount};
use kube::api::{Api, DeleteParams, PostParams};
use kube::discovery::Discovery;
use serde_json::json;
use testbed::real::helm::{
    Helm, Release, apply_all, documents, find, merge_patch_all, namespace_objects, repo_path,
};
use testbed::real::hyperfleet_api::HyperfleetApi;
use testbed::real::{RealSystems, unique};

use site::{ADAPTERS, Adapter, Broker, SiteFiles};

const SUITE: &str = "real::helm";
const UPSTREAM: &str = "manifests/helm/upstream-chart";
const BASE: &str = "manifests/helm/hypershift-adapter-base";
/// `git rev-parse 3f746a5:charts` in openshift-hyperfleet/hyperfleet-adapter (UPSTREAM.md).
const UPSTREAM_TREE: &str = "f205ad9f301d65c16d8cc38d3c61a0f68dca458f";
/// A deadline for one step of a pulse: Sentinel polls every second and debounces 2 s.
const STEP: Duration = Duration::from_secs(120);

/// The kit and its Helm, or `None` after the suite's skip line.
fn kit() -> Option<(&'static RealSystems, Helm)> {
    let real = RealSystems::get(SUITE)?;
    let helm = Helm::new(Path::new(real.var("HELM_BIN")), real.kubeconfig()).unwrap();
    Some((real, helm))
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The adapter's release in `namespace`: the chart's values, ours, the site's, and the two files.
fn adapter_release(adapter: &Adapter, namespace: &str, site: impl Into<PathBuf>) -> Release {
    Release::new(adapter.release, UPSTREAM, namespace)
        .values(repo_path(adapter.values))
        .values(site)
        .set_file("adapterConfig.yaml", repo_path(adapter.adapter_config))
        .set_file("adapterTaskConfig.yaml", repo_path(adapter.task_config))
}

/// hypershift-adapter-base in `namespace` with the site's Secrets: none for the HyperFleet API,
/// whose token is the projected ServiceAccount token (the default).
fn base_release(namespace: &str, site: &SiteFiles) -> Release {
    Release::new("hypershift-adapter-base", BASE, namespace)
        .set_file("secrets.maestro.token", &site.maestro_token)
        .set_file("secrets.maestro.caCrt", &site.maestro_ca)
        .set_file("secrets.rabbitmqUrl", &site.rabbitmq_url)
}

#[test]
fn the_vendored_chart_is_upstreams_tree_at_its_commit() {
    let dir = repo_path(UPSTREAM);
    assert_eq!(
        site::git_tree_id(&dir, &["LICENSE", "UPSTREAM.md"]),
        UPSTREAM_TREE,
        "{} differs from openshift-hyperfleet/hyperfleet-adapter charts/ at 3f746a5 (UPSTREAM.md)",
        dir.display()
    );
    let license = std::fs::read_to_string(dir.join("LICENSE")).unwrap();
    assert!(license.contains("Apache License") && license.contains("Version 2.0"));
    let note = std::fs::read_to_string(dir.join("UPSTREAM.md")).unwrap();
    assert!(
        note.contains(UPSTREAM_TREE) && note.contains("3f746a57cb42ffa295bbc0d1181c1257ed270a65")
    );
}

#[test]
fn both_adapters_lint_and_render_with_either_broker() {
    let Some((real, helm)) = kit() else { return };
    let site = SiteFiles::new(real);
    for adapter in &ADAPTERS {
        for broker in [Broker::RabbitMq, Broker::PubSub] {
            let release = adapter_release(adapter, "hyperfleet-system", site.values(broker));
            helm.lint(&release)
                .unwrap_or_else(|e| panic!("{} {broker:?}: {e:#}", adapter.release));
            let docs = documents(&helm.template(&release).unwrap()).unwrap();
            checks::rendered_adapter(adapter, broker, &site, &docs)
                .unwrap_or_else(|e| panic!("{} {broker:?}: {e:#}", adapter.release));
        }
    }
}

/// Why `rbac.create` is false in both values files: the chart's RBAC is cluster-wide.
#[test]
fn the_charts_own_rbac_would_be_cluster_wide() {
    let Some((real, helm)) = kit() else { return };
    let site = SiteFiles::new(real);
    let release = adapter_release(
        &ADAPTERS[0],
        "hyperfleet-system",
        site.values(Broker::RabbitMq),
    )
    .set("rbac.create", "true");
    let docs = documents(&helm.template(&release).unwrap()).unwrap();
    let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    assert!(
        kinds.contains(&"ClusterRole") && kinds.contains(&"ClusterRoleBinding"),
        "{kinds:?}"
    );
    assert!(
        !kinds.contains(&"Role") && !kinds.contains(&"RoleBinding"),
        "{kinds:?}"
    );
}

#[test]
fn the_base_chart_renders_the_loose_rbac_and_the_jobs_secrets() {
    let Some((real, helm)) = kit() else { return };
    let site = SiteFiles::new(real);
    let release = base_release("hyperfleet-system", &site);
    helm.lint(&release).unwrap();
    let docs = documents(&helm.template(&release).unwrap()).unwrap();
    checks::rendered_base(&docs, "hyperfleet-system", &site).unwrap();

    // Bring-your-own Secrets: none rendered.
    let own = release.clone().set("secrets.create", "false");
    let docs = documents(&helm.template(&own).unwrap()).unwrap();
    assert!(docs.iter().all(|d| d["kind"] != "Secret"));

    // The static token, the other way: its Secret, holding the file; without the file, refused.
    let static_token = release.clone().set("hyperfleetApi.auth.enabled", "false");
    let refused = checks::refusal(&helm.try_template(&static_token).unwrap());
    assert!(
        refused.contains("secrets.hyperfleetApi.token is required"),
        "{refused}"
    );
    let static_token = static_token.set_file("secrets.hyperfleetApi.token", &site.api_token);
    let docs = documents(&helm.template(&static_token).unwrap()).unwrap();
    let secret = find(&docs, "Secret", "hypershift-adapter-hyperfleet-api").unwrap();
    let token = std::fs::read(&site.api_token).unwrap();
    assert_eq!(secret["data"]["token"], json!(base64_encode(&token)));

    // A misspelled key.
    let typo = release.set("secret.create", "false");
    let refused = checks::refusal(&helm.try_template(&typo).unwrap());
    assert!(
        refused.contains("additional properties 'secret' not allowed"),
        "{refused}"
    );
}

/// What a copy of `site.example.yaml` left as shipped gives: the chart's own refusals.
#[test]
fn the_site_example_is_refused_until_it_is_set() {
    let Some((_, helm)) = kit() else { return };
    let example = repo_path("manifests/helm/site.example.yaml");
    let release = adapter_release(&ADAPTERS[0], "hyperfleet-system", &example);
    let refused = checks::refusal(&helm.try_template(&release).unwrap());
    assert!(refused.contains("image.registry must be set"), "{refused}");
    let release = release
        .set("image.registry", "quay.io")
        .set(
            "image.repository",
            "openshift-hyperfleet/hyperfleet-adapter",
        )
        .set("image.tag", "v0.3.1");
    let refused = checks::refusal(&helm.try_template(&release).unwrap());
    assert!(
        refused.contains("broker.rabbitmq.url is required when broker type is rabbitmq"),
        "{refused}"
    );
    let release = release.set(
        "broker.rabbitmq.url",
        "amqp://rabbitmq.hyperfleet-system.svc:5672/",
    );
    helm.template(&release).unwrap();
}

/// A fresh namespace of this test; deleted by [`drop_namespace`].
async fn namespace(client: &kube::Client, prefix: &str) -> String {
    let name = unique(prefix);
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    // The controllers add the default ServiceAccount and kube-root-ca.crt; wait for both, so a
    // listing taken now is the namespace's own.
    let sa: Api<ServiceAccount> = Api::namespaced(client.clone(), &name);
    let cm: Api<ConfigMap> = Api::namespaced(client.clone(), &name);
    for _ in 0..100 {
        if sa.get_opt("default").await.unwrap().is_some()
            && cm.get_opt("kube-root-ca.crt").await.unwrap().is_some()
        {
            return name;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("namespace {name}: no default ServiceAccount or kube-root-ca.crt after 10 s");
}

async fn drop_namespace(client: &kube::Client, name: &str) {
    let _ = Api::<Namespace>::all(client.clone())
        .delete(name, &DeleteParams::background())
        .await;
}

/// What a test that writes to the API server works in: the kit, its Helm, an admin client and a
/// fresh namespace of the test's own.
struct Scene {
    real: &'static RealSystems,
    helm: Helm,
    client: kube::Client,
    ns: String,
    site: SiteFiles,
    discovery: Discovery,
}

impl Scene {
    fn parts(&self) -> (&Helm, &kube::Client, &str) {
        (&self.helm, &self.client, &self.ns)
    }
}

/// Runs `body` in a [`Scene`] whose namespace starts with `prefix`, and deletes the namespace
/// afterwards whatever `body` gave; then fails the test if `body` failed.
async fn in_namespace<Fut>(prefix: &str, body: impl FnOnce(Scene) -> Fut)
where
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let Some((real, helm)) = kit() else { return };
    let client = real.kube_client().await.unwrap();
    let ns = namespace(&client, prefix).await;
    let scene = Scene {
        real,
        helm,
        client: client.clone(),
        ns: ns.clone(),
        site: SiteFiles::new(real),
        discovery: Discovery::new(client.clone()).run().await.unwrap(),
    };
    let outcome = body(scene).await;
    drop_namespace(&client, &ns).await;
    outcome.unwrap();
}

#[tokio::test]
async fn every_rendered_object_is_accepted_by_the_api_server() {
    in_namespace("helm-apply", apply_and_check).await;
}

async fn apply_and_check(scene: Scene) -> anyhow::Result<()> {
    let (helm, client, ns) = scene.parts();
    let (site, discovery) = (&scene.site, &scene.discovery);
    let base = documents(&helm.template(&base_release(ns, site))?)?;
    apply_all(client, discovery, ns, &base).await?;
    for broker in [Broker::RabbitMq, Broker::PubSub] {
        for adapter in &ADAPTERS {
            let release = adapter_release(adapter, ns, site.values(broker));
            let docs = documents(&helm.template(&release)?)?;
            apply_all(client, discovery, ns, &docs).await?;
            // The stored ConfigMaps, read back.
            let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
            for (suffix, key, file) in [
                ("-config", "adapter-config.yaml", adapter.adapter_config),
                ("-task", "task-config.yaml", adapter.task_config),
            ] {
                let name = find(&docs, "ConfigMap", suffix)?["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let stored = cms.get(&name).await?;
                let data = stored.data.unwrap_or_default();
                checks::same_as_file(data.get(key).map(String::as_str), &repo_path(file))?;
            }
        }
    }
    checks::grants(client, ns).await
}

#[tokio::test]
async fn install_upgrade_and_uninstall_with_the_real_helm() {
    in_namespace("helm-install", install_upgrade_uninstall).await;
}

async fn install_upgrade_uninstall(scene: Scene) -> anyhow::Result<()> {
    let (helm, client, ns) = scene.parts();
    let (site, discovery) = (&scene.site, &scene.discovery);
    let before = namespace_objects(client, discovery, ns).await?;
    let base = base_release(ns, site);
    let [cp, np] = ADAPTERS
        .each_ref()
        .map(|a| adapter_release(a, ns, site.values(Broker::RabbitMq)));
    for release in [&base, &cp, &np] {
        helm.install(release)?;
    }
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let name = format!("{}-hyperfleet-adapter", cp.name);
    let first = deployments.get(&name).await?;
    let first_rs = checks::wait_for_replica_set(client, ns, &first).await?;

    // A changed task config: the checksum changes, the Deployment rolls to a new ReplicaSet.
    let changed = site.dir().join("changed-task-config.yaml");
    let mut text = std::fs::read_to_string(repo_path(ADAPTERS[0].task_config))?;
    text.push_str("# changed by the Helm suite\n");
    std::fs::write(&changed, &text)?;
    let upgraded = cp.clone().set_file("adapterTaskConfig.yaml", &changed);
    let out = helm.upgrade(&upgraded)?;
    anyhow::ensure!(out.status.success(), "upgrade: {}", checks::refusal(&out));
    let second = deployments.get(&name).await?;
    checks::rolled(&first, &second)?;
    let second_rs = checks::wait_for_replica_set(client, ns, &second).await?;
    anyhow::ensure!(
        first_rs != second_rs,
        "no new ReplicaSet after the upgrade ({first_rs})"
    );
    let task = Api::<ConfigMap>::namespaced(client.clone(), ns)
        .get(&format!("{name}-task"))
        .await?;
    anyhow::ensure!(
        task.data.unwrap_or_default().get("task-config.yaml") == Some(&format!("\n{text}")),
        "the task ConfigMap does not hold the changed file"
    );

    // An upgrade that forgets the files is refused by the chart; the release stays where it was.
    let mut forgetful = cp.clone();
    forgetful.set_files.clear();
    let out = helm.upgrade(&forgetful)?;
    let refused = checks::refusal(&out);
    anyhow::ensure!(
        !out.status.success()
            && refused.contains(
                "either .Values.adapterConfig.yaml or .Values.adapterConfig.files must be provided"
            ),
        "upgrade without the files: {refused}"
    );
    anyhow::ensure!(
        helm.revision(&cp)? == Some(2),
        "revision after the refused upgrade"
    );

    for release in [&np, &cp, &base] {
        helm.uninstall(release)?;
    }
    checks::nothing_left(client, discovery, ns, &before).await
}

#[tokio::test]
async fn the_loose_yaml_is_adopted_once_labelled() {
    in_namespace("helm-adopt", adopt_the_loose_yaml).await;
}

/// docs/helm.md "Moving from the loose YAML": refused, then adopted with Helm's label and
/// annotations; its uninstall then removes the adopted objects too.
async fn adopt_the_loose_yaml(scene: Scene) -> anyhow::Result<()> {
    let (helm, client, ns) = scene.parts();
    let (site, discovery) = (&scene.site, &scene.discovery);
    let before = namespace_objects(client, discovery, ns).await?;
    let mut loose = checks::loose("manifests/rbac.yaml", ns);
    loose.extend(checks::loose("manifests/hyperfleet/rbac.yaml", ns));
    apply_all(client, discovery, ns, &loose).await?;

    let base = base_release(ns, site);
    let out = helm.try_install(&base)?;
    let refused = checks::refusal(&out);
    anyhow::ensure!(
        !out.status.success()
            && refused.contains(
                "exists and cannot be imported into the current release: invalid ownership metadata"
            ),
        "install over the loose YAML: {refused}"
    );
    let adopt = json!({"metadata": {
        "labels": {"app.kubernetes.io/managed-by": "Helm"},
        "annotations": {"meta.helm.sh/release-name": base.name, "meta.helm.sh/release-namespace": ns},
    }});
    merge_patch_all(client, discovery, ns, &loose, &adopt).await?;
    helm.install(&base)?;
    helm.uninstall(&base)?;
    checks::nothing_left(client, discovery, ns, &before).await
}

/// The acceptance run for the control-plane release (`helm/pulse.rs`, [`pulse::through_the_chart`]).
#[tokio::test]
async fn the_installed_controlplane_framework_runs_a_pulse_and_the_upgrade_reaches_the_next() {
    installed_framework_pulse(&ADAPTERS[0]).await;
}

/// The same for the NodePool release: a NodePool event (with its owner reference) from the
/// NodePool Sentinel, the `hs-np-…` Job.
#[tokio::test]
async fn the_installed_nodepool_framework_runs_a_pulse_and_the_upgrade_reaches_the_next() {
    installed_framework_pulse(&ADAPTERS[1]).await;
}

async fn installed_framework_pulse(adapter: &'static Adapter) {
    in_namespace("helm-pulse", |scene| async move {
        let (real, (helm, client, ns)) = (scene.real, scene.parts());
        let api = HyperfleetApi::new(real);
        let mut made = Vec::new();
        let outcome =
            pulse::through_the_chart(real, helm, client, ns, &api, adapter, &mut made).await;
        for href in made.iter().rev() {
            api.force_remove(href).await;
        }
        outcome
    })
    .await;
}
