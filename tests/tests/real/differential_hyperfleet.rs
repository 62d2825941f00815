//! The fake HyperFleet API (`testbed::hyperfleet::fake_api`) pinned to the real HyperFleet API
//! of the kit: the same request sequence to both — Clusters, NodePools and ManagementClusters
//! POST/GET/search/PATCH/DELETE, status PUTs through every acceptance rule of
//! `hyperfleet-framework.md` §7.4 (400s with their `detail`, the 404, the 204s of a future,
//! stale or `Unknown` report, 201), the aggregated conditions (`Reconciled`,
//! `LastKnownReconciled`, `<Adapter>Successful`) read after each report, soft delete with its
//! cascade, and the hard delete once every required adapter reported `Finalized=True`.
//!
//! The real API is shared with other tests, so every list is narrowed to this test's names by a
//! search, and ids (UUIDv7, different on each side) are replaced by what they stand for
//! (`<cluster>`, `<nodepool>`, `<mgmt>`) in paths and bodies. Reports carry `observed_time`s
//! fixed at the start of the test (the same on both sides; the window of rule 7 is 30 minutes).

use std::time::Duration;

use jiff::Timestamp;
use serde_json::{Value, json};
use testbed::hyperfleet::fake_api::{Clock, Config, FakeHyperfleetApi};
use testbed::real::differential::{Normalizer, Transcript, compare, dump};
use testbed::real::{RealSystems, unique};

mod planted;
mod refusals;

const SUITE: &str = "real::differential_hyperfleet";
pub(crate) const V1: &str = "/api/hyperfleet/v1";

/// What the comparison ignores, and why; `ids` are the side's `(id, placeholder)` pairs.
pub(crate) fn normalizer(ids: &[(String, String)]) -> Normalizer {
    const CLOCK: &str = "the server's clock when it wrote the object (the reports' observed_time, the same on both sides, is compared)";
    let mut n = Normalizer::default()
        .mask("**/trace_id", "trace", "random per request")
        .mask("**/last_transition_time", "time", "Reconciled's and LastKnownReconciled's are the server's clock, with nanoseconds in a write's answer and microseconds (PostgreSQL) when read back; an adapter condition's is the report's observed_time")
        .sort_by("**/conditions", "type", "no order to pin: the recorded real API (fixtures/hyperfleet/real-api 02, 07, 18) listed a resource's conditions sorted by type, the kit's in aggregation order");
    for key in [
        "created_time",
        "updated_time",
        "last_updated_time",
        "deleted_time",
        "timestamp",
    ] {
        n = n.mask(&format!("**/{key}"), "time", CLOCK);
    }
    for (id, placeholder) in ids {
        n = n.substitute(
            id,
            placeholder,
            "a UUIDv7 the server generated (the same object on both sides)",
        );
    }
    n
}

/// One HyperFleet API and what it answered.
pub(crate) struct Side {
    base: String,
    http: reqwest::Client,
    pub(crate) transcript: Transcript,
    pub(crate) ids: Vec<(String, String)>,
    /// The fake, kept running.
    _fake: Option<FakeHyperfleetApi>,
}

impl Side {
    pub(crate) fn new(base: &str, fake: Option<FakeHyperfleetApi>) -> Side {
        Side {
            base: base.to_owned(),
            http: reqwest::Client::new(),
            transcript: Transcript::new(if fake.is_some() { "fake" } else { "real" }),
            ids: Vec::new(),
            _fake: fake,
        }
    }

