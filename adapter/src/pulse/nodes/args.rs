//! Flags of `hypershift-adapter nodes`; every one can also be set through its env var.

use std::path::PathBuf;

use jiff::SignedDuration;

use super::judge::Thresholds;

pub use crate::pulse::LogFormat;

/// Checks the nodes of a cluster through its API and writes the adapter report.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Where to write the report; when neither this nor `RESULTS_OUTPUT_PATH` is set,
    /// `RESULTS_PATH` (the status-reporter's name), then `/results/adapter-report.json`.
    #[arg(long, env = "RESULTS_OUTPUT_PATH")]
    pub results_path: Option<PathBuf>,

    /// The HyperFleet cluster id, for logs.
    #[arg(long, env = "CLUSTER_ID")]
    pub cluster_id: Option<String>,

    /// The cluster generation acted on; becomes the report's `observed_generation`.
    #[arg(long, env = "GENERATION", value_parser = clap::value_parser!(i64).range(1..))]
    pub generation: Option<i64>,

    /// Log format.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Json)]
    pub log_format: LogFormat,

    /// Kubeconfig of the cluster to check (e.g. a hosted cluster's admin kubeconfig mounted
    /// from a Secret); without it, `~/.kube/config` or the in-cluster service account.
    #[arg(long, env = "KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,

    /// Ready False/Unknown for longer than this makes a node NotReady.
    #[arg(long, env = "NOT_READY_GRACE", default_value = "5m", value_parser = parse_duration)]
    pub not_ready_grace: SignedDuration,

    /// Deleting for longer than this makes a node stuck terminating.
    #[arg(long, env = "STUCK_TERMINATING_AFTER", default_value = "30m", value_parser = parse_duration)]
    pub stuck_terminating_after: SignedDuration,

    /// A node Lease not renewed for longer than this is a stale heartbeat.
    #[arg(long, env = "STALE_HEARTBEAT_AFTER", default_value = "2m", value_parser = parse_duration)]
    pub stale_heartbeat_after: SignedDuration,

    /// Taint key marking a node not yet verified; repeat the flag, or comma-separate in the env.
    #[arg(
        long = "verification-taint",
        env = "VERIFICATION_TAINTS",
        value_delimiter = ','
    )]
    pub verification_taints: Vec<String>,

    /// Carrying a verification taint for longer than this makes a node unverified.
    #[arg(long, env = "VERIFICATION_GRACE", default_value = "15m", value_parser = parse_duration)]
    pub verification_grace: SignedDuration,

    /// Available=False below this many Ready nodes.
    #[arg(long, env = "MIN_READY_NODES", default_value_t = 1)]
    pub min_ready_nodes: u32,

    /// The node count the cluster should have; Available=False below this many Ready nodes.
    #[arg(long, env = "EXPECTED_NODES")]
    pub expected_nodes: Option<u32>,

    /// A kubelet certificate signing request (node client or serving certificate) pending
    /// longer than this is Health=False PendingCertificateRequests. An approver that works
    /// decides within seconds to a minute or two; 10m leaves room for a slow one and for the
    /// serving request that follows a joining node's client request, and still reports a node
    /// that nothing admits (platform None) minutes after it booted.
    #[arg(long, env = "CSR_PENDING_GRACE", default_value = "10m", value_parser = parse_duration)]
    pub csr_pending_grace: SignedDuration,

    /// Items per LIST page. Peak memory grows with it (a page is buffered whole): measured on
    /// 5 000 nodes of ~13 KB each, 250 → 18 MiB RSS, 500 → 28 MiB, 1000 → 47 MiB.
    #[arg(long, env = "PAGE_SIZE", default_value_t = 250, value_parser = clap::value_parser!(u32).range(1..=5000))]
    pub page_size: u32,

    /// Timeout of each API call.
    #[arg(long, env = "REQUEST_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    pub request_timeout: SignedDuration,
}

