//! Issue 9 end to end, as HyperFleet reads it: what the management cluster's work agent reports
//! reaches the pulse Job. Each case runs the real `hypershift-adapter controlplane` and
//! `status-reporter` binaries ([`testbed::real_pulse`]) on both work backends: `maestro` (the fake
//! Maestro and its simulated agent) and `hub` (a ManifestWork on the fake API server, its status
//! written by the same simulated agent, [`testbed::hub_agent`]). The checks are on the Job's
//! final conditions and its data annotations.
//!
//! Cases: an admission policy denies the HostedCluster; an empty management cluster (no
//! `clusters` namespace: the work's Namespace makes the HostedCluster apply, and a work without it
//! fails); the HostedCluster deleted on the management cluster while the agent keeps its last
//! feedback; the agent's feedback sync failing; a pulse for a newer generation while the work
//! still holds an older one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use testbed::hub_agent::{HubAgent, WORKS};
use testbed::ids::{CLUSTER_ID, LONGEST_CLUSTER_NAME};
use testbed::kube_api::ApiServer;
use testbed::local_pulse::scenario::{
    ENDPOINT_HOST, Stage, VERSION, admission_denial, hosted_cluster_status,
};
use testbed::maestro::{FakeMaestro, FakeOptions};
use testbed::pulse_job::controlplane_job_name;
use testbed::real_pulse::{self, JobPulse};

const CLUSTER: &str = include_str!("../../adapter/tests/fixtures/cluster-valid.json");
const CONSUMER: &str = "mgmt-1";
/// The generation of the fixture cluster.
const GENERATION: i32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Maestro,
    Hub,
}

/// Who holds the work and reports on it.
enum Agent {
    /// Maestro, its agent reporting only when told.
    Maestro(FakeMaestro),
    /// The hub's simulated agent.
    Hub(HubAgent),
}

/// The fakes of one case and the Pod's directory.
struct Bed {
    server: ApiServer,
    agent: Agent,
    dir: tempfile::TempDir,
}

impl Bed {
    async fn start(backend: Backend) -> Bed {
        let server = ApiServer::start().await;
        let agent = match backend {
            Backend::Maestro => {
                let maestro = FakeMaestro::start(FakeOptions {
                    consumers: vec![CONSUMER.to_owned()],
                    ..FakeOptions::default()
                })
                .await
                .unwrap();
                maestro.set_agent_delay(None);
                Agent::Maestro(maestro)
            }
            Backend::Hub => Agent::Hub(HubAgent::start(CONSUMER).await.unwrap()),
        };
        let dir = tempfile::tempdir().unwrap();
        // The fixture cluster under the longest name the HyperFleet API accepts.
        let mut cluster: Value = serde_json::from_str(CLUSTER).unwrap();
        assert_eq!(cluster["id"], CLUSTER_ID);
        assert_eq!(cluster["generation"], GENERATION);
        cluster["name"] = json!(LONGEST_CLUSTER_NAME);
        std::fs::write(dir.path().join("cluster.json"), cluster.to_string()).unwrap();
        Bed { server, agent, dir }
    }

    fn work(&self) -> String {
        format!("hostedcluster-{CLUSTER_ID}")
    }

    /// The adapter container's env for the pulse of `generation`.
    fn adapter_env(&self, generation: i32) -> Vec<(String, String)> {
        let dir = self.dir.path();
        let mut env = vec![
            ("CLUSTER_ID", CLUSTER_ID.to_owned()),
            ("GENERATION", generation.to_string()),
            (
                "CLUSTER_SPEC_FILE",
                dir.join("cluster.json").display().to_string(),
            ),
            ("MANAGEMENT_CLUSTER_CONSUMER", CONSUMER.to_owned()),
            ("LOG_FORMAT", "json".to_owned()),
        ];
        match &self.agent {
            Agent::Maestro(maestro) => env.extend([
                ("MAESTRO_API_URL", maestro.rest_url()),
                ("MAESTRO_GRPC_URL", maestro.grpc_url()),
            ]),
            Agent::Hub(_) => env.extend([
                ("WORK_BACKEND", "hub".to_owned()),
                (
                    "KUBECONFIG",
                    self.server.write_kubeconfig(dir).display().to_string(),
                ),
            ]),
        }
        env.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
    }

