//! `citriage act`: the next step for a verdict, drafted from the evidence — a revert
//! for a payload suspect at the revert band, bisect experiments for suspects in the
//! bisect band, a bug for a payload root cause or a failure pattern — as Markdown and
//! JSON files; `--apply` posts a draft through the GitHub API.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_actions::payload::PayloadOptions;
use citriage_actions::{Draft, Refusal, Sent};
use citriage_app::act::{self, PrFacts};
use citriage_app::records;
use citriage_payload::PayloadAnalysis;
use clap::{Args, Subcommand};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Draft the next step for a verdict, gated on its evidence: `revert` (a payload
/// suspect at the revert band), `bisect` (suspects in the bisect band: draft revert
/// PRs, /payload-job and /payload-aggregate commands, the tracking file), `bug` (a
/// payload root cause or a failure pattern, routed by owner); `list` shows which rows
/// of a payload's report support which draft. Drafts are files (Markdown + JSON);
/// nothing is sent without --apply. A draft below its band is refused with the reason
/// (exit 1); its evidence is recorded in the store's ledger.
#[derive(Args, Debug)]
pub struct ActArgs {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Subcommand, Debug)]
pub enum Action {
    /// Every suspect and root cause of a payload's analysis with the draft its
    /// evidence supports, or why none.
    List(ListArgs),
    /// The revert of a suspect at the revert band: PR title and body, `git revert -m1`,
    /// the requests that open the revert PR and ask for the payload jobs.
    Revert(RevertArgs),
    /// Bisect experiments for the suspects in the bisect band (or one of them): draft
    /// revert PRs, payload job commands, `<payload-tag>-bisect.yaml`.
    Bisect(BisectArgs),
    /// A bug for a payload root cause (TAG --root-cause RC1) or a failure pattern (--pattern ID).
    Bug(BugArgs),
    /// The comment on a pull request saying whether its red presubmits are its own
    /// doing (`citriage pr`'s verdict and each failure's class with its evidence);
    /// `--apply` posts it, or updates citriage's earlier comment on the PR (found by
    /// its hidden marker) instead of adding another.
    Comment(CommentArgs),
    /// The revert of a commit a failure pattern's regression window ranks (`suspects`):
    /// drafted only for a "likely introducing change" alone at its rank, on a pattern
    /// neither flaky before its onset nor infrastructure; otherwise why not (exit 1).
    RevertCommit(RevertCommitArgs),
}

#[derive(Args, Debug)]
pub struct CommentArgs {
    /// The pull request: ORG/REPO#N or its GitHub URL.
    #[arg(value_name = "ORG/REPO#N")]
    pub pr: String,
    /// Days before the window's end searched for the same failures and flake signals.
    #[arg(long, default_value_t = 14)]
    pub window: i64,
    /// The window's end: a date or Unix seconds. Default: the newest stored build's day.
    #[arg(long, value_name = "DATE")]
    pub as_of: Option<String>,
    /// Read the PR's state and diff only from the store's cache.
    #[arg(long)]
    pub offline: bool,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Args, Debug)]
pub struct RevertCommitArgs {
    /// The pattern's stable id (latest clustering run) or a job name, as `suspects` takes it.
    pub target: String,
    /// The commit (its id or a prefix of it) among the window's commits.
    #[arg(long, value_name = "SHA")]
    pub commit: String,
    /// A local checkout of a tested repository, ORG/REPO=PATH (repeatable), as `suspects` takes it.
    #[arg(long, value_name = "ORG/REPO=PATH", required = true)]
    pub checkout: Vec<String>,
    /// The clustering profile whose latest run names the pattern.
    #[arg(long, default_value = "default")]
    pub profile: String,
    #[command(flatten)]
    pub output: Output,
}

// Where the analysis comes from. (A plain comment: a doc comment on a flattened
// struct would replace the command's description.)
#[derive(Args, Debug)]
pub struct Source {
    /// A payload analysis JSON (`citriage payload --format json`, or the
    /// payload-analysis-<tag>.json it writes) instead of the analysis stored for the tag.
    /// Default: the analysis stored for the tag.
    #[arg(long, value_name = "FILE")]
    pub analysis: Option<PathBuf>,
}

