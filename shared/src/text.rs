//! Foreign text made fit for a condition message, in one place for both binaries: credentials
//! removed ([`redact`]), one line ([`one_line`]), cut on a character boundary ([`truncate`]);
//! and the container termination message ([`termination_message`]) the adapter writes and the
//! status-reporter quotes.

use std::sync::LazyLock;

use regex::Regex;

/// The most bytes of a container's termination message the kubelet keeps: it reads at most the
/// last 4096 bytes of the `terminationMessagePath` file (`MaxContainerTerminationMessageLength`,
/// kubernetes `pkg/kubelet/container/runtime.go`, read with `tail.ReadAtMost` in
/// `pkg/kubelet/kuberuntime/kuberuntime_container.go`). The adapter writes no more, so nothing
/// it writes is cut by the kubelet; the status-reporter quotes no more.
pub const MAX_TERMINATION_MESSAGE: usize = 4096;

/// `s` cut to at most `max` bytes on a character boundary, ending in `…` when cut.
pub fn truncate(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut cut = max.saturating_sub('…'.len_utf8());
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

#[expect(
    clippy::expect_used,
    reason = "literal patterns, each exercised by the unit tests below"
)]
fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).expect("literal pattern compiles")
}

/// `Bearer x`, `Basic x`: the credential is the word after the scheme.
static SCHEME: LazyLock<Regex> = LazyLock::new(|| compile(r"(?i)\b(bearer|basic)(\s+)[^\s,;]+"));
/// `token=x`, `password: x`, `"client_secret":"x"`, …: the value of a secret-like key.
static KEYED: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        r#"(?i)([a-z_-]*(?:token|password|passwd|secret|credential|api[_-]?key)[a-z_-]*)("?\s*[:=]\s*"?)[^\s",;&}]+"#,
    )
});

/// `detail` with credentials replaced by `[REDACTED]`: the word after `Bearer` or `Basic`, and
/// the value of `token`, `password`, `secret`-like keys (`k=v`, `k: v`, `"k":"v"`). Not bounded.
pub fn redact(detail: &str) -> String {
    let once = SCHEME.replace_all(detail, "${1}${2}[REDACTED]");
    KEYED.replace_all(&once, "${1}${2}[REDACTED]").into_owned()
}

/// `text` on one line: every control character (line breaks, tabs, escape sequences, C1
/// controls) becomes a space, runs of whitespace one space, the ends trimmed.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_control() || c.is_whitespace() {
            space = true;
        } else {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    out
}

/// A termination message fit to write or quote: one line, credentials redacted, at most
/// [`MAX_TERMINATION_MESSAGE`] bytes (cut on a character boundary, marked `…`).
pub fn termination_message(text: &str) -> String {
    truncate(redact(&one_line(text)), MAX_TERMINATION_MESSAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_char_boundaries_and_marks_the_cut() {
        let cut = truncate("é".repeat(10), 7);
        assert!(cut.len() <= 7, "{cut}");
        assert!(cut.ends_with('…'));
        assert_eq!(truncate("short".to_owned(), 7), "short");
    }

    #[test]
    fn credentials_are_redacted() {
        let text = redact(r#"401: Bearer abc.def token=xyz "password":"p4ss" Basic dXNlcg=="#);
        for secret in ["abc.def", "xyz", "p4ss", "dXNlcg=="] {
            assert!(!text.contains(secret), "{text}");
        }
        assert!(text.contains("[REDACTED]"));
    }

    #[test]
    fn a_termination_message_over_4096_bytes_is_cut_to_4096_on_a_char_boundary() {
        // 4095 ASCII bytes then a 3-byte character straddling the limit.
        let text = format!("{}€ and more", "x".repeat(4095));
        let message = termination_message(&text);
        assert!(
            message.len() <= MAX_TERMINATION_MESSAGE,
            "{}",
            message.len()
        );
        assert!(message.ends_with('…'));
        assert!(!message.contains('€'));
        let long = "日本語".repeat(2000);
        let message = termination_message(&long);
        assert!(message.len() <= MAX_TERMINATION_MESSAGE);
        assert!(message.starts_with("日本語"));
        assert_eq!(
            termination_message("exactly fits"),
            "exactly fits",
            "a short message is unchanged"
        );
    }

    #[test]
    fn a_termination_message_is_one_line_without_control_characters() {
        let message = termination_message(
            "panicked at src/x.rs:1:\n\tboom\r\n\u{1b}[31mred\u{1b}[0m\u{0}nul\u{85}next  ",
        );
        assert_eq!(message, "panicked at src/x.rs:1: boom [31mred [0m nul next");
        assert!(!message.chars().any(char::is_control), "{message:?}");
    }

    #[test]
    fn a_token_in_a_termination_message_is_redacted() {
        let message = termination_message(
            "cannot reach https://maestro:8000: 401 Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln\nHYPERFLEET_API_TOKEN=s3cr3t-v4lue",
        );
        assert!(!message.contains("eyJhbGciOiJSUzI1NiJ9"), "{message}");
        assert!(!message.contains("s3cr3t-v4lue"), "{message}");
        assert!(message.contains("Bearer [REDACTED]"), "{message}");
    }
}
