//! The README's first command, `local-pulse`, as a smoke test: the built binary (what
//! `cargo run -p testbed --bin local-pulse` runs) with its default lifecycle, with the
//! management-cluster failures (apply failure, HostedCluster gone), with the day-two scenarios
//! (upgrade, delete), with a NodePool's life next to its control plane's, with placement across
//! two management clusters (a failover before apply, an outage after it), with one container
//! failure and with `--all`; each must print the expected reasons and exit 0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn local_pulse(args: &[&str]) -> String {
    let out = Command::new(testbed::binaries::path("local-pulse"))
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "local-pulse {args:?} exited {:?}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn assert_contains(output: &str, needles: &[&str]) {
    for needle in needles {
        assert!(output.contains(needle), "no {needle:?} in:\n{output}");
    }
}

#[test]
fn the_default_run_walks_the_lifecycle() {
    let out = local_pulse(&[]);
    assert_contains(
        &out,
        &[
            "ManifestWorkCreated",
            "Provisioning",
            "ControlPlaneReady",
            "Degraded",
            "hyperfleet.io/report-data",
            "hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g3",
            "id   019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b (generation 3)",
            "name prod-eu-1-payments-ledger-primary-region-west-cell-07",
            "pulse 4: Applied = True/ManifestWorkApplied   Available = True/ControlPlaneReady   Health = False/Degraded   [as expected]",
            "All pulses ended with the expected conditions.",
        ],
    );
    assert!(!out.contains("[UNEXPECTED]"), "{out}");
}

#[test]
fn an_admission_denial_is_reported_with_the_agents_words_until_lifted() {
    let out = local_pulse(&["--scenario", "apply-failure"]);
    assert_contains(
        &out,
        &[
            "management cluster: the API server refuses the HostedCluster: hostedclusters.hypershift.openshift.io \"prod-eu-1-payments-ledger-primary-region-west-cell-07\" is forbidden",
            "pulse 2: Applied = False/ApplyFailed   Available = False/ApplyFailed   Health = False/ApplyFailed   [as expected]",
            "Failed to apply manifest: hostedclusters.hypershift.openshift.io",
            "pulse 3: Applied = True/ManifestWorkApplied   Available = False/Provisioning   Health = True/NoIssues   [as expected]",
            "All pulses ended with the expected conditions.",
        ],
    );
    assert!(!out.contains("[UNEXPECTED]"), "{out}");
}

#[test]
fn a_hosted_cluster_deleted_on_the_management_cluster_is_missing_not_available() {
    let out = local_pulse(&["--scenario", "resource-gone"]);
    assert_contains(
        &out,
        &[
            "pulse 2: Applied = True/ManifestWorkApplied   Available = True/ControlPlaneReady   Health = True/NoIssues   [as expected]",
            "management cluster: the HostedCluster is deleted behind the work agent (its last status feedback is kept)",
            "pulse 3: Applied = True/ManifestWorkApplied   Available = False/HostedClusterMissing   Health = False/HostedClusterMissing   [as expected]",
            "pulse 4: Applied = True/ManifestWorkExists   Available = False/AwaitingFeedback   Health = True/NoIssues   [as expected]",
            "All pulses ended with the expected conditions.",
        ],
    );
    assert!(!out.contains("[UNEXPECTED]"), "{out}");
}

#[test]
fn an_upgrade_updates_the_work_and_is_followed_to_completion() {
    let out = local_pulse(&["--scenario", "upgrade"]);
    assert_contains(
        &out,
        &[
            "hyperfleet api:     PATCH spec.release.version = 4.17.1 (cluster generation 4)",
            "kubectl get job hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g3 ",
            "kubectl get job hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g4 ",
            "pulse 3: Applied = True/ManifestWorkUpdated   Available = False/Updating   Health = True/NoIssues   [as expected]",
            "pulse 4: Applied = True/ManifestWorkApplied   Available = False/Upgrading   Health = True/NoIssues   [as expected]",
            "Upgrading from 4.17.0 to 4.17.1: the control plane still serves release 4.17.0",
            r#"\"desired_version\":\"4.17.1\",\"management_cluster\":\"mgmt-local\",\"version\":\"4.17.0\""#,
            r#"\"desired_version\":\"4.17.1\",\"management_cluster\":\"mgmt-local\",\"version\":\"4.17.1\""#,
            "pulse 5: Applied = True/ManifestWorkApplied   Available = True/ControlPlaneReady   Health = True/NoIssues   [as expected]",
            "All pulses ended with the expected conditions.",
        ],
    );
    assert!(!out.contains("[UNEXPECTED]"), "{out}");
    assert!(!out.contains("Finalized"), "{out}");
}

