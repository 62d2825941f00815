//! [`Findings`] into the [`Report`]: Applied, Available and Health worded for people (counts,
//! configured thresholds and sorted names, never ages or the current time), and `data` for tools
//! (full counts, lists capped in entries and bytes).

use std::fmt::Write as _;

use jiff::SignedDuration;
use jiff::fmt::friendly::{Spacing, SpanPrinter};
use job_report::{Condition, ConditionStatus, Report};
use serde_json::{Map, Value, json};

use super::{
    ADAPTER_NAME, CsrCheck, DATA_LIST_BYTES, DATA_LIST_LIMIT, Findings, MESSAGE_FINALIZER_LIMIT,
    MESSAGE_NODE_LIMIT, PendingCsr, Problem, StuckNode, Thresholds, UnverifiedNode,
};

/// How to act on pending requests; this adapter never approves them.
const APPROVE_ADVICE: &str = " Check that each node is one you expect to join, then approve its \
     request with `oc adm certificate approve <name>` (or `kubectl certificate approve`), or \
     deny it; this adapter never approves requests.";

/// Turns findings into the report: Applied, Available, Health and `data`.
pub fn report(findings: &Findings, thresholds: &Thresholds, generation: Option<i64>) -> Report {
    let mut report = Report::new(vec![
        applied(findings),
        available(findings, thresholds),
        health(findings, thresholds),
    ]);
    report.adapter = Some(ADAPTER_NAME.to_owned());
    report.observed_generation = generation;
    report.data = Some(data(findings, thresholds));
    report
}

/// Applied: what was checked, and why the requests were not when they could not be listed.
fn applied(findings: &Findings) -> Condition {
    let mut checked = format!(
        "Checked {} and {}",
        plural(findings.total, "node", "nodes"),
        plural(findings.leases, "node lease", "node leases")
    );
    if let CsrCheck::NotChecked { reason, .. } = &findings.certificate_requests {
        let _ = write!(
            checked,
            "; certificate signing requests could not be listed ({reason})"
        );
    }
    Condition::new("Applied", ConditionStatus::True, "ChecksExecuted", checked)
}

/// Available: enough Ready nodes for [`Thresholds::required_ready`].
fn available(f: &Findings, t: &Thresholds) -> Condition {
    let (need, flag) = t.required_ready();
    let ready = u64::try_from(f.ready).unwrap_or(u64::MAX);
    let summary = format!("{} of {} Ready", f.ready, plural(f.total, "node", "nodes"));
    if ready >= u64::from(need) {
        Condition::new(
            "Available",
            ConditionStatus::True,
            "NodesReady",
            format!("{summary}; at least {need} required"),
        )
    } else {
        Condition::new(
            "Available",
            ConditionStatus::False,
            "InsufficientReadyNodes",
            format!("{summary}; at least {need} required ({flag})"),
        )
    }
}

/// Health: False with the worst problem's reason, described, and the others counted; else
/// [`no_issues`].
fn health(f: &Findings, t: &Thresholds) -> Condition {
    let problems = f.problems();
    let Some((&worst, rest)) = problems.split_first() else {
        return no_issues(f, t);
    };
    let mut message = describe(worst, f, t);
    if !rest.is_empty() {
        let others: Vec<String> = rest.iter().map(|p| short(*p, f.count(*p))).collect();
        let _ = write!(message, ". Also: {}", others.join("; "));
    }
    message.push('.');
    if worst == Problem::PendingCsr {
        message.push_str(APPROVE_ADVICE);
    }
    if let Some(note) = not_checked_note(f) {
        message.push_str(&note);
    }
    Condition::new("Health", ConditionStatus::False, worst.reason(), message)
}

/// Health True `NoIssues`, noting the cordoned nodes and those not Ready within the grace.
fn no_issues(f: &Findings, t: &Thresholds) -> Condition {
    let mut message = format!("No issues on {}", plural(f.total, "node", "nodes"));
    let mut notes = Vec::new();
    if !f.cordoned.is_empty() {
        notes.push(format!("{} cordoned", f.cordoned.len()));
    }
    if f.not_ready_within_grace > 0 {
        notes.push(format!(
            "{} not Ready within the {} grace",
            f.not_ready_within_grace,
            human(t.not_ready_grace)
        ));
    }
    if !notes.is_empty() {
        let _ = write!(message, " ({})", notes.join(", "));
    }
    if let Some(note) = not_checked_note(f) {
        message.push('.');
        message.push_str(&note);
    }
    Condition::new("Health", ConditionStatus::True, "NoIssues", message)
}

