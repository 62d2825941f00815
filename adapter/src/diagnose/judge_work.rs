//! The links of the management cluster and of the way back: the work in Maestro (on whatever
//! consumer it is), the agent applying it, the HostedCluster / NodePool as fed back (read with
//! the adapter's own condition tables), and the status HyperFleet stored. Pure.

use job_report::{ConditionStatus, Report};
use serde_json::Value;

use super::chain::{Link, Mark};
use super::judge::{
    Kind, Observations, Settings, deleted_time, generation, hf_condition, job_condition,
    job_reported_generation, newest_job, stored_status, unreadable,
};
use crate::duration::{friendly, is_past};
use crate::hypershift::{hostedcluster, nodepool as np_object, place_in};
use crate::placement::MANAGEMENT_CLUSTER_UNAVAILABLE;
use crate::work::ExistingWork;
use crate::work::feedback::{ObjectDeletion, apply_failures};
use crate::work::maestro::bundle::ResourceBundle;
use crate::work::manifestwork::work_generation;
use crate::work::outcome::{AWAITING_OPERATOR, OPERATOR_NOT_RECONCILING, WorkRef};

/// The bundle that decides: not being deleted first, then the newest.
pub fn current_work(works: &[ResourceBundle]) -> Option<&ResourceBundle> {
    works
        .iter()
        .max_by_key(|b| (b.deleted_at.is_none(), b.created_at.clone()))
}

/// The work's name (its `metadata.name`; the bundle's `name` is its id for gRPC-created works).
fn work_name(bundle: &ResourceBundle) -> &str {
    bundle.metadata["name"]
        .as_str()
        .unwrap_or(bundle.name.as_str())
}

/// The adapter reason of the newest pulse Job's `Applied`, when it names the transport.
fn job_transport_reason<'a>(s: &Settings, obs: &'a Observations) -> Option<(&'a str, &'a str)> {
    let pulses = obs.pulses.as_ref().ok()?;
    let g = obs.object.as_ref().ok().and_then(generation);
    let job = newest_job(&pulses.jobs, g).0?;
    job_condition(job, "Applied")
        .filter(|(status, reason, _)| *status == "False" && s.kind.table().is_transport(reason))
        .map(|(_, reason, message)| (reason, message))
}

/// `maestro.work`: the work exists, and where (its consumer).
pub fn work_link(s: &Settings, obs: &Observations, report: &Link) -> Link {
    const ID: &str = "maestro.work";
    let deleting = obs.object.as_ref().ok().and_then(deleted_time).is_some();
    let works = match &obs.works {
        Ok(works) => works,
        Err(f) => {
            if let Some((reason, message)) = job_transport_reason(s, obs)
                .filter(|(r, _)| matches!(*r, "MaestroUnavailable" | "MaestroAuthFailed"))
            {
                return Link::new(
                    ID,
                    Mark::Broken,
                    format!(
                        "the pulse reported {reason}: {message}; Maestro not read from here either: {f}"
                    ),
                    "the pulse Job cannot reach Maestro either",
                    "check the Maestro server (MAESTRO_API_URL, MAESTRO_GRPC_URL) and the Job's Maestro credentials",
                );
            }
            return unreadable(
                ID,
                "Maestro",
                "MAESTRO_API_URL / the Maestro TLS and token flags",
                f,
            );
        }
    };
    let Some(work) = current_work(works) else {
        if deleting {
            return Link::ok(
                ID,
                format!(
                    "no work labelled {} under source {}: deleted",
                    s.selector, s.source
                ),
            );
        }
        if let Some((reason, message)) = job_transport_reason(s, obs) {
            let meaning = if reason == "ConsumerNotFound" {
                "the management cluster the adapter targets is not registered in Maestro"
            } else {
                "the pulse could not create the work"
            };
            return Link::new(
                ID,
                Mark::Broken,
                format!(
                    "no work under source {}; the pulse reported {reason}: {message}",
                    s.source
                ),
                meaning,
                "check MANAGEMENT_CLUSTER_CONSUMER of the Job against Maestro's consumers (GET /api/maestro/v1/consumers)",
            );
        }
        let mark = if report.mark == Mark::Ok {
            Mark::Broken
        } else {
            Mark::Waiting
        };
        return Link::new(
            ID,
            mark,
            format!("no work labelled {} under source {}", s.selector, s.source),
            "the pulse has not created the work: see job.report",
            "check MAESTRO_SOURCE_ID: it must be the Job's",
        );
    };
    let mut evidence = format!(
        "work {} on consumer {} (bundle {}), version {}, generation {}",
        work_name(work),
        work.consumer_name,
        work.id,
        work.version
            .map_or_else(|| "?".to_owned(), |v| v.to_string()),
        work_gen(work).map_or_else(|| "?".to_owned(), |g| g.to_string())
    );
    if let Some(at) = &work.deleted_at {
        evidence.push_str(&format!(", deleting since {at}"));
    }
    let consumers: std::collections::BTreeSet<&str> = works
        .iter()
        .filter(|b| b.deleted_at.is_none())
        .map(|b| b.consumer_name.as_str())
        .collect();
    if consumers.len() > 1 {
        evidence.push_str(&format!(
            "; works on {} consumers: {}",
            consumers.len(),
            consumers.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    let g = obs.object.as_ref().ok().and_then(generation);
    if let (Some(g), Some(held), false) = (g, work_gen(work), deleting)
        && held < g
    {
        return Link::new(
            ID,
            if report.mark == Mark::Ok {
                Mark::Broken
            } else {
                Mark::Waiting
            },
            format!("{evidence}; the object is at generation {g}"),
            "the work still holds an older generation: the pulse has not updated it",
            "see job.report: the pulse of this generation says why",
        );
    }
    Link::ok(ID, evidence)
}

/// The id of the agent link ([`agent_link`]).
const AGENT_LINK: &str = "agent.applied";

fn work_gen(work: &ResourceBundle) -> Option<i64> {
    let annotations = work.metadata["annotations"].as_object()?;
    work_generation(
        annotations
            .iter()
            .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?))),
    )
}

