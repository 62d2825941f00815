//! What the HostedCluster and NodePool status readers share: the condition types each reads, the
//! operator's conditions quoted in its own words (bounded, credentials removed), and the
//! Available and Health conditions they write.

use job_report::{Condition, ConditionStatus};

use crate::message::{cond, or_none, quote, redact};

/// A status reader's condition types, listed once in `hypershift-api.md`'s order:
/// `condition_types! { /// docs  NAME = "Type", "Other", … }` declares `FED_BACK_CONDITIONS`,
/// every type listed (with the docs given), and `pub mod types`: a constant for each named type,
/// the ones the reader reads, and `ALL`, every named one.
macro_rules! condition_types {
    ($(#[$doc:meta])* $($($name:ident =)? $type_:literal,)+) => {
        $(#[$doc])*
        pub const FED_BACK_CONDITIONS: &[&str] = &[$($type_),+];

        /// The condition types this module reads, in one place: whatever carries the status back
        /// (a feedback rule per value, say) must carry these.
        pub mod types {
            $($(
                #[doc = concat!("`", $type_, "`.")]
                pub const $name: &str = $type_;
            )?)+
            /// Every type above.
            pub const ALL: [&str; [$($($name,)?)+].len()] = [$($($name,)?)+];
        }
    };
}
pub(super) use condition_types;

/// `Type=Status (Reason): message`, the operator's words bounded and redacted.
pub(super) fn operator_words(type_: &str, status: &str, reason: &str, message: &str) -> String {
    format!(
        "{type_}={} ({}): {}",
        status,
        or_none(reason),
        operator_message(message)
    )
}

/// An operator's message: bounded, credentials removed, an empty one made visible.
pub(super) fn operator_message(message: &str) -> String {
    if message.is_empty() {
        quote(message)
    } else {
        redact(message)
    }
}

/// `text()`, or nothing while `value` is empty (not reported yet).
pub(super) fn unless_empty(value: &str, text: impl FnOnce() -> String) -> String {
    (!value.is_empty()).then(text).unwrap_or_default()
}

/// Available True with `reason`.
pub(super) fn ready(reason: &str, message: String) -> Condition {
    cond("Available", ConditionStatus::True, reason, message)
}

/// Available False with `reason`.
pub(super) fn unavailable(reason: &str, message: String) -> Condition {
    cond("Available", ConditionStatus::False, reason, message)
}

/// Health False with `reason`.
pub(super) fn unhealthy(reason: &str, message: String) -> Condition {
    cond("Health", ConditionStatus::False, reason, message)
}
