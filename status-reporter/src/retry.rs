//! Exponential backoff with jitter, 100 ms doubling to 5 s.

use std::time::Duration;

const FIRST: Duration = Duration::from_millis(100);
const CAP: Duration = Duration::from_secs(5);

/// The delays between attempts: each a random time between half and all of a ceiling that
/// doubles from 100 ms to 5 s, so that many reporters retrying at once do not hit the server in step.
#[derive(Debug, Clone)]
pub struct Backoff {
    ceiling: Duration,
}

impl Backoff {
    pub fn new() -> Backoff {
        Backoff { ceiling: FIRST }
    }

    /// The next pause; never zero, never above 5 s.
    pub fn next_delay(&mut self) -> Duration {
        let ceiling = self.ceiling;
        self.ceiling = (self.ceiling * 2).min(CAP);
        let millis = u64::try_from(ceiling.as_millis()).unwrap_or(u64::MAX);
        Duration::from_millis(fastrand::u64(millis / 2..=millis))
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_and_stay_within_bounds() {
        let mut b = Backoff::new();
        let delays: Vec<Duration> = (0..12).map(|_| b.next_delay()).collect();
        assert!(delays[0] >= Duration::from_millis(50) && delays[0] <= FIRST);
        assert!(delays.iter().all(|d| *d <= CAP && !d.is_zero()));
        assert!(delays[11] >= CAP / 2, "{delays:?}");
    }
}
