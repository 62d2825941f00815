//! The subcommands.

pub mod controlplane;
pub mod nodes;
