//! `citriage triage`: triage a snapshot (given, or the latest stored) against its
//! prior, with the stored builds and linked fix PRs when there are any; writes the
//! report and data files and records the report in the store. Its subcommands keep
//! the triage records (`triage link`, `unlink`, `records`, `refresh`) over the
//! `citriage_app::records` use cases: the memory of what is known about a failure
//! pattern (the issues and pull requests linked to it, every state it went through).

use crate::context::{print_json, Context, Failure, SnapshotSourceArgs};
use crate::{outln, render};
use citriage_app::records::{
    self, GithubAccess, LinkOptions, ListOptions, MentionOptions, RecordView, RefreshOptions, UnlinkOptions,
};
use citriage_app::triage::{Settings, TriageRequest};
use citriage_model::time::{age, utc};
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Triage a snapshot: categorize, select clusters, drift, misclassifications;
/// write report.md, report.json and the data files. `citriage triage [OPTIONS]`
/// (no subcommand) triages as it always did; the subcommands keep triage records:
/// `triage link PATTERN REF`, `triage unlink PATTERN REF`, `triage records [--state
/// S]`, `triage refresh`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct TriageArgs {
    #[command(subcommand)]
    pub records: Option<RecordsCommand>,
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
    /// A local checkout of a tested repository, ORG/REPO=PATH (repeatable; a
    /// job-configuration checkout such as kubernetes/test-infra too): the report says
    /// which change introduced or exposed each new or growing pattern, with its evidence.
    /// Default: none (the report leaves those changes open).
    #[arg(long, value_name = "ORG/REPO=PATH")]
    pub checkout: Vec<String>,
    #[command(flatten)]
    pub source: SnapshotSourceArgs,
}

/// Runs `citriage triage`.
pub fn exec(ctx: &Context, a: &TriageArgs) -> Result<(), Failure> {
    if let Some(c) = &a.records {
        return records_exec(ctx, c);
    }
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
        checkouts: a.checkout.clone(),
    };
    let pb = ctx.spinner("reading");
    let t = citriage_app::triage::triage_snapshot(store, &req, &settings, &pb)?;
    pb.clear();
    render::triage_summary(ctx, &t.triage, &t.files);
    Ok(())
}

/// What `triage` does besides triaging a snapshot.
#[derive(Subcommand, Debug)]
pub enum RecordsCommand {
    /// Link an issue or pull request to a failure pattern (or a job, a payload root
    /// cause), with who and when; GitHub says what it is (issue or pull request, open,
    /// merged), and the record's state follows. A reference GitHub answers 404 for, or
    /// a pull request closed without merging, is linked (kept and shown) and the
    /// command exits 2 saying why it does not count as a fix.
    Link(LinkArgs),
    /// Unlink a reference (the link stays in the record's history, stamped with who
    /// and when); the record's state follows.
    Unlink(UnlinkArgs),
    /// List the triage records, loudest first (failed after fix, fix merged, new,
    /// triaged, fix confirmed), with how long each has been in its state; with a
    /// SUBJECT, that record's links and timeline.
    Records(ListArgs),
    /// Recompute every record's state from the stored builds and the linked
    /// references' states (read again from GitHub unless --offline; through the store's
    /// cache), after `fetch` and `cluster`.
    Refresh(RefreshArgs),
}

#[derive(Args, Debug)]
pub struct GithubArgs {
    /// Read GitHub answers only from the store's cache.
    #[arg(long)]
    pub offline: bool,
    /// GitHub API base URL (token from GITHUB_TOKEN or GH_TOKEN, never printed).
    #[arg(long, default_value = "https://api.github.com")]
    pub api: String,
}

impl GithubArgs {
    fn access(&self) -> GithubAccess {
        GithubAccess { api: self.api.clone(), offline: self.offline }
    }
}

#[derive(Args, Debug)]
pub struct LinkArgs {
    /// The pattern's stable id (as `cluster` and the dashboard show it), or
    /// pattern:PROFILE/ID, job:NAME, payload:CAUSE.
    pub pattern: String,
    /// The issue or pull request: owner/repo#N or its https://github.com/... URL.
    pub reference: String,
    /// Who links it. Default: $USER.
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// A note kept with the link.
    #[arg(long, default_value = "")]
    pub note: String,
    #[command(flatten)]
    pub github: GithubArgs,
}