/// When the agent last said something about `work`, or when the work was created/updated.
fn last_change(work: &ResourceBundle) -> &str {
    work.updated_at
        .as_deref()
        .or(work.created_at.as_deref())
        .unwrap_or_default()
}

/// The evidence of a link after `maestro.work` when Maestro could not be read: not "no work",
/// which would say there is none.
pub const WORK_NOT_READ: &str = "the work was not read (see maestro.work)";

/// `agent.applied`: the work agent applied the work's current version.
pub fn agent_link(s: &Settings, obs: &Observations, existing: Option<&ExistingWork>) -> Link {
    const ID: &str = AGENT_LINK;
    let Some(work) = obs.works.as_ref().ok().and_then(|w| current_work(w)) else {
        return if obs.works.is_err() {
            Link::new(ID, Mark::Unknown, WORK_NOT_READ, "", "")
        } else {
            Link::new(ID, Mark::Ok, "no work to apply", "", "")
        };
    };
    let Some(existing) = existing else {
        return Link::new(
            ID,
            Mark::Unknown,
            "the work's status could not be read (malformed feedback)",
            "",
            "",
        );
    };
    let consumer = &work.consumer_name;
    let late = is_past(last_change(work), s.agent_stale_after, s.now);
    let limit = friendly(s.agent_stale_after);
    let agent_down = (
        format!(
            "the work agent of {consumer} is not applying: it is down, or disconnected from Maestro"
        ),
        format!(
            "check the work agent on management cluster {consumer} (its Deployment, logs, and its connection to Maestro)"
        ),
    );
    let Some(applied) = existing.condition("Applied") else {
        let evidence = format!(
            "no Applied from the agent of {consumer} since {}",
            last_change(work)
        );
        return late_or_waiting(
            evidence,
            late,
            &limit,
            &agent_down,
            format!("the agent has {limit} to apply"),
        );
    };
    let failures = apply_failures(existing);
    if !failures.is_empty() {
        return Link::new(
            ID,
            Mark::Broken,
            format!(
                "the agent of {consumer} could not apply: {}",
                failures.join("; ")
            ),
            "the management cluster's API server refused the manifests (an admission policy, a missing namespace)",
            "the message is the API server's: fix the policy or the spec; the adapter reports ApplyFailed until it applies",
        );
    }
    let (version, observed) = (existing.version, existing.observed_version);
    if let (Some(v), Some(o)) = (version, observed)
        && o < v
    {
        let evidence = format!(
            "the agent of {consumer} applied version {o}, the work is at {v} since {}",
            last_change(work)
        );
        return late_or_waiting(
            evidence,
            late,
            &limit,
            &agent_down,
            "the agent has not applied the newest version yet".to_owned(),
        );
    }
    let evidence = format!(
        "Applied={} {} at version {}; last status from the agent at {}",
        applied.status,
        applied.reason,
        observed
            .or(version)
            .map_or_else(|| "?".to_owned(), |v| v.to_string()),
        last_change(work)
    );
    if let Some(message) = management_cluster_outage(s, obs) {
        return Link::new(
            ID,
            Mark::Broken,
            format!(
                "{evidence}; the pulse reports Health=False {MANAGEMENT_CLUSTER_UNAVAILABLE}: {message}"
            ),
            format!(
                "management cluster {consumer} is unavailable: the status fed back is the last its work agent sent before the outage"
            ),
            format!(
                "restore management cluster {consumer} or its work agent; the report recovers by itself"
            ),
        );
    }
    Link::ok(ID, evidence)
}

