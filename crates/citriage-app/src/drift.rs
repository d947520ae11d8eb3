//! The drift between the latest stored snapshot of a dataset and its prior (`drift`):
//! jobs added, removed and reappeared, the integrity of the figures of the jobs both
//! list, and the jobs whose consistency moved.

use crate::error::{Error, Result};
use crate::snapshots;
use citriage_analysis::drift::Drift;
use citriage_model::Dataset;
use citriage_store::Store;

/// The drift of the latest stored snapshot of `dataset` from its prior.
pub fn latest_drift(store: &Store, dataset: Dataset) -> Result<Drift> {
    let latest = snapshots::latest(store, dataset, "")?;
    let loaded = snapshots::load_with_history(store, latest.id)?;
    let Some(prior) = &loaded.prior else {
        return Err(Error::input(format!(
            "only one {dataset} snapshot date in {}: drift needs an earlier one",
            store.path()
        )));
    };
    let cfg = citriage_analysis::AnalysisConfig::default();
    Ok(citriage_analysis::drift::drift(&loaded.snapshot, prior, &loaded.older, cfg.consistency_drift_threshold))
}
