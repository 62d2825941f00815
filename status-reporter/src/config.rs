//! Command-line flags and environment variables, and the validated configuration made of them.
//!
//! The environment names are the Go status-reporter's, so existing Job manifests work unchanged;
//! the spike's names (`RESULTS_INPUT_PATH`, `POLL_INTERVAL`) are accepted as aliases.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

/// Puts an adapter's report, or the reason there is none, on the Job's status.
#[derive(Debug, Clone, Parser)]
#[command(name = "status-reporter", version, about, long_about = None)]
pub struct Args {
    /// Report file to wait for [default: /results/adapter-report.json]
    #[arg(long, env = "RESULTS_PATH", value_name = "PATH")]
    pub results_path: Option<PathBuf>,
    /// Alias of --results-path (the spike's name).
    #[arg(long, env = "RESULTS_INPUT_PATH", hide = true, value_name = "PATH")]
    pub results_input_path: Option<PathBuf>,

    /// Job to write; when unset, read from this Pod's `batch.kubernetes.io/job-name` label.
    #[arg(long, env = "JOB_NAME")]
    pub job_name: Option<String>,
    /// Namespace of the Job and Pod [default: the kubeconfig's or in-cluster namespace]
    #[arg(long, env = "JOB_NAMESPACE")]
    pub job_namespace: Option<String>,
    /// This Pod's name (downward API); needed to notice the adapter container's end.
    #[arg(long, env = "POD_NAME")]
    pub pod_name: Option<String>,
    /// The container whose termination is watched.
    #[arg(
        long = "adapter-container",
        env = "ADAPTER_CONTAINER_NAME",
        default_value = "adapter"
    )]
    pub adapter_container: String,

    /// Seconds between looks at the report file when inotify is unavailable (also a re-check
    /// when it is). Accepts `2`, `2s`, `500ms`.
    #[arg(long, env = "POLL_INTERVAL_SECONDS", value_parser = parse_duration, value_name = "DURATION")]
    pub poll_interval: Option<Duration>,
    /// Alias of --poll-interval (the spike's name).
    #[arg(long = "poll-interval-alias", env = "POLL_INTERVAL", hide = true, value_parser = parse_duration)]
    pub poll_interval_alias: Option<Duration>,
    /// Longest wait for the report [default: the Job's activeDeadlineSeconds less a margin when
    /// set, else 300s]. When given, it also caps the Job's deadline.
    #[arg(long, env = "MAX_WAIT_TIME_SECONDS", value_parser = parse_duration, value_name = "DURATION")]
    pub max_wait: Option<Duration>,
    /// How long a report that does not parse may stay unchanged before it is judged invalid.
    #[arg(long, env = "SETTLE_TIME", value_parser = parse_duration, default_value = "1s", value_name = "DURATION")]
    pub settle_time: Duration,
    /// Comma-separated condition types that carry failures the reporter detects itself
    /// (crash, OOM kill, timeout, invalid report, SIGTERM); also the type a legacy report maps to
    /// (the first one).
    #[arg(
        long = "condition-types",
        env = "CONDITION_TYPE",
        default_value = "Available",
        value_delimiter = ','
    )]
    pub condition_types: Vec<String>,
    /// Time allowed for writing the Job, retries included, once the outcome is known.
    #[arg(long, env = "WRITE_TIMEOUT", value_parser = parse_duration, default_value = "30s", value_name = "DURATION")]
    pub write_timeout: Duration,

    /// How to notice the report: `inotify` (with polling as a fallback) or `poll` only.
    #[arg(long, env = "FILE_WATCH", value_enum, default_value = "inotify")]
    pub file_watch: FileWatch,
    /// Record one Kubernetes Event (events.k8s.io/v1) on the Job per run, after its status is
    /// written: `true` or `false` (also `1`/`0`, `yes`/`no`, `on`/`off`). Best effort: a refused
    /// Event never changes the Job's status or the exit code.
    #[arg(
        long,
        env = "RECORD_EVENTS",
        default_value = "true",
        value_parser = clap::builder::BoolishValueParser::new(),
        action = clap::ArgAction::Set,
        value_name = "BOOL"
    )]
    pub record_events: bool,

    /// Log format.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value = "json")]
    pub log_format: LogFormat,
    /// Log filter, `RUST_LOG` syntax (e.g. `info`, `status_reporter=debug`).
    #[arg(long, env = "LOG_LEVEL", default_value = "info")]
    pub log_level: String,
    /// Kubeconfig file [default: $KUBECONFIG, then in-cluster]
    #[arg(long, env = "KUBECONFIG", value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// Cluster id, only to label log lines.
    #[arg(long, env = "CLUSTER_ID")]
    pub cluster_id: Option<String>,
}

