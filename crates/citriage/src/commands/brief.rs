//! `citriage brief`: for each selected cluster of the latest triage, the runbook's
//! Phase 3 investigation brief filled with verified facts (jobs with their figures,
//! sampled builds, failure excerpts, each with its evidence id from the ledger), and a
//! Phase 4 cross-check brief of the highest-leverage claims.

use crate::context::{parse_dataset, print_json, Context, Failure};
use crate::outln;
use citriage_model::Dataset;
use clap::Args;
use std::path::PathBuf;

/// Write agent briefs for the latest triage: a Phase 3 investigation brief per
/// selected cluster, filled with verified facts and evidence ids, and a Phase 4
/// cross-check brief of the highest-leverage claims.
#[derive(Args, Debug)]
pub struct BriefArgs {
    /// The dataset whose latest stored triage the briefs are about (failures or
    /// flakes). Default: failures.
    #[arg(long, value_parser = parse_dataset)]
    pub dataset: Option<Dataset>,
    /// Output folder.
    #[arg(long, default_value = "briefs")]
    pub out: PathBuf,
}

/// Runs `citriage brief`.
pub fn exec(ctx: &Context, a: &BriefArgs) -> Result<(), Failure> {
    let mut store = ctx.open_existing_store()?;
    let ds = a.dataset.unwrap_or(Dataset::Failures);
    let (w, written) = citriage_app::brief::write_briefs(&mut store, ds, &a.out)?;
    if ctx.json() {
        print_json(&serde_json::json!({"dataset": ds, "date": w.date, "files": written}));
    } else {
        outln!(
            "{} investigation brief(s) and a cross-check brief for the {ds} snapshot of {}:",
            w.files.len().saturating_sub(1),
            w.date
        );
        for p in &written {
            outln!("  {p}");
        }
    }
    Ok(())
}
