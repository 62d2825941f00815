//! Test bed for the HyperShift adapter: in-process fakes of the systems the binaries talk to.

pub mod kube_api;
