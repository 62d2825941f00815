//! The backend calls of a pulse, the same for every object: transient failures retried with
//! jittered exponential backoff (1 s → 60 s) within a budget and cut short by shutdown
//! ([`with_retry`]); a create that races another writer reads the work instead
//! ([`create_or_read`]).

use std::future::Future;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::{ExistingWork, Failure, WorkClient, WorkError};

/// First backoff delay after a transient failure.
pub const INITIAL_BACKOFF: Duration = Duration::from_secs(1);
/// Longest backoff delay.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

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

/// Creates a work just read as missing: `None` when created now. A create that races another
/// writer (AlreadyExists) reads the work instead (`Some`).
pub async fn create_or_read(
    work: &impl WorkClient,
    name: &str,
    manifest: &Value,
) -> Result<Option<ExistingWork>, WorkError> {
    match work.create(manifest).await {
        Ok(()) => Ok(None),
        Err(WorkError::AlreadyExists { message }) => match work.get(name).await? {
            Some(existing) => Ok(Some(existing)),
            None => Err(WorkError::Unavailable {
                message: format!(
                    "the work was reported as existing but cannot be read yet: {message}"
                ),
            }),
        },
        Err(e) => Err(e),
    }
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
}
