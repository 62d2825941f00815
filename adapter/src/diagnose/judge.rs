//! The links of the HyperFleet side and of the pulse Job, judged from what the readers saw (pure:
//! no I/O, `now` given). The links of the management cluster are in [`super::judge_work`].

use std::time::Duration;

use jiff::Timestamp;
use job_report::OBSERVED_GENERATION_ANNOTATION;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::chain::{Link, Mark, known};
use super::read::{Failure, Pulses, Read};
use crate::hypershift::{hostedcluster, nodepool};
use crate::message::or_none;

/// The Job annotation naming the generation it was created for (the task configs' `metadata`).
pub const GENERATION_ANNOTATION: &str = "hyperfleet.io/generation";

/// What is diagnosed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Cluster,
    NodePool,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Cluster => "cluster",
            Kind::NodePool => "nodepool",
        }
    }

    /// This kind's condition table.
    pub fn table(self) -> crate::pulse::table::Table {
        match self {
            Kind::Cluster => crate::pulse::controlplane::table::TABLE,
            Kind::NodePool => crate::pulse::nodepool::table::TABLE,
        }
    }

    /// The id of the link of the object as fed back, and the object's kind.
    pub fn object(self) -> (&'static str, &'static str) {
        match self {
            Kind::Cluster => ("hypershift.hostedcluster", hostedcluster::KIND),
            Kind::NodePool => ("hypershift.nodepool", nodepool::KIND),
        }
    }

    /// The page with this kind's condition tables, which the actions name.
    pub fn condition_tables(self) -> &'static str {
        match self {
            Kind::Cluster => "docs/controlplane.md",
            Kind::NodePool => "docs/nodepool.md",
        }
    }
}

/// The settings every link is judged with.
#[derive(Debug, Clone)]
pub struct Settings {
    pub kind: Kind,
    pub id: String,
    pub cluster_id: String,
    /// The adapter's name in HyperFleet (`hypershift`).
    pub adapter: String,
    /// The adapters whose `Available=True` at the object's generation the task config waits on.
    pub preconditions: Vec<String>,
    /// The framework's namespace (the pulse Jobs').
    pub namespace: String,
    /// The Job and work label selector, as text (for messages).
    pub selector: String,
    pub source: String,
    pub agent_stale_after: Duration,
    pub deletion_stuck_after: Duration,
    pub machines_stuck_after: Duration,
    pub operator_stuck_after: Duration,
    pub now: Timestamp,
}

/// Everything read, one result per read.
#[derive(Debug)]
pub struct Observations {
    pub object: Read<Value>,
    pub statuses: Read<Value>,
    /// A deleting cluster's NodePools (`None` when not read: not a deleting cluster).
    pub nodepools: Option<Read<Value>>,
    pub pulses: Read<Pulses>,
    pub works: Read<Vec<crate::work::maestro::bundle::ResourceBundle>>,
}

impl Observations {
    /// The object's generation, when it was read.
    pub fn generation(&self) -> Option<i64> {
        self.object.as_ref().ok()?["generation"].as_i64()
    }

    /// The object's `deleted_time`, when it was read and is being deleted.
    pub fn deleted_time(&self) -> Option<&str> {
        self.object.as_ref().ok().and_then(deleted_time)
    }

    /// The pulse Job that decides ([`newest_job`] for the object's generation), when the Jobs
    /// were read.
    pub fn job(&self) -> Option<&Job> {
        newest_job(&self.pulses.as_ref().ok()?.jobs, self.generation()).0
    }

    /// The stored status of `adapter` in `…/statuses`, when they were read.
    pub fn stored(&self, adapter: &str) -> Option<&Value> {
        let items = self.statuses.as_ref().ok()?["items"].as_array()?;
        items
            .iter()
            .find(|s| s["adapter"].as_str() == Some(adapter))
    }
}

/// What a condition says: its `(status, reason, message)`.
pub type Said<'a> = (&'a str, &'a str, &'a str);

