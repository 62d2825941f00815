//! The backend's failures as a report's conditions: unreachable within the retry budget,
//! stopped first, credentials refused, consumer unknown, the adapter's own settings unusable, or
//! refused otherwise — each in the words of the backend the pulse talks to (`WORK_BACKEND`).
//!
//! | error | `maestro` | `hub` |
//! |---|---|---|
//! | unreachable after the retry budget (connection refused, timeouts, 408/429/5xx), or stopped first | `MaestroUnavailable` (names both URLs) | `HubUnavailable` (names the hub kubeconfig and the API server) |
//! | credentials refused (401, TLS client auth) or not allowed (403) | `MaestroAuthFailed` | `HubAuthFailed` (names the kubeconfig and the grants needed) |
//! | the consumer is unknown | `ConsumerNotFound` (no such Maestro consumer) | `HubNamespaceNotFound` (no namespace of that name on the hub: no such managed cluster) |
//! | own settings unusable | `AdapterMisconfigured` | `AdapterMisconfigured` |
//! | refused otherwise | `ManifestWorkFailed` (Maestro's words) | `ManifestWorkFailed` (the hub API server's words) |

use super::Failure;
use super::WorkError;
use super::outcome::{FeedbackError, ObjectRef, WorkRef, invalid_feedback};
use crate::message::{Conditions, error_conditions, redact};

/// Maestro could not be reached (unavailable, timeouts, 5xx) within the retry budget.
pub fn maestro_unavailable(consumer: &str, detail: &str) -> Conditions {
    let applied = format!(
        "Maestro was unreachable for management cluster {consumer} after retries: {}. The next pulse retries; if it persists, check the Maestro service, its endpoints and network policy from the adapter namespace",
        redact(detail)
    );
    let other = "Not checked: Maestro is unavailable (see Applied)".to_owned();
    error_conditions("MaestroUnavailable", applied, other)
}

/// Maestro refused the adapter's credentials (401/403, TLS client auth); not retried.
pub fn maestro_auth_failed(detail: &str) -> Conditions {
    let applied = format!(
        "Maestro rejected the adapter's credentials: {}. Check the adapter's bearer token file / client certificate and that its identity may manage ManifestWorks for this source; retrying will not help until that is fixed",
        redact(detail)
    );
    let other = "Not checked: Maestro authentication failed (see Applied)".to_owned();
    error_conditions("MaestroAuthFailed", applied, other)
}

/// Maestro does not know the consumer (management cluster) the adapter is configured with.
pub fn consumer_not_found(consumer: &str, kind: &str) -> Conditions {
    let applied = format!(
        "Maestro has no consumer named {consumer:?}, so the {kind} cannot be placed. Check MANAGEMENT_CLUSTER_CONSUMER against the consumers registered in Maestro"
    );
    let other =
        format!("Not checked: management cluster {consumer:?} is unknown to Maestro (see Applied)");
    error_conditions("ConsumerNotFound", applied, other)
}

/// Reasons of the hub backend's failures (`WORK_BACKEND=hub`), in its own words; Maestro's are
/// `MaestroUnavailable`, `MaestroAuthFailed`, `ConsumerNotFound`.
pub const HUB_UNAVAILABLE: &str = "HubUnavailable";
pub const HUB_AUTH_FAILED: &str = "HubAuthFailed";
pub const HUB_NAMESPACE_NOT_FOUND: &str = "HubNamespaceNotFound";

/// `the hub kubeconfig <path>` or `the in-cluster hub credentials`, for messages.
fn hub_settings(kubeconfig: Option<&std::path::Path>) -> String {
    match kubeconfig {
        Some(path) => format!("the hub kubeconfig KUBECONFIG={}", path.display()),
        None => "the adapter's default kubeconfig (~/.kube/config, else in-cluster)".to_owned(),
    }
}

/// The OCM hub's API server could not be reached (connection refused, timeouts, 408/429/5xx)
/// within the retry budget, or the adapter was stopped first.
pub fn hub_unavailable(
    consumer: &str,
    kubeconfig: Option<&std::path::Path>,
    detail: &str,
) -> Conditions {
    let applied = format!(
        "The OCM hub's API server was unreachable for management cluster {consumer} after retries: {}. The next pulse retries; if it persists, check the hub API server that {} points at, and the network from the adapter namespace to it",
        redact(detail),
        hub_settings(kubeconfig)
    );
    let other = "Not checked: the OCM hub is unavailable (see Applied)".to_owned();
    error_conditions(HUB_UNAVAILABLE, applied, other)
}

