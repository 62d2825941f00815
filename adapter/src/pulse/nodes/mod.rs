//! `hypershift-adapter nodes`: judges the Nodes of a cluster and its kubelets' certificate
//! signing requests (through its API) and writes the adapter report.
//!
//! - [`judge`] — pure: node summaries + lease renew times + CSR summaries + now + thresholds →
//!   findings → report.
//! - [`csr`] — pure: what is kept of a CertificateSigningRequest, the node its request names.
//! - [`source`] — the [`NodeSource`] trait and its kube-rs implementation (paginated LISTs).
//! - [`args`] — the flags.
//! - [`run`] — wiring: collect through a source, judge, write the report atomically.

pub mod args;
pub mod csr;
pub mod judge;
pub mod source;
pub mod testing;

use std::collections::HashMap;
use std::path::Path;

use jiff::Timestamp;
use job_report::{ConditionStatus, Report};

pub use args::{Args, LogFormat};
pub use csr::CsrSummary;
pub use judge::{CsrCheck, CsrFindings, Findings, Judge, NodeSummary, Problem, Thresholds};
use source::Resource;
pub use source::{KubeNodeSource, LeaseRenewal, NodeSource, Page, SourceError};

/// Pages a source will be asked for before the list is considered endless (a server that keeps
/// handing out continue tokens); 5 000 nodes at the default 250 per page is 20.
const MAX_PAGES: usize = 10_000;
/// Longest error message kept when the certificate signing requests cannot be listed: it goes
/// into Health's message next to the node findings, and a proxy's HTML error page must not
/// push that message past the report's limit.
const MAX_NOT_CHECKED_LEN: usize = 2048;

/// Reads every node lease, then streams the nodes page by page through a [`Judge`], then the
/// certificate signing requests. At most one page is held at a time.
/// A list whose continue token expired (410) is restarted once from the beginning.
///
/// Only the node and lease lists can fail the whole check: when the certificate signing
/// requests cannot be listed (a ClusterRole without the grant, a timeout), the node findings
/// stand and [`Findings::certificate_requests`] says why the requests were not checked.
pub async fn collect(
    source: &impl NodeSource,
    now: Timestamp,
    thresholds: &Thresholds,
) -> Result<Findings, SourceError> {
    let leases = read_all(
        Resource::Leases,
        |token| source.lease_page(token),
        HashMap::new,
        |leases, lease: LeaseRenewal| {
            if let Some(renewed) = lease.renewed {
                leases.insert(lease.node, renewed);
            }
        },
    )
    .await?;
    let judge = Judge {
        now,
        thresholds,
        leases: &leases,
    };
    let mut findings = read_all(
        Resource::Nodes,
        |token| source.node_page(token),
        Findings::default,
        |findings, node| judge.node(findings, &node),
    )
    .await?
    .sorted();
    findings.leases = leases.len();
    let csrs = read_all(
        Resource::CertificateSigningRequests,
        |token| source.csr_page(token),
        CsrFindings::default,
        |findings, csr| judge.csr(findings, &csr),
    )
    .await;
    findings.certificate_requests = match csrs {
        Ok(csrs) => CsrCheck::Checked(csrs.sorted()),
        Err(err) => CsrCheck::NotChecked {
            reason: err.reason(),
            message: csr::cut(&err.to_string(), MAX_NOT_CHECKED_LEN),
        },
    };
    Ok(findings)
}

/// Folds every item of one list, page by page, into what `start` makes; a list whose continue
/// token expired (410) is folded once more from the beginning, into a fresh start.
async fn read_all<T, A, Fut>(
    resource: Resource,
    page: impl Fn(Option<String>) -> Fut,
    start: impl Fn() -> A,
    observe: impl Fn(&mut A, T),
) -> Result<A, SourceError>
where
    Fut: Future<Output = Result<Page<T>, SourceError>>,
{
    let pass = async || {
        let mut folded = start();
        let mut token = None;
        for _ in 0..MAX_PAGES {
            let page = page(token).await?;
            for item in page.items {
                observe(&mut folded, item);
            }
            token = page.continue_token;
            if token.is_none() {
                return Ok(folded);
            }
        }
        Err(SourceError::Unreachable {
            resource,
            message: format!("the API server returned more than {MAX_PAGES} pages"),
        })
    };
    match pass().await {
        Err(SourceError::Expired { .. }) => pass().await,
        other => other,
    }
}

