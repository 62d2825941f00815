//! The `controlplane` pulse in the inventory modes (`--management-clusters-file`,
//! `--management-clusters-from-api`; docs/placement.md).
//!
//! One search finds the cluster's control-plane works on every consumer. Then:
//! - one live work → it is used where it is (sticky; the usual flow on it, its first read answered
//!   from the search), after the health rule on its management cluster's record: Unavailable and
//!   the agent never reported → withdrawn and placed again once (`FailedOverBeforeApply`);
//!   Unavailable and the agent reported → Health False `ManagementClusterUnavailable`, never a move;
//! - no live work → selection ([`crate::placement::select`]), then per ranked candidate: its
//!   placement lease ([`crate::placement::lease`]) acquired, its load counted again under the lease
//!   (full → the next candidate), a create with the placement resource id (a duplicate id =
//!   another pulse won: its work is read and used), the lease released. A lease held for the whole
//!   wait passes the candidate over (`busy`); a Lease API that cannot be used places nothing
//!   (`PlacementLockUnavailable`);
//! - several live works → the applied one is kept (else the oldest), the others withdrawn if
//!   their agent never reported; more than one applied → Health False `DoublePlacement`, nothing
//!   deleted;
//! - a deleting cluster → the usual deletion on the work found (the oldest live one, else the
//!   newest soft-deleted one).

use std::future::Future;

use futures::FutureExt;
use job_report::{ConditionStatus, Report};

use super::args::{Args, ConfigError};
use super::run::{Ctx, PulseInputs, report_failure, resolve_cluster_id, run_on, secret_settings};
use super::{OperatorClock, WorkRef, owner, report_created, report_invalid_spec};
use crate::hyperfleet::cluster::{ClusterInput, ClusterSpec};
use crate::placement::entity::Health;
use crate::placement::inventory::Inventory;
use crate::placement::lease::{Acquired, LeaseApi, PlacementLock};
use crate::placement::select::{self, PassedOver};
use crate::placement::{self as placement_rows, set_management_cluster};
use crate::placement::{cluster_works_search, consumer_load_search};
use crate::work::backend::Backend;
use crate::work::maestro::bundle::ResourceBundle;
use crate::work::maestro::placed::{
    BundleApi, PlacedWorkClient, count, find, is_live, never_reported,
};
use crate::work::maestro::placement_resource_id;
use crate::work::manifestwork;
use crate::work::sync::{self, Failure, LogContext};
use crate::work::{WorkClient, WorkError};

/// What one placed pulse reads and talks to.
#[derive(Debug)]
pub struct Placer<'a, A, I, L> {
    /// Maestro (REST list, gRPC publish).
    pub api: &'a A,
    /// The management clusters.
    pub inventory: &'a I,
    /// The placement lease (only a new placement uses it).
    pub lock: &'a PlacementLock<L>,
}