/// The condition `type_` of a HyperFleet object or status (`status.conditions[]` or `conditions[]`).
pub fn hf_condition<'a>(conditions: &'a Value, type_: &str) -> Option<&'a Value> {
    conditions
        .as_array()?
        .iter()
        .find(|c| c["type"].as_str() == Some(type_))
}

/// What a HyperFleet condition says.
pub fn hf_said(c: &Value) -> Said<'_> {
    let text = |key: &str| c[key].as_str().unwrap_or_default();
    (text("status"), text("reason"), text("message"))
}

/// `Type=Status Reason` of a HyperFleet condition, with its generation and message when present.
fn hf_describe(c: &Value) -> String {
    let (status, reason, message) = hf_said(c);
    let type_ = c["type"].as_str().unwrap_or_default();
    let mut text = format!("{type_}={status} {}", or_none(reason));
    if let Some(g) = c["observed_generation"].as_i64() {
        text.push_str(&format!(" at generation {g}"));
    }
    if !message.is_empty() {
        text.push_str(&format!(" ({message})"));
    }
    text
}

/// The HyperFleet condition an adapter's `Available` is copied into: `dns` → `DnsSuccessful`.
pub fn successful_type(adapter: &str) -> String {
    let mut chars = adapter.chars();
    chars.next().map_or_else(String::new, |first| {
        format!("{}{}Successful", first.to_uppercase(), chars.as_str())
    })
}

/// A link of a system that could not be read: `?` with the reason and what it takes.
pub fn unreadable(id: &'static str, what: &str, setting: &str, failure: &Failure) -> Link {
    let (meaning, action) = match failure.status {
        Some(401) => (
            format!("{what} refused the credentials"),
            format!("check {setting}: it must hold credentials {what} accepts"),
        ),
        Some(403) => (
            format!("{what} does not allow this read"),
            format!("grant read access (see docs/diagnose.md); {setting}"),
        ),
        Some(404) => (
            format!("{what} has no such object, or the URL is not its API"),
            format!("check the id and {setting}"),
        ),
        _ if failure.detail.contains("timed out") => (
            format!("{what} did not answer in time"),
            format!(
                "check that {what} is up and reachable at {setting}, or raise --timeout-per-system"
            ),
        ),
        _ => (
            format!("{what} could not be read"),
            format!("check {setting} and that {what} is up"),
        ),
    };
    Link::new(id, Mark::Unknown, failure.to_string(), meaning, action)
}

/// A link of the HyperFleet API that could not be read.
pub fn hyperfleet_unreadable(id: &'static str, failure: &Failure) -> Link {
    let setting = "HYPERFLEET_API_URL / HYPERFLEET_API_TOKEN_FILE";
    unreadable(id, "the HyperFleet API", setting, failure)
}

/// The object's `deleted_time`, when it is being deleted.
pub fn deleted_time(object: &Value) -> Option<&str> {
    object["deleted_time"].as_str().filter(|t| !t.is_empty())
}

/// `hyperfleet.object`: the object is readable; its generation, deletion and aggregated
/// conditions as evidence.
pub fn object_link(s: &Settings, obs: &Observations) -> Link {
    const ID: &str = "hyperfleet.object";
    let object = match &obs.object {
        Ok(object) => object,
        Err(f) => return hyperfleet_unreadable(ID, f),
    };
    let Some(g) = obs.generation() else {
        return Link::new(
            ID,
            Mark::Unknown,
            format!("the {} has no integer `generation`", s.kind.name()),
            "the answer is not a HyperFleet object",
            "check HYPERFLEET_API_URL: it must be the HyperFleet API",
        );
    };
    let mut evidence = match deleted_time(object) {
        Some(t) => format!("generation {g}, deleted at {t}"),
        None => format!("generation {g}, not deleted"),
    };
    let own = successful_type(&s.adapter);
    for type_ in ["Reconciled", "LastKnownReconciled", own.as_str()] {
        match hf_condition(&object["status"]["conditions"], type_) {
            Some(c) => evidence.push_str(&format!("; {}", hf_describe(c))),
            None => evidence.push_str(&format!("; no {type_}")),
        }
    }
    Link::ok(ID, evidence)
}