/// What Health's message adds when the requests could not be listed.
fn not_checked_note(f: &Findings) -> Option<String> {
    match &f.certificate_requests {
        CsrCheck::NotChecked { message, .. } => Some(format!(
            " Certificate signing requests were not checked: {message}."
        )),
        CsrCheck::Checked(_) => None,
    }
}

/// `n` of what a problem counts: "1 node", "3 kubelet certificate signing requests".
fn counted(problem: Problem, n: usize) -> String {
    let (one, many) = match problem {
        Problem::PendingCsr => (
            "kubelet certificate signing request",
            "kubelet certificate signing requests",
        ),
        _ => ("node", "nodes"),
    };
    plural(n, one, many)
}

/// "2 nodes not Ready for longer than 5m: a, b" — up to [`MESSAGE_NODE_LIMIT`] names, sorted.
fn describe(problem: Problem, f: &Findings, t: &Thresholds) -> String {
    let n = f.count(problem);
    let (head, names): (String, Vec<String>) = match problem {
        Problem::NotReady => (
            format!("not Ready for longer than {}", human(t.not_ready_grace)),
            first(&f.not_ready).cloned().collect(),
        ),
        Problem::StaleHeartbeat => (
            format!(
                "without a heartbeat for longer than {}",
                human(t.stale_heartbeat_after)
            ),
            first(&f.stale_heartbeat).cloned().collect(),
        ),
        Problem::PendingCsr => (
            format!("pending for longer than {}", human(t.csr_pending_grace)),
            first(f.certificate_requests.pending())
                .map(PendingCsr::describe)
                .collect(),
        ),
        Problem::Pressure => (
            "under pressure".to_owned(),
            f.pressure_by_node()
                .into_iter()
                .take(MESSAGE_NODE_LIMIT)
                .map(|(name, kinds)| format!("{name} ({})", kinds.join(", ")))
                .collect(),
        ),
        Problem::StuckTerminating => (
            format!(
                "stuck terminating for longer than {}",
                human(t.stuck_terminating_after)
            ),
            first(&f.stuck_terminating)
                .map(StuckNode::describe)
                .collect(),
        ),
        Problem::Unverified => (
            format!(
                "carrying a verification taint for longer than {}",
                human(t.verification_grace)
            ),
            first(&f.unverified).map(UnverifiedNode::describe).collect(),
        ),
    };
    format!("{} {head}: {}", counted(problem, n), listed(&names, n))
}

fn first<T>(list: &[T]) -> impl Iterator<Item = &T> {
    list.iter().take(MESSAGE_NODE_LIMIT)
}

/// "1 node stuck terminating" — a problem named by its count only.
fn short(problem: Problem, n: usize) -> String {
    let what = match problem {
        Problem::NotReady => "not Ready",
        Problem::StaleHeartbeat => "without a recent heartbeat",
        Problem::PendingCsr => "pending",
        Problem::Pressure => "under pressure",
        Problem::StuckTerminating => "stuck terminating",
        Problem::Unverified => "unverified",
    };
    format!("{} {what}", counted(problem, n))
}

/// `shown` joined by commas, then "and N more" when they are the first of `total`.
fn listed<S: std::borrow::Borrow<str>>(shown: &[S], total: usize) -> String {
    let mut listed = shown.join(", ");
    if total > shown.len() {
        let _ = write!(listed, " and {} more", total - shown.len());
    }
    listed
}

impl StuckNode {
    /// `worker-e (finalizers: a, b)`: up to [`MESSAGE_FINALIZER_LIMIT`] of them, then a count.
    fn describe(&self) -> String {
        if self.finalizers.is_empty() {
            return format!("{} (no finalizers)", self.name);
        }
        let shown = &self.finalizers[..self.finalizers.len().min(MESSAGE_FINALIZER_LIMIT)];
        let finalizers = listed(shown, self.finalizers.len());
        format!("{} (finalizers: {finalizers})", self.name)
    }
}

impl UnverifiedNode {
    /// `worker-f (node.example.com/unverified)`.
    fn describe(&self) -> String {
        format!("{} ({})", self.name, self.taints.join(", "))
    }
}