    /// The fake whose agent reports, for knobs that must hold before it first applies the work.
    fn maestro(&self) -> &FakeMaestro {
        match &self.agent {
            Agent::Maestro(maestro) => maestro,
            Agent::Hub(hub) => &hub.maestro,
        }
    }

    /// Drops the Namespace manifest from the work before the agent applies it, standing in for a
    /// work built without it.
    fn strip_namespace(&self) {
        match &self.agent {
            Agent::Maestro(maestro) => {
                let id = maestro.resource(&self.work()).unwrap().id;
                assert!(maestro.strip_manifest_for_test(&id, "Namespace"));
            }
            Agent::Hub(hub) => {
                assert!(
                    hub.maestro.resource(&self.work()).is_none(),
                    "already applied"
                );
                let mut work = self
                    .server
                    .object(WORKS, "manifestworks", Some(CONSUMER), &self.work())
                    .unwrap();
                work["spec"]["workload"]["manifests"]
                    .as_array_mut()
                    .unwrap()
                    .retain(|m| m["kind"] != "Namespace");
                self.server.put_object(WORKS, Some(CONSUMER), work);
            }
        }
    }

    /// The management cluster's agent, holding the work (on the hub backend it is handed the
    /// hub's ManifestWork the first time, and applies it). Its knobs take effect on the next
    /// pulse.
    async fn agent(&self) -> &FakeMaestro {
        match &self.agent {
            Agent::Maestro(maestro) => maestro,
            Agent::Hub(hub) => {
                hub.receive(&self.server, &self.work()).await.unwrap();
                &hub.maestro
            }
        }
    }

    /// One pulse of `generation`; on the hub backend the agent's last report is written into the
    /// hub ManifestWork first, as the agent would have.
    async fn pulse(&self, generation: i32) -> JobPulse {
        if let Agent::Hub(hub) = &self.agent
            && hub.maestro.resource(&self.work()).is_some()
        {
            assert!(hub.report(&self.server, &self.work()));
        }
        let pulse = real_pulse::run(
            &self.server,
            self.dir.path(),
            &controlplane_job_name(CLUSTER_ID, generation),
            &self.adapter_env(generation),
        )
        .await;
        assert!(pulse.ended_cleanly(), "{}", pulse.explain());
        pulse
    }
}

fn triples(items: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    items
        .iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect()
}

/// Applied, Available and Health with one status and reason.
fn all(status: &str, reason: &str) -> Vec<(String, String, String)> {
    triples(&[
        ("Applied", status, reason),
        ("Available", status, reason),
        ("Health", status, reason),
    ])
}

fn created() -> Vec<(String, String, String)> {
    triples(&[
        ("Applied", "True", "ManifestWorkCreated"),
        ("Available", "False", "Provisioning"),
        ("Health", "True", "NoIssues"),
    ])
}

fn ready() -> Vec<(String, String, String)> {
    triples(&[
        ("Applied", "True", "ManifestWorkApplied"),
        ("Available", "True", "ControlPlaneReady"),
        ("Health", "True", "NoIssues"),
    ])
}

/// `data.<key>` as HyperFleet reads it: the per-key annotation and the `report-data` value.
#[track_caller]
fn assert_data(pulse: &JobPulse, key: &str, want: &str) {
    assert_eq!(
        pulse
            .annotation(&format!("data.hyperfleet.io/{key}"))
            .as_deref(),
        Some(want),
        "data.hyperfleet.io/{key}\n{}",
        pulse.explain()
    );
    assert_eq!(pulse.report_data()[key], want, "report-data {key}");
}

/// The Job claims no control plane: empty endpoint and version.
#[track_caller]
fn assert_no_control_plane_data(pulse: &JobPulse) {
    assert_data(pulse, "control_plane_endpoint", "");
    assert_data(pulse, "version", "");
}

#[track_caller]
fn assert_control_plane_data(pulse: &JobPulse) {
    assert_data(
        pulse,
        "control_plane_endpoint",
        &format!("https://{ENDPOINT_HOST}:443"),
    );
    assert_data(pulse, "version", VERSION);
}

#[track_caller]
fn assert_observed_generation(pulse: &JobPulse, generation: i32) {
    assert_eq!(
        pulse.annotation("hyperfleet.io/observed-generation"),
        Some(generation.to_string()),
        "{}",
        pulse.explain()
    );
}

