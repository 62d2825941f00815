//! The adapter report contract shared by every HyperFleet adapter and the status-reporter.
//!
//! An adapter writes one JSON report (see [`Report`]) into the results directory with
//! [`write_atomic`]; the status-reporter reads it with [`read_bounded`], turns it into a
//! [`Report`] with [`parse`] (which accepts the legacy Go-reporter format too) and merges its
//! conditions onto the Job with [`merge`].
//!
//! This crate is pure: no async runtime, no Kubernetes client.

mod annotations;
mod file;
mod legacy;
mod merge;
mod names;
mod report;
pub mod team_folder;
mod text;
pub mod usage;
mod validate;

pub use annotations::{DataAnnotations, SkippedKey, data_annotation_value, data_annotations};
pub use file::{LimitedReadError, ReadError, WriteError, read_bounded, read_limited, write_atomic};
pub use merge::{Merged, StoredCondition, merge, same_second};
pub use names::{NAME_PART_RULE, is_name_part};
pub use report::{Condition, ConditionStatus, Report};
pub use text::{MAX_TERMINATION_MESSAGE, one_line, redact, termination_message, truncate};
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
/// The largest cluster or NodePool spec file, and NodePool list file, in bytes: the
/// framework's own limit on a file param (`hyperfleet-framework.md` §8).
pub const MAX_SPEC_FILE_BYTES: u64 = 1024 * 1024;
/// The largest bearer token file (HyperFleet API, Maestro, a kubeconfig's `tokenFile`, the
/// service-account token), in bytes: a JWT is a few KiB; 64 KiB leaves room and stops a wrong
/// file early.
pub const MAX_TOKEN_FILE_BYTES: u64 = 64 * 1024;
/// The largest PEM file (CA bundle, client certificate, client key) and kubeconfig, in bytes:
/// each comes from a mounted Secret or ConfigMap, which Kubernetes caps at 1 MiB.
pub const MAX_PEM_FILE_BYTES: u64 = 1024 * 1024;
/// The largest kubeconfig file, in bytes (see [`MAX_PEM_FILE_BYTES`]).
pub const MAX_KUBECONFIG_BYTES: u64 = 1024 * 1024;
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
/// Prefix of the per-key data annotations: `data.hyperfleet.io/<key>` carries the value of the
/// top-level `data` key `<key>` (a string as is, anything else as compact JSON); see
/// [`data_annotations`].
pub const DATA_ANNOTATION_PREFIX: &str = "data.hyperfleet.io/";
/// The most bytes (keys plus values) the per-key data annotations of one report may take; keys
/// past it are skipped.
///
/// The API server refuses an object whose annotations (keys plus values) total more than
/// 262144 bytes (256 KiB). What the status-reporter writes stays well under: the
/// `hyperfleet.io/report-data` annotation is at most [`MAX_DATA_BYTES`] (64 KiB) plus its key,
/// the per-key annotations at most this (128 KiB), `observed-generation` a few dozen bytes; that
/// leaves more than 60 KiB for the annotations others put on the Job. A per-key annotation costs
/// at most 16 bytes more than its `"key":value,` in `data`, so the per-key annotations of a
/// `data` of at most 64 KiB stay under 64 KiB plus 16 bytes per key, about the size of
/// `report-data` itself: the bound only bites for a report with more than 4,000 keys, which
/// without it could take the Job past 256 KiB.
pub const MAX_DATA_ANNOTATIONS_BYTES: usize = 2 * MAX_DATA_BYTES;
