//! Issue 24 item 3d, the servers' faults: the Maestro server restarted between a pulse's publish
//! and the next read, a work agent stopped, the HyperFleet API down during a pulse, RabbitMQ
//! restarted. Each ends with a true, explained report (asserted: conditions, reasons, messages,
//! and where the HyperFleet API is involved what it concludes) and nothing lost.
//!
//! These tests stop servers, so they run on a kit of this process alone
//! ([`RealSystems::private`]), never on the shared one, and one at a time ([`ALONE`]): a restart of
//! the Maestro server would disturb another fault's pulses. A server is stopped and started
//! again by the PID the kit recorded, with the same command line and ports
//! (`testbed::real::restart`); one left stopped by a failed assertion is started again when its
//! `Outage` is dropped. The pulses run directly against the kit (`crate::direct`); RabbitMQ's
//! restart is proven on the framework and Sentinel (`testbed::real::{framework, sentinel}`).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use k8s_openapi::api::batch::v1::Job;
use serde_json::{Value, json};
use testbed::real::framework::{
    Deployment, Framework, FrameworkSpec, manifests_dir, write_api_token,
};
use testbed::real::hyperfleet_api::{HyperfleetApi, PREFIX};
use testbed::real::kube_access::{apply_file, service_account_kubeconfig};
use testbed::real::operator::HostedClusterStage;
use testbed::real::restart::Component;
use testbed::real::sentinel::{Resources, Sentinel, SentinelSpec};
use testbed::real::wait::eventually;
use testbed::real::{RealSystems, unique};

use crate::direct::{
    Bed, RETRY_BUDGET, Source, UPGRADE, VERSION, assert_leads, available, condition, expect,
    finish, never_true, summary,
};

const SUITE: &str = "real::faults";
/// One fault at a time on the private kit.
static ALONE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
/// The retry budget of a pulse meant to give up while a server is down.
const SHORT_BUDGET: Duration = Duration::from_secs(5);
/// The retry budget of a pulse meant to outlive an outage.
const LONG_BUDGET: Duration = Duration::from_secs(120);

/// The private kit and the right to break it, or `None` (skip) without the kit.
async fn private() -> Option<(&'static RealSystems, tokio::sync::MutexGuard<'static, ()>)> {
    let real = RealSystems::private(SUITE)?;
    Some((real, ALONE.lock().await))
}