/// `hyperfleet.preconditions`: every precondition adapter reports `Available=True` at the
/// object's generation (the task config's expressions), or the object is being deleted.
pub fn preconditions_link(s: &Settings, obs: &Observations) -> Link {
    const ID: &str = "hyperfleet.preconditions";
    let Ok(object) = &obs.object else {
        return Link::bare(ID, Mark::Unknown, "the object was not read");
    };
    let Some(g) = obs.generation() else {
        return Link::bare(ID, Mark::Unknown, "the object has no generation");
    };
    if deleted_time(object).is_some() {
        let evidence = "deleting: the task config skips the preconditions (isDeleting)";
        return Link::ok(ID, evidence);
    }
    let unmet: Vec<String> = s
        .preconditions
        .iter()
        .filter_map(|adapter| unmet(obs, object, adapter, g))
        .collect();
    if unmet.is_empty() {
        let met = s.preconditions.join(", ");
        return Link::ok(ID, format!("{met} report Available=True at generation {g}"));
    }
    Link::broken(
        ID,
        format!("not met at generation {g}: {}", unmet.join(" | ")),
        format!(
            "the framework creates no pulse Job and sends nothing until these adapters report Available=True at generation {g}"
        ),
        "look at the adapters named: their own reports (GET …/statuses) say why they are not Available at this generation",
    )
}

/// Why the precondition `adapter` is not met at generation `g`: its condition on the object, and
/// its own report; `None` when it is met.
fn unmet(obs: &Observations, object: &Value, adapter: &str, g: i64) -> Option<String> {
    let type_ = successful_type(adapter);
    let condition = hf_condition(&object["status"]["conditions"], &type_);
    let at_g = |c: &&Value| c["observed_generation"].as_i64().unwrap_or(0) == g;
    if condition
        .filter(at_g)
        .is_some_and(|c| c["status"] == "True")
    {
        return None;
    }
    let seen = condition.map_or_else(|| format!("no {type_}"), hf_describe);
    let stored = match (&obs.statuses, obs.stored(adapter)) {
        (Err(_), _) => String::new(),
        (Ok(_), None) => "; it has never reported".to_owned(),
        (Ok(_), Some(st)) => format!(
            "; its report: generation {}, {}",
            st["observed_generation"],
            hf_condition(&st["conditions"], "Available")
                .map_or_else(|| "no Available".to_owned(), hf_describe)
        ),
    };
    Some(format!("{adapter}: {seen}{stored}"))
}

/// An integer annotation of a pulse Job: [`GENERATION_ANNOTATION`], the generation it was created
/// for; [`OBSERVED_GENERATION_ANNOTATION`], the one its report describes.
pub fn job_annotation(job: &Job, key: &str) -> Option<i64> {
    job.metadata.annotations.as_ref()?.get(key)?.parse().ok()
}

fn job_name(job: &Job) -> &str {
    job.metadata.name.as_deref().unwrap_or_default()
}