#[derive(Args, Debug)]
pub struct UnlinkArgs {
    /// As for `triage link`.
    pub pattern: String,
    /// The linked reference (owner/repo#N or URL).
    pub reference: String,
    /// Who unlinks it. Default: $USER.
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// One record (pattern:PROFILE/ID, a stable id, job:NAME, payload:CAUSE): its
    /// links and timeline.
    pub subject: Option<String>,
    /// Only records in this state: new, triaged, fix-merged, fix-confirmed,
    /// failed-after-fix. Default: every state.
    #[arg(long, value_name = "S")]
    pub state: Option<String>,
    /// Only records in their state for at least this many days. Default: any age.
    #[arg(long, value_name = "DAYS")]
    pub min_age_days: Option<u32>,
    /// Only open records (leave out confirmed fixes).
    #[arg(long)]
    pub open: bool,
}

#[derive(Args, Debug)]
pub struct RefreshArgs {
    /// Also link the entries of a fix-PR links file (as `triage --links` reads it) to
    /// the patterns of the latest clustering runs whose failure text their regex matches.
    /// Default: no links file.
    #[arg(long, value_name = "FILE")]
    pub links: Option<PathBuf>,
    /// Search this repository (owner/repo; repeat for several) for issues and pull
    /// requests that name a pattern (its stable id, a test it fails, its failure text,
    /// a job it breaks) and link them (by `github mention`; a mention through a job name
    /// alone is listed, not linked; one someone unlinked is not linked again). With
    /// --offline, from the store's cache only, saying which queries it could not answer.
    /// Default: no search.
    #[arg(long, value_name = "OWNER/REPO")]
    pub mentions_in: Vec<String>,
    /// With --mentions-in: besides the patterns that have a record, how many of the
    /// largest patterns of each profile's latest clustering run are looked for.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub mentions_top: usize,
    /// A local checkout of a fix's repository, OWNER/REPO=PATH (repeat for several):
    /// whether a build contains a merged fix is then read from git ancestry of the
    /// build's tested commit (its started.json repos, else repo-commit), one git batch
    /// per fix; without one, or for a commit the checkout lacks, from time (a build
    /// started after the merge). The records' reasons say which was used.
    /// Default: no checkout (time).
    #[arg(long, value_name = "OWNER/REPO=PATH")]
    pub checkout: Vec<String>,
    #[command(flatten)]
    pub github: GithubArgs,
}

fn who(by: &Option<String>) -> Result<String, Failure> {
    by.clone()
        .or_else(|| std::env::var("USER").ok())
        .or_else(|| std::env::var("USERNAME").ok())
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| Failure::input("who links it is unknown: pass --by NAME (or set USER)"))
}

/// Runs a records subcommand.
fn records_exec(ctx: &Context, c: &RecordsCommand) -> Result<(), Failure> {
    match c {
        RecordsCommand::Link(a) => {
            let mut store = ctx.open_existing_store()?;
            let opts = LinkOptions {
                subject: a.pattern.clone(),
                reference: a.reference.clone(),
                by: who(&a.by)?,
                note: a.note.clone(),
                github: a.github.access(),
                ..Default::default()
            };
            let pb = ctx.spinner("linking");
            let l = records::link(&mut store, &opts, &pb)?;
            pb.clear();
            show_linked(ctx, &l);
            Ok(l.outcome()?)
        }
        RecordsCommand::Unlink(a) => {
            let mut store = ctx.open_existing_store()?;
            let opts =
                UnlinkOptions { subject: a.pattern.clone(), reference: a.reference.clone(), by: who(&a.by)?, at: None };
            let l = records::unlink(&mut store, &opts, &citriage_app::Silent)?;
            show_linked(ctx, &l);
            Ok(())
        }
        RecordsCommand::Records(a) => list(ctx, a),
        RecordsCommand::Refresh(a) => {
            let mut store = ctx.open_existing_store()?;
            let mentions = (!a.mentions_in.is_empty()).then(|| MentionOptions {
                repos: a.mentions_in.clone(),
                top: a.mentions_top,
                ..MentionOptions::default()
            });
            let opts = RefreshOptions {
                github: Some(a.github.access()),
                as_of: None,
                links: a.links.clone(),
                mentions,
                checkouts: a.checkout.clone(),
            };
            let pb = ctx.spinner("refreshing records");
            let r = records::refresh(&mut store, &opts, &pb)?;
            pb.clear();
            if ctx.json() {
                print_json(&serde_json::to_value(&r).unwrap_or_default());
            } else {
                outln!(
                    "{} record(s) refreshed, {} link(s) with a new GitHub state, {} transition(s)",
                    r.records,
                    r.links_updated,
                    r.transitions.len()
                );
                for l in &r.linked {
                    outln!("  linked {l}");
                }
                for t in &r.transitions {
                    outln!("  {t}");
                }
                for p in &r.problems {
                    outln!("  warning: {p}");
                }
                for u in &r.unread {
                    outln!("  not read: {u}");
                }
                if let Some(m) = &r.mentions {
                    show_mentions(m);
                }
            }
            Ok(())
        }
    }
}