// How drafts are written and sent.
#[derive(Args, Debug)]
pub struct Output {
    /// Folder the drafts are written to.
    #[arg(long, default_value = "actions", value_name = "DIR")]
    pub out: PathBuf,
    /// Post the drafts through the GitHub API (token from GITHUB_TOKEN or GH_TOKEN),
    /// after printing exactly what will be sent. Default: write the files only.
    #[arg(long)]
    pub apply: bool,
    /// The GitHub API base --apply posts to.
    #[arg(long, default_value = citriage_github::DEFAULT_API_BASE, value_name = "URL")]
    pub api: String,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// The payload tag.
    pub tag: String,
    #[command(flatten)]
    pub source: Source,
}

// A suspect's revert or bisect.
#[derive(Args, Debug)]
pub struct PrArgs {
    /// A local checkout of the suspect's repository: its merge commit is looked up
    /// there and the revert is tried in a scratch worktree (conflicts are reported;
    /// the checkout is left as it is).
    /// Default: none.
    #[arg(long, value_name = "DIR")]
    pub checkout: Option<PathBuf>,
    /// The suspect PR's merge commit (default: found in --checkout, else left for
    /// GitHub to know).
    #[arg(long, value_name = "SHA")]
    pub merge_sha: Option<String>,
    /// The ticket the revert's title names (default NO-JIRA).
    #[arg(long, value_name = "KEY")]
    pub jira: Option<String>,
}

#[derive(Args, Debug)]
pub struct RevertArgs {
    /// The payload tag.
    pub tag: String,
    /// The suspect: org/repo#N (or its pull-request URL).
    #[arg(long)]
    pub suspect: String,
    #[command(flatten)]
    pub pr: PrArgs,
    #[command(flatten)]
    pub source: Source,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Args, Debug)]
pub struct BisectArgs {
    /// The payload tag.
    pub tag: String,
    /// Only this suspect (org/repo#N). Default: every suspect in the bisect band.
    #[arg(long)]
    pub suspect: Option<String>,
    /// Suspects tried at once; the rest are listed as deferred.
    #[arg(long, default_value_t = citriage_actions::payload::MAX_EXPERIMENTS, value_name = "N")]
    pub max: usize,
    #[command(flatten)]
    pub pr: PrArgs,
    #[command(flatten)]
    pub source: Source,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Args, Debug)]
pub struct BugArgs {
    /// The payload tag (with --root-cause).
    pub tag: Option<String>,
    /// The payload's root cause, e.g. RC1.
    /// Default: none.
    #[arg(long, value_name = "ID")]
    pub root_cause: Option<String>,
    /// A failure pattern's stable id (from `citriage cluster` or the dashboard).
    /// Default: none.
    #[arg(long, value_name = "ID", conflicts_with_all = ["tag", "root_cause"])]
    pub pattern: Option<String>,
    /// The pattern's clustering profile (default: `default` when stored).
    #[arg(long)]
    pub profile: Option<String>,
    /// The repository to file the bug in (OWNER/NAME), overriding the routing by owner.
    /// Default: routed by the failure's owner.
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// The repository bugs of owned patterns go to.
    #[arg(long, default_value = "kubernetes/kubernetes", value_name = "OWNER/NAME")]
    pub issue_repo: String,
    #[command(flatten)]
    pub source: Source,
    #[command(flatten)]
    pub output: Output,
}

fn analysis(ctx: &Context, tag: &str, src: &Source) -> Result<PayloadAnalysis, Failure> {
    if let Some(p) = &src.analysis {
        return Ok(act::analysis_file(p, tag)?);
    }
    let db = ctx.db_path();
    if !db.is_file() {
        return Err(Failure::input(format!("store {} does not exist: analyse the payload first", db.display())));
    }
    let store = ctx.open_existing_store()?;
    Ok(citriage_app::payload::stored_analysis(&store, tag)?)
}

