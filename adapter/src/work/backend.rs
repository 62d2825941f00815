//! Which work backend a pulse talks to and how it is reached: the flags every subcommand that
//! ships a work shares (flattened into its `Args`), and the client built from them.

use std::path::PathBuf;
use std::time::Duration;

use super::WorkError;
use super::hub::{self, HubWorkClient};
use super::maestro::{MaestroConfig, MaestroTlsArgs, MaestroWorkClient};
use crate::duration::parse_budget;

/// Default `--maestro-source-id`.
pub const DEFAULT_SOURCE_ID: &str = "hyperfleet-hypershift-adapter";

pub use super::failure::{Backend, Transport};

/// The work backend's flags; every one can also be set through its env var.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkArgs {
    /// Work backend.
    #[arg(long, env = "WORK_BACKEND", value_enum, default_value_t = Backend::Maestro)]
    pub backend: Backend,

    /// Static placement: the management cluster's Maestro consumer name (the work namespace on
    /// the hub). Exactly one of this, `--management-clusters-file` and
    /// `--management-clusters-from-api`.
    #[arg(long, env = "MANAGEMENT_CLUSTER_CONSUMER")]
    pub consumer: Option<String>,

    /// Placement from a file inventory of ManagementCluster entities (`{"items": [...]}` or an
    /// array), re-read by every pulse (`--backend maestro` only).
    #[arg(long, env = "MANAGEMENT_CLUSTERS_FILE", value_name = "FILE")]
    pub management_clusters_file: Option<PathBuf>,

    /// Placement from the HyperFleet API's ManagementCluster entities (needs `--hyperfleet-api`;
    /// `--backend maestro` only).
    #[arg(
        long,
        env = "MANAGEMENT_CLUSTERS_FROM_API",
        value_parser = clap::builder::BoolishValueParser::new(),
        action = clap::ArgAction::SetTrue
    )]
    pub management_clusters_from_api: bool,

    /// Maestro source id: CloudEvent `source` and part of every resource id.
    #[arg(long, env = "MAESTRO_SOURCE_ID", default_value = DEFAULT_SOURCE_ID)]
    pub maestro_source_id: String,

    /// Maestro REST base URL (`http://` or `https://`); required with `--backend maestro`.
    #[arg(long, env = "MAESTRO_API_URL", value_name = "URL")]
    pub maestro_api_url: Option<String>,

    /// Maestro gRPC URL (`http://` or `https://`); required with `--backend maestro`.
    #[arg(long, env = "MAESTRO_GRPC_URL", value_name = "URL")]
    pub maestro_grpc_url: Option<String>,

    #[command(flatten)]
    pub maestro_tls: MaestroTlsArgs,

    /// How long transient backend failures are retried (backoff 1 s → 60 s) before reporting
    /// `MaestroUnavailable`: seconds (`120`) or a duration (`2m`). Keep it below the Job's
    /// `activeDeadlineSeconds` minus the status-reporter's margin (`HubUnavailable` with
    /// `--backend hub`).
    #[arg(long, env = "RETRY_BUDGET_SECONDS", default_value = "120", value_parser = parse_budget)]
    pub retry_budget: Duration,

    /// Kubeconfig of the OCM hub (`--backend hub`); without it `~/.kube/config` or in-cluster.
    #[arg(long, env = "KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,
}

/// A backend setting that clap cannot check (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendConfigError {
    #[error("{flag} ({env}) is required with --backend {backend}")]
    Missing {
        flag: &'static str,
        env: &'static str,
        backend: &'static str,
    },
    #[error("{flag} ({env}) must not be empty")]
    Empty {
        flag: &'static str,
        env: &'static str,
    },
    #[error(
        "{found}: set exactly one of --consumer (MANAGEMENT_CLUSTER_CONSUMER) for one static management cluster, --management-clusters-file (MANAGEMENT_CLUSTERS_FILE) or --management-clusters-from-api (MANAGEMENT_CLUSTERS_FROM_API=true) to place among several"
    )]
    PlacementMode { found: String },
    #[error(
        "placement needs --backend maestro: {setting} chooses among Maestro consumers; with --backend hub (WORK_BACKEND=hub) set --consumer (MANAGEMENT_CLUSTER_CONSUMER) instead"
    )]
    PlacementNeedsMaestro { setting: &'static str },
}

