//! The links of the management cluster and of the way back: the work in Maestro (on whatever
//! consumer it is), the agent applying it, the HostedCluster / NodePool as fed back, and the
//! status HyperFleet stored. Pure. The object's conditions are the pulse's own report of the work
//! ([`super::plan::Pulsed::observed`], its condition tables); what diagnose adds is how long a
//! state has lasted (`--agent-stale-after`, `--machines-stuck-after`, `--deletion-stuck-after`).

use std::collections::BTreeSet;

use job_report::{Condition, ConditionStatus, OBSERVED_GENERATION_ANNOTATION, Report};
use k8s_openapi::api::batch::v1::Job;

use super::chain::{Link, Mark, known};
use super::judge::{
    Observations, Settings, hf_condition, hf_said, hyperfleet_unreadable, job_annotation,
    job_condition, unreadable,
};
use super::plan::Pulsed;
use super::read::Failure;
use crate::duration::{friendly, is_past};
use crate::hyperfleet::nodepools::NodePools;
use crate::hypershift::place_in;
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

/// The work the links of the management cluster judge.
#[derive(Debug)]
pub struct Work<'a> {
    /// The bundle that decides ([`current_work`]).
    pub bundle: &'a ResourceBundle,
    /// The bundle as a pulse reads its work; `None` when its status cannot be read.
    pub existing: Option<ExistingWork>,
}

impl<'a> Work<'a> {
    /// The work Maestro holds for the object, when it was read and holds one.
    pub fn of(s: &Settings, obs: &'a Observations) -> Option<Work<'a>> {
        let bundle = current_work(obs.works.as_ref().ok()?)?;
        let existing = bundle.to_existing_work(Some(s.source.clone())).ok();
        Some(Work { bundle, existing })
    }

    /// The work's name (its `metadata.name`; the bundle's `name` is its id for gRPC-created
    /// works).
    fn name(&self) -> &str {
        let name = self.bundle.metadata["name"].as_str();
        name.unwrap_or(self.bundle.name.as_str())
    }

    /// The generation the work holds (its `hyperfleet.io/generation` annotation).
    fn generation(&self) -> Option<i64> {
        let annotations = self.bundle.metadata["annotations"].as_object()?;
        work_generation(
            annotations
                .iter()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?))),
        )
    }

    /// When the agent last said something about the work, or when it was created/updated.
    fn last_change(&self) -> &str {
        let (updated, created) = (&self.bundle.updated_at, &self.bundle.created_at);
        updated
            .as_deref()
            .or(created.as_deref())
            .unwrap_or_default()
    }

    /// Whether `limit` has passed since the work last changed.
    fn unchanged_for(&self, s: &Settings, limit: std::time::Duration) -> bool {
        is_past(self.last_change(), limit, s.now)
    }
}

/// The evidence of a link after `maestro.work` when Maestro could not be read: not "no work",
/// which would say there is none.
pub const WORK_NOT_READ: &str = "the work was not read (see maestro.work)";

/// The id of `maestro.work` ([`work_link`]).
const WORK_LINK: &str = "maestro.work";

/// `maestro.work`: the work exists, and where (its consumer); judged after `job.report`
/// (`report`): what the pulse has yet to do is broken once the report holds, else in progress.
pub fn work_link(s: &Settings, obs: &Observations, work: Option<&Work>, report: &Link) -> Link {
    const ID: &str = WORK_LINK;
    let works = match &obs.works {
        Ok(works) => works,
        Err(failure) => return maestro_unread(s, obs, failure),
    };
    let pending = if report.mark == Mark::Ok {
        Mark::Broken
    } else {
        Mark::Waiting
    };
    let Some(work) = work else {
        return no_work(s, obs, pending);
    };
    let bundle = work.bundle;
    let mut evidence = format!(
        "work {} on consumer {} (bundle {}), version {}, generation {}",
        work.name(),
        bundle.consumer_name,
        bundle.id,
        known(bundle.version),
        known(work.generation())
    );
    if let Some(at) = &bundle.deleted_at {
        evidence.push_str(&format!(", deleting since {at}"));
    }
    let consumers: BTreeSet<&str> = works
        .iter()
        .filter(|b| b.deleted_at.is_none())
        .map(|b| b.consumer_name.as_str())
        .collect();
    if consumers.len() > 1 {
        let names = consumers.iter().copied().collect::<Vec<_>>().join(", ");
        evidence.push_str(&format!(
            "; works on {} consumers: {names}",
            consumers.len()
        ));
    }
    match (obs.generation(), work.generation()) {
        (Some(g), Some(held)) if held < g && obs.deleted_time().is_none() => Link::new(
            ID,
            pending,
            format!("{evidence}; the object is at generation {g}"),
            "the work still holds an older generation: the pulse has not updated it",
            "see job.report: the pulse of this generation says why",
        ),
        _ => Link::ok(ID, evidence),
    }
}

