//! A test's Maestro works removed from the kit when the test ends, pass or fail ([`Sweep`]).
//!
//! Why: every agent of a kit applies to the same kube-apiserver, and every one of them has the
//! same agent id (the hub's hash, `spec.agentID` of the AppliedManifestWorks they write). Each
//! agent's unmanaged-AppliedManifestWork controller takes another agent's AppliedManifestWork
//! for one whose work is gone and schedules it for eviction (`status.evictionStartTime`, one hour
//! ahead), and its owner clears that at once: as long as a work lives beside a second agent, the
//! agents PATCH its AppliedManifestWork in a loop. Measured on a kit with 10 agents and the 7
//! works its finished tests had left: 19,085 such PATCHes in 11 minutes, the API server at about
//! 80 % of a core and every agent at 5–10 % with no test running, and the agents' status feedback
//! slower than the suites' bounds (the CI run of stop 29: four suites waited past 90–120 s for
//! feedback). Deleting those works brought the API server down to about 12 %. A management
//! cluster in production runs one agent, so this is the kit's topology, not something the
//! adapter meets; the tests keep it small by leaving nothing behind.
//!
//! The sweep: the REST `DELETE` of each of the test's resource bundles (204 also for one already
//! gone), then, while the agent deletes what it applied, the played operator's finalizer
//! ([`super::operator::FINALIZER`]) taken off those objects (nothing else would: the test is
//! over), until the bundles are gone, at most [`SWEEP_TIMEOUT`]. It never fails the test: what
//! it could not remove is one line on stderr.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use serde_json::{Value, json};

use super::RealSystems;
use super::operator::FINALIZER;

/// How long a sweep waits for the agent to finish deleting.
pub const SWEEP_TIMEOUT: Duration = Duration::from_secs(60);

const BUNDLES: &str = "/api/maestro/v1/resource-bundles";

/// Deletes the works of a test when dropped (see the module doc).
#[derive(Debug)]
pub struct Sweep(Works);

/// Which works, on which kit.
#[derive(Debug, Clone)]
struct Works {
    maestro_api_url: String,
    kubeconfig: PathBuf,
    /// The Maestro search (`search=`) that selects the test's works.
    search: String,
}

impl Sweep {
    /// Every work of `consumer` (a consumer of the test's own).
    pub fn consumer(real: &RealSystems, consumer: &str) -> Sweep {
        Sweep::new(real, format!("consumer_name='{consumer}'"))
    }

    /// The works of the HyperFleet cluster `cluster_id` on `consumer` (a consumer tests share),
    /// by the label the adapter puts on each work.
    pub fn cluster(real: &RealSystems, consumer: &str, cluster_id: &str) -> Sweep {
        Sweep::new(
            real,
            format!(
                "consumer_name='{consumer}' and payload->'metadata'->'labels'@>'{{\"hyperfleet.io/cluster-id\":\"{cluster_id}\"}}'"
            ),
        )
    }

    /// Every work a test published under its own Maestro source id (`MAESTRO_SOURCE_ID`), on any
    /// consumer: what its pulses placed.
    pub fn source(real: &RealSystems, source: &str) -> Sweep {
        Sweep::new(real, format!("source='{source}'"))
    }

    fn new(real: &RealSystems, search: String) -> Sweep {
        Sweep(Works {
            maestro_api_url: real.var("MAESTRO_API_URL").to_owned(),
            kubeconfig: real.kubeconfig().to_path_buf(),
            search,
        })
    }
}

