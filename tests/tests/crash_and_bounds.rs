//! Issue 16, items 1 and 2, end to end through the real binaries ([`testbed::real_pulse`]: the
//! `hypershift-adapter` and the `status-reporter` as the pulse Pod's two containers, the testbed
//! playing the kubelet, which reads the adapter's termination message as a real one does):
//!
//! - **a crash says why**: an adapter that cannot write its report exits 1, and the Job's
//!   `AdapterExitedWithError` message carries the cause it wrote to its termination log;
//! - **every file input is bounded**: an endless file (`/dev/zero`, a pipe fed forever) where a
//!   spec, a token, a CA or a kubeconfig belongs gives the documented report row, naming the
//!   file and the limit, instead of reading until the memory limit kills the adapter.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;

use testbed::ids::{CLUSTER_ID, NODEPOOL_ID};
use testbed::kube_api::ApiServer;
use testbed::pulse_job::{controlplane_job_name, nodepool_job_name};
use testbed::real_pulse::{self, JobPulse};

const CLUSTER: &str = include_str!("../../adapter/tests/fixtures/cluster-valid.json");
const CONSUMER: &str = "mgmt-1";
/// The generation of the fixture cluster.
const GENERATION: i32 = 3;

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The control plane adapter's environment with `extra` (later entries win). The Maestro URLs
/// point at a closed port: every case here ends before the adapter would call Maestro.
fn controlplane_env(extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env = pairs(&[
        ("CLUSTER_ID", CLUSTER_ID),
        ("GENERATION", &GENERATION.to_string()),
        ("MANAGEMENT_CLUSTER_CONSUMER", CONSUMER),
        ("MAESTRO_API_URL", "http://127.0.0.1:9"),
        ("MAESTRO_GRPC_URL", "http://127.0.0.1:9"),
        ("RETRY_BUDGET_SECONDS", "1"),
        ("LOG_FORMAT", "json"),
    ]);
    env.extend(pairs(extra));
    env
}

async fn controlplane(server: &ApiServer, dir: &Path, env: &[(String, String)]) -> JobPulse {
    real_pulse::run(
        server,
        dir,
        &controlplane_job_name(CLUSTER_ID, GENERATION),
        env,
    )
    .await
}

/// `(type, status, reason)` of Applied, Available and Health with `reason` and the statuses of
/// an input row: Applied and Health False, Available Unknown.
fn input_row(reason: &str) -> Vec<(String, String, String)> {
    let mut rows = vec![
        ("Applied".to_owned(), "False".to_owned(), reason.to_owned()),
        (
            "Available".to_owned(),
            "Unknown".to_owned(),
            reason.to_owned(),
        ),
        ("Health".to_owned(), "False".to_owned(), reason.to_owned()),
    ];
    rows.sort();
    rows
}

fn assert_says(pulse: &JobPulse, type_: &str, parts: &[&str]) {
    let message = pulse.message(type_);
    for part in parts {
        assert!(
            message.contains(part),
            "{type_}'s message lacks {part:?}: {message}\n{}",
            pulse.explain()
        );
    }
}

#[tokio::test]
async fn an_adapter_that_cannot_write_its_report_says_why_in_adapter_exited_with_error() {
    let server = ApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    // A results path under a regular file: not writable whoever runs the test (root included).
    let not_a_dir = dir.path().join("results-is-a-file");
    std::fs::write(&not_a_dir, "").unwrap();
    let unwritable = not_a_dir.join("adapter-report.json");
    let unwritable = unwritable.display().to_string();
    let pulse = controlplane(
        &server,
        dir.path(),
        &controlplane_env(&[
            ("CLUSTER_SPEC_FILE", "/nonexistent/cluster.json"),
            ("RESULTS_OUTPUT_PATH", &unwritable),
        ]),
    )
    .await;
    assert_eq!(pulse.adapter_code, Some(1), "{}", pulse.explain());
    assert_eq!(pulse.reporter_code, Some(0), "{}", pulse.explain());
    let mut want = vec![
        (
            "Applied".to_owned(),
            "False".to_owned(),
            "AdapterExitedWithError".to_owned(),
        ),
        (
            "Available".to_owned(),
            "False".to_owned(),
            "AdapterExitedWithError".to_owned(),
        ),
        (
            "Health".to_owned(),
            "False".to_owned(),
            "AdapterExitedWithError".to_owned(),
        ),
    ];
    want.sort();
    let got: Vec<_> = pulse
        .conditions()
        .into_iter()
        .filter(|(t, _, _)| ["Applied", "Available", "Health"].contains(&t.as_str()))
        .collect();
    assert_eq!(got, want, "{}", pulse.explain());
    // Exactly the cause the adapter wrote to its termination log (not its JSON log lines, which
    // the kubelet would fall back to had it written nothing).
    let want = format!(
        "The adapter container exited with code 1 (Error) before writing a report: cannot write the report {unwritable}: cannot write report {unwritable}: Not a directory (os error 20)"
    );
    for type_ in ["Applied", "Available", "Health"] {
        assert_eq!(pulse.message(type_), want, "{}", pulse.explain());
    }
}

#[tokio::test]
async fn an_endless_cluster_spec_file_gives_cluster_spec_unavailable_naming_the_limit() {
    let server = ApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let pulse = controlplane(
        &server,
        dir.path(),
        &controlplane_env(&[("CLUSTER_SPEC_FILE", "/dev/zero")]),
    )
    .await;
    assert!(pulse.ended_cleanly(), "{}", pulse.explain());
    assert_eq!(pulse.conditions(), input_row("ClusterSpecUnavailable"));
    assert_says(
        &pulse,
        "Applied",
        &[
            "the cluster spec file /dev/zero is larger than 1 MiB (1048576 bytes)",
            "CLUSTER_SPEC_FILE must name a file of at most 1 MiB",
        ],
    );
}