/// Where a pulse's control plane goes (docs/placement.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement<'a> {
    /// `--consumer`: one management cluster, the standard resource id.
    Static(&'a str),
    /// `--management-clusters-file`.
    File(&'a std::path::Path),
    /// `--management-clusters-from-api`.
    FromApi,
}

impl WorkArgs {
    /// Checks what clap cannot express: the Maestro URLs with `--backend maestro`, and non-empty
    /// names.
    pub fn check(&self) -> Result<(), BackendConfigError> {
        self.placement()?;
        if self.maestro_source_id.trim().is_empty() {
            return Err(BackendConfigError::Empty {
                flag: "--maestro-source-id",
                env: "MAESTRO_SOURCE_ID",
            });
        }
        if self.backend == Backend::Maestro {
            let urls = [
                (
                    &self.maestro_api_url,
                    "--maestro-api-url",
                    "MAESTRO_API_URL",
                ),
                (
                    &self.maestro_grpc_url,
                    "--maestro-grpc-url",
                    "MAESTRO_GRPC_URL",
                ),
            ];
            for (value, flag, env) in urls {
                if value.as_deref().is_none_or(|v| v.trim().is_empty()) {
                    return Err(BackendConfigError::Missing {
                        flag,
                        env,
                        backend: "maestro",
                    });
                }
            }
        }
        Ok(())
    }

    /// The placement mode: exactly one of the three settings; the inventory modes only with
    /// `--backend maestro`.
    pub fn placement(&self) -> Result<Placement<'_>, BackendConfigError> {
        let mut set = Vec::new();
        if self.consumer.is_some() {
            set.push("--consumer (MANAGEMENT_CLUSTER_CONSUMER)");
        }
        if self.management_clusters_file.is_some() {
            set.push("--management-clusters-file (MANAGEMENT_CLUSTERS_FILE)");
        }
        if self.management_clusters_from_api {
            set.push("--management-clusters-from-api (MANAGEMENT_CLUSTERS_FROM_API)");
        }
        if set.len() != 1 {
            return Err(BackendConfigError::PlacementMode {
                found: if set.is_empty() {
                    "no placement is set".to_owned()
                } else {
                    format!("{} are all set", set.join(" and "))
                },
            });
        }
        if let Some(consumer) = &self.consumer {
            if consumer.trim().is_empty() {
                return Err(BackendConfigError::Empty {
                    flag: "--consumer",
                    env: "MANAGEMENT_CLUSTER_CONSUMER",
                });
            }
            return Ok(Placement::Static(consumer));
        }
        if self.backend == Backend::Hub {
            return Err(BackendConfigError::PlacementNeedsMaestro {
                setting: if self.management_clusters_from_api {
                    "--management-clusters-from-api (MANAGEMENT_CLUSTERS_FROM_API)"
                } else {
                    "--management-clusters-file (MANAGEMENT_CLUSTERS_FILE)"
                },
            });
        }
        match &self.management_clusters_file {
            Some(path) if path.as_os_str().is_empty() => Err(BackendConfigError::Empty {
                flag: "--management-clusters-file",
                env: "MANAGEMENT_CLUSTERS_FILE",
            }),
            Some(path) => Ok(Placement::File(path)),
            None => Ok(Placement::FromApi),
        }
    }

    /// The static consumer (`--consumer`), `""` in the inventory modes.
    pub fn static_consumer(&self) -> &str {
        self.consumer.as_deref().unwrap_or_default()
    }

    /// The backend as reports name it.
    pub fn transport(&self) -> Transport {
        Transport {
            backend: self.backend,
            maestro_urls: (
                self.maestro_api_url.clone().unwrap_or_default(),
                self.maestro_grpc_url.clone().unwrap_or_default(),
            ),
            kubeconfig: self.kubeconfig.clone(),
            retry_budget: self.retry_budget,
        }
    }

    /// The Maestro client's settings; one call never outlives the retry budget by much.
    pub fn maestro_config(&self) -> MaestroConfig {
        let mut config = MaestroConfig::new(
            self.maestro_grpc_url.clone().unwrap_or_default(),
            self.maestro_api_url.clone().unwrap_or_default(),
            self.maestro_source_id.clone(),
            self.static_consumer().to_owned(),
        );
        self.maestro_tls.apply_to(&mut config);
        config.timeout = config.timeout.min(self.call_timeout());
        config
    }

    fn call_timeout(&self) -> Duration {
        self.retry_budget.max(Duration::from_secs(1))
    }

    /// Builds the client of the chosen backend; `Err` when its settings are unusable (a
    /// `WorkError::Config`, reported as `AdapterMisconfigured`).
    pub async fn connect(&self) -> Result<AnyWorkClient, WorkError> {
        match self.backend {
            Backend::Maestro => Ok(AnyWorkClient::Maestro(MaestroWorkClient::new(
                self.maestro_config(),
            )?)),
            Backend::Hub => {
                let timeout = hub::DEFAULT_TIMEOUT.min(self.call_timeout());
                HubWorkClient::connect(self.kubeconfig.as_deref(), self.static_consumer(), timeout)
                    .await
                    .map(AnyWorkClient::Hub)
            }
        }
    }
}

