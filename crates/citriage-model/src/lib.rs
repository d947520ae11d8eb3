//! Shared data types of citriage: datasets, dashboard snapshots, evidence, and the
//! one calendar and time module ([`time`]: days, instants, parsing and spellings). Every other crate speaks in these types; this crate does no I/O and
//! holds no logic beyond small conversions.

pub mod build;
pub mod escape;
pub mod evidence;
pub mod number;
pub mod owner;
pub mod snapshot;
pub mod time;

pub use evidence::{Evidence, EvidenceKind};
pub use snapshot::{Dataset, FlakeStats, JobEntry, JobStats, Snapshot, SnapshotMeta};
pub use time::Day;

/// A JSON value's type in words, for error messages ("expected an object, found a
/// string").
pub fn json_kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
