//! `citriage import`: validate dashboard snapshots (files or URLs) and store them;
//! one bad snapshot stores nothing.

use crate::context::{print_json, Context, Failure, SnapshotSourceArgs};
use crate::outln;
use citriage_app::import::ImportOptions;
use clap::Args;
use serde_json::json;

/// Import dashboard snapshots (files or URLs) into the store.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Snapshot files or URLs (e.g. https://storage.googleapis.com/k8s-metrics/failures-latest.json).
    #[arg(required = true)]
    pub locations: Vec<String>,
    #[command(flatten)]
    pub source: SnapshotSourceArgs,
}

/// Runs `citriage import`.
pub fn exec(ctx: &Context, a: &ImportArgs) -> Result<(), Failure> {
    let mut store = ctx.open_store()?;
    let opts = ImportOptions { dataset: a.source.dataset, date: a.source.date, http: a.source.http() };
    let pb = ctx.spinner("reading snapshots");
    let results = citriage_app::import::import(&mut store, &a.locations, &opts, &pb)?;
    pb.clear();
    if ctx.json() {
        print_json(&json!({ "store": store.path(), "imported": results }));
    } else {
        for r in &results {
            outln!(
                "{} {} snapshot of {} ({} jobs) from {} as #{}",
                if r.inserted { "imported" } else { "already stored:" },
                r.snapshot.dataset,
                r.snapshot.date,
                r.snapshot.job_count,
                r.snapshot.source,
                r.snapshot.id
            );
        }
    }
    Ok(())
}