/// The message of the pulse's `Health=False ManagementClusterUnavailable` (the management cluster
/// holding the work is unavailable, so what its agent fed back is old and looks as before): from
/// the newest pulse Job for the object's generation that reported, else this adapter's stored
/// status in HyperFleet (the Job gone with its TTL).
fn management_cluster_outage(s: &Settings, obs: &Observations) -> Option<String> {
    let g = obs.object.as_ref().ok().and_then(generation);
    let job = obs
        .pulses
        .as_ref()
        .ok()
        .and_then(|p| newest_job(&p.jobs, g).0)
        .filter(|job| job_condition(job, "Health").is_some());
    let (status, reason, message) = match job {
        Some(job) => job_condition(job, "Health")?,
        None => {
            let stored = stored_status(obs.statuses.as_ref().ok()?, &s.adapter)?;
            let health = hf_condition(&stored["conditions"], "Health")?;
            (
                health["status"].as_str()?,
                health["reason"].as_str()?,
                health["message"].as_str().unwrap_or_default(),
            )
        }
    };
    (status == "False" && reason == MANAGEMENT_CLUSTER_UNAVAILABLE).then(|| message.to_owned())
}

/// `Type=Status Reason` of a report condition.
/// The agent link when the agent has not done something yet: ✗ (agent down) once `late`, with the
/// limit in the evidence, else … with `waiting` as its meaning.
fn late_or_waiting(
    evidence: String,
    late: bool,
    limit: &str,
    agent_down: &(String, String),
    waiting: String,
) -> Link {
    if late {
        Link::new(
            AGENT_LINK,
            Mark::Broken,
            format!("{evidence} (more than {limit})"),
            agent_down.0.as_str(),
            agent_down.1.as_str(),
        )
    } else {
        Link::new(AGENT_LINK, Mark::Waiting, evidence, waiting, "")
    }
}

fn describe(report: &Report, type_: &str) -> Option<(ConditionStatus, String, String)> {
    report
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status, c.reason.clone(), c.message.clone()))
}

/// The report the adapter's own tables give for `existing` (a pulse of the work's generation,
/// on the work's management cluster).
fn interpret(
    s: &Settings,
    obs: &Observations,
    work: &ResourceBundle,
    existing: &ExistingWork,
) -> Report {
    let work_ref = WorkRef {
        consumer: &work.consumer_name,
        name: work_name(work),
    };
    let pulsed = super::plan::Pulsed::of(s, obs, &work.consumer_name);
    pulsed.observed(work_ref, existing, work_gen(work))
}