#[test]
fn a_deletion_waits_for_node_pools_and_ends_finalized() {
    let out = local_pulse(&["--scenario", "delete"]);
    assert_contains(
        &out,
        &[
            "hyperfleet api:     GET …/nodepools lists NodePool workers-a",
            "hyperfleet api:     DELETE: deleted_time ",
            "deleted_by system@hyperfleet.local (cluster generation 4)",
            "kubectl get job hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g4 ",
            "pulse 3: Applied = False/NodePoolsExist   Available = False/NodePoolsExist   Health = True/NoIssues   Finalized = False/NodePoolsExist   [as expected]",
            "still lists its NodePools: workers-a (019a6f20-3c4d-7e5f-8a9b-0c1d2e3f4a5b, deleting since ",
            "hyperfleet api:     GET …/nodepools lists no NodePools",
            "management cluster: the HostedCluster carries finalizer hypershift.openshift.io/finalizer",
            "pulse 4: Applied = True/DeletionRequested   Available = False/Deleting   Health = True/NoIssues   Finalized = False/DeletionRequested   [as expected]",
            "pulse 5: Applied = True/DeletionRequested   Available = False/Deleting   Health = True/NoIssues   Finalized = False/DeletionRequested   [as expected]",
            "pulse 6: Applied = False/CleanupConfirmed   Available = False/Deleted   Health = True/NoIssues   Finalized = True/CleanupConfirmed   [as expected]",
            "All pulses ended with the expected conditions.",
        ],
    );
    assert!(!out.contains("[UNEXPECTED]"), "{out}");
    // The deletion bumped the generation once: no Job of generation 5.
    assert!(!out.contains("-g5 "), "{out}");
}

#[test]
fn a_node_pool_waits_for_its_control_plane_scales_and_is_finalized_before_the_cluster() {
    let out = local_pulse(&["--scenario", "nodepool"]);
    let np_job =
        |g: u32| format!("kubectl get job hs-np-019a6f2b-8d13-7a64-b5c2-3e9f0d7a1c58-g{g} ");
    assert_contains(
        &out,
        &[
            "hyperfleet api:     POST …/clusters/{id}/nodepools: NodePool workers-euw2-a1 (3 × n2-standard-8 in europe-west2-a, release 4.17.0; NodePool generation 1)",
            &np_job(1),
            "adapter container:  hypershift-adapter nodepool",
            "hyperfleet.io/nodepool-id: 019a6f2b-8d13-7a64-b5c2-3e9f0d7a1c58",
            "pulse 2: Applied = False/WaitingForControlPlane   Available = False/WaitingForControlPlane   Health = True/NoIssues   [as expected]",
            "pulse 3: Applied = True/ManifestWorkApplied   Available = True/ControlPlaneReady   Health = True/NoIssues   [as expected]",
            "pulse 4: Applied = True/ManifestWorkCreated   Available = False/Provisioning   Health = True/NoIssues   [as expected]",
            "pulse 5: Applied = True/ManifestWorkApplied   Available = False/Provisioning   Health = True/NoIssues   [as expected]",
            "pulse 6: Applied = True/ManifestWorkApplied   Available = True/NodePoolReady   Health = True/NoIssues   [as expected]",
            "data.hyperfleet.io/current_replicas: \"3\"",
            "hyperfleet api:     PATCH …/nodepools/{id} spec.replicas = 5 (NodePool generation 2)",
            &np_job(2),
            "pulse 7: Applied = True/ManifestWorkUpdated   Available = False/Updating   Health = True/NoIssues   [as expected]",
            "pulse 8: Applied = True/ManifestWorkApplied   Available = False/Scaling   Health = True/NoIssues   [as expected]",
            "pulse 9: Applied = True/ManifestWorkApplied   Available = True/NodePoolReady   Health = True/NoIssues   [as expected]",
            "data.hyperfleet.io/current_replicas: \"5\"",
            "(cluster generation 4); its NodePool workers-euw2-a1 too (NodePool generation 3)",
            "pulse 10: Applied = False/NodePoolsExist   Available = False/NodePoolsExist   Health = True/NoIssues   Finalized = False/NodePoolsExist   [as expected]",
            &np_job(3),
            "pulse 11: Applied = True/DeletionRequested   Available = False/Deleting   Health = True/NoIssues   Finalized = False/DeletionRequested   [as expected]",
            "pulse 12: Applied = False/CleanupConfirmed   Available = False/Deleted   Health = True/NoIssues   Finalized = True/CleanupConfirmed   [as expected]",
            "HyperFleet removes it (GET …/nodepools lists none)",
            "pulse 13: Applied = True/DeletionRequested   Available = False/Deleting   Health = True/NoIssues   Finalized = False/DeletionRequested   [as expected]",
            "pulse 14: Applied = False/CleanupConfirmed   Available = False/Deleted   Health = True/NoIssues   Finalized = True/CleanupConfirmed   [as expected]",
            "All pulses ended with the expected conditions.",
        ],
    );
    assert!(!out.contains("[UNEXPECTED]"), "{out}");
    // The control plane's pulses keep their own Job: generations 3 and 4 of the cluster.
    assert!(out.contains("kubectl get job hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g4 "));
    assert!(!out.contains("-g5 "), "{out}");
}

