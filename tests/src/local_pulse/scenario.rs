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
    /// The adapter exits 1 without a report.
    AdapterCrash,
    /// The adapter never finishes; the reporter gives up after 3 s.
    Hang,
    /// The adapter writes a report the contract refuses.
    InvalidReport,
    /// Maestro is unreachable; the adapter retries for 3 s, then reports it.
    MaestroDown,
}

impl Scenario {
    /// Every scenario, in the order `--all` runs them.
    pub const ALL: [Scenario; 7] = [
        Scenario::Lifecycle,
        Scenario::ApplyFailure,
        Scenario::ResourceGone,
        Scenario::AdapterCrash,
        Scenario::Hang,
        Scenario::InvalidReport,
        Scenario::MaestroDown,
    ];

    /// The `--scenario` value.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Lifecycle => "lifecycle",
            Scenario::ApplyFailure => "apply-failure",
            Scenario::ResourceGone => "resource-gone",
            Scenario::AdapterCrash => "adapter-crash",
            Scenario::Hang => "hang",
            Scenario::InvalidReport => "invalid-report",
            Scenario::MaestroDown => "maestro-down",
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
        }
    }

    /// The pulses of the scenario.
    pub fn pulses(self) -> Vec<Pulse> {
        match self {
            Scenario::Lifecycle => lifecycle(),
            Scenario::ApplyFailure => apply_failure(),
            Scenario::ResourceGone => resource_gone(),
            Scenario::AdapterCrash => vec![Pulse {
                title: "the adapter crashes",
                management: vec![],
                adapter: Adapter::Crash,
                expect: reporter_failure("AdapterExitedWithError"),
                expect_data: vec![],
                expect_messages: vec![],
            }],
            Scenario::Hang => vec![Pulse {
                title: "the adapter hangs",
                management: vec![],
                adapter: Adapter::Hang,
                expect: reporter_failure("AdapterTimeout"),
                expect_data: vec![],
                expect_messages: vec![],
            }],
            Scenario::InvalidReport => vec![Pulse {
                title: "the adapter writes an invalid report",
                management: vec![],
                adapter: Adapter::InvalidReport,
                expect: reporter_failure("InvalidResultFormat"),
                expect_data: vec![],
                expect_messages: vec![],
            }],
            Scenario::MaestroDown => vec![Pulse {
                title: "Maestro is down",
                management: vec![],
                adapter: Adapter::MaestroDown,
                expect: Expected {
                    applied: Some(("False", "MaestroUnavailable")),
                    available: ("Unknown", "MaestroUnavailable"),
                    health: ("False", "MaestroUnavailable"),
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
    Crash,
    Hang,
    InvalidReport,
}

impl Adapter {
    /// The hidden first argument and the rest of the child's arguments.
    pub fn args(self) -> Vec<&'static str> {
        match self {
            Adapter::Real | Adapter::MaestroDown => vec![children::ADAPTER, "controlplane"],
            Adapter::Crash => vec![children::ADAPTER_CRASH],
            Adapter::Hang => vec![children::ADAPTER_HANG],
            Adapter::InvalidReport => vec![children::ADAPTER_INVALID_REPORT],
        }
    }

    /// What the header says runs in the adapter container.
    pub fn describe(self) -> &'static str {
        match self {
            Adapter::Real => "hypershift-adapter controlplane",
            Adapter::MaestroDown => "hypershift-adapter controlplane (Maestro URLs: a closed port)",
            Adapter::Crash => "a stand-in that logs an error and exits 1",
            Adapter::Hang => "a stand-in that sleeps until killed",
            Adapter::InvalidReport => "a stand-in that writes an invalid report and exits 0",
        }
    }
}

/// `(status, reason)` of each condition the Job must carry after the pulse; `applied: None`
/// means the Job has no `Applied` condition. The reporter's own failures land on every
/// `CONDITION_TYPE` entry, which the Job sets to `Available,Applied,Health`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    pub applied: Option<(&'static str, &'static str)>,
    pub available: (&'static str, &'static str),
    pub health: (&'static str, &'static str),
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
}

/// One pulse of a scenario.
#[derive(Debug, Clone)]
pub struct Pulse {
    pub title: &'static str,
    /// What changes on the management cluster before this pulse, in order (empty: nothing).
    pub management: Vec<Management>,
    pub adapter: Adapter,
    pub expect: Expected,
    /// `(key, value)` the `hyperfleet.io/report-data` annotation must hold.
    pub expect_data: Vec<(&'static str, String)>,
    /// `(condition type, text)`: the condition's message must contain the text.
    pub expect_messages: Vec<(&'static str, String)>,
}

fn reporter_failure(reason: &'static str) -> Expected {
    Expected {
        applied: Some(("False", reason)),
        available: ("False", reason),
        health: ("False", reason),
    }
}

/// The simulated HostedCluster's API endpoint host.
pub const ENDPOINT_HOST: &str = "api.prod-eu-1.hcp.example.com";
/// The simulated HostedCluster's completed version.
pub const VERSION: &str = "4.17.0";

const NO_ISSUES: (&str, &str) = ("True", "NoIssues");

/// The HostedCluster's endpoint as the report's `data` carries it.
fn endpoint() -> String {
    format!("https://{ENDPOINT_HOST}:443")
}

/// A pulse of the real adapter with nothing asserted on data or messages.
fn real(title: &'static str, management: Vec<Management>, expect: Expected) -> Pulse {
    Pulse {
        title,
        management,
        adapter: Adapter::Real,
        expect,
        expect_data: vec![],
        expect_messages: vec![],
    }
}

/// Pulse 1 of a new cluster: the adapter creates the ManifestWork.
fn work_created() -> Pulse {
    real(
        "new cluster: the adapter creates the ManifestWork",
        vec![],
        Expected {
            applied: Some(("True", "ManifestWorkCreated")),
            available: ("False", "Provisioning"),
            health: NO_ISSUES,
        },
    )
}

/// The HostedCluster reports Available=True: the endpoint and version reach the Job.
fn control_plane_ready() -> Pulse {
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
            },
        ),
    ]
}

/// How far the simulated HostedCluster is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Progressing,
    Ready,
    Degraded,
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
