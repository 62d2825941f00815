//! `local-pulse --scenario diagnose`: `hypershift-adapter diagnose cluster` on one cluster taken
//! through the testbed, with the chain broken at each link in turn.
//!
//! The cluster goes through its first pulses (a precondition adapter not reporting, then no Job,
//! then the work agent stopped), becomes healthy, then breaks again: the adapter OOM-killed,
//! Maestro stopped, an admission policy denying the HostedCluster, a HostedCluster condition from
//! the operator, and a HostedCluster finalizer holding the deletion. Each step runs real pulses
//! where it needs them (the same pulses as the other scenarios), sends the framework's status PUT
//! of each pulse to the HyperFleet API, then runs the `diagnose` command's own code
//! ([`hypershift_adapter::diagnose::run`] with arguments parsed by the binary's [`Cli`]) against
//! the fakes and prints its text output. The step passes when the verdict names the broken link
//! (and the exit code and evidence are the expected ones).
//!
//! [`Cli`]: hypershift_adapter::cli::Cli

use std::path::Path;

use anyhow::Context;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::scenario::{
    self, Adapter, Expected, HyperFleet, Management, NEXT_GENERATION, Pulse, Stage,
    control_plane_ready, hosted_cluster_status, real, reporter_failure, work_created,
};
use super::{Bed, CLUSTER_ID, CONSUMER, Cli, NAMESPACE, run_pulse};
use crate::hyperfleet::fake_api::PREFIX;

/// The `ValidReleaseImage` condition of HostedCluster `gcp2` in the recording
/// `fixtures/hypershift-operator/b-gke-like/03-after-3min.json` (the operator could not resolve
/// the release image), copied with its reason and message.
fn recorded_release_image_condition() -> Value {
    json!({
        "type": "ValidReleaseImage",
        "status": "False",
        "reason": "PayloadArchNotFound",
        "message": "failed to determine if release image multi-arch: failed to retrieve manifest quay.io/openshift-release-dev/ocp-release:4.19.3-multi: failed to create repository client for https://quay.io: Get \"https://quay.io/v2/\": dial tcp: lookup quay.io on 192.0.2.53:53: no such host",
        "observedGeneration": 3,
        "lastTransitionTime": "2026-11-26T14:33:26Z"
    })
}

/// Done before a step's pulses.
#[derive(Debug, Clone, PartialEq)]
pub enum Act {
    /// These precondition adapters report success at the cluster's generation (a status PUT).
    Report(&'static [&'static str]),
    /// The management cluster's work agent stops (applies and reports nothing).
    StopAgent,
    /// It starts again.
    StartAgent,
}

/// What the diagnosis after a step must say.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The deciding link (`None`: healthy).
    pub link: Option<&'static str>,
    pub exit_code: u8,
    /// Texts the output must contain (the evidence that decided).
    pub words: Vec<&'static str>,
    /// Read this many minutes after now (the agent's or the deletion's time limit has passed).
    pub later_minutes: Option<i64>,
    /// Maestro is stopped: `--maestro-api-url` is a port nobody listens on.
    pub maestro_stopped: bool,
}

/// One step: acts, pulses, then the diagnosis.
#[derive(Debug, Clone)]
pub struct Step {
    pub title: &'static str,
    pub acts: Vec<Act>,
    pub pulses: Vec<Pulse>,
    pub check: Check,
}

fn stuck(link: &'static str, words: Vec<&'static str>) -> Check {
    Check {
        link: Some(link),
        exit_code: hypershift_adapter::diagnose::chain::EXIT_STUCK,
        words,
        later_minutes: None,
        maestro_stopped: false,
    }
}

