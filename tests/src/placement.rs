//! A world of several management clusters for placement (issue 17): one fake Maestro with a
//! consumer and a work agent per management cluster, and one fake HyperFleet API serving a
//! `ManagementCluster` entity per management cluster (the spec docs/placement.md defines), each
//! reported healthy or not by the `mgmt-health` adapter, and a fake Kubernetes API server holding
//! the placement leases (`KUBECONFIG`, `JOB_NAMESPACE` in [`PlacementWorld::adapter_env`]). The
//! end-to-end tests, `local-pulse --scenario placement` and the fleet bench build on it.
//!
//! ```no_run
//! # use testbed::placement::{McSpec, PlacementWorld};
//! # async fn example() -> anyhow::Result<()> {
//! let world = PlacementWorld::start(&[
//!     McSpec::new("mgmt-us-east1-a", "us-east1", 200),
//!     McSpec::new("mgmt-us-east1-b", "us-east1", 200).cordoned(),
//!     McSpec::new("mgmt-europe-west2-a", "europe-west2", 200).unhealthy(),
//! ])
//! .await?;
//! let cluster = world.create_cluster("us-east1", 0);
//! // run `hypershift-adapter controlplane` with world.adapter_env() + CLUSTER_ID, GENERATION ...
//! world.outage("mgmt-us-east1-a"); // its agent stops and mgmt-health reports it unavailable
//! let load = world.load_per_consumer();
//! # Ok(())
//! # }
//! ```
//!
//! | knob | what it changes |
//! |---|---|
//! | [`McSpec`] `healthy` | the first `mgmt-health` report: `Available` True (healthy: `Reconciled` True) or False (`LastKnownReconciled` False: unavailable) |
//! | [`McSpec::cordoned`] | `spec.cordoned: true` (accepts no new control planes) |
//! | [`McSpec::unknown_to_maestro`] | the consumer is not registered in Maestro (a create answers `maestro-9`, `fk_resources_consumers`) |
//! | [`PlacementWorld::report_health`] | a new `mgmt-health` report at the entity's generation |
//! | [`PlacementWorld::cordon`] | PATCH of `spec.cordoned` (generation + 1: `Reconciled` False until the next report) |
//! | [`PlacementWorld::outage`] / [`PlacementWorld::restore`] | the agent stopped and the entity reported unavailable / the agent started and the entity reported available |

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::{Value, json};

use crate::hyperfleet::fake_api::{
    Clock, Config, FakeHyperfleetApi, ManagementCluster, PREFIX, management,
};
use crate::kube_api::ApiServer;
use crate::maestro::{FakeMaestro, FakeOptions};

/// The bearer token the world's HyperFleet API requires (written to [`PlacementWorld::token_file`]).
pub const TOKEN: &str = "placement-world-token";
/// The longest cluster name the recorded server allows.
pub const CLUSTER_NAME_LENGTH: usize = 53;

/// One management cluster of the world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McSpec {
    /// The entity's name.
    pub name: String,
    /// `spec.region`.
    pub region: String,
    /// `spec.maestro_consumer` (the name unless set).
    pub consumer: String,
    /// `spec.max_hosted_clusters`.
    pub max: u64,
    /// The first `mgmt-health` report says `Available` True (false: unavailable).
    pub healthy: bool,
    /// `spec.cordoned`.
    pub cordoned: bool,
    /// The consumer is registered in Maestro.
    pub known_to_maestro: bool,
}

impl McSpec {
    /// A healthy, accepting management cluster whose Maestro consumer has its name.
    pub fn new(name: &str, region: &str, max: u64) -> McSpec {
        McSpec {
            name: name.to_owned(),
            region: region.to_owned(),
            consumer: name.to_owned(),
            max,
            healthy: true,
            cordoned: false,
            known_to_maestro: true,
        }
    }

    /// Reported unavailable from the start.
    #[must_use]
    pub fn unhealthy(mut self) -> McSpec {
        self.healthy = false;
        self
    }

    /// Cordoned from the start.
    #[must_use]
    pub fn cordoned(mut self) -> McSpec {
        self.cordoned = true;
        self
    }

    /// Another Maestro consumer name than the entity's.
    #[must_use]
    pub fn consumer(mut self, consumer: &str) -> McSpec {
        self.consumer = consumer.to_owned();
        self
    }

