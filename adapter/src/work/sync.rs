//! The backend calls of a pulse, the same for every object: transient failures retried with
//! jittered exponential backoff (1 s → 60 s) within a budget and cut short by shutdown
//! ([`with_retry`]); a create that races another writer reads the work instead
//! ([`create_or_read`]); how the pulse's generation compares with the work's
//! ([`generation_check`]).

use std::future::Future;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::{ExistingWork, WorkClient, WorkError};

/// First backoff delay after a transient failure.
pub const INITIAL_BACKOFF: Duration = Duration::from_secs(1);
/// Longest backoff delay.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// How the retry loop ended without an answer.
#[derive(Debug, Clone)]
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