fn created(job: &Job) -> Option<Timestamp> {
    job.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

/// The pulse Job that decides: the newest for the object's generation (the newest of all when
/// the generation is unknown), and how many share that generation.
pub fn newest_job(jobs: &[Job], generation: Option<i64>) -> (Option<&Job>, usize) {
    let candidates: Vec<&Job> = jobs
        .iter()
        .filter(|j| generation.is_none() || job_annotation(j, GENERATION_ANNOTATION) == generation)
        .collect();
    let count = candidates.len();
    let newest = candidates
        .into_iter()
        .max_by_key(|j| (created(j), job_name(j).to_owned()));
    (newest, count)
}

/// `framework.job`: a pulse Job exists for the object's generation.
pub fn job_link(s: &Settings, obs: &Observations, preconditions: &Link) -> Link {
    const ID: &str = "framework.job";
    let pulses = match &obs.pulses {
        Ok(p) => p,
        Err(f) => {
            let mut link = unreadable(ID, "the Kubernetes API", "KUBECONFIG", f);
            if f.status == Some(403) {
                link.action = format!(
                    "apply manifests/rbac-diagnose.yaml (get, list on jobs and pods in {}) for the identity diagnose runs as",
                    s.namespace
                );
            }
            return link;
        }
    };
    let g = obs.generation();
    let at = g.map_or_else(String::new, |g| format!(" for generation {g}"));
    let (ns, (job, count)) = (&s.namespace, newest_job(&pulses.jobs, g));
    if let Some(job) = job {
        let when = created(job).map_or_else(|| "at an unknown time".to_owned(), |t| t.to_string());
        let mut evidence = format!("Job {ns}/{}{at}, created {when}", job_name(job));
        if count > 1 {
            evidence.push_str(&format!(
                "; {count} Jobs for this generation, the newest is read"
            ));
        }
        return Link::ok(ID, evidence);
    }
    let stored = obs.stored(&s.adapter);
    let stored = stored.and_then(|st| st["observed_generation"].as_i64());
    if let Some(stored) = stored.filter(|stored| g.is_some_and(|g| *stored >= g)) {
        return Link::ok(
            ID,
            format!(
                "no Job{at} in {ns} (a finished Job is deleted 60 s after it ends); the API holds this adapter's report at generation {stored}"
            ),
        );
    }
    if preconditions.mark != Mark::Ok {
        let evidence = format!("no Job{at}: the framework waits on the preconditions");
        return Link::bare(ID, Mark::Waiting, evidence);
    }
    let newest = newest_job(&pulses.jobs, None).0.map_or_else(
        || "none".to_owned(),
        |j| {
            format!(
                "{} for generation {}",
                job_name(j),
                known(job_annotation(j, GENERATION_ANNOTATION))
            )
        },
    );
    Link::broken(
        ID,
        format!(
            "no Job labelled {}{at} in {ns} (newest: {newest})",
            s.selector
        ),
        "the framework has not created this generation's pulse Job: it receives no events for this object, or it may not create Jobs here",
        "read the framework Deployment's logs for this id; check its broker subscription and its Role (manifests/hyperfleet/rbac.yaml)",
    )
}

/// The status-reporter's reasons for a Job without a usable report.
pub const REPORTER_FAILURES: [&str; 6] = [
    "AdapterExitedWithError",
    "AdapterOOMKilled",
    "AdapterTimeout",
    "InvalidResultFormat",
    "AdapterMissingResults",
    "AdapterTerminated",
];

/// Waiting reasons of a container that mean it will not start by itself.
const STUCK_WAITING: [&str; 5] = [
    "ImagePullBackOff",
    "ErrImagePull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
];

/// What the Job's condition `type_` says.
pub fn job_condition<'a>(job: &'a Job, type_: &str) -> Option<Said<'a>> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    let c = conditions.iter().find(|c| c.type_ == type_)?;
    let text = |t: &'a Option<String>| t.as_deref().unwrap_or_default();
    Some((c.status.as_str(), text(&c.reason), text(&c.message)))
}

/// ` (text)`, or nothing when `text` is empty.
fn aside(text: Option<&str>) -> String {
    text.filter(|t| !t.is_empty())
        .map_or_else(String::new, |t| format!(" ({t})"))
}