#[test]
fn placement_fails_over_before_apply_and_reports_an_outage_after_it() {
    let out = local_pulse(&["--scenario", "placement"]);
    assert_contains(
        &out,
        &[
            "ManagementCluster mgmt-europe-west2-a (region europe-west2, Maestro consumer mgmt-europe-west2-a, max_hosted_clusters 2) reported healthy by mgmt-health; it holds 1 other control plane(s)",
            "ManagementCluster mgmt-europe-west2-b (region europe-west2, Maestro consumer mgmt-europe-west2-b, max_hosted_clusters 1)",
            "adapter container:  hypershift-adapter controlplane (MANAGEMENT_CLUSTERS_FROM_API=true",
            "pulse 1: Applied = True/ManifestWorkCreated   Available = False/Provisioning   Health = True/NoIssues   [as expected]",
            "management cluster: management cluster mgmt-europe-west2-b goes down",
            "pulse 2: Applied = True/FailedOverBeforeApply   Available = False/Provisioning   Health = True/NoIssues   [as expected]",
            "pulse 3: Applied = True/ManifestWorkApplied   Available = True/ControlPlaneReady   Health = True/NoIssues   [as expected]",
            "pulse 4: Applied = True/ManifestWorkApplied   Available = True/ControlPlaneReady   Health = False/ManagementClusterUnavailable   [as expected]",
            "data.hyperfleet.io/management_cluster: mgmt-europe-west2-a",
            "All pulses ended with the expected conditions.",
        ],
    );
    assert!(!out.contains("[UNEXPECTED]"), "{out}");
}

#[test]
fn all_runs_every_scenario_and_every_pulse_ends_as_expected() {
    let out = local_pulse(&["--all"]);
    let scenarios = [
        ("lifecycle", 4),
        ("apply-failure", 3),
        ("resource-gone", 4),
        ("upgrade", 5),
        ("delete", 6),
        ("adapter-crash", 1),
        ("hang", 1),
        ("invalid-report", 1),
        ("maestro-down", 1),
        ("nodepool", 14),
        ("placement", 4),
        // 8 pulses and 9 diagnoses.
        ("diagnose", 17),
    ];
    for (name, pulses) in scenarios {
        assert!(
            out.contains(&format!("== Scenario {name}: ")),
            "{name}\n{out}"
        );
        let ok = out
            .lines()
            .filter(|l| l.starts_with(&format!("  ok   {name:<15} pulse ")))
            .count();
        assert_eq!(ok, pulses, "{name}\n{out}");
    }
    let total: usize = scenarios.iter().map(|(_, n)| n).sum();
    assert_eq!(out.matches("[as expected]").count(), total, "{out}");
    assert!(!out.contains("[UNEXPECTED]"), "{out}");
    assert!(out.contains("All pulses ended with the expected conditions."));
}

