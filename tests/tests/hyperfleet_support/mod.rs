//! CEL and the framework's per-event pipeline for the HyperFleet conformance tests (the `cel`
//! crate is a dev-dependency, so this lives with the test; the rest is `testbed::hyperfleet`), and
//! the bridge from a pulse Job through the real task config to the testbed's HyperFleet API.

#[allow(
    dead_code,
    reason = "hyperfleet_conclusions.rs uses it; every test crate that includes this module compiles it"
)]
pub mod bridge;
pub mod cel_env;
pub mod run;
