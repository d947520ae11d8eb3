//! `citriage triage`: triage a snapshot (given, or the latest stored) against its
//! prior, with the stored builds and linked fix PRs when there are any; writes the
//! report and data files and records the report in the store.

use crate::context::{Context, Failure, SnapshotSourceArgs};
use crate::pipeline;
use citriage_model::Dataset;
use clap::Args;
use std::path::PathBuf;

/// Triage a snapshot: categorize, select clusters, drift, misclassifications;
/// write report.md, report.json and the data files.
#[derive(Args, Debug)]
pub struct TriageArgs {
    /// A snapshot file or URL to import and triage. Without it, the latest stored
    /// snapshot of --dataset is used.
    /// Default: the latest stored snapshot of --dataset.
    #[arg(long)]
    pub snapshot: Option<String>,
    /// Compare against this snapshot instead of the prior one in the store.
    /// Default: the stored snapshot of the day before.
    #[arg(long)]
    pub prior: Option<String>,
    /// Categorization rules (TOML); default: the built-in runbook rules.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Analysis settings (TOML): harness names, by-design patterns, thresholds.
    /// Default: the built-in settings.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Output folder for the report and data files.
    #[arg(long, default_value = "triage-report")]
    pub out: PathBuf,
    /// Fix PRs linked to failures (TOML: `[[link]] ref = "owner/repo#N"`, `matches =
    /// "regex over categories, test names and failure text"`, `note = "..."`); their
    /// states are read from GitHub (token from GITHUB_TOKEN or GH_TOKEN) and placed in
    /// Tier 0 (merged) or Tier 1 (open, or closed unmerged).
    /// Default: no links.
    #[arg(long, value_name = "FILE")]
    pub links: Option<PathBuf>,
    /// Read PR states only from the store's cache.
    #[arg(long)]
    pub offline: bool,
    /// GitHub API base URL.
    #[arg(long, default_value = "https://api.github.com")]
    pub api: String,
    #[command(flatten)]
    pub source: SnapshotSourceArgs,
}

/// Runs `citriage triage`.
pub fn exec(ctx: &Context, a: &TriageArgs) -> Result<(), Failure> {
    let rules = pipeline::load_rules(a.rules.as_deref())?;
    let config = pipeline::load_config(a.config.as_deref())?;
    let mut store = if a.snapshot.is_some() { ctx.open_store()? } else { ctx.open_existing_store()? };
    let opts = a.source.http();
    let pb = ctx.spinner("reading");
    let id = match &a.snapshot {
        Some(loc) => {
            let (s, warnings) = pipeline::read_snapshot(loc, a.source.dataset, a.source.date, &opts)?;
            for w in warnings {
                pb.suspend(|| eprintln!("warning: {w}"));
            }
            pipeline::import(&mut store, &s)?.snapshot.id
        }
        None => {
            let ds = a.source.dataset.unwrap_or(Dataset::Failures);
            match store.latest(ds)? {
                Some(s) => s.id,
                None => {
                    return Err(Failure::input(format!(
                        "the store {} has no {ds} snapshot: pass --snapshot FILE|URL or run `{} import` first",
                        store.path(),
                        crate::context::invocation()
                    )))
                }
            }
        }
    };
    let mut loaded = pipeline::load_with_history(&store, id)?;
    if let Some(p) = &a.prior {
        let (prior, _) = pipeline::read_snapshot(p, Some(loaded.snapshot.meta.dataset), None, &opts)?;
        loaded.prior = Some(prior);
        loaded.older.clear();
    }
    pb.set_message("loading builds");
    let builds = if store.build_counts()?.0 > 0 {
        // The listed jobs' builds, with tests of the last 8 days before the snapshot date.
        let listed: std::collections::BTreeSet<String> = loaded.snapshot.jobs.iter().map(|j| j.job.clone()).collect();
        let since = loaded.snapshot.meta.date.start_seconds() - 8 * citriage_model::time::DAY;
        Some(crate::builds::load_builds_filtered(&mut store, Some(since), Some(&listed))?)
    } else {
        None
    };
    let links = match &a.links {
        Some(p) => {
            pb.set_message("reading linked PRs");
            let store_rc = std::rc::Rc::new(store);
            let l = crate::github::read_links(p, store_rc.clone(), &a.api, a.offline)?;
            store = std::rc::Rc::try_unwrap(store_rc).map_err(|_| Failure::other("store still in use"))?;
            l
        }
        None => Vec::new(),
    };
    pb.set_message("triaging");
    let t = pipeline::run_triage(&loaded, &rules, &config, builds.as_deref(), &links);
    pb.set_message("writing report");
    let files = pipeline::write_and_record(&mut store, &t, &a.out)?;
    pipeline::record_report_evidence(&mut store, &t)?;
    pb.finish_and_clear();
    pipeline::print_summary(ctx, &t, &files);
    Ok(())
}
