//! Flags of `hypershift-adapter controlplane`; every one can also be set through its env var.

use std::path::PathBuf;
use std::time::Duration;

use crate::duration::parse_budget;
use crate::pulse::LogFormat;
use crate::work::backend::{BackendConfigError, WorkArgs};

/// Sends the cluster's HostedCluster to its management cluster in a ManifestWork and writes the
/// adapter report (Applied / Available / Health).
#[derive(Debug, Clone, clap::Args)]
#[command(group(
    clap::ArgGroup::new("cluster-input")
        .required(true)
        .multiple(false)
        .args(["cluster_spec", "hyperfleet_api"])
))]
pub struct Args {
    /// The HyperFleet cluster id; defaults to the `id` of the cluster object read.
    #[arg(long, env = "CLUSTER_ID")]
    pub cluster_id: Option<String>,

    /// The cluster generation acted on (≥ 1); defaults to the cluster object's `generation`.
    /// Becomes the report's `observed_generation` and the work's `hyperfleet.io/generation`.
    #[arg(long, env = "GENERATION", value_parser = clap::value_parser!(i64).range(1..))]
    pub generation: Option<i64>,

    /// JSON file holding a HyperFleet cluster object (`{id, name, generation, spec}`) or just its spec.
    #[arg(long, env = "CLUSTER_SPEC_FILE", value_name = "FILE")]
    pub cluster_spec: Option<PathBuf>,

    /// HyperFleet API base URL: the cluster is read from `GET {url}/api/hyperfleet/v1/clusters/{id}`
    /// (needs `--cluster-id`).
    #[arg(
        long,
        env = "HYPERFLEET_API_URL",
        value_name = "URL",
        requires = "cluster_id"
    )]
    pub hyperfleet_api: Option<String>,

    /// The HyperFleet API token and its scheme.
    #[command(flatten)]
    pub hyperfleet_auth: crate::hyperfleet::api::Auth,

    /// Where to write the report; when neither this nor `RESULTS_OUTPUT_PATH` is set,
    /// `RESULTS_PATH` (the status-reporter's name), then `/results/adapter-report.json`.
    #[arg(long, env = "RESULTS_OUTPUT_PATH")]
    pub results_path: Option<PathBuf>,

    /// JSON file holding the cluster's NodePool list as the HyperFleet API returns it
    /// (`{"items": [...], "total": n}`), read only when the `--cluster-spec` cluster is being
    /// deleted. Without it (and without `--hyperfleet-api`) a deletion is held (`NodePoolsUnknown`).
    #[arg(
        long,
        env = "NODEPOOLS_FILE",
        value_name = "FILE",
        conflicts_with = "hyperfleet_api"
    )]
    pub nodepools_file: Option<PathBuf>,

    /// A deletion not finished this long after the cluster's `deleted_time` is reported as
    /// `Health=False` `DeletionStuck`: seconds or a duration (`30m`).
    #[arg(long, env = "DELETION_STUCK_AFTER", default_value = "30m", value_parser = parse_budget)]
    pub deletion_stuck_after: Duration,

    /// A spec the work agent applied that the HyperShift operator has not observed this long
    /// after (its conditions' `observedGeneration` behind the HostedCluster's
    /// `metadata.generation`, or another release desired) is reported as `Health=False`
    /// `OperatorNotReconciling`; before, Available is False `AwaitingOperator`: seconds or a
    /// duration (`10m`).
    #[arg(long, env = "OPERATOR_STUCK_AFTER", default_value = crate::work::observed::DEFAULT_STUCK_AFTER, value_parser = parse_budget)]
    pub operator_stuck_after: Duration,

    /// The work backend.
    #[command(flatten)]
    pub work: WorkArgs,

    /// The Job's namespace (downward API `metadata.namespace`), where the placement leases live;
    /// required with --management-clusters-file or --management-clusters-from-api.
    #[arg(long, env = "JOB_NAMESPACE", value_name = "NAMESPACE")]
    pub job_namespace: Option<String>,

    /// This pod's name (downward API `metadata.name`), the placement lease's holder; default the
    /// hostname.
    #[arg(long, env = "POD_NAME")]
    pub pod_name: Option<String>,

    /// How long a new placement waits for a management cluster's placement lease held by another
    /// pulse before passing that management cluster over (`busy`): seconds or a duration.
    #[arg(long, env = "PLACEMENT_LOCK_WAIT", default_value = crate::placement::lease::DEFAULT_LOCK_WAIT, value_parser = parse_budget)]
    pub placement_lock_wait: Duration,

    /// Replaces the spec's `pullSecret.name` (flat shape: `pull_secret_name`).
    #[arg(long, env = "PULL_SECRET_NAME")]
    pub pull_secret_name: Option<String>,

    /// Replaces the spec's `sshKey.name` (flat shape: `ssh_key_secret_name`).
    #[arg(long, env = "SSH_KEY_SECRET_NAME")]
    pub ssh_key_secret_name: Option<String>,

    /// Replaces the spec's `serviceAccountSigningKey.name` (flat shape:
    /// `service_account_signing_key_secret_name`).
    #[arg(long, env = "SERVICE_ACCOUNT_SIGNING_KEY_SECRET_NAME")]
    pub service_account_signing_key_secret_name: Option<String>,

    /// Log format.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Json)]
    pub log_format: LogFormat,

    /// Log filter (`info`, `debug`, `hypershift_adapter=debug,warn`); default `info`.
    #[arg(long, env = "LOG_LEVEL")]
    pub log_level: Option<String>,
}

