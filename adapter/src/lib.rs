//! HyperFleet adapter Job for HyperShift: builds a HostedCluster, ships it in a ManifestWork and
//! maps what comes back to Applied / Available / Health.

pub mod cluster;
pub mod controlplane;
pub mod hostedcluster;
pub mod manifestwork;
