//! The pure mapping of the `controlplane` subcommand: what the adapter saw (work created, work
//! found with or without HostedCluster status feedback, or an error) → a [`Report`] with the
//! Applied / Available / Health conditions and `data` (`control_plane_endpoint`, `version`).
//!
//! Submodules: [`args`] (the flags) and [`run`](mod@run) (the wiring below, with retries, and
//! [`execute`], the edge that reads the cluster, builds the Maestro or hub client and writes the
//! report). Everything in this file is pure.
//!
//! Wiring, in order:
//! 1. [`ClusterInput::from_json`](crate::hyperfleet::cluster::ClusterInput::from_json), then
//!    [`ClusterSpec::validate`](crate::hyperfleet::cluster::ClusterSpec::validate); on `Err` write
//!    [`report_invalid_spec`] and send nothing.
//! 2. `WorkClient::get(`[`work_name`](crate::work::manifestwork::work_name)`)`:
//!    - missing → `create(`[`manifest_work`](crate::work::manifestwork::manifest_work)`)` →
//!      [`report_created`];
//!    - present → [`ownership`](crate::work::manifestwork::ownership) of its labels: not ours →
//!      [`report_ownership_conflict`]; ours → [`report_observed`]: first the agent's own work and
//!      manifest conditions (`Applied`, `Available`, `StatusFeedbackSynced`), then
//!      [`report_found`] with the value of the feedback named
//!      [`STATUS_FEEDBACK_NAME`](crate::work::manifestwork::STATUS_FEEDBACK_NAME) when the agent's
//!      conditions allow using it. `observed_generation` is then the work's
//!      [`GENERATION_ANNOTATION`](crate::work::manifestwork::GENERATION_ANNOTATION) (the spec the
//!      management cluster holds), the newest the adapter knows of;
//!    - present, ours, and the pulse's generation newer than the work's (and the work not being
//!      deleted) → [`update::immutable_changes`] of the work's HostedCluster against the new one:
//!      any → [`report_immutable_change`], nothing sent; none → `WorkClient::update` (one re-read
//!      and retry on a stale version) → [`report_updated`], `observed_generation` = the pulse's
//!      (Available False until a later pulse reads it applied); a work without the annotation is
//!      treated as older;
//!    - present, ours, the pulse's generation older → [`report_stale_generation`], nothing sent.
//! 3. A cluster with `deleted_time`: never create or update; see [`deletion`] (the stages, the
//!    fourth condition `Finalized`, `observed_generation` = the pulse's generation).
//! 4. Placement (`--management-clusters-file`, `--management-clusters-from-api`): the work is
//!    found by one search on every consumer, used where it is, or placed; see [`placed`] and
//!    [`crate::placement`]. Every report names the consumer in `data.management_cluster`.
//! 5. Backend errors → [`report_maestro_unavailable`] (transient, after the retry budget or on
//!    SIGTERM), [`report_maestro_auth_failed`] (401/403; the hub backend reports these rows in its
//!    own words, see [`outcome`](crate::work::outcome)),
//!    [`report_consumer_not_found`], [`report_invalid_feedback`] (malformed `jsonRaw`),
//!    [`report_adapter_misconfigured`] (unreadable CA/token, bad URL), [`report_work_failed`]
//!    (anything else). An unreadable cluster → [`report_cluster_unavailable`].
//!
//! The condition table, with what to do for each row, is [`table::TABLE`] (docs/controlplane.md shows it).
//!
//! Health from the HostedCluster: the health rows above, worst first, are
//! [`HEALTH_ROWS`](crate::hypershift::hostedcluster::status::HEALTH_ROWS) (`hypershift-api.md`
//! §2.3: what is blocked by input, what needs attention). The first that matches gives the
//! reason; the message quotes the operator's condition type, status, reason and message (bounded,
//! credentials removed), says what to do, and names every other row that matches and a failed
//! reconcile (`ReconciliationSucceeded=False`). A failed reconcile alone does not make Health
//! False: the operator retries it with back-off and hypershift-api.md counts it as an operator or
//! transient error; Available's message names it. `ValidReleaseImage=False` `SecretNotFound` (the
//! pull secret not there yet) is left out for the same reason, and so is
//! `GCPEndpointAvailable=False`: the Private Service Connect controller also writes it while the
//! endpoint is still being created or a GCP call is retried.
//!
//! Upgrades: `status.version.desired` differing from the newest `Completed` history entry, or a
//! newest history entry still `Partial` (after a first completed release) is an upgrade;
//! Available is then False `Upgrading` ("the control plane still serves release A"): the
//! generation asking for B is not reflected yet. `data.version` is the completed version,
//! `data.desired_version` the desired one.
//!
//! Generation (docs/report.md "Which generation a report describes"): every row carries G, the
//! newest of the pulse's generation and the work's `hyperfleet.io/generation`; Available is True
//! only when the work carries G, the agent reports it applied with usable feedback, and the
//! HostedCluster is available with no rollout. Available is `Unknown` only where the adapter could
//! not observe the management cluster or read its input (backend errors, unreadable cluster,
//! feedback not synced or invalid); refusals (invalid spec, immutable change, someone else's work)
//! are False so that HyperFleet stores them. Health is `False` where a person has to act.

use job_report::{ConditionStatus, Report};
use serde_json::{Map, Value};

use crate::hyperfleet::cluster::{ClusterSpec, SpecViolation};
use crate::hyperfleet::{ADAPTER_LABEL, CLUSTER_ID_LABEL};
use crate::hypershift::hostedcluster;
use crate::hypershift::hostedcluster::status::{self as hc_status, HostedClusterStatus};
use crate::message::{Conditions, cond, no_issues};
use crate::work::ExistingWork;
use crate::work::backend::Backend;
use crate::work::manifestwork::{self, Delivery, Owner, ResourceIdentifier, WorkManifest};
use crate::work::observed::{Lag, Stamp};
use crate::work::outcome::{self, FeedbackError, ObjectRef, Observed};
use crate::work::scalar_feedback::{ScalarStatus, StatusValue, ValueKind};

pub mod args;
pub mod deletion;
pub mod object;
pub mod run;
pub mod table;

pub use crate::hypershift::hostedcluster::status::{
    BLOCKED, CLUSTER_VERSION_FAILING, DEGRADED, HEALTH_ROWS, INVALID_CONFIGURATION,
    INVALID_GCP_CREDENTIALS, INVALID_WORKLOAD_IDENTITY, PLATFORM_CREDENTIALS_NOT_FOUND,
    RELEASE_IMAGE_INVALID, UNSUPPORTED_HOSTED_CLUSTER, UPGRADE_BLOCKED, UPGRADE_FAILED, UPGRADING,
};
pub use crate::work::observed::OperatorClock;
pub use crate::work::outcome::{
    APPLY_FAILED, AWAITING_OPERATOR, FEEDBACK_NOT_SYNCED, IMMUTABLE_FIELD_CHANGED,
    MANIFEST_WORK_UPDATED, OPERATOR_NOT_RECONCILING, STALE_GENERATION, WorkRef,
};
pub use args::{Args, ConfigError};
pub use object::ControlPlane;
pub use run::{PulseInputs, RunError, execute, run, run_with};

/// `adapter` field of every report this module builds.
pub const ADAPTER_NAME: &str = "hypershift-controlplane";
/// Value of [`ADAPTER_LABEL`] on the works this adapter owns.
pub const ADAPTER_LABEL_VALUE: &str = crate::hyperfleet::CONTROLPLANE_ADAPTER;
/// `data` keys.
pub const DATA_CONTROL_PLANE_ENDPOINT: &str = "control_plane_endpoint";
pub const DATA_VERSION: &str = "version";
/// The release the HostedCluster is rolling out (`status.version.desired.version`); equals
/// `version` when no upgrade is running, `""` before the HostedCluster reports one.
pub const DATA_DESIRED_VERSION: &str = "desired_version";
/// Reason when the agent reports the HostedCluster as not available (gone from the management
/// cluster).
pub const HOSTED_CLUSTER_MISSING: &str = "HostedClusterMissing";

/// The HostedCluster `(namespace, name)` as the work's status and the messages name it.
pub fn hosted_cluster_object<'a>((namespace, name): (&'a str, &'a str)) -> ObjectRef<'a> {
    ObjectRef {
        kind: hostedcluster::KIND,
        group: hostedcluster::GROUP,
        resource: hostedcluster::RESOURCE,
        namespace,
        name,
        source: "cluster",
    }
}

/// The labels that make a work this cluster's control-plane work.
pub fn owner(cluster_id: &str) -> Owner {
    Owner {
        labels: vec![
            (CLUSTER_ID_LABEL, cluster_id.to_owned()),
            (ADAPTER_LABEL, ADAPTER_LABEL_VALUE.to_owned()),
        ],
    }
}