/// `hypershift.hostedcluster` / `hypershift.nodepool`: the object as fed back, read with the
/// adapter's condition tables; while deleting, what holds the deletion and for how long.
pub fn object_link(s: &Settings, obs: &Observations, existing: Option<&ExistingWork>) -> Link {
    let id = match s.kind {
        Kind::Cluster => "hypershift.hostedcluster",
        Kind::NodePool => "hypershift.nodepool",
    };
    let kind = match s.kind {
        Kind::Cluster => hostedcluster::KIND,
        Kind::NodePool => np_object::KIND,
    };
    let work = obs.works.as_ref().ok().and_then(|w| current_work(w));
    if let Some(deleted) = obs.object.as_ref().ok().and_then(deleted_time) {
        return deletion_link(s, obs, id, kind, deleted, work.zip(existing));
    }
    let (Some(work), Some(existing)) = (work, existing) else {
        if obs.works.is_err() {
            return Link::new(id, Mark::Unknown, WORK_NOT_READ, "", "");
        }
        let mark = if work.is_some() && existing.is_none() {
            Mark::Unknown
        } else {
            Mark::Waiting
        };
        return Link::new(id, mark, format!("no {kind} status to read"), "", "");
    };
    let report = interpret(s, obs, work, existing);
    let (Some(available), Some(health)) =
        (describe(&report, "Available"), describe(&report, "Health"))
    else {
        return Link::new(
            id,
            Mark::Unknown,
            "the adapter's tables gave no Available/Health",
            "",
            "",
        );
    };
    let mut evidence = format!(
        "Available={} {}: {}; Health={} {}",
        available.0.as_str(),
        available.1,
        available.2,
        health.0.as_str(),
        health.1
    );
    let data = |key: &str| {
        report
            .data
            .as_ref()
            .and_then(|d| d.get(key))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
    };
    if let Some(version) = data("version") {
        evidence.push_str(&format!("; version {version}"));
        if let Some(desired) = data("desired_version").filter(|d| *d != version) {
            evidence.push_str(&format!(" → {desired}"));
        }
    }
    if available.0 == ConditionStatus::False && available.1 == AWAITING_OPERATOR {
        return operator_lag_link(id, kind, s.kind.condition_tables(), evidence, &health);
    }
    if health.0 == ConditionStatus::False {
        return Link::new(
            id,
            Mark::Broken,
            format!("Health=False {}: {}", health.1, health.2),
            format!("the {kind}'s operator reports a problem ({})", health.1),
            format!(
                "the message quotes the operator's condition and says what to do; {}: condition reasons and what to do",
                s.kind.condition_tables()
            ),
        );
    }
    match available.0 {
        ConditionStatus::True => Link::ok(id, evidence),
        ConditionStatus::Unknown => Link::new(
            id,
            Mark::Unknown,
            evidence,
            "the agent's feedback cannot be used",
            "check the work agent's status feedback for this work",
        ),
        ConditionStatus::False => {
            let reason = available.1.as_str();
            if matches!(
                reason,
                "Provisioning"
                    | "Upgrading"
                    | "Updating"
                    | "AwaitingFeedback"
                    | "Scaling"
                    | "NotReady"
            ) && !is_past(last_change(work), s.machines_stuck_after, s.now)
            {
                Link::new(
                    id,
                    Mark::Waiting,
                    evidence,
                    format!("the {kind} is not ready yet ({reason})"),
                    "",
                )
            } else {
                Link::new(
                    id,
                    Mark::Broken,
                    evidence,
                    format!("the {kind} is not available ({reason})"),
                    format!(
                        "{}: condition reasons and what to do",
                        s.kind.condition_tables()
                    ),
                )
            }
        }
    }
}

/// The object's operator has not observed the spec the agent applied: in progress (…) within
/// `--operator-stuck-after`, held on the operator (✗) past it (the adapter's Health False
/// [`OPERATOR_NOT_RECONCILING`]).
fn operator_lag_link(
    id: &'static str,
    kind: &str,
    tables: &str,
    evidence: String,
    health: &(ConditionStatus, String, String),
) -> Link {
    if health.0 == ConditionStatus::False && health.1 == OPERATOR_NOT_RECONCILING {
        Link::new(
            id,
            Mark::Broken,
            evidence,
            format!(
                "the HyperShift operator has not observed the {kind} the agent applied, for longer than --operator-stuck-after"
            ),
            format!(
                "check that the HyperShift operator runs on the management cluster and read its log for this object; {tables}: AwaitingOperator"
            ),
        )
    } else {
        Link::new(
            id,
            Mark::Waiting,
            evidence,
            format!("the HyperShift operator has not yet observed the {kind} the agent applied"),
            "",
        )
    }
}

fn deletion_link(
    s: &Settings,
    obs: &Observations,
    id: &'static str,
    kind: &str,
    deleted: &str,
    work: Option<(&ResourceBundle, &ExistingWork)>,
) -> Link {
    let late = is_past(deleted, s.deletion_stuck_after, s.now);
    let limit = friendly(s.deletion_stuck_after);
    let held = |evidence: String, what: &str, action: &str| {
        if late {
            Link::new(
                id,
                Mark::Broken,
                format!("{evidence}; deleted at {deleted}, more than {limit} ago"),
                format!("the deletion is held by {what}"),
                action,
            )
        } else {
            Link::new(
                id,
                Mark::Waiting,
                format!("{evidence}; deleted at {deleted}"),
                "the deletion is in progress",
                "",
            )
        }
    };
    if let Some(Ok(list)) = &obs.nodepools {
        let listed: Vec<&str> = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|np| np["id"].as_str().unwrap_or_default())
            .collect();
        if !listed.is_empty() {
            return held(
                format!(
                    "the API still lists {} NodePools ({}): NodePoolsExist",
                    listed.len(),
                    listed.join(", ")
                ),
                "the cluster's NodePools",
                "diagnose each NodePool: diagnose nodepool <id> --cluster-id <cluster-id>",
            );
        }
    }
    let Some((work, existing)) = work else {
        return if obs.works.is_err() {
            Link::new(id, Mark::Unknown, "the work was not read", "", "")
        } else {
            Link::ok(
                id,
                format!("deleted: no work left on the management cluster for this {kind}"),
            )
        };
    };
    let (namespace, name) = place_in(&existing.workload, kind, ("", ""));
    let deletion =
        ObjectDeletion::from_manifest(existing.manifests.iter().find(|m| m.resource.kind == kind));
    let mut evidence = match &work.deleted_at {
        Some(at) => format!("work {} deleting since {at}", work_name(work)),
        None => format!("work {} not deleted yet", work_name(work)),
    };
    if let Some(ts) = &deletion.deletion_timestamp {
        evidence.push_str(&format!("; {kind} {namespace}/{name} deleting since {ts}"));
    }
    if !deletion.finalizers.is_empty() {
        evidence.push_str(&format!("; finalizers {}", deletion.finalizers.join(", ")));
        return held(
            evidence,
            &format!("the {kind}'s finalizers (the HyperShift operator's cleanup)"),
            "read the HyperShift operator's logs on the management cluster for what its cleanup waits on",
        );
    }
    // The agent reports no finalizers while it deletes (it keeps the feedback it had before):
    // the work stays until everything it applied is gone from the management cluster.
    let consumer = &work.consumer_name;
    held(
        evidence,
        &format!(
            "the work agent of {consumer}: the work stays until the objects it applied are gone from that management cluster"
        ),
        &format!(
            "on management cluster {consumer}, look at the {kind} {namespace}/{name} (its deletionTimestamp and finalizers) and the HyperShift operator's logs; if it is gone, check the work agent"
        ),
    )
}

