//! HyperFleet: the input. Clusters and NodePools read from the HyperFleet API or a file, and
//! their specs validated into typed values that only hold what HyperShift accepts.

pub mod api;
pub mod cluster;
pub mod nodepool;
pub mod nodepools;
pub mod resource;
pub mod spec;

/// Label carrying the HyperFleet cluster id, on the objects and works built for it.
pub const CLUSTER_ID_LABEL: &str = "hyperfleet.io/cluster-id";
/// Label carrying the HyperFleet NodePool id, on the objects and works built for it.
pub const NODEPOOL_ID_LABEL: &str = "hyperfleet.io/nodepool-id";
/// Label naming the adapter (kind of pulse) that owns a work: `controlplane`, `nodepool`.
pub const ADAPTER_LABEL: &str = "hyperfleet.io/adapter";
/// [`ADAPTER_LABEL`] values: the work of a cluster's control plane, and of one NodePool.
pub const CONTROLPLANE_ADAPTER: &str = "controlplane";
pub const NODEPOOL_ADAPTER: &str = "nodepool";

#[cfg(test)]
mod tests;
