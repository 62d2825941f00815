//! The pure part of the `nodes` check: compact node and certificate signing request summaries
//! in, findings and a report out.
//!
//! Nothing here talks to the world. [`Judge`] judges one [`NodeSummary`] or [`CsrSummary`] at a
//! time into the findings (so a caller streaming pages never holds more than one page), and
//! [`report`] (in `render.rs`) turns the [`Findings`] into a [`Report`](job_report::Report).
//!
//! # Severity ordering
//!
//! When several problems are present, Health carries the reason of the worst one (see
//! [`Problem`], declared worst first):
//!
//! 1. `NodesNotReady` — capacity is lost now.
//! 2. `StaleHeartbeats` — the kubelet went silent; the node is probably down even if the
//!    node controller has not yet marked it NotReady.
//! 3. `PendingCertificateRequests` — a kubelet certificate signing request has waited longer
//!    than `--csr-pending-grace`: a joining node cannot register (bootstrap client
//!    certificate; on platform `None` nothing approves it), or a node cannot renew its client
//!    certificate or get a serving one (logs, exec and metrics fail). Capacity that should be
//!    there is not, or soon will not be; a person must approve or deny.
//! 4. `NodePressure` — capacity is degraded; the kubelet evicts pods (Memory/Disk/PID pressure,
//!    NetworkUnavailable).
//! 5. `NodesStuckTerminating` — a deletion is blocked by finalizers; needs a person.
//! 6. `NodesUnverified` — new capacity has not been admitted yet.
//!
//! Cordoned nodes are counted and listed in `data` but do not make Health False: cordoning is
//! usually deliberate (maintenance, drains).
//!
//! A node the API reports not Ready, but for no longer than `--not-ready-grace`, is not judged
//! for heartbeats either: its kubelet stopped renewing the Lease at the same time, and the
//! (shorter) heartbeat limit must not undercut the grace. Stale heartbeats therefore catch
//! nodes still reported Ready whose kubelet went silent, and nodes past the grace.
//!
//! # Certificate signing requests
//!
//! Only the kubelet signers count (see [`super::csr`]); a request is pending while it is
//! neither approved nor denied nor failed, measured from its creation. A pending serving
//! request of a node that is Ready is still reported: the node works, but logs, exec and
//! metrics through its kubelet do not. Denied requests are not reported. When the requests
//! cannot be listed (typically a ClusterRole without the grant), the node findings are still
//! reported and the messages say the requests were not checked and why.
//!
//! # Stability across pulses
//!
//! Messages never contain ages or the current time, only counts, configured thresholds and
//! sorted node names; `data` holds no timestamps. The same cluster state therefore produces a
//! byte-identical report on every pulse, and conditions do not churn.

use std::collections::{BTreeMap, HashMap};

use jiff::{SignedDuration, Timestamp};
use job_report::ConditionStatus;

use super::csr::{CsrState, CsrSummary, KubeletSigner, NODE_USER_PREFIX};

mod render;

pub use render::{human, report};

/// The `adapter` field of every report this check writes.
pub const ADAPTER_NAME: &str = "hypershift-nodes";
/// How many nodes a condition message names before saying "and N more".
pub const MESSAGE_NODE_LIMIT: usize = 10;
/// How many entries each list in `data` holds at most.
pub const DATA_LIST_LIMIT: usize = 20;
/// How many bytes of names each list in `data` holds at most; with 10 lists this keeps `data`
/// well below the 64 KiB limit whatever the node names are.
pub const DATA_LIST_BYTES: usize = 4096;
/// How many finalizers a message names per stuck node.
const MESSAGE_FINALIZER_LIMIT: usize = 5;

/// What the check needs to know about one Node, and nothing more.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeSummary {
    pub name: String,
    pub created: Option<Timestamp>,
    /// `metadata.deletionTimestamp`.
    pub deleting_since: Option<Timestamp>,
    pub finalizers: Vec<String>,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
    pub taints: Vec<TaintSummary>,
    /// The `Ready` condition; `None` when the node has not reported one.
    pub ready: Option<ReadyState>,
    pub memory_pressure: bool,
    pub disk_pressure: bool,
    pub pid_pressure: bool,
    pub network_unavailable: bool,
}