fn show_mentions(m: &records::MentionsRead) {
    let how = if m.offline { "offline, from the store's cache" } else { "from GitHub (through the store's cache)" };
    outln!(
        "GitHub cross-references, {how}: {} pattern(s) looked for, {} quer(ies) answered ({} from the cache), {} not answered",
        m.patterns,
        m.queries,
        m.from_cache,
        m.unanswered.len()
    );
    for c in &m.candidates {
        outln!("  candidate (not linked): {c}");
    }
    for k in &m.kept_unlinked {
        outln!("  not linked again: {k}");
    }
    for u in &m.unanswered {
        outln!("  not looked at: {u}");
    }
}

fn show_linked(ctx: &Context, l: &records::Linked) {
    if ctx.json() {
        print_json(&serde_json::to_value(l).unwrap_or_default());
        return;
    }
    outln!("{} {} {} {}", l.action, l.reference, if l.action == "unlinked" { "from" } else { "to" }, l.subject);
    if let Some(g) = &l.github {
        outln!("  GitHub: {g}");
    }
    for t in &l.transitions {
        outln!("  {t}");
    }
    outln!("  state: {} since {}", l.record.summary.state.label(), utc(l.record.record.since));
}

fn list(ctx: &Context, a: &ListArgs) -> Result<(), Failure> {
    let store = ctx.open_existing_store()?;
    if let Some(s) = &a.subject {
        let (subject, _, _) = records::resolve_subject(&store, s)?;
        let Some(v) = records::record(&store, &subject.key())? else {
            return Err(Failure::input(format!("{} has no triage record: `triage link` makes one", subject.key())));
        };
        if ctx.json() {
            print_json(&serde_json::to_value(&v).unwrap_or_default());
        } else {
            timeline(&v);
        }
        return Ok(());
    }
    let opts = ListOptions {
        state: a.state.clone(),
        min_age: a.min_age_days.map(|d| i64::from(d) * citriage_model::time::DAY),
        open_only: a.open,
    };
    let views = records::list(&store, &opts)?;
    if ctx.json() {
        print_json(&serde_json::json!({ "store": store.path(), "records": views }));
        return Ok(());
    }
    if views.is_empty() {
        outln!("no triage records in {} (`triage link PATTERN REF` makes one)", store.path());
    }
    for v in &views {
        let s = &v.summary;
        let detail = match (&s.fix, &s.confirmation) {
            (Some(f), Some(c)) if !c.confirmed && !c.plan.is_empty() => format!("fix {}; {}", f.reference, c.plan),
            (Some(f), _) => format!("fix {}", f.reference),
            _ => format!("{} link(s)", v.links.iter().filter(|l| l.active()).count()),
        };
        outln!("{:<17} {:>9}  {}  {}  — {}", s.state.label(), age(v.age), v.record.subject, v.record.title, detail);
    }
    Ok(())
}

fn timeline(v: &RecordView) {
    outln!("{}  {}", v.record.subject, v.record.title);
    outln!("state: {} since {} ({})", v.summary.state.label(), utc(v.record.since), age(v.age));
    if let Some(c) = v.summary.confirmation.as_ref().filter(|c| !c.confirmed) {
        outln!("awaiting confirmation: chance of luck so far {:.1}%; {}", c.chance * 100.0, c.plan);
    }
    outln!("links:");
    for l in &v.links {
        let un = match (&l.unlinked_at, &l.unlinked_by) {
            (Some(t), Some(by)) => format!(", unlinked {} by {by}", utc(*t)),
            _ => String::new(),
        };
        outln!(
            "  {} ({} {}) linked {} by {} via {}{un}",
            l.reference,
            l.facts.ref_kind,
            l.facts.ref_state,
            utc(l.linked_at),
            l.linked_by,
            l.source.as_str()
        );
    }
    outln!("timeline:");
    for t in &v.transitions {
        outln!("  {}  {:<16} → {:<16} {}", utc(t.at), t.from, t.to, t.reason);
    }
}