/// The steps, in order.
pub fn steps() -> Vec<Step> {
    let denied = ("False", "ApplyFailed");
    let mut operator_status = hosted_cluster_status(Stage::Ready);
    if let Some(conditions) = operator_status["conditions"].as_array_mut() {
        conditions.push(recorded_release_image_condition());
    }
    let requested = Expected {
        applied: Some(("True", "DeletionRequested")),
        available: ("False", "Deleting"),
        health: scenario::NO_ISSUES,
        finalized: Some(("False", "DeletionRequested")),
    };
    vec![
        Step {
            title: "a precondition adapter not reporting: validation and pullsecret report, dns does not",
            acts: vec![Act::Report(&["validation", "pullsecret"])],
            pulses: vec![],
            check: stuck(
                "hyperfleet.preconditions",
                vec!["not met at generation 3", "dns: no DnsSuccessful"],
            ),
        },
        Step {
            title: "the Job's RBAC missing: dns reports, but the framework creates no Job for generation 3",
            acts: vec![Act::Report(&["dns"])],
            pulses: vec![],
            check: stuck(
                "framework.job",
                vec!["for generation 3", "manifests/hyperfleet/rbac.yaml"],
            ),
        },
        Step {
            title: "the work agent stopped: the work is created, nothing applies it for 10 minutes",
            acts: vec![Act::StopAgent],
            pulses: vec![work_created()],
            check: Check {
                later_minutes: Some(10),
                ..stuck(
                    "agent.applied",
                    vec!["no Applied from the agent of mgmt-local", "more than 5m"],
                )
            },
        },
        Step {
            title: "healthy: the agent is back, applies the work, the HostedCluster is available",
            acts: vec![Act::StartAgent],
            pulses: vec![control_plane_ready()],
            check: Check {
                link: None,
                exit_code: hypershift_adapter::diagnose::chain::EXIT_HEALTHY,
                words: vec!["healthy: every link holds"],
                later_minutes: None,
                maestro_stopped: false,
            },
        },
        Step {
            title: "the adapter OOM-killed",
            acts: vec![],
            pulses: vec![Pulse {
                adapter: Adapter::OomKilled,
                ..real(
                    "the adapter is OOM-killed before writing its report",
                    vec![],
                    reporter_failure("AdapterOOMKilled"),
                )
            }],
            check: stuck(
                "job.report",
                vec!["AdapterOOMKilled", "adapter exited 137 OOMKilled"],
            ),
        },
        Step {
            title: "Maestro stopped: neither the pulse nor diagnose reaches it",
            acts: vec![],
            pulses: vec![Pulse {
                adapter: Adapter::MaestroDown,
                ..real(
                    "Maestro is down",
                    vec![],
                    Expected {
                        applied: Some(("False", "MaestroUnavailable")),
                        available: ("Unknown", "MaestroUnavailable"),
                        health: ("False", "MaestroUnavailable"),
                        finalized: None,
                    },
                )
            }],
            check: Check {
                maestro_stopped: true,
                ..stuck(
                    "maestro.work",
                    vec!["the pulse reported MaestroUnavailable"],
                )
            },
        },
        Step {
            title: "admission denying the HostedCluster (Maestro is back)",
            acts: vec![],
            pulses: vec![real(
                "an admission policy denies the HostedCluster",
                vec![Management::DenyApply(Some(scenario::admission_denial()))],
                Expected {
                    applied: Some(denied),
                    available: denied,
                    health: denied,
                    finalized: None,
                },
            )],
            check: stuck("agent.applied", vec!["could not apply", "denied request"]),
        },
        Step {
            title: "a HostedCluster condition from the operator: the release image cannot be resolved",
            acts: vec![],
            pulses: vec![real(
                "the policy is lifted; the operator reports ValidReleaseImage=False",
                vec![
                    Management::DenyApply(None),
                    Management::Feedback(operator_status),
                ],
                Expected {
                    applied: Some(("True", "ManifestWorkApplied")),
                    available: ("True", "ControlPlaneReady"),
                    health: ("False", "ReleaseImageInvalid"),
                    finalized: None,
                },
            )],
            check: stuck(
                "hypershift.hostedcluster",
                vec!["ReleaseImageInvalid", "PayloadArchNotFound"],
            ),
        },
        Step {
            title: "a finalizer held during deletion, 45 minutes after the DELETE",
            acts: vec![],
            pulses: vec![
                Pulse {
                    generation: NEXT_GENERATION,
                    hyperfleet: vec![HyperFleet::Delete],
                    ..real(
                        "the cluster is deleted in HyperFleet (generation 4): the adapter deletes the ManifestWork",
                        vec![
                            Management::Feedback(hosted_cluster_status(Stage::Ready)),
                            Management::HoldDelete(vec![scenario::HOSTED_CLUSTER_FINALIZER]),
                        ],
                        requested.clone(),
                    )
                },
                Pulse {
                    generation: NEXT_GENERATION,
                    ..real(
                        "a HostedCluster finalizer holds the deletion",
                        vec![Management::AgentReports],
                        requested,
                    )
                },
            ],
            check: Check {
                later_minutes: Some(45),
                ..stuck(
                    "hypershift.hostedcluster",
                    vec!["deleting since", "more than 30m ago"],
                )
            },
        },
    ]
}

