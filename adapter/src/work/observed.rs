//! Whether an object's operator (the HyperShift operator, for a HostedCluster or a NodePool) has
//! observed what the work agent applied: the window between the agent's apply of a new spec and
//! the operator's next reconcile, during which the object's status still describes the previous
//! spec. Transport-neutral: the pulse says which conditions its tables read and which release the
//! work asks for.
//!
//! What the real systems do (`fixtures/hypershift-operator/b-gke-like/watch-*.json`,
//! `fixtures/maestro/real/09d-*`, and the real kube-apiserver): a spec change bumps the object's
//! `metadata.generation`, a status write does not; the operator stamps every condition it writes
//! with the `metadata.generation` it reconciled (`observedGeneration`), and until its next status
//! write the conditions keep the old one (`hypershift-api.md` §2.3: "status stale: a condition's
//! observedGeneration < metadata.generation"). A HostedCluster's `status.version.desired` follows
//! `spec.release.image` in the same write. `status.version.observedGeneration`, on the other hand,
//! is not comparable: the recorded operator left it at 1 while its own writes of `spec.clusterID`
//! and `spec.infraID` took the object to generation 3 and every condition said 3, and moved it
//! only with the next release. So the judgment rests on the conditions the condition tables read
//! and, for a HostedCluster, on the release the work asks for.
//!
//! The object's `metadata.generation` reaches the adapter as the feedback value
//! [`GENERATION_FEEDBACK_NAME`](super::manifestwork::GENERATION_FEEDBACK_NAME) (an `Integer`
//! on Maestro's agent and on a standard OCM hub alike). A work published before the adapter asked
//! for it has none: then only the release is compared, until the next update republishes the work.

use std::time::Duration;

use crate::duration::{friendly, is_past};

/// What the work agent reports of the object it applied, besides the object's status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AppliedObject<'a> {
    /// The object's `metadata.generation` on the management cluster, when fed back.
    pub generation: Option<i64>,
    /// When the agent last applied a change to it: the manifest's `Applied` condition's
    /// `lastTransitionTime` (the agent moves it with every new spec it applies, recording `09b`).
    pub applied_at: Option<&'a str>,
}

/// The default bound on an operator's lag (`--operator-stuck-after`). The recorded HyperShift
/// operator observed a spec change within 5 s on an idle management cluster
/// (`fixtures/hypershift-operator/*/06-after-update-5s.json`); one that holds hundreds of control
/// planes works through its queue in minutes. Ten minutes is well past both and short against the
/// HostedCluster's own rollouts, so an operator that is down or wedged is named within one
/// pulse-Job lifetime of noticing.
pub const DEFAULT_STUCK_AFTER: &str = "10m";

/// The clock an operator's lag is measured with, and the bound past which it is a problem.
#[derive(Debug, Clone, Copy)]
pub struct OperatorClock {
    pub now: jiff::Timestamp,
    pub stuck_after: Duration,
}

/// The operator has not observed what the agent applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lag {
    /// The object's `metadata.generation` (what was applied), when fed back.
    pub applied: Option<i64>,
    /// The oldest `observedGeneration` of the conditions read; `None` when none carries one.
    pub observed: Option<i64>,
    /// The condition types read that describe an older generation (or carry none), in status order.
    pub behind: Vec<String>,
    /// `(asked, desired)`: the release image the work asks for and the one the operator reports
    /// as desired, when they differ.
    pub release: Option<(String, String)>,
    /// When the agent applied it (RFC 3339), when known.
    pub applied_at: Option<String>,
}

impl Lag {
    /// Whether the lag has lasted past the clock's bound (never, when the apply time is unknown).
    pub fn is_stuck(&self, clock: OperatorClock) -> bool {
        self.applied_at
            .as_deref()
            .is_some_and(|at| is_past(at, clock.stuck_after, clock.now))
    }

