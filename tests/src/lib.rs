//! Test bed for the HyperShift adapter: in-process fakes of the systems the binaries talk to
//! (a Kubernetes API server, Maestro), and helpers to run the real binaries against them.

// Unit tests may unwrap: a panic there is a failed test. Server code handles bad input as Status bodies.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod bench;
pub mod binaries;
pub mod csr;
pub mod docs;
// Test support only: a panic on a malformed fixture is a failed test.
pub mod hub_agent;
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub mod hyperfleet;
pub mod ids;
pub mod kube_api;
pub mod kubelet;
pub mod local_pulse;
pub mod maestro;
pub mod nodepool;
pub mod ocm_feedback;
// Test support only: a panic on a malformed fixture is a failed test.
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub mod openapi;
pub mod placement;
pub mod pulse_job;
pub mod real;
pub mod real_pulse;
