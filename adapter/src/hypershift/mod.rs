//! HyperShift: the objects.

pub mod hostedcluster;
