//! Keeping one work in step with what a pulse wants, the same way for every object: read it,
//! create it when missing, update it when the pulse's generation is newer (guarded by the version
//! read, one re-read and retry on a stale version), delete it; transient backend failures retried
//! with jittered exponential backoff (1 s → 60 s) within a budget, and cut short by shutdown.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::manifestwork::{Owner, is_ours, work_generation};
use super::{ExistingWork, WorkClient, WorkError};

/// First backoff delay after a transient failure.
pub const INITIAL_BACKOFF: Duration = Duration::from_secs(1);
/// Longest backoff delay.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// What the backend said, once it answered.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per pulse, moved once
pub enum Seen {
    Created,
    Found(ExistingWork),
}

/// How the retry loop ended without an answer.
#[derive(Debug)]
pub enum Failure {
    /// A failure retrying cannot fix.
    Permanent(WorkError),
    /// Still transient when the budget ran out.
    GaveUp {
        error: WorkError,
        attempts: u32,
        elapsed: Duration,
    },
    /// Shutdown was requested first.
    Interrupted { last: Option<WorkError> },
}

/// The fields every log line of a pulse's backend calls carries.
#[derive(Debug, Clone, Copy)]
pub struct LogContext<'a> {
    pub cluster_id: &'a str,
    /// Set by NodePool pulses.
    pub nodepool_id: Option<&'a str>,
    pub generation: Option<i64>,
}

/// Runs `attempt` until it succeeds, fails permanently, the budget is spent or `shutdown`
/// resolves. Each attempt is cut at the budget's end; between attempts the delay doubles from
/// [`INITIAL_BACKOFF`] up to [`MAX_BACKOFF`], each drawn from `[d/2, d]` (jitter).
pub async fn with_retry<T, Fut>(
    budget: Duration,
    shutdown: impl Future<Output = ()>,
    log: LogContext<'_>,
    mut attempt: impl FnMut() -> Fut,
) -> Result<T, Failure>
where
    Fut: Future<Output = Result<T, WorkError>>,
{
    let start = Instant::now();
    let deadline = start + budget;
    let mut backoff = INITIAL_BACKOFF;
    let mut attempts = 0u32;
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        attempts += 1;
        let result = tokio::select! {
            biased;
            () = &mut shutdown => return Err(Failure::Interrupted { last: None }),
            r = tokio::time::timeout_at(deadline, attempt()) => r.unwrap_or_else(|_| {
                Err(WorkError::Unavailable {
                    message: format!("no answer within the retry budget of {} s", budget.as_secs()),
                })
            }),
        };
        let error = match result {
            Ok(value) => return Ok(value),
            Err(e) if e.is_transient() => e,
            Err(e) => return Err(Failure::Permanent(e)),
        };
        let delay = jitter(backoff);
        let now = Instant::now();
        if now + delay >= deadline {
            return Err(Failure::GaveUp {
                error,
                attempts,
                elapsed: now - start,
            });
        }
        tracing::info!(
            cluster_id = log.cluster_id,
            nodepool_id = log.nodepool_id,
            generation = log.generation,
            attempt = attempts,
            delay_ms = delay.as_millis() as u64,
            error = %error,
            "transient backend failure; retrying"
        );
        tokio::select! {
            biased;
            () = &mut shutdown => return Err(Failure::Interrupted { last: Some(error) }),
            () = tokio::time::sleep(delay) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// A delay drawn uniformly from `[d/2, d]`.
pub fn jitter(d: Duration) -> Duration {
    let half = d / 2;
    let spread = u64::try_from(half.as_millis()).unwrap_or(u64::MAX);
    half + Duration::from_millis(fastrand::u64(0..=spread))
}

/// Reads the work; creates it when missing. A create that races another writer (AlreadyExists)
/// reads the work again.
pub async fn get_or_create(
    work: &impl WorkClient,
    name: &str,
    manifest: &Value,
) -> Result<Seen, WorkError> {
    if let Some(existing) = work.get(name).await? {
        return Ok(Seen::Found(existing));
    }
    create_or_read(work, name, manifest).await
}

/// Creates a work just read as missing; a create that races another writer (AlreadyExists) reads
/// the work instead.
pub async fn create_or_read(
    work: &impl WorkClient,
    name: &str,
    manifest: &Value,
) -> Result<Seen, WorkError> {
    match work.create(manifest).await {
        Ok(()) => Ok(Seen::Created),
        Err(WorkError::AlreadyExists { message }) => match work.get(name).await? {
            Some(existing) => Ok(Seen::Found(existing)),
            None => Err(WorkError::Unavailable {
                message: format!(
                    "the work was reported as existing but cannot be read yet: {message}"
                ),
            }),
        },
        Err(e) => Err(e),
    }
}

/// How a pulse's generation relates to the generation the work carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenerationCheck {
    /// Same generation, or either side unknown (a work without the annotation cannot be
    /// compared, so it is left as it is): nothing to send.
    Current,
    /// The pulse is newer: build and compare, then update.
    Newer,
    /// The pulse is older than the work: never roll back.
    Older { pulse: i64, held: i64 },
}

/// Compares the pulse's generation with the work's
/// [`GENERATION_ANNOTATION`](super::manifestwork::GENERATION_ANNOTATION). A work without the
/// annotation holds a spec of no known generation: a pulse with a generation is newer (it
/// stamps its own, after the same immutable-field checks), so that a report never claims a
/// generation the work does not carry.
pub fn generation_check(pulse: Option<i64>, held: Option<i64>) -> GenerationCheck {
    match (pulse, held) {
        (Some(p), Some(h)) if p > h => GenerationCheck::Newer,
        (Some(_), None) => GenerationCheck::Newer,
        (Some(p), Some(h)) if p < h => GenerationCheck::Older { pulse: p, held: h },
        _ => GenerationCheck::Current,
    }
}

/// How an update attempt ended.
#[derive(Debug)]
pub enum Updated<C> {
    /// Published.
    Sent,
    /// Nothing sent: the (re-read) work holds an object the new one may not replace; `C` says
    /// why (e.g. the immutable fields that would change).
    Refused(C),
    /// Nothing sent: after a conflict the re-read work already carries this generation or a
    /// newer one (another pulse updated it).
    AlreadyCurrent,
}

/// What an update needs to know besides the client.
#[derive(Debug, Clone, Copy)]
pub struct UpdateRequest<'a> {
    pub name: &'a str,
    pub owner: &'a Owner,
    pub generation: Option<i64>,
    pub log: LogContext<'a>,
}