/// The reason and message of the newest pulse Job's `Applied`, when it names the transport (the
/// condition table says which reasons do).
fn job_transport_reason<'a>(s: &Settings, obs: &'a Observations) -> Option<(&'a str, &'a str)> {
    job_condition(obs.job()?, "Applied")
        .filter(|(status, reason, _)| *status == "False" && s.kind.table().is_transport(reason))
        .map(|(_, reason, message)| (reason, message))
}

/// Maestro could not be read from here: broken when the pulse could not reach it either.
fn maestro_unread(s: &Settings, obs: &Observations, failure: &Failure) -> Link {
    let Some((reason, message)) = job_transport_reason(s, obs)
        .filter(|(r, _)| matches!(*r, "MaestroUnavailable" | "MaestroAuthFailed"))
    else {
        let setting = "MAESTRO_API_URL / the Maestro TLS and token flags";
        return unreadable(WORK_LINK, "Maestro", setting, failure);
    };
    Link::broken(
        WORK_LINK,
        format!(
            "the pulse reported {reason}: {message}; Maestro not read from here either: {failure}"
        ),
        "the pulse Job cannot reach Maestro either",
        "check the Maestro server (MAESTRO_API_URL, MAESTRO_GRPC_URL) and the Job's Maestro credentials",
    )
}

/// No work: deleted, the pulse's transport failed, or the pulse has not created it (`pending`).
fn no_work(s: &Settings, obs: &Observations, pending: Mark) -> Link {
    let none = format!("no work labelled {} under source {}", s.selector, s.source);
    if obs.deleted_time().is_some() {
        return Link::ok(WORK_LINK, format!("{none}: deleted"));
    }
    let Some((reason, message)) = job_transport_reason(s, obs) else {
        let meaning = "the pulse has not created the work: see job.report";
        let action = "check MAESTRO_SOURCE_ID: it must be the Job's";
        return Link::new(WORK_LINK, pending, none, meaning, action);
    };
    Link::broken(
        WORK_LINK,
        format!(
            "no work under source {}; the pulse reported {reason}: {message}",
            s.source
        ),
        if reason == "ConsumerNotFound" {
            "the management cluster the adapter targets is not registered in Maestro"
        } else {
            "the pulse could not create the work"
        },
        "check MANAGEMENT_CLUSTER_CONSUMER of the Job against Maestro's consumers (GET /api/maestro/v1/consumers)",
    )
}

/// The id of `agent.applied` ([`agent_link`]).
const AGENT_LINK: &str = "agent.applied";

/// `agent.applied`: the work agent applied the work's current version.
pub fn agent_link(s: &Settings, obs: &Observations, work: Option<&Work>) -> Link {
    const ID: &str = AGENT_LINK;
    let Some(work) = work else {
        return match obs.works {
            Err(_) => Link::bare(ID, Mark::Unknown, WORK_NOT_READ),
            Ok(_) => Link::ok(ID, "no work to apply"),
        };
    };
    let Some(existing) = &work.existing else {
        let evidence = "the work's status could not be read (malformed feedback)";
        return Link::bare(ID, Mark::Unknown, evidence);
    };
    let (consumer, since) = (&work.bundle.consumer_name, work.last_change());
    let Some(applied) = existing.condition("Applied") else {
        let evidence = format!("no Applied from the agent of {consumer} since {since}");
        let waiting = format!("the agent has {} to apply", friendly(s.agent_stale_after));
        return not_applied_yet(s, work, evidence, waiting);
    };
    let failures = apply_failures(existing);
    if !failures.is_empty() {
        return Link::broken(
            ID,
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
            "the agent of {consumer} applied version {o}, the work is at {v} since {since}"
        );
        let waiting = "the agent has not applied the newest version yet".to_owned();
        return not_applied_yet(s, work, evidence, waiting);
    }
    let evidence = format!(
        "Applied={} {} at version {}; last status from the agent at {since}",
        applied.status,
        applied.reason,
        known(observed.or(version)),
    );
    let Some(message) = management_cluster_outage(s, obs) else {
        return Link::ok(ID, evidence);
    };
    Link::broken(
        ID,
        format!(
            "{evidence}; the pulse reports Health=False {MANAGEMENT_CLUSTER_UNAVAILABLE}: {message}"
        ),
        format!(
            "management cluster {consumer} is unavailable: the status fed back is the last its work agent sent before the outage"
        ),
        format!(
            "restore management cluster {consumer} or its work agent; the report recovers by itself"
        ),
    )
}

