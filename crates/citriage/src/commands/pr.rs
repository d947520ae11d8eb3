//! `citriage pr ORG/REPO#N`: did my PR break this? The PR's latest presubmit runs and
//! each failure's class, with the verdict.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_app::pr::{analyse, PrOptions, PrRisk, PrTarget};
use citriage_app::records::GithubAccess;
use clap::Args;

/// Did my PR break this? Reads the pull request's presubmit runs from the store (fetch
/// them first with `citriage fetch --pr ORG/REPO#N`), takes the latest run of each job,
/// and classifies each failed test or failed build step: known flake (the test's flake
/// signals fired on other runs in the window), failing elsewhere (the same failure
/// pattern on the base branch or on other PRs' runs without this one), infrastructure
/// (a setup step failed, an infra signature), or new with this PR (seen nowhere else;
/// strong when the failure names a file the PR changes, read from GitHub through the
/// store's cache). Ends with the verdict: "safe to /retest" only when no failure is new.
/// Run `citriage cluster` first so failures carry their patterns' stable ids.
#[derive(Args, Debug)]
pub struct PrArgs {
    /// The pull request: ORG/REPO#N or its GitHub URL.
    #[arg(value_name = "ORG/REPO#N")]
    pub pr: String,
    /// Days before the window's end searched for the same failures and flake signals.
    #[arg(long, default_value_t = 14)]
    pub window: i64,
    /// The window's end: a date (its last second, UTC) or Unix seconds.
    /// Default: the newest stored build's day.
    #[arg(long, value_name = "DATE")]
    pub as_of: Option<String>,
    /// Read the PR's state and diff only from the store's cache.
    #[arg(long)]
    pub offline: bool,
    /// Do not ask GitHub at all (no diff: failures are never linked to changed files).
    #[arg(long, conflicts_with = "offline")]
    pub no_github: bool,
    /// GitHub API base URL (token from GITHUB_TOKEN or GH_TOKEN, never printed).
    #[arg(long, default_value = "https://api.github.com")]
    pub api: String,
}

/// Runs `citriage pr`.
pub fn exec(ctx: &Context, a: &PrArgs) -> Result<(), Failure> {
    let target = PrTarget::parse(&a.pr)?;
    let mut store = ctx.open_existing_store()?;
    let opts = PrOptions {
        as_of: a.as_of.clone(),
        window_days: a.window,
        github: (!a.no_github).then(|| GithubAccess { api: a.api.clone(), offline: a.offline }),
        ..PrOptions::default()
    };
    let pb = ctx.spinner("reading");
    let risk = analyse(&mut store, &target, &opts, &pb)?;
    pb.clear();
    if ctx.json() {
        print_json(&serde_json::to_value(&risk).unwrap_or_default());
        return Ok(());
    }
    print_text(&risk);
    Ok(())
}

fn print_text(r: &PrRisk) {
    let title =
        r.github.title.as_deref().map(|t| format!(" {}", citriage_model::escape::terminal(t))).unwrap_or_default();
    outln!("{}{} ({})", r.pr, title, r.github.state.as_deref().unwrap_or("state not read"));
    outln!("window: {} days to {}", r.window_days, r.as_of);
    match &r.github.changed_files {
        Some(f) => outln!("diff: {} changed file(s)", f.len()),
        None => outln!("diff: not read ({})", r.github.note.as_deref().unwrap_or("unknown")),
    }
    outln!("");
    outln!("latest runs:");
    for run in &r.runs {
        let earlier = if run.earlier_runs > 0 { format!(", {} earlier", run.earlier_runs) } else { String::new() };
        outln!(
            "  {:<8} {} #{} ({} failure(s){earlier})  [{}]",
            run.result,
            citriage_model::escape::terminal(&run.job),
            run.build_id,
            run.failures,
            run.evidence
        );
    }
    if !r.failures.is_empty() {
        outln!("");
        outln!("failures:");
    }
    for f in &r.failures {
        let strength = if f.strong { "" } else { " (weak)" };
        outln!(
            "  [{}{strength}] {} :: {}",
            f.class.label(),
            citriage_model::escape::terminal(&f.job),
            citriage_model::escape::terminal(&f.test)
        );
        outln!("      {}", citriage_model::escape::terminal(&f.reason));
        if !f.first_line.is_empty() {
            outln!("      says: {}", citriage_model::escape::terminal(&f.first_line));
        }
        if let Some(e) = &f.facts.elsewhere {
            let since = e.since.map(|s| citriage_model::Day::from_unix_seconds(s).to_string()).unwrap_or_default();
            let record = e.record.as_ref().map(|(k, s)| format!(", record {k} ({s})")).unwrap_or_default();
            outln!(
                "      pattern {} since {since}: {} base-branch run(s), {} other PR(s){record}",
                e.pattern,
                e.base_runs,
                e.other_prs.len()
            );
        }
        outln!("      evidence: {}", f.evidence.join(" "));
    }
    outln!("");
    outln!("{}", r.verdict.line);
}
