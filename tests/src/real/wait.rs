//! Polling with a deadline: the real servers converge in their own time, so a test waits for a
//! state rather than for a duration, and a state that never comes fails with what was last seen.

use std::future::Future;
use std::time::{Duration, Instant};

use anyhow::bail;

/// How often [`eventually`] probes.
pub const PROBE_EVERY: Duration = Duration::from_millis(250);

/// Probes until `probe` yields `Some`, at most `timeout`; a probe error is remembered and
/// probing goes on (servers restart, objects appear late).
///
/// # Errors
/// When the deadline passes: the message names `what`, the time waited and the last probe
/// error, if any.
pub async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut probe: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<Option<T>>>,
{
    let started = Instant::now();
    let mut last_error = None;
    loop {
        match probe().await {
            Ok(Some(found)) => return Ok(found),
            Ok(None) => {}
            Err(e) => last_error = Some(format!("{e:#}")),
        }
        if started.elapsed() > timeout {
            match last_error {
                Some(e) => bail!("{what}: not within {timeout:?} (last error: {e})"),
                None => bail!("{what}: not within {timeout:?}"),
            }
        }
        tokio::time::sleep(PROBE_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn it_returns_the_first_some_and_fails_after_the_deadline() {
        let mut n = 0;
        let found = eventually(Duration::from_secs(5), "the third probe", || {
            n += 1;
            let value = n;
            async move { Ok((value >= 3).then_some(value)) }
        })
        .await
        .unwrap();
        assert_eq!(found, 3);
        let error = eventually(Duration::from_millis(300), "never", || async {
            anyhow::Result::<Option<()>>::Err(anyhow::anyhow!("refused"))
        })
        .await
        .unwrap_err();
        assert!(
            error.to_string().starts_with("never: not within")
                && error.to_string().contains("refused"),
            "{error}"
        );
    }
}
