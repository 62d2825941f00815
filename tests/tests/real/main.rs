//! The real servers suites: every test here runs against the team folder's kit
//! (`testbed::real`, `shared/real-systems`): the real kube-apiserver and job controller, the real
//! Maestro server and agents, the real HyperFleet API, RabbitMQ, Sentinel and the framework.
//! Without the kit each suite prints one skip line and its tests pass without running.
//!
//! One test binary, so the servers are started (and, when this process started them, stopped)
//! once per run; each suite is a module.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod diagnose_real;
mod differential_hyperfleet;
mod differential_kube;
mod differential_maestro;
mod direct;
mod events;
mod faults;
mod harness;
mod helm;
mod loop_common;
mod loop_controlplane;
mod loop_nodepool;
mod observed_generation;
mod placement;
mod played_operator;
mod pulse;
mod token;