/// The backend chosen at run time (`--backend`): one of the two [`WorkClient`]s.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per process
pub enum AnyWorkClient {
    Maestro(MaestroWorkClient),
    Hub(HubWorkClient),
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use clap::{CommandFactory, Parser};

    use super::*;
    use crate::work::failure::BackendRef;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        work: WorkArgs,
    }

    #[test]
    fn command_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn maestro_urls_are_required_only_for_maestro() {
        let args = Cli::try_parse_from(["x", "--consumer", "mgmt-1"])
            .unwrap()
            .work;
        let err = args.check().unwrap_err();
        assert!(err.to_string().contains("MAESTRO_API_URL"), "{err}");
        assert!(matches!(
            args.transport().backend_ref(),
            BackendRef::Maestro { api: "", grpc: "" }
        ));
        let hub = Cli::try_parse_from(["x", "--consumer", "mgmt-1", "--backend", "hub"])
            .unwrap()
            .work;
        assert_eq!(hub.check(), Ok(()));
        assert!(matches!(
            hub.transport().backend_ref(),
            BackendRef::Hub { kubeconfig: None }
        ));
        let blank = Cli::try_parse_from(["x", "--consumer", " ", "--backend", "hub"])
            .unwrap()
            .work;
        assert!(
            blank
                .check()
                .unwrap_err()
                .to_string()
                .contains("MANAGEMENT_CLUSTER_CONSUMER")
        );
    }

    #[test]
    fn exactly_one_placement_mode_and_inventories_only_with_maestro() {
        let urls = [
            "--maestro-api-url",
            "http://r",
            "--maestro-grpc-url",
            "http://g",
        ];
        let parse = |extra: &[&str]| {
            let mut argv = vec!["x"];
            argv.extend(urls);
            argv.extend(extra);
            Cli::try_parse_from(argv).unwrap().work
        };
        let none = parse(&[]).check().unwrap_err().to_string();
        for setting in [
            "MANAGEMENT_CLUSTER_CONSUMER",
            "MANAGEMENT_CLUSTERS_FILE",
            "MANAGEMENT_CLUSTERS_FROM_API",
            "no placement is set",
        ] {
            assert!(none.contains(setting), "{setting}: {none}");
        }
        let two = parse(&[
            "--consumer",
            "mgmt-use1-a",
            "--management-clusters-from-api",
        ])
        .check()
        .unwrap_err()
        .to_string();
        assert!(two.contains("are all set"), "{two}");
        assert_eq!(
            parse(&["--management-clusters-file", "/etc/mc.json"]).placement(),
            Ok(Placement::File(std::path::Path::new("/etc/mc.json")))
        );
        assert_eq!(
            parse(&["--management-clusters-from-api"]).placement(),
            Ok(Placement::FromApi)
        );
        assert_eq!(
            parse(&["--consumer", "mgmt-use1-a"]).placement(),
            Ok(Placement::Static("mgmt-use1-a"))
        );
        let hub = parse(&["--management-clusters-from-api", "--backend", "hub"])
            .check()
            .unwrap_err()
            .to_string();
        assert!(
            hub.starts_with("placement needs --backend maestro"),
            "{hub}"
        );
    }

    #[test]
    fn a_call_never_outlives_the_budget() {
        let args = Cli::try_parse_from([
            "x",
            "--consumer",
            "mgmt-1",
            "--maestro-api-url",
            "http://r",
            "--maestro-grpc-url",
            "http://g",
            "--retry-budget",
            "2",
        ])
        .unwrap()
        .work;
        assert_eq!(args.maestro_config().timeout, Duration::from_secs(2));
    }
}
