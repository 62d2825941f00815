//! The adapter report contract shared by every HyperFleet adapter and the status-reporter.
//!
//! An adapter writes one JSON report (see [`Report`]) into the results directory with
//! [`write_atomic`]; the status-reporter reads it with [`read_bounded`], turns it into a
//! [`Report`] with [`parse`] (which accepts the legacy Go-reporter format too) and merges its
//! conditions onto the Job with [`merge`].
//!
//! This crate is pure: no async runtime, no Kubernetes client.

mod file;
mod legacy;
mod merge;
mod names;
mod report;
pub mod team_folder;
pub mod usage;
mod validate;

pub use file::{ReadError, WriteError, read_bounded, write_atomic};
pub use merge::{Merged, StoredCondition, merge, same_second};
pub use report::{Condition, ConditionStatus, Report};
pub use validate::{ParseError, Violation, parse, validate};

/// Where the adapter writes and the status-reporter reads, unless configured otherwise.
pub const DEFAULT_RESULTS_PATH: &str = "/results/adapter-report.json";
/// The largest report file accepted, in bytes.
pub const MAX_REPORT_BYTES: u64 = 1024 * 1024;
/// The largest `data` object accepted, serialized compactly, in bytes.
pub const MAX_DATA_BYTES: usize = 64 * 1024;
/// The most conditions one report may carry.
pub const MAX_CONDITIONS: usize = 16;
/// The longest `reason`.
pub const MAX_REASON_LEN: usize = 1024;
/// The longest `message`.
pub const MAX_MESSAGE_LEN: usize = 32 * 1024;
/// The newest report version this crate understands.
pub const REPORT_VERSION: u32 = 1;
/// Condition types the Job controller owns; a report may not set them.
pub const RESERVED_CONDITION_TYPES: [&str; 5] = [
    "Complete",
    "Failed",
    "Suspended",
    "FailureTarget",
    "SuccessCriteriaMet",
];
/// Job annotation that carries the report's `data`, as compact JSON.
pub const REPORT_DATA_ANNOTATION: &str = "hyperfleet.io/report-data";
/// Job annotation that carries the report's `observed_generation`.
pub const OBSERVED_GENERATION_ANNOTATION: &str = "hyperfleet.io/observed-generation";
