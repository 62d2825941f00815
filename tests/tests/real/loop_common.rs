//! What the two loop suites (`loop_controlplane`, `loop_nodepool`) share: production-shaped
//! inputs, the adapters the tests play on the HyperFleet API, and a watch on HyperFleet's
//! conclusions that holds them to two rules for the whole test.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use testbed::real::hyperfleet_api::{Conclusion, HyperfleetApi, condition};
use testbed::real::loop_bed::LoopBed;

/// A deadline for one step of the loop: an event (Sentinel polls every second, debounce 2 s),
/// a pulse Job run by the played kubelet, the Maestro agent's status sync (every 10 s), a pulse
/// Job's shortened TTL, another pulse.
pub const STEP: Duration = Duration::from_secs(120);

/// The longest cluster name the API allows (53), unique to the test: its id, then filler.
pub fn cluster_name(bed: &LoopBed) -> String {
    let name = format!("{}-payments-ledger-primary-region-west-cell-0", bed.id);
    name[..53].trim_end_matches('-').to_owned()
}

pub use testbed::real::loop_bed::cluster_spec;

/// The adapters a test plays for `href` (`validation`, `dns`, `pullsecret` for a cluster;
/// `validation` for a NodePool) report at its current generation; each PUT must be stored.
pub async fn others_report(bed: &LoopBed, href: &str, adapters: &[&str], available: bool) {
    for adapter in adapters {
        let code = bed.api.report_as(href, adapter, available).await.unwrap();
        assert_eq!(
            code,
            201,
            "{adapter}'s report on {href}{}",
            bed.diagnostics()
        );
    }
}

/// `(Reconciled, LastKnownReconciled, HypershiftSuccessful)` of an object, as served.
pub type Triple = [Option<Conclusion>; 3];

/// The three conclusions of `object`.
pub fn triple(object: &Value) -> Triple {
    ["Reconciled", "LastKnownReconciled", "HypershiftSuccessful"].map(|t| condition(object, t))
}