/// The `controlplane` decision in an inventory mode; see the module docs.
pub async fn run_placed<A: BundleApi, I: Inventory + Sync, L: LeaseApi>(
    args: &Args,
    placer: Placer<'_, A, I, L>,
    cluster: ClusterInput,
    inputs: &PulseInputs,
    shutdown: impl Future<Output = ()>,
) -> Result<Report, ConfigError> {
    let cluster_id = resolve_cluster_id(args.cluster_id.as_ref(), cluster.id.clone())?;
    let generation = args.generation.or(cluster.generation.filter(|g| *g >= 1));
    let work_name = manifestwork::hosted_cluster_work_name(&cluster_id);
    let source = args.work.maestro_source_id.as_str();
    let shutdown = shutdown.fuse();
    let mut shutdown = std::pin::pin!(shutdown);
    let searched = cluster_works_search(source, &cluster_id);
    let pulse = Pulse {
        args,
        placer: &placer,
        search: searched.as_deref().unwrap_or_default(),
        cluster_id: &cluster_id,
        generation,
        work_name: &work_name,
        source,
        inputs,
    };

    // A live cluster's spec is checked before anything is read: its region picks the candidates.
    let spec = if cluster.deleted_time.is_none() {
        match ClusterSpec::validate_with(
            &cluster_id,
            cluster.name.as_deref(),
            &cluster.spec,
            &secret_settings(args),
        ) {
            Ok(spec) => Some(spec),
            Err(violations) => {
                let fields: Vec<&str> = violations.iter().map(|v| v.field).collect();
                tracing::warn!(cluster_id, generation, decision = "InvalidClusterSpec", fields = ?fields, "cluster spec is invalid; nothing sent");
                return Ok(report_invalid_spec(&violations, generation));
            }
        }
    } else {
        None
    };

    let search = match &searched {
        Ok(search) => search.as_str(),
        Err(e) => {
            return Ok(pulse.failure(placement_rows::NOT_LOCATED, Failure::Permanent(e.clone())));
        }
    };
    let found = sync::with_retry(args.work.retry_budget, &mut shutdown, pulse.log(), || {
        find(placer.api, search)
    })
    .await;
    let mut found = match found {
        Ok(found) => found,
        Err(failure) => return Ok(pulse.failure(placement_rows::NOT_LOCATED, failure)),
    };
    found.sort_by(|a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
    let live: Vec<&ResourceBundle> = found.iter().filter(|b| is_live(b)).collect();
    let newest_withdrawn = found.iter().rev().find(|b| !is_live(b));

    let Some(spec) = spec else {
        // Deleting: the work wherever it is (the oldest live one, else the newest soft-deleted).
        let target = live.first().copied().or(newest_withdrawn);
        return pulse
            .on_found(target, cluster, &mut shutdown)
            .await
            .map(|(report, _)| report);
    };

    match live.as_slice() {
        [] => {
            // After a withdrawal whose agent never acknowledged it, the soft-deleted bundle keeps
            // its id: the new placement is named after it.
            let after = newest_withdrawn.map(|b| b.id.as_str());
            Ok(pulse
                .place(&spec, cluster, after, None, &mut shutdown)
                .await?)
        }
        [only] => pulse.steady(only, &spec, cluster, &mut shutdown).await,
        several => pulse.repair(several, &spec, cluster, &mut shutdown).await,
    }
}

struct Pulse<'a, A, I, L> {
    args: &'a Args,
    placer: &'a Placer<'a, A, I, L>,
    /// The Maestro search finding the cluster's control-plane works.
    search: &'a str,
    cluster_id: &'a str,
    generation: Option<i64>,
    work_name: &'a str,
    source: &'a str,
    inputs: &'a PulseInputs,
}

/// The health of a placed work's management cluster, as far as its record could be read.
enum McState {
    Known { name: String, health: Health },
    Unreadable(String),
}

/// What one ranked candidate came to under its lease.
enum Attempt {
    /// The create's outcome (the lease was released).
    Created(Result<(), Failure>),
    /// Passed over with this reason.
    PassedOver(String),
    /// The lease cannot be used.
    LockUnavailable(String),
    /// The pulse is shutting down.
    Interrupted,
}