impl PendingCsr {
    /// `csr-7xq2p (node worker-1, kubernetes.io/kubelet-serving)`.
    pub(super) fn describe(&self) -> String {
        let who = match (&self.node, &self.requested_by) {
            (Some(node), None) => format!("node {node}"),
            (Some(node), Some(by)) => format!("node {node}, requested by {by}"),
            (None, Some(by)) if !by.is_empty() => format!("node unknown, requested by {by}"),
            (None, _) => "node unknown".to_owned(),
        };
        format!("{} ({who}, {})", self.name, self.signer.name())
    }

    /// The bytes of names it puts in `data`.
    fn size(&self) -> usize {
        self.name.len()
            + self.signer.name().len()
            + self.node.as_ref().map_or(0, String::len)
            + self.requested_by.as_ref().map_or(0, String::len)
    }

    /// Its entry in `data`.
    fn to_json(&self) -> Value {
        let mut item = json!({"name": self.name, "signer": self.signer.name()});
        if let Some(node) = &self.node {
            item["node"] = json!(node);
        }
        if let Some(by) = &self.requested_by {
            item["requested_by"] = json!(by);
        }
        item
    }
}

/// `data`: the counts, each list of nodes [`capped`], the pending requests or why they were not
/// checked.
fn data(f: &Findings, t: &Thresholds) -> Map<String, Value> {
    let (need, _) = t.required_ready();
    let names = |list: &[String]| capped(list, |n| (n.len(), json!(n)));
    let requests = match &f.certificate_requests {
        CsrCheck::Checked(csrs) => json!({
            "checked": true,
            "count": csrs.pending.len(),
            "within_grace": csrs.pending_within_grace,
            "requests": first_fitting(csrs.pending.iter().map(|p| (p.size(), p.to_json()))),
        }),
        CsrCheck::NotChecked { reason, .. } => json!({"checked": false, "reason": reason}),
    };
    [
        ("nodes_total", json!(f.total)),
        ("nodes_ready", json!(f.ready)),
        ("ready_required", json!(need)),
        ("not_ready_within_grace", json!(f.not_ready_within_grace)),
        ("not_ready", names(&f.not_ready)),
        ("memory_pressure", names(&f.memory_pressure)),
        ("disk_pressure", names(&f.disk_pressure)),
        ("pid_pressure", names(&f.pid_pressure)),
        ("network_unavailable", names(&f.network_unavailable)),
        ("cordoned", names(&f.cordoned)),
        ("stale_heartbeat", names(&f.stale_heartbeat)),
        (
            "unverified",
            capped(&f.unverified, |u| named(&u.name, "taints", &u.taints)),
        ),
        (
            "stuck_terminating",
            capped(&f.stuck_terminating, |s| {
                named(&s.name, "finalizers", &s.finalizers)
            }),
        ),
        ("pending_certificate_requests", requests),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect()
}

/// `{"count": n, "nodes": [...]}` for `list`, each entry made by `entry` with its size: at most
/// [`DATA_LIST_LIMIT`] entries and [`DATA_LIST_BYTES`] bytes of names; `count` is always the full
/// count.
fn capped<T>(list: &[T], entry: impl Fn(&T) -> (usize, Value)) -> Value {
    json!({"count": list.len(), "nodes": first_fitting(list.iter().map(entry))})
}

/// `{"name": name, key: list}` with its size: the bytes of the name and the list's entries.
fn named(name: &str, key: &str, list: &[String]) -> (usize, Value) {
    let size = name.len() + list.iter().map(String::len).sum::<usize>();
    (size, json!({"name": name, key: list}))
}

/// The first items, at most [`DATA_LIST_LIMIT`] of them and [`DATA_LIST_BYTES`] bytes of
/// names (each item comes with its size).
fn first_fitting(items: impl Iterator<Item = (usize, Value)>) -> Vec<Value> {
    let mut bytes = 0;
    let mut fitting = Vec::new();
    for (size, item) in items.take(DATA_LIST_LIMIT) {
        bytes += size;
        if bytes > DATA_LIST_BYTES {
            break;
        }
        fitting.push(item);
    }
    fitting
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A duration as people write it in flags, and as [`super::super::args::parse_duration`] reads
/// it back: `30s`, `5m`, `1h30m`, `48h` (no days: jiff does not parse them as a fixed length).
pub fn human(d: SignedDuration) -> String {
    // Whole seconds, or whole milliseconds under one second.
    let d = match d.as_secs() {
        0 => SignedDuration::from_millis(d.subsec_millis().into()),
        secs => SignedDuration::from_secs(secs),
    };
    SpanPrinter::new()
        .spacing(Spacing::None)
        .duration_to_string(&d)
}