/// A pulse of a cluster whose work the agent applied, the HostedCluster reporting Available=True.
async fn ready_pulse(bed: &Bed) -> JobPulse {
    let work = bed.work();
    assert!(
        bed.agent()
            .await
            .set_feedback(&work, &hosted_cluster_status(Stage::Ready))
    );
    let pulse = bed.pulse(GENERATION).await;
    assert_eq!(pulse.conditions(), ready(), "{}", pulse.explain());
    assert_control_plane_data(&pulse);
    pulse
}

/// An admission policy denies the HostedCluster: Applied, Available and Health are False
/// `ApplyFailed`, Applied has the API server's words, and no control plane is claimed.
async fn a_denied_hosted_cluster(backend: Backend) {
    let bed = Bed::start(backend).await;
    let first = bed.pulse(GENERATION).await;
    assert_eq!(first.conditions(), created());
    let denial = admission_denial();
    assert!(bed.agent().await.fail_apply(&bed.work(), Some(&denial)));
    let denied = bed.pulse(GENERATION).await;
    assert_eq!(
        denied.conditions(),
        all("False", "ApplyFailed"),
        "{}",
        denied.explain()
    );
    let applied = denied.message("Applied");
    assert!(
        applied.contains(&format!("Failed to apply manifest: {denial}")),
        "{applied}"
    );
    assert_no_control_plane_data(&denied);
    assert_observed_generation(&denied, GENERATION);
}

