//! The scenarios: which pulses run, what the simulated HostedCluster reports before each, which
//! adapter runs, and the conditions each pulse must end with on its Job.

use serde_json::{Value, json};

use super::children;

/// `--scenario`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scenario {
    /// Four pulses: work created, provisioning, control plane ready, degraded.
    Lifecycle,
    /// Three pulses: work created, an admission policy denies the HostedCluster, policy lifted.
    ApplyFailure,
    /// Four pulses: work created, ready, the HostedCluster deleted on the management cluster (the
    /// agent keeps its last status feedback), re-created by the agent.
    ResourceGone,
    /// Five pulses: work created, ready at 4.17.0, a new `release.version` (generation 4)
    /// updates the work, the HostedCluster rolls out 4.17.1 while serving, then completes it.
    Upgrade,
    /// Six pulses: work created, ready, the cluster deleted in HyperFleet (generation 4) while a
    /// NodePool is listed, then without NodePools the work is deleted, a HostedCluster finalizer
    /// holds it, and once released the adapter reports `Finalized=True`.
    Delete,
    /// The adapter exits 1 without a report.
    AdapterCrash,
    /// The adapter never finishes; the reporter gives up after 3 s.
    Hang,
    /// The adapter writes a report the contract refuses.
    InvalidReport,
    /// Maestro is unreachable; the adapter retries for 3 s, then reports it.
    MaestroDown,
    /// Fourteen pulses of two Jobs, the control plane's and a NodePool's: the NodePool waits
    /// for the control plane, is created once the HostedCluster is available, provisions, is
    /// ready, scales up (generation 2), is deleted with its cluster (the control plane waits,
    /// `NodePoolsExist`) to `Finalized=True`; then the control plane's deletion goes ahead.
    #[value(name = "nodepool")]
    NodePool,
    /// Four pulses in the HyperFleet inventory mode over two management clusters in the
    /// cluster's region: placed on the least loaded one (which it fills), that one goes down
    /// before applying it (failed over to the other, which it fills), applied and ready there,
    /// then that one goes down too (the control plane stays: `ManagementClusterUnavailable`).
    Placement,
    /// `hypershift-adapter diagnose cluster` after each of nine steps: the chain broken at each
    /// link in turn (a precondition adapter not reporting, no Job, the agent stopped, the adapter
    /// OOM-killed, Maestro stopped, an admission denial, an operator condition, a finalizer
    /// holding the deletion) and once healthy; each verdict must name that link.
    Diagnose,
}

impl Scenario {
    /// Every scenario, in the order `--all` runs them.
    pub const ALL: [Scenario; 12] = [
        Scenario::Lifecycle,
        Scenario::ApplyFailure,
        Scenario::ResourceGone,
        Scenario::Upgrade,
        Scenario::Delete,
        Scenario::AdapterCrash,
        Scenario::Hang,
        Scenario::InvalidReport,
        Scenario::MaestroDown,
        Scenario::NodePool,
        Scenario::Placement,
        Scenario::Diagnose,
    ];

    /// The `--scenario` value.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Lifecycle => "lifecycle",
            Scenario::ApplyFailure => "apply-failure",
            Scenario::ResourceGone => "resource-gone",
            Scenario::Upgrade => "upgrade",
            Scenario::Delete => "delete",
            Scenario::AdapterCrash => "adapter-crash",
            Scenario::Hang => "hang",
            Scenario::InvalidReport => "invalid-report",
            Scenario::MaestroDown => "maestro-down",
            Scenario::NodePool => "nodepool",
            Scenario::Placement => "placement",
            Scenario::Diagnose => "diagnose",
        }
    }

    /// One sentence for the header.
    pub fn story(self) -> &'static str {
        match self {
            Scenario::Lifecycle => {
                "a new cluster's control plane from first pulse to Degraded, four pulses"
            }
            Scenario::ApplyFailure => {
                "an admission policy on the management cluster denies the HostedCluster, then is lifted"
            }
            Scenario::ResourceGone => {
                "the HostedCluster is deleted on the management cluster; the agent keeps its old status"
            }
            Scenario::Upgrade => {
                "a new release.version updates the work; the upgrade is followed to completion"
            }
            Scenario::Delete => {
                "the cluster is deleted in HyperFleet: NodePools first, then the work, to Finalized=True"
            }
            Scenario::AdapterCrash => {
                "the adapter container crashes (exit 1) before writing its report"
            }
            Scenario::Hang => {
                "the adapter container hangs; the status-reporter stops waiting after 3 s"
            }
            Scenario::InvalidReport => {
                "the adapter writes a report with condition status \"Maybe\" and exits 0"
            }
            Scenario::MaestroDown => {
                "Maestro is unreachable; the adapter retries for 3 s (RETRY_BUDGET_SECONDS=3)"
            }
            Scenario::NodePool => {
                "a NodePool waits for its control plane, becomes ready, scales up, is deleted to Finalized=True"
            }
            Scenario::Placement => {
                "two management clusters in the region: placed, failed over before apply, ready, then an outage"
            }
            Scenario::Diagnose => {
                "hypershift-adapter diagnose with the chain broken at each link in turn, and healthy"
            }
        }
    }

    /// The pulses of the scenario.
    pub fn pulses(self) -> Vec<Pulse> {
        match self {
            Scenario::Lifecycle => lifecycle(),
            Scenario::ApplyFailure => apply_failure(),
            Scenario::ResourceGone => resource_gone(),
            Scenario::Upgrade => upgrade(),
            Scenario::Delete => delete(),
            Scenario::NodePool => nodepool(),
            Scenario::Placement => placement(),
            Scenario::Diagnose => super::diagnose::pulses(),
            Scenario::AdapterCrash => vec![Pulse {
                title: "the adapter crashes",
                generation: super::GENERATION,
                hyperfleet: vec![],
                management: vec![],
                adapter: Adapter::Crash,
                expect: reporter_failure("AdapterExitedWithError"),
                expect_data: vec![],
                // The stand-in writes no termination message; FallbackToLogsOnError gives the
                // kubelet its last log lines, which the reporter quotes.
                expect_messages: vec![(
                    "Applied",
                    "before writing a report: error: simulated crash (local-pulse --scenario adapter-crash)".to_owned(),
                )],
            }],
            Scenario::Hang => vec![Pulse {
                title: "the adapter hangs",
                generation: super::GENERATION,
                hyperfleet: vec![],
                management: vec![],
                adapter: Adapter::Hang,
                expect: reporter_failure("AdapterTimeout"),
                expect_data: vec![],
                expect_messages: vec![],
            }],
            Scenario::InvalidReport => vec![Pulse {
                title: "the adapter writes an invalid report",
                generation: super::GENERATION,
                hyperfleet: vec![],
                management: vec![],
                adapter: Adapter::InvalidReport,
                expect: reporter_failure("InvalidResultFormat"),
                expect_data: vec![],
                expect_messages: vec![],
            }],
            Scenario::MaestroDown => vec![Pulse {
                title: "Maestro is down",
                generation: super::GENERATION,
                hyperfleet: vec![],
                management: vec![],
                adapter: Adapter::MaestroDown,
                expect: Expected {
                    applied: Some(("False", "MaestroUnavailable")),
                    available: ("Unknown", "MaestroUnavailable"),
                    health: ("False", "MaestroUnavailable"),
                    finalized: None,
                },
                expect_data: vec![],
                expect_messages: vec![],
            }],
        }
    }
}