    /// `generation 4 of HostedCluster ns/name`-style words: what was applied and what the operator
    /// still describes, e.g. `metadata.generation 4 (applied at T, less than 10m ago); its status
    /// describes generation 3 (conditions Available, Progressing)`.
    pub fn describe(&self, clock: OperatorClock) -> String {
        let mut parts = Vec::new();
        let when = match &self.applied_at {
            Some(at) => {
                let age = if self.is_stuck(clock) {
                    "more than"
                } else {
                    "less than"
                };
                format!(
                    "applied by the work agent at {at}, {age} {} ago",
                    friendly(clock.stuck_after)
                )
            }
            None => "applied by the work agent (its apply time is not reported)".to_owned(),
        };
        if let Some(applied) = self.applied {
            let seen = match self.observed {
                Some(observed) => format!("its status describes generation {observed}"),
                None => "its status does not say which generation it describes".to_owned(),
            };
            let behind = if self.behind.is_empty() {
                String::new()
            } else {
                format!(" (conditions {})", self.behind.join(", "))
            };
            parts.push(format!(
                "the object is at metadata.generation {applied}, {when}; {seen}{behind}"
            ));
        } else {
            parts.push(format!("the spec was {when}"));
        }
        if let Some((asked, desired)) = &self.release {
            let desired = if desired.is_empty() {
                "no release".to_owned()
            } else {
                format!("release {desired}")
            };
            parts.push(format!(
                "the operator reports {desired} as desired, the work asks for {asked}"
            ));
        }
        parts.join("; ")
    }
}

/// One condition of the object's status as the condition tables read it: its type and the
/// generation it was written for.
#[derive(Debug, Clone, Copy)]
pub struct Stamp<'a> {
    pub type_: &'a str,
    pub observed_generation: Option<i64>,
}