/// A draft the evidence does not support: the refusal (as JSON with `--format json`)
/// and a failure saying why.
fn refused(ctx: &Context, r: &Refusal) -> Failure {
    if ctx.json() {
        print_json(&json!({"refused": r}));
    }
    Failure::other(r.message())
}

fn pr_facts(pr: &PrArgs) -> PrFacts {
    PrFacts { checkout: pr.checkout.clone(), merge_sha: pr.merge_sha.clone(), jira: pr.jira.clone() }
}

/// Records the drafts' evidence in the ledger, writes the files, prints the summary.
fn finish(ctx: &Context, drafts: &[Draft], out: &Output, extra: Vec<(String, String)>) -> Result<(), Failure> {
    let mut store = ctx.open_store()?;
    let files = act::record_and_write(&mut store, drafts, &out.out, extra)?;
    if ctx.json() && !out.apply {
        print_json(&json!({"drafts": drafts, "files": files, "ledger": store.path()}));
    } else if !ctx.json() {
        for d in drafts {
            print_draft(d);
        }
        for f in &files {
            outln!("wrote {}", f.display());
        }
    }
    Ok(())
}

fn print_draft(d: &Draft) {
    outln!("{} draft: {}", d.kind.as_str(), d.subject);
    outln!("  title: {}", d.title);
    if let (Some(s), Some(b)) = (d.score, &d.band) {
        outln!("  score {s} ({b}); gate: {}", d.gate);
    } else {
        outln!("  gate: {}", d.gate);
    }
    outln!(
        "  earned by {} evidence item(s): {}",
        d.earned_by.len(),
        d.evidence().iter().map(|e| e.id.as_str()).collect::<Vec<_>>().join(" ")
    );
    if let Some(c) = &d.conflict_check {
        match (&c.error, c.clean) {
            (Some(e), _) => outln!("  revert pre-check: could not be tried: {e}"),
            (None, true) => outln!("  revert pre-check: applies cleanly on {}", c.base),
            (None, false) => outln!("  revert pre-check: conflicts in {}", c.conflicts.join(", ")),
        }
    }
    for w in &d.would_change {
        outln!("  would change: {w}");
    }
    if let Some(why) = &d.apply_blocked {
        outln!("  cannot be applied: {why}");
    }
}

/// Sends the drafts (the log of what is sent on stdout, or on stderr with JSON results).
fn apply_all(ctx: &Context, drafts: &[Draft], out: &Output) -> Result<Vec<(String, Vec<Sent>)>, Failure> {
    let done = if ctx.json() {
        act::apply_all(drafts, &out.api, &mut std::io::stderr())?
    } else {
        act::apply_all(drafts, &out.api, &mut std::io::stdout().lock())?
    };
    if ctx.json() {
        let v: Vec<serde_json::Value> = done.iter().map(|(n, s)| json!({"draft": n, "sent": s})).collect();
        print_json(&json!({"drafts": drafts, "applied": v}));
    }
    Ok(done)
}