/// Every pulse of the steps, in order.
pub fn pulses() -> Vec<Pulse> {
    steps().into_iter().flat_map(|s| s.pulses).collect()
}

/// Runs the steps; per pulse and per diagnosis, its summary line and whether it matched.
pub(super) async fn run(bed: &Bed, dir: &Path, cli: &Cli) -> anyhow::Result<Vec<(String, bool)>> {
    let steps = steps();
    let total_pulses = steps.iter().map(|s| s.pulses.len()).sum();
    let total_steps = steps.len();
    let mut pulse_n = 0;
    let mut last_report: Option<Timestamp> = None;
    let mut out = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        println!("== Step {}/{total_steps}: {}", i + 1, step.title);
        println!();
        for act in &step.acts {
            println!("   {}", act_on(bed, act)?);
        }
        if !step.acts.is_empty() {
            println!();
        }
        for pulse in &step.pulses {
            pulse_n += 1;
            let result = run_pulse(bed, dir, pulse_n, total_pulses, pulse, cli).await?;
            println!(
                "   hyperfleet api:     {}",
                framework_reports(bed, pulse, &mut last_report)?
            );
            println!();
            out.push(result);
        }
        out.push(diagnose(bed, i + 1, &step.check).await?);
    }
    Ok(out)
}

/// Does `act`; what happened, for the output.
fn act_on(bed: &Bed, act: &Act) -> anyhow::Result<String> {
    match act {
        Act::Report(adapters) => {
            let generation = bed.hyperfleet.generation();
            for adapter in *adapters {
                let status = put_status(bed, &precondition_report(adapter, generation))?;
                anyhow::ensure!(
                    status == 201,
                    "the {adapter} report was not stored: HTTP {status}"
                );
            }
            Ok(format!(
                "hyperfleet api:     adapter {} report(s) Available=True at generation {generation} (PUT …/statuses)",
                adapters.join(", ")
            ))
        }
        Act::StopAgent => {
            bed.maestro.stop_agent(CONSUMER);
            Ok(format!(
                "management cluster: the work agent of {CONSUMER} stops (applies and reports nothing)"
            ))
        }
        Act::StartAgent => {
            bed.maestro.start_agent(CONSUMER);
            Ok(format!(
                "management cluster: the work agent of {CONSUMER} runs again"
            ))
        }
    }
}

/// Now, to the second (the framework's `now()`).
fn now_seconds() -> Timestamp {
    let now = Timestamp::now();
    now.round(jiff::Unit::Second).unwrap_or(now)
}