/// One taint: its key and, when the API server recorded it, when it was added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaintSummary {
    pub key: String,
    pub time_added: Option<Timestamp>,
}

/// The node's `Ready` condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadyState {
    pub status: ConditionStatus,
    /// `lastTransitionTime`.
    pub since: Option<Timestamp>,
    /// `lastHeartbeatTime`, used when the node has no Lease.
    pub heartbeat: Option<Timestamp>,
}

/// The limits the judgements use. Durations are "for longer than": a node at exactly the
/// grace is not yet a problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thresholds {
    /// Ready False/Unknown (or absent) for longer than this → NotReady.
    pub not_ready_grace: SignedDuration,
    /// Deleting for longer than this → stuck terminating.
    pub stuck_terminating_after: SignedDuration,
    /// Last heartbeat older than this → stale.
    pub stale_heartbeat_after: SignedDuration,
    /// Taint keys that mark a node as not yet verified.
    pub verification_taints: Vec<String>,
    /// Carrying a verification taint for longer than this → unverified.
    pub verification_grace: SignedDuration,
    /// Available=False below this many Ready nodes.
    pub min_ready_nodes: u32,
    /// When set, Available=False below this many Ready nodes too.
    pub expected_nodes: Option<u32>,
    /// A kubelet certificate signing request pending longer than this → a problem.
    pub csr_pending_grace: SignedDuration,
}

impl Thresholds {
    /// The number of Ready nodes Available requires, and the flag that sets it.
    pub fn required_ready(&self) -> (u32, &'static str) {
        match self.expected_nodes {
            Some(expected) if expected > self.min_ready_nodes => (expected, "--expected-nodes"),
            _ => (self.min_ready_nodes, "--min-ready-nodes"),
        }
    }
}

/// A kind of problem, declared worst first: `Ord` is the severity ordering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Problem {
    NotReady,
    StaleHeartbeat,
    PendingCsr,
    Pressure,
    StuckTerminating,
    Unverified,
}

impl Problem {
    /// Every problem, worst first.
    pub const ALL: [Problem; 6] = [
        Problem::NotReady,
        Problem::StaleHeartbeat,
        Problem::PendingCsr,
        Problem::Pressure,
        Problem::StuckTerminating,
        Problem::Unverified,
    ];

    /// The Health reason for this problem.
    pub fn reason(self) -> &'static str {
        match self {
            Problem::NotReady => "NodesNotReady",
            Problem::StaleHeartbeat => "StaleHeartbeats",
            Problem::PendingCsr => "PendingCertificateRequests",
            Problem::Pressure => "NodePressure",
            Problem::StuckTerminating => "NodesStuckTerminating",
            Problem::Unverified => "NodesUnverified",
        }
    }
}

/// A node whose deletion has been blocked for too long, and what blocks it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct StuckNode {
    pub name: String,
    pub finalizers: Vec<String>,
}

/// A node that carries verification taints for too long, and which.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct UnverifiedNode {
    pub name: String,
    pub taints: Vec<String>,
}

/// A kubelet certificate signing request pending past the grace: enough to name it, the node
/// it would admit and who asked.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PendingCsr {
    pub name: String,
    pub signer: KubeletSigner,
    /// The node the certificate would admit; `None` when neither the request nor the
    /// requester names one.
    pub node: Option<String>,
    /// Who created it, kept only when it says something the node does not: the node is
    /// unknown, or the requester is a different node.
    pub requested_by: Option<String>,
}

/// What the check found among certificate signing requests.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CsrFindings {
    /// Requests seen, of any signer and state.
    pub total: usize,
    /// Kubelet requests pending past the grace, sorted by name after [`CsrFindings::sorted`].
    pub pending: Vec<PendingCsr>,
    /// Kubelet requests pending, but for no longer than the grace.
    pub pending_within_grace: usize,
}