/// The OCM hub refused the adapter's credentials (401) or its identity may not manage the works
/// (403); not retried.
pub fn hub_auth_failed(
    consumer: &str,
    kubeconfig: Option<&std::path::Path>,
    detail: &str,
) -> Conditions {
    let applied = format!(
        "The OCM hub rejected the adapter's credentials or permissions: {}. Check the token or client certificate of {}, and that its identity may get, create, patch and delete manifestworks (work.open-cluster-management.io) in namespace {consumer} on the hub; retrying will not help until that is fixed",
        redact(detail),
        hub_settings(kubeconfig)
    );
    let other = "Not checked: the OCM hub refused the adapter (see Applied)".to_owned();
    error_conditions(HUB_AUTH_FAILED, applied, other)
}

/// The hub has no namespace named after the consumer: no managed cluster of that name is
/// registered (the hub gives each one a namespace of its name for its ManifestWorks).
pub fn hub_namespace_not_found(
    consumer: &str,
    kubeconfig: Option<&std::path::Path>,
    kind: &str,
) -> Conditions {
    let applied = format!(
        "The OCM hub ({}) has no namespace {consumer:?}, so the {kind} cannot be placed. MANAGEMENT_CLUSTER_CONSUMER must name a managed cluster registered with the hub (its ManifestWorks live in the namespace of its name); check the name, or register the management cluster with the hub",
        hub_settings(kubeconfig)
    );
    let other = format!(
        "Not checked: management cluster {consumer:?} is not registered with the OCM hub (see Applied)"
    );
    error_conditions(HUB_NAMESPACE_NOT_FOUND, applied, other)
}

/// The hub refused a work request for a reason retrying will not fix.
pub fn hub_work_failed(consumer: &str, detail: &str) -> Conditions {
    let applied = format!(
        "The ManifestWork for management cluster {consumer} could not be read or written on the OCM hub: {}. Check the adapter's logs and the hub API server's answer quoted here (the ManifestWork CRD installed, admission webhooks)",
        redact(detail)
    );
    let other = "Not checked: the ManifestWork request failed (see Applied)".to_owned();
    error_conditions("ManifestWorkFailed", applied, other)
}

/// The work backend rejected the request for a reason that retrying will not fix (invalid work,
/// unexpected answer, server-side error that is not transient).
pub fn work_failed(consumer: &str, detail: &str) -> Conditions {
    let applied = format!(
        "The ManifestWork for management cluster {consumer} could not be read or created: {}. Check the adapter and Maestro (or hub) logs around this time",
        redact(detail)
    );
    let other = "Not checked: the ManifestWork request failed (see Applied)".to_owned();
    error_conditions("ManifestWorkFailed", applied, other)
}

/// The adapter's own backend settings are unusable (unreadable CA/token/client certificate file,
/// bad URL, bad kubeconfig).
pub fn adapter_misconfigured(detail: &str) -> Conditions {
    let applied = format!(
        "The adapter's work backend settings are unusable: {}. Fix the Job's Maestro/hub settings (URLs, mounted CA, token and certificate files, kubeconfig)",
        redact(detail)
    );
    let other = "Not checked: the adapter is misconfigured (see Applied)".to_owned();
    error_conditions("AdapterMisconfigured", applied, other)
}

/// Where ManifestWorks are read and created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// Maestro: REST reads, gRPC CloudEvent publishes.
    Maestro,
    /// The OCM hub API (ManifestWork objects in the consumer's namespace) via a kubeconfig.
    Hub,
}

/// The work backend as the pulse's reports name it.
#[derive(Debug, Clone)]
pub struct Transport {
    pub backend: Backend,
    /// `MAESTRO_API_URL`, `MAESTRO_GRPC_URL`.
    pub maestro_urls: (String, String),
    /// The hub's `KUBECONFIG`, when given.
    pub kubeconfig: Option<std::path::PathBuf>,
    /// How long transient failures are retried.
    pub retry_budget: std::time::Duration,
}

impl Transport {
    /// The backend a failure report names, with the settings a person checks.
    pub fn backend_ref(&self) -> BackendRef<'_> {
        match self.backend {
            Backend::Maestro => BackendRef::Maestro {
                api: &self.maestro_urls.0,
                grpc: &self.maestro_urls.1,
            },
            Backend::Hub => BackendRef::Hub {
                kubeconfig: self.kubeconfig.as_deref(),
            },
        }
    }
}

