//! HyperFleet adapter Job for HyperShift: builds a HostedCluster, ships it in a ManifestWork and
//! maps what comes back to Applied / Available / Health.

/// A lazily compiled, process-wide [`regex::Regex`] for a literal pattern.
macro_rules! regex {
    ($re:literal) => {{
        static RE: std::sync::LazyLock<regex::Regex> =
            std::sync::LazyLock::new(|| crate::compile_literal_regex($re));
        &*RE
    }};
}

#[expect(
    clippy::expect_used,
    reason = "only called by `regex!` with literal patterns, each exercised by unit tests"
)]
fn compile_literal_regex(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).expect("literal pattern compiles")
}

pub mod cli;
pub mod diagnose;
pub mod duration;
pub mod hyperfleet;
pub mod hypershift;
pub mod input_file;
pub mod kubeconfig;
pub mod message;
pub mod placement;
pub mod pulse;
pub mod work;

#[cfg(test)]
pub(crate) mod testing;