/// Polls an object's conclusions in the background (every 200 ms) and records each change, so
/// that a test can hold the whole run to HyperFleet's rules, not only the states it waits for.
pub struct Watch {
    seen: Arc<Mutex<Vec<(Triple, i64)>>>,
    reports: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Watch {
    /// Starts watching `href`: its conclusions, and the `hypershift` adapter's stored report.
    pub fn start(api: &HyperfleetApi, href: &str) -> Watch {
        let seen: Arc<Mutex<Vec<(Triple, i64)>>> = Arc::default();
        let reports: Arc<Mutex<Vec<Value>>> = Arc::default();
        let (api, href) = (api.clone(), href.to_owned());
        let (record, record_reports) = (seen.clone(), reports.clone());
        let task = tokio::spawn(async move {
            loop {
                if let Ok(Some(object)) = api.get(&href).await {
                    let now = (triple(&object), object["generation"].as_i64().unwrap_or(0));
                    let mut seen = record.lock().unwrap();
                    if seen.last() != Some(&now) {
                        seen.push(now);
                    }
                }
                if let Ok(Some(mut report)) = api.status_of(&href, "hypershift").await {
                    for volatile in ["last_report_time", "created_time"] {
                        report.as_object_mut().map(|r| r.remove(volatile));
                    }
                    let mut reports = record_reports.lock().unwrap();
                    if reports.last() != Some(&report) {
                        reports.push(report);
                    }
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        Watch {
            seen,
            reports,
            task,
        }
    }

    /// `(observed_generation, status, reason)` of condition `type_` in each distinct stored
    /// report of `hypershift` seen so far, consecutive repeats merged.
    pub fn reported(&self, type_: &str) -> Vec<(i64, String, String)> {
        let mut out: Vec<(i64, String, String)> = Vec::new();
        for report in self.reports.lock().unwrap().iter() {
            let found = report["conditions"]
                .as_array()
                .and_then(|cs| cs.iter().find(|c| c["type"] == type_));
            if let Some(c) = found {
                let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
                let row = (
                    report["observed_generation"].as_i64().unwrap_or(0),
                    text("status"),
                    text("reason"),
                );
                if out.last() != Some(&row) {
                    out.push(row);
                }
            }
        }
        out
    }

    /// Every distinct `(conclusions, generation)` seen so far, in order.
    pub fn seen(&self) -> Vec<(Triple, i64)> {
        self.seen.lock().unwrap().clone()
    }

    /// The rules, over everything seen: once `LastKnownReconciled` is True it stays True (until
    /// the object is being deleted: `until_generation`, exclusive), and `Reconciled` is True only
    /// at the object's current generation.
    pub fn assert_rules(&self, until_generation: i64) {
        let seen = self.seen();
        let mut known = false;
        for (i, ([reconciled, last_known, _], generation)) in seen.iter().enumerate() {
            if *generation >= until_generation {
                break;
            }
            let is_true = last_known.as_ref().is_some_and(|c| c.status == "True");
            assert!(
                !known || is_true,
                "LastKnownReconciled dropped at step {i} (generation {generation}): {:#?}",
                &seen[..=i]
            );
            known |= is_true;
            if let Some(r) = reconciled.as_ref().filter(|r| r.status == "True") {
                assert_eq!(
                    r.observed_generation,
                    *generation,
                    "Reconciled=True at another generation: {:#?}",
                    &seen[..=i]
                );
            }
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Waits until `href`'s conclusions satisfy `ok`; returns the object.
pub async fn until_concluded(
    bed: &LoopBed,
    href: &str,
    what: &str,
    ok: impl Fn(&Value, &Triple) -> bool,
) -> Value {
    bed.until(STEP, what, || async {
        let Some(object) = bed.api.get(href).await? else {
            anyhow::bail!("{href} is gone");
        };
        let t = triple(&object);
        if ok(&object, &t) {
            Ok(Some(object))
        } else {
            anyhow::bail!("now: {}", testbed::real::hyperfleet_api::summary(&object))
        }
    })
    .await
}

/// `(status, generation, reason)` of a conclusion, for assertions.
pub fn short(c: &Option<Conclusion>) -> Option<(String, i64, String)> {
    c.as_ref()
        .map(|c| (c.status.clone(), c.observed_generation, c.reason.clone()))
}

/// The labels of a test object: the bed's, plus a team as production objects carry.
pub fn labels(bed: &LoopBed) -> Value {
    bed.labels(&[("team", "platform")])
}

/// A cluster of the test, created and brought to `Reconciled` at generation 1 through the loop:
/// POST, the other adapters report, the pulse Job's adapter has the real agent apply the
/// HostedCluster, the played operator reports it available. Returns `(cluster, HostedCluster
/// name)`.
pub async fn control_plane_serves(bed: &LoopBed) -> (Value, String) {
    let name = cluster_name(bed);
    let created = bed
        .create_cluster(&name, &labels(bed), &cluster_spec(&name))
        .await
        .unwrap();
    let href = created["href"].as_str().unwrap().to_owned();
    others_report(bed, &href, &OTHER_CLUSTER_ADAPTERS, true).await;
    hosted_cluster_applied(bed, &name).await;
    bed.operator
        .write_hosted_cluster(
            &name,
            testbed::real::operator::HostedClusterStage::Available,
        )
        .await
        .unwrap();
    let cluster = until_concluded(
        bed,
        &href,
        "the cluster Reconciled at generation 1",
        |_, t| short(&t[0]) == Some(("True".into(), 1, "ReconciledAll".into())),
    )
    .await;
    (cluster, name)
}

/// The other adapters HyperFleet requires for a cluster (`hypershift` is ours).
pub const OTHER_CLUSTER_ADAPTERS: [&str; 3] = ["validation", "dns", "pullsecret"];

/// Waits until the real agent applied HostedCluster `clusters/name`; returns it.
pub async fn hosted_cluster_applied(bed: &LoopBed, name: &str) -> Value {
    bed.until(
        STEP,
        &format!("HostedCluster clusters/{name} applied by the agent"),
        || async { bed.operator.hosted_cluster(name).await },
    )
    .await
}

/// The `hyperfleet.io/generation` of the work `name` (`hostedcluster-<id>`, `nodepool-<id>`) the
/// test's consumer holds in the real Maestro (`None` when it has no such work).
pub async fn work_generation(bed: &LoopBed, name: &str) -> Option<String> {
    let url = format!(
        "{}/api/maestro/v1/resource-bundles?search=consumer_name='{}'&size=500",
        bed.maestro_api_url, bed.consumer
    );
    let list: Value = reqwest::get(&url).await.unwrap().json().await.unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["metadata"]["name"] == name)
        .map(|b| {
            b["metadata"]["annotations"]["hyperfleet.io/generation"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
}