/// `json` for clusters, `plain` for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Json,
    Plain,
}

/// How the report file is noticed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FileWatch {
    /// inotify on the results directory, plus the poll tick.
    Inotify,
    /// The poll tick alone (for file systems without inotify, and to measure the fallback).
    Poll,
}

/// Bad configuration: the process exits with code 2.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("--results-path/RESULTS_PATH must be an absolute file path (got {0:?})")]
    RelativeResultsPath(PathBuf),
    #[error("--condition-types/CONDITION_TYPE: {0}")]
    ConditionType(String),
    #[error("--poll-interval/POLL_INTERVAL_SECONDS must be more than zero")]
    ZeroPollInterval,
    #[error("--max-wait/MAX_WAIT_TIME_SECONDS must be more than zero")]
    ZeroMaxWait,
    #[error(
        "no Job name: set JOB_NAME (or --job-name), or POD_NAME so it can be read from the Pod's batch.kubernetes.io/job-name label"
    )]
    NoJobName,
}

/// The configuration after defaults and aliases are resolved and every value is checked.
#[derive(Debug, Clone)]
pub struct Config {
    pub results_path: PathBuf,
    pub job_name: Option<String>,
    /// `None`: the client's default namespace.
    pub namespace: Option<String>,
    pub pod_name: Option<String>,
    pub adapter_container: String,
    pub poll_interval: Duration,
    pub max_wait: Option<Duration>,
    pub settle_time: Duration,
    pub condition_types: Vec<String>,
    pub write_timeout: Duration,
    pub file_watch: FileWatch,
    /// Whether the run's Event is recorded on the Job ([`crate::event`]).
    pub record_events: bool,
    pub cluster_id: Option<String>,
}

/// Used when neither MAX_WAIT_TIME_SECONDS nor the Job's activeDeadlineSeconds says otherwise.
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(300);
/// Used when POLL_INTERVAL_SECONDS is not set.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(2);

impl Config {
    /// Resolves defaults and aliases and checks every value.
    pub fn from_args(args: Args) -> Result<Config, ConfigError> {
        let Args {
            results_path,
            results_input_path,
            job_name,
            job_namespace,
            pod_name,
            adapter_container,
            poll_interval,
            poll_interval_alias,
            max_wait,
            settle_time,
            condition_types,
            write_timeout,
            file_watch,
            record_events,
            log_format: _,
            log_level: _,
            kubeconfig: _,
            cluster_id,
        } = args;
        let results_path = results_path
            .or(results_input_path)
            .unwrap_or_else(|| PathBuf::from(job_report::DEFAULT_RESULTS_PATH));
        if !results_path.is_absolute() || results_path.file_name().is_none() {
            return Err(ConfigError::RelativeResultsPath(results_path));
        }
        let poll_interval = poll_interval
            .or(poll_interval_alias)
            .unwrap_or(DEFAULT_POLL_INTERVAL);
        if poll_interval.is_zero() {
            return Err(ConfigError::ZeroPollInterval);
        }
        if max_wait.is_some_and(|d| d.is_zero()) {
            return Err(ConfigError::ZeroMaxWait);
        }
        let condition_types = check_condition_types(condition_types)?;
        let non_empty = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
        let job_name = non_empty(job_name);
        let pod_name = non_empty(pod_name);
        if job_name.is_none() && pod_name.is_none() {
            return Err(ConfigError::NoJobName);
        }
        Ok(Config {
            results_path,
            job_name,
            namespace: non_empty(job_namespace),
            pod_name,
            adapter_container,
            poll_interval,
            max_wait,
            settle_time,
            condition_types,
            write_timeout,
            file_watch,
            record_events,
            cluster_id: non_empty(cluster_id),
        })
    }

    /// The type a legacy report's single condition gets.
    pub fn legacy_condition_type(&self) -> &str {
        self.condition_types
            .first()
            .map_or("Available", String::as_str)
    }
}

