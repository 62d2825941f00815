//! Testbed: in-process fakes of the systems the binaries talk to, and end-to-end tests.

pub mod maestro;
