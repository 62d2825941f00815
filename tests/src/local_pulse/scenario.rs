//! The scenarios: which pulses run, what the simulated HostedCluster reports before each, which
//! adapter runs, and the conditions each pulse must end with on its Job.

use serde_json::{Value, json};

use super::children;

/// `--scenario`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scenario {
    /// Four pulses: work created, provisioning, control plane ready, degraded.
    Lifecycle,
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
    pub const ALL: [Scenario; 5] = [
        Scenario::Lifecycle,
        Scenario::AdapterCrash,
        Scenario::Hang,
        Scenario::InvalidReport,
        Scenario::MaestroDown,
    ];

    /// The `--scenario` value.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Lifecycle => "lifecycle",
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
            Scenario::AdapterCrash => vec![Pulse {
                title: "the adapter crashes",
                feedback: None,
                adapter: Adapter::Crash,
                expect: reporter_failure("AdapterExitedWithError"),
                expect_data: vec![],
            }],
            Scenario::Hang => vec![Pulse {
                title: "the adapter hangs",
                feedback: None,
                adapter: Adapter::Hang,
                expect: reporter_failure("AdapterTimeout"),
                expect_data: vec![],
            }],
            Scenario::InvalidReport => vec![Pulse {
                title: "the adapter writes an invalid report",
                feedback: None,
                adapter: Adapter::InvalidReport,
                expect: reporter_failure("InvalidResultFormat"),
                expect_data: vec![],
            }],
            Scenario::MaestroDown => vec![Pulse {
                title: "Maestro is down",
                feedback: None,
                adapter: Adapter::MaestroDown,
                expect: Expected {
                    applied: Some(("False", "MaestroUnavailable")),
                    available: ("Unknown", "MaestroUnavailable"),
                    health: ("False", "MaestroUnavailable"),
                },
                expect_data: vec![],
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

/// One pulse of a scenario.
#[derive(Debug, Clone)]
pub struct Pulse {
    pub title: &'static str,
    /// The HostedCluster status the management cluster reports (Maestro status feedback) before
    /// this pulse; `None` leaves it as it was.
    pub feedback: Option<Value>,
    pub adapter: Adapter,
    pub expect: Expected,
    /// `(key, value)` the `hyperfleet.io/report-data` annotation must hold.
    pub expect_data: Vec<(&'static str, String)>,
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

fn lifecycle() -> Vec<Pulse> {
    let ok = ("True", "NoIssues");
    vec![
        Pulse {
            title: "new cluster: the adapter creates the ManifestWork",
            feedback: None,
            adapter: Adapter::Real,
            expect: Expected {
                applied: Some(("True", "ManifestWorkCreated")),
                available: ("False", "Provisioning"),
                health: ok,
            },
            expect_data: vec![],
        },
        Pulse {
            title: "HostedCluster reports Progressing=True",
            feedback: Some(hosted_cluster_status(Stage::Progressing)),
            adapter: Adapter::Real,
            expect: Expected {
                applied: Some(("True", "ManifestWorkApplied")),
                available: ("False", "Provisioning"),
                health: ok,
            },
            expect_data: vec![],
        },
        Pulse {
            title: "HostedCluster reports Available=True",
            feedback: Some(hosted_cluster_status(Stage::Ready)),
            adapter: Adapter::Real,
            expect: Expected {
                applied: Some(("True", "ManifestWorkApplied")),
                available: ("True", "ControlPlaneReady"),
                health: ok,
            },
            expect_data: vec![
                (
                    "control_plane_endpoint",
                    format!("https://{ENDPOINT_HOST}:443"),
                ),
                ("version", VERSION.to_owned()),
            ],
        },
        Pulse {
            title: "HostedCluster reports Degraded=True (etcd lost quorum)",
            feedback: Some(hosted_cluster_status(Stage::Degraded)),
            adapter: Adapter::Real,
            expect: Expected {
                applied: Some(("True", "ManifestWorkApplied")),
                available: ("True", "ControlPlaneReady"),
                health: ("False", "Degraded"),
            },
            expect_data: vec![("version", VERSION.to_owned())],
        },
    ]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Progressing,
    Ready,
    Degraded,
}

/// A HostedCluster `.status` as the management cluster's work agent feeds it back.
fn hosted_cluster_status(stage: Stage) -> Value {
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
