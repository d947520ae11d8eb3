//! `citriage drift`: the drift between the latest stored snapshot of a dataset and its
//! prior.

use crate::context::{parse_dataset, print_json, Context, Failure};
use crate::outln;
use citriage_model::Dataset;
use clap::Args;

/// Show the drift between the latest stored snapshot of a dataset and its prior.
#[derive(Args, Debug)]
pub struct DriftArgs {
    /// The dataset whose latest snapshot is compared with the one before it
    /// (failures or flakes).
    #[arg(long, value_parser = parse_dataset, default_value = "failures")]
    pub dataset: Dataset,
}

/// Runs `citriage drift`.
pub fn exec(ctx: &Context, a: &DriftArgs) -> Result<(), Failure> {
    let store = ctx.open_existing_store()?;
    let d = citriage_app::drift::latest_drift(&store, a.dataset)?;
    if ctx.json() {
        print_json(&serde_json::to_value(&d).unwrap_or_default());
        return Ok(());
    }
    outln!("{} drift from {} to {} ({} day(s))", a.dataset, d.prior_date, d.now_date, d.days_between);
    outln!("  added {}, removed {}, reappeared {}", d.added.len(), d.removed.len(), d.reappeared.len());
    for j in &d.added {
        outln!("  + {}", citriage_model::escape::one_line(&j.entry.job));
    }
    for j in &d.removed {
        outln!("  - {}", citriage_model::escape::one_line(&j.entry.job));
    }
    for r in &d.reappeared {
        outln!("  ↺ {} (last listed {})", citriage_model::escape::one_line(&r.job), r.last_listed);
    }
    if let Some(i) = &d.integrity {
        outln!("  integrity: {} of {} common jobs consistent", i.consistent, i.common);
        for v in &i.violations {
            outln!(
                "  ! {} {} -> {} (expected {})",
                citriage_model::escape::one_line(&v.job),
                v.prior,
                v.now,
                v.expected
            );
        }
    }
    for m in d.worsened.iter().chain(&d.improved) {
        outln!("  ~ {} {:.3} -> {:.3}", citriage_model::escape::one_line(&m.job), m.prior, m.now);
    }
    Ok(())
}
