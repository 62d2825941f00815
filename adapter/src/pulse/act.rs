//! The act of a pulse: runs the plan ([`super::plan`]) to its outcome, answering each step it
//! asks — the only code of a pulse that talks to the work backend, the inventory and the
//! placement lease. Transient backend failures are retried within the retry budget
//! ([`crate::work::sync::with_retry`]); shutdown stops any retry and the call in flight.

use std::future::Future;
use std::time::Duration;

use futures::FutureExt;

use super::object::Object;
use super::plan::plan;
use super::step::{Answer, Attempt, Created, Outcome, Pulse, Read, Record, Seen, Step, Write};
use crate::hyperfleet::{ADAPTER_LABEL, CLUSTER_ID_LABEL, CONTROLPLANE_ADAPTER};
use crate::placement::entity::Health;
use crate::placement::inventory::Inventory;
use crate::placement::lease::{Acquired, LeaseApi, PlacementLock, publish_guard};
use crate::work::Failure;
use crate::work::sync::{LogContext, create_or_read, with_retry};
use crate::work::{WorkAt, WorkClient};

/// What a pulse reads from and writes to.
#[derive(Debug)]
pub struct Deps<'a, W, I, L> {
    pub work: &'a W,
    /// The management clusters (placement modes).
    pub inventory: Option<&'a I>,
    /// The placement lease (a new placement).
    pub lock: Option<&'a PlacementLock<L>>,
    pub retry_budget: Duration,
}

/// The labels of every control-plane work.
const CONTROL_PLANES: [(&str, &str); 1] = [(ADAPTER_LABEL, CONTROLPLANE_ADAPTER)];

/// Runs the pulse's plan to its outcome.
pub async fn drive<O, W, I, L>(
    deps: &Deps<'_, W, I, L>,
    pulse: &Pulse<O::Spec>,
    shutdown: impl Future<Output = ()>,
) -> Outcome
where
    O: Object,
    W: WorkClient,
    I: Inventory + Sync,
    L: LeaseApi,
{
    let shutdown = shutdown.fuse();
    let mut shutdown = std::pin::pin!(shutdown);
    let act = Act {
        deps,
        log: LogContext {
            cluster_id: &pulse.ids.cluster_id,
            nodepool_id: pulse.ids.nodepool_id.as_deref(),
            generation: pulse.generation,
        },
    };
    let mut seen = Seen::new(pulse);
    loop {
        match plan::<O>(&seen) {
            Step::Done(outcome) => return *outcome,
            Step::Read(read) => {
                tracing::debug!(cluster_id = act.log.cluster_id, step = ?read, "read");
                let answer = act.read(&read, &mut shutdown).await;
                seen.read(read, answer);
            }
            Step::Write(write) => {
                tracing::debug!(
                    cluster_id = act.log.cluster_id,
                    step = write.describe(),
                    "write"
                );
                let answer = act.write(&write, &mut shutdown).await;
                seen.wrote(&write, answer);
            }
        }
    }
}

struct Act<'a, 'd, W, I, L> {
    deps: &'a Deps<'d, W, I, L>,
    log: LogContext<'a>,
}

impl<W: WorkClient, I: Inventory + Sync, L: LeaseApi> Act<'_, '_, W, I, L> {
    /// `attempt` with retries on `deps`' budget, until `shutdown`.
    async fn retried<T, F: Future<Output = Result<T, crate::work::WorkError>>>(
        &self,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
        attempt: impl FnMut() -> F,
    ) -> Result<T, Failure> {
        with_retry(self.deps.retry_budget, shutdown, self.log, attempt).await
    }

    async fn read(&self, read: &Read, shutdown: &mut (impl Future<Output = ()> + Unpin)) -> Answer {
        let work = self.deps.work;
        match read {
            Read::Work { at, .. } => {
                let client = work.on(at);
                Answer::Work(self.retried(shutdown, || client.get(&at.name)).await)
            }
            Read::Find { .. } => {
                let cluster = self.log.cluster_id;
                let labels = [CONTROL_PLANES[0], (CLUSTER_ID_LABEL, cluster)];
                Answer::Found(self.retried(shutdown, || work.find(&labels)).await)
            }
            Read::Record { consumer } => Answer::Record(self.record(consumer).await),
            Read::Candidates { region } => Answer::Candidates(match self.deps.inventory {
                Some(inventory) => inventory.candidates(region).await,
                None => Err("no management cluster inventory is configured".to_owned()),
            }),
            Read::Loads { consumers } => {
                let mut loads = Vec::with_capacity(consumers.len());
                for consumer in consumers {
                    loads.push(self.load(consumer).await);
                }
                Answer::Loads(loads)
            }
        }
    }

