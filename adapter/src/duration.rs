//! Durations as people write them in flags and env vars: `30s`, `5m`, `1h30m`, `500ms`, and
//! for budgets also a plain number of seconds.

use std::time::Duration;

use jiff::SignedDuration;

/// `30s`, `5m`, `2h`, `1h30m`, `500ms`; never negative.
pub fn parse_duration(s: &str) -> Result<SignedDuration, String> {
    let d: SignedDuration = s
        .trim()
        .parse()
        .map_err(|e| format!("invalid duration {s:?} (use e.g. 30s, 5m, 2h): {e}"))?;
    if d.is_negative() {
        return Err(format!("duration {s:?} must not be negative"));
    }
    Ok(d)
}

/// `120` (seconds) or a duration such as `90s`, `2m`.
pub fn parse_budget(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if let Ok(seconds) = s.parse::<u64>() {
        return Ok(Duration::from_secs(seconds));
    }
    parse_duration(s).map(|d| d.unsigned_abs())
}

/// Whether more than `limit` has passed from `since` (RFC 3339) to `now`. An unparsable `since`
/// never has: the caller reports what it saw without an age.
pub fn is_past(since: &str, limit: Duration, now: jiff::Timestamp) -> bool {
    let (Ok(since), Ok(limit)) = (
        since.parse::<jiff::Timestamp>(),
        SignedDuration::try_from(limit),
    ) else {
        return false;
    };
    since
        .checked_add(limit)
        .is_ok_and(|deadline| now > deadline)
}

/// `15m`, `90s`, `2h`: how a limit reads in a message (messages carry limits, not clock times,
/// so they do not change from pulse to pulse).
pub fn friendly(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 && s.is_multiple_of(3600) {
        format!("{}h", s / 3600)
    } else if s >= 60 && s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn durations_parse_as_people_write_them() {
        assert_eq!(parse_duration("30s"), Ok(SignedDuration::from_secs(30)));
        assert_eq!(parse_duration("30m"), Ok(SignedDuration::from_mins(30)));
        assert_eq!(parse_duration("1h30m"), Ok(SignedDuration::from_mins(90)));
        assert_eq!(
            parse_duration("500ms"),
            Ok(SignedDuration::from_millis(500))
        );
        assert!(parse_duration("-5m").is_err());
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn past_is_strictly_after_the_limit_and_never_for_garbage() {
        let now: jiff::Timestamp = "2026-11-26T12:00:00Z".parse().unwrap();
        let limit = Duration::from_secs(15 * 60);
        assert!(is_past("2026-11-26T11:44:59Z", limit, now));
        assert!(!is_past("2026-11-26T11:45:00Z", limit, now));
        assert!(!is_past("yesterday", limit, now));
        assert_eq!(friendly(Duration::from_secs(900)), "15m");
        assert_eq!(friendly(Duration::from_secs(90)), "90s");
        assert_eq!(friendly(Duration::from_secs(7200)), "2h");
    }

    #[test]
    fn budgets_take_seconds_or_durations() {
        assert_eq!(parse_budget("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_budget("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_budget("500ms"), Ok(Duration::from_millis(500)));
        assert!(parse_budget("-1").is_err());
        assert!(parse_budget("soon").is_err());
    }
}