impl Works {
    /// Deletes the works now and waits for the agent (at most [`SWEEP_TIMEOUT`]) on those an
    /// agent has reported on: a work no agent ever received (its consumer has none, as in the
    /// placement tests' failover) stays soft-deleted in Maestro, with nothing applied to wait for.
    async fn run(&self) -> anyhow::Result<()> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()?;
        let kube = super::client_of(&self.kubeconfig).await?;
        let works = self.bundles(&http).await?;
        if works.is_empty() {
            return Ok(());
        }
        for id in works.keys() {
            let url = format!("{}{BUNDLES}/{id}", self.maestro_api_url);
            let response = http.delete(&url).send().await?;
            anyhow::ensure!(
                response.status().is_success(),
                "DELETE {url}: {}",
                response.status()
            );
        }
        let ids: BTreeSet<String> = works
            .into_iter()
            .filter_map(|(id, reported)| reported.then_some(id))
            .collect();
        let deadline = tokio::time::Instant::now() + SWEEP_TIMEOUT;
        loop {
            release_deleted_objects(&kube, &ids).await?;
            let left: Vec<String> = self
                .bundles(&http)
                .await?
                .into_keys()
                .filter(|id| ids.contains(id))
                .collect();
            if left.is_empty() {
                return Ok(());
            }
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "resource bundles {left:?} still there {SWEEP_TIMEOUT:?} after their DELETE"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The bundles the search selects now: id → whether an agent has reported on it (a status
    /// with conditions or resource statuses).
    async fn bundles(&self, http: &reqwest::Client) -> anyhow::Result<BTreeMap<String, bool>> {
        let reported = |b: &Value| {
            ["conditions", "resourceStatus"]
                .iter()
                .any(|key| b["status"][key].as_array().is_some_and(|a| !a.is_empty()))
        };
        Ok(bundles(http, &self.maestro_api_url, &self.search)
            .await?
            .iter()
            .filter_map(|b| Some((b["id"].as_str()?.to_owned(), reported(b))))
            .collect())
    }
}

/// The resource bundles the Maestro search `search` selects now (REST, one page of up to 1000).
///
/// # Errors
/// When Maestro cannot be reached or refuses the search.
pub async fn bundles(
    http: &reqwest::Client,
    maestro_api_url: &str,
    search: &str,
) -> anyhow::Result<Vec<Value>> {
    let url = format!("{maestro_api_url}{BUNDLES}");
    let response = http
        .get(&url)
        .query(&[("search", search), ("size", "1000")])
        .send()
        .await?;
    let status = response.status();
    let mut body: Value = response.json().await.context("a bundle list")?;
    anyhow::ensure!(status.is_success(), "GET {url}: {status}: {body}");
    Ok(match body["items"].take() {
        Value::Array(items) => items,
        _ => Vec::new(),
    })
}

impl Drop for Sweep {
    fn drop(&mut self) {
        let works = self.0.clone();
        let search = &self.0.search;
        match super::on_own_runtime(async move { works.run().await }) {
            Some(Ok(())) => {}
            Some(Err(e)) => eprintln!("real-systems: the works of {search} were not swept: {e:#}"),
            None => eprintln!("real-systems: the sweep of {search} did not run to its end"),
        }
    }
}

/// Takes the played operator's finalizer off every object the agent applied for the works `ids`
/// (their AppliedManifestWorks' `status.appliedResources`) once it is being deleted.
async fn release_deleted_objects(
    kube: &kube::Client,
    ids: &BTreeSet<String>,
) -> anyhow::Result<()> {
    let gvk = GroupVersionKind::gvk(
        "work.open-cluster-management.io",
        "v1",
        "AppliedManifestWork",
    );
    let applied: Api<DynamicObject> = Api::all_with(
        kube.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, "appliedmanifestworks"),
    );
    for work in applied.list(&Default::default()).await?.items {
        let work = serde_json::to_value(work)?;
        if !work["spec"]["manifestWorkName"]
            .as_str()
            .is_some_and(|name| ids.contains(name))
        {
            continue;
        }
        for resource in work["status"]["appliedResources"]
            .as_array()
            .into_iter()
            .flatten()
        {
            release(kube, resource).await?;
        }
    }
    Ok(())
}

/// One applied resource (`{group, version, resource, namespace, name}`): without the finalizer
/// once it has a `deletionTimestamp`.
async fn release(kube: &kube::Client, resource: &Value) -> anyhow::Result<()> {
    let field = |key: &str| resource[key].as_str().unwrap_or_default();
    let gvk = GroupVersionKind::gvk(field("group"), field("version"), "");
    let api_resource = ApiResource::from_gvk_with_plural(&gvk, field("resource"));
    let api: Api<DynamicObject> = if field("namespace").is_empty() {
        Api::all_with(kube.clone(), &api_resource)
    } else {
        Api::namespaced_with(kube.clone(), field("namespace"), &api_resource)
    };
    let Some(object) = api.get_opt(field("name")).await? else {
        return Ok(());
    };
    let finalizers = object.metadata.finalizers.clone().unwrap_or_default();
    if object.metadata.deletion_timestamp.is_none() || !finalizers.iter().any(|f| f == FINALIZER) {
        return Ok(());
    }
    let kept: Vec<&String> = finalizers.iter().filter(|f| *f != FINALIZER).collect();
    let patch = json!({"metadata": {"finalizers": kept, "resourceVersion": object.metadata.resource_version}});
    match api
        .patch(
            field("name"),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(_) => Ok(()),
        // Changed meanwhile (the operator's last write, the agent), or gone: the next round reads
        // it again.
        Err(kube::Error::Api(status)) if status.code == 409 || status.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}