impl CsrFindings {
    /// The pending requests sorted by name.
    pub fn sorted(mut self) -> Self {
        self.pending.sort();
        self
    }
}

/// Whether certificate signing requests were checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CsrCheck {
    Checked(CsrFindings),
    /// The list failed: the error's reason and message (never credentials).
    NotChecked {
        reason: &'static str,
        message: String,
    },
}

impl Default for CsrCheck {
    fn default() -> Self {
        CsrCheck::Checked(CsrFindings::default())
    }
}

impl CsrCheck {
    /// The pending requests past the grace; none when not checked.
    pub fn pending(&self) -> &[PendingCsr] {
        match self {
            CsrCheck::Checked(f) => &f.pending,
            CsrCheck::NotChecked { .. } => &[],
        }
    }
}

/// What the check found. After [`Findings::sorted`] every list is sorted by node name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Findings {
    pub total: usize,
    pub ready: usize,
    /// Not Ready, but for no longer than the grace.
    pub not_ready_within_grace: usize,
    pub not_ready: Vec<String>,
    pub memory_pressure: Vec<String>,
    pub disk_pressure: Vec<String>,
    pub pid_pressure: Vec<String>,
    pub network_unavailable: Vec<String>,
    pub cordoned: Vec<String>,
    pub unverified: Vec<UnverifiedNode>,
    pub stuck_terminating: Vec<StuckNode>,
    pub stale_heartbeat: Vec<String>,
    /// How many node leases were seen.
    pub leases: usize,
    /// Kubelet certificate signing requests, or why they were not checked.
    pub certificate_requests: CsrCheck,
}

impl Findings {
    /// Every list sorted by node name.
    pub fn sorted(mut self) -> Self {
        for list in [
            &mut self.not_ready,
            &mut self.memory_pressure,
            &mut self.disk_pressure,
            &mut self.pid_pressure,
            &mut self.network_unavailable,
            &mut self.cordoned,
            &mut self.stale_heartbeat,
        ] {
            list.sort();
        }
        self.unverified.sort();
        self.stuck_terminating.sort();
        self
    }

    /// The problems present, worst first.
    pub fn problems(&self) -> Vec<Problem> {
        Problem::ALL
            .into_iter()
            .filter(|p| self.count(*p) > 0)
            .collect()
    }

    /// How many nodes (or requests) have this problem (a node under several pressures counts
    /// once).
    pub fn count(&self, problem: Problem) -> usize {
        match problem {
            Problem::NotReady => self.not_ready.len(),
            Problem::StaleHeartbeat => self.stale_heartbeat.len(),
            Problem::PendingCsr => self.certificate_requests.pending().len(),
            Problem::Pressure => self.pressure_by_node().len(),
            Problem::StuckTerminating => self.stuck_terminating.len(),
            Problem::Unverified => self.unverified.len(),
        }
    }

    /// Each node under pressure with its pressures, sorted by node name.
    fn pressure_by_node(&self) -> BTreeMap<&str, Vec<&'static str>> {
        let mut by_node: BTreeMap<&str, Vec<&'static str>> = BTreeMap::new();
        for (kind, names) in [
            ("DiskPressure", &self.disk_pressure),
            ("MemoryPressure", &self.memory_pressure),
            ("NetworkUnavailable", &self.network_unavailable),
            ("PIDPressure", &self.pid_pressure),
        ] {
            for name in names {
                by_node.entry(name.as_str()).or_default().push(kind);
            }
        }
        by_node
    }
}

/// How long ago `since` was at `now`; `None` (undated) counts as "forever", so an undated problem
/// is reported rather than silently ignored.
fn age(now: Timestamp, since: Option<Timestamp>) -> SignedDuration {
    since.map_or(SignedDuration::MAX, |t| now.duration_since(t))
}

/// Judges nodes and certificate signing requests one at a time, as of `now`, into the
/// [`Findings`] and [`CsrFindings`] a caller folds them into (so a caller streaming pages never
/// holds more than one page).
#[derive(Debug, Clone, Copy)]
pub struct Judge<'a> {
    pub now: Timestamp,
    pub thresholds: &'a Thresholds,
    /// A node name to its Lease's `renewTime`.
    pub leases: &'a HashMap<String, Timestamp>,
}

