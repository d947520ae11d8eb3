//! `citriage triage`: triage a snapshot (given, or the latest stored) against its
//! prior, with the stored builds and linked fix PRs when there are any; writes the
//! report and data files and records the report in the store.

use crate::context::{Context, Failure, SnapshotSourceArgs};
use crate::render;
use citriage_app::triage::{Settings, TriageRequest};
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
    let settings = Settings::load(a.rules.as_deref(), a.config.as_deref())?;
    let store = if a.snapshot.is_some() { ctx.open_store()? } else { ctx.open_existing_store()? };
    let req = TriageRequest {
        snapshot: a.snapshot.clone(),
        prior: a.prior.clone(),
        dataset: a.source.dataset,
        date: a.source.date,
        http: a.source.http(),
        links: a.links.clone(),
        api: a.api.clone(),
        offline: a.offline,
        out: a.out.clone(),
    };
    let pb = ctx.spinner("reading");
    let t = citriage_app::triage::triage_snapshot(store, &req, &settings, &pb)?;
    pb.clear();
    render::triage_summary(ctx, &t.triage, &t.files);
    Ok(())
}
