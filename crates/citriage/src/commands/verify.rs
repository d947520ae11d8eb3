//! `citriage verify`: check a Markdown triage report's claims (a file or a stored
//! document) and record the result in the store; exits 1 when anything is flagged or
//! could not be checked.

use crate::context::{Context, Failure};
use crate::outln;
use citriage_app::verify::{VerifyOutcome, VerifyRequest};
use clap::Args;
use std::path::PathBuf;

/// Check a Markdown triage report's claims as of its date: PR/issue states, labels and
/// kinds (GitHub, timelines included), file:line references and the code quoted there
/// (local checkouts), commit SHAs, build URLs and their claimed results (the store),
/// and the runbook's structural rules. Text output groups findings by severity;
/// `--format json` lists every claim with its verdict and evidence. The result is
/// recorded in the store (when it exists). Exits 1 when anything is flagged or could
/// not be checked.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The Markdown report to check.
    #[arg(required_unless_present = "stored", conflicts_with = "stored")]
    pub report: Option<PathBuf>,
    /// Check a Markdown document recorded in the store instead of a file: KIND/KEY as
    /// `citriage reports` lists it (e.g. triage/failures/2026-11-21).
    /// Default: none (give a FILE or --stored).
    #[arg(long, value_name = "KIND/KEY")]
    pub stored: Option<String>,
    /// A local checkout for file:line claims: name=path[=owner/repo]. Repeatable.
    #[arg(long = "checkout", value_name = "NAME=PATH[=OWNER/REPO]")]
    pub checkouts: Vec<String>,
    /// The prior report this one follows (allows a Lessons section).
    /// Default: none.
    #[arg(long, value_name = "FILE")]
    pub prior: Option<PathBuf>,
    /// Repository for bare #N refs.
    /// Default: none.
    #[arg(long, value_name = "OWNER/REPO")]
    pub repo: Option<String>,
    /// Answer PR/issue state only from the cache.
    #[arg(long)]
    pub offline: bool,
    /// Exit 0 when nothing is flagged even if some claims could not be checked.
    #[arg(long)]
    pub allow_unchecked: bool,
    /// GitHub API base URL.
    #[arg(long, default_value = "https://api.github.com")]
    pub api: String,
    /// The day the report's claims describe (YYYY-MM-DD). Default: the report's own
    /// `Date:` line, else claims are judged against the state as read.
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub as_of: Option<String>,
}

/// Runs `citriage verify`.
pub fn exec(ctx: &Context, a: &VerifyArgs) -> Result<(), Failure> {
    let db = ctx.db_location();
    // Results are recorded only in a store that exists; without one, nothing is written.
    let store = if db.exists() {
        Some(crate::context::open(&db)?)
    } else if a.stored.is_some() {
        return Err(Failure::input(format!("{db}: no store there, so no stored document to verify (pass --db FILE)")));
    } else {
        None
    };
    let req = VerifyRequest {
        report: a.report.clone(),
        stored: a.stored.clone(),
        checkouts: a.checkouts.clone(),
        prior: a.prior.is_some(),
        repo: a.repo.clone(),
        offline: a.offline,
        allow_unchecked: a.allow_unchecked,
        api: a.api.clone(),
        as_of: a.as_of.clone(),
    };
    let VerifyOutcome { checked, name, store } = citriage_app::verify::verify_report(store, &req)?;
    if ctx.json() {
        use std::io::Write;
        let _ = std::io::stdout().lock().write_all(checked.json.as_bytes());
    } else {
        outln!("{}", citriage_verify::render_markdown(&checked.verification, &name));
    }
    match (&checked.recorded, &store) {
        (Some(key), Some(store)) if !ctx.quiet => eprintln!("recorded as verify {key} in {store}"),
        (Some(_), _) => {}
        (None, _) => eprintln!("note: no store at {db}: the result is not recorded"),
    }
    Ok(checked.outcome(a.allow_unchecked)?)
}