    /// One request (a JSON body, or `raw` text as is); the answer's status and body.
    pub(crate) async fn call(
        &mut self,
        label: &str,
        method: &str,
        path: &str,
        body: Body,
    ) -> (u16, Value) {
        let url = format!("{}{V1}{path}", self.base);
        let mut request = self.http.request(method.parse().unwrap(), url);
        match &body {
            Body::None => {}
            Body::Json(v) => request = request.json(v),
            Body::Raw(text) => {
                request = request
                    .header("content-type", "application/json")
                    .body(text.to_string());
            }
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let bytes = response.bytes().await.unwrap();
        let parsed = testbed::real::differential::body_value(&bytes);
        let recorded = json!({"content_type": content_type, "body": parsed});
        self.transcript
            .record(label, method, &format!("{V1}{path}"), status, recorded);
        (status, parsed)
    }

    /// Remembers `id` as `placeholder`.
    pub(crate) fn learn(&mut self, body: &Value, placeholder: &str) -> String {
        let id = body["id"]
            .as_str()
            .unwrap_or_else(|| panic!("no id in {body}"))
            .to_owned();
        self.ids.push((id.clone(), format!("<{placeholder}>")));
        id
    }
}

pub(crate) enum Body {
    None,
    Json(Value),
    Raw(&'static str),
}

/// A report of `adapter` at `generation`, with `Available` = `available` (and `Finalized`).
pub(crate) fn report(
    adapter: &str,
    generation: Value,
    time: &str,
    available: &str,
    finalized: bool,
) -> Body {
    let finalized = if finalized {
        json!({"type": "Finalized", "status": "True", "reason": "Finalized", "message": "finalized=True"})
    } else {
        json!({"type": "Finalized", "status": "False", "reason": "NotFinalizing", "message": "finalized=False"})
    };
    Body::Json(json!({
        "adapter": adapter, "observed_generation": generation, "observed_time": time,
        "conditions": [
            {"type": "Applied", "status": "True", "reason": "ManifestsApplied", "message": "resources applied"},
            {"type": "Available", "status": available, "reason": "Ready", "message": format!("available={available}")},
            {"type": "Health", "status": "True", "reason": "Healthy", "message": "adapter healthy"},
            finalized,
        ],
        "data": {"hosted_cluster": {"phase": "Available", "version": "4.19.3"}},
    }))
}

/// `observed_time` number `n` of the test: fixed instants, one second apart.
pub(crate) struct Times(pub(crate) Timestamp);

impl Times {
    pub(crate) fn at(&self, n: i64) -> String {
        let t = self.0 + jiff::SignedDuration::from_secs(n);
        t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }
}

pub(crate) fn spec(image: &str) -> Value {
    json!({"dns": {"base_domain": "prod.example.com"},
        "networking": {"cluster_network_cidr": "10.132.0.0/14", "service_network_cidr": "172.31.0.0/16"},
        "platform": {"type": "gcp", "gcp": {"project_id": "acme-prod-4821", "region": "europe-west2",
            "network": {"vpc": "hcp-vpc", "psc_subnet": "hcp-psc-subnet"}}},
        "release": {"image": image}, "gcp_region": "us-east1"})
}

pub(crate) fn search(query: &str) -> String {
    let mut out = String::new();
    for b in query.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    format!("?search={out}")
}

pub(crate) const IMAGE_1: &str = "quay.io/openshift-release-dev/ocp-release:4.19.3-x86_64";
const IMAGE_2: &str = "quay.io/openshift-release-dev/ocp-release:4.19.4-x86_64";

/// The required adapters of a cluster (the API's configuration, §7.1).
pub(crate) const CLUSTER_ADAPTERS: [&str; 4] = ["hypershift", "validation", "dns", "pullsecret"];

/// Reports of `Finalized=True` from adapters, one after the other.
pub(crate) struct Finalize<'a> {
    pub(crate) statuses: &'a str,
    pub(crate) generation: i64,
    /// The `observed_time` number ([`Times::at`]) of the first report; one more for each next.
    pub(crate) first_time: i64,
    /// A path to read after each report, if any.
    pub(crate) read: Option<&'a str>,
}

impl Finalize<'_> {
    pub(crate) async fn by(&self, side: &mut Side, what: &str, adapters: &[&str], times: &Times) {
        for (n, adapter) in (self.first_time..).zip(adapters) {
            side.call(
                &format!("{what} {adapter} reports Finalized=True"),
                "PUT",
                self.statuses,
                report(adapter, json!(self.generation), &times.at(n), "False", true),
            )
            .await;
            if let Some(path) = self.read {
                side.call(
                    &format!("the {what} after {adapter} Finalized"),
                    "GET",
                    path,
                    Body::None,
                )
                .await;
            }
        }
    }
}