    /// The consumer is not registered in Maestro.
    #[must_use]
    pub fn unknown_to_maestro(mut self) -> McSpec {
        self.known_to_maestro = false;
        self
    }

    /// `per_region` management clusters in each of `regions`, named `mgmt-<region>-<nn>`, each
    /// holding `max` control planes: a fleet for the bench.
    pub fn fleet(regions: &[&str], per_region: usize, max: u64) -> Vec<McSpec> {
        regions
            .iter()
            .flat_map(|region| {
                (0..per_region)
                    .map(move |i| McSpec::new(&format!("mgmt-{region}-{i:02}"), region, max))
            })
            .collect()
    }

    fn entity(&self) -> ManagementCluster {
        ManagementCluster {
            name: self.name.clone(),
            region: self.region.clone(),
            consumer: self.consumer.clone(),
            max_hosted_clusters: self.max,
            cordoned: self.cordoned,
        }
    }
}

/// The running world; dropping it stops the fakes and removes its directory.
#[derive(Debug)]
pub struct PlacementWorld {
    maestro: FakeMaestro,
    api: FakeHyperfleetApi,
    /// The Kubernetes API of the Jobs' namespace (the placement leases).
    kube: ApiServer,
    kubeconfig: PathBuf,
    dir: tempfile::TempDir,
    token_file: PathBuf,
    /// Each management cluster with its entity's path on the API.
    mcs: Vec<(McSpec, String)>,
}

impl PlacementWorld {
    /// The fakes with `mcs`; the agents report only when a test tells the fake Maestro to
    /// ([`FakeMaestro::set_feedback`], [`FakeMaestro::apply`], [`FakeMaestro::ack_delete`]).
    ///
    /// # Errors
    /// When a server cannot start or the directory cannot be written.
    pub async fn start(mcs: &[McSpec]) -> anyhow::Result<PlacementWorld> {
        PlacementWorld::start_with(
            mcs,
            FakeOptions {
                agent_delay: None,
                ..FakeOptions::default()
            },
        )
        .await
    }

    /// The same with the fake Maestro started from `options` (e.g. an automatic agent,
    /// `agent_delay: Some(Duration::ZERO)`, for the bench); the known consumers are added to
    /// `options.consumers`.
    ///
    /// # Errors
    /// When a server cannot start or the directory cannot be written.
    ///
    /// # Panics
    /// When two management clusters share a name (a set-up error).
    pub async fn start_with(
        mcs: &[McSpec],
        mut options: FakeOptions,
    ) -> anyhow::Result<PlacementWorld> {
        options.consumers.extend(
            mcs.iter()
                .filter(|m| m.known_to_maestro)
                .map(|m| m.consumer.clone()),
        );
        let maestro = FakeMaestro::start(options).await?;
        // The API's clock is the wall clock at the start (the adapter compares `deleted_time`
        // with its own clock), moved on by each report.
        let api = FakeHyperfleetApi::start(
            Config::recorded().with_token(TOKEN),
            Clock::at(jiff::Timestamp::now()),
        )
        .await?;
        let dir = tempfile::tempdir()?;
        let kube = ApiServer::start().await;
        let kubeconfig = kube.write_kubeconfig(dir.path());
        let token_file = dir.path().join("hyperfleet-token");
        std::fs::write(&token_file, TOKEN).context("writing the token file")?;
        let mut placed = Vec::with_capacity(mcs.len());
        for mc in mcs {
            let path = api.create_management_cluster(&mc.entity());
            let status = api.report_management_cluster_health(&path, mc.healthy);
            anyhow::ensure!(
                status == 201,
                "mgmt-health report for {}: {status}",
                mc.name
            );
            placed.push((mc.clone(), path));
        }
        Ok(PlacementWorld {
            maestro,
            api,
            kube,
            kubeconfig,
            dir,
            token_file,
            mcs: placed,
        })
    }

    /// The fake Maestro.
    pub fn maestro(&self) -> &FakeMaestro {
        &self.maestro
    }

    /// The fake HyperFleet API.
    pub fn api(&self) -> &FakeHyperfleetApi {
        &self.api
    }