/// Whether the operator has observed `applied`: every condition in `read` (the types the tables
/// read, in `conditions`) carries an `observedGeneration` of at least the object's generation, and
/// the release it reports as desired is the one asked for (`release`: `(asked, desired)`). `None`
/// when it has, or when nothing can be judged: no generation fed back and no release to compare,
/// or no condition the tables read (a status without them is never available).
pub fn lag<'a>(
    applied: AppliedObject<'_>,
    conditions: impl IntoIterator<Item = Stamp<'a>>,
    read: &[&str],
    release: Option<(&str, &str)>,
) -> Option<Lag> {
    let read: Vec<Stamp<'a>> = conditions
        .into_iter()
        .filter(|c| read.contains(&c.type_))
        .collect();
    let release = release
        .filter(|(asked, desired)| !asked.is_empty() && asked != desired)
        .map(|(asked, desired)| (asked.to_owned(), desired.to_owned()));
    let mut behind = Vec::new();
    let mut observed = None;
    if let Some(generation) = applied.generation
        && !read.is_empty()
    {
        observed = read.iter().filter_map(|c| c.observed_generation).min();
        let stamped = observed.is_some();
        behind = read
            .iter()
            .filter(|c| match c.observed_generation {
                Some(g) => g < generation,
                // A condition without one says nothing, unless none says anything.
                None => !stamped,
            })
            .map(|c| c.type_.to_owned())
            .collect();
    }
    if behind.is_empty() && release.is_none() {
        return None;
    }
    Some(Lag {
        applied: applied.generation,
        observed,
        behind,
        release,
        applied_at: applied.applied_at.map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const READ: &[&str] = &["Available", "Progressing", "Degraded"];

    fn stamps(list: &[(&'static str, Option<i64>)]) -> Vec<Stamp<'static>> {
        list.iter()
            .map(|(t, g)| Stamp {
                type_: t,
                observed_generation: *g,
            })
            .collect()
    }

    fn applied(generation: i64) -> AppliedObject<'static> {
        AppliedObject {
            generation: Some(generation),
            applied_at: Some("2026-11-26T14:35:10Z"),
        }
    }

    #[test]
    fn conditions_of_the_applied_generation_mean_observed() {
        let list = stamps(&[("Available", Some(4)), ("Progressing", Some(4))]);
        assert_eq!(lag(applied(4), list, READ, None), None);
    }

    #[test]
    fn a_condition_of_an_older_generation_is_a_lag_naming_it() {
        // The recorded write in progress: some conditions already 4, one still 3.
        let list = stamps(&[
            ("Available", Some(3)),
            ("Progressing", Some(4)),
            ("GCPEndpointAvailable", None),
            ("ClusterVersionAvailable", Some(3)),
        ]);
        let lag = lag(applied(4), list, READ, None).unwrap();
        assert_eq!(lag.behind, ["Available"]);
        assert_eq!((lag.applied, lag.observed), (Some(4), Some(3)));
    }

    #[test]
    fn conditions_without_observed_generation_are_ignored_unless_none_has_one() {
        let some = stamps(&[("Available", Some(4)), ("Degraded", None)]);
        assert_eq!(lag(applied(4), some, READ, None), None);
        let none = stamps(&[("Available", None), ("Degraded", None)]);
        let lag = lag(applied(4), none, READ, None).unwrap();
        assert_eq!(lag.behind, ["Available", "Degraded"]);
        assert_eq!(lag.observed, None);
    }

    #[test]
    fn nothing_is_judged_without_a_generation_or_a_condition_read() {
        let list = stamps(&[("Available", Some(1))]);
        let old_work = AppliedObject {
            generation: None,
            applied_at: None,
        };
        assert_eq!(lag(old_work, list.clone(), READ, None), None);
        assert_eq!(lag(applied(4), stamps(&[]), READ, None), None);
        assert_eq!(
            lag(applied(4), stamps(&[("Other", Some(1))]), READ, None),
            None
        );
    }

    #[test]
    fn a_release_the_operator_has_not_taken_up_is_a_lag_even_without_a_generation() {
        let asked = "quay.io/openshift-release-dev/ocp-release:4.19.10-multi";
        let desired = "quay.io/openshift-release-dev/ocp-release:4.19.3-multi";
        let old_work = AppliedObject::default();
        let list = stamps(&[("Available", Some(3))]);
        let lag = lag(old_work, list.clone(), READ, Some((asked, desired))).unwrap();
        assert_eq!(lag.release, Some((asked.to_owned(), desired.to_owned())));
        assert!(lag.behind.is_empty());
        assert_eq!(lag_of_same_release(list), None);
    }

    fn lag_of_same_release(list: Vec<Stamp<'static>>) -> Option<Lag> {
        let image = "quay.io/openshift-release-dev/ocp-release:4.19.3-multi";
        lag(applied(3), list, READ, Some((image, image)))
    }

    #[test]
    fn the_description_names_generations_conditions_release_and_age_against_the_bound() {
        let clock = |now: &str| OperatorClock {
            now: now.parse().unwrap(),
            stuck_after: Duration::from_secs(600),
        };
        let lag = lag(
            applied(4),
            stamps(&[("Available", Some(3)), ("Progressing", Some(3))]),
            READ,
            Some(("img:4.19.10", "img:4.19.3")),
        )
        .unwrap();
        let early = clock("2026-11-26T14:36:10Z");
        assert!(!lag.is_stuck(early));
        assert_eq!(
            lag.describe(early),
            "the object is at metadata.generation 4, applied by the work agent at 2026-11-26T14:35:10Z, less than 10m ago; its status describes generation 3 (conditions Available, Progressing); the operator reports release img:4.19.3 as desired, the work asks for img:4.19.10"
        );
        let late = clock("2026-11-26T14:45:11Z");
        assert!(lag.is_stuck(late));
        assert!(lag.describe(late).contains("more than 10m ago"));
        let unknown = Lag {
            applied_at: None,
            ..lag
        };
        assert!(!unknown.is_stuck(late), "no apply time: never stuck");
    }
}

/// Pins [`lag`] and [`Lag::describe`] over a grid of generations, condition stamps, releases and
/// apply times.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod pinned {
    use std::fmt::Write as _;

    use super::*;

    #[test]
    fn lags_and_descriptions() {
        const READ: &[&str] = &["Available", "Progressing"];
        let clock = OperatorClock {
            now: "2026-11-26T14:45:11Z".parse().unwrap(),
            stuck_after: Duration::from_secs(600),
        };
        let stamp_sets: [&[(&str, Option<i64>)]; 6] = [
            &[],
            &[("Available", Some(4)), ("Progressing", Some(4))],
            &[
                ("Available", Some(3)),
                ("Progressing", Some(4)),
                ("Other", Some(1)),
            ],
            &[("Available", None), ("Progressing", None)],
            &[("Available", None), ("Progressing", Some(2))],
            &[("Other", Some(1))],
        ];
        let mut out = String::new();
        for generation in [None, Some(4)] {
            for applied_at in [
                None,
                Some("2026-11-26T14:35:10Z"),
                Some("2026-11-26T14:40:00Z"),
                Some("garbage"),
            ] {
                for stamps in stamp_sets {
                    for release in [
                        None,
                        Some(("a", "a")),
                        Some(("", "b")),
                        Some(("a", "")),
                        Some(("a", "b")),
                    ] {
                        let applied = AppliedObject {
                            generation,
                            applied_at,
                        };
                        let stamps = stamps.iter().map(|(t, g)| Stamp {
                            type_: t,
                            observed_generation: *g,
                        });
                        let found = lag(applied, stamps, READ, release);
                        let _ = writeln!(
                            out,
                            "{generation:?} {applied_at:?} {release:?}: {found:?}{}",
                            found.as_ref().map_or(String::new(), |l| format!(
                                "\n  {} stuck {}",
                                l.describe(clock),
                                l.is_stuck(clock)
                            ))
                        );
                    }
                }
            }
        }
        insta::assert_snapshot!("lags_and_descriptions", out);
    }
}
