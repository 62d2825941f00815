//! Timestamps the way the API server stores them: RFC 3339, UTC, whole seconds.

use jiff::Timestamp;

/// Now, formatted like `metav1.Time`.
pub fn now() -> String {
    format_time(Timestamp::now())
}

/// `2026-11-25T08:00:00Z`: UTC, fraction dropped.
pub fn format_time(ts: Timestamp) -> String {
    let whole = Timestamp::from_second(ts.as_second()).unwrap_or(ts);
    whole.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Parses an RFC 3339 time and normalises it; the error is Go's `time.Parse` wording.
pub fn normalise(value: &str) -> Result<String, String> {
    let looks_rfc3339 = value.len() >= 20
        && value
            .as_bytes()
            .get(10)
            .is_some_and(|b| *b == b'T' || *b == b't');
    match value.parse::<Timestamp>() {
        Ok(ts) if looks_rfc3339 => Ok(format_time(ts)),
        _ => Err(format!(
            "parsing time {value:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse {value:?} as \"2006\""
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_fractions_are_normalised_to_utc_seconds() {
        assert_eq!(
            normalise("2026-11-25T10:00:00.123456+02:00").unwrap(),
            "2026-11-25T08:00:00Z"
        );
        assert_eq!(
            normalise("2026-11-25T10:00:00Z").unwrap(),
            "2026-11-25T10:00:00Z"
        );
    }

    #[test]
    fn words_are_rejected_with_go_wording() {
        assert_eq!(
            normalise("yesterday").unwrap_err(),
            r#"parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006""#
        );
    }
}
