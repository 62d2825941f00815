//! The condition merge rule: `lastTransitionTime` moves only when `status` changes, and times
//! are compared at whole seconds, the precision the API server stores.

use jiff::Timestamp;

use crate::Condition;

/// A condition as the Job already carries it. The server stores any `status` string, so this
/// one is not parsed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StoredCondition {
    pub type_: String,
    pub status: String,
    pub reason: Option<String>,
    pub message: Option<String>,
    pub last_transition_time: Option<Timestamp>,
}

/// The conditions to write, and whether writing them would change anything.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The incoming conditions, each with its `lastTransitionTime` resolved (always `Some`, at
    /// whole seconds).
    pub conditions: Vec<Condition>,
    /// False when the Job already carries exactly these conditions.
    pub changed: bool,
}

/// Resolves the incoming conditions against the stored ones.
///
/// For each incoming condition, the first stored condition of the same type is its previous
/// state (a strategic merge patch updates only the first of duplicates). When the status is the
/// same, the stored `lastTransitionTime` is kept; otherwise it is the report's own time or `now`.
pub fn merge(stored: &[StoredCondition], incoming: &[Condition], now: Timestamp) -> Merged {
    let mut changed = false;
    let conditions = incoming
        .iter()
        .map(|c| {
            let previous = stored.iter().find(|s| s.type_ == c.type_);
            let kept = previous
                .filter(|p| p.status == c.status.as_str())
                .and_then(|p| p.last_transition_time);
            let time = whole_seconds(kept.or(c.last_transition_time).unwrap_or(now));
            changed |= match previous {
                None => true,
                Some(p) => {
                    p.status != c.status.as_str()
                        || p.reason.as_deref().unwrap_or_default() != c.reason
                        || p.message.as_deref().unwrap_or_default() != c.message
                        || !p.last_transition_time.is_some_and(|t| same_second(t, time))
                }
            };
            Condition {
                last_transition_time: Some(time),
                ..c.clone()
            }
        })
        .collect();
    Merged {
        conditions,
        changed,
    }
}

/// Whether two times are equal at the API server's precision (whole seconds).
pub fn same_second(a: Timestamp, b: Timestamp) -> bool {
    a.as_second() == b.as_second()
}

fn whole_seconds(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::ConditionStatus::{self, *};
    use proptest::prelude::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn stored(type_: &str, status: &str, reason: &str, message: &str, t: &str) -> StoredCondition {
        StoredCondition {
            type_: type_.into(),
            status: status.into(),
            reason: Some(reason.into()),
            message: Some(message.into()),
            last_transition_time: Some(ts(t)),
        }
    }

    const NOW: &str = "2026-11-26T12:00:00.750Z";
    const BEFORE: &str = "2026-11-25T10:00:00Z";

    #[test]
    fn same_status_keeps_time_even_when_message_changes() {
        let m = merge(
            &[stored("Available", "False", "Provisioning", "old", BEFORE)],
            &[Condition::new("Available", False, "Provisioning", "new")],
            ts(NOW),
        );
        assert!(m.changed);
        assert_eq!(m.conditions[0].last_transition_time, Some(ts(BEFORE)));
    }

    #[test]
    fn status_change_moves_time_to_now_at_whole_seconds() {
        let m = merge(
            &[stored("Available", "False", "Provisioning", "", BEFORE)],
            &[Condition::new("Available", True, "ControlPlaneReady", "")],
            ts(NOW),
        );
        assert!(m.changed);
        assert_eq!(
            m.conditions[0].last_transition_time,
            Some(ts("2026-11-26T12:00:00Z"))
        );
    }

    #[test]
    fn status_change_prefers_the_reports_own_time() {
        let mut c = Condition::new("Applied", True, "Created", "");
        c.last_transition_time = Some(ts("2026-11-26T11:59:58.9Z"));
        let m = merge(&[], &[c], ts(NOW));
        assert_eq!(
            m.conditions[0].last_transition_time,
            Some(ts("2026-11-26T11:59:58Z"))
        );
    }

    #[test]
    fn identical_conditions_are_not_a_change() {
        let m = merge(
            &[stored("Health", "True", "NoIssues", "fine", BEFORE)],
            &[Condition::new("Health", True, "NoIssues", "fine")],
            ts(NOW),
        );
        assert!(!m.changed);
    }

    #[test]
    fn unparsable_stored_status_counts_as_a_transition() {
        let m = merge(
            &[stored("Health", "Maybe", "X", "", BEFORE)],
            &[Condition::new("Health", True, "X", "")],
            ts(NOW),
        );
        assert!(m.changed);
        assert_eq!(
            m.conditions[0].last_transition_time,
            Some(ts("2026-11-26T12:00:00Z"))
        );
    }

    #[test]
    fn only_the_first_stored_duplicate_is_the_previous_state() {
        let m = merge(
            &[
                stored("Health", "False", "A", "", BEFORE),
                stored("Health", "True", "A", "", "2020-01-01T00:00:00Z"),
            ],
            &[Condition::new("Health", True, "A", "")],
            ts(NOW),
        );
        assert_eq!(
            m.conditions[0].last_transition_time,
            Some(ts("2026-11-26T12:00:00Z"))
        );
    }

    fn status() -> impl Strategy<Value = ConditionStatus> {
        prop_oneof![Just(True), Just(False), Just(Unknown)]
    }

    proptest! {
        /// Merging a second time against what the first merge produced changes nothing and keeps every time.
        #[test]
        fn merge_is_idempotent(
            statuses in proptest::collection::vec(status(), 1..6),
            msgs in proptest::collection::vec("[a-z ]{0,8}", 6),
            now_s in 1_700_000_000i64..1_900_000_000,
            frac in 0i32..1_000_000_000,
        ) {
            let now = Timestamp::new(now_s, frac).unwrap();
            let incoming: Vec<Condition> = statuses.iter().enumerate()
                .map(|(i, s)| Condition::new(format!("T{i}"), *s, "R", msgs[i].clone()))
                .collect();
            let first = merge(&[], &incoming, now);
            prop_assert!(first.changed);
            let as_stored: Vec<StoredCondition> = first.conditions.iter().map(|c| StoredCondition {
                type_: c.type_.clone(),
                status: c.status.as_str().to_owned(),
                reason: Some(c.reason.clone()),
                message: Some(c.message.clone()),
                last_transition_time: c.last_transition_time,
            }).collect();
            let later = Timestamp::new(now_s + 30, 0).unwrap();
            let second = merge(&as_stored, &incoming, later);
            prop_assert!(!second.changed);
            prop_assert_eq!(&second.conditions, &first.conditions);
        }

        /// The transition time moves exactly when the status changes.
        #[test]
        fn time_moves_iff_status_changes(old in status(), new in status(), msg in "[a-z]{0,5}") {
            let before = ts(BEFORE);
            let s = [StoredCondition { type_: "A".into(), status: old.as_str().into(), reason: Some("R".into()), message: Some(String::new()), last_transition_time: Some(before) }];
            let m = merge(&s, &[Condition::new("A", new, "R", msg)], ts(NOW));
            let t = m.conditions[0].last_transition_time.unwrap();
            prop_assert_eq!(same_second(t, before), old == new);
        }
    }
}
