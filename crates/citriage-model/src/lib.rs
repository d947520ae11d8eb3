//! Shared data types of citriage: datasets, dashboard snapshots, evidence, and the
//! one calendar and time module ([`time`]: days, instants, parsing and spellings). Every other crate speaks in these types; this crate does no I/O and
//! holds no logic beyond small conversions.

pub mod build;
pub mod escape;
pub mod evidence;
pub mod owner;
pub mod snapshot;
pub mod time;

pub use evidence::{Evidence, EvidenceKind};
pub use snapshot::{Dataset, FlakeStats, JobEntry, JobStats, Snapshot, SnapshotMeta};
pub use time::Day;