/// Which program runs in the adapter container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adapter {
    /// The real `hypershift-adapter controlplane` against the fakes.
    Real,
    /// The real adapter, Maestro URLs pointing at a closed port, `RETRY_BUDGET_SECONDS=3`.
    MaestroDown,
    /// The real `hypershift-adapter controlplane` placing among management clusters: the
    /// HyperFleet inventory (`MANAGEMENT_CLUSTERS_FROM_API=true`) instead of one consumer.
    Placed,
    /// The real `hypershift-adapter nodepool`: the pulse Job of the NodePool
    /// ([`crate::ids::NODEPOOL_ID`]), named and labelled after it, its generation the NodePool's.
    NodePool,
    Crash,
    Hang,
    InvalidReport,
    /// A stand-in that allocates past its memory limit without a report: the kernel kills it in
    /// its memory cgroup (without one it exits 137, the kubelet's stand-in); `OOMKilled`.
    OomKilled,
}

impl Adapter {
    /// The hidden first argument that makes the re-executed binary this adapter (the Pod's
    /// `args`, e.g. `controlplane`, follow it).
    pub fn role(self) -> &'static str {
        match self {
            Adapter::Real | Adapter::MaestroDown | Adapter::Placed | Adapter::NodePool => {
                children::ADAPTER
            }
            Adapter::Crash => children::ADAPTER_CRASH,
            Adapter::Hang => children::ADAPTER_HANG,
            Adapter::InvalidReport => children::ADAPTER_INVALID_REPORT,
            Adapter::OomKilled => children::ADAPTER_OOM_KILLED,
        }
    }

    /// What the header says runs in the adapter container.
    pub fn describe(self) -> &'static str {
        match self {
            Adapter::Real => "hypershift-adapter controlplane",
            Adapter::MaestroDown => "hypershift-adapter controlplane (Maestro URLs: a closed port)",
            Adapter::Placed => {
                "hypershift-adapter controlplane (MANAGEMENT_CLUSTERS_FROM_API=true: placement among the ManagementClusters)"
            }
            Adapter::NodePool => "hypershift-adapter nodepool",
            Adapter::Crash => "a stand-in that logs an error and exits 1",
            Adapter::Hang => "a stand-in that sleeps until killed",
            Adapter::InvalidReport => "a stand-in that writes an invalid report and exits 0",
            Adapter::OomKilled => {
                "a stand-in that allocates past its memory limit without a report; the kubelet reports it OOMKilled"
            }
        }
    }
}

/// `(status, reason)` of each condition the Job must carry after the pulse; `applied: None`
/// means the Job has no `Applied` condition, `finalized: None` no `Finalized` (the adapter adds it
/// only while the cluster is being deleted). The reporter's own failures land on every
/// `CONDITION_TYPE` entry, which the Job sets to `Available,Applied,Health`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    pub applied: Option<(&'static str, &'static str)>,
    pub available: (&'static str, &'static str),
    pub health: (&'static str, &'static str),
    pub finalized: Option<(&'static str, &'static str)>,
}

