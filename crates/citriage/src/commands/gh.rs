//! `citriage gh sweep`: GitHub PR and issue state (the runbook's Phase 5 table), with
//! answers cached in the store (ETags, `--offline`) and recorded in the evidence
//! ledger.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_app::gh::SweepRequest;
use citriage_app::Progress;
use citriage_github::{render_sweep_json, render_sweep_markdown};
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// GitHub PR and issue state (answers cached in the store; `--offline` reads only the cache).
#[derive(Args, Debug)]
pub struct GhArgs {
    #[command(subcommand)]
    pub what: GhWhat,
}

#[derive(Subcommand, Debug)]
pub enum GhWhat {
    /// The runbook's Phase 5 table (✅ merged, 🟢 open mergeable, 🟡 open blocked, ❌ closed
    /// unmerged, ⚪ none) for refs given or found in a report. Token from GITHUB_TOKEN or GH_TOKEN.
    Sweep {
        /// owner/repo#N, GitHub PR/issue URLs, or #N with --repo.
        refs: Vec<String>,
        /// Check every ref a Markdown report mentions.
        /// Default: none.
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        /// Repository for bare #N refs.
        /// Default: none.
        #[arg(long, value_name = "OWNER/REPO")]
        repo: Option<String>,
        /// Answer only from the cache (says how old each answer is).
        #[arg(long)]
        offline: bool,
        /// GitHub API base URL.
        #[arg(long, default_value = "https://api.github.com")]
        api: String,
        /// Do not walk issue timelines for fix PRs.
        #[arg(long)]
        no_timelines: bool,
        /// Bound, in seconds, on the whole sweep's waiting: each request, and every
        /// retry and rate-limit wait together; a server asking to wait longer fails the
        /// lookup at once, naming the wait.
        /// Default: 30 s per request, waits of up to 120 s each within 300 s in all.
        #[arg(long, value_name = "SECONDS")]
        timeout: Option<u64>,
    },
}

/// Runs `citriage gh`.
pub fn exec(ctx: &Context, a: &GhArgs) -> Result<(), Failure> {
    match &a.what {
        GhWhat::Sweep { refs, report, repo, offline, api, no_timelines, timeout } => {
            let store = ctx.open_store()?;
            let req = SweepRequest {
                refs: refs.clone(),
                report: report.clone(),
                repo: repo.clone(),
                offline: *offline,
                api: api.clone(),
                walk_timelines: !no_timelines,
                timeout: *timeout,
            };
            let pb = ctx.spinner("looking up refs on GitHub");
            // GitHub may ask to wait (Retry-After, a rate limit's reset): said before
            // each wait, above the spinner.
            let notes = pb.clone();
            let swept = citriage_app::gh::sweep(store, &req, &pb, move |line| notes.note(line))?;
            pb.clear();
            if ctx.json() {
                print_json(&render_sweep_json(&swept.rows, swept.now));
            } else {
                outln!("{}", render_sweep_markdown(&swept.rows, swept.now));
                if !swept.ambiguous.is_empty() {
                    outln!("Not checked (ambiguous):\n{}", swept.ambiguous);
                }
            }
            Ok(swept.outcome()?)
        }
    }
}
