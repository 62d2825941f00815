//! CEL and the framework's per-event pipeline for the HyperFleet conformance tests (the `cel`
//! crate is a dev-dependency, so this lives with the test; the rest is `testbed::hyperfleet`).

pub mod cel_env;
pub mod run;