/// The container states of the Job's Pods, one phrase each, and whether one waits for good.
fn pod_states(job: &Job, pods: &Read<Vec<Pod>>) -> (String, bool) {
    let pods = match pods {
        Ok(pods) => pods,
        Err(f) => return (format!("Pods not read ({f})"), false),
    };
    let name = Some(job_name(job));
    let labelled = |p: &Pod, key: &str| {
        p.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(key))
            .map(String::as_str)
            == name
    };
    let mine: Vec<&Pod> = pods
        .iter()
        .filter(|p| labelled(p, "batch.kubernetes.io/job-name") || labelled(p, "job-name"))
        .collect();
    if mine.is_empty() {
        return (
            "no Pods (not created yet, or already deleted)".to_owned(),
            false,
        );
    }
    let (mut phrases, mut stuck) = (Vec::new(), false);
    let containers = mine
        .iter()
        .filter_map(|p| p.status.as_ref()?.container_statuses.as_ref());
    for cs in containers.flatten() {
        let state = cs.state.as_ref();
        phrases.push(if let Some(t) = state.and_then(|s| s.terminated.as_ref()) {
            let reason = t.reason.as_deref().filter(|r| !r.is_empty());
            let reason = reason.map_or_else(String::new, |r| format!(" {r}"));
            let message = aside(t.message.as_deref().map(str::trim));
            format!("{} exited {}{reason}{message}", cs.name, t.exit_code)
        } else if let Some(w) = state.and_then(|s| s.waiting.as_ref()) {
            let reason = w.reason.as_deref().unwrap_or_default();
            stuck |= STUCK_WAITING.contains(&reason);
            format!(
                "{} waiting {}{}",
                cs.name,
                or_none(reason),
                aside(w.message.as_deref())
            )
        } else {
            format!("{} running", cs.name)
        });
    }
    if phrases.is_empty() {
        phrases.push("Pod without container states yet".to_owned());
    }
    (phrases.join(", "), stuck)
}

/// What a reporter failure means and what to do (docs/troubleshooting.md).
fn reporter_failure_help(reason: &str) -> (&'static str, &'static str) {
    match reason {
        "AdapterOOMKilled" => (
            "the adapter container was killed for using more memory than its limit",
            "raise the adapter container's memory limit in the Job template (manifests/job.yaml), or look for an oversized input (docs/input-files.md)",
        ),
        "AdapterTimeout" => (
            "the adapter did not write a report before the reporter's deadline",
            "the adapter's logs say what it waited on; keep RETRY_BUDGET_SECONDS + 10 s below activeDeadlineSeconds − 10 s (docs/troubleshooting.md)",
        ),
        "InvalidResultFormat" => (
            "the adapter's report broke the report contract",
            "the message names each bad field with its JSON path and the rule",
        ),
        _ => (
            "the adapter exited without a usable report",
            "the message quotes the adapter's termination message; without one, read the adapter container's logs",
        ),
    }
}

/// `job.report`: the newest pulse Job reported (or why it did not).
pub fn report_link(s: &Settings, obs: &Observations, job_link: &Link) -> Link {
    const ID: &str = "job.report";
    let Ok(pulses) = &obs.pulses else {
        return Link::bare(ID, Mark::Unknown, "the Jobs were not read");
    };
    let Some(job) = obs.job() else {
        let mark = if job_link.mark == Mark::Ok {
            Mark::Ok
        } else {
            Mark::Waiting
        };
        return stored_refusal(s, obs).unwrap_or_else(|| Link::bare(ID, mark, "no Job to read"));
    };
    if let Some(link) = unreported(job, &pulses.pods) {
        return link;
    }
    let conditions: Vec<String> = ["Applied", "Available", "Health", "Finalized"]
        .into_iter()
        .filter_map(|t| {
            job_condition(job, t).map(|(status, reason, _)| format!("{t}={status} {reason}"))
        })
        .collect();
    let at = job_annotation(job, OBSERVED_GENERATION_ANNOTATION)
        .map_or_else(|| "no generation".to_owned(), |g| format!("generation {g}"));
    let evidence = format!(
        "Job {} reported {at}: {}",
        job_name(job),
        conditions.join(", ")
    );
    match job_condition(job, "Applied").filter(|said| is_refusal(s, *said)) {
        Some((_, reason, message)) => refusal(s, format!("{evidence}; Applied: {message}"), reason),
        None => Link::ok(ID, evidence),
    }
}

