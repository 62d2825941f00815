//! Flags of `hypershift-adapter nodepool`; every one can also be set through its env var.

use std::path::PathBuf;
use std::time::Duration;

use crate::duration::parse_budget;
use crate::pulse::LogFormat;
use crate::work::backend::{BackendConfigError, WorkArgs};

/// Sends a HyperFleet NodePool's HyperShift NodePool to its cluster's management cluster in a
/// ManifestWork (after the cluster's control plane) and writes the adapter report.
#[derive(Debug, Clone, clap::Args)]
#[command(group(
    clap::ArgGroup::new("nodepool-input")
        .required(true)
        .multiple(false)
        .args(["nodepool_spec", "hyperfleet_api"])
))]
pub struct Args {
    /// The owning cluster's HyperFleet id; defaults to the NodePool object's
    /// `owner_references.id`.
    #[arg(long, env = "CLUSTER_ID")]
    pub cluster_id: Option<String>,

    /// The HyperFleet NodePool id; defaults to the `id` of the NodePool object read.
    #[arg(long, env = "NODEPOOL_ID")]
    pub nodepool_id: Option<String>,

    /// The NodePool generation acted on (≥ 1); defaults to the object's `generation`. Becomes
    /// the report's `observed_generation` and the work's `hyperfleet.io/generation`.
    #[arg(long, env = "GENERATION", value_parser = clap::value_parser!(i64).range(1..))]
    pub generation: Option<i64>,

    /// JSON file holding a HyperFleet NodePool object (`{id, name, generation,
    /// owner_references, spec}`) or just its spec.
    #[arg(long, env = "NODEPOOL_SPEC_FILE", value_name = "FILE")]
    pub nodepool_spec: Option<PathBuf>,

    /// HyperFleet API base URL: the NodePool is read from
    /// `GET {url}/api/hyperfleet/v1/clusters/{cluster_id}/nodepools/{nodepool_id}` (needs
    /// `--cluster-id` and `--nodepool-id`).
    #[arg(
        long,
        env = "HYPERFLEET_API_URL",
        value_name = "URL",
        requires_all = ["cluster_id", "nodepool_id"]
    )]
    pub hyperfleet_api: Option<String>,

    /// The HyperFleet API token and its scheme.
    #[command(flatten)]
    pub hyperfleet_auth: crate::hyperfleet::api::Auth,

    /// Where to write the report; when neither this nor `RESULTS_OUTPUT_PATH` is set,
    /// `RESULTS_PATH` (the status-reporter's name), then `/results/adapter-report.json`.
    #[arg(long, env = "RESULTS_OUTPUT_PATH")]
    pub results_path: Option<PathBuf>,

    /// A deletion not finished this long after the NodePool's `deleted_time` is reported as
    /// `Health=False` `DeletionStuck`: seconds or a duration (`30m`).
    #[arg(long, env = "DELETION_STUCK_AFTER", default_value = "30m", value_parser = parse_budget)]
    pub deletion_stuck_after: Duration,

    /// A GCP NodePool whose `AllMachinesReady` has been False this long is reported as
    /// `Health=False` `MachinesStuck` (a quota, a machine type not offered in the zone,
    /// permissions) instead of progress. GCE machines usually boot and join in under 10 minutes.
    #[arg(long, env = "MACHINES_STUCK_AFTER", default_value = "15m", value_parser = parse_budget)]
    pub machines_stuck_after: Duration,

    /// A spec the work agent applied that the HyperShift operator has not observed this long
    /// after (its conditions' `observedGeneration` behind the NodePool's `metadata.generation`) is
    /// reported as `Health=False` `OperatorNotReconciling`; before, Available is False
    /// `AwaitingOperator`: seconds or a duration (`10m`).
    #[arg(long, env = "OPERATOR_STUCK_AFTER", default_value = crate::work::observed::DEFAULT_STUCK_AFTER, value_parser = parse_budget)]
    pub operator_stuck_after: Duration,

    /// The work backend (the same management cluster and Maestro as the cluster's control plane).
    #[command(flatten)]
    pub work: WorkArgs,

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
        "{flag} ({env}) is {given:?} but the NodePool object's {field} is {object:?}; the Job was built for another NodePool"
    )]
    Mismatch {
        flag: &'static str,
        env: &'static str,
        field: &'static str,
        given: String,
        object: String,
    },
    #[error("no {what}: set {flag} ({env}) or give a NodePool object with {field}")]
    Missing {
        what: &'static str,
        flag: &'static str,
        env: &'static str,
        field: &'static str,
    },
    #[error(
        "--management-clusters-from-api (MANAGEMENT_CLUSTERS_FROM_API) reads the ManagementCluster entities from the HyperFleet API: set --hyperfleet-api (HYPERFLEET_API_URL), or use --management-clusters-file (MANAGEMENT_CLUSTERS_FILE)"
    )]
    InventoryNeedsApi,
}

impl Args {
    /// Checks what clap cannot express (the backend's settings).
    pub fn check(&self) -> Result<(), ConfigError> {
        self.work.check()?;
        if self.work.management_clusters_from_api && self.hyperfleet_api.is_none() {
            return Err(ConfigError::InventoryNeedsApi);
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
        "--nodepool-spec",
        "/np.json",
        "--maestro-api-url",
        "http://r",
        "--maestro-grpc-url",
        "http://g",
    ];
    const CLUSTER: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
    const NODEPOOL: &str = "01a01e83-2b42-79c4-a5e8-d17b3a6f0c41";

    #[test]
    fn command_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let args = Cli::try_parse_from(MIN).unwrap().args;
        assert_eq!(args.deletion_stuck_after, Duration::from_secs(30 * 60));
        assert_eq!(args.machines_stuck_after, Duration::from_secs(15 * 60));
        assert_eq!(args.log_format, LogFormat::Json);
        assert_eq!(args.check(), Ok(()));
    }

    #[test]
    fn the_api_needs_both_ids() {
        let neither: Vec<&str> = MIN
            .iter()
            .copied()
            .filter(|a| *a != "--nodepool-spec" && *a != "/np.json")
            .collect();
        assert!(Cli::try_parse_from(&neither).is_err());
        let mut api = neither.clone();
        api.extend(["--hyperfleet-api", "http://h", "--cluster-id", CLUSTER]);
        assert!(Cli::try_parse_from(&api).is_err());
        api.extend(["--nodepool-id", NODEPOOL]);
        assert!(Cli::try_parse_from(&api).is_ok());
        let mut both = MIN.to_vec();
        both.extend([
            "--hyperfleet-api",
            "http://h",
            "--cluster-id",
            CLUSTER,
            "--nodepool-id",
            NODEPOOL,
        ]);
        assert!(Cli::try_parse_from(&both).is_err());
    }

    #[test]
    fn bad_values_are_rejected() {
        let with = |extra: &[&str]| {
            let mut v = MIN.to_vec();
            v.extend(extra);
            Cli::try_parse_from(v)
        };
        assert!(with(&["--generation", "0"]).is_err());
        assert!(with(&["--machines-stuck-after", "soon"]).is_err());
        assert!(with(&["--machines-stuck-after", "20m"]).is_ok());
        assert!(with(&["--backend", "ocm"]).is_err());
    }
}