/// The ManifestWork `hostedcluster-<clusterId>` for `spec`, in the consumer's namespace, stamped
/// with `generation` when known.
///
/// Manifests, in apply order: the HostedCluster's Namespace, then the HostedCluster. The
/// Namespace is shared by every HostedCluster on the management cluster (and holds their
/// Secrets, which the adapter never sends), so it is `CreateOnly` (created when missing, never
/// changed) and orphaned when the work is deleted.
pub fn manifest_work(spec: &ClusterSpec, consumer: &str, generation: Option<i64>) -> Value {
    let (namespace, name) = hostedcluster::hosted_cluster_ref(spec);
    let manifests = vec![
        WorkManifest {
            object: manifestwork::namespace(namespace),
            identifier: ResourceIdentifier {
                group: String::new(),
                resource: "namespaces".into(),
                namespace: String::new(),
                name: namespace.into(),
            },
            delivery: Delivery::Shared,
        },
        WorkManifest {
            object: hostedcluster::hosted_cluster(spec),
            identifier: ResourceIdentifier {
                group: hostedcluster::GROUP.into(),
                resource: hostedcluster::RESOURCE.into(),
                namespace: namespace.into(),
                name: name.into(),
            },
            delivery: Delivery::Owned,
        },
    ];
    manifestwork::manifest_work(
        &manifestwork::hosted_cluster_work_name(&spec.cluster_id),
        consumer,
        &owner(&spec.cluster_id),
        generation,
        manifests,
    )
}

/// What the hub backend feeds back of a HostedCluster's status, as scalars a standard OCM hub
/// carries ([`crate::work::scalar_feedback`]): every documented condition
/// ([`FED_BACK_CONDITIONS`](crate::hypershift::hostedcluster::status::FED_BACK_CONDITIONS)), the
/// API endpoint, the desired release and the newest `Completed` history entry.
pub const SCALAR_STATUS: ScalarStatus = ScalarStatus {
    conditions: hc_status::FED_BACK_CONDITIONS,
    values: &[
        StatusValue::Field {
            path: "controlPlaneEndpoint.host",
            kind: ValueKind::String,
        },
        StatusValue::Field {
            path: "controlPlaneEndpoint.port",
            kind: ValueKind::Integer,
        },
        StatusValue::Field {
            path: "version.desired.version",
            kind: ValueKind::String,
        },
        StatusValue::Field {
            path: "version.desired.image",
            kind: ValueKind::String,
        },
        StatusValue::Where {
            list: "version.history",
            key: "state",
            value: "Completed",
            field: "version",
            kind: ValueKind::String,
        },
        StatusValue::Where {
            list: "version.history",
            key: "state",
            value: "Completed",
            field: "image",
            kind: ValueKind::String,
        },
    ],
};

/// [`manifest_work`] as `backend` ships it: on the hub, with scalar feedback
/// ([`SCALAR_STATUS`]).
pub fn manifest_work_for(
    backend: Backend,
    spec: &ClusterSpec,
    consumer: &str,
    generation: Option<i64>,
) -> Value {
    let mut work = manifest_work(spec, consumer, generation);
    if backend == Backend::Hub {
        manifestwork::use_scalar_feedback(&mut work, &SCALAR_STATUS);
    }
    work
}

/// Parses the `status` feedback value of a HostedCluster.
pub fn parse_feedback(value: &Value) -> Result<HostedClusterStatus, FeedbackError> {
    outcome::parse_status(value, hostedcluster::KIND)
}

/// The work did not exist and was created now.
pub fn report_created(work: WorkRef<'_>, generation: Option<i64>) -> Report {
    report(
        generation,
        [
            outcome::created(work, &unnamed()),
            cond(
                "Available",
                ConditionStatus::False,
                "Provisioning",
                "Control plane provisioning in progress".to_owned(),
            ),
            no_issues("No degradation detected"),
        ],
    )
}

/// The HostedCluster for messages that do not name it.
fn unnamed() -> ObjectRef<'static> {
    hosted_cluster_object(("", ""))
}

/// The work exists (and is ours); `feedback` is its `status` feedback value, if any.
///
/// This is the feedback-only part of the mapping: [`report_observed`] decides first, from the
/// agent's own work and manifest conditions, whether the feedback may be used at all.
pub fn report_found(
    work: WorkRef<'_>,
    feedback: Option<&Value>,
    generation: Option<i64>,
) -> Report {
    let Some(feedback) = feedback else {
        return report(generation, outcome::awaiting(work, &unnamed(), None));
    };
    let status = match parse_feedback(feedback) {
        Ok(status) => status,
        Err(error) => return report_invalid_feedback(work, &error, generation),
    };
    report_status(work, &status, generation)
}

/// The work exists and is ours: map what the agent reports about it, then the HostedCluster
/// status it fed back (`hc` = the HostedCluster's `(namespace, name)`), as
/// [`outcome::observe`] orders them.
pub fn report_observed(
    work: WorkRef<'_>,
    existing: &ExistingWork,
    hc: (&str, &str),
    generation: Option<i64>,
    clock: OperatorClock,
) -> Report {
    let object = hosted_cluster_object(hc);
    match outcome::observe(work, existing, &object) {
        Observed::Status(value) => {
            let status = match parse_feedback(value) {
                Ok(status) => status,
                Err(error) => return report_invalid_feedback(work, &error, generation),
            };
            match operator_lag(existing, &object, &status) {
                Some(lag) => report_awaiting_operator(work, &status, &lag, clock, hc, generation),
                None => report_status(work, &status, generation),
            }
        }
        Observed::Decided(conditions) => report(generation, conditions),
        Observed::ApplyFailed {
            applied,
            available,
            health,
            fresh,
        } => {
            // An earlier apply may still be running: its fresh status says what serves, but the
            // generation reported is not applied, so Available stays False `ApplyFailed`.
            if let Some(status) = fresh.and_then(|v| parse_feedback(v).ok()) {
                let endpoint = status.control_plane_endpoint();
                let version = status.completed_version();
                let serving = hc_status::available(&status, &endpoint, &version);
                let mut report = report_versions(
                    generation,
                    [applied, serving, health],
                    &endpoint,
                    &version,
                    &status.desired_version(),
                );
                outcome::not_yet(
                    &mut report,
                    APPLY_FAILED,
                    available.message,
                    &hosted_cluster_object(hc),
                    None,
                );
                return report;
            }
            report(generation, [applied, available, health])
        }
    }
}

/// Who reconciles the objects this adapter ships, as messages name it.
pub const OPERATOR: &str = "the HyperShift operator";

