//! Looking at a store and copying one into another (`store`): its engine, schema,
//! rows, size and content digest; every row of one store copied into a new, empty one
//! (a SQLite file into PostgreSQL, or back) and both stores' digests compared.

use crate::error::{Error, Result};
use crate::progress::Progress;
use citriage_store::{CopyReport, Location, Store, StoreInfo};
use std::time::Instant;

/// What a store holds; with `digest`, the content digest too (reads the whole store).
pub fn info(store: &Store, digest: bool) -> Result<StoreInfo> {
    Ok(store.info(digest)?)
}

/// A finished copy.
pub struct Migrated {
    pub report: CopyReport,
    /// Seconds the copy took.
    pub seconds: f64,
    /// The content digest both stores share, when compared.
    pub digest: Option<String>,
}

/// Copies every row of the store at `from` into the empty store at `to` (one
/// transaction of the target), then compares both content digests when `verify`.
pub fn migrate(from: &Location, to: &Location, verify: bool, progress: &dyn Progress) -> Result<Migrated> {
    if !from.exists() {
        return Err(Error::input(format!("--from {from}: no store there")));
    }
    if from == to {
        return Err(Error::input(format!("--from and --to are the same store ({from})")));
    }
    let source = from.open()?;
    let mut target = to.open()?;
    let started = Instant::now();
    progress.doing(&format!("copying {from} into {to}"));
    let report =
        source.copy_into(&mut target, &mut |table, rows| progress.doing(&format!("copying {table}: {rows} rows")))?;
    let seconds = started.elapsed().as_secs_f64();
    let digest = if verify {
        progress.doing("comparing the stores' content digests");
        let (a, b) = (source.content_digest()?, target.content_digest()?);
        if a != b {
            return Err(Error::failed(format!(
                "the copy in {to} differs from {from} (digest {b} against {a}); the target keeps the copy for inspection"
            )));
        }
        Some(a)
    } else {
        None
    };
    Ok(Migrated { report, seconds, digest })
}

/// A store's size for people: GiB with two decimals from 1 GiB, else MiB with one.
pub fn human_bytes(n: u64) -> String {
    if n >= 1 << 30 {
        format!("{:.2} GiB", n as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64)
    }
}