/// One update of `existing` to `manifest`: `refuse` compares the work read with the new one
/// (`Some` = do not send), then publish; on a conflict re-read once and, unless the work moved
/// on, is no longer ours or is being deleted, compare and publish again.
pub async fn update_once<C>(
    work: &impl WorkClient,
    request: UpdateRequest<'_>,
    existing: &ExistingWork,
    manifest: &Value,
    refuse: impl Fn(&ExistingWork) -> Option<C>,
) -> Result<Updated<C>, WorkError> {
    if let Some(why) = refuse(existing) {
        return Ok(Updated::Refused(why));
    }
    let message = match work.update(manifest, existing).await {
        Ok(()) => return Ok(Updated::Sent),
        Err(WorkError::Conflict { message }) => message,
        Err(e) => return Err(e),
    };
    let log = request.log;
    tracing::info!(
        cluster_id = log.cluster_id,
        nodepool_id = log.nodepool_id,
        generation = log.generation,
        work = request.name,
        conflict = %message,
        "update conflict; reading the work again"
    );
    let Some(fresh) = work.get(request.name).await? else {
        return Err(WorkError::NotFound {
            message: format!("the work disappeared while it was being updated ({message})"),
        });
    };
    if !is_ours(&fresh.labels, request.owner) || fresh.deleting.is_some() {
        return Err(WorkError::Conflict { message });
    }
    if generation_check(request.generation, work_generation(&fresh.annotations))
        != GenerationCheck::Newer
    {
        return Ok(Updated::AlreadyCurrent);
    }
    if let Some(why) = refuse(&fresh) {
        return Ok(Updated::Refused(why));
    }
    work.update(manifest, &fresh).await?;
    Ok(Updated::Sent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_half_to_full() {
        for _ in 0..200 {
            let d = jitter(Duration::from_secs(8));
            assert!(
                d >= Duration::from_secs(4) && d <= Duration::from_secs(8),
                "{d:?}"
            );
        }
    }

    #[test]
    fn generations() {
        assert_eq!(generation_check(Some(3), Some(2)), GenerationCheck::Newer);
        assert_eq!(
            generation_check(Some(2), Some(3)),
            GenerationCheck::Older { pulse: 2, held: 3 }
        );
        assert_eq!(generation_check(Some(3), Some(3)), GenerationCheck::Current);
        assert_eq!(generation_check(None, Some(3)), GenerationCheck::Current);
        // A work without a generation is brought to the pulse's (it then carries it).
        assert_eq!(generation_check(Some(3), None), GenerationCheck::Newer);
        assert_eq!(generation_check(None, None), GenerationCheck::Current);
    }
}
