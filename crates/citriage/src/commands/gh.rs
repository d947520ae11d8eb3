//! `citriage gh sweep`: GitHub PR and issue state (the runbook's Phase 5 table), with
//! answers cached in the store (ETags, `--offline`) and recorded in the evidence
//! ledger.

use crate::context::{print_json, Context, Failure};
use crate::github::{client, ref_context};
use crate::outln;
use citriage_github::{
    extract_refs, render_ambiguous, render_sweep_json, render_sweep_markdown, sweep_with_evidence, unique_refs,
    IssueRef, SweepOptions,
};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

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
            let store = Rc::new(ctx.open_store()?);
            let refctx = ref_context(repo.as_deref())?;
            let mut wanted: Vec<IssueRef> = Vec::new();
            for r in refs {
                let parsed = IssueRef::parse(r).or_else(|| {
                    r.strip_prefix('#')
                        .and_then(|n| n.parse::<u64>().ok())
                        .and_then(|n| refctx.default_repo.clone().map(|repo| IssueRef::new(repo, n)))
                });
                wanted.push(parsed.ok_or_else(|| {
                    Failure::input(format!("{r:?}: expected owner/repo#N, a GitHub PR/issue URL, or #N with --repo"))
                })?);
            }
            let mut ambiguous = String::new();
            if let Some(path) = report {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
                let found = extract_refs(&text, &refctx);
                wanted.extend(unique_refs(&found));
                ambiguous = render_ambiguous(&found);
            }
            if wanted.is_empty() {
                return Err(Failure::input("no refs to check: give refs or --report FILE"));
            }
            let c = match timeout {
                Some(t) => {
                    crate::github::client_bounded(store.clone(), api, *offline, Duration::from_secs((*t).max(1)))
                }
                None => client(store.clone(), api, *offline),
            };
            // Each distinct reference is asked once; what was read goes into the
            // evidence ledger.
            let (rows, items) = sweep_with_evidence(&c, &wanted, SweepOptions { walk_timelines: !no_timelines });
            let now = c.now();
            drop(c);
            if let Ok(mut st) = Rc::try_unwrap(store) {
                st.record_evidence(&items, &crate::pipeline::now_rfc3339())?;
            }
            if ctx.json() {
                print_json(&render_sweep_json(&rows, now));
            } else {
                outln!("{}", render_sweep_markdown(&rows, now));
                if !ambiguous.is_empty() {
                    outln!("Not checked (ambiguous):\n{ambiguous}");
                }
            }
            if !rows.is_empty() && rows.iter().all(|r| matches!(r.mark, citriage_github::Mark::NotChecked)) {
                return Err(Failure::other(format!(
                    "every lookup failed ({} ref(s) not checked): see the table for why",
                    rows.len()
                )));
            }
            Ok(())
        }
    }
}