/// A precondition adapter's report of success at `generation`.
fn precondition_report(adapter: &str, generation: i64) -> Value {
    let condition = |t: &str, reason: &str| json!({"type": t, "status": "True", "reason": reason, "message": format!("{adapter}: {t}")});
    json!({
        "adapter": adapter,
        "observed_generation": generation,
        "observed_time": now_seconds().to_string(),
        "conditions": [
            condition("Applied", "Applied"),
            condition("Available", "Ready"),
            condition("Health", "Healthy"),
        ],
        "data": {}
    })
}

/// PUTs `body` to the cluster's statuses; the HTTP status.
fn put_status(bed: &Bed, body: &Value) -> anyhow::Result<u16> {
    let reply = bed.hyperfleet.api().call(
        "PUT",
        &format!("{PREFIX}/clusters/{CLUSTER_ID}/statuses"),
        Some(&body.to_string()),
    );
    Ok(reply.status)
}

/// The framework's status PUT after `pulse`: the Job's `Applied`, `Available`, `Health` and
/// `Finalized` conditions, at the generation the Job's report describes
/// (`hyperfleet.io/observed-generation`, else the Job's `hyperfleet.io/generation`), as the
/// shipped task config sends them. Its `observed_time` is the framework's `now()` (one-second
/// precision), at least a second after `last` (the previous one): pulses here follow each other
/// within a second, real ones do not, and the API keeps only the first of two reports of one
/// second (`hyperfleet-framework.md` §7.4). What the API answered, for the output.
fn framework_reports(
    bed: &Bed,
    pulse: &Pulse,
    last: &mut Option<Timestamp>,
) -> anyhow::Result<String> {
    let job_name = crate::pulse_job::controlplane_job_name(CLUSTER_ID, pulse.generation);
    let job = bed
        .server
        .job(NAMESPACE, &job_name)
        .with_context(|| format!("Job {job_name} is gone"))?;
    let annotation = |key: &str| {
        job["metadata"]["annotations"][key]
            .as_str()
            .and_then(|v| v.parse::<i64>().ok())
    };
    let generation = annotation("hyperfleet.io/observed-generation")
        .or_else(|| annotation("hyperfleet.io/generation"))
        .unwrap_or(i64::from(pulse.generation));
    let conditions: Vec<Value> = job["status"]["conditions"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .filter(|c| {
                    matches!(
                        c["type"].as_str(),
                        Some("Applied" | "Available" | "Health" | "Finalized")
                    )
                })
                .map(|c| {
                    json!({"type": c["type"], "status": c["status"], "reason": c["reason"],
                           "message": c["message"]})
                })
                .collect()
        })
        .unwrap_or_default();
    let mut at = now_seconds();
    if let Some(previous) = *last {
        at = at.max(previous + SignedDuration::from_secs(1));
    }
    *last = Some(at);
    let body = json!({
        "adapter": hypershift_adapter::diagnose::DEFAULT_ADAPTER,
        "observed_generation": generation,
        "observed_time": at.to_string(),
        "conditions": conditions,
        "data": {}
    });
    let status = put_status(bed, &body)?;
    let outcome = match status {
        201 => "stored".to_owned(),
        204 => "discarded by the API (HTTP 204)".to_owned(),
        other => format!("refused: HTTP {other}"),
    };
    Ok(format!(
        "the framework's status PUT of Job {job_name} (observed_generation {generation}): {outcome}"
    ))
}