/// The backend a failure report names, with the settings a person checks.
#[derive(Debug, Clone, Copy)]
pub enum BackendRef<'a> {
    /// `MAESTRO_API_URL`, `MAESTRO_GRPC_URL`.
    Maestro { api: &'a str, grpc: &'a str },
    /// The hub's `KUBECONFIG`, when given.
    Hub {
        kubeconfig: Option<&'a std::path::Path>,
    },
}

/// The settings a failure report names (the backend and how it is reached).
#[derive(Debug, Clone, Copy)]
pub struct FailureContext<'a> {
    pub work: WorkRef<'a>,
    pub object_kind: &'static str,
    pub retry_budget: std::time::Duration,
    pub backend: BackendRef<'a>,
}

impl FailureContext<'_> {
    /// The backend is unreachable: `MaestroUnavailable` or `HubUnavailable`, `detail` quoted.
    fn unavailable(&self, detail: &str) -> (&'static str, Conditions) {
        let consumer = self.work.consumer;
        match self.backend {
            BackendRef::Maestro { .. } => {
                ("MaestroUnavailable", maestro_unavailable(consumer, detail))
            }
            BackendRef::Hub { kubeconfig } => (
                HUB_UNAVAILABLE,
                hub_unavailable(consumer, kubeconfig, detail),
            ),
        }
    }
}

/// The reason and conditions when the backend did not answer usefully (retry budget spent,
/// SIGTERM, or a failure retrying cannot fix).
pub fn failure(ctx: &FailureContext<'_>, failure: &Failure) -> (&'static str, Conditions) {
    match failure {
        Failure::GaveUp {
            error,
            attempts,
            elapsed,
        } => {
            let mut detail = format!(
                "{error} ({attempts} attempts over {:.1} s, retry budget {} s)",
                elapsed.as_secs_f64(),
                ctx.retry_budget.as_secs()
            );
            if let BackendRef::Maestro { api, grpc } = ctx.backend {
                detail.push_str(&format!(
                    "; MAESTRO_API_URL {api}, MAESTRO_GRPC_URL {grpc} (a server with TLS needs https://)"
                ));
            }
            ctx.unavailable(&detail)
        }
        Failure::Interrupted { last } => {
            let detail = match last {
                Some(e) => format!(
                    "the adapter was stopped before the work backend answered; last error: {e}"
                ),
                None => "the adapter was stopped before the work backend answered".to_owned(),
            };
            ctx.unavailable(&detail)
        }
        Failure::Permanent(error) => for_error(ctx, error),
    }
}

fn for_error(ctx: &FailureContext<'_>, error: &WorkError) -> (&'static str, Conditions) {
    let consumer = ctx.work.consumer;
    let hub = match ctx.backend {
        BackendRef::Hub { kubeconfig } => Some(kubeconfig),
        BackendRef::Maestro { .. } => None,
    };
    match error {
        WorkError::Unauthenticated { .. } | WorkError::Forbidden { .. } => match hub {
            Some(kubeconfig) => (
                HUB_AUTH_FAILED,
                hub_auth_failed(consumer, kubeconfig, &error.to_string()),
            ),
            None => ("MaestroAuthFailed", maestro_auth_failed(&error.to_string())),
        },
        WorkError::ConsumerNotFound { .. } => match hub {
            Some(kubeconfig) => (
                HUB_NAMESPACE_NOT_FOUND,
                hub_namespace_not_found(consumer, kubeconfig, ctx.object_kind),
            ),
            None => (
                "ConsumerNotFound",
                consumer_not_found(consumer, ctx.object_kind),
            ),
        },
        WorkError::MalformedFeedback {
            manifest,
            feedback,
            message,
        } => {
            let object = ObjectRef {
                kind: ctx.object_kind,
                group: "",
                resource: "",
                namespace: "",
                name: "",
                source: "",
            };
            (
                "InvalidFeedback",
                invalid_feedback(
                    ctx.work,
                    &object,
                    &FeedbackError::Malformed {
                        manifest: manifest.clone(),
                        feedback: feedback.clone(),
                        message: message.clone(),
                    },
                ),
            )
        }
        WorkError::Config { .. } => (
            "AdapterMisconfigured",
            adapter_misconfigured(&error.to_string()),
        ),
        WorkError::AlreadyExists { .. }
        | WorkError::Conflict { .. }
        | WorkError::NotFound { .. }
        | WorkError::Invalid { .. }
        | WorkError::Unavailable { .. }
        | WorkError::Protocol { .. }
        | WorkError::Internal { .. } => (
            "ManifestWorkFailed",
            match hub {
                Some(_) => hub_work_failed(consumer, &error.to_string()),
                None => work_failed(consumer, &error.to_string()),
            },
        ),
    }
}