/// A [`Side`] on a fake HyperFleet API of its own.
pub(crate) async fn fake_side() -> Side {
    let api = FakeHyperfleetApi::start(Config::recorded(), Clock::wall())
        .await
        .unwrap();
    let url = api.url().to_owned();
    Side::new(&url, Some(api))
}

/// [`compare`] of the two sides, each normalized with its own ids.
pub(crate) fn compare_sides(fake: &Side, real: &Side) -> Result<(), String> {
    compare(
        &fake.transcript,
        &real.transcript,
        &normalizer(&fake.ids),
        &normalizer(&real.ids),
    )
}

async fn cluster_life(side: &mut Side, name: &str, times: &Times) {
    let (_, created) = side
        .call(
            "POST a cluster",
            "POST",
            "/clusters",
            Body::Json(json!({"kind": "Cluster", "name": name,
            "labels": {"environment": "production", "team": name}, "spec": spec(IMAGE_1)})),
        )
        .await;
    let id = side.learn(&created, "cluster");
    let cluster = format!("/clusters/{id}");
    let statuses = format!("{cluster}/statuses");
    side.call(
        "POST the same name again (409)",
        "POST",
        "/clusters",
        Body::Json(json!({"kind": "Cluster", "name": name, "spec": spec(IMAGE_1)})),
    )
    .await;
    side.call(
        "POST a name the rules refuse (400)",
        "POST",
        "/clusters",
        Body::Json(json!({"kind": "Cluster", "name": "Bad_Name", "spec": spec(IMAGE_1)})),
    )
    .await;
    for (what, body) in refusals::cluster_creates(name) {
        side.call(
            &format!("POST a cluster: {what}"),
            "POST",
            "/clusters",
            body,
        )
        .await;
    }
    side.call("GET the cluster", "GET", &cluster, Body::None)
        .await;
    side.call(
        "search by label",
        "GET",
        &format!("/clusters{}", search(&format!("labels.team='{name}'"))),
        Body::None,
    )
    .await;
    side.call(
        "search by name and spec",
        "GET",
        &format!(
            "/clusters{}",
            search(&format!("name='{name}' and spec.gcp_region='us-east1'"))
        ),
        Body::None,
    )
    .await;
    side.call(
        "search without a match",
        "GET",
        &format!("/clusters{}", search(&format!("labels.team='{name}-none'"))),
        Body::None,
    )
    .await;
    for (what, query) in refusals::lists(name) {
        side.call(
            &format!("list clusters: {what}"),
            "GET",
            &format!("/clusters{query}"),
            Body::None,
        )
        .await;
    }
    for (what, method, path, body) in refusals::routes(&cluster) {
        side.call(&what, method, &path, body).await;
    }

    side.call(
        "hypershift reports Available=True at generation 1",
        "PUT",
        &statuses,
        report("hypershift", json!(1), &times.at(1), "True", false),
    )
    .await;
    side.call(
        "aggregated after the first report",
        "GET",
        &cluster,
        Body::None,
    )
    .await;
    side.call("the statuses", "GET", &statuses, Body::None)
        .await;
    let far = times.at(60 * 60);
    let ago = times.at(-60 * 60);
    for (what, body) in refusals::reports(&times.at(2), &far, &ago) {
        side.call(&format!("a report with {what}"), "PUT", &statuses, body)
            .await;
    }
    side.call(
        "a report for a cluster that does not exist (404)",
        "PUT",
        "/clusters/019a6f1e-4b7c-7d2e-9f3a-000000000000/statuses",
        report("hypershift", json!(1), &times.at(2), "True", false),
    )
    .await;
    side.call(
        "hypershift again, earlier observed_time (204)",
        "PUT",
        &statuses,
        report("hypershift", json!(1), &times.at(0), "True", false),
    )
    .await;
    side.call(
        "hypershift Available=Unknown after a stored report (204)",
        "PUT",
        &statuses,
        report("hypershift", json!(1), &times.at(3), "Unknown", false),
    )
    .await;
    for (n, adapter) in ["validation", "dns", "pullsecret"].into_iter().enumerate() {
        let n = i64::try_from(n).unwrap();
        side.call(
            &format!("{adapter} reports Available=True"),
            "PUT",
            &statuses,
            report(adapter, json!(1), &times.at(4 + n), "True", false),
        )
        .await;
        side.call(
            &format!("aggregated after {adapter}"),
            "GET",
            &cluster,
            Body::None,
        )
        .await;
    }
    side.call(
        "an adapter HyperFleet does not require",
        "PUT",
        &statuses,
        report("extra-adapter", json!(1), &times.at(8), "True", false),
    )
    .await;
    side.call(
        "search Reconciled",
        "GET",
        &format!(
            "/clusters{}",
            search(&format!(
                "status.conditions.Reconciled='True' and name='{name}'"
            ))
        ),
        Body::None,
    )
    .await;
    side.call(
        "PATCH the spec (generation 2)",
        "PATCH",
        &cluster,
        Body::Json(json!({"spec": spec(IMAGE_2)})),
    )
    .await;
    for (what, body) in refusals::patches() {
        side.call(
            &format!("PATCH the cluster: {what}"),
            "PATCH",
            &cluster,
            body,
        )
        .await;
    }
    side.call(
        "PATCH labels only (generation 3)",
        "PATCH",
        &cluster,
        Body::Json(json!({"labels": {"environment": "production", "team": name, "tier": "gold"}})),
    )
    .await;
    side.call(
        "hypershift reports at generation 1 after the PATCH",
        "PUT",
        &statuses,
        report("hypershift", json!(1), &times.at(9), "True", false),
    )
    .await;
    side.call(
        "hypershift reports Available=False at generation 3",
        "PUT",
        &statuses,
        report("hypershift", json!(3), &times.at(10), "False", false),
    )
    .await;
    side.call(
        "aggregated after Available=False",
        "GET",
        &cluster,
        Body::None,
    )
    .await;
    side.call(
        "hypershift reports at generation 2 after 3 (204)",
        "PUT",
        &statuses,
        report("hypershift", json!(2), &times.at(11), "True", false),
    )
    .await;
    side.call(
        "hypershift reports Available=True at generation 3",
        "PUT",
        &statuses,
        report("hypershift", json!(3), &times.at(12), "True", false),
    )
    .await;
    side.call("aggregated", "GET", &cluster, Body::None).await;

    let (_, pool) = side
        .call("POST a NodePool", "POST", &format!("{cluster}/nodepools"), Body::Json(json!({"kind": "NodePool", "name": "workers-euw2-a1", "labels": {"pool": "a"},
            "spec": {"replicas": 3, "platform": {"type": "gcp", "gcp": {"instance_type": "n2-standard-8"}}, "release": {"image": IMAGE_1}}})))
        .await;
    let pool_id = side.learn(&pool, "nodepool");
    let pool_path = format!("{cluster}/nodepools/{pool_id}");
    for (what, nested, body) in refusals::nodepool_creates("workers-euw2-a1") {
        let path = if nested {
            format!("{cluster}/nodepools")
        } else {
            "/nodepools".to_owned()
        };
        side.call(&format!("POST a NodePool {what}"), "POST", &path, body)
            .await;
    }
    side.call(
        "list the cluster's NodePools",
        "GET",
        &format!("{cluster}/nodepools"),
        Body::None,
    )
    .await;
    side.call("GET the NodePool", "GET", &pool_path, Body::None)
        .await;
    side.call(
        "GET the NodePool flat",
        "GET",
        &format!("/nodepools/{pool_id}"),
        Body::None,
    )
    .await;
    side.call(
        "NodePool hypershift reports",
        "PUT",
        &format!("{pool_path}/statuses"),
        report("hypershift", json!(1), &times.at(13), "True", false),
    )
    .await;
    side.call("aggregated NodePool", "GET", &pool_path, Body::None)
        .await;

    side.call("DELETE the cluster (202)", "DELETE", &cluster, Body::None)
        .await;
    side.call("DELETE it again", "DELETE", &cluster, Body::None)
        .await;
    side.call("GET the deleted cluster", "GET", &cluster, Body::None)
        .await;
    side.call(
        "PATCH the deleted cluster (409)",
        "PATCH",
        &cluster,
        Body::Json(json!({"labels": {"a": "b"}})),
    )
    .await;
    side.call(
        "POST a NodePool under it (409)",
        "POST",
        &format!("{cluster}/nodepools"),
        Body::Json(json!({"kind": "NodePool", "name": "workers-c", "spec": {}})),
    )
    .await;
    side.call("the NodePool, cascaded", "GET", &pool_path, Body::None)
        .await;
    let pool_statuses = format!("{pool_path}/statuses");
    let finalized = Finalize {
        statuses: &pool_statuses,
        generation: 2,
        first_time: 14,
        read: None,
    };
    finalized
        .by(side, "NodePool", &["validation", "hypershift"], times)
        .await;
    side.call(
        "the NodePool after both Finalized (hard-deleted)",
        "GET",
        &pool_path,
        Body::None,
    )
    .await;
    let finalized = Finalize {
        statuses: &statuses,
        generation: 4,
        first_time: 16,
        read: Some(&cluster),
    };
    finalized
        .by(side, "cluster", &CLUSTER_ADAPTERS, times)
        .await;
    side.call(
        "search the hard-deleted cluster",
        "GET",
        &format!("/clusters{}", search(&format!("name='{name}'"))),
        Body::None,
    )
    .await;
}

