//! Shared data types of citriage: datasets, dashboard snapshots, calendar days and
//! evidence. Every other crate speaks in these types; this crate does no I/O and
//! holds no logic beyond small conversions.

pub mod build;
pub mod day;
pub mod evidence;
pub mod snapshot;

pub use day::Day;
pub use evidence::{Evidence, EvidenceKind};
pub use snapshot::{Dataset, FlakeStats, JobEntry, JobStats, Snapshot, SnapshotMeta};
