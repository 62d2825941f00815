//! Conformance support for the HyperFleet integration: what the real adapter framework (v0.3.1)
//! and the real HyperFleet API would do with our task config, without either of them
//! (`docs/hyperfleet-framework.md` in the team folder is the source of every rule here).
//!
//! - [`schema`]: the framework's `AdapterTaskConfig` / `AdapterConfig` and its load rules;
//! - [`template`]: the Go-template subset the config renders with;
//! - [`api`]: the status `PUT` body rules (OpenAPI schema and handler rules, in order);
//! - [`fake_api`]: a HyperFleet API server that stores, aggregates and deletes like the real one;
//! - [`outcomes`]: the pulse Job in each outcome, written by the real status-reporter code.
//!
//! CEL evaluation lives with the conformance test (`tests/tests/hyperfleet_support/`), because
//! the `cel` crate is a dev-dependency.

pub mod api;
pub mod fake_api;
pub mod outcomes;
pub mod schema;
pub mod template;