#[tokio::test]
async fn a_cluster_spec_pipe_fed_forever_gives_a_report_and_the_reader_lets_go() {
    let server = ApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("cluster.json");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let writer_path = fifo.clone();
    // Feeds the pipe until the adapter closes it: the join returns only because it stopped.
    let writer = std::thread::spawn(move || {
        let mut pipe = std::fs::OpenOptions::new()
            .write(true)
            .open(writer_path)
            .unwrap();
        let chunk = [b' '; 65536];
        loop {
            if let Err(e) = pipe.write_all(&chunk) {
                return e.kind();
            }
        }
    });
    let fifo = fifo.display().to_string();
    let pulse = controlplane(
        &server,
        dir.path(),
        &controlplane_env(&[("CLUSTER_SPEC_FILE", &fifo)]),
    )
    .await;
    assert!(pulse.ended_cleanly(), "{}", pulse.explain());
    assert_eq!(pulse.conditions(), input_row("ClusterSpecUnavailable"));
    assert_says(&pulse, "Applied", &[&fifo, "larger than 1 MiB"]);
    assert_eq!(writer.join().unwrap(), std::io::ErrorKind::BrokenPipe);
}

#[tokio::test]
async fn an_endless_hyperfleet_token_file_gives_cluster_spec_unavailable_naming_it() {
    let server = ApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let pulse = controlplane(
        &server,
        dir.path(),
        &controlplane_env(&[
            ("HYPERFLEET_API_URL", "http://127.0.0.1:9"),
            ("HYPERFLEET_API_TOKEN_FILE", "/dev/zero"),
        ]),
    )
    .await;
    assert!(pulse.ended_cleanly(), "{}", pulse.explain());
    assert_eq!(pulse.conditions(), input_row("ClusterSpecUnavailable"));
    assert_says(
        &pulse,
        "Applied",
        &[
            "the HyperFleet API token file /dev/zero is larger than 64 KiB",
            "HYPERFLEET_API_TOKEN_FILE must name a file of at most 64 KiB",
        ],
    );
}

#[tokio::test]
async fn an_endless_maestro_ca_file_gives_adapter_misconfigured_naming_it() {
    let server = ApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("cluster.json");
    std::fs::write(&spec, CLUSTER).unwrap();
    let spec = spec.display().to_string();
    let pulse = controlplane(
        &server,
        dir.path(),
        &controlplane_env(&[
            ("CLUSTER_SPEC_FILE", &spec),
            ("MAESTRO_API_URL", "https://127.0.0.1:9"),
            ("MAESTRO_GRPC_URL", "https://127.0.0.1:9"),
            ("MAESTRO_CA_FILE", "/dev/zero"),
        ]),
    )
    .await;
    assert!(pulse.ended_cleanly(), "{}", pulse.explain());
    assert_eq!(pulse.conditions(), input_row("AdapterMisconfigured"));
    assert_says(
        &pulse,
        "Applied",
        &[
            "/dev/zero",
            "MAESTRO_CA_FILE must name a file of at most 1 MiB",
        ],
    );
}

#[tokio::test]
async fn an_endless_hub_kubeconfig_gives_adapter_misconfigured_naming_it() {
    let server = ApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("cluster.json");
    std::fs::write(&spec, CLUSTER).unwrap();
    let spec = spec.display().to_string();
    let pulse = controlplane(
        &server,
        dir.path(),
        &controlplane_env(&[
            ("CLUSTER_SPEC_FILE", &spec),
            ("WORK_BACKEND", "hub"),
            ("KUBECONFIG", "/dev/zero"),
        ]),
    )
    .await;
    assert!(pulse.ended_cleanly(), "{}", pulse.explain());
    assert_eq!(pulse.conditions(), input_row("AdapterMisconfigured"));
    assert_says(
        &pulse,
        "Applied",
        &[
            "the kubeconfig /dev/zero is larger than 1 MiB",
            "KUBECONFIG must name",
        ],
    );
}

#[tokio::test]
async fn an_endless_nodepool_spec_file_gives_nodepool_spec_unavailable_naming_the_limit() {
    let server = ApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let env = pairs(&[
        ("CLUSTER_ID", CLUSTER_ID),
        ("NODEPOOL_ID", NODEPOOL_ID),
        ("GENERATION", "2"),
        ("NODEPOOL_SPEC_FILE", "/dev/zero"),
        ("MANAGEMENT_CLUSTER_CONSUMER", CONSUMER),
        ("MAESTRO_API_URL", "http://127.0.0.1:9"),
        ("MAESTRO_GRPC_URL", "http://127.0.0.1:9"),
        ("LOG_FORMAT", "json"),
    ]);
    let pulse = real_pulse::run_nodepool(
        &server,
        dir.path(),
        &nodepool_job_name(NODEPOOL_ID, 2),
        &env,
    )
    .await;
    assert!(pulse.ended_cleanly(), "{}", pulse.explain());
    let reasons: Vec<String> = pulse.conditions().into_iter().map(|(_, _, r)| r).collect();
    assert!(
        reasons.iter().all(|r| r == "NodePoolSpecUnavailable"),
        "{reasons:?}\n{}",
        pulse.explain()
    );
    assert_says(
        &pulse,
        "Applied",
        &[
            "the NodePool spec file /dev/zero is larger than 1 MiB",
            "NODEPOOL_SPEC_FILE must name a file of at most 1 MiB",
        ],
    );
}
