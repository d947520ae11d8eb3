//! Dashboard snapshots: read from a path or URL (or bytes in hand) and validated,
//! stored, listed, and loaded back with the history a triage compares against (the
//! prior day's snapshot and the job sets of the days before).

use crate::error::{Error, Result};
use citriage_formats::parse_snapshot;
use citriage_model::evidence::sha256_hex;
use citriage_model::{Dataset, Day, Snapshot, SnapshotMeta};
use citriage_sources::HttpOptions;
use citriage_store::{ImportOutcome, Store, StoredSnapshot};
use std::collections::BTreeSet;

/// A snapshot read and validated, with the warnings its fields gave.
pub struct Read {
    pub snapshot: Snapshot,
    pub warnings: Vec<String>,
}

/// Reads and validates a snapshot from bytes already in hand. Its date: `date`, else
/// one in the location's file name, else today (the clock is read only then).
pub fn from_bytes(bytes: &[u8], location: &str, dataset: Option<Dataset>, date: Option<Day>) -> Result<Read> {
    let parsed = parse_snapshot(bytes, location, dataset).map_err(|e| Error::input(e.to_string()))?;
    let name = location.rsplit('/').next().unwrap_or(location);
    let date = date.or_else(|| Day::find_in(name)).unwrap_or_else(crate::clock::today);
    let meta = SnapshotMeta { dataset: parsed.dataset, date, source: location.to_string(), sha256: sha256_hex(bytes) };
    Ok(Read { snapshot: Snapshot::new(meta, parsed.jobs), warnings: parsed.warnings })
}

/// Reads and validates a snapshot from a path or URL (see [`from_bytes`] for its date).
pub fn read(location: &str, dataset: Option<Dataset>, date: Option<Day>, http: &HttpOptions) -> Result<Read> {
    let fetched = citriage_sources::read(location, http)?;
    from_bytes(&fetched.bytes, location, dataset, date)
}

/// Stores a snapshot (the import time is the clock's).
pub fn store(store: &mut Store, snap: &Snapshot) -> Result<ImportOutcome> {
    Ok(store.import_snapshot(snap, &crate::clock::now_rfc3339())?)
}

/// The stored snapshots (of one dataset, or both).
pub fn list(store: &Store, dataset: Option<Dataset>) -> Result<Vec<StoredSnapshot>> {
    Ok(store.list_snapshots(dataset)?)
}

/// The newest stored snapshot of a dataset; its absence is bad input, said with `hint`
/// (what to do about it), e.g. `": pass --snapshot FILE|URL"`.
pub fn latest(store: &Store, dataset: Dataset, hint: &str) -> Result<StoredSnapshot> {
    store
        .latest(dataset)?
        .ok_or_else(|| Error::input(format!("the store {} has no {dataset} snapshot{hint}", store.path())))
}

/// A stored snapshot with what a triage compares it against.
pub struct Loaded {
    pub snapshot: Snapshot,
    pub prior: Option<Snapshot>,
    pub older: Vec<(Day, BTreeSet<String>)>,
}

/// Loads a stored snapshot with its prior (the last imported of the latest earlier
/// day) and the job sets of the days before that, newest first.
pub fn load_with_history(store: &Store, id: i64) -> Result<Loaded> {
    let snapshot = store.load_snapshot(id)?;
    let all = store.list_snapshots(Some(snapshot.meta.dataset))?;
    let before: Vec<_> = all.into_iter().filter(|s| s.date < snapshot.meta.date).collect();
    // One snapshot per day: the last imported for that date.
    let mut per_day: Vec<StoredSnapshot> = Vec::new();
    for s in before {
        if per_day.last().is_some_and(|l| l.date == s.date) {
            per_day.pop();
        }
        per_day.push(s);
    }
    let prior = match per_day.last() {
        Some(p) => Some(store.load_snapshot(p.id)?),
        None => None,
    };
    let mut older = Vec::new();
    for s in per_day.iter().rev().skip(1) {
        older.push((s.date, store.snapshot_job_names(s.id)?));
    }
    Ok(Loaded { snapshot, prior, older })
}