    /// The fake Kubernetes API server the adapter takes its placement leases from (in
    /// [`crate::real_pulse::NAMESPACE`]); the pulse Jobs can run against it too.
    pub fn kube(&self) -> &ApiServer {
        &self.kube
    }

    /// The placement lease of `consumer`, as stored (`None` before its first placement).
    pub fn lease(&self, consumer: &str) -> Option<Value> {
        self.kube.object(
            "/apis/coordination.k8s.io/v1",
            "leases",
            Some(crate::real_pulse::NAMESPACE),
            &hypershift_adapter::placement::lease::lease_name(consumer),
        )
    }

    /// The world's directory (token and inventory files).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The file holding [`TOKEN`] (`HYPERFLEET_API_TOKEN_FILE`).
    pub fn token_file(&self) -> &Path {
        &self.token_file
    }

    /// The management clusters, as started.
    pub fn specs(&self) -> impl Iterator<Item = &McSpec> {
        self.mcs.iter().map(|(spec, _)| spec)
    }

    /// The API path of management cluster `name`.
    ///
    /// # Panics
    /// When there is none of that name.
    pub fn management_cluster(&self, name: &str) -> &str {
        self.entry(name).1.as_str()
    }

    fn entry(&self, name: &str) -> &(McSpec, String) {
        self.mcs
            .iter()
            .find(|(spec, _)| spec.name == name)
            .unwrap_or_else(|| panic!("no management cluster {name} in this world"))
    }

    /// The adapter's environment for the HyperFleet inventory
    /// (`MANAGEMENT_CLUSTERS_FROM_API=true`) against the world's fakes; the pulse adds
    /// `CLUSTER_ID`, `GENERATION` (and `NODEPOOL_ID`).
    pub fn adapter_env(&self) -> Vec<(String, String)> {
        let mut env = self.common_env();
        env.push(("MANAGEMENT_CLUSTERS_FROM_API".into(), "true".into()));
        env.sort();
        env
    }