fn message(report: &Value, type_: &str) -> String {
    condition(report, type_)["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// How long the Maestro agent may take to subscribe again after the server's restart. Measured on
/// the kit: about 8 s when its first attempt finds the server up; when the first attempt is
/// refused (the server still starting) its client closes and reconnects in cycles of 30–80 s,
/// 3 min 15 s once on a loaded machine (`maestro-agent-*.log`: `failed to subscribe after
/// connection` … `subscribed to grpc server`).
const RECONNECT: Duration = Duration::from_secs(360);

/// Pulses at `generation` (`version`) every 5 s until the agent of the bed's consumer has
/// subscribed again since `mark` (of the server's log): every report meanwhile is true (the work
/// read, not sent again; no availability claimed: the operator has not reported on what the
/// agent applied). How long it took.
async fn while_the_agent_reconnects(
    bed: &Bed,
    mark: testbed::real::restart::LogMark,
    generation: i64,
    version: &str,
) -> Duration {
    let started = Instant::now();
    loop {
        let report = bed.controlplane(generation, version);
        assert_eq!(report["observed_generation"], generation, "{report}");
        let applied = condition(&report, "Applied");
        assert_eq!(applied["status"], "True", "{report}");
        assert!(
            !["ManifestWorkCreated", "ManifestWorkUpdated"]
                .contains(&applied["reason"].as_str().unwrap_or_default()),
            "sent again: {report}"
        );
        never_true(&report);
        if bed
            .real
            .agent_subscribed(&bed.consumer, mark, Duration::ZERO)
            .await
            .is_ok()
        {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < RECONNECT,
            "the agent of {} did not subscribe again within {RECONNECT:?}; its log:\n{}",
            bed.consumer,
            bed.real
                .log_tail(&format!("maestro-agent-{}", bed.consumer), 20)
        );
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_maestro_server_restart_between_publish_and_read_loses_nothing() {
    let Some((real, _alone)) = private().await else {
        return;
    };
    let bed = Bed::start(real, "faults-maestro").await;
    let gen1 = bed.cluster(1, VERSION);
    let created = bed.controlplane(1, VERSION);
    assert_leads(
        &created,
        &[
            ("Applied", "True", "ManifestWorkCreated"),
            ("Available", "False", "Provisioning"),
        ],
    );

    // The server goes down right after the publish.
    let outage = real.stop(&Component::MaestroServer).await.unwrap();
    let ran = bed.run(
        "controlplane",
        &Source::File("CLUSTER_SPEC_FILE", &gen1),
        SHORT_BUDGET,
    );
    let took = ran.took;
    let unavailable = ran.report();
    assert_eq!(
        summary(&unavailable),
        expect(&[
            ("Applied", "False", "MaestroUnavailable"),
            ("Available", "Unknown", "MaestroUnavailable"),
            ("Health", "False", "MaestroUnavailable"),
        ]),
        "{unavailable}"
    );
    assert_eq!(unavailable["observed_generation"], 1, "{unavailable}");
    let why = message(&unavailable, "Applied");
    for part in [
        format!(
            "Maestro was unreachable for management cluster {}",
            bed.consumer
        ),
        format!("retry budget {} s", SHORT_BUDGET.as_secs()),
        format!("MAESTRO_API_URL {}", real.var("MAESTRO_API_URL")),
    ] {
        assert!(why.contains(&part), "{part:?} not in {why}");
    }
    assert!(
        took < SHORT_BUDGET + Duration::from_secs(10),
        "the pulse gave up after {took:?}"
    );

    // A pulse that starts while the server is down retries until it is back.
    let (cmd, results) = bed.command(
        "controlplane",
        &Source::File("CLUSTER_SPEC_FILE", &gen1),
        LONG_BUDGET,
    );
    let pending = tokio::task::spawn_blocking(move || finish(cmd, results));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let server_mark = real.log_mark("maestro-server");
    let downtime = outage.end().await.unwrap();
    let through = pending.await.unwrap();
    let waited = through.took;
    let through = through.report();
    // The work was kept: read, not created again; nothing claims availability yet.
    let applied = condition(&through, "Applied");
    assert_eq!(applied["status"], "True", "{through}");
    assert_ne!(applied["reason"], "ManifestWorkCreated", "{through}");
    never_true(&through);
    assert!(
        ["AwaitingFeedback", "Provisioning"].contains(&available(&through).1.as_str()),
        "{through}"
    );
    assert_eq!(bed.bundles().await.len(), 1, "one work for the consumer");
    let reconnected = while_the_agent_reconnects(&bed, server_mark, 1, VERSION).await;
    bed.control_plane_available(1, VERSION, |_| {}).await;

    // The same during an update: the update published, the server restarted at once, and the
    // next read finds the update kept (not sent again), which the agent then applies.
    let updated = bed.controlplane(2, UPGRADE);
    assert_leads(
        &updated,
        &[
            ("Applied", "True", "ManifestWorkUpdated"),
            ("Available", "False", "Updating"),
        ],
    );
    let restart = real.stop(&Component::MaestroServer).await.unwrap();
    let server_mark = real.log_mark("maestro-server");
    let second_downtime = restart.end().await.unwrap();
    let next = bed.controlplane(2, UPGRADE);
    never_true(&next);
    assert_eq!(next["observed_generation"], 2, "{next}");
    let applied = condition(&next, "Applied");
    assert_eq!(applied["status"], "True", "{next}");
    assert_ne!(applied["reason"], "ManifestWorkUpdated", "{next}");
    assert_eq!(bed.bundles().await.len(), 1, "one work for the consumer");
    let reconnected_again = while_the_agent_reconnects(&bed, server_mark, 2, UPGRADE).await;
    bed.hosted_cluster_at(UPGRADE).await;
    bed.control_plane_available(2, UPGRADE, |_| {}).await;
    println!(
        "faults: Maestro down {downtime:.1?} (a pulse waited {waited:.1?} through it; one with a {SHORT_BUDGET:?} budget gave up after {took:.1?}); the agent subscribed again {reconnected:.1?} after the restart; restarted in {second_downtime:.1?} during an update, the agent back {reconnected_again:.1?} later"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_agent_is_never_reported_available_at_a_new_generation() {
    let Some((real, _alone)) = private().await else {
        return;
    };
    let bed = Bed::start(real, "faults-agent").await;
    bed.control_plane_serves().await;
    let outage = real
        .stop(&Component::Agent(bed.consumer.clone()))
        .await
        .unwrap();

    // Nothing changed: Maestro still holds the agent's last status of generation 1, which is
    // what the pulse reports (a static consumer has no health of its own to read).
    let steady = bed.controlplane(1, VERSION);
    assert_eq!(
        available(&steady),
        ("True".to_owned(), "ControlPlaneReady".to_owned()),
        "{steady}"
    );

    // Generation 2 is published; no agent takes it.
    let updated = bed.controlplane(2, UPGRADE);
    assert_leads(
        &updated,
        &[
            ("Applied", "True", "ManifestWorkUpdated"),
            ("Available", "False", "Updating"),
        ],
    );
    // For longer than two of the agent's status syncs (10 s): no feedback on the new version.
    let watch = Instant::now();
    let mut seen = BTreeSet::new();
    let mut last = Value::Null;
    while watch.elapsed() < Duration::from_secs(25) {
        let report = bed.controlplane(2, UPGRADE);
        never_true(&report);
        assert_eq!(report["observed_generation"], 2, "{report}");
        seen.insert(summary(&report));
        last = report;
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        [expect(&[
            ("Applied", "True", "ManifestWorkExists"),
            ("Available", "False", "AwaitingFeedback"),
            ("Health", "True", "NoIssues"),
        ])],
        "{last}"
    );
    let image = bed.hosted_cluster().await.unwrap()["spec"]["release"]["image"].clone();
    assert!(
        image.as_str().is_some_and(|i| i.contains(VERSION)),
        "applied without an agent: {image}"
    );

    // The agent is back: it applies generation 2; the operator's lag, then its rollout.
    let downtime = outage.end().await.unwrap();
    bed.hosted_cluster_at(UPGRADE).await;
    bed.until(
        "the operator's window",
        ("False", "AwaitingOperator"),
        || bed.controlplane(2, UPGRADE),
        never_true,
    )
    .await;
    let ready = bed.operator_completes(2, UPGRADE, |_| {}).await;
    assert_eq!(ready["observed_generation"], 2, "{ready}");
    println!("faults: agent down {downtime:.1?}; converged at generation 2 after it came back");
}

/// The report as the framework's task config PUTs an adapter's own verdict to the API: its
/// conditions as they are, its generation and data.
fn status_body(report: &Value) -> Value {
    let conditions: Vec<Value> = report["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| json!({"type": c["type"], "status": c["status"], "reason": c["reason"], "message": c["message"]}))
        .collect();
    json!({
        "adapter": "hypershift",
        "observed_generation": report["observed_generation"],
        "observed_time": jiff::Timestamp::now().round(jiff::Unit::Second).unwrap().to_string(),
        "conditions": conditions,
        "data": report.get("data").cloned().unwrap_or_else(|| json!({})),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pulse_while_the_hyperfleet_api_is_down_says_so_and_the_api_keeps_its_conclusion() {
    let Some((real, _alone)) = private().await else {
        return;
    };
    let mut bed = Bed::start(real, "faults-api").await;
    let api = HyperfleetApi::new(real);
    let spec = bed.cluster(1, VERSION)["spec"].clone();
    let created = api
        .create_cluster(&bed.name, &json!({"testrun": bed.name}), &spec)
        .await
        .unwrap();
    bed.cluster_id = created["id"].as_str().unwrap().to_owned();
    let href = format!("{PREFIX}/clusters/{}", bed.cluster_id);
    let pulse = |budget| bed.run("controlplane", &Source::Api(1), budget);

    // Pulses read the cluster from the API, as the shipped Job does, until the control plane
    // serves; HyperFleet stores that (the framework's PUT of the Job's conditions).
    let first = pulse(RETRY_BUDGET).report();
    assert_eq!(available(&first).1, "Provisioning", "{first}");
    bed.hosted_cluster_at(VERSION).await;
    bed.operator
        .write_hosted_cluster(&bed.name, HostedClusterStage::Available)
        .await
        .unwrap();
    let ready = bed
        .until(
            "ready through the API",
            ("True", "ControlPlaneReady"),
            || pulse(RETRY_BUDGET).report(),
            |_| {},
        )
        .await;
    let (code, answer) = api.put_status(&href, &status_body(&ready)).await.unwrap();
    assert_eq!(code, 201, "{answer}");
    let stored = api
        .conclusion(&href, "HypershiftSuccessful")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.short().0, "True", "{stored:?}");
    assert_eq!(stored.short().1, 1, "{stored:?}");

    // The API goes down: the pulse cannot read the cluster and says so.
    let outage = real.stop(&Component::HyperfleetApi).await.unwrap();
    let ran = pulse(RETRY_BUDGET);
    let took = ran.took;
    let down = ran.report();
    assert_eq!(
        summary(&down),
        expect(&[
            ("Applied", "False", "ClusterSpecUnavailable"),
            ("Available", "Unknown", "ClusterSpecUnavailable"),
            ("Health", "False", "ClusterSpecUnavailable"),
        ]),
        "{down}"
    );
    assert_eq!(down["observed_generation"], 1, "{down}");
    let url = format!(
        "GET {}{href} failed",
        real.var("HYPERFLEET_API_URL").trim_end_matches('/')
    );
    let why = message(&down, "Applied");
    assert!(why.contains(&url), "{url:?} not in {why}");
    // Nothing was sent to Maestro: the work is as it was.
    assert_eq!(bed.bundles().await.len(), 1, "one work for the consumer");

    // The API is back. The report reaches it (the framework PUTs the Job's conditions on a
    // later event): its Available=Unknown is not stored over the adapter's last report, so
    // HyperFleet's conclusion stays what was last observed.
    let downtime = outage.end().await.unwrap();
    let (code, answer) = api.put_status(&href, &status_body(&down)).await.unwrap();
    assert_eq!(code, 204, "{answer}");
    let kept = api
        .conclusion(&href, "HypershiftSuccessful")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(kept, stored, "the outage changed HyperFleet's conclusion");

    // The next pulse is fine.
    let after = pulse(RETRY_BUDGET).report();
    assert_eq!(
        available(&after),
        ("True".to_owned(), "ControlPlaneReady".to_owned()),
        "{after}"
    );
    let (code, answer) = api.put_status(&href, &status_body(&after)).await.unwrap();
    assert_eq!(code, 201, "{answer}");
    let again = api
        .conclusion(&href, "HypershiftSuccessful")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.short(), stored.short(), "{again:?}");
    println!(
        "faults: HyperFleet API down {downtime:.1?}; the pulse in between reported after {took:.1?}"
    );
}

/// The namespace of the pulse Jobs (the shipped task configs').
const JOB_NAMESPACE: &str = "hyperfleet-system";

/// `POST /clusters` with the test's label, and the other required adapters' reports
/// (Available=True at generation 1), so that the framework's preconditions pass: the cluster's id.
async fn cluster_ready_for_a_pulse(api: &HyperfleetApi, id: &str, bed: &Bed) -> String {
    let name = unique("faults-broker");
    let created = api
        .create_cluster(
            &name,
            &json!({"testrun": id}),
            &bed.cluster(1, VERSION)["spec"],
        )
        .await
        .unwrap();
    let cluster = created["id"].as_str().unwrap().to_owned();
    let href = format!("{PREFIX}/clusters/{cluster}");
    for adapter in ["validation", "dns", "pullsecret"] {
        let code = api.report_as(&href, adapter, true).await.unwrap();
        assert!(matches!(code, 200 | 201), "{adapter}: {code}");
    }
    cluster
}

/// Waits until the framework has created the pulse Job of `cluster` at generation 1.
async fn pulse_job(
    kube: &kube::Client,
    cluster: &str,
    timeout: Duration,
    logs: impl Fn() -> String,
) -> Job {
    let jobs: kube::Api<Job> = kube::Api::namespaced(kube.clone(), JOB_NAMESPACE);
    let name = format!("hs-cp-{cluster}-g1");
    match eventually(timeout, &format!("Job {name}"), || async {
        Ok(jobs.get_opt(&name).await?)
    })
    .await
    {
        Ok(job) => job,
        Err(e) => panic!("{e:#}{}", logs()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_rabbitmq_restart_the_next_cluster_event_still_makes_a_pulse_job() {
    let Some((real, _alone)) = private().await else {
        return;
    };
    let id = unique("faults-broker");
    let bed = Bed::start(real, "faults-broker").await;
    let kube = real.kube_client().await.unwrap();
    apply_file(&kube, &manifests_dir().join("hyperfleet/rbac.yaml"))
        .await
        .unwrap();
    apply_file(&kube, &manifests_dir().join("rbac.yaml"))
        .await
        .unwrap();
    let dir = tempfile::Builder::new().prefix("fb-").tempdir().unwrap();
    let kubeconfig = service_account_kubeconfig(
        real,
        &kube,
        JOB_NAMESPACE,
        "hypershift-adapter-framework",
        3600,
        &dir.path().join("framework.kubeconfig"),
    )
    .await
    .unwrap();
    let token = write_api_token(dir.path()).unwrap();
    let topic = format!("{id}-clusters");
    let own = dir.path().join("cp");
    let spec = FrameworkSpec::shipped(
        Deployment::ControlPlane,
        real,
        &topic,
        &bed.consumer,
        &kubeconfig,
        &token,
    );
    let mut framework = Framework::start(real, spec, &own).await.unwrap();
    let sentinel = Sentinel::start(
        real,
        SentinelSpec::new(Resources::Clusters, &topic, ("testrun", &id)),
        &own,
    )
    .await
    .unwrap();
    let logs = || {
        format!(
            "\n--- framework:\n{}\n--- Sentinel ({} published):\n{}\n--- RabbitMQ:\n{}",
            framework.log_tail(25),
            sentinel.published(),
            sentinel.log_tail(15),
            real.log_tail("rabbitmq-server", 15)
        )
    };
    let api = HyperfleetApi::new(real);

    let before = cluster_ready_for_a_pulse(&api, &id, &bed).await;
    pulse_job(&kube, &before, Duration::from_secs(60), logs).await;

    // RabbitMQ goes down; a cluster created meanwhile cannot be published (Sentinel says so).
    let outage = real.stop(&Component::Broker).await.unwrap();
    let during = cluster_ready_for_a_pulse(&api, &id, &bed).await;
    let refused = format!("Failed to publish event resource_id={during}");
    eventually(
        Duration::from_secs(30),
        "Sentinel's failed publish",
        || async { Ok(sentinel.log().contains(&refused).then_some(())) },
    )
    .await
    .unwrap_or_else(|e| panic!("{e:#}{}", logs()));
    let downtime = outage.end().await.unwrap();
    let restarted = Instant::now();
    // Back: the event of the outage is published again and makes its Job; so does the next one.
    pulse_job(&kube, &during, Duration::from_secs(180), logs).await;
    let recovered = restarted.elapsed();
    let after = cluster_ready_for_a_pulse(&api, &id, &bed).await;
    pulse_job(&kube, &after, Duration::from_secs(60), logs).await;
    // The same processes did it: both reconnected (their own log lines).
    let log = framework.log();
    assert!(
        log.contains("Received close notification from AMQP, reconnecting")
            && log.matches("Connected to AMQP").count() >= 2,
        "{}",
        logs()
    );
    assert!(
        sentinel.log().matches("Connected to AMQP").count() >= 2,
        "{}",
        logs()
    );
    let exited = framework.exited();
    assert_eq!(exited, None, "{}", framework.log_tail(25));
    println!(
        "faults: RabbitMQ down {downtime:.1?}; the pulse Job of the cluster created meanwhile {recovered:.1?} after it was back"
    );
}