impl<A: BundleApi, I: Inventory + Sync, L: LeaseApi> Pulse<'_, A, I, L> {
    fn log(&self) -> LogContext<'_> {
        LogContext {
            cluster_id: self.cluster_id,
            nodepool_id: None,
            generation: self.generation,
        }
    }

    fn ctx<'b>(&'b self, consumer: &'b str) -> Ctx<'b> {
        Ctx {
            cluster_id: self.cluster_id,
            generation: self.generation,
            work: WorkRef {
                consumer,
                name: self.work_name,
            },
            owner: owner(self.cluster_id),
            work_args: &self.args.work,
            operator: OperatorClock {
                now: self.inputs.now,
                stuck_after: self.args.operator_stuck_after,
            },
        }
    }

    fn failure(&self, consumer: &str, failure: Failure) -> Report {
        let mut report = report_failure(&self.ctx(consumer), failure);
        set_management_cluster(&mut report, consumer);
        report
    }

    /// The usual flow on `bundle` (or on no work), where it is. Returns the report and the
    /// consumer the work lives on.
    async fn on_found(
        &self,
        bundle: Option<&ResourceBundle>,
        cluster: ClusterInput,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> Result<(Report, String), ConfigError> {
        let (id, consumer, primed) = match bundle {
            Some(b) => match b.to_existing_work(Some(self.source.to_owned())) {
                Ok(existing) => (b.id.clone(), b.consumer_name.clone(), Some(existing)),
                Err(e) => {
                    return Ok((
                        self.failure(&b.consumer_name, Failure::Permanent(e)),
                        b.consumer_name.clone(),
                    ));
                }
            },
            None => (String::new(), String::new(), None),
        };
        let client = match PlacedWorkClient::new(
            self.placer.api,
            self.source,
            self.search,
            (&id, &consumer),
            primed,
        ) {
            Ok(client) => client,
            Err(e) => return Ok((self.failure(&consumer, Failure::Permanent(e)), consumer)),
        };
        let mut report = run_on(
            self.args,
            &client,
            &consumer,
            cluster,
            self.inputs,
            shutdown,
        )
        .await?;
        let consumer = client.consumer();
        set_management_cluster(&mut report, &consumer);
        Ok((report, consumer))
    }

    /// The record of `consumer`'s management cluster and its health.
    async fn management_cluster(&self, consumer: &str) -> McState {
        match self.placer.inventory.by_consumer(consumer).await {
            Err(e) => McState::Unreadable(e),
            Ok(found) => match found.into_iter().next() {
                None => McState::Known {
                    name: consumer.to_owned(),
                    health: Health::Unavailable(format!(
                        "no ManagementCluster names consumer {consumer}"
                    )),
                },
                Some(mc) => McState::Known {
                    health: mc.health(),
                    name: mc.name,
                },
            },
        }
    }

    /// One live work: sticky, after the health rule on its management cluster.
    async fn steady(
        &self,
        bundle: &ResourceBundle,
        spec: &ClusterSpec,
        cluster: ClusterInput,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> Result<Report, ConfigError> {
        let consumer = bundle.consumer_name.as_str();
        let state = self.management_cluster(consumer).await;
        let reported = bundle
            .to_existing_work(None)
            .map(|w| !never_reported(&w))
            .unwrap_or(true);
        if let McState::Known {
            name,
            health: Health::Unavailable(detail),
        } = &state
            && !reported
        {
            return self
                .fail_over(bundle, (name, detail), spec, cluster, shutdown)
                .await;
        }
        let (mut report, consumer) = self.on_found(Some(bundle), cluster, shutdown).await?;
        match state {
            McState::Known {
                name,
                health: Health::Unavailable(detail),
            } => {
                tracing::warn!(
                    cluster_id = self.cluster_id,
                    generation = self.generation,
                    management_cluster = consumer,
                    decision = placement_rows::MANAGEMENT_CLUSTER_UNAVAILABLE,
                    detail,
                    "the applied control plane's management cluster is unavailable; it stays there"
                );
                placement_rows::replace_condition(
                    &mut report,
                    placement_rows::management_cluster_unavailable(&name, &consumer, &detail),
                );
            }
            McState::Unreadable(e) => {
                tracing::warn!(cluster_id = self.cluster_id, management_cluster = consumer, error = %e, "the management cluster's record could not be read; Health left as the work says");
                if let Some(health) = report.conditions.iter_mut().find(|c| c.type_ == "Health") {
                    health.message = format!(
                        "{} (the record of management cluster {consumer} could not be read: {})",
                        health.message,
                        crate::message::redact(&e)
                    );
                }
            }
            McState::Known { .. } => {
                tracing::info!(
                    cluster_id = self.cluster_id,
                    generation = self.generation,
                    management_cluster = consumer,
                    decision = "Sticky",
                    "the cluster's work is used where it is"
                );
            }
        }
        Ok(report)
    }

    /// Withdraws a work no agent ever reported from an unavailable management cluster and places
    /// the cluster again among the others, once.
    async fn fail_over(
        &self,
        bundle: &ResourceBundle,
        (from_name, detail): (&str, &str),
        spec: &ClusterSpec,
        cluster: ClusterInput,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> Result<Report, ConfigError> {
        let from = bundle.consumer_name.as_str();
        let withdrawn = self.withdraw(bundle, shutdown).await;
        if let Err(failure) = withdrawn {
            return Ok(self.failure(from, failure));
        }
        tracing::warn!(cluster_id = self.cluster_id, generation = self.generation, management_cluster = from, work_id = %bundle.id, decision = placement_rows::FAILED_OVER_BEFORE_APPLY, detail, "withdrew the work no agent applied; placing it again");
        let mut report = self
            .place(
                spec,
                cluster,
                Some(&bundle.id),
                Some((from, detail)),
                shutdown,
            )
            .await?;
        let to = report
            .data
            .as_ref()
            .and_then(|d| d.get(placement_rows::DATA_MANAGEMENT_CLUSTER))
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let placed = report
            .condition("Applied")
            .is_some_and(|c| c.status == ConditionStatus::True);
        let what = format!(
            "The work on management cluster {from_name} (consumer {from}) was never applied and that management cluster is unavailable: {detail}; it was withdrawn (bundle {})",
            bundle.id
        );
        if placed {
            placement_rows::replace_condition(
                &mut report,
                crate::message::cond(
                    "Applied",
                    ConditionStatus::True,
                    placement_rows::FAILED_OVER_BEFORE_APPLY,
                    format!(
                        "{what} and ManifestWork {} was created on management cluster {to} instead",
                        self.work_name
                    ),
                ),
            );
            placement_rows::replace_condition(
                &mut report,
                crate::message::cond(
                    "Health",
                    ConditionStatus::True,
                    "NoIssues",
                    format!(
                        "The adapter failed the control plane over from management cluster {from_name} before it was applied; it is now placed on {to}"
                    ),
                ),
            );
        } else if let Some(applied) = report.conditions.iter_mut().find(|c| c.type_ == "Applied") {
            applied.message = format!("{what}. {}", applied.message);
        }
        Ok(report)
    }

    /// Requests deletion of `bundle` where it is.
    async fn withdraw(
        &self,
        bundle: &ResourceBundle,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> Result<(), Failure> {
        let client = PlacedWorkClient::new(
            self.placer.api,
            self.source,
            self.search,
            (&bundle.id, &bundle.consumer_name),
            None,
        )
        .map_err(Failure::Permanent)?;
        sync::with_retry(self.args.work.retry_budget, shutdown, self.log(), || {
            client.delete(self.work_name)
        })
        .await
    }

    /// Several live works: keep one, withdraw the never-applied others; two applied → DoublePlacement.
    async fn repair(
        &self,
        live: &[&ResourceBundle],
        spec: &ClusterSpec,
        cluster: ClusterInput,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> Result<Report, ConfigError> {
        let applied: Vec<&ResourceBundle> = live
            .iter()
            .copied()
            .filter(|b| {
                b.to_existing_work(None)
                    .map(|w| !never_reported(&w))
                    .unwrap_or(true)
            })
            .collect();
        if applied.len() > 1 {
            let works: Vec<(String, String)> = applied
                .iter()
                .map(|b| (b.id.clone(), b.consumer_name.clone()))
                .collect();
            tracing::error!(cluster_id = self.cluster_id, works = ?works, decision = placement_rows::DOUBLE_PLACEMENT, "the cluster's control plane was applied on more than one management cluster; nothing deleted");
            let (mut report, _) = self.on_found(Some(applied[0]), cluster, shutdown).await?;
            placement_rows::replace_condition(
                &mut report,
                placement_rows::double_placement(&works),
            );
            return Ok(report);
        }
        let keep = applied.first().copied().unwrap_or(live[0]);
        for other in live.iter().filter(|b| b.id != keep.id) {
            tracing::warn!(cluster_id = self.cluster_id, management_cluster = %other.consumer_name, work_id = %other.id, kept = %keep.id, decision = "WithdrawDuplicate", "a second live work of the cluster that no agent applied; withdrawn");
            if let Err(failure) = self.withdraw(other, shutdown).await {
                return Ok(self.failure(&other.consumer_name, failure));
            }
        }
        self.steady(keep, spec, cluster, shutdown).await
    }

    /// No live work: choose a management cluster and create the work there with the placement id.
    async fn place(
        &self,
        spec: &ClusterSpec,
        cluster: ClusterInput,
        after: Option<&str>,
        exclude: Option<(&str, &str)>,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> Result<Report, ConfigError> {
        let region = spec.gcp.region.as_str();
        let inventory = match self.placer.inventory.candidates(region).await {
            Ok(inventory) => inventory,
            Err(e) => {
                tracing::warn!(cluster_id = self.cluster_id, generation = self.generation, region, decision = placement_rows::INVENTORY_UNAVAILABLE, error = %e, "cannot read the management cluster inventory");
                return Ok(super::report(
                    self.generation,
                    placement_rows::inventory_unavailable_conditions(&e),
                    "",
                    "",
                ));
            }
        };
        let (eligible, mut passed) = select::screen(region, &inventory, exclude);
        let mut loaded = Vec::new();
        for candidate in eligible {
            let load = match consumer_load_search(self.source, &candidate.consumer) {
                Ok(search) => count(self.placer.api, &search)
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            loaded.push((candidate, load));
        }
        let ranked = select::rank(self.cluster_id, loaded, &mut passed);
        let id = placement_resource_id(self.source, self.work_name, after).to_string();
        for (candidate, load_now) in ranked {
            let consumer = candidate.consumer.as_str();
            let manifest =
                super::manifest_work_for(Backend::Maestro, spec, consumer, self.generation);
            let client = PlacedWorkClient::new(
                self.placer.api,
                self.source,
                self.search,
                (&id, consumer),
                None,
            )
            .map_err(Failure::Permanent);
            let created = match self
                .under_lease(consumer, candidate.max, &client, &manifest, shutdown)
                .await
            {
                Attempt::Created(created) => created,
                Attempt::PassedOver(reason) => {
                    passed.push(PassedOver {
                        name: candidate.name.clone(),
                        reason,
                    });
                    continue;
                }
                Attempt::LockUnavailable(e) => {
                    tracing::warn!(cluster_id = self.cluster_id, generation = self.generation, management_cluster = consumer, decision = placement_rows::PLACEMENT_LOCK_UNAVAILABLE, error = %crate::message::redact(&e), "cannot use the placement lease; nothing placed");
                    return Ok(super::report(
                        self.generation,
                        placement_rows::placement_lock_unavailable_conditions(&e),
                        "",
                        "",
                    ));
                }
                Attempt::Interrupted => {
                    return Ok(self.failure(consumer, Failure::Interrupted { last: None }));
                }
            };
            match created {
                Ok(()) => {
                    tracing::info!(cluster_id = self.cluster_id, generation = self.generation, management_cluster = consumer, load = load_now, work_id = id, decision = "ManifestWorkCreated", passed_over = ?passed.iter().map(ToString::to_string).collect::<Vec<_>>(), "control plane placed");
                    let mut report = report_created(
                        WorkRef {
                            consumer,
                            name: self.work_name,
                        },
                        self.generation,
                    );
                    set_management_cluster(&mut report, consumer);
                    return Ok(report);
                }
                Err(Failure::Permanent(WorkError::ConsumerNotFound { .. })) => {
                    tracing::warn!(
                        cluster_id = self.cluster_id,
                        management_cluster = consumer,
                        "Maestro does not know this consumer; trying the next candidate"
                    );
                    passed.push(PassedOver {
                        name: candidate.name.clone(),
                        reason: "unknown consumer".to_owned(),
                    });
                }
                Err(Failure::Permanent(WorkError::AlreadyExists { message })) => {
                    // Another pulse placed the cluster first with the same id: carry on with its work.
                    tracing::info!(cluster_id = self.cluster_id, management_cluster = consumer, work_id = id, conflict = %message, decision = "PlacedByAnotherPulse", "the placement id exists already; reading the cluster's work again");
                    let again = self.find_again(shutdown).await;
                    let found = match again {
                        Ok(found) => found,
                        Err(failure) => return Ok(self.failure(consumer, failure)),
                    };
                    let winner = found
                        .iter()
                        .find(|b| b.id == id)
                        .or_else(|| found.iter().find(|b| is_live(b)));
                    return self
                        .on_found(winner, cluster, shutdown)
                        .await
                        .map(|(report, _)| report);
                }
                Err(failure) => return Ok(self.failure(consumer, failure)),
            }
        }
        tracing::warn!(cluster_id = self.cluster_id, generation = self.generation, region, decision = placement_rows::NO_MANAGEMENT_CLUSTER_AVAILABLE, passed_over = ?passed.iter().map(ToString::to_string).collect::<Vec<_>>(), "no management cluster can take this control plane");
        Ok(super::report(
            self.generation,
            placement_rows::no_management_cluster_conditions(select::none_available_message(
                region, &passed,
            )),
            "",
            "",
        ))
    }

    /// Acquires `consumer`'s lease, counts its load again under it and creates the work there
    /// when it is below `max`; the lease is released before returning.
    async fn under_lease(
        &self,
        consumer: &str,
        max: u64,
        client: &Result<PlacedWorkClient<'_, A>, Failure>,
        manifest: &serde_json::Value,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> Attempt {
        let lock = self.placer.lock;
        let mut retried = false;
        loop {
            let held = match lock.acquire(consumer, &mut *shutdown).await {
                Acquired::Held(held) => held,
                Acquired::Busy { holder, waited } => {
                    return Attempt::PassedOver(format!(
                        "busy: placement lease held by {holder} for {}s",
                        waited.as_secs()
                    ));
                }
                Acquired::Unavailable(e) => return Attempt::LockUnavailable(e),
                Acquired::Interrupted => return Attempt::Interrupted,
            };
            tracing::info!(
                cluster_id = self.cluster_id,
                management_cluster = consumer,
                lease = held.name(),
                "placement lease held"
            );
            let load = match consumer_load_search(self.source, consumer) {
                Ok(search) => count(self.placer.api, &search)
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            let load = match load {
                Ok(load) => load,
                Err(e) => {
                    lock.release(held).await;
                    return Attempt::PassedOver(format!("load unknown: {e}"));
                }
            };
            if load >= max {
                lock.release(held).await;
                tracing::info!(
                    cluster_id = self.cluster_id,
                    management_cluster = consumer,
                    load,
                    max,
                    "full once counted under the placement lease"
                );
                return Attempt::PassedOver(format!("full: {load}/{max}"));
            }
            if held.too_old_to_publish() {
                lock.release(held).await;
                if retried {
                    return Attempt::PassedOver(format!(
                        "busy: counting under the placement lease took longer than {}s twice",
                        crate::placement::lease::publish_guard().as_secs_f64()
                    ));
                }
                tracing::warn!(
                    cluster_id = self.cluster_id,
                    management_cluster = consumer,
                    "more than half the placement lease passed before publishing; trying again"
                );
                retried = true;
                continue;
            }
            let created = match client {
                Ok(client) => {
                    sync::with_retry(
                        self.args.work.retry_budget,
                        &mut *shutdown,
                        self.log(),
                        || client.create(manifest),
                    )
                    .await
                }
                Err(_) => Err(Failure::Permanent(WorkError::Invalid {
                    message: "the cluster id cannot be searched for".to_owned(),
                })),
            };
            lock.release(held).await;
            return Attempt::Created(created);
        }
    }

    async fn find_again(
        &self,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> Result<Vec<ResourceBundle>, Failure> {
        sync::with_retry(self.args.work.retry_budget, shutdown, self.log(), || {
            find(self.placer.api, self.search)
        })
        .await
    }
}

#[cfg(test)]
mod tests;