/// The `diagnose cluster` arguments pointed at the fakes (Maestro's URL at a closed port when it
/// is stopped).
pub(super) fn diagnose_args(bed: &Bed, maestro_stopped: bool) -> Vec<String> {
    let maestro = if maestro_stopped {
        bed.closed_url.clone()
    } else {
        bed.maestro.rest_url()
    };
    [
        "hypershift-adapter",
        "diagnose",
        "cluster",
        CLUSTER_ID,
        "--hyperfleet-api",
        bed.hyperfleet.url(),
        "--hyperfleet-token-file",
        &super::path(&bed.hyperfleet_token),
        "--kubeconfig",
        &super::path(&bed.kubeconfig),
        "--maestro-api-url",
        &maestro,
        "--maestro-ca-file",
        &super::path(&bed.maestro_ca),
        "--maestro-token-file",
        &super::path(&bed.maestro_token),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

/// Runs `diagnose cluster` as the binary does, prints its text output, checks `check`.
async fn diagnose(bed: &Bed, n: usize, check: &Check) -> anyhow::Result<(String, bool)> {
    let args = diagnose_args(bed, check.maestro_stopped);
    let cli = <hypershift_adapter::cli::Cli as clap::Parser>::try_parse_from(&args)
        .context("the diagnose arguments do not parse")?;
    let hypershift_adapter::cli::Command::Diagnose(diagnose_args) = cli.command else {
        anyhow::bail!("the arguments are not a diagnose command");
    };
    let now = Timestamp::now();
    let at = match check.later_minutes {
        Some(minutes) => now + SignedDuration::from_mins(minutes),
        None => now,
    };
    let maestro_note = if check.maestro_stopped {
        " --maestro-api-url <a port nobody listens on>"
    } else {
        ""
    };
    println!(
        "   $ hypershift-adapter diagnose cluster {CLUSTER_ID}{maestro_note}   # URLs, kubeconfig, CA and token files of the fakes"
    );
    if let Some(minutes) = check.later_minutes {
        println!(
            "   # read as at {minutes} minutes from now (the diagnosis takes the time it judges at)"
        );
    }
    let d = hypershift_adapter::diagnose::run(&diagnose_args, at).await;
    let text = d.text();
    for line in text.lines() {
        println!("   | {line}");
    }
    println!("   exit code {}", d.exit_code);
    let mut problems = Vec::new();
    if d.verdict.link != check.link {
        problems.push(format!(
            "the verdict names {:?}, expected {:?}",
            d.verdict.link, check.link
        ));
    }
    if d.exit_code != check.exit_code {
        problems.push(format!(
            "exit code {}, expected {}",
            d.exit_code, check.exit_code
        ));
    }
    for word in &check.words {
        if !text.contains(word) {
            problems.push(format!("the output does not say {word:?}"));
        }
    }
    let summary = match check.link {
        Some(link) => format!("diagnose: stuck at {link} (exit {})", d.exit_code),
        None => format!("diagnose: healthy (exit {})", d.exit_code),
    };
    let ok = problems.is_empty();
    println!(
        "   diagnosis {n}: {}   {}",
        d.verdict.summary.split(':').next().unwrap_or_default(),
        if ok { "[as expected]" } else { "[UNEXPECTED]" }
    );
    for p in &problems {
        println!("     ! {p}");
    }
    println!();
    Ok((summary, ok))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_link_the_issue_names_is_broken_once_and_one_step_is_healthy() {
        let links: Vec<Option<&str>> = steps().iter().map(|s| s.check.link).collect();
        assert_eq!(
            links,
            [
                Some("hyperfleet.preconditions"),
                Some("framework.job"),
                Some("agent.applied"),
                None,
                Some("job.report"),
                Some("maestro.work"),
                Some("agent.applied"),
                Some("hypershift.hostedcluster"),
                Some("hypershift.hostedcluster"),
            ]
        );
    }

    #[test]
    fn the_preconditions_are_the_shipped_task_configs() {
        let reported: Vec<&str> = steps()
            .iter()
            .flat_map(|s| s.acts.iter())
            .filter_map(|a| match a {
                Act::Report(adapters) => Some(adapters.iter().copied()),
                _ => None,
            })
            .flatten()
            .collect();
        let mut sorted = reported.clone();
        sorted.sort_unstable();
        let mut want = hypershift_adapter::diagnose::CLUSTER_PRECONDITIONS.to_vec();
        want.sort_unstable();
        assert_eq!(sorted, want);
    }
}