impl Args {
    /// The report path: `--results-path` / `RESULTS_OUTPUT_PATH`, else `results_path_env`
    /// (the value of `RESULTS_PATH`), else [`job_report::DEFAULT_RESULTS_PATH`].
    pub fn results_path(&self, results_path_env: Option<std::ffi::OsString>) -> PathBuf {
        crate::pulse::results_path(self.results_path.as_deref(), results_path_env)
    }

    /// The judgement thresholds these flags describe.
    pub fn thresholds(&self) -> Thresholds {
        Thresholds {
            not_ready_grace: self.not_ready_grace,
            stuck_terminating_after: self.stuck_terminating_after,
            stale_heartbeat_after: self.stale_heartbeat_after,
            verification_taints: self
                .verification_taints
                .iter()
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
                .collect(),
            verification_grace: self.verification_grace,
            min_ready_nodes: self.min_ready_nodes,
            expected_nodes: self.expected_nodes,
            csr_pending_grace: self.csr_pending_grace,
        }
    }
}

pub use crate::duration::parse_duration;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn command_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn durations_parse_as_people_write_them() {
        assert_eq!(parse_duration("30s"), Ok(SignedDuration::from_secs(30)));
        assert_eq!(parse_duration("30m"), Ok(SignedDuration::from_mins(30)));
        assert_eq!(parse_duration("2h"), Ok(SignedDuration::from_hours(2)));
        assert_eq!(parse_duration("1h30m"), Ok(SignedDuration::from_mins(90)));
        assert_eq!(
            parse_duration("500ms"),
            Ok(SignedDuration::from_millis(500))
        );
        assert_eq!(parse_duration("0s"), Ok(SignedDuration::ZERO));
        assert!(parse_duration("-5m").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn defaults_and_repeatable_taints() {
        let cli = Cli::try_parse_from([
            "x",
            "--verification-taint",
            "a.example.com/unverified",
            "--verification-taint",
            "b.example.com/pending",
            "--expected-nodes",
            "3",
        ])
        .unwrap();
        let t = cli.args.thresholds();
        assert_eq!(
            t.verification_taints,
            vec!["a.example.com/unverified", "b.example.com/pending"]
        );
        assert_eq!(t.stuck_terminating_after, SignedDuration::from_mins(30));
        assert_eq!(t.expected_nodes, Some(3));
        assert_eq!(t.required_ready(), (3, "--expected-nodes"));
        assert_eq!(t.csr_pending_grace, SignedDuration::from_mins(10));
        assert_eq!(
            t,
            Thresholds {
                verification_taints: t.verification_taints.clone(),
                expected_nodes: Some(3),
                ..Thresholds::default()
            },
            "the flags' defaults are the judge's"
        );
        assert_eq!(cli.args.page_size, 250);
        let cli = Cli::try_parse_from(["x", "--csr-pending-grace", "1h"]).unwrap();
        assert_eq!(
            cli.args.thresholds().csr_pending_grace,
            SignedDuration::from_hours(1)
        );
    }

    #[test]
    fn results_path_falls_back_to_results_path_env_then_default() {
        let cli = Cli::try_parse_from(["x"]).unwrap();
        assert_eq!(
            cli.args.results_path(None),
            PathBuf::from("/results/adapter-report.json")
        );
        assert_eq!(
            cli.args.results_path(Some("/r/a.json".into())),
            PathBuf::from("/r/a.json")
        );
        let cli = Cli::try_parse_from(["x", "--results-path", "/o/b.json"]).unwrap();
        assert_eq!(
            cli.args.results_path(Some("/r/a.json".into())),
            PathBuf::from("/o/b.json")
        );
    }

    #[test]
    fn bad_values_are_rejected() {
        assert!(Cli::try_parse_from(["x", "--not-ready-grace", "soon"]).is_err());
        assert!(Cli::try_parse_from(["x", "--generation", "0"]).is_err());
        assert!(Cli::try_parse_from(["x", "--page-size", "0"]).is_err());
        assert!(Cli::try_parse_from(["x", "--csr-pending-grace", "-1m"]).is_err());
    }
}