/// The agent has not applied the work yet: in progress (… with `waiting` as its meaning) until
/// `--agent-stale-after` after the work last changed, then broken (agent down).
fn not_applied_yet(s: &Settings, work: &Work, evidence: String, waiting: String) -> Link {
    if !work.unchanged_for(s, s.agent_stale_after) {
        return Link::new(AGENT_LINK, Mark::Waiting, evidence, waiting, "");
    }
    let (consumer, limit) = (&work.bundle.consumer_name, friendly(s.agent_stale_after));
    Link::broken(
        AGENT_LINK,
        format!("{evidence} (more than {limit})"),
        format!(
            "the work agent of {consumer} is not applying: it is down, or disconnected from Maestro"
        ),
        format!(
            "check the work agent on management cluster {consumer} (its Deployment, logs, and its connection to Maestro)"
        ),
    )
}

/// The message of the pulse's `Health=False ManagementClusterUnavailable` (the management cluster
/// holding the work is unavailable, so what its agent fed back is old and looks as before): from
/// the newest pulse Job for the object's generation that reported, else this adapter's stored
/// status in HyperFleet (the Job gone with its TTL).
fn management_cluster_outage(s: &Settings, obs: &Observations) -> Option<String> {
    let health = match obs.job().and_then(|job| job_condition(job, "Health")) {
        Some(health) => health,
        None => hf_said(hf_condition(
            &obs.stored(&s.adapter)?["conditions"],
            "Health",
        )?),
    };
    let (status, reason, message) = health;
    (status == "False" && reason == MANAGEMENT_CLUSTER_UNAVAILABLE).then(|| message.to_owned())
}

/// `hypershift.hostedcluster` / `hypershift.nodepool`: the object as fed back, as the pulse's own
/// tables read it (a pulse of the work's generation on its management cluster); while deleting,
/// what holds the deletion and for how long.
pub fn object_link(s: &Settings, obs: &Observations, work: Option<&Work>) -> Link {
    let (id, kind) = s.kind.object();
    if let Some(deleted) = obs.deleted_time() {
        return deletion_link(s, obs, deleted, work);
    }
    if obs.works.is_err() {
        return Link::bare(id, Mark::Unknown, WORK_NOT_READ);
    }
    let no_status = format!("no {kind} status to read");
    let Some(work) = work else {
        return Link::bare(id, Mark::Waiting, no_status);
    };
    let Some(existing) = &work.existing else {
        return Link::bare(id, Mark::Unknown, no_status);
    };
    let consumer = &work.bundle.consumer_name;
    let at = WorkRef {
        consumer,
        name: work.name(),
    };
    let report = Pulsed::of(s, obs, consumer).observed(at, existing, work.generation());
    let (Some(available), Some(health)) =
        (report.condition("Available"), report.condition("Health"))
    else {
        let evidence = "the adapter's tables gave no Available/Health";
        return Link::bare(id, Mark::Unknown, evidence);
    };
    let evidence = fed_back(&report, available, health);
    let tables = s.kind.condition_tables();
    if available.status == ConditionStatus::False && available.reason == AWAITING_OPERATOR {
        return operator_lag_link(s, evidence, health);
    }
    if health.status == ConditionStatus::False {
        return Link::broken(
            id,
            format!("Health=False {}: {}", health.reason, health.message),
            format!(
                "the {kind}'s operator reports a problem ({})",
                health.reason
            ),
            format!(
                "the message quotes the operator's condition and says what to do; {tables}: condition reasons and what to do"
            ),
        );
    }
    let reason = &available.reason;
    match available.status {
        ConditionStatus::True => Link::ok(id, evidence),
        ConditionStatus::Unknown => Link::new(
            id,
            Mark::Unknown,
            evidence,
            "the agent's feedback cannot be used",
            "check the work agent's status feedback for this work",
        ),
        // No problem reported (Health holds): on its way, until `--machines-stuck-after`.
        ConditionStatus::False if !work.unchanged_for(s, s.machines_stuck_after) => {
            let meaning = format!("the {kind} is not ready yet ({reason})");
            Link::new(id, Mark::Waiting, evidence, meaning, "")
        }
        ConditionStatus::False => Link::broken(
            id,
            evidence,
            format!("the {kind} is not available ({reason})"),
            format!("{tables}: condition reasons and what to do"),
        ),
    }
}

