//! HyperFleet hypershift adapter: builds a HostedCluster ManifestWork and talks to a work backend
//! (Maestro or an OCM hub) through the [`work::WorkClient`] trait.

pub mod maestro;
pub mod work;
