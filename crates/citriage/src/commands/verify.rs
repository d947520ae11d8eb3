//! `citriage verify`: check a Markdown triage report's claims (a file or a stored
//! document) and record the result in the store; exits 1 when anything is flagged or
//! could not be checked.

use crate::context::{Context, Failure};
use crate::documents::{find_by_body, split_stored, Verified, MARKDOWN};
use crate::github::ref_context;
use crate::outln;
use crate::verification::{check_report, VerifySetup};
use citriage_model::evidence::sha256_hex;
use citriage_store::{DocumentHeader, Store};
use citriage_verify::{Checkout, Checkouts, GitProgram};
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
    match check(ctx, a)? {
        0 => Ok(()),
        _ => Err(Failure::other("the report has findings or unchecked claims (see above)")),
    }
}

/// Runs the check and prints the result; returns the verifier's exit code.
fn check(ctx: &Context, a: &VerifyArgs) -> Result<i32, Failure> {
    let db = ctx.db_location();
    // Results are recorded only in a store that exists; without one, the check runs
    // against an empty in-memory store and nothing is written.
    let exists = db.exists();
    let store = if exists {
        db.open()?
    } else if a.stored.is_some() {
        return Err(Failure::input(format!("{db}: no store there, so no stored document to verify (pass --db FILE)")));
    } else {
        Store::open_in_memory()?
    };
    let (text, name, document) = match (&a.stored, &a.report) {
        (Some(spec), _) => {
            let (kind, key) = split_stored(spec)?;
            let doc = store.document(kind, key, MARKDOWN)?.ok_or_else(|| {
                Failure::input(format!(
                    "--stored {spec}: no {MARKDOWN} document of kind {kind:?} with key {key:?} in {} (`{} reports` lists them)",
                    store.path(),
                    crate::context::invocation()
                ))
            })?;
            let header = DocumentHeader {
                kind: doc.kind,
                key: doc.key,
                media_type: doc.media_type,
                title: doc.title,
                as_of: doc.as_of,
                bytes: doc.body.len() as u64,
                sha256: sha256_hex(doc.body.as_bytes()),
            };
            (doc.body, spec.clone(), Some(header))
        }
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Failure::input(format!("{}: cannot read: {e}", path.display())))?;
            let header = if exists { find_by_body(&store, text.as_bytes())? } else { None };
            (text, path.display().to_string(), header)
        }
        (None, None) => return Err(Failure::input("give a report file or --stored KIND/KEY")),
    };
    let git = GitProgram::locate().ok();
    let mut checkouts = Checkouts::new();
    for spec in &a.checkouts {
        let mut parts = spec.splitn(3, '=');
        let (Some(co_name), Some(path)) = (parts.next(), parts.next()) else {
            return Err(Failure::input(format!("--checkout {spec:?}: expected name=path[=owner/repo]")));
        };
        let repo = parts.next().unwrap_or(co_name);
        let co = Checkout::open(co_name, path, git.clone())
            .map_err(|e| Failure::input(format!("--checkout {spec}: {e}")))?;
        checkouts.add(co, repo, &[]);
    }
    let as_of = match &a.as_of {
        Some(d) => Some(
            citriage_model::Day::parse(d)
                .ok_or_else(|| Failure::input(format!("--as-of {d:?}: expected a day as YYYY-MM-DD")))?,
        ),
        None => None,
    };
    let setup = VerifySetup {
        as_of,
        ctx: ref_context(a.repo.as_deref())?,
        checkouts,
        api: a.api.clone(),
        offline: a.offline,
        prior_report: a.prior.is_some(),
        allow_unchecked: a.allow_unchecked,
    };
    let file_name = a
        .report
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.clone());
    let verified = Verified { document: document.as_ref(), file_name: &file_name, text: &text };
    let (store, checked) = check_report(store, &text, &name, &verified, &setup, exists)?;
    if ctx.json() {
        use std::io::Write;
        let _ = std::io::stdout().lock().write_all(checked.json.as_bytes());
    } else {
        outln!("{}", citriage_verify::render_markdown(&checked.verification, &name));
    }
    match &checked.recorded {
        Some(key) if !ctx.quiet => eprintln!("recorded as verify {key} in {}", store.path()),
        Some(_) => {}
        None => eprintln!("note: no store at {db}: the result is not recorded"),
    }
    Ok(checked.verification.exit_code(a.allow_unchecked))
}
