//! HyperShift: the objects the adapter ships to a management cluster (`hypershift.openshift.io`),
//! built from a validated HyperFleet spec as the current HyperShift API accepts them, the fields
//! they may not change after creation, and how to read their fed-back status
//! (`hypershift-api.md`).

pub mod hostedcluster;
pub mod immutable;
pub mod nodepool;

/// API group of HostedCluster and NodePool.
pub const GROUP: &str = "hypershift.openshift.io";
/// Their `apiVersion`.
pub const API_VERSION: &str = "hypershift.openshift.io/v1beta1";