/// `Available=… reason: message; Health=… reason`, and the version (→ the desired one).
fn fed_back(report: &Report, available: &Condition, health: &Condition) -> String {
    let mut evidence = format!(
        "Available={} {}: {}; Health={} {}",
        available.status.as_str(),
        available.reason,
        available.message,
        health.status.as_str(),
        health.reason
    );
    let data = |key: &str| {
        let value = report.data.as_ref()?.get(key)?.as_str();
        value.filter(|v| !v.is_empty())
    };
    if let Some(version) = data("version") {
        evidence.push_str(&format!("; version {version}"));
        if let Some(desired) = data("desired_version").filter(|d| *d != version) {
            evidence.push_str(&format!(" → {desired}"));
        }
    }
    evidence
}

/// The object's operator has not observed the spec the agent applied: in progress (…) within
/// `--operator-stuck-after`, held on the operator (✗) past it (the pulse's Health False
/// [`OPERATOR_NOT_RECONCILING`]).
fn operator_lag_link(s: &Settings, evidence: String, health: &Condition) -> Link {
    let (id, kind) = s.kind.object();
    if health.status != ConditionStatus::False || health.reason != OPERATOR_NOT_RECONCILING {
        let meaning =
            format!("the HyperShift operator has not yet observed the {kind} the agent applied");
        return Link::new(id, Mark::Waiting, evidence, meaning, "");
    }
    Link::broken(
        id,
        evidence,
        format!(
            "the HyperShift operator has not observed the {kind} the agent applied, for longer than --operator-stuck-after"
        ),
        format!(
            "check that the HyperShift operator runs on the management cluster and read its log for this object; {}: AwaitingOperator",
            s.kind.condition_tables()
        ),
    )
}

/// The object link of an object deleted at `deleted`: what holds the deletion (the NodePools
/// HyperFleet still lists, else what the work holds), in progress until `--deletion-stuck-after`.
fn deletion_link(s: &Settings, obs: &Observations, deleted: &str, work: Option<&Work>) -> Link {
    let (id, kind) = s.kind.object();
    let (evidence, by, action) = match (listed_nodepools(obs), work) {
        (Some(ids), _) => (
            format!(
                "the API still lists {} NodePools ({}): NodePoolsExist",
                ids.len(),
                ids.join(", ")
            ),
            "the cluster's NodePools".to_owned(),
            "diagnose each NodePool: diagnose nodepool <id> --cluster-id <cluster-id>".to_owned(),
        ),
        (
            None,
            Some(
                work @ Work {
                    existing: Some(existing),
                    ..
                },
            ),
        ) => work_holds(kind, work, existing),
        (None, _) if obs.works.is_err() => {
            return Link::bare(id, Mark::Unknown, "the work was not read");
        }
        (None, _) => {
            let evidence =
                format!("deleted: no work left on the management cluster for this {kind}");
            return Link::ok(id, evidence);
        }
    };
    if !is_past(deleted, s.deletion_stuck_after, s.now) {
        let evidence = format!("{evidence}; deleted at {deleted}");
        let meaning = "the deletion is in progress";
        return Link::new(id, Mark::Waiting, evidence, meaning, "");
    }
    let limit = friendly(s.deletion_stuck_after);
    let evidence = format!("{evidence}; deleted at {deleted}, more than {limit} ago");
    Link::broken(
        id,
        evidence,
        format!("the deletion is held by {by}"),
        action,
    )
}

/// The ids of the NodePools HyperFleet still lists for a deleting cluster, when it lists any
/// (read as the pulse reads the list).
fn listed_nodepools(obs: &Observations) -> Option<Vec<String>> {
    let pools = NodePools::from_list(obs.nodepools.as_ref()?.as_ref().ok()?)?;
    let ids: Vec<String> = pools.items.into_iter().map(|np| np.id).collect();
    (!ids.is_empty()).then_some(ids)
}

