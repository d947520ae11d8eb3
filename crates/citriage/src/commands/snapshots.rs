//! `citriage snapshots`: list the stored snapshots.

use crate::context::{parse_dataset, print_json, Context, Failure};
use crate::outln;
use citriage_model::Dataset;
use clap::Args;
use serde_json::json;

/// List the snapshots in the store.
#[derive(Args, Debug)]
pub struct SnapshotsArgs {
    /// Only this dataset.
    /// Default: both datasets.
    #[arg(long, value_parser = parse_dataset)]
    pub dataset: Option<Dataset>,
}

/// Runs `citriage snapshots`.
pub fn exec(ctx: &Context, a: &SnapshotsArgs) -> Result<(), Failure> {
    let store = ctx.open_existing_store()?;
    let list = citriage_app::snapshots::list(&store, a.dataset)?;
    if ctx.json() {
        print_json(&json!({ "store": store.path(), "snapshots": list }));
        return Ok(());
    }
    if list.is_empty() {
        outln!("no snapshots in {}", store.path());
    }
    for s in list {
        outln!("#{:<5} {:<9} {}  {:>7} jobs  {}", s.id, s.dataset, s.date, s.job_count, s.source);
    }
    Ok(())
}