impl Judge<'_> {
    /// Judges one node into `f`.
    pub fn node(&self, f: &mut Findings, node: &NodeSummary) {
        let t = self.thresholds;
        let name = || node.name.clone();
        f.total += 1;

        // Ready. Not Ready is measured from the condition's last transition, or from the
        // node's creation when it never reported one.
        let within_grace = match node.ready {
            Some(ReadyState {
                status: ConditionStatus::True,
                ..
            }) => {
                f.ready += 1;
                false
            }
            ready => {
                let since = ready.and_then(|r| r.since).or(node.created);
                if age(self.now, since) > t.not_ready_grace {
                    f.not_ready.push(name());
                    false
                } else {
                    f.not_ready_within_grace += 1;
                    true
                }
            }
        };

        // Verification taints: NoSchedule taints usually carry no timeAdded; then the node is
        // taken to have carried the taint since it was created.
        let mut overdue: Vec<String> = node
            .taints
            .iter()
            .filter(|taint| t.verification_taints.contains(&taint.key))
            .filter(|taint| age(self.now, taint.time_added.or(node.created)) > t.verification_grace)
            .map(|taint| taint.key.clone())
            .collect();
        overdue.sort();
        overdue.dedup();

        // Heartbeat: the node Lease's renewTime; without a Lease, the Ready condition's
        // lastHeartbeatTime; with neither, the node never sent one. A node already known to be
        // not Ready but still within its grace is left to that grace: a dead kubelet also
        // stops renewing its Lease, and a shorter heartbeat limit must not undercut the grace.
        let heartbeat = self
            .leases
            .get(&node.name)
            .copied()
            .or(node.ready.and_then(|r| r.heartbeat));
        let stale = !within_grace && age(self.now, heartbeat) > t.stale_heartbeat_after;

        let stuck = node
            .deleting_since
            .is_some_and(|since| age(self.now, Some(since)) > t.stuck_terminating_after);

        for (flag, list) in [
            (node.memory_pressure, &mut f.memory_pressure),
            (node.disk_pressure, &mut f.disk_pressure),
            (node.pid_pressure, &mut f.pid_pressure),
            (node.network_unavailable, &mut f.network_unavailable),
            (node.unschedulable, &mut f.cordoned),
            (stale, &mut f.stale_heartbeat),
        ] {
            if flag {
                list.push(name());
            }
        }
        if !overdue.is_empty() {
            f.unverified.push(UnverifiedNode {
                name: name(),
                taints: overdue,
            });
        }
        if stuck {
            let mut finalizers = node.finalizers.clone();
            finalizers.sort();
            f.stuck_terminating.push(StuckNode {
                name: name(),
                finalizers,
            });
        }
    }

    /// Judges one request into `f`: only a pending kubelet request past the grace is kept, and
    /// of it only what names it. Pending is measured from its creation; an undated one counts
    /// as pending forever.
    pub fn csr(&self, f: &mut CsrFindings, csr: &CsrSummary) {
        f.total += 1;
        let Some(signer) = csr.signer else {
            return;
        };
        if csr.state != CsrState::Pending {
            return;
        }
        if age(self.now, csr.created) <= self.thresholds.csr_pending_grace {
            f.pending_within_grace += 1;
            return;
        }
        // The requester is worth naming when the node is unknown, or when a node asks for
        // another node's certificate.
        let requester_node = csr.requester.strip_prefix(NODE_USER_PREFIX);
        let requested_by = match (&csr.node, requester_node) {
            (None, _) => Some(csr.requester.clone()).filter(|r| !r.is_empty()),
            (Some(node), Some(asker)) if asker != node.as_str() => Some(csr.requester.clone()),
            _ => None,
        };
        f.pending.push(PendingCsr {
            name: csr.name.clone(),
            signer,
            node: csr.node.clone(),
            requested_by,
        });
    }
}

#[cfg(test)]
mod tests;
