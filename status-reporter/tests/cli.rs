//! The binary's configuration errors: exit code 2 and a log line naming the setting.
#![allow(clippy::unwrap_used)]

use std::process::Command;

fn reporter() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_status-reporter"));
    cmd.env_clear().env("LOG_FORMAT", "plain");
    cmd
}

#[test]
fn a_reserved_condition_type_is_a_config_error() {
    let out = reporter()
        .env("JOB_NAME", "j")
        .env("CONDITION_TYPE", "Available,Complete")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("CONDITION_TYPE") && stderr.contains("\"Complete\""),
        "{stderr}"
    );
}

#[test]
fn no_job_and_no_pod_name_is_a_config_error() {
    let out = reporter().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("JOB_NAME"));
}

#[test]
fn an_unparsable_duration_is_refused_by_clap() {
    let out = reporter()
        .env("JOB_NAME", "j")
        .env("MAX_WAIT_TIME_SECONDS", "soon")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("MAX_WAIT_TIME_SECONDS")
            || String::from_utf8_lossy(&out.stderr).contains("--max-wait")
    );
}

#[test]
fn no_kubeconfig_outside_a_cluster_is_a_config_error() {
    let out = reporter()
        .env("JOB_NAME", "j")
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("kubeconfig"));
}
