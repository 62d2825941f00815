//! HyperFleet: the input.

pub mod api;
pub mod cluster;