/// What changes in HyperFleet before a pulse, as the API's PATCH and DELETE do it.
#[derive(Debug, Clone, PartialEq)]
pub enum HyperFleet {
    /// A PATCH sets the cluster's `spec.release.version` (generation + 1).
    OpenshiftVersion(&'static str),
    /// A DELETE: `deleted_time` = now, `deleted_by` set, generation + 1 (and on its NodePools).
    Delete,
    /// `GET …/clusters/{id}/nodepools` lists NodePools with these names from now on.
    NodePools(Vec<&'static str>),
    /// A POST creates the NodePool [`crate::ids::NODEPOOL_ID`] (generation 1): GCP, 3 replicas.
    CreateNodePool,
    /// A PATCH sets that NodePool's `spec.replicas` (its generation + 1).
    ScaleNodePool(i64),
    /// HyperFleet hard-deletes that NodePool (its adapters reported `Finalized=True`): it is no
    /// longer served nor listed.
    RemoveNodePool,
}

/// What happens on the management cluster before a pulse; the simulated work agent reports it
/// to Maestro at once.
#[derive(Debug, Clone, PartialEq)]
pub enum Management {
    /// The HostedCluster's `.status` (Maestro status feedback) becomes this.
    Feedback(Value),
    /// The API server refuses the HostedCluster with this message (`Some`), or accepts it again
    /// (`None`).
    DenyApply(Option<String>),
    /// The HostedCluster is deleted behind the agent (`true`: the agent keeps the last status
    /// feedback) or re-created by the agent's resync (`false`: no feedback yet).
    HostedClusterGone(bool),
    /// The HostedCluster carries these finalizers: a deletion of the work hangs until released.
    HoldDelete(Vec<&'static str>),
    /// The work agent reports on the work now (for a work being deleted: `Deleting=True`).
    AgentReports,
    /// The HostedCluster's finalizers are removed: the agent finishes the deletion, the work is
    /// gone.
    ReleaseDelete,
    /// The NodePool's `.status` (status feedback of its ManifestWork) becomes this.
    NodePoolFeedback(Value),
    /// HyperShift has deleted the NodePool's machines and removed its finalizer: the agent
    /// finishes the deletion of the NodePool's work, which is gone.
    NodePoolReleaseDelete,
    /// An outage of this management cluster (its name is its Maestro consumer): its work agent
    /// stops (applies, reports and acknowledges nothing) and the `mgmt-health` adapter reports
    /// its `ManagementCluster` unavailable (`LastKnownReconciled` False).
    Outage(&'static str),
}

/// One pulse of a scenario.
#[derive(Debug, Clone)]
pub struct Pulse {
    pub title: &'static str,
    /// The cluster's generation this pulse acts on (after [`Pulse::hyperfleet`]): the Job's
    /// name and `GENERATION`.
    pub generation: i32,
    /// What changes in HyperFleet before this pulse, in order (empty: nothing).
    pub hyperfleet: Vec<HyperFleet>,
    /// What changes on the management cluster before this pulse, in order (empty: nothing).
    pub management: Vec<Management>,
    pub adapter: Adapter,
    pub expect: Expected,
    /// `(key, value)` the `hyperfleet.io/report-data` annotation must hold.
    pub expect_data: Vec<(&'static str, String)>,
    /// `(condition type, text)`: the condition's message must contain the text.
    pub expect_messages: Vec<(&'static str, String)>,
}

pub(super) fn reporter_failure(reason: &'static str) -> Expected {
    Expected {
        applied: Some(("False", reason)),
        available: ("False", reason),
        health: ("False", reason),
        finalized: None,
    }
}

/// The simulated HostedCluster's API endpoint host.
pub const ENDPOINT_HOST: &str = "api.prod-eu-1.hcp.example.com";
/// The simulated HostedCluster's completed version.
pub const VERSION: &str = "4.17.0";

pub(super) const NO_ISSUES: (&str, &str) = ("True", "NoIssues");

/// The HostedCluster's endpoint as the report's `data` carries it.
fn endpoint() -> String {
    format!("https://{ENDPOINT_HOST}:443")
}

/// A pulse of the real adapter with nothing asserted on data or messages.
pub(super) fn real(title: &'static str, management: Vec<Management>, expect: Expected) -> Pulse {
    Pulse {
        title,
        generation: super::GENERATION,
        hyperfleet: vec![],
        management,
        adapter: Adapter::Real,
        expect,
        expect_data: vec![],
        expect_messages: vec![],
    }
}

/// Pulse 1 of a new cluster: the adapter creates the ManifestWork.
pub(super) fn work_created() -> Pulse {
    real(
        "new cluster: the adapter creates the ManifestWork",
        vec![],
        Expected {
            applied: Some(("True", "ManifestWorkCreated")),
            available: ("False", "Provisioning"),
            health: NO_ISSUES,
            finalized: None,
        },
    )
}

/// The HostedCluster reports Available=True: the endpoint and version reach the Job.
pub(super) fn control_plane_ready() -> Pulse {
    Pulse {
        expect_data: vec![
            ("control_plane_endpoint", endpoint()),
            ("version", VERSION.to_owned()),
        ],
        ..real(
            "HostedCluster reports Available=True",
            vec![Management::Feedback(hosted_cluster_status(Stage::Ready))],
            Expected {
                applied: Some(("True", "ManifestWorkApplied")),
                available: ("True", "ControlPlaneReady"),
                health: NO_ISSUES,
                finalized: None,
            },
        )
    }
}

fn lifecycle() -> Vec<Pulse> {
    vec![
        work_created(),
        real(
            "HostedCluster reports Progressing=True",
            vec![Management::Feedback(hosted_cluster_status(
                Stage::Progressing,
            ))],
            Expected {
                applied: Some(("True", "ManifestWorkApplied")),
                available: ("False", "Provisioning"),
                health: NO_ISSUES,
                finalized: None,
            },
        ),
        control_plane_ready(),
        Pulse {
            expect_data: vec![("version", VERSION.to_owned())],
            ..real(
                "HostedCluster reports Degraded=True (etcd lost quorum)",
                vec![Management::Feedback(hosted_cluster_status(Stage::Degraded))],
                Expected {
                    applied: Some(("True", "ManifestWorkApplied")),
                    available: ("True", "ControlPlaneReady"),
                    health: ("False", "Degraded"),
                    finalized: None,
                },
            )
        },
    ]
}

/// What the management cluster's API server answers when an admission policy refuses the
/// HostedCluster (the shape of recording `06-apply-failure.json`, with this cluster's name).
pub fn admission_denial() -> String {
    format!(
        "hostedclusters.hypershift.openshift.io \"{name}\" is forbidden: ValidatingAdmissionPolicy 'deny-hc' with binding 'deny-hc' denied request: HostedCluster {name} refused by an admission policy of this management cluster",
        name = super::CLUSTER_NAME
    )
}

fn apply_failure() -> Vec<Pulse> {
    let denied = ("False", "ApplyFailed");
    let denial = admission_denial();
    vec![
        work_created(),
        Pulse {
            // The agent's words reach the Job, and no endpoint is claimed.
            expect_data: vec![("control_plane_endpoint", String::new())],
            expect_messages: vec![("Applied", format!("Failed to apply manifest: {denial}"))],
            ..real(
                "an admission policy denies the HostedCluster",
                vec![Management::DenyApply(Some(denial))],
                Expected {
                    applied: Some(denied),
                    available: denied,
                    health: denied,
                    finalized: None,
                },
            )
        },
        real(
            "the policy is lifted; the HostedCluster applies and reports Progressing=True",
            vec![
                Management::DenyApply(None),
                Management::Feedback(hosted_cluster_status(Stage::Progressing)),
            ],
            Expected {
                applied: Some(("True", "ManifestWorkApplied")),
                available: ("False", "Provisioning"),
                health: NO_ISSUES,
                finalized: None,
            },
        ),
    ]
}

fn resource_gone() -> Vec<Pulse> {
    let missing = ("False", "HostedClusterMissing");
    vec![
        work_created(),
        control_plane_ready(),
        Pulse {
            // The stale feedback (endpoint, version) must not reach the Job.
            expect_data: vec![
                ("control_plane_endpoint", String::new()),
                ("version", String::new()),
            ],
            ..real(
                "the HostedCluster is deleted on the management cluster (the agent keeps its old status)",
                vec![Management::HostedClusterGone(true)],
                Expected {
                    applied: Some(("True", "ManifestWorkApplied")),
                    available: missing,
                    health: missing,
                    finalized: None,
                },
            )
        },
        real(
            "the agent's resync re-creates the HostedCluster (no status yet)",
            vec![Management::HostedClusterGone(false)],
            Expected {
                applied: Some(("True", "ManifestWorkExists")),
                available: ("False", "AwaitingFeedback"),
                health: NO_ISSUES,
                finalized: None,
            },
        ),
    ]
}

/// The version the `upgrade` scenario moves the cluster to.
pub const UPGRADE_VERSION: &str = "4.17.1";
/// The NodePool the `delete` scenario lists first.
pub const NODEPOOL_NAME: &str = "workers-a";
/// Its id (a UUIDv7, as the API assigns them).
pub const NODEPOOL_ID: &str = "019a6f20-3c4d-7e5f-8a9b-0c1d2e3f4a5b";
/// The HostedCluster finalizer that holds the deletion in the `delete` scenario.
pub const HOSTED_CLUSTER_FINALIZER: &str = "hypershift.openshift.io/finalizer";

/// The generation after one PATCH or DELETE.
pub(super) const NEXT_GENERATION: i32 = super::GENERATION + 1;

fn upgrade() -> Vec<Pulse> {
    let ready = Expected {
        applied: Some(("True", "ManifestWorkApplied")),
        available: ("True", "ControlPlaneReady"),
        health: NO_ISSUES,
        finalized: None,
    };
    let versions = |version: &str, desired: &str| {
        vec![
            ("version", version.to_owned()),
            ("desired_version", desired.to_owned()),
        ]
    };
    vec![
        work_created(),
        Pulse {
            expect_data: versions(VERSION, VERSION),
            ..real(
                "HostedCluster reports Available=True at 4.17.0",
                vec![Management::Feedback(hosted_cluster_status(
                    Stage::Upgraded(VERSION),
                ))],
                ready.clone(),
            )
        },
        Pulse {
            generation: NEXT_GENERATION,
            hyperfleet: vec![HyperFleet::OpenshiftVersion(UPGRADE_VERSION)],
            // The HostedCluster has not seen the new release yet.
            expect_data: versions(VERSION, VERSION),
            ..real(
                "release.version 4.17.1 (generation 4): the adapter updates the ManifestWork; generation 4 is not available yet",
                vec![],
                Expected {
                    applied: Some(("True", "ManifestWorkUpdated")),
                    available: ("False", "Updating"),
                    ..ready.clone()
                },
            )
        },
        Pulse {
            generation: NEXT_GENERATION,
            expect_data: versions(VERSION, UPGRADE_VERSION),
            expect_messages: vec![(
                "Available",
                format!(
                    "Upgrading from {VERSION} to {UPGRADE_VERSION}: the control plane still serves release {VERSION}"
                ),
            )],
            ..real(
                "HostedCluster rolls out 4.17.1 and keeps serving 4.17.0: generation 4 not available yet",
                vec![Management::Feedback(hosted_cluster_status(
                    Stage::Upgrading {
                        from: VERSION,
                        to: UPGRADE_VERSION,
                    },
                ))],
                Expected {
                    available: ("False", "Upgrading"),
                    ..ready.clone()
                },
            )
        },
        Pulse {
            generation: NEXT_GENERATION,
            expect_data: versions(UPGRADE_VERSION, UPGRADE_VERSION),
            ..real(
                "HostedCluster completes the upgrade to 4.17.1",
                vec![Management::Feedback(hosted_cluster_status(
                    Stage::Upgraded(UPGRADE_VERSION),
                ))],
                ready,
            )
        },
    ]
}

fn delete() -> Vec<Pulse> {
    let requested = Expected {
        applied: Some(("True", "DeletionRequested")),
        available: ("False", "Deleting"),
        health: NO_ISSUES,
        finalized: Some(("False", "DeletionRequested")),
    };
    let work = format!("ManifestWork hostedcluster-{}", super::CLUSTER_ID);
    vec![
        work_created(),
        control_plane_ready(),
        Pulse {
            generation: NEXT_GENERATION,
            hyperfleet: vec![
                HyperFleet::NodePools(vec![NODEPOOL_NAME]),
                HyperFleet::Delete,
            ],
            expect_messages: vec![(
                "Applied",
                format!(
                    "still lists its NodePools: {NODEPOOL_NAME} ({NODEPOOL_ID}, deleting since "
                ),
            )],
            ..real(
                "the cluster is deleted in HyperFleet (generation 4) while a NodePool is listed: nothing is deleted",
                vec![],
                Expected {
                    applied: Some(("False", "NodePoolsExist")),
                    available: ("False", "NodePoolsExist"),
                    health: NO_ISSUES,
                    finalized: Some(("False", "NodePoolsExist")),
                },
            )
        },
        Pulse {
            generation: NEXT_GENERATION,
            hyperfleet: vec![HyperFleet::NodePools(vec![])],
            expect_messages: vec![(
                "Applied",
                format!(
                    "Deletion of {work} on management cluster {} requested by this pulse",
                    super::CONSUMER
                ),
            )],
            ..real(
                "the NodePool is gone: the adapter deletes the ManifestWork",
                vec![Management::HoldDelete(vec![HOSTED_CLUSTER_FINALIZER])],
                requested.clone(),
            )
        },
        Pulse {
            generation: NEXT_GENERATION,
            // The agent keeps the feedback it had before the deletion (recordings 10c, 10i):
            // the finalizer is not reported, the deletion is pending; nothing is sent again.
            expect_messages: vec![("Applied", "was requested; it is still there".to_owned())],
            ..real(
                "a HostedCluster finalizer holds the deletion",
                vec![Management::AgentReports],
                requested,
            )
        },
        Pulse {
            generation: NEXT_GENERATION,
            expect_messages: vec![(
                "Finalized",
                format!(
                    "and {work} are gone from management cluster {}",
                    super::CONSUMER
                ),
            )],
            ..real(
                "the finalizer is removed: the work is gone",
                vec![Management::ReleaseDelete],
                Expected {
                    applied: Some(("False", "CleanupConfirmed")),
                    available: ("False", "Deleted"),
                    health: NO_ISSUES,
                    finalized: Some(("True", "CleanupConfirmed")),
                },
            )
        },
    ]
}

/// The NodePool of the `nodepool` scenario: its replicas at creation and after the scale-up.
pub const NODEPOOL_REPLICAS: i64 = 3;
pub const SCALED_REPLICAS: i64 = 5;

/// A pulse of the NodePool's Job at the NodePool's `generation`.
fn nodepool_pulse(
    title: &'static str,
    generation: i32,
    hyperfleet: Vec<HyperFleet>,
    management: Vec<Management>,
    expect: Expected,
) -> Pulse {
    Pulse {
        generation,
        hyperfleet,
        adapter: Adapter::NodePool,
        ..real(title, management, expect)
    }
}

/// The NodePool's status as fed back: `available` of `wanted` machines, ready when all are.
fn node_pool_status(available: i64, wanted: i64) -> Value {
    let status =
        crate::nodepool::NodePoolStatus::gcp_ready(wanted, VERSION).with_available(available);
    if available == 0 {
        crate::nodepool::NodePoolStatus::gcp_provisioning(VERSION).to_json()
    } else if available < wanted {
        status
            .set(
                "Ready",
                "False",
                "WaitingForAvailableMachines",
                &format!(
                    "Minimum availability requires {wanted} replicas, current {available} available"
                ),
            )
            .to_json()
    } else {
        status.to_json()
    }
}

fn nodepool() -> Vec<Pulse> {
    let name = crate::ids::LONGEST_NODEPOOL_NAME;
    let waiting = ("False", "WaitingForControlPlane");
    let applied = Some(("True", "ManifestWorkApplied"));
    let ready = Expected {
        applied,
        available: ("True", "NodePoolReady"),
        health: NO_ISSUES,
        finalized: None,
    };
    let count = |n: i64| n.to_string();
    let cp_requested = Expected {
        applied: Some(("True", "DeletionRequested")),
        available: ("False", "Deleting"),
        health: NO_ISSUES,
        finalized: Some(("False", "DeletionRequested")),
    };
    vec![
        work_created(),
        Pulse {
            expect_messages: vec![("Applied", "is not available yet".to_owned())],
            expect_data: vec![
                ("desired_replicas", count(NODEPOOL_REPLICAS)),
                ("current_replicas", count(0)),
            ],
            ..nodepool_pulse(
                "a NodePool is created in HyperFleet: its pulse waits for the control plane (nothing sent)",
                1,
                vec![HyperFleet::CreateNodePool],
                vec![],
                Expected {
                    applied: Some(waiting),
                    available: waiting,
                    health: NO_ISSUES,
                    finalized: None,
                },
            )
        },
        control_plane_ready(),
        nodepool_pulse(
            "the control plane is available: the adapter creates the NodePool's ManifestWork",
            1,
            vec![],
            vec![],
            Expected {
                applied: Some(("True", "ManifestWorkCreated")),
                available: ("False", "Provisioning"),
                health: NO_ISSUES,
                finalized: None,
            },
        ),
        Pulse {
            expect_messages: vec![(
                "Available",
                format!("Machines are being created: 0 of {NODEPOOL_REPLICAS} replicas available"),
            )],
            ..nodepool_pulse(
                "HyperShift creates the NodePool's machines",
                1,
                vec![],
                vec![Management::NodePoolFeedback(node_pool_status(
                    0,
                    NODEPOOL_REPLICAS,
                ))],
                Expected {
                    applied,
                    available: ("False", "Provisioning"),
                    health: NO_ISSUES,
                    finalized: None,
                },
            )
        },
        Pulse {
            expect_data: vec![
                ("current_replicas", count(NODEPOOL_REPLICAS)),
                ("ready_nodes", count(NODEPOOL_REPLICAS)),
                ("version", VERSION.to_owned()),
            ],
            ..nodepool_pulse(
                "the machines join: the NodePool is ready",
                1,
                vec![],
                vec![Management::NodePoolFeedback(node_pool_status(
                    NODEPOOL_REPLICAS,
                    NODEPOOL_REPLICAS,
                ))],
                ready.clone(),
            )
        },
        Pulse {
            expect_messages: vec![(
                "Applied",
                "NodePool of generation 2 sent to management cluster".to_owned(),
            )],
            // What runs until the agent applies generation 2.
            expect_data: vec![("current_replicas", count(NODEPOOL_REPLICAS))],
            ..nodepool_pulse(
                "scale-up to 5 replicas (NodePool generation 2): the adapter updates the ManifestWork; generation 2 is not available yet",
                2,
                vec![HyperFleet::ScaleNodePool(SCALED_REPLICAS)],
                vec![],
                Expected {
                    applied: Some(("True", "ManifestWorkUpdated")),
                    available: ("False", "Updating"),
                    ..ready.clone()
                },
            )
        },
        Pulse {
            expect_data: vec![
                ("desired_replicas", count(SCALED_REPLICAS)),
                ("current_replicas", count(NODEPOOL_REPLICAS)),
            ],
            ..nodepool_pulse(
                "HyperShift adds machines: 3 of 5 available",
                2,
                vec![],
                vec![Management::NodePoolFeedback(node_pool_status(
                    NODEPOOL_REPLICAS,
                    SCALED_REPLICAS,
                ))],
                Expected {
                    applied,
                    available: ("False", "Scaling"),
                    health: NO_ISSUES,
                    finalized: None,
                },
            )
        },
        Pulse {
            expect_data: vec![("current_replicas", count(SCALED_REPLICAS))],
            ..nodepool_pulse(
                "5 of 5 available: the NodePool is ready again",
                2,
                vec![],
                vec![Management::NodePoolFeedback(node_pool_status(
                    SCALED_REPLICAS,
                    SCALED_REPLICAS,
                ))],
                ready,
            )
        },
        Pulse {
            generation: NEXT_GENERATION,
            hyperfleet: vec![HyperFleet::Delete],
            expect_messages: vec![(
                "Applied",
                format!(
                    "still lists its NodePools: {name} ({}, deleting since ",
                    crate::ids::NODEPOOL_ID
                ),
            )],
            ..real(
                "the cluster is deleted in HyperFleet (generation 4; its NodePool too): the control plane waits for the NodePool",
                vec![],
                Expected {
                    applied: Some(("False", "NodePoolsExist")),
                    available: ("False", "NodePoolsExist"),
                    health: NO_ISSUES,
                    finalized: Some(("False", "NodePoolsExist")),
                },
            )
        },
        Pulse {
            expect_messages: vec![(
                "Applied",
                format!(
                    "Deletion of ManifestWork nodepool-{} on management cluster {} requested by this pulse",
                    crate::ids::NODEPOOL_ID,
                    super::CONSUMER
                ),
            )],
            ..nodepool_pulse(
                "the NodePool's pulse (generation 3, deleted) deletes its ManifestWork",
                3,
                vec![],
                vec![],
                Expected {
                    applied: Some(("True", "DeletionRequested")),
                    available: ("False", "Deleting"),
                    health: NO_ISSUES,
                    finalized: Some(("False", "DeletionRequested")),
                },
            )
        },
        nodepool_pulse(
            "the NodePool's machines are gone: the work is gone, Finalized=True",
            3,
            vec![],
            vec![Management::NodePoolReleaseDelete],
            Expected {
                applied: Some(("False", "CleanupConfirmed")),
                available: ("False", "Deleted"),
                health: NO_ISSUES,
                finalized: Some(("True", "CleanupConfirmed")),
            },
        ),
        Pulse {
            generation: NEXT_GENERATION,
            hyperfleet: vec![HyperFleet::RemoveNodePool],
            expect_messages: vec![(
                "Applied",
                format!(
                    "Deletion of ManifestWork hostedcluster-{} on management cluster {} requested by this pulse",
                    super::CLUSTER_ID,
                    super::CONSUMER
                ),
            )],
            ..real(
                "HyperFleet removes the finalized NodePool: the control plane's deletion goes ahead",
                vec![],
                cp_requested,
            )
        },
        Pulse {
            generation: NEXT_GENERATION,
            ..real(
                "the HostedCluster is deleted: the control plane's work is gone, Finalized=True",
                vec![Management::ReleaseDelete],
                Expected {
                    applied: Some(("False", "CleanupConfirmed")),
                    available: ("False", "Deleted"),
                    health: NO_ISSUES,
                    finalized: Some(("True", "CleanupConfirmed")),
                },
            )
        },
    ]
}

/// How far the simulated HostedCluster is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Progressing,
    Ready,
    Degraded,
    /// Serving at `from` while rolling out `to` (`version.desired` = `to`, a `Partial` history
    /// entry for it above the `Completed` one for `from`).
    Upgrading {
        from: &'static str,
        to: &'static str,
    },
    /// Serving at this version, which is also the desired one.
    Upgraded(&'static str),
}

/// `status.version` of a HostedCluster at `completed` rolling out `desired` (newest first).
/// The placement scenario's management clusters, in the cluster's region (europe-west2):
/// `(name = Maestro consumer, max_hosted_clusters, control planes of other clusters it holds)`.
/// A holds one of two (the least loaded is B, which the cluster fills); when B fails before
/// applying, the cluster goes to A, which it fills.
pub const PLACEMENT_MANAGEMENT_CLUSTERS: [(&str, u64, usize); 2] =
    [(PLACEMENT_A, 2, 1), (PLACEMENT_B, 1, 0)];
/// The management cluster that takes the control plane after the failover.
pub const PLACEMENT_A: &str = "mgmt-europe-west2-a";
/// The management cluster the control plane is placed on first.
pub const PLACEMENT_B: &str = "mgmt-europe-west2-b";

fn placed(title: &'static str, management: Vec<Management>, expect: Expected, on: &str) -> Pulse {
    Pulse {
        adapter: Adapter::Placed,
        expect_data: vec![("management_cluster", on.to_owned())],
        ..real(title, management, expect)
    }
}

fn placement() -> Vec<Pulse> {
    vec![
        Pulse {
            expect_messages: vec![("Applied", PLACEMENT_B.to_owned())],
            ..placed(
                "new cluster: placed on the least loaded management cluster of its region (B: 0 of 1; A holds 1 of 2)",
                vec![],
                Expected {
                    applied: Some(("True", "ManifestWorkCreated")),
                    available: ("False", "Provisioning"),
                    health: NO_ISSUES,
                    finalized: None,
                },
                PLACEMENT_B,
            )
        },
        Pulse {
            expect_messages: vec![
                ("Applied", format!("management cluster {PLACEMENT_B}")),
                ("Applied", format!("on management cluster {PLACEMENT_A}")),
                ("Health", PLACEMENT_B.to_owned()),
            ],
            ..placed(
                "B goes down before its agent applied the work: withdrawn, placed on A (now full)",
                vec![Management::Outage(PLACEMENT_B)],
                Expected {
                    applied: Some(("True", "FailedOverBeforeApply")),
                    available: ("False", "Provisioning"),
                    health: NO_ISSUES,
                    finalized: None,
                },
                PLACEMENT_A,
            )
        },
        placed(
            "A's agent applies it; the HostedCluster reports Available=True",
            vec![Management::Feedback(hosted_cluster_status(Stage::Ready))],
            Expected {
                applied: Some(("True", "ManifestWorkApplied")),
                available: ("True", "ControlPlaneReady"),
                health: NO_ISSUES,
                finalized: None,
            },
            PLACEMENT_A,
        ),
        Pulse {
            expect_messages: vec![
                ("Health", PLACEMENT_A.to_owned()),
                ("Health", "restore the management cluster".to_owned()),
            ],
            ..placed(
                "A goes down after applying it: the control plane stays there, Health says so",
                vec![Management::Outage(PLACEMENT_A)],
                Expected {
                    applied: Some(("True", "ManifestWorkApplied")),
                    available: ("True", "ControlPlaneReady"),
                    health: ("False", "ManagementClusterUnavailable"),
                    finalized: None,
                },
                PLACEMENT_A,
            )
        },
    ]
}

fn version_status(completed: &str, desired: &str) -> Value {
    let image = |v: &str| format!("quay.io/openshift-release-dev/ocp-release:{v}-x86_64");
    let mut history = Vec::new();
    if completed != desired {
        history.push(json!({"state": "Partial", "version": desired, "image": image(desired)}));
    }
    history.push(json!({"state": "Completed", "version": completed, "image": image(completed)}));
    json!({"desired": {"version": desired, "image": image(desired)}, "history": history})
}

/// A HostedCluster `.status` as the management cluster's work agent feeds it back.
pub fn hosted_cluster_status(stage: Stage) -> Value {
    let condition = |type_: &str, status: &str, reason: &str, message: &str| json!({"type": type_, "status": status, "reason": reason, "message": message});
    match stage {
        Stage::Progressing => json!({
            "conditions": [
                condition("Available", "False", "WaitingForAvailable",
                          "Waiting for the hosted control plane to become available"),
                condition("Progressing", "True", "Progressing",
                          "Rolling out the hosted control plane components"),
                condition("Degraded", "False", "AsExpected", ""),
            ]
        }),
        Stage::Ready | Stage::Degraded => {
            let degraded = stage == Stage::Degraded;
            json!({
                "conditions": [
                    condition("Available", "True", "AsExpected",
                              "The hosted control plane is available"),
                    condition("Progressing", "False", "AsExpected", ""),
                    if degraded {
                        condition("Degraded", "True", "EtcdQuorumLost", "etcd has lost quorum")
                    } else {
                        condition("Degraded", "False", "AsExpected", "")
                    },
                ],
                "controlPlaneEndpoint": {"host": ENDPOINT_HOST, "port": 443},
                "version": {"history": [{"state": "Completed", "version": VERSION}]}
            })
        }
        Stage::Upgrading { from, to } => json!({
            "conditions": [
                condition("Available", "True", "AsExpected",
                          "The hosted control plane is available"),
                condition("Progressing", "True", "Progressing",
                          "Rolling out the hosted control plane components"),
                condition("Degraded", "False", "AsExpected", ""),
            ],
            "controlPlaneEndpoint": {"host": ENDPOINT_HOST, "port": 443},
            "version": version_status(from, to)
        }),
        Stage::Upgraded(version) => json!({
            "conditions": [
                condition("Available", "True", "AsExpected",
                          "The hosted control plane is available"),
                condition("Progressing", "False", "AsExpected", ""),
                condition("Degraded", "False", "AsExpected", ""),
            ],
            "controlPlaneEndpoint": {"host": ENDPOINT_HOST, "port": 443},
            "version": version_status(version, version)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::render;
    use super::*;

    /// A Job whose conditions are `(type, status, reason, message)` and whose `report-data` is
    /// `data`.
    fn job(conditions: &[(&str, &str, &str, &str)], data: &Value) -> Value {
        let conditions: Vec<Value> = conditions
            .iter()
            .map(|(t, s, r, m)| json!({"type": t, "status": s, "reason": r, "message": m}))
            .collect();
        json!({
            "metadata": {"annotations": {"hyperfleet.io/report-data": data.to_string()}},
            "status": {"conditions": conditions}
        })
    }

    fn problems(pulse: &Pulse, job: &Value) -> Vec<String> {
        render::mismatches(
            job,
            &pulse.expect,
            &pulse.expect_data,
            &pulse.expect_messages,
        )
    }

    #[test]
    fn every_scenario_has_a_distinct_name_and_pulses() {
        let mut names: Vec<&str> = Scenario::ALL.iter().map(|s| s.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Scenario::ALL.len());
        for s in Scenario::ALL {
            assert!(!s.pulses().is_empty(), "{}", s.name());
            assert!(
                s.name().len() <= 15,
                "{} is wider than the summary column",
                s.name()
            );
        }
    }

    /// What the adapter reported before issue 9, on every pulse of an admission denial: the
    /// denial pulse's expectations refuse it. What it reports now passes.
    #[test]
    fn the_apply_failure_pulse_refuses_the_report_that_hid_the_denial() {
        let pulses = Scenario::ApplyFailure.pulses();
        let denial = &pulses[1];
        assert_eq!(
            denial.management,
            vec![Management::DenyApply(Some(admission_denial()))]
        );
        let empty = json!({"control_plane_endpoint": "", "version": ""});
        let before = job(
            &[
                (
                    "Applied",
                    "True",
                    "ManifestWorkExists",
                    "ManifestWork exists",
                ),
                ("Available", "False", "AwaitingFeedback", "Waiting"),
                ("Health", "True", "NoIssues", "No degradation"),
            ],
            &empty,
        );
        assert_eq!(
            problems(denial, &before).len(),
            4,
            "{:?}",
            problems(denial, &before)
        );
        let words = format!(
            "could not apply: Failed to apply manifest: {}",
            admission_denial()
        );
        let now = job(
            &[
                ("Applied", "False", "ApplyFailed", &words),
                ("Available", "False", "ApplyFailed", "see Applied"),
                ("Health", "False", "ApplyFailed", "A person must act"),
            ],
            &empty,
        );
        assert!(
            problems(denial, &now).is_empty(),
            "{:?}",
            problems(denial, &now)
        );
        // The right reasons without the agent's words are not enough.
        let silent = job(
            &[
                ("Applied", "False", "ApplyFailed", "could not apply"),
                ("Available", "False", "ApplyFailed", ""),
                ("Health", "False", "ApplyFailed", ""),
            ],
            &empty,
        );
        assert_eq!(problems(denial, &silent).len(), 1);
    }

    /// A report that hides the rollout (Available True, or no "Upgrading from" in Available,
    /// desired_version = version) does not pass the rollout pulse.
    #[test]
    fn the_rollout_pulse_refuses_a_report_that_hides_the_upgrade() {
        let pulses = Scenario::Upgrade.pulses();
        let rollout = &pulses[3];
        assert_eq!(rollout.generation, 4);
        let old_rule = job(
            &[
                ("Applied", "True", "ManifestWorkApplied", ""),
                (
                    "Available",
                    "True",
                    "ControlPlaneReady",
                    "Control plane is ready; version 4.17.0; upgrading from 4.17.0 to 4.17.1",
                ),
                ("Health", "True", "NoIssues", ""),
            ],
            &json!({"version": VERSION, "desired_version": UPGRADE_VERSION}),
        );
        assert!(
            !problems(rollout, &old_rule).is_empty(),
            "Available=True during the rollout passed"
        );
        let conditions = |available: &'static str| {
            [
                ("Applied", "True", "ManifestWorkApplied", ""),
                ("Available", "False", "Upgrading", available),
                ("Health", "True", "NoIssues", ""),
            ]
        };
        let hidden = job(
            &conditions("Control plane is not at the desired release"),
            &json!({"version": VERSION, "desired_version": VERSION}),
        );
        assert_eq!(
            problems(rollout, &hidden).len(),
            2,
            "{:?}",
            problems(rollout, &hidden)
        );
        let shown = job(
            &conditions(
                "Upgrading from 4.17.0 to 4.17.1: the control plane still serves release 4.17.0 at https://api.example.com:443",
            ),
            &json!({"version": VERSION, "desired_version": UPGRADE_VERSION}),
        );
        assert!(
            problems(rollout, &shown).is_empty(),
            "{:?}",
            problems(rollout, &shown)
        );
    }

    /// A deletion that ignores the listed NodePool, and a "done" without `Finalized`, do not
    /// pass the delete scenario's pulses.
    #[test]
    fn the_delete_pulses_refuse_a_premature_delete_and_a_missing_finalized() {
        let pulses = Scenario::Delete.pulses();
        assert!(pulses.iter().skip(2).all(|p| p.generation == 4));
        let held = &pulses[2];
        let deleted_anyway = job(
            &[
                (
                    "Applied",
                    "True",
                    "DeletionRequested",
                    "requested by this pulse",
                ),
                ("Available", "False", "Deleting", ""),
                ("Health", "True", "NoIssues", ""),
                ("Finalized", "False", "DeletionRequested", ""),
            ],
            &json!({}),
        );
        // Applied, Available, Finalized and Applied's message naming the NodePool.
        assert_eq!(
            problems(held, &deleted_anyway).len(),
            4,
            "{:?}",
            problems(held, &deleted_anyway)
        );
        let done = &pulses[5];
        let gone = [
            ("Applied", "False", "CleanupConfirmed", ""),
            ("Available", "False", "Deleted", ""),
            ("Health", "True", "NoIssues", ""),
        ];
        let message = format!(
            "HostedCluster clusters/x and ManifestWork hostedcluster-{} are gone from management cluster {}",
            super::super::CLUSTER_ID,
            super::super::CONSUMER
        );
        let without = job(&gone, &json!({}));
        let found = problems(done, &without);
        assert!(
            found
                .iter()
                .any(|p| p.starts_with("Finalized: expected True/CleanupConfirmed, got (none)")),
            "{found:?}"
        );
        let mut with = gone.to_vec();
        with.push(("Finalized", "True", "CleanupConfirmed", &message));
        assert!(
            problems(done, &job(&with, &json!({}))).is_empty(),
            "{:?}",
            problems(done, &job(&with, &json!({})))
        );
    }

    /// The nodepool scenario's two Jobs: a NodePool sent before the control plane is available,
    /// and a control-plane deletion that ignores the NodePool, do not pass its pulses; each
    /// pulse names the generation of what it checks.
    #[test]
    fn the_nodepool_pulses_refuse_an_early_node_pool_and_a_deletion_that_ignores_it() {
        let pulses = Scenario::NodePool.pulses();
        let kinds: Vec<(bool, i32)> = pulses
            .iter()
            .map(|p| (p.adapter == Adapter::NodePool, p.generation))
            .collect();
        let (np, cp) = (true, false);
        assert_eq!(
            kinds,
            [
                (cp, 3),
                (np, 1),
                (cp, 3),
                (np, 1),
                (np, 1),
                (np, 1),
                (np, 2),
                (np, 2),
                (np, 2),
                (cp, 4),
                (np, 3),
                (np, 3),
                (cp, 4),
                (cp, 4),
            ]
        );
        let waiting = &pulses[1];
        assert_eq!(waiting.hyperfleet, vec![HyperFleet::CreateNodePool]);
        let data = json!({"desired_replicas": 3, "current_replicas": 0});
        let too_early = job(
            &[
                ("Applied", "True", "ManifestWorkCreated", "created"),
                ("Available", "False", "Provisioning", ""),
                ("Health", "True", "NoIssues", ""),
            ],
            &data,
        );
        // Applied, Available and Applied's message.
        assert_eq!(
            problems(waiting, &too_early).len(),
            3,
            "{:?}",
            problems(waiting, &too_early)
        );
        let now = job(
            &[
                (
                    "Applied",
                    "False",
                    "WaitingForControlPlane",
                    "Nothing was sent: HostedCluster clusters/x is not available yet (AwaitingFeedback: …)",
                ),
                ("Available", "False", "WaitingForControlPlane", ""),
                ("Health", "True", "NoIssues", ""),
            ],
            &data,
        );
        assert!(
            problems(waiting, &now).is_empty(),
            "{:?}",
            problems(waiting, &now)
        );
        // A waiting pulse that claims machines is refused too.
        let claims = job(
            &[
                (
                    "Applied",
                    "False",
                    "WaitingForControlPlane",
                    "is not available yet",
                ),
                ("Available", "False", "WaitingForControlPlane", ""),
                ("Health", "True", "NoIssues", ""),
            ],
            &json!({"desired_replicas": 3, "current_replicas": 3}),
        );
        assert_eq!(problems(waiting, &claims).len(), 1);

        let held = &pulses[9];
        assert_eq!(held.hyperfleet, vec![HyperFleet::Delete]);
        let deleted_anyway = job(
            &[
                (
                    "Applied",
                    "True",
                    "DeletionRequested",
                    "requested by this pulse",
                ),
                ("Available", "False", "Deleting", ""),
                ("Health", "True", "NoIssues", ""),
                ("Finalized", "False", "DeletionRequested", ""),
            ],
            &json!({}),
        );
        assert_eq!(
            problems(held, &deleted_anyway).len(),
            4,
            "{:?}",
            problems(held, &deleted_anyway)
        );
    }

    /// What the adapter reported before issue 9 once the HostedCluster was deleted: the stale
    /// feedback's Available=True, endpoint and version. The pulse's expectations refuse it.
    #[test]
    fn the_resource_gone_pulse_refuses_available_from_stale_feedback() {
        let pulses = Scenario::ResourceGone.pulses();
        let gone = &pulses[2];
        assert_eq!(gone.management, vec![Management::HostedClusterGone(true)]);
        let before = job(
            &[
                ("Applied", "True", "ManifestWorkApplied", ""),
                ("Available", "True", "ControlPlaneReady", ""),
                ("Health", "True", "NoIssues", ""),
            ],
            &json!({"control_plane_endpoint": endpoint(), "version": VERSION}),
        );
        let found = problems(gone, &before);
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(
            found
                .iter()
                .any(|p| p.starts_with("report-data control_plane_endpoint"))
        );
        let now = job(
            &[
                ("Applied", "True", "ManifestWorkApplied", ""),
                ("Available", "False", "HostedClusterMissing", ""),
                ("Health", "False", "HostedClusterMissing", ""),
            ],
            &json!({"control_plane_endpoint": "", "version": ""}),
        );
        assert!(
            problems(gone, &now).is_empty(),
            "{:?}",
            problems(gone, &now)
        );
    }
}