/// Runs `citriage act`.
pub fn exec(ctx: &Context, a: &ActArgs) -> Result<(), Failure> {
    match &a.action {
        Action::List(l) => list(ctx, l),
        Action::Comment(c) => comment(ctx, c),
        Action::Revert(r) => {
            let an = analysis(ctx, &r.tag, &r.source)?;
            let d = act::revert(&an, &r.suspect, &pr_facts(&r.pr))?.map_err(|e| refused(ctx, &e))?;
            let drafts = vec![d];
            finish(ctx, &drafts, &r.output, Vec::new())?;
            if r.output.apply {
                apply_all(ctx, &drafts, &r.output)?;
            }
            Ok(())
        }
        Action::Bisect(b) => {
            let an = analysis(ctx, &b.tag, &b.source)?;
            let plan =
                act::bisect(&an, b.suspect.as_deref(), b.max, &pr_facts(&b.pr))?.map_err(|e| refused(ctx, &e))?;
            let tracking = plan.tracking_yaml(&an, &BTreeMap::new(), "");
            finish(ctx, &plan.drafts, &b.output, vec![(plan.tracking_name.clone(), tracking)])?;
            if b.output.apply {
                let done = apply_all(ctx, &plan.drafts, &b.output)?;
                let open = act::opened(&done);
                let tracking = plan.tracking_yaml(&an, &open, &citriage_app::clock::now_rfc3339());
                let p = citriage_app::files::write_whole(&b.output.out, &plan.tracking_name, tracking.as_bytes())?;
                if !ctx.json() {
                    outln!("updated {} ({} experiment(s) pending)", p.display(), open.len());
                }
            }
            Ok(())
        }
        Action::RevertCommit(r) => {
            let opts = citriage_app::suspects::SuspectsOptions {
                target: r.target.clone(),
                profile: citriage_app::cluster::parse_profile(&r.profile)?,
                checkouts: r.checkout.clone(),
            };
            let mut store = ctx.open_existing_store()?;
            let s = citriage_app::suspects::suspects(&mut store, &opts, &citriage_app::Silent)?;
            drop(store);
            s.outcome()?;
            let d = act::revert_commit(&s, &r.commit)?.map_err(|e| refused(ctx, &e))?;
            let drafts = vec![d];
            finish(ctx, &drafts, &r.output, Vec::new())?;
            if r.output.apply {
                apply_all(ctx, &drafts, &r.output)?;
            }
            Ok(())
        }
        Action::Bug(g) => {
            if let Some(r) = &g.repo {
                act::check_repo(r, "--repo")?;
            }
            act::check_repo(&g.issue_repo, "--issue-repo")?;
            let (d, subject) = match (&g.pattern, &g.tag, &g.root_cause) {
                (Some(p), None, None) => pattern_bug(ctx, p, g)?,
                (None, Some(tag), Some(rc)) => {
                    let an = analysis(ctx, tag, &g.source)?;
                    let opts = PayloadOptions { repo: g.repo.clone(), ..PayloadOptions::default() };
                    let d = citriage_actions::payload::root_cause_bug(&an, rc, &opts).map_err(|e| refused(ctx, &e))?;
                    (d, format!("payload:{tag}/{rc}"))
                }
                _ => {
                    return Err(Failure::input(
                        "say what the bug is about: TAG --root-cause RC1 (a payload root cause) or --pattern ID",
                    ))
                }
            };
            let drafts = vec![d];
            finish(ctx, &drafts, &g.output, Vec::new())?;
            if g.output.apply {
                let done = apply_all(ctx, &drafts, &g.output)?;
                link_filed(ctx, subject, done)?;
            }
            Ok(())
        }
    }
}

/// The issue a filed bug opened, linked to the record of what it is about (by `act
/// bug`); said on stderr with JSON results.
fn link_filed(ctx: &Context, subject: String, done: Vec<(String, Vec<Sent>)>) -> Result<(), Failure> {
    let mut store = ctx.open_store()?;
    for (draft, sent) in done {
        let bug = records::FiledBug { subject: subject.clone(), draft, sent, at: None };
        if let Some(l) = records::link_filed_bug(&mut store, &bug)? {
            let line = format!("linked {} to {} (act bug); state: {}", l.reference, l.subject, l.record.record.state);
            if ctx.json() {
                eprintln!("{line}");
            } else {
                outln!("{line}");
            }
        }
    }
    Ok(())
}

/// `act list`: every row of a payload's report with the draft it supports, or why none.
fn list(ctx: &Context, l: &ListArgs) -> Result<(), Failure> {
    let an = analysis(ctx, &l.tag, &l.source)?;
    let rows = citriage_actions::payload::rows(&an);
    if ctx.json() {
        print_json(&json!({"tag": an.payload.tag, "verdict": an.decision.verdict.as_str(), "rows": rows}));
        return Ok(());
    }
    outln!("{} — {}", an.payload.tag, an.decision.verdict.as_str());
    for r in &rows {
        let score = r.score.map(|s| format!(" {s} {}", r.band.clone().unwrap_or_default())).unwrap_or_default();
        match (&r.draft, &r.command, &r.refused) {
            (Some(k), Some(c), _) => outln!("{} {} ({}){score}: {} — {c}", r.row, r.id, r.root_cause, k.as_str()),
            (_, _, Some(why)) => outln!("{} {} ({}){score}: no draft — {why}", r.row, r.id, r.root_cause),
            _ => outln!("{} {} ({}){score}: {}", r.row, r.id, r.root_cause, r.action),
        }
    }
    Ok(())
}