/// The report when the API could not be read: Applied=False with the error's reason and
/// message; Available and Health Unknown with the same reason, since nothing was checked. The
/// server's words are bounded and redacted: a proxy's error page must not make the report
/// invalid (and so lose it).
pub fn failure_report(err: &SourceError, generation: Option<i64>) -> Report {
    let reason = err.reason();
    let message = crate::message::redact(&err.to_string());
    let not_checked = |type_| {
        let message = format!("Nodes were not checked: {message}");
        crate::message::cond(type_, ConditionStatus::Unknown, reason, message)
    };
    let mut report = Report::new(vec![
        crate::message::cond("Applied", ConditionStatus::False, reason, message.clone()),
        not_checked("Available"),
        not_checked("Health"),
    ]);
    report.adapter = Some(judge::ADAPTER_NAME.to_owned());
    report.observed_generation = generation;
    report
}

/// Why `run` could not finish: only a report that could not be written is an error.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct RunError(#[from] pub job_report::WriteError);

/// Checks the nodes `source` serves as of `now` and writes the report to `results_path`.
/// API failures become a report (Applied=False), not an error.
pub async fn run(
    args: &Args,
    results_path: &Path,
    source: Result<impl NodeSource, SourceError>,
    now: Timestamp,
) -> Result<Report, RunError> {
    // Destructured so a new flag cannot be silently ignored here.
    let Args {
        results_path: _,
        cluster_id,
        generation,
        log_format: _,
        kubeconfig: _,
        not_ready_grace: _,
        stuck_terminating_after: _,
        stale_heartbeat_after: _,
        verification_taints: _,
        verification_grace: _,
        min_ready_nodes: _,
        expected_nodes: _,
        csr_pending_grace: _,
        page_size: _,
        request_timeout: _,
    } = args;
    let cluster_id = cluster_id.as_deref().unwrap_or("");
    let thresholds = args.thresholds();
    let outcome = match source {
        Ok(source) => collect(&source, now, &thresholds).await,
        Err(e) => Err(e),
    };
    let report = match outcome {
        Ok(findings) => {
            let report = judge::report(&findings, &thresholds, *generation);
            let health = report.condition("Health").map_or("", |c| c.reason.as_str());
            if let CsrCheck::NotChecked { reason, message } = &findings.certificate_requests {
                tracing::warn!(
                    cluster_id,
                    generation,
                    reason,
                    error = %message,
                    "cannot list certificate signing requests; reporting the nodes without them"
                );
            }
            tracing::info!(
                cluster_id,
                generation,
                nodes = findings.total,
                ready = findings.ready,
                leases = findings.leases,
                pending_csrs = findings.count(Problem::PendingCsr),
                health,
                "nodes checked"
            );
            report
        }
        Err(err) => {
            tracing::warn!(
                cluster_id,
                generation,
                reason = err.reason(),
                error = %err,
                "cannot read nodes"
            );
            failure_report(&err, *generation)
        }
    };
    job_report::write_atomic(results_path, &report)?;
    tracing::info!(
        cluster_id,
        generation,
        path = %results_path.display(),
        cpu_us = job_report::usage::cpu_micros(),
        peak_rss_kib = job_report::usage::peak_rss_kib(),
        "report written"
    );
    Ok(report)
}