/// `job.report` of a Job without a report: a reporter failure, a Job failed before the reporter
/// wrote anything, a container that cannot start, or still running; `None` once it reported.
fn unreported(job: &Job, pods: &Read<Vec<Pod>>) -> Option<Link> {
    const ID: &str = "job.report";
    let (pods, image_stuck) = pod_states(job, pods);
    let name = job_name(job);
    let failure = job_condition(job, "Available").filter(|(_, r, _)| REPORTER_FAILURES.contains(r));
    if let Some((_, reason, message)) = failure {
        let (meaning, action) = reporter_failure_help(reason);
        let evidence = format!("Job {name}: Available {reason}: {message}; {pods}");
        return Some(Link::broken(ID, evidence, meaning, action));
    }
    let reported = job_condition(job, "Applied").is_some();
    let failed = job_condition(job, "Failed").filter(|(status, _, _)| *status == "True");
    if let Some((_, reason, message)) = failed.filter(|_| !reported) {
        return Some(Link::broken(
            ID,
            format!("Job {name} failed without a report: {reason}: {message}; {pods}"),
            if reason == "DeadlineExceeded" {
                "the Job ran past its activeDeadlineSeconds before the status-reporter wrote anything"
            } else {
                "the Job failed before the status-reporter wrote anything"
            },
            "the Pods' container states say why (image pull, crash); the framework reports JobFailedWithoutReport",
        ));
    }
    if image_stuck {
        return Some(Link::broken(
            ID,
            format!("Job {name}: {pods}"),
            "a container of the pulse Job cannot start",
            "check the image reference and the pull secret of the Job template; the next pulse reports JobFailedWithoutReport",
        ));
    }
    (!reported).then(|| {
        Link::new(
            ID,
            Mark::Waiting,
            format!("Job {name} is running, no report yet; {pods}"),
            "the pulse has not finished",
            "wait for the Job to end (activeDeadlineSeconds)",
        )
    })
}

/// An `Applied` in which the adapter refused or could not act: False for a reason that is not the
/// transport's (those, the management-cluster links diagnose better; the condition table says
/// which).
fn is_refusal(s: &Settings, (status, reason, _): Said<'_>) -> bool {
    status == "False" && !s.kind.table().is_transport(reason)
}

/// `job.report` broken by the adapter's refusal (`reason`), `evidence` quoting it.
fn refusal(s: &Settings, evidence: String, reason: &str) -> Link {
    Link::broken(
        "job.report",
        evidence,
        format!("the adapter refused or could not act ({reason})"),
        format!(
            "the message says what to fix; {}: the condition tables",
            s.kind.condition_tables()
        ),
    )
}

/// With no Job left (deleted `ttlSecondsAfterFinished` after it ended), the adapter's report as
/// the HyperFleet API stores it decides in its place, when it is at the object's generation and
/// says the adapter refused (e.g. `NoManagementClusterAvailable`): without this, the chain would
/// go on to blame the missing work, which the adapter never meant to create.
fn stored_refusal(s: &Settings, obs: &Observations) -> Option<Link> {
    let stored = obs.stored(&s.adapter)?;
    let at = stored["observed_generation"].as_i64()?;
    if obs.generation().is_some_and(|g| at < g) {
        return None;
    }
    let applied = hf_said(hf_condition(&stored["conditions"], "Applied")?);
    let (_, reason, message) = applied;
    is_refusal(s, applied).then(|| {
        refusal(
            s,
            format!(
                "no Job to read (a finished Job is deleted 60 s after it ends); the API's stored report at generation {at}: Applied=False {reason}: {message}"
            ),
            reason,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adapter_names_map_to_their_hyperfleet_conditions() {
        assert_eq!(successful_type("validation"), "ValidationSuccessful");
        assert_eq!(successful_type("dns"), "DnsSuccessful");
        assert_eq!(successful_type("pullsecret"), "PullsecretSuccessful");
        assert_eq!(successful_type("hypershift"), "HypershiftSuccessful");
    }
}
