//! HyperFleet HyperShift adapter: subcommands that check a cluster and write the adapter report.

pub mod nodes;