async fn management_cluster(side: &mut Side, name: &str, times: &Times) {
    let (_, created) = side
        .call("POST a ManagementCluster", "POST", "/managementclusters", Body::Json(json!({"kind": "ManagementCluster", "name": name,
            "labels": {"region": "us-east1", "tier": "mgmt"}, "spec": {"region": "us-east1", "maestro_consumer": name, "max_hosted_clusters": 200}})))
        .await;
    let id = side.learn(&created, "mgmt");
    let path = format!("/managementclusters/{id}");
    side.call(
        "search by spec",
        "GET",
        &format!(
            "/managementclusters{}",
            search(&format!("spec.maestro_consumer='{name}'"))
        ),
        Body::None,
    )
    .await;
    let Body::Json(mut body) = report("mgmt-health", json!(1), &times.at(30), "True", false) else {
        unreachable!()
    };
    body["data"] = json!({"hosted_clusters": 0, "capacity": 200});
    side.call(
        "mgmt-health reports",
        "PUT",
        &format!("{path}/statuses"),
        Body::Json(body),
    )
    .await;
    side.call("GET after the report", "GET", &path, Body::None)
        .await;
    side.call(
        "search by the adapter's condition",
        "GET",
        &format!(
            "/managementclusters{}",
            search(&format!(
                "status.conditions.MgmtHealthSuccessful='True' and name='{name}'"
            ))
        ),
        Body::None,
    )
    .await;
    side.call("DELETE it", "DELETE", &path, Body::None).await;
}

#[tokio::test]
async fn entities_reports_acceptance_rules_aggregation_and_hard_delete() {
    let Some(kit) = RealSystems::get(SUITE) else {
        return;
    };
    // reqwest is built without a default crypto provider (the workspace's rustls uses ring).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let name = unique("diff-hf");
    let mgmt = unique("diff-mgmt");
    let times = Times(Timestamp::now() - Duration::from_secs(600));
    let mut real = Side::new(kit.var("HYPERFLEET_API_URL"), None);
    cluster_life(&mut real, &name, &times).await;
    management_cluster(&mut real, &mgmt, &times).await;
    let mut fake = fake_side().await;
    cluster_life(&mut fake, &name, &times).await;
    management_cluster(&mut fake, &mgmt, &times).await;
    if let Err(report) = compare_sides(&fake, &real) {
        let (nf, nr) = (normalizer(&fake.ids), normalizer(&real.ids));
        let files = dump(
            "hyperfleet",
            (&fake.transcript, &nf),
            (&real.transcript, &nr),
        );
        panic!("cluster {name}: {report}{files}");
    }
}