/// A pattern's bug draft, and the subject of its triage record.
fn pattern_bug(ctx: &Context, id: &str, g: &BugArgs) -> Result<(Draft, String), Failure> {
    let db: &Path = &ctx.db_path();
    if !db.is_file() {
        return Err(Failure::input(format!("store {} does not exist", db.display())));
    }
    let view = citriage_web::build_index(db, None, &citriage_web::index::IndexSettings::default())
        .map_err(|e| Failure::other(e.to_string()))?;
    let profile = match g.profile.as_deref() {
        Some(p) => p.to_string(),
        None => view.default_profile().map(|(k, _)| k.clone()).ok_or_else(|| {
            Failure::input(format!("no clustering run is stored (run `{} cluster`)", crate::context::invocation()))
        })?,
    };
    let mut store = ctx.open_existing_store()?;
    let facts = citriage_mcp::answers::pattern_facts(&view, &mut store, &profile, id.trim())
        .map_err(|e| Failure { bad_input: e.bad_input, message: e.message })?;
    let routing = citriage_actions::pattern::BugRouting { repo: g.repo.clone(), default_repo: g.issue_repo.clone() };
    let d = citriage_actions::pattern::bug(&facts, &routing).map_err(|e| refused(ctx, &e))?;
    Ok((d, format!("pattern:{profile}/{}", id.trim())))
}

/// `act comment`: the PR analysed, its comment drafted, checked and written (and with
/// `--apply`, posted or the earlier one updated).
fn comment(ctx: &Context, c: &CommentArgs) -> Result<(), Failure> {
    let target = citriage_app::pr::PrTarget::parse(&c.pr)?;
    let mut store = ctx.open_existing_store()?;
    let opts = citriage_app::pr::PrOptions {
        as_of: c.as_of.clone(),
        window_days: c.window,
        github: Some(citriage_app::records::GithubAccess { api: c.output.api.clone(), offline: c.offline }),
        ..Default::default()
    };
    let pb = ctx.spinner("analysing the pull request");
    let risk = citriage_app::pr::analyse(&mut store, &target, &opts, &pb)?;
    pb.clear();
    let drafts = vec![citriage_app::pr_comment::draft(&risk)];
    let checks = citriage_app::pr_comment::check(&store, &drafts[0])?;
    let files = act::record_and_write(&mut store, &drafts, &c.output.out, Vec::new())?;
    drop(store);
    if !ctx.json() {
        print_draft(&drafts[0]);
        if checks.findings.is_empty() {
            outln!(
                "  report checks: passed ({} claim(s) verified, {} not checkable here)",
                checks.verified,
                checks.unchecked
            );
        }
        for f in &checks.findings {
            outln!("  report checks: {f}");
        }
        for f in &files {
            outln!("wrote {}", f.display());
        }
    }
    let applied = if c.output.apply {
        if !checks.findings.is_empty() {
            return Err(Failure::other(format!(
                "the comment fails the report checks ({}); nothing was sent",
                checks.findings.join("; ")
            )));
        }
        let posted = if ctx.json() {
            citriage_app::pr_comment::apply(&drafts[0], &c.output.api, &mut std::io::stderr())?
        } else {
            citriage_app::pr_comment::apply(&drafts[0], &c.output.api, &mut std::io::stdout().lock())?
        };
        if let (false, Some(u)) = (ctx.json(), &posted.url) {
            outln!("comment {}: {u}", posted.action);
        }
        Some(posted)
    } else {
        None
    };
    if ctx.json() {
        print_json(&json!({"drafts": drafts, "files": files, "checks": checks, "applied": applied}));
    }
    Ok(())
}
