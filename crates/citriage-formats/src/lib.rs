//! Parsers from raw bytes to citriage's typed inputs. Pure: callers read the bytes
//! (from a file, a URL, a store) and hand them in; errors name the document and the
//! exact job and field that were wrong.

pub mod build_versions;
pub mod junit;
pub mod prow;
pub mod snapshot;
pub mod strict_json;
pub mod testgrid;

pub use snapshot::{parse_snapshot, ParsedSnapshot, SnapshotError};