/// A management cluster without the `clusters` namespace: the work's Namespace manifest makes the
/// HostedCluster apply. The negative: a work without it fails with the agent's words.
async fn an_empty_management_cluster(backend: Backend, carries_namespace: bool) {
    let bed = Bed::start(backend).await;
    bed.maestro()
        .set_cluster_namespaces(&["default", "kube-system"]);
    bed.pulse(GENERATION).await;
    if carries_namespace {
        ready_pulse(&bed).await;
        return;
    }
    bed.strip_namespace();
    assert!(bed.agent().await.apply(&bed.work()));
    let pulse = bed.pulse(GENERATION).await;
    assert_eq!(
        pulse.conditions(),
        all("False", "ApplyFailed"),
        "{}",
        pulse.explain()
    );
    let applied = pulse.message("Applied");
    assert!(
        applied.contains(r#"Failed to apply manifest: namespaces "clusters" not found"#),
        "{applied}"
    );
    assert_no_control_plane_data(&pulse);
}

/// The HostedCluster is deleted on the management cluster; the agent keeps its last feedback
/// (Available=True, endpoint, version) but reports the manifest Available=False. The Job must
/// not say the control plane is available, nor carry the old endpoint.
async fn a_hosted_cluster_gone_with_stale_feedback(backend: Backend) {
    let bed = Bed::start(backend).await;
    bed.pulse(GENERATION).await;
    ready_pulse(&bed).await;
    let agent = bed.agent().await;
    assert!(agent.delete_on_cluster(&bed.work(), true));
    // The agent still carries the feedback of the ready HostedCluster.
    let status = agent.resource(&bed.work()).unwrap().status.unwrap();
    assert!(
        status.to_string().contains(ENDPOINT_HOST),
        "no stale feedback: {status}"
    );
    let gone = bed.pulse(GENERATION).await;
    assert_eq!(
        gone.conditions(),
        triples(&[
            ("Applied", "True", "ManifestWorkApplied"),
            ("Available", "False", "HostedClusterMissing"),
            ("Health", "False", "HostedClusterMissing"),
        ]),
        "{}",
        gone.explain()
    );
    assert_no_control_plane_data(&gone);
}

/// The real agent's words for a failed feedback sync are not recorded: placeholders, which the
/// Job must quote.
const SYNC_REASON: &str = "PlaceholderSyncFailure";
const SYNC_MESSAGE: &str = "placeholder: the status feedback could not be read";

/// The agent reports `StatusFeedbackSynced=False` while keeping the last (ready) feedback: the
/// Job says Unknown, not Available=True from the old value.
async fn feedback_not_synced(backend: Backend) {
    let bed = Bed::start(backend).await;
    bed.pulse(GENERATION).await;
    ready_pulse(&bed).await;
    assert!(
        bed.agent()
            .await
            .fail_feedback_sync(&bed.work(), Some((SYNC_REASON, SYNC_MESSAGE)))
    );
    let pulse = bed.pulse(GENERATION).await;
    assert_eq!(
        pulse.conditions(),
        triples(&[
            ("Applied", "True", "ManifestWorkApplied"),
            ("Available", "Unknown", "FeedbackNotSynced"),
            ("Health", "Unknown", "FeedbackNotSynced"),
        ]),
        "{}",
        pulse.explain()
    );
    let available = pulse.message("Available");
    assert!(
        available.contains(&format!("{SYNC_REASON}: {SYNC_MESSAGE}")),
        "{available}"
    );
    assert_no_control_plane_data(&pulse);
    // Synced again: the feedback is used again.
    assert!(bed.agent().await.fail_feedback_sync(&bed.work(), None));
    let again = bed.pulse(GENERATION).await;
    assert_eq!(again.conditions(), ready(), "{}", again.explain());
}

/// The work was created at generation 4: the pulse Job of generation 5 updates it and reports
/// generation 5 as not reflected yet (Available False `Updating`: the agent has not applied it),
/// naming the generation-4 control plane that serves. (HyperFleet keeps LastKnownReconciled at 4
/// on a False about 5: generations/b.)
async fn an_older_works_generation(backend: Backend) {
    let bed = Bed::start(backend).await;
    let first = bed.pulse(4).await;
    assert_eq!(first.conditions(), created());
    assert_observed_generation(&first, 4);
    assert!(
        bed.agent()
            .await
            .set_feedback(&bed.work(), &hosted_cluster_status(Stage::Ready))
    );
    let later = bed.pulse(5).await;
    assert_eq!(
        later.conditions(),
        triples(&[
            ("Applied", "True", "ManifestWorkUpdated"),
            ("Available", "False", "Updating"),
            ("Health", "True", "NoIssues"),
        ]),
        "{}",
        later.explain()
    );
    assert_observed_generation(&later, 5);
    assert!(
        later
            .message("Available")
            .contains("HostedCluster of generation 4 on the management cluster: Available=True"),
        "{}",
        later.explain()
    );
    assert_eq!(
        later.job["metadata"]["name"],
        controlplane_job_name(CLUSTER_ID, 5)
    );
}

/// The negative of the hub cases: the same denial, but the agent's report never reaches the hub
/// work (as if the adapter read nothing of it): the Job says what the adapter said before issue 9,
/// which the checks above refuse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hub_without_the_agents_report_the_denial_is_not_seen() {
    let bed = Bed::start(Backend::Hub).await;
    bed.pulse(GENERATION).await;
    let Agent::Hub(hub) = &bed.agent else {
        unreachable!()
    };
    hub.receive(&bed.server, &bed.work()).await.unwrap();
    assert!(
        hub.maestro
            .fail_apply(&bed.work(), Some(&admission_denial()))
    );
    let pulse = real_pulse::run(
        &bed.server,
        bed.dir.path(),
        &controlplane_job_name(CLUSTER_ID, GENERATION),
        &bed.adapter_env(GENERATION),
    )
    .await;
    assert_eq!(
        pulse.conditions(),
        triples(&[
            ("Applied", "True", "ManifestWorkExists"),
            ("Available", "False", "AwaitingFeedback"),
            ("Health", "True", "NoIssues"),
        ]),
        "{}",
        pulse.explain()
    );
    assert_ne!(pulse.conditions(), all("False", "ApplyFailed"));
}

/// Each case as one test per backend: `maestro::<case>` and `hub::<case>`.
macro_rules! on_both_backends {
    ($($name:ident => $case:expr;)*) => {
        mod maestro {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    ($case)(Backend::Maestro).await;
                }
            )*
        }
        mod hub {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    ($case)(Backend::Hub).await;
                }
            )*
        }
    };
}

on_both_backends! {
    an_admission_denial_is_apply_failed_with_the_agents_words => a_denied_hosted_cluster;
    the_works_namespace_makes_it_apply_on_an_empty_management_cluster =>
        |b| an_empty_management_cluster(b, true);
    a_work_without_the_namespace_fails_there => |b| an_empty_management_cluster(b, false);
    a_deleted_hosted_cluster_is_missing_despite_stale_feedback =>
        a_hosted_cluster_gone_with_stale_feedback;
    an_unsynced_feedback_is_unknown_not_available => feedback_not_synced;
    observed_generation_is_the_newest_of_pulse_and_work => an_older_works_generation;
}