#[test]
fn diagnose_names_each_broken_link_and_calls_the_healthy_cluster_healthy() {
    let out = local_pulse(&["--scenario", "diagnose"]);
    let verdicts: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("   | verdict: "))
        .collect();
    let starts = [
        "stuck at hyperfleet.preconditions: not met at generation 3: dns: no DnsSuccessful",
        "stuck at framework.job: no Job labelled hyperfleet.io/adapter=controlplane,hyperfleet.io/cluster-id=019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b for generation 3",
        "stuck at agent.applied: no Applied from the agent of mgmt-local since ",
        "healthy: every link holds",
        "stuck at job.report: Job hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g3: Available AdapterOOMKilled",
        "stuck at maestro.work: the pulse reported MaestroUnavailable",
        "stuck at agent.applied: the agent of mgmt-local could not apply: HostedCluster clusters/prod-eu-1-payments-ledger-primary-region-west-cell-07 (AppliedManifestFailed): Failed to apply manifest: hostedclusters.hypershift.openshift.io",
        "stuck at hypershift.hostedcluster: Health=False ReleaseImageInvalid: The HyperShift operator cannot use the release image: HostedCluster ValidReleaseImage=False (PayloadArchNotFound)",
        "stuck at hypershift.hostedcluster: work hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b deleting since ",
    ];
    assert_eq!(verdicts.len(), starts.len(), "{out}");
    for (verdict, start) in verdicts.iter().zip(starts) {
        assert!(
            verdict.starts_with(start),
            "{verdict:?} does not start with {start:?}\n{out}"
        );
    }
    assert_contains(
        &out,
        &[
            "   | ✓ job.report                Job hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g3 reported generation 3: Applied=True ManifestWorkApplied, Available=True ControlPlaneReady, Health=True NoIssues",
            "   | ✗ job.report                Job hs-cp-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b-g3: Available AdapterOOMKilled",
            "adapter exited 137 OOMKilled",
            "exit codes:         adapter 137, status-reporter 0",
            "more than 30m ago",
            "All pulses ended with the expected conditions.",
        ],
    );
    assert_eq!(out.matches("   diagnosis ").count(), 9, "{out}");
    assert!(!out.contains("[UNEXPECTED]"), "{out}");
}

#[test]
fn an_adapter_crash_is_reported_on_the_job() {
    let out = local_pulse(&["--scenario", "adapter-crash"]);
    assert_contains(
        &out,
        &[
            "AdapterExitedWithError",
            "exit codes:         adapter 1, status-reporter 0",
            "All pulses ended with the expected conditions.",
        ],
    );
}

#[test]
fn keep_prints_the_kept_directory_with_the_logs() {
    let out = local_pulse(&[
        "--scenario",
        "invalid-report",
        "--keep",
        "--log-format",
        "plain",
    ]);
    assert_contains(&out, &["InvalidResultFormat"]);
    let line = out
        .lines()
        .find(|l| l.starts_with("Temp directory kept: "))
        .expect("the kept directory is printed");
    let dir = std::path::PathBuf::from(line.trim_start_matches("Temp directory kept: "));
    // The kubelet's log of the container, under the kept directory, as printed.
    let log = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("log:"))
        .map(str::trim)
        .find(|path| path.ends_with("/containers/status-reporter/log"))
        .expect("the reporter's log is printed");
    assert!(
        log.starts_with(&format!("{}/invalid-report/pulse-1/", dir.display())),
        "{log}"
    );
    let text = std::fs::read_to_string(log).unwrap();
    assert!(text.contains("InvalidResultFormat"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}