/// The real thing: connects with `--kubeconfig` (or in-cluster), checks, writes the report.
pub async fn run_with_kube(args: Args) -> anyhow::Result<()> {
    let results_path = args.results_path(std::env::var_os("RESULTS_PATH"));
    let source = KubeNodeSource::connect(
        args.kubeconfig.as_deref(),
        args.page_size,
        args.request_timeout.unsigned_abs(),
    )
    .await;
    run(&args, &results_path, source, Timestamp::now()).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Mutex;

    use super::*;
    use crate::pulse::nodes::source::Resource;

    #[test]
    fn a_huge_server_answer_still_makes_a_valid_report() {
        let page = format!(
            "<html>{}</html> Authorization: Bearer s3cr3t",
            "proxy error ".repeat(20_000)
        );
        let err = SourceError::Unreachable {
            resource: Resource::Nodes,
            message: page,
        };
        let report = failure_report(&err, Some(3));
        job_report::validate(&report).unwrap();
        assert!(
            report
                .conditions
                .iter()
                .all(|c| !c.message.contains("s3cr3t"))
        );
    }

    /// An in-memory source: pages of `page` items; optionally answers one call with an error,
    /// or hands out continue tokens forever.
    struct MemorySource {
        nodes: Vec<NodeSummary>,
        leases: Vec<LeaseRenewal>,
        csrs: Vec<CsrSummary>,
        page: usize,
        fail_once: Mutex<Option<(Resource, usize, SourceError)>>,
        endless: bool,
        calls: Mutex<Vec<(Resource, Option<String>)>>,
    }

    impl MemorySource {
        fn new(nodes: Vec<NodeSummary>, leases: Vec<LeaseRenewal>, page: usize) -> Self {
            MemorySource {
                nodes,
                leases,
                csrs: Vec::new(),
                page,
                fail_once: Mutex::new(None),
                endless: false,
                calls: Mutex::new(Vec::new()),
            }
        }

        fn serve<T: Clone>(
            &self,
            resource: Resource,
            items: &[T],
            token: Option<String>,
        ) -> Result<Page<T>, SourceError> {
            self.calls.lock().unwrap().push((resource, token.clone()));
            let start: usize = token.map_or(0, |t| t.parse().unwrap());
            let mut fail = self.fail_once.lock().unwrap();
            if fail
                .as_ref()
                .is_some_and(|(r, at, _)| *r == resource && *at == start)
            {
                return Err(fail.take().unwrap().2);
            }
            if self.endless {
                return Ok(Page {
                    items: Vec::new(),
                    continue_token: Some("0".to_owned()),
                });
            }
            let end = (start + self.page).min(items.len());
            Ok(Page {
                items: items[start..end].to_vec(),
                continue_token: (end < items.len()).then(|| end.to_string()),
            })
        }
    }

    impl NodeSource for MemorySource {
        async fn node_page(&self, token: Option<String>) -> Result<Page<NodeSummary>, SourceError> {
            self.serve(Resource::Nodes, &self.nodes, token)
        }

        async fn lease_page(
            &self,
            token: Option<String>,
        ) -> Result<Page<LeaseRenewal>, SourceError> {
            self.serve(Resource::Leases, &self.leases, token)
        }

        async fn csr_page(&self, token: Option<String>) -> Result<Page<CsrSummary>, SourceError> {
            self.serve(Resource::CertificateSigningRequests, &self.csrs, token)
        }
    }

    fn now() -> Timestamp {
        "2026-11-25T12:00:00Z".parse().unwrap()
    }

    fn cluster(n: usize) -> MemorySource {
        let cluster = testing::synthetic_cluster(n, 3, now());
        MemorySource::new(
            cluster.iter().map(|c| c.summary.clone()).collect(),
            cluster.iter().map(|c| c.lease.clone()).collect(),
            4,
        )
    }

    fn expected(source: &MemorySource) -> Findings {
        let leases = source
            .leases
            .iter()
            .filter_map(|l| Some((l.node.clone(), l.renewed?)))
            .collect();
        testing::judge(&source.nodes, &leases, now(), &Thresholds::default())
    }

    #[tokio::test]
    async fn collect_pages_through_leases_then_nodes() {
        let source = cluster(10);
        let findings = collect(&source, now(), &Thresholds::default())
            .await
            .unwrap();
        assert_eq!(findings, expected(&source));
        let calls = source.calls.lock().unwrap().clone();
        let tokens = |r: Resource| -> Vec<Option<String>> {
            calls
                .iter()
                .filter(|c| c.0 == r)
                .map(|c| c.1.clone())
                .collect()
        };
        let pages = vec![None, Some("4".to_owned()), Some("8".to_owned())];
        assert_eq!(tokens(Resource::Leases), pages);
        assert_eq!(tokens(Resource::Nodes), pages);
        assert_eq!(calls[0].0, Resource::Leases, "leases are read before nodes");
    }

    #[tokio::test]
    async fn csrs_are_read_last_and_their_failure_leaves_the_node_findings_standing() {
        let mut source = cluster(5);
        source.csrs = testing::synthetic_csrs(9, 1, now())
            .iter()
            .map(testing::SyntheticCsr::summary)
            .collect();
        let findings = collect(&source, now(), &Thresholds::default())
            .await
            .unwrap();
        let csrs = testing::judge_csrs(&source.csrs, now(), &Thresholds::default());
        assert_eq!(csrs.total, 9);
        assert_eq!(findings.certificate_requests, CsrCheck::Checked(csrs));
        let calls = source.calls.lock().unwrap().clone();
        let order: Vec<Resource> = calls.iter().map(|c| c.0).collect();
        assert_eq!(
            order,
            [
                Resource::Leases,
                Resource::Leases,
                Resource::Nodes,
                Resource::Nodes,
                Resource::CertificateSigningRequests,
                Resource::CertificateSigningRequests,
                Resource::CertificateSigningRequests,
            ]
        );

        // Forbidden on the second page: the nodes stand, the requests are not checked.
        let source = {
            let mut s = cluster(5);
            s.csrs = testing::synthetic_csrs(9, 1, now())
                .iter()
                .map(testing::SyntheticCsr::summary)
                .collect();
            s
        };
        *source.fail_once.lock().unwrap() = Some((
            Resource::CertificateSigningRequests,
            4,
            SourceError::Forbidden {
                resource: Resource::CertificateSigningRequests,
                message: "HTTP 403: forbidden".to_owned(),
            },
        ));
        let findings = collect(&source, now(), &Thresholds::default())
            .await
            .unwrap();
        assert_eq!(findings.total, 5);
        assert_eq!(
            findings.certificate_requests,
            CsrCheck::NotChecked {
                reason: "Forbidden",
                message: "not allowed to list certificate signing requests: HTTP 403: forbidden. \
                          Grant get and list on certificatesigningrequests (API group \
                          certificates.k8s.io, cluster scope) as the ClusterRole in \
                          manifests/rbac-nodes.yaml does"
                    .to_owned(),
            }
        );
    }

    #[tokio::test]
    async fn a_huge_error_body_on_the_csr_list_still_gives_a_valid_report() {
        let source = cluster(3);
        *source.fail_once.lock().unwrap() = Some((
            Resource::CertificateSigningRequests,
            0,
            SourceError::Unreachable {
                resource: Resource::CertificateSigningRequests,
                message: format!("HTTP 502: <html>{}</html>", "é".repeat(100_000)),
            },
        ));
        let t = Thresholds::default();
        let findings = collect(&source, now(), &t).await.unwrap();
        let CsrCheck::NotChecked { reason, message } = &findings.certificate_requests else {
            panic!("{findings:?}")
        };
        assert_eq!(*reason, "ClusterUnreachable");
        assert!(
            message.len() <= MAX_NOT_CHECKED_LEN + 3,
            "{}",
            message.len()
        );
        assert!(message.starts_with(
            "cannot read certificate signing requests from the API server: HTTP 502: <html>"
        ));
        let report = judge::report(&findings, &t, None);
        job_report::validate(&report).unwrap();
    }

    #[tokio::test]
    async fn leases_without_renew_time_are_not_heartbeats() {
        let mut source = cluster(3);
        source.leases[1].renewed = None;
        let findings = collect(&source, now(), &Thresholds::default())
            .await
            .unwrap();
        assert_eq!(findings.leases, 2);
    }

    #[tokio::test]
    async fn an_expired_lease_list_restarts_once_and_a_second_expiry_fails() {
        let expired = || SourceError::Expired {
            resource: Resource::Leases,
            message: "HTTP 410: too old".to_owned(),
        };
        let source = cluster(10);
        *source.fail_once.lock().unwrap() = Some((Resource::Leases, 4, expired()));
        let findings = collect(&source, now(), &Thresholds::default())
            .await
            .unwrap();
        assert_eq!(findings, expected(&source));

        // Expired twice in a row (restart, then again): reported, reason ClusterUnreachable.
        struct TwiceExpired(MemorySource);
        impl NodeSource for TwiceExpired {
            async fn node_page(
                &self,
                token: Option<String>,
            ) -> Result<Page<NodeSummary>, SourceError> {
                self.0.node_page(token).await
            }
            async fn lease_page(
                &self,
                _token: Option<String>,
            ) -> Result<Page<LeaseRenewal>, SourceError> {
                Err(SourceError::Expired {
                    resource: Resource::Leases,
                    message: "HTTP 410: too old".to_owned(),
                })
            }
            async fn csr_page(
                &self,
                token: Option<String>,
            ) -> Result<Page<CsrSummary>, SourceError> {
                self.0.csr_page(token).await
            }
        }
        let err = collect(&TwiceExpired(cluster(2)), now(), &Thresholds::default())
            .await
            .unwrap_err();
        assert_eq!(err.reason(), "ClusterUnreachable");
    }

    #[tokio::test]
    async fn a_server_handing_out_tokens_forever_is_cut_off() {
        let mut source = cluster(1);
        source.endless = true;
        let err = collect(&source, now(), &Thresholds::default())
            .await
            .unwrap_err();
        assert_eq!(err.reason(), "ClusterUnreachable");
        assert_eq!(
            err.to_string(),
            "cannot read leases in namespace kube-node-lease from the API server: the API server returned more than 10000 pages"
        );
    }

    #[test]
    fn failure_report_is_valid_and_says_nothing_was_checked() {
        let err = SourceError::Forbidden {
            resource: Resource::Nodes,
            message: "HTTP 403: nodes is forbidden".to_owned(),
        };
        let r = failure_report(&err, Some(9));
        job_report::validate(&r).unwrap();
        assert_eq!(r.observed_generation, Some(9));
        let a = r.condition("Available").unwrap();
        assert_eq!(a.status, ConditionStatus::Unknown);
        assert!(
            a.message
                .starts_with("Nodes were not checked: not allowed to list nodes")
        );
    }
}