/// A configuration problem found after parsing (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    Backend(#[from] BackendConfigError),
    #[error(
        "--cluster-id (CLUSTER_ID) is {flag:?} but the cluster object's id is {object:?}; the Job was built for another cluster"
    )]
    ClusterIdMismatch { flag: String, object: String },
    #[error("no cluster id: set --cluster-id (CLUSTER_ID) or give a cluster object with an `id`")]
    NoClusterId,
    #[error(
        "--management-clusters-from-api (MANAGEMENT_CLUSTERS_FROM_API) reads the ManagementCluster entities from the HyperFleet API: set --hyperfleet-api (HYPERFLEET_API_URL), or use --management-clusters-file (MANAGEMENT_CLUSTERS_FILE)"
    )]
    InventoryNeedsApi,
    #[error(
        "placing among management clusters takes a lease in the Job's namespace: set --job-namespace (JOB_NAMESPACE, the downward API's metadata.namespace in manifests/job.yaml)"
    )]
    PlacementNeedsNamespace,
}

impl Args {
    /// Checks what clap cannot express (the backend's settings).
    pub fn check(&self) -> Result<(), ConfigError> {
        self.work.check()?;
        if self.work.management_clusters_from_api && self.hyperfleet_api.is_none() {
            return Err(ConfigError::InventoryNeedsApi);
        }
        let placing =
            self.work.management_clusters_from_api || self.work.management_clusters_file.is_some();
        if placing && self.job_namespace.as_deref().is_none_or(str::is_empty) {
            return Err(ConfigError::PlacementNeedsNamespace);
        }
        Ok(())
    }

    /// The report path (see [`crate::pulse::results_path`]).
    pub fn results_path(&self, results_path_env: Option<std::ffi::OsString>) -> PathBuf {
        crate::pulse::results_path(self.results_path.as_deref(), results_path_env)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use clap::{CommandFactory, Parser};

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    const MIN: [&str; 9] = [
        "x",
        "--consumer",
        "mgmt-1",
        "--cluster-spec",
        "/c.json",
        "--maestro-api-url",
        "http://r",
        "--maestro-grpc-url",
        "http://g",
    ];

    #[test]
    fn command_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let args = Cli::try_parse_from(MIN).unwrap().args;
        assert_eq!(args.work.backend, crate::work::backend::Backend::Maestro);
        assert_eq!(
            args.work.maestro_source_id,
            crate::work::backend::DEFAULT_SOURCE_ID
        );
        assert_eq!(args.work.retry_budget, Duration::from_secs(120));
        assert_eq!(args.log_format, LogFormat::Json);
        assert_eq!(args.deletion_stuck_after, Duration::from_secs(30 * 60));
        assert_eq!(args.nodepools_file, None);
        assert_eq!(args.check(), Ok(()));
    }

    #[test]
    fn input_is_a_file_or_the_api_not_both_nor_neither() {
        let mut both = MIN.to_vec();
        both.extend([
            "--hyperfleet-api",
            "http://h",
            "--cluster-id",
            "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
        ]);
        assert!(Cli::try_parse_from(both).is_err());
        let neither: Vec<&str> = MIN
            .iter()
            .copied()
            .filter(|a| *a != "--cluster-spec" && *a != "/c.json")
            .collect();
        assert!(Cli::try_parse_from(&neither).is_err());
        let mut api_without_id = neither.clone();
        api_without_id.extend(["--hyperfleet-api", "http://h"]);
        assert!(Cli::try_parse_from(&api_without_id).is_err());
        api_without_id.extend(["--cluster-id", "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"]);
        assert!(Cli::try_parse_from(&api_without_id).is_ok());
    }

