//! `citriage import`: validate dashboard snapshots (files or URLs) and store them;
//! one bad snapshot stores nothing.

use crate::context::{print_json, Context, Failure, SnapshotSourceArgs};
use crate::outln;
use crate::pipeline;
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
    let opts = a.source.http();
    // Validate everything first: one bad file stores nothing.
    let pb = ctx.spinner("reading snapshots");
    let mut snaps = Vec::new();
    for loc in &a.locations {
        pb.set_message(format!("reading {loc}"));
        let (s, warnings) = pipeline::read_snapshot(loc, a.source.dataset, a.source.date, &opts)?;
        for w in warnings {
            pb.suspend(|| eprintln!("warning: {w}"));
        }
        snaps.push(s);
    }
    pb.set_message("storing");
    let mut results = Vec::new();
    for s in &snaps {
        results.push(pipeline::import(&mut store, s)?);
    }
    pb.finish_and_clear();
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