/// What holds the deletion of the `kind` object the work holds, as the evidence, who holds it,
/// and what to do: its finalizers (fed back), else the work agent removing what it applied.
fn work_holds(kind: &str, work: &Work, existing: &ExistingWork) -> (String, String, String) {
    let (namespace, name) = place_in(&existing.workload, kind, ("", ""));
    let deletion =
        ObjectDeletion::from_manifest(existing.manifests.iter().find(|m| m.resource.kind == kind));
    let mut evidence = match &work.bundle.deleted_at {
        Some(at) => format!("work {} deleting since {at}", work.name()),
        None => format!("work {} not deleted yet", work.name()),
    };
    if let Some(ts) = &deletion.deletion_timestamp {
        evidence.push_str(&format!("; {kind} {namespace}/{name} deleting since {ts}"));
    }
    if !deletion.finalizers.is_empty() {
        evidence.push_str(&format!("; finalizers {}", deletion.finalizers.join(", ")));
        return (
            evidence,
            format!("the {kind}'s finalizers (the HyperShift operator's cleanup)"),
            "read the HyperShift operator's logs on the management cluster for what its cleanup waits on".to_owned(),
        );
    }
    // The agent reports no finalizers while it deletes (it keeps the feedback it had before):
    // the work stays until everything it applied is gone from the management cluster.
    let consumer = &work.bundle.consumer_name;
    (
        evidence,
        format!(
            "the work agent of {consumer}: the work stays until the objects it applied are gone from that management cluster"
        ),
        format!(
            "on management cluster {consumer}, look at the {kind} {namespace}/{name} (its deletionTimestamp and finalizers) and the HyperShift operator's logs; if it is gone, check the work agent"
        ),
    )
}

/// `hyperfleet.status`: the API stored this adapter's report and concludes from it.
pub fn status_link(s: &Settings, obs: &Observations) -> Link {
    const ID: &str = "hyperfleet.status";
    if let Err(f) = &obs.statuses {
        return hyperfleet_unreadable(ID, f);
    }
    let job = obs.job();
    let reported = job.and_then(|job| job_annotation(job, OBSERVED_GENERATION_ANNOTATION));
    let Some(stored) = obs.stored(&s.adapter) else {
        let Some(jg) = reported else {
            let evidence = format!("no report of adapter {} yet", s.adapter);
            return Link::bare(ID, Mark::Waiting, evidence);
        };
        return Link::broken(
            ID,
            format!(
                "no report of adapter {} stored, although the Job reported generation {jg}",
                s.adapter
            ),
            "the framework's PUT failed or was refused",
            "read the framework Deployment's logs for this id (the PUT's answer)",
        );
    };
    let sg = stored["observed_generation"].as_i64();
    let available = hf_condition(&stored["conditions"], "Available");
    let said = |key: &str| available.and_then(|c| c[key].as_str());
    let stored_text = format!(
        "stored: generation {}, Available={} {} (reported {})",
        known(sg),
        said("status").unwrap_or("?"),
        said("reason").unwrap_or_default(),
        stored["last_report_time"].as_str().unwrap_or("?")
    );
    if let Some(link) = discarded(job, reported, sg, &stored_text) {
        return link;
    }
    let wanted = if obs.deleted_time().is_some() {
        "Finalized"
    } else {
        "Available"
    };
    let g = obs.generation();
    let done = hf_condition(&stored["conditions"], wanted).is_some_and(|c| c["status"] == "True")
        && (g.is_none() || sg == g);
    if done {
        return Link::ok(ID, stored_text);
    }
    let meaning = format!("this adapter has not reported {wanted}=True at the current generation");
    Link::new(ID, Mark::Waiting, stored_text, meaning, "")
}

/// `hyperfleet.status` broken when the API discarded the Job's report (`reported`: the generation
/// it describes) against the one it holds at `held` (framework doc §7.4): an older generation,
/// or an `Available=Unknown` once the adapter has reported.
fn discarded(
    job: Option<&Job>,
    reported: Option<i64>,
    held: Option<i64>,
    stored_text: &str,
) -> Option<Link> {
    const ID: &str = "hyperfleet.status";
    if let (Some(jg), Some(sg)) = (reported, held)
        && jg < sg
    {
        return Some(Link::broken(
            ID,
            format!(
                "discarded: the Job reports generation {jg}, the API holds generation {sg}; {stored_text}"
            ),
            "the API discards a report older than the one it holds (framework doc §7.4)",
            "the Job of the current generation must report: see framework.job",
        ));
    }
    let job = job?;
    let unknown = job_condition(job, "Available").is_some_and(|(status, _, _)| status == "Unknown");
    (unknown && job_condition(job, "Applied").is_some()).then(|| {
        Link::broken(
            ID,
            format!(
                "discarded: the Job's Available=Unknown is not stored once this adapter has reported (§7.4 rule 13); {stored_text}"
            ),
            "the API keeps the older report while the adapter cannot observe",
            "the links above say why the adapter could not observe",
        )
    })
}