/// `hyperfleet.status`: the API stored this adapter's report and concludes from it.
pub fn status_link(s: &Settings, obs: &Observations) -> Link {
    const ID: &str = "hyperfleet.status";
    let statuses = match &obs.statuses {
        Ok(list) => list,
        Err(f) => {
            return unreadable(
                ID,
                "the HyperFleet API",
                "HYPERFLEET_API_URL / HYPERFLEET_API_TOKEN_FILE",
                f,
            );
        }
    };
    let g = obs.object.as_ref().ok().and_then(generation);
    let job = obs
        .pulses
        .as_ref()
        .ok()
        .and_then(|p| newest_job(&p.jobs, g).0);
    let job_gen = job.and_then(job_reported_generation);
    let Some(stored) = stored_status(statuses, &s.adapter) else {
        return match job_gen {
            Some(jg) => Link::new(
                ID,
                Mark::Broken,
                format!(
                    "no report of adapter {} stored, although the Job reported generation {jg}",
                    s.adapter
                ),
                "the framework's PUT failed or was refused",
                "read the framework Deployment's logs for this id (the PUT's answer)",
            ),
            None => Link::new(
                ID,
                Mark::Waiting,
                format!("no report of adapter {} yet", s.adapter),
                "",
                "",
            ),
        };
    };
    let sg = stored["observed_generation"].as_i64();
    let stored_available = hf_condition(&stored["conditions"], "Available");
    let stored_text = format!(
        "stored: generation {}, Available={} {} (reported {})",
        sg.map_or_else(|| "?".to_owned(), |g| g.to_string()),
        stored_available
            .and_then(|c| c["status"].as_str())
            .unwrap_or("?"),
        stored_available
            .and_then(|c| c["reason"].as_str())
            .unwrap_or_default(),
        stored["last_report_time"].as_str().unwrap_or("?")
    );
    if let (Some(jg), Some(sg)) = (job_gen, sg)
        && jg < sg
    {
        return Link::new(
            ID,
            Mark::Broken,
            format!(
                "discarded: the Job reports generation {jg}, the API holds generation {sg}; {stored_text}"
            ),
            "the API discards a report older than the one it holds (framework doc §7.4)",
            "the Job of the current generation must report: see framework.job",
        );
    }
    if let Some(job) = job
        && job_condition(job, "Available").is_some_and(|(status, _, _)| status == "Unknown")
        && job_condition(job, "Applied").is_some()
    {
        return Link::new(
            ID,
            Mark::Broken,
            format!(
                "discarded: the Job's Available=Unknown is not stored once this adapter has reported (§7.4 rule 13); {stored_text}"
            ),
            "the API keeps the older report while the adapter cannot observe",
            "the links above say why the adapter could not observe",
        );
    }
    let deleting = obs.object.as_ref().ok().and_then(deleted_time).is_some();
    let wanted = if deleting { "Finalized" } else { "Available" };
    let done = hf_condition(&stored["conditions"], wanted).is_some_and(|c| c["status"] == "True")
        && (g.is_none() || sg == g);
    if done {
        Link::ok(ID, stored_text)
    } else {
        Link::new(
            ID,
            Mark::Waiting,
            stored_text,
            format!("this adapter has not reported {wanted}=True at the current generation"),
            "",
        )
    }
}