fn check_condition_types(raw: Vec<String>) -> Result<Vec<String>, ConfigError> {
    let mut types: Vec<String> = Vec::new();
    for t in raw.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
        if !types.iter().any(|seen| seen == t) {
            types.push(t.to_owned());
        }
    }
    if types.is_empty() {
        return Err(ConfigError::ConditionType(
            "needs at least one type, e.g. Available,Health".into(),
        ));
    }
    // Reuse the report rules: a probe report with these types must validate.
    let probe = job_report::Report::new(
        types
            .iter()
            .map(|t| {
                job_report::Condition::new(
                    t.clone(),
                    job_report::ConditionStatus::False,
                    "Probe",
                    "",
                )
            })
            .collect(),
    );
    if let Err(violations) = job_report::validate(&probe) {
        let problems: Vec<String> = violations
            .iter()
            .map(|v| {
                let index = v
                    .path
                    .strip_prefix("conditions[")
                    .and_then(|rest| rest.split(']').next())
                    .and_then(|i| i.parse::<usize>().ok());
                match index.and_then(|i| types.get(i)) {
                    Some(t) => format!("{t:?}: {}", v.message),
                    None => v.message.clone(),
                }
            })
            .collect();
        return Err(ConfigError::ConditionType(problems.join("; ")));
    }
    Ok(types)
}

/// Parses `2`, `2s`, `1.5`, `500ms`, `5m`, `1h` (a bare number is seconds).
pub fn parse_duration(input: &str) -> Result<Duration, String> {
    let s = input.trim();
    let (number, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{input:?} is not a duration; use e.g. 2, 2s, 500ms, 5m"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(format!(
                "{input:?}: unknown unit {unit:?}; use ms, s, m or h"
            ));
        }
    };
    Duration::try_from_secs_f64(seconds)
        .map_err(|_| format!("{input:?} must be a non-negative duration"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Config, ConfigError> {
        let mut argv = vec!["status-reporter"];
        argv.extend_from_slice(args);
        Config::from_args(Args::try_parse_from(argv).unwrap())
    }

    #[test]
    fn clap_definition_is_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let c = parse(&["--job-name", "j"]).unwrap();
        assert_eq!(
            c.results_path,
            PathBuf::from("/results/adapter-report.json")
        );
        assert_eq!(c.poll_interval, Duration::from_secs(2));
        assert_eq!(c.condition_types, vec!["Available"]);
        assert_eq!(c.adapter_container, "adapter");
        assert_eq!(c.max_wait, None);
        assert!(c.record_events, "Events are on unless switched off");
    }

    #[test]
    fn events_can_be_switched_off() {
        for off in ["false", "0", "no", "off"] {
            let c = parse(&["--job-name", "j", "--record-events", off]).unwrap();
            assert!(!c.record_events, "{off}");
        }
        let c = parse(&["--job-name", "j", "--record-events", "true"]).unwrap();
        assert!(c.record_events);
        let err = Args::try_parse_from(["s", "--job-name", "j", "--record-events", "maybe"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--record-events"), "{err}");
    }

    #[test]
    fn aliases_apply_when_the_main_name_is_unset() {
        let c = parse(&[
            "--job-name",
            "j",
            "--results-input-path",
            "/r/x.json",
            "--poll-interval-alias",
            "500ms",
        ])
        .unwrap();
        assert_eq!(c.results_path, PathBuf::from("/r/x.json"));
        assert_eq!(c.poll_interval, Duration::from_millis(500));
        let c = parse(&[
            "--job-name",
            "j",
            "--results-path",
            "/a.json",
            "--results-input-path",
            "/b.json",
        ])
        .unwrap();
        assert_eq!(c.results_path, PathBuf::from("/a.json"));
    }

    #[test]
    fn condition_types_are_checked() {
        let c = parse(&[
            "--job-name",
            "j",
            "--condition-types",
            "Available, Health,Available",
        ])
        .unwrap();
        assert_eq!(c.condition_types, vec!["Available", "Health"]);
        let err =
            parse(&["--job-name", "j", "--condition-types", "Available,Complete"]).unwrap_err();
        assert!(err.to_string().contains("\"Complete\""), "{err}");
        let err = parse(&["--job-name", "j", "--condition-types", "my type"]).unwrap_err();
        assert!(err.to_string().contains("CONDITION_TYPE"), "{err}");
        assert!(parse(&["--job-name", "j", "--condition-types", ","]).is_err());
    }

    #[test]
    fn bad_values_are_config_errors() {
        assert!(matches!(
            parse(&["--job-name", "j", "--results-path", "rel.json"]),
            Err(ConfigError::RelativeResultsPath(_))
        ));
        assert!(matches!(
            parse(&["--job-name", "j", "--poll-interval", "0"]),
            Err(ConfigError::ZeroPollInterval)
        ));
        assert!(matches!(parse(&[]), Err(ConfigError::NoJobName)));
        assert!(parse(&["--pod-name", "p"]).is_ok());
        assert!(Args::try_parse_from(["s", "--max-wait", "soon"]).is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("3d").is_err());
        assert!(parse_duration("").is_err());
    }
}
