//! The `hypershift-adapter` command line as a user meets it: help, and exit code 2 with the flag
//! named for bad configuration. (Also makes `cargo test --workspace` build the binary.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

fn adapter(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hypershift-adapter"))
        .env_clear()
        .envs(env.iter().copied())
        .args(args)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn help_lists_both_subcommands() {
    let out = adapter(&["--help"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("controlplane"), "{text}");
    assert!(text.contains("nodes"), "{text}");
}

#[test]
fn controlplane_help_names_the_env_vars() {
    let out = adapter(&["controlplane", "--help"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for env in [
        "MANAGEMENT_CLUSTER_CONSUMER",
        "MAESTRO_GRPC_URL",
        "RETRY_BUDGET_SECONDS",
        "CLUSTER_SPEC_FILE",
        "HYPERFLEET_API_URL",
        "WORK_BACKEND",
    ] {
        assert!(text.contains(env), "{env} missing from:\n{text}");
    }
}

#[test]
fn missing_consumer_is_exit_2_naming_the_flag() {
    let out = adapter(
        &["controlplane", "--cluster-spec", "/nonexistent.json"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--consumer"), "{}", stderr(&out));
}

#[test]
fn missing_maestro_url_is_exit_2_naming_flag_and_env() {
    let out = adapter(
        &["controlplane", "--cluster-spec", "/nonexistent.json"],
        &[
            ("MANAGEMENT_CLUSTER_CONSUMER", "mgmt-1"),
            ("LOG_FORMAT", "plain"),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("MAESTRO_API_URL"), "{}", stderr(&out));
}

#[test]
fn bad_retry_budget_is_exit_2() {
    let out = adapter(
        &[
            "controlplane",
            "--cluster-spec",
            "/c.json",
            "--consumer",
            "m",
        ],
        &[("RETRY_BUDGET_SECONDS", "soon")],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("retry-budget"), "{}", stderr(&out));
}
