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

#[cfg(test)]
mod tests {
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
    fn budgets_take_seconds_or_durations() {
        assert_eq!(parse_budget("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_budget("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_budget("500ms"), Ok(Duration::from_millis(500)));
        assert!(parse_budget("-1").is_err());
        assert!(parse_budget("soon").is_err());
    }
}
