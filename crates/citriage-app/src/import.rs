//! Importing dashboard snapshots (files or URLs) into the store: every one is read and
//! validated first, so one bad snapshot stores nothing.

use crate::error::Result;
use crate::progress::Progress;
use crate::snapshots;
use citriage_model::{Dataset, Day};
use citriage_sources::HttpOptions;
use citriage_store::{ImportOutcome, Store};

/// How snapshots are read.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The dataset, instead of detecting it from the fields.
    pub dataset: Option<Dataset>,
    /// The day the snapshots describe, instead of a date in their names (or today).
    pub date: Option<Day>,
    /// How URLs are read.
    pub http: HttpOptions,
}

/// Reads and validates every location, then stores them in order.
pub fn import(
    store: &mut Store,
    locations: &[String],
    opts: &ImportOptions,
    progress: &dyn Progress,
) -> Result<Vec<ImportOutcome>> {
    let mut snaps = Vec::new();
    for loc in locations {
        progress.doing(&format!("reading {loc}"));
        let read = snapshots::read(loc, opts.dataset, opts.date, &opts.http)?;
        for w in &read.warnings {
            progress.warning(w);
        }
        snaps.push(read.snapshot);
    }
    progress.doing("storing");
    let mut results = Vec::new();
    for s in &snaps {
        results.push(snapshots::store(store, s)?);
    }
    Ok(results)
}