    /// The record of `consumer`'s management cluster and its health.
    async fn record(&self, consumer: &str) -> Record {
        let Some(inventory) = self.deps.inventory else {
            return Record::Unreadable("no management cluster inventory is configured".to_owned());
        };
        match inventory.by_consumer(consumer).await {
            Err(e) => Record::Unreadable(e),
            Ok(found) => match found.into_iter().next() {
                None => Record::Known {
                    name: consumer.to_owned(),
                    health: Health::Unavailable(format!(
                        "no ManagementCluster names consumer {consumer}"
                    )),
                },
                Some(mc) => Record::Known {
                    health: mc.health(),
                    name: mc.name,
                },
            },
        }
    }

    /// How many control planes `consumer` holds (one request, not retried).
    async fn load(&self, consumer: &str) -> Result<u64, String> {
        self.deps
            .work
            .count(consumer, &CONTROL_PLANES)
            .await
            .map_err(|e| e.to_string())
    }

    async fn write(
        &self,
        write: &Write,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> Answer {
        let work = self.deps.work;
        match write {
            Write::Create { at, manifest } => {
                let client = work.on(at);
                let created = self
                    .retried(shutdown, || create_or_read(&client, &at.name, manifest))
                    .await;
                Answer::Created(created.map(|c| c.map_or(Created::Now, Created::Raced)))
            }
            Write::Update {
                at,
                manifest,
                current,
                ..
            } => {
                let client = work.on(at);
                Answer::Done(
                    self.retried(shutdown, || client.update(manifest, current))
                        .await,
                )
            }
            Write::Delete { at } => {
                let client = work.on(at);
                Answer::Done(self.retried(shutdown, || client.delete(&at.name)).await)
            }
            Write::Place { at, max, manifest } => {
                Answer::Placed(self.under_lease(at, *max, manifest, shutdown).await)
            }
        }
    }

    /// Acquires the lease of `at`'s management cluster, counts its control planes again under
    /// it and creates the work there when it holds fewer than `max`; the lease is released
    /// before returning. A lease held past half its duration before the create is let go and
    /// taken again, once.
    async fn under_lease(
        &self,
        at: &WorkAt,
        max: u64,
        manifest: &serde_json::Value,
        shutdown: &mut (impl Future<Output = ()> + Unpin),
    ) -> Attempt {
        let Some(lock) = self.deps.lock else {
            return Attempt::LockUnavailable("no placement lease is configured".to_owned());
        };
        let consumer = at.consumer.as_str();
        let client = self.deps.work.on(at);
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
            tracing::debug!(
                cluster_id = self.log.cluster_id,
                management_cluster = consumer,
                lease = held.name(),
                "placement lease held"
            );
            let load = match self.load(consumer).await {
                Ok(load) => load,
                Err(e) => {
                    lock.release(held).await;
                    return Attempt::PassedOver(format!("load unknown: {e}"));
                }
            };
            if load >= max {
                lock.release(held).await;
                return Attempt::PassedOver(format!("full: {load}/{max}"));
            }
            if held.too_old_to_publish() {
                lock.release(held).await;
                if retried {
                    return Attempt::PassedOver(format!(
                        "busy: counting under the placement lease took longer than {}s twice",
                        publish_guard().as_secs_f64()
                    ));
                }
                tracing::warn!(
                    cluster_id = self.log.cluster_id,
                    management_cluster = consumer,
                    "more than half the placement lease passed before publishing; trying again"
                );
                retried = true;
                continue;
            }
            let result = self
                .retried(&mut *shutdown, || client.create(manifest))
                .await;
            lock.release(held).await;
            return Attempt::Created {
                result,
                key: client.key(&at.name),
            };
        }
    }
}

impl Write {
    /// What the write does, for the log (without the manifest).
    pub fn describe(&self) -> String {
        let (verb, at) = match self {
            Write::Create { at, .. } => ("create", at),
            Write::Update { at, .. } => ("update", at),
            Write::Delete { at } => ("delete", at),
            Write::Place { at, .. } => ("place", at),
        };
        format!("{verb} {} on {}", at.name, at.consumer)
    }
}