/// Whether the HyperShift operator has not yet observed the HostedCluster the agent applied
/// ([`outcome::operator_lag`]): its `metadata.generation` fed back against the `observedGeneration` of
/// the conditions the tables read ([`hc_status::types::ALL`]), and the release image the work
/// carries against `status.version.desired.image` (when the status reports one).
pub fn operator_lag(
    existing: &ExistingWork,
    object: &ObjectRef<'_>,
    status: &HostedClusterStatus,
) -> Option<Lag> {
    let asked = crate::hypershift::find_in(&existing.workload, hostedcluster::KIND)
        .and_then(|hc| hc.pointer("/spec/release/image"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let desired = status.desired_image();
    let stamps = status.conditions.iter().map(|c| Stamp {
        type_: &c.type_,
        observed_generation: c.observed_generation,
    });
    let release = (!desired.is_empty()).then_some((asked, desired));
    outcome::operator_lag(existing, object, stamps, &hc_status::types::ALL, release)
}

/// The agent applied a HostedCluster spec the HyperShift operator has not observed yet (`lag`):
/// Available False [`AWAITING_OPERATOR`] saying what the previous spec's status says, Health from
/// it until `clock`'s bound, then False [`OPERATOR_NOT_RECONCILING`] (see
/// [`outcome::awaiting_operator`]). `data` is what the status says runs.
pub fn report_awaiting_operator(
    work: WorkRef<'_>,
    status: &HostedClusterStatus,
    lag: &Lag,
    clock: OperatorClock,
    hc: (&str, &str),
    generation: Option<i64>,
) -> Report {
    let endpoint = status.control_plane_endpoint();
    let version = status.completed_version();
    let serving = hc_status::available(status, &endpoint, &version);
    let health = hc_status::health(status);
    let conditions = outcome::awaiting_operator(
        work,
        &hosted_cluster_object(hc),
        OPERATOR,
        lag,
        clock,
        (&serving, health),
    );
    report_versions(
        generation,
        conditions,
        &endpoint,
        &version,
        &status.desired_version(),
    )
}

/// The mapping of a parsed HostedCluster status (the work exists, the HostedCluster reports).
pub fn report_status(
    work: WorkRef<'_>,
    status: &HostedClusterStatus,
    generation: Option<i64>,
) -> Report {
    let endpoint = status.control_plane_endpoint();
    let version = status.completed_version();
    let available = hc_status::available(status, &endpoint, &version);
    let health = hc_status::health(status);
    report_versions(
        generation,
        [outcome::applied(work, &unnamed()), available, health],
        &endpoint,
        &version,
        &status.desired_version(),
    )
}

/// Feedback was present but unreadable.
pub fn report_invalid_feedback(
    work: WorkRef<'_>,
    error: &FeedbackError,
    generation: Option<i64>,
) -> Report {
    report(
        generation,
        outcome::invalid_feedback(work, &unnamed(), error),
    )
}

/// The cluster spec failed validation; nothing was sent.
pub fn report_invalid_spec(violations: &[SpecViolation], generation: Option<i64>) -> Report {
    report(
        generation,
        super::invalid_spec_conditions(violations, "cluster", "InvalidClusterSpec"),
    )
}

/// The cluster (spec) could not be read: file missing, HyperFleet API unreachable or refusing.
pub fn report_cluster_unavailable(detail: &str, generation: Option<i64>) -> Report {
    let applied = format!(
        "Cannot read the cluster to build its HostedCluster: {}. Nothing was sent. The next pulse retries; if it persists, check the HyperFleet API URL and token (or the mounted cluster spec file)",
        crate::message::redact(detail)
    );
    let other = "Not checked: the cluster could not be read (see Applied)".to_owned();
    report(
        generation,
        crate::message::error_conditions("ClusterSpecUnavailable", applied, other),
    )
}

/// The adapter's own backend settings are unusable (unreadable CA/token/client certificate file,
/// bad URL, bad kubeconfig).
pub fn report_adapter_misconfigured(detail: &str, generation: Option<i64>) -> Report {
    report(
        generation,
        crate::work::failure::adapter_misconfigured(detail),
    )
}

/// A report of no HostedCluster status: its `data` keys all `""`.
pub(super) fn report(generation: Option<i64>, conditions: Conditions) -> Report {
    report_versions(generation, conditions, "", "", "")
}

/// A report with `data` `control_plane_endpoint`, `version` (completed) and `desired_version`.
fn report_versions(
    generation: Option<i64>,
    conditions: Conditions,
    endpoint: &str,
    version: &str,
    desired: &str,
) -> Report {
    let mut data = Map::new();
    data.insert(DATA_CONTROL_PLANE_ENDPOINT.into(), endpoint.into());
    data.insert(DATA_VERSION.into(), version.into());
    data.insert(DATA_DESIRED_VERSION.into(), desired.into());
    let mut report = Report::new(conditions.into());
    report.adapter = Some(ADAPTER_NAME.to_owned());
    report.observed_generation = generation;
    report.data = Some(data);
    report
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::hypershift::immutable::ImmutableChange;
    use crate::work::manifestwork::Ownership;

    /// The work was updated to `generation` (from `held`): see [`outcome::updated`] (reported at
    /// `generation`, Available False `Updating` naming what the control plane of `held` does).
    fn report_updated(
        work: WorkRef<'_>,
        observed: Report,
        held: Option<i64>,
        generation: Option<i64>,
    ) -> Report {
        outcome::updated(work, &unnamed(), observed, held, generation)
    }

    /// `generation` would change immutable fields: nothing was sent. Applied=False and Health=False
    /// [`IMMUTABLE_FIELD_CHANGED`] name every field with its old and new value; Available is False
    /// with the same reason, reported at `generation` (the control plane of `held` keeps running, the
    /// message says how).
    fn report_immutable_change(
        work: WorkRef<'_>,
        observed: Report,
        changes: &[ImmutableChange],
        generation: Option<i64>,
        held: Option<i64>,
    ) -> Report {
        let lines: Vec<String> = changes.iter().map(ToString::to_string).collect();
        let fields: Vec<&str> = changes.iter().map(|c| c.field).collect();
        outcome::immutable_change(
            work,
            &unnamed(),
            observed,
            (&lines, &fields),
            generation,
            held,
        )
    }

    /// The pulse (`pulse`) is older than the generation the work carries (`held`): nothing was
    /// sent. A True Applied becomes [`STALE_GENERATION`]; a False one keeps its reason and is
    /// prefixed with the same note. `observed_generation` stays `held`.
    fn report_stale_generation(
        work: WorkRef<'_>,
        observed: Report,
        pulse: i64,
        held: i64,
    ) -> Report {
        outcome::stale_generation(work, observed, pulse, held)
    }

    /// A work with our name exists but its labels say it belongs to someone else.
    fn report_ownership_conflict(
        work: WorkRef<'_>,
        cluster_id: &str,
        found: &Ownership,
        generation: Option<i64>,
    ) -> Report {
        report(
            generation,
            outcome::ownership_conflict(work, &owner(cluster_id), found),
        )
    }

    /// Maestro could not be reached (unavailable, timeouts, 5xx) within the retry budget.
    fn report_maestro_unavailable(consumer: &str, detail: &str, generation: Option<i64>) -> Report {
        report(
            generation,
            crate::work::failure::maestro_unavailable(consumer, detail),
        )
    }

    /// Maestro refused the adapter's credentials (401/403, TLS client auth); not retried.
    fn report_maestro_auth_failed(detail: &str, generation: Option<i64>) -> Report {
        report(
            generation,
            crate::work::failure::maestro_auth_failed(detail),
        )
    }

    /// Maestro does not know the consumer (management cluster) the adapter is configured with.
    fn report_consumer_not_found(consumer: &str, generation: Option<i64>) -> Report {
        report(
            generation,
            crate::work::failure::consumer_not_found(consumer, hostedcluster::KIND),
        )
    }

    /// The work backend rejected the request for a reason that retrying will not fix.
    fn report_work_failed(consumer: &str, detail: &str, generation: Option<i64>) -> Report {
        report(
            generation,
            crate::work::failure::work_failed(consumer, detail),
        )
    }

    use crate::hyperfleet::cluster::{ClusterSpec, fixture};
    use crate::message::redact;
    use crate::work::{ManifestStatus, WorkCondition};
    use serde_json::json;
    use std::collections::BTreeMap;

    /// The cluster's HyperFleet id (UUIDv7) and another cluster's.
    const ID: &str = "019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b";
    const OTHER_ID: &str = "019a6f1f-0d2e-7c3b-a4f5-6e7d8c9b0a1f";
    const WORK: WorkRef<'static> = WorkRef {
        consumer: "us-east-mgmt-01",
        name: "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b",
    };

    /// `(status, reason)` of each condition, in order.
    fn summary(report: &Report) -> Vec<(&str, ConditionStatus, &str)> {
        report
            .conditions
            .iter()
            .map(|c| (c.type_.as_str(), c.status, c.reason.as_str()))
            .collect()
    }

    fn data(report: &Report) -> (String, String) {
        let d = report.data.as_ref().unwrap();
        (
            d[DATA_CONTROL_PLANE_ENDPOINT].as_str().unwrap().to_owned(),
            d[DATA_VERSION].as_str().unwrap().to_owned(),
        )
    }

    fn conditions(list: &[(&str, &str, &str)]) -> Value {
        Value::Array(
            list.iter()
                .map(|(t, s, r)| json!({"type": t, "status": s, "reason": r, "message": format!("{t} says {r}"), "lastTransitionTime": "2026-01-01T00:00:00Z"}))
                .collect(),
        )
    }

    /// Every report this module builds must pass the report contract.
    #[track_caller]
    fn assert_valid(report: &Report) {
        job_report::validate(report).unwrap();
        assert_eq!(report.adapter.as_deref(), Some(ADAPTER_NAME));
        assert_eq!(report.conditions.len(), 3);
    }

    use ConditionStatus::{False, True, Unknown};

    #[test]
    fn manifest_work_for_the_fixture() {
        let work = manifest_work(
            &crate::hyperfleet::cluster::fixture::spec(),
            "us-east-mgmt-01",
            Some(3),
        );
        insta::assert_json_snapshot!("manifest_work", work);
    }

    #[test]
    fn manifest_work_shape() {
        let spec = crate::hyperfleet::cluster::fixture::spec();
        let work = manifest_work(&spec, "mgmt-1", Some(7));
        assert_eq!(
            work["metadata"]["name"],
            "hostedcluster-019a6f1e-4b7c-7d2e-9f3a-1c2d3e4f5a6b"
        );
        assert_eq!(work["metadata"]["namespace"], "mgmt-1");
        assert_eq!(
            work["metadata"]["annotations"]["hyperfleet.io/generation"],
            "7"
        );
        assert_eq!(
            work["metadata"]["labels"]["hyperfleet.io/adapter"],
            "controlplane"
        );
        assert_eq!(
            work["spec"]["workload"]["manifests"][0],
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "clusters"}})
        );
        assert_eq!(
            work["spec"]["workload"]["manifests"][1],
            crate::hypershift::hostedcluster::hosted_cluster(&spec)
        );
        let namespace = &work["spec"]["manifestConfigs"][0];
        assert_eq!(
            namespace["resourceIdentifier"],
            serde_json::json!({"group": "", "resource": "namespaces", "name": "clusters"})
        );
        assert_eq!(namespace["updateStrategy"]["type"], "CreateOnly");
        assert!(namespace.get("feedbackRules").is_none());
        let config = &work["spec"]["manifestConfigs"][1];
        assert_eq!(
            config["resourceIdentifier"],
            serde_json::json!({"group": "hypershift.openshift.io", "resource": "hostedclusters", "namespace": "clusters", "name": "prod-eu-1"})
        );
        assert_eq!(
            config["feedbackRules"][0]["jsonPaths"],
            serde_json::json!([
                {"name": "status", "path": ".status"},
                {"name": "generation", "path": ".metadata.generation"},
                {"name": "finalizers", "path": ".metadata.finalizers"},
                {"name": "deletionTimestamp", "path": ".metadata.deletionTimestamp"},
            ])
        );
        assert_eq!(config["updateStrategy"]["type"], "ServerSideApply");
        // Deleting the work deletes the HostedCluster but never the shared namespace.
        assert_eq!(
            work["spec"]["deleteOption"],
            serde_json::json!({"propagationPolicy": "SelectivelyOrphan",
                               "selectivelyOrphans": {"orphaningRules": [{"group": "", "resource": "namespaces", "name": "clusters"}]}})
        );
    }

    #[test]
    fn created_now() {
        let report = report_created(WORK, Some(3));
        assert_valid(&report);
        assert_eq!(
            summary(&report),
            [
                ("Applied", True, "ManifestWorkCreated"),
                ("Available", False, "Provisioning"),
                ("Health", True, "NoIssues"),
            ]
        );
        assert_eq!(report.observed_generation, Some(3));
        assert_eq!(data(&report), (String::new(), String::new()));
        assert!(report.conditions[0].message.contains("us-east-mgmt-01"));
    }

    #[test]
    fn found_without_feedback_awaits_it() {
        let report = report_found(WORK, None, Some(3));
        assert_valid(&report);
        assert_eq!(
            summary(&report),
            [
                ("Applied", True, "ManifestWorkExists"),
                ("Available", False, "AwaitingFeedback"),
                ("Health", True, "NoIssues"),
            ]
        );
    }

    /// Expected `(type, status, reason)` of Applied, Available, Health.
    type Row = [(&'static str, ConditionStatus, &'static str); 3];

    /// A recorded real bundle (`fixtures/maestro/real/<name>`) as the adapter sees it, and its
    /// HostedCluster's `(namespace, name)`. `None` without the team folder.
    fn real(name: &str) -> Option<(ExistingWork, (String, String))> {
        use crate::work::maestro::bundle::ResourceBundle;
        let file = crate::work::maestro::test_fixtures::fixture(&format!("real/{name}"))?;
        let bundle: ResourceBundle = serde_json::from_value(file["body"].clone()).unwrap();
        let meta = &bundle.manifests[0]["metadata"];
        let hc = (
            meta["namespace"].as_str().unwrap().to_owned(),
            meta["name"].as_str().unwrap().to_owned(),
        );
        Some((bundle.to_existing_work(None).unwrap(), hc))
    }

    /// The clock of the recordings (a few minutes after their applies), with the default bound.
    fn clock() -> OperatorClock {
        OperatorClock {
            now: "2026-11-26T03:50:00Z".parse().unwrap(),
            stuck_after: std::time::Duration::from_secs(600),
        }
    }

    fn observed(existing: &ExistingWork, hc: &(String, String)) -> Report {
        let report = report_observed(WORK, existing, (&hc.0, &hc.1), Some(2), clock());
        assert_valid(&report);
        report
    }

    /// The manifest condition `type_` of the only manifest, for editing.
    fn manifest_condition<'a>(work: &'a mut ExistingWork, type_: &str) -> &'a mut WorkCondition {
        work.manifests[0]
            .conditions
            .iter_mut()
            .find(|c| c.type_ == type_)
            .unwrap()
    }

    #[test]
    fn real_states_map_to_the_condition_table() {
        let rows: [(&str, Row); 9] = [
            (
                "01-created-no-status.json",
                [
                    ("Applied", True, "ManifestWorkExists"),
                    ("Available", False, "AwaitingFeedback"),
                    ("Health", True, "NoIssues"),
                ],
            ),
            (
                "02-applied-no-hc-status.json",
                [
                    ("Applied", True, "ManifestWorkExists"),
                    ("Available", False, "AwaitingFeedback"),
                    ("Health", True, "NoIssues"),
                ],
            ),
            (
                "03-progressing.json",
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", False, "Provisioning"),
                    ("Health", True, "NoIssues"),
                ],
            ),
            (
                "04-available.json",
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", True, "ControlPlaneReady"),
                    ("Health", True, "NoIssues"),
                ],
            ),
            (
                "05-degraded.json",
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", True, "ControlPlaneReady"),
                    ("Health", False, "Degraded"),
                ],
            ),
            (
                "06-apply-failure.json",
                [
                    ("Applied", False, APPLY_FAILED),
                    ("Available", False, APPLY_FAILED),
                    ("Health", False, APPLY_FAILED),
                ],
            ),
            (
                "07-namespace-missing.json",
                [
                    ("Applied", False, APPLY_FAILED),
                    ("Available", False, APPLY_FAILED),
                    ("Health", False, APPLY_FAILED),
                ],
            ),
            (
                "08-hc-deleted-on-cluster.json",
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", False, HOSTED_CLUSTER_MISSING),
                    ("Health", False, HOSTED_CLUSTER_MISSING),
                ],
            ),
            (
                "08b-hc-recreated-by-agent.json",
                [
                    ("Applied", True, "ManifestWorkExists"),
                    ("Available", False, "AwaitingFeedback"),
                    ("Health", True, "NoIssues"),
                ],
            ),
        ];
        for (file, expected) in rows {
            let Some((existing, hc)) = real(file) else {
                return;
            };
            assert_eq!(summary(&observed(&existing, &hc)), expected, "{file}");
        }
    }

    #[test]
    fn an_apply_failure_carries_the_agents_message() {
        let Some((existing, hc)) = real("06-apply-failure.json") else {
            return;
        };
        let report = observed(&existing, &hc);
        let applied = &report.condition("Applied").unwrap().message;
        assert!(
            applied.contains("HostedCluster clusters/rec-deny-1144924104 (AppliedManifestFailed): Failed to apply manifest: hostedclusters.hypershift.openshift.io \"rec-deny-1144924104\" is forbidden: ValidatingAdmissionPolicy"),
            "{applied}"
        );
        assert!(applied.contains("rec-deny-1144924104"), "{applied}");
        assert_eq!(data(&report), (String::new(), String::new()));

        let Some((existing, hc)) = real("07-namespace-missing.json") else {
            return;
        };
        let applied = observed(&existing, &hc)
            .condition("Applied")
            .unwrap()
            .message
            .clone();
        assert!(
            applied.contains(
                r#"Failed to apply manifest: namespaces "rec-absent-1144924104" not found"#
            ),
            "{applied}"
        );
    }

    #[test]
    fn stale_feedback_of_a_deleted_hosted_cluster_is_not_used() {
        let Some((existing, hc)) = real("08-hc-deleted-on-cluster.json") else {
            return;
        };
        // The recording keeps the Degraded status of state 5 as feedback.
        assert!(existing.manifests[0].values.contains_key("status"));
        let report = observed(&existing, &hc);
        assert_eq!(data(&report), (String::new(), String::new()));
        let available = &report.condition("Available").unwrap().message;
        assert!(
            available.contains("(ResourceNotAvailable: Resource is not available)"),
            "{available}"
        );
        assert!(!report.conditions.iter().any(|c| c.reason == "Degraded"));
    }

    #[test]
    fn feedback_older_than_the_agents_availability_report_is_not_used() {
        let Some((mut existing, hc)) = real("04-available.json") else {
            return;
        };
        // As recorded the feedback changed after the HostedCluster became available: used.
        assert_eq!(
            observed(&existing, &hc)
                .condition("Available")
                .unwrap()
                .reason,
            "ControlPlaneReady"
        );
        // The HostedCluster became available again after the feedback last changed.
        manifest_condition(&mut existing, "Available").last_transition_time =
            "2026-11-26T03:40:00Z".into();
        let report = observed(&existing, &hc);
        assert_eq!(
            summary(&report),
            [
                ("Applied", True, "ManifestWorkExists"),
                ("Available", False, "AwaitingFeedback"),
                ("Health", True, "NoIssues"),
            ]
        );
        assert!(
            report.conditions[0].message.contains("is older than"),
            "{}",
            report.conditions[0].message
        );
    }

    #[test]
    fn feedback_not_synced_is_not_used() {
        // No recording shows StatusFeedbackSynced=False; the recorded Available state with it
        // flipped (the agent's condition, its reason and message invented for the test).
        let Some((mut existing, hc)) = real("04-available.json") else {
            return;
        };
        let synced = manifest_condition(&mut existing, "StatusFeedbackSynced");
        synced.status = "False".into();
        synced.reason = "StatusFeedbackSyncFailed".into();
        let report = observed(&existing, &hc);
        assert_eq!(
            summary(&report),
            [
                ("Applied", True, "ManifestWorkApplied"),
                ("Available", Unknown, FEEDBACK_NOT_SYNCED),
                ("Health", Unknown, FEEDBACK_NOT_SYNCED),
            ]
        );
        assert_eq!(data(&report), (String::new(), String::new()));
    }

    #[test]
    fn an_update_the_agent_applied_awaits_the_operator_until_it_takes_the_release_up() {
        // Recorded with the real agent: the update to 4.19.4 applied (spec.release.image 4.19.4,
        // recording 09d: metadata.generation 2), the status still the one the operator wrote for
        // 4.19.3 (Available=True, desired 4.19.3, every observedGeneration 1). Before issue 23
        // this was Available=True ControlPlaneReady at the new generation.
        let Some((existing, hc)) = real("09c-update-bundle-after-agent.json") else {
            return;
        };
        let report = observed(&existing, &hc);
        assert_eq!(
            summary(&report),
            [
                ("Applied", True, "ManifestWorkApplied"),
                ("Available", False, AWAITING_OPERATOR),
                ("Health", True, "NoIssues"),
            ]
        );
        let message = &report.condition("Available").unwrap().message;
        for part in [
            "is not yet observed by the HyperShift operator",
            "the operator reports release quay.io/openshift-release-dev/ocp-release:4.19.3-multi as desired, the work asks for quay.io/openshift-release-dev/ocp-release:4.19.4-multi",
            "applied by the work agent at 2026-11-26T03:43:45Z, less than 10m ago",
            "it says: True ControlPlaneReady",
        ] {
            assert!(message.contains(part), "{part:?} not in {message}");
        }
        // What runs is still reported: the old release.
        assert_eq!(report.data.as_ref().unwrap()[DATA_VERSION], "4.19.3");

        // The same, with the generation the real agent feeds back (recording 09d: 2) against
        // conditions of generation 1, and past the bound: the operator is named on Health.
        let mut existing = existing;
        existing.manifests[0]
            .values
            .insert("generation".into(), json!(2));
        let late = OperatorClock {
            now: "2026-11-26T03:53:46Z".parse().unwrap(),
            ..clock()
        };
        let report = report_observed(WORK, &existing, (&hc.0, &hc.1), Some(2), late);
        assert_eq!(
            summary(&report),
            [
                ("Applied", True, "ManifestWorkApplied"),
                ("Available", False, AWAITING_OPERATOR),
                ("Health", False, OPERATOR_NOT_RECONCILING),
            ]
        );
        let message = &report.condition("Available").unwrap().message;
        assert!(
            message.contains("the object is at metadata.generation 2")
                && message.contains("its status describes generation 1"),
            "{message}"
        );
        let health = &report.condition("Health").unwrap().message;
        assert!(
            health.contains("the HyperShift operator on management cluster us-east-mgmt-01 has not observed HostedCluster")
                && health.contains("for more than 10m"),
            "{health}"
        );
    }

    #[test]
    fn once_the_operator_observes_the_applied_generation_the_table_decides_again() {
        let Some((mut existing, hc)) = real("09c-update-bundle-after-agent.json") else {
            return;
        };
        // The operator reconciled generation 2: conditions stamped 2, 4.19.4 desired and rolling
        // out (history Partial first, as recorded in 06-after-update-5s).
        let manifest = &mut existing.manifests[0];
        let mut status = manifest.values["status"].clone();
        for c in status["conditions"].as_array_mut().unwrap() {
            c["observedGeneration"] = json!(2);
        }
        status["version"]["desired"] = json!({"image": "quay.io/openshift-release-dev/ocp-release:4.19.4-multi", "version": "4.19.4"});
        status["version"]["history"]
            .as_array_mut()
            .unwrap()
            .insert(0, json!({"state": "Partial", "version": "4.19.4", "image": "quay.io/openshift-release-dev/ocp-release:4.19.4-multi", "startedTime": "2026-11-26T03:43:50Z", "completionTime": null, "verified": false}));
        manifest.values.insert("status".into(), status.clone());
        manifest.values.insert("generation".into(), json!(2));
        let rolling = observed(&existing, &hc);
        assert_eq!(
            rolling.condition("Available").unwrap().reason,
            hc_status::UPGRADING
        );
        // Rollout completed: True again.
        status["version"]["history"][0]["state"] = json!("Completed");
        existing.manifests[0].values.insert("status".into(), status);
        assert_eq!(
            observed(&existing, &hc)
                .condition("Available")
                .unwrap()
                .reason,
            "ControlPlaneReady"
        );
    }

    /// The same rows without the team folder: small works shaped like the recordings.
    fn inline_work(
        work_applied: (&str, &str),
        manifest: &[(&str, &str, &str, &str)],
        feedback: Option<Value>,
    ) -> ExistingWork {
        let c = |(t, s, r, ltt): (&str, &str, &str, &str)| WorkCondition {
            type_: t.into(),
            status: s.into(),
            reason: r.into(),
            message: format!("agent says {r}"),
            observed_generation: None,
            last_transition_time: ltt.into(),
        };
        ExistingWork {
            conditions: vec![c((
                "Applied",
                work_applied.0,
                work_applied.1,
                "2026-11-26T03:36:31Z",
            ))],
            manifests: vec![ManifestStatus {
                resource: crate::work::ResourceIdentity {
                    group: "hypershift.openshift.io".into(),
                    version: "v1beta1".into(),
                    kind: "HostedCluster".into(),
                    resource: "hostedclusters".into(),
                    namespace: "clusters".into(),
                    name: "hc-1".into(),
                },
                conditions: manifest.iter().copied().map(c).collect(),
                values: feedback
                    .map(|f| BTreeMap::from([("status".to_owned(), f)]))
                    .unwrap_or_default(),
            }],
            ..Default::default()
        }
    }

    #[test]
    fn inline_rows_without_the_team_folder() {
        const T0: &str = "2026-11-26T03:36:31Z";
        const T1: &str = "2026-11-26T03:37:26Z";
        let ready = json!({"conditions": conditions(&[("Available", "True", "AsExpected")]),
                           "controlPlaneEndpoint": {"host": "api.x.example.com", "port": 443}});
        let hc = ("clusters".to_owned(), "hc-1".to_owned());
        let ok = ("True", "AppliedManifestWorkComplete");
        let cases: Vec<(ExistingWork, Row, &str)> = vec![
            (
                inline_work(
                    ok,
                    &[
                        ("Applied", "True", "AppliedManifestComplete", T0),
                        ("Available", "True", "ResourceAvailable", T0),
                        ("StatusFeedbackSynced", "True", "StatusFeedbackSynced", T1),
                    ],
                    Some(ready.clone()),
                ),
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", True, "ControlPlaneReady"),
                    ("Health", True, "NoIssues"),
                ],
                "https://api.x.example.com:443",
            ),
            (
                inline_work(
                    ("False", "AppliedManifestWorkFailed"),
                    &[
                        ("Applied", "False", "AppliedManifestFailed", T0),
                        ("Available", "False", "ResourceNotAvailable", T0),
                    ],
                    None,
                ),
                [
                    ("Applied", False, APPLY_FAILED),
                    ("Available", False, APPLY_FAILED),
                    ("Health", False, APPLY_FAILED),
                ],
                "",
            ),
            (
                // an update that failed while the earlier HostedCluster still serves: the
                // generation reported is not applied (False), the message says what serves
                inline_work(
                    ("False", "AppliedManifestWorkFailed"),
                    &[
                        ("Applied", "False", "AppliedManifestFailed", T1),
                        ("Available", "True", "ResourceAvailable", T0),
                        ("StatusFeedbackSynced", "True", "StatusFeedbackSynced", T1),
                    ],
                    Some(ready.clone()),
                ),
                [
                    ("Applied", False, APPLY_FAILED),
                    ("Available", False, APPLY_FAILED),
                    ("Health", False, APPLY_FAILED),
                ],
                "https://api.x.example.com:443",
            ),
            (
                inline_work(
                    ok,
                    &[
                        ("Applied", "True", "AppliedManifestComplete", T0),
                        ("Available", "False", "ResourceNotAvailable", T1),
                        ("StatusFeedbackSynced", "True", "StatusFeedbackSynced", T0),
                    ],
                    Some(ready.clone()),
                ),
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", False, HOSTED_CLUSTER_MISSING),
                    ("Health", False, HOSTED_CLUSTER_MISSING),
                ],
                "",
            ),
            (
                inline_work(
                    ok,
                    &[
                        ("Applied", "True", "AppliedManifestComplete", T0),
                        ("Available", "True", "ResourceAvailable", T1),
                        ("StatusFeedbackSynced", "True", "StatusFeedbackSynced", T0),
                    ],
                    Some(ready.clone()),
                ),
                [
                    ("Applied", True, "ManifestWorkExists"),
                    ("Available", False, "AwaitingFeedback"),
                    ("Health", True, "NoIssues"),
                ],
                "",
            ),
            (
                // feedback without any manifest Available: not trusted
                inline_work(
                    ok,
                    &[("Applied", "True", "AppliedManifestComplete", T0)],
                    Some(ready.clone()),
                ),
                [
                    ("Applied", True, "ManifestWorkExists"),
                    ("Available", False, "AwaitingFeedback"),
                    ("Health", True, "NoIssues"),
                ],
                "",
            ),
            (
                inline_work(
                    ok,
                    &[
                        ("Applied", "True", "AppliedManifestComplete", T0),
                        ("Available", "True", "ResourceAvailable", T0),
                        ("StatusFeedbackSynced", "False", "X", T1),
                    ],
                    Some(ready),
                ),
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", Unknown, FEEDBACK_NOT_SYNCED),
                    ("Health", Unknown, FEEDBACK_NOT_SYNCED),
                ],
                "",
            ),
        ];
        for (i, (existing, expected, endpoint)) in cases.into_iter().enumerate() {
            let report = observed(&existing, &hc);
            assert_eq!(summary(&report), expected, "case {i}");
            assert_eq!(data(&report).0, endpoint, "case {i}");
        }
    }

    #[test]
    fn a_work_level_apply_failure_without_manifest_status_is_an_apply_failure() {
        let mut existing = inline_work(("False", "AppliedManifestWorkFailed"), &[], None);
        existing.manifests.clear();
        let report = observed(&existing, &("clusters".into(), "hc-1".into()));
        assert_eq!(report.condition("Applied").unwrap().reason, APPLY_FAILED);
        assert!(report.conditions[0].message.contains(
            "ManifestWork (AppliedManifestWorkFailed): agent says AppliedManifestWorkFailed"
        ));
    }

    #[test]
    fn mapping_table() {
        /// (HostedCluster status, expected Available, expected Health)
        type Case = (
            Value,
            (ConditionStatus, &'static str),
            (ConditionStatus, &'static str),
        );
        let cases: Vec<Case> = vec![
            (
                json!({"conditions": conditions(&[("Available", "True", "AsExpected"), ("Degraded", "False", "AsExpected")])}),
                (True, "ControlPlaneReady"),
                (True, "NoIssues"),
            ),
            (
                json!({"conditions": conditions(&[("Available", "False", "WaitingForAvailable"), ("Progressing", "True", "Progressing")])}),
                (False, "Provisioning"),
                (True, "NoIssues"),
            ),
            (
                json!({"conditions": conditions(&[("Available", "False", "ComponentsNotAvailable"), ("Progressing", "False", "AsExpected")])}),
                (False, "NotReady"),
                (True, "NoIssues"),
            ),
            (
                json!({"conditions": conditions(&[("Available", "Unknown", "StatusUnknown")])}),
                (False, "NotReady"),
                (True, "NoIssues"),
            ),
            (json!({}), (False, "NotReady"), (True, "NoIssues")),
            (
                json!({"conditions": conditions(&[("Available", "True", "AsExpected"), ("Degraded", "True", "UnavailableReplicas")])}),
                (True, "ControlPlaneReady"),
                (False, "Degraded"),
            ),
            (
                json!({"conditions": conditions(&[("Available", "False", "X"), ("Progressing", "True", "Progressing"), ("Degraded", "True", "UnavailableReplicas")])}),
                (False, "Provisioning"),
                (False, "Degraded"),
            ),
        ];
        for (status, available, health) in cases {
            let report = report_found(WORK, Some(&status), Some(1));
            assert_valid(&report);
            assert_eq!(
                summary(&report),
                [
                    ("Applied", True, "ManifestWorkApplied"),
                    ("Available", available.0, available.1),
                    ("Health", health.0, health.1),
                ],
                "{status}"
            );
        }
    }

    #[test]
    fn degraded_carries_the_hosted_cluster_message() {
        let status = json!({"conditions": [
            {"type": "Available", "status": "True", "reason": "AsExpected", "message": ""},
            {"type": "Degraded", "status": "True", "reason": "UnavailableReplicas", "message": "kube-apiserver has 1/3 replicas"},
        ]});
        let report = report_found(WORK, Some(&status), None);
        let health = report.condition("Health").unwrap();
        assert_eq!(
            health.message,
            "Control plane is degraded (UnavailableReplicas): kube-apiserver has 1/3 replicas"
        );
    }

    #[test]
    fn not_ready_names_the_blocking_conditions() {
        let status = json!({"conditions": [
            {"type": "Available", "status": "False", "reason": "WaitingForAvailable", "message": "waiting"},
            {"type": "Progressing", "status": "False", "reason": "Blocked", "message": "blocked"},
            {"type": "ValidReleaseImage", "status": "False", "reason": "InvalidImage", "message": "image not found"},
            {"type": "ValidConfiguration", "status": "True", "reason": "AsExpected", "message": ""},
        ]});
        let report = report_found(WORK, Some(&status), None);
        let available = report.condition("Available").unwrap();
        assert_eq!(available.reason, BLOCKED);
        assert!(
            available
                .message
                .contains("ValidReleaseImage=False (InvalidImage): image not found"),
            "{}",
            available.message
        );
        assert!(!available.message.contains("ValidConfiguration"));
    }

    #[test]
    fn not_ready_mentions_a_failed_reconcile() {
        let status = json!({"conditions": [
            {"type": "Available", "status": "False", "reason": "X", "message": ""},
            {"type": "ReconciliationSucceeded", "status": "False", "reason": "ReconciliationError", "message": "failed to get pull secret"},
        ]});
        let report = report_found(WORK, Some(&status), None);
        let available = report.condition("Available").unwrap();
        assert_eq!(available.reason, "NotReady");
        assert!(
            available
                .message
                .contains("last reconcile failed (ReconciliationError): failed to get pull secret"),
            "{}",
            available.message
        );
    }

    #[test]
    fn a_missing_pull_secret_is_not_a_blocker() {
        let status = json!({"conditions": [
            {"type": "Available", "status": "False", "reason": "X", "message": ""},
            {"type": "ValidReleaseImage", "status": "False", "reason": "SecretNotFound", "message": "no pull secret"},
        ]});
        let report = report_found(WORK, Some(&status), None);
        assert!(
            !report
                .condition("Available")
                .unwrap()
                .message
                .contains("Blocked by")
        );
    }

    #[test]
    fn feedback_as_a_json_string_is_parsed_again() {
        let raw =
            json!({"conditions": conditions(&[("Available", "True", "AsExpected")])}).to_string();
        let report = report_found(WORK, Some(&Value::String(raw)), None);
        assert_eq!(
            report.condition("Available").unwrap().reason,
            "ControlPlaneReady"
        );
    }

    #[test]
    fn malformed_feedback_is_invalid_feedback() {
        for bad in [
            json!("not json {"),
            json!(42),
            json!("[1, 2]"),
            json!({"conditions": "Available"}),
            json!({"conditions": [{"status": "True"}]}),
            json!({"controlPlaneEndpoint": "https://x:6443"}),
        ] {
            let report = report_found(WORK, Some(&bad), None);
            assert_valid(&report);
            assert_eq!(
                summary(&report),
                [
                    ("Applied", True, "ManifestWorkExists"),
                    ("Available", Unknown, "InvalidFeedback"),
                    ("Health", Unknown, "InvalidFeedback"),
                ],
                "{bad}"
            );
        }
    }

    #[test]
    fn endpoint_is_reported_once_host_and_port_are_set() {
        let endpoint = |v: Value| {
            let status: HostedClusterStatus =
                serde_json::from_value(json!({"controlPlaneEndpoint": v})).unwrap();
            status.control_plane_endpoint()
        };
        assert_eq!(endpoint(json!({"host": "", "port": 0})), "");
        assert_eq!(
            endpoint(json!({"host": "api.x.example.com", "port": 0})),
            ""
        );
        assert_eq!(endpoint(json!({"host": "", "port": 6443})), "");
        assert_eq!(
            endpoint(json!({"host": "api.x.example.com", "port": 6443})),
            "https://api.x.example.com:6443"
        );
        assert_eq!(
            endpoint(json!({"host": "fd00::1", "port": 443})),
            "https://[fd00::1]:443"
        );
        assert_eq!(HostedClusterStatus::default().control_plane_endpoint(), "");
    }

    #[test]
    fn version_is_the_newest_completed_history_entry() {
        let version = |history: Value| {
            let status: HostedClusterStatus =
                serde_json::from_value(json!({"version": {"history": history}})).unwrap();
            status.completed_version()
        };
        assert_eq!(version(json!([])), "");
        assert_eq!(version(json!([{"state": "Partial", "version": ""}])), "");
        assert_eq!(
            version(json!([
                {"state": "Partial", "version": "4.17.2", "completionTime": null},
                {"state": "Completed", "version": "4.17.1"},
                {"state": "Completed", "version": "4.17.0"},
            ])),
            "4.17.1"
        );
    }

    #[test]
    fn ready_report_carries_endpoint_and_version_in_data() {
        let status = json!({
            "conditions": conditions(&[("Available", "True", "AsExpected")]),
            "controlPlaneEndpoint": {"host": "api.prod.example.com", "port": 443},
            "version": {"desired": {"image": "x"}, "history": [{"state": "Completed", "version": "4.17.0", "image": "x", "verified": false, "startedTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:20:00Z"}]},
            "kubeconfig": {"name": "prod-admin-kubeconfig"},
        });
        let report = report_found(WORK, Some(&status), Some(2));
        assert_eq!(
            data(&report),
            (
                "https://api.prod.example.com:443".to_owned(),
                "4.17.0".to_owned()
            )
        );
        let available = report.condition("Available").unwrap();
        assert!(
            available
                .message
                .contains("https://api.prod.example.com:443")
        );
        assert!(available.message.contains("4.17.0"));
    }

    #[test]
    fn report_snapshots() {
        let ready = json!({
            "conditions": [
                {"type": "Available", "status": "True", "reason": "AsExpected", "message": "The hosted control plane is available"},
                {"type": "Progressing", "status": "False", "reason": "AsExpected", "message": "HostedCluster is at expected version"},
                {"type": "Degraded", "status": "False", "reason": "AsExpected", "message": "The hosted cluster is not degraded"},
            ],
            "controlPlaneEndpoint": {"host": "api.prod-eu-1.hcp.example.com", "port": 443},
            "version": {"history": [{"state": "Completed", "version": "4.17.0"}]},
        });
        insta::assert_json_snapshot!("report_ready", report_found(WORK, Some(&ready), Some(3)));
        insta::assert_json_snapshot!("report_created", report_created(WORK, Some(1)));
        let input = crate::hyperfleet::cluster::ClusterInput::from_json(fixture::NESTED).unwrap();
        let mut spec = Value::Object(input.spec);
        spec["networking"]["machineNetwork"] = json!([{"cidr": "10.132.0.0/16"}]);
        spec["platform"]["gcp"]["workloadIdentity"]["serviceAccountsEmails"]["storage"] =
            json!("hc-storage@other-project.iam.gserviceaccount.com");
        spec.as_object_mut().unwrap().remove("issuerURL");
        let violations = ClusterSpec::validate(ID, None, spec.as_object().unwrap()).unwrap_err();
        insta::assert_json_snapshot!(
            "report_invalid_spec",
            report_invalid_spec(&violations, Some(2))
        );
    }

    #[test]
    fn invalid_spec_names_every_bad_field() {
        let input = crate::hyperfleet::cluster::ClusterInput::from_json(fixture::NESTED).unwrap();
        let mut spec = Value::Object(input.spec);
        spec["platform"]["gcp"]["region"] = json!("nowhere");
        spec.as_object_mut().unwrap().remove("pullSecret");
        let violations = ClusterSpec::validate(ID, None, spec.as_object().unwrap()).unwrap_err();
        let report = report_invalid_spec(&violations, Some(4));
        assert_valid(&report);
        assert_eq!(
            summary(&report),
            [
                ("Applied", False, "InvalidClusterSpec"),
                ("Available", False, "InvalidClusterSpec"),
                ("Health", False, "InvalidClusterSpec"),
            ]
        );
        let applied = &report.conditions[0].message;
        assert!(applied.contains("spec.platform.gcp.region:"), "{applied}");
        assert!(
            applied.contains("spec.pullSecret.name: is required"),
            "{applied}"
        );
        assert!(
            report.conditions[1]
                .message
                .contains("spec.platform.gcp.region, spec.pullSecret.name")
        );
    }

    #[test]
    fn error_reports() {
        let found = Ownership::NotOurs {
            found: vec![
                ("hyperfleet.io/cluster-id".into(), Some(OTHER_ID.into())),
                ("hyperfleet.io/adapter".into(), None),
            ],
        };
        // A refusal reaches HyperFleet: Available False (an Unknown would be discarded).
        let report = report_ownership_conflict(WORK, ID, &found, Some(1));
        assert_valid(&report);
        assert_eq!(
            summary(&report),
            [
                ("Applied", False, "OwnershipConflict"),
                ("Available", False, "OwnershipConflict"),
                ("Health", False, "OwnershipConflict")
            ]
        );
        let cases = [
            (
                report_maestro_unavailable("mgmt-1", "connection refused", Some(1)),
                "MaestroUnavailable",
            ),
            (
                report_maestro_auth_failed("401 Unauthorized", Some(1)),
                "MaestroAuthFailed",
            ),
            (
                report_consumer_not_found("mgmt-9", Some(1)),
                "ConsumerNotFound",
            ),
        ];
        for (report, reason) in cases {
            assert_valid(&report);
            assert_eq!(
                summary(&report),
                [
                    ("Applied", False, reason),
                    ("Available", Unknown, reason),
                    ("Health", False, reason)
                ]
            );
            assert_eq!(data(&report), (String::new(), String::new()));
        }
        let conflict = report_ownership_conflict(WORK, ID, &found, None);
        assert!(
            conflict.conditions[0]
                .message
                .contains(&format!("hyperfleet.io/cluster-id={OTHER_ID}"))
        );
        assert!(
            conflict.conditions[0]
                .message
                .contains("hyperfleet.io/adapter=<missing>")
        );
    }

    #[test]
    fn secrets_in_server_messages_are_redacted() {
        let report = report_maestro_auth_failed(
            "401: invalid header Authorization: Bearer eyJhbGciOi.secret token=abc123 password=hunter2",
            None,
        );
        let message = &report.conditions[0].message;
        assert!(!message.contains("eyJhbGciOi"), "{message}");
        assert!(!message.contains("abc123"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
        assert!(message.contains("Bearer [REDACTED]"), "{message}");
        let json =
            redact(r#"{"access_token":"s3cr3t","user":"bob"} Authorization: Basic dXNlcjpwYXNz"#);
        assert!(
            !json.contains("s3cr3t") && !json.contains("dXNlcjpwYXNz"),
            "{json}"
        );
        assert!(json.contains("bob"), "{json}");
    }

    proptest::proptest! {
        #[test]
        fn bearer_tokens_never_survive(token in "[A-Za-z0-9._~+/=-]{8,64}", prefix in "[ -~]{0,40}") {
            let out = redact(&format!("{prefix} Authorization: Bearer {token} rest"));
            proptest::prop_assert!(!out.contains(&token), "{}", out);
        }
    }

    #[test]
    fn huge_foreign_messages_are_bounded() {
        let status = json!({"conditions": [
            {"type": "Available", "status": "False", "reason": "X", "message": "é".repeat(40_000)},
            {"type": "Degraded", "status": "True", "reason": "Y", "message": "x".repeat(40_000)},
        ]});
        let report = report_found(WORK, Some(&status), None);
        assert_valid(&report);
        assert!(report.conditions.iter().all(|c| c.message.len() <= 4096));
    }

    /// A serving control plane at `completed` rolling out `desired`, plus `extra` conditions.
    fn upgrading(completed: &str, desired: &str, extra: &[(&str, &str, &str)]) -> Value {
        let mut list = vec![
            ("Available", "True", "AsExpected"),
            ("Progressing", "True", "Progressing"),
            ("Degraded", "False", "AsExpected"),
        ];
        list.extend_from_slice(extra);
        let mut history = vec![];
        if desired != completed {
            history.push(json!({"state": "Partial", "version": desired}));
        }
        history.push(json!({"state": "Completed", "version": completed}));
        json!({
            "conditions": conditions(&list),
            "controlPlaneEndpoint": {"host": "api.example.com", "port": 443},
            "version": {"desired": {"version": desired, "image": format!("quay.io/r:{desired}-x86_64")}, "history": history}
        })
    }

    fn desired(report: &Report) -> String {
        report.data.as_ref().unwrap()[DATA_DESIRED_VERSION]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn an_upgrade_in_progress_is_not_available_at_the_new_generation_and_says_what_serves() {
        // Generation 4 asks for 4.17.1; the control plane still serves 4.17.0: HyperFleet must
        // not count generation 4 as reconciled yet. Health stays True: nothing is wrong.
        let report = report_found(WORK, Some(&upgrading("4.17.0", "4.17.1", &[])), Some(4));
        assert_valid(&report);
        assert_eq!(
            summary(&report),
            [
                ("Applied", True, "ManifestWorkApplied"),
                ("Available", False, UPGRADING),
                ("Health", True, "NoIssues"),
            ]
        );
        let available = &report.condition("Available").unwrap().message;
        assert!(
            available.contains("Upgrading from 4.17.0 to 4.17.1")
                && available.contains("still serves release 4.17.0"),
            "{available}"
        );
        assert_eq!(data(&report).1, "4.17.0");
        assert_eq!(desired(&report), "4.17.1");
    }

    #[test]
    fn a_completed_upgrade_reports_the_new_version_and_no_upgrade() {
        let report = report_found(WORK, Some(&upgrading("4.17.1", "4.17.1", &[])), Some(4));
        let available = &report.condition("Available").unwrap().message;
        assert!(!available.contains("upgrading"), "{available}");
        assert_eq!(data(&report).1, "4.17.1");
        assert_eq!(desired(&report), "4.17.1");
    }

    #[test]
    fn the_first_rollout_is_not_an_upgrade() {
        let status = json!({
            "conditions": conditions(&[("Available", "False", "WaitingForAvailable"), ("Progressing", "True", "Progressing")]),
            "version": {"desired": {"version": "4.17.0"}, "history": [{"state": "Partial", "version": "4.17.0"}]}
        });
        let parsed = parse_feedback(&status).unwrap();
        assert_eq!(parsed.upgrade(), None);
        let report = report_found(WORK, Some(&status), Some(1));
        assert_eq!(report.condition("Health").unwrap().reason, "NoIssues");
        assert_eq!(desired(&report), "4.17.0");
    }

    #[test]
    fn a_failing_upgrade_is_unhealthy_with_the_hosted_clusters_message() {
        for failing in [
            ("ClusterVersionSucceeding", "False", "FromClusterVersion"),
            ("ClusterVersionFailing", "True", "FromClusterVersion"),
        ] {
            let report = report_found(
                WORK,
                Some(&upgrading("4.17.0", "4.17.1", &[failing])),
                Some(4),
            );
            let health = report.condition("Health").unwrap();
            assert_eq!(
                (health.status, health.reason.as_str()),
                (False, UPGRADE_FAILED)
            );
            assert!(
                health.message.contains("from 4.17.0 to 4.17.1"),
                "{}",
                health.message
            );
            // the HostedCluster's own message (`conditions()` writes "<type> says <reason>")
            assert!(
                health
                    .message
                    .contains(&format!("{} says FromClusterVersion", failing.0)),
                "{}",
                health.message
            );
            // still serving the old release, not yet the new one
            assert_eq!(report.condition("Available").unwrap().reason, UPGRADING);
        }
        // The same condition outside an upgrade.
        let report = report_found(
            WORK,
            Some(&upgrading(
                "4.17.0",
                "4.17.0",
                &[("ClusterVersionSucceeding", "False", "X")],
            )),
            Some(4),
        );
        assert_eq!(
            report.condition("Health").unwrap().reason,
            CLUSTER_VERSION_FAILING
        );
        // Succeeding=True / Failing=False are healthy.
        let report = report_found(
            WORK,
            Some(&upgrading(
                "4.17.0",
                "4.17.1",
                &[
                    ("ClusterVersionSucceeding", "True", "FromClusterVersion"),
                    ("ClusterVersionFailing", "False", "FromClusterVersion"),
                ],
            )),
            Some(4),
        );
        assert_eq!(report.condition("Health").unwrap().reason, "NoIssues");
    }

    #[test]
    fn a_blocked_upgrade_is_unhealthy() {
        let mut status = upgrading("4.17.0", "4.17.1", &[]);
        status["conditions"][1] = json!({"type": "Progressing", "status": "False", "reason": "Blocked", "message": "release image not valid"});
        let report = report_found(WORK, Some(&status), Some(4));
        let health = report.condition("Health").unwrap();
        assert_eq!(health.reason, UPGRADE_BLOCKED);
        assert!(
            health.message.contains("release image not valid"),
            "{}",
            health.message
        );
        // ValidReleaseImage=False for the new image, but a missing pull secret is not a block.
        for (reason, expected) in [
            ("InvalidImage", UPGRADE_BLOCKED),
            ("SecretNotFound", "NoIssues"),
        ] {
            let status = upgrading(
                "4.17.0",
                "4.17.1",
                &[("ValidReleaseImage", "False", reason)],
            );
            let report = report_found(WORK, Some(&status), Some(4));
            assert_eq!(
                report.condition("Health").unwrap().reason,
                expected,
                "{reason}"
            );
        }
        // Blocked without an upgrade is not an upgrade problem, but it still needs a person.
        let mut status = upgrading("4.17.0", "4.17.0", &[]);
        status["conditions"][1] =
            json!({"type": "Progressing", "status": "False", "reason": "Blocked", "message": "x"});
        let report = report_found(WORK, Some(&status), Some(4));
        assert_eq!(report.condition("Health").unwrap().reason, BLOCKED);
    }

    #[test]
    fn degraded_outranks_a_failing_upgrade() {
        let report = report_found(
            WORK,
            Some(&upgrading(
                "4.17.0",
                "4.17.1",
                &[("ClusterVersionFailing", "True", "X")],
            )),
            Some(4),
        );
        assert_eq!(report.condition("Health").unwrap().reason, UPGRADE_FAILED);
        let mut status = upgrading(
            "4.17.0",
            "4.17.1",
            &[("ClusterVersionFailing", "True", "X")],
        );
        status["conditions"][2] = json!({"type": "Degraded", "status": "True", "reason": "EtcdQuorumLost", "message": "etcd"});
        let report = report_found(WORK, Some(&status), Some(4));
        assert_eq!(report.condition("Health").unwrap().reason, "Degraded");
    }

    #[test]
    fn an_upgrade_by_image_before_the_version_is_known() {
        let status = json!({
            "conditions": conditions(&[("Available", "True", "AsExpected")]),
            "version": {"desired": {"version": "", "image": "quay.io/r:4.17.1-x86_64"},
                        "history": [{"state": "Completed", "version": "4.17.0", "image": "quay.io/r:4.17.0-x86_64"}]}
        });
        let upgrade = parse_feedback(&status).unwrap().upgrade().unwrap();
        assert_eq!(upgrade.from, "4.17.0");
        assert_eq!(upgrade.to, "quay.io/r:4.17.1-x86_64");
        // Without images to compare, no upgrade is claimed.
        let status = json!({
            "version": {"desired": {"version": ""}, "history": [{"state": "Completed", "version": "4.17.0"}]}
        });
        assert_eq!(parse_feedback(&status).unwrap().upgrade(), None);
    }

    /// What a row may say about Available at the generation it carries (docs/report.md
    /// "Which generation a report describes").
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Means {
        /// The work carries G, the agent applied it, the HostedCluster is available at it.
        Reflected,
        /// The adapter knows G is not (yet) reflected or not available, or refused it.
        NotReflected,
        /// The adapter could not observe the management cluster or read its input.
        CouldNotObserve,
    }

    /// Every row builder of the condition tables (module docs and [`deletion`]), with the
    /// generation it must carry and what its Available may say. The rule, per row:
    /// `observed_generation` = G (newest of pulse and work); Available True only for
    /// [`Means::Reflected`], Unknown only for [`Means::CouldNotObserve`], else False. Against the
    /// API (hyperfleet-framework.md §7.4): a False at a newer G is stored and keeps
    /// LastKnownReconciled (generations/b); an Unknown is discarded once the adapter reported
    /// (rule 13), so a refusal must never be Unknown.
    #[test]
    fn every_row_obeys_the_generation_rule() {
        use Means::{CouldNotObserve, NotReflected, Reflected};
        let ready = json!({
            "conditions": conditions(&[("Available", "True", "AsExpected"), ("Degraded", "False", "AsExpected")]),
            "controlPlaneEndpoint": {"host": "api.prod-eu-1.example.com", "port": 443},
            "version": {"desired": {"version": "4.19.3"}, "history": [{"state": "Completed", "version": "4.19.3"}]}
        });
        let upgrading = json!({
            "conditions": conditions(&[("Available", "True", "AsExpected"), ("Progressing", "True", "Progressing")]),
            "version": {"desired": {"version": "4.19.4"}, "history": [
                {"state": "Partial", "version": "4.19.4"}, {"state": "Completed", "version": "4.19.3"}]}
        });
        let partial_only = json!({
            "conditions": conditions(&[("Available", "True", "AsExpected")]),
            "version": {"desired": {"version": "4.19.3"}, "history": [
                {"state": "Partial", "version": ""}, {"state": "Completed", "version": "4.19.3"}]}
        });
        // The work of generation 2 read by this pulse; the pulse is for generation 3.
        let serving = || report_found(WORK, Some(&ready), Some(2));
        let change = ImmutableChange {
            kind: "HostedCluster",
            field: "gcp_region",
            path: "spec.platform.gcp.region".into(),
            old: json!("europe-west2"),
            new: json!("us-east1"),
        };
        let violation = SpecViolation {
            field: "gcp_region",
            problem: "must be a GCP region such as europe-west2".into(),
        };
        let found = Ownership::NotOurs {
            found: vec![("hyperfleet.io/cluster-id".into(), Some(OTHER_ID.into()))],
        };
        let bad = FeedbackError::NotAnObject {
            found: "a number",
            kind: "HostedCluster",
        };
        let deleting = |stage: deletion::Stage, observed: Option<&Report>| {
            deletion::report_deletion(
                WORK,
                ("clusters", "prod-eu-1"),
                &stage,
                observed,
                "2026-11-26T10:00:00Z",
                false,
                Some(4),
            )
        };
        let pools = crate::hyperfleet::nodepools::NodePools::from_list(&json!({
            "items": [{"id": "019a6f20-0000-7000-8000-000000000001", "name": "workers-a"}],
            "page": 1, "size": 1, "total": 1
        }))
        .unwrap();
        let running = serving();
        let rows: Vec<(&str, Report, i64, Means)> = vec![
            (
                "created now",
                report_created(WORK, Some(3)),
                3,
                NotReflected,
            ),
            (
                "found, no feedback",
                report_found(WORK, None, Some(3)),
                3,
                NotReflected,
            ),
            (
                "found, available",
                report_found(WORK, Some(&ready), Some(3)),
                3,
                Reflected,
            ),
            (
                "found, upgrading",
                report_found(WORK, Some(&upgrading), Some(3)),
                3,
                NotReflected,
            ),
            (
                "found, newest history Partial",
                report_found(WORK, Some(&partial_only), Some(3)),
                3,
                NotReflected,
            ),
            (
                "updated now",
                report_updated(WORK, serving(), Some(2), Some(3)),
                3,
                NotReflected,
            ),
            (
                "immutable change",
                report_immutable_change(WORK, serving(), &[change], Some(3), Some(2)),
                3,
                NotReflected,
            ),
            (
                "stale pulse, the work's generation served",
                report_stale_generation(WORK, report_found(WORK, Some(&ready), Some(5)), 4, 5),
                5,
                Reflected,
            ),
            (
                "stale pulse, the work's generation upgrading",
                report_stale_generation(WORK, report_found(WORK, Some(&upgrading), Some(5)), 4, 5),
                5,
                NotReflected,
            ),
            (
                "invalid spec",
                report_invalid_spec(&[violation], Some(3)),
                3,
                NotReflected,
            ),
            (
                "ownership conflict",
                report_ownership_conflict(WORK, ID, &found, Some(3)),
                3,
                NotReflected,
            ),
            (
                "invalid feedback",
                report_invalid_feedback(WORK, &bad, Some(3)),
                3,
                CouldNotObserve,
            ),
            (
                "Maestro unavailable",
                report_maestro_unavailable("us-east-mgmt-01", "connection refused", Some(3)),
                3,
                CouldNotObserve,
            ),
            (
                "Maestro auth",
                report_maestro_auth_failed("401 Unauthorized", Some(3)),
                3,
                CouldNotObserve,
            ),
            (
                "consumer unknown",
                report_consumer_not_found("us-east-mgmt-01", Some(3)),
                3,
                CouldNotObserve,
            ),
            (
                "cluster unreadable",
                report_cluster_unavailable("HTTP 503", Some(3)),
                3,
                CouldNotObserve,
            ),
            (
                "work failed",
                report_work_failed("us-east-mgmt-01", "HTTP 400", Some(3)),
                3,
                CouldNotObserve,
            ),
            (
                "misconfigured",
                report_adapter_misconfigured("CA file unreadable", Some(3)),
                3,
                CouldNotObserve,
            ),
            (
                "deleting, NodePools exist",
                deleting(deletion::Stage::NodePoolsExist(pools), Some(&running)),
                4,
                NotReflected,
            ),
            (
                "deleting, NodePools unknown",
                deleting(
                    deletion::Stage::NodePoolsUnknown("HTTP 503".into()),
                    Some(&running),
                ),
                4,
                NotReflected,
            ),
            (
                "deleting, requested",
                deleting(
                    deletion::Stage::Requested {
                        now: true,
                        hc: Default::default(),
                    },
                    None,
                ),
                4,
                NotReflected,
            ),
            (
                "deleting, gone",
                deleting(deletion::Stage::Gone, None),
                4,
                NotReflected,
            ),
        ];
        for (row, report, generation, means) in rows {
            assert_eq!(report.observed_generation, Some(generation), "{row}");
            let available = report.condition("Available").unwrap();
            let want = match means {
                Reflected => True,
                NotReflected => False,
                CouldNotObserve => Unknown,
            };
            assert_eq!(available.status, want, "{row}: {}", available.message);
            job_report::validate(&report).unwrap();
        }
    }
}