    /// The adapter's environment for the file inventory (`MANAGEMENT_CLUSTERS_FILE`): the file
    /// [`Self::write_inventory_file`] writes now, from the API's entities as they are.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn file_inventory_env(&self) -> anyhow::Result<Vec<(String, String)>> {
        let file = self.write_inventory_file()?;
        let mut env = self.common_env();
        env.push((
            "MANAGEMENT_CLUSTERS_FILE".into(),
            file.display().to_string(),
        ));
        env.sort();
        Ok(env)
    }

    fn common_env(&self) -> Vec<(String, String)> {
        vec![
            ("HYPERFLEET_API_URL".into(), self.api.url().to_owned()),
            (
                "HYPERFLEET_API_TOKEN_FILE".into(),
                self.token_file.display().to_string(),
            ),
            ("MAESTRO_API_URL".into(), self.maestro.rest_url()),
            ("MAESTRO_GRPC_URL".into(), self.maestro.grpc_url()),
            ("LOG_FORMAT".into(), "json".into()),
            ("KUBECONFIG".into(), self.kubeconfig.display().to_string()),
            ("JOB_NAMESPACE".into(), crate::real_pulse::NAMESPACE.into()),
        ]
    }

    /// The inventory file's content: the API's list answer for every `ManagementCluster`
    /// (`{"items": [...]}`, all pages), each entity with its `status` (so the health rule
    /// applies as in the API mode).
    pub fn inventory(&self) -> Value {
        let mut items = Vec::new();
        for page in 1.. {
            let list = self.api.must(
                "GET",
                &format!("{PREFIX}/{}?page={page}&size=100", management::PLURAL),
                None,
            );
            let got = list["items"].as_array().cloned().unwrap_or_default();
            let done = got.len() < 100;
            items.extend(got);
            if done {
                break;
            }
        }
        json!({ "items": items })
    }

    /// Writes [`Self::inventory`] to `management-clusters.json` in the world's directory;
    /// returns its path.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write_inventory_file(&self) -> anyhow::Result<PathBuf> {
        let file = self.dir.path().join("management-clusters.json");
        std::fs::write(&file, serde_json::to_vec_pretty(&self.inventory())?)
            .with_context(|| format!("writing {}", file.display()))?;
        Ok(file)
    }

    /// Live control-plane works per consumer (every management cluster's consumer, zeros
    /// included): the load placement balances.
    pub fn load_per_consumer(&self) -> BTreeMap<String, usize> {
        self.mcs
            .iter()
            .map(|(spec, _)| {
                (
                    spec.consumer.clone(),
                    self.maestro.live_works(&spec.consumer, "controlplane"),
                )
            })
            .collect()
    }

    /// Creates a cluster in `region` on the API (generation 1; the spec of
    /// [`crate::local_pulse::cluster_object`] with `platform.gcp.region` and its zone set; a
    /// 53-character name ending in `index`); returns its id.
    ///
    /// # Panics
    /// When the API refuses it (e.g. the same `region` and `index` twice).
    pub fn create_cluster(&self, region: &str, index: usize) -> String {
        let mut spec = crate::local_pulse::cluster_object()["spec"].clone();
        spec["platform"]["gcp"]["region"] = region.into();
        spec["platform"]["gcp"]["zone"] = format!("{region}-b").into();
        let created = self.api.must(
            "POST",
            &format!("{PREFIX}/clusters"),
            Some(&json!({
                "kind": "Cluster",
                "name": cluster_name(region, index),
                "labels": {"region": region},
                "spec": spec,
            })),
        );
        created["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no id in {created}"))
            .to_owned()
    }

    /// The API path of cluster `id`.
    pub fn cluster_path(id: &str) -> String {
        format!("{PREFIX}/clusters/{id}")
    }

    /// `mgmt-health` reports management cluster `name` available or not (at its generation).
    ///
    /// # Panics
    /// When the API does not store the report.
    pub fn report_health(&self, name: &str, available: bool) {
        let status = self
            .api
            .report_management_cluster_health(self.management_cluster(name), available);
        assert_eq!(status, 201, "mgmt-health report for {name}");
    }

    /// Cordons (or uncordons) management cluster `name`: a spec PATCH (generation + 1, so
    /// `Reconciled` is False until the next report), then `mgmt-health` reports again at the new
    /// generation, as its adapter would on the change.
    pub fn cordon(&self, name: &str, cordoned: bool) {
        let (spec, path) = self.entry(name);
        self.api.cordon_management_cluster(path, cordoned);
        self.report_health(name, spec.healthy);
    }

    /// An outage of management cluster `name`: its work agent stops (applies, reports and
    /// acknowledges nothing) and `mgmt-health` reports it unavailable (`LastKnownReconciled`
    /// False).
    pub fn outage(&self, name: &str) {
        let (spec, _) = self.entry(name);
        self.maestro.stop_agent(&spec.consumer);
        self.report_health(name, false);
    }

    /// The end of an outage: the agent starts again and `mgmt-health` reports it available.
    pub fn restore(&self, name: &str) {
        let (spec, _) = self.entry(name);
        self.maestro.start_agent(&spec.consumer);
        self.report_health(name, true);
    }
}

/// A 53-character cluster name (the longest the recorded server allows) unique per `region` and
/// `index`: `prod-<region>-hcp-<index, zero-padded to the length>`.
pub fn cluster_name(region: &str, index: usize) -> String {
    let prefix = format!("prod-{region}-hcp-");
    let width = CLUSTER_NAME_LENGTH.saturating_sub(prefix.len()).max(1);
    format!("{prefix}{index:0width$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_names_are_the_longest_allowed_and_unique() {
        let a = cluster_name("us-east1", 0);
        let b = cluster_name("us-east1", 9_999);
        assert_eq!((a.len(), b.len()), (53, 53), "{a} {b}");
        assert_ne!(a, b);
        assert_ne!(cluster_name("europe-west2", 1), cluster_name("us-east1", 1));
    }

    #[test]
    fn a_fleet_names_each_management_cluster_by_region() {
        let fleet = McSpec::fleet(&["us-east1", "europe-west2"], 3, 200);
        assert_eq!(fleet.len(), 6);
        assert_eq!(fleet[0].name, "mgmt-us-east1-00");
        assert_eq!(fleet[5].consumer, "mgmt-europe-west2-02");
        assert!(
            fleet
                .iter()
                .all(|m| m.healthy && !m.cordoned && m.max == 200)
        );
    }
}