    #[test]
    fn maestro_urls_are_required_only_for_maestro() {
        let without_urls = ["x", "--consumer", "mgmt-1", "--cluster-spec", "/c.json"];
        let args = Cli::try_parse_from(without_urls).unwrap().args;
        let err = args.check().unwrap_err();
        assert!(err.to_string().contains("MAESTRO_API_URL"), "{err}");
        let mut hub = without_urls.to_vec();
        hub.extend(["--backend", "hub"]);
        assert_eq!(Cli::try_parse_from(hub).unwrap().args.check(), Ok(()));
    }

    #[test]
    fn bad_values_are_rejected() {
        let with = |extra: &[&str]| {
            let mut v = MIN.to_vec();
            v.extend(extra);
            Cli::try_parse_from(v)
        };
        assert!(with(&["--generation", "0"]).is_err());
        assert!(with(&["--backend", "ocm"]).is_err());
        assert!(with(&["--retry-budget", "soon"]).is_err());
        assert!(with(&["--deletion-stuck-after", "later"]).is_err());
        assert!(with(&["--deletion-stuck-after", "45m"]).is_ok());
        // NodePools come from the API when the cluster does.
        let api = [
            "x",
            "--consumer",
            "mgmt-1",
            "--hyperfleet-api",
            "http://h",
            "--cluster-id",
            "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
            "--nodepools-file",
            "/np.json",
        ];
        assert!(Cli::try_parse_from(api).is_err());
        assert!(with(&["--maestro-client-cert", "/c.pem"]).is_err());
        let mut missing_consumer = MIN.to_vec();
        missing_consumer.drain(1..3);
        let err = Cli::try_parse_from(missing_consumer)
            .unwrap()
            .args
            .check()
            .unwrap_err()
            .to_string();
        assert!(err.contains("MANAGEMENT_CLUSTER_CONSUMER"), "{err}");
    }

    #[test]
    fn the_api_inventory_needs_the_hyperfleet_api() {
        let from_api = [
            "x",
            "--management-clusters-from-api",
            "--cluster-spec",
            "/c.json",
            "--maestro-api-url",
            "http://r",
            "--maestro-grpc-url",
            "http://g",
        ];
        let err = Cli::try_parse_from(from_api)
            .unwrap()
            .args
            .check()
            .unwrap_err();
        assert_eq!(err, ConfigError::InventoryNeedsApi);
        assert!(err.to_string().contains("HYPERFLEET_API_URL"), "{err}");
        let with_api = [
            "x",
            "--job-namespace",
            "hyperfleet-system",
            "--management-clusters-from-api",
            "--hyperfleet-api",
            "http://h",
            "--cluster-id",
            "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
            "--maestro-api-url",
            "http://r",
            "--maestro-grpc-url",
            "http://g",
        ];
        assert_eq!(Cli::try_parse_from(with_api).unwrap().args.check(), Ok(()));
    }

    #[test]
    fn an_inventory_mode_without_the_jobs_namespace_is_exit_2_naming_job_namespace() {
        for mode in [
            &[
                "--management-clusters-file",
                "/etc/hyperfleet/management-clusters.json",
            ][..],
            &["--management-clusters-from-api"][..],
        ] {
            let mut argv = vec![
                "x",
                "--hyperfleet-api",
                "http://h",
                "--cluster-id",
                "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
                "--maestro-api-url",
                "http://r",
                "--maestro-grpc-url",
                "http://g",
            ];
            argv.extend(mode);
            let args = Cli::try_parse_from(&argv).unwrap().args;
            let err = args.check().unwrap_err();
            assert_eq!(err, ConfigError::PlacementNeedsNamespace);
            assert!(err.to_string().contains("JOB_NAMESPACE"), "{err}");
            argv.extend(["--job-namespace", ""]);
            let args = Cli::try_parse_from(&argv).unwrap().args;
            assert_eq!(
                args.check(),
                Err(ConfigError::PlacementNeedsNamespace),
                "empty"
            );
        }
        // Static mode never takes a lease: no namespace needed.
        assert_eq!(Cli::try_parse_from(MIN).unwrap().args.check(), Ok(()));
        let args = Cli::try_parse_from(MIN).unwrap().args;
        assert_eq!(args.placement_lock_wait, Duration::from_secs(20));
    }
}
