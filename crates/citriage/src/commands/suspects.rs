//! `citriage suspects`: the regression windows of a failure pattern (or a job) and,
//! with checkouts, the commits in them ranked by the evidence linking each to the
//! failure.

use crate::context::{print_json, Context, Failure};
use crate::outln;
use citriage_analysis::windows::{short, Bound, End, JobWindow};
use citriage_app::cluster;
use citriage_app::suspects::{self, Suspects, SuspectsOptions, WindowSuspects};
use citriage_model::escape::one_line;
use clap::Args;

/// Which change started a failure pattern or a job's failures. For each job the
/// pattern hits (or the job, when a job is named) the last build that passed before
/// the onset and the first that failed, with the commits each tested per repository
/// (periodics: repos/repo-commit; presubmits: the base, PR heads apart); across jobs
/// testing the same repository and branch the windows are intersected, naming the job
/// that bounded each end, with the builds and hours between and the GitHub compare
/// URL. With --checkout, the commits of each window (one `git log` per window) are
/// scored by links to the failure's text (strings and identifiers the diff adds or
/// removes, files its stack names, its subject in the title), each link quoted with the
/// diff file:line and the failure line, and banded: window only, suspect (one kind of
/// link), likely introducing change (two independent kinds). A pattern that came and
/// went before its onset, or matches a known signature, gets no likely introducing
/// change. Problems of the input (a checkout that is no repository, a commit it lacks)
/// are printed with the rest and exit 2.
#[derive(Args, Debug)]
pub struct SuspectsArgs {
    /// A failure pattern's stable id (see `citriage cluster`) or a job name.
    #[arg(value_name = "PATTERN-OR-JOB", required_unless_present = "all", conflicts_with = "all")]
    pub target: Option<String>,
    /// Every pattern of the profile's latest clustering run, the largest first: one
    /// line each in text (its verdict and windows), every answer in JSON.
    #[arg(long)]
    pub all: bool,
    /// A local checkout of a tested repository: ORG/REPO=PATH (the spelling of
    /// `verify` and `code`: NAME=PATH[=ORG/REPO]). Repeatable.
    #[arg(long = "checkout", value_name = "ORG/REPO=PATH")]
    pub checkouts: Vec<String>,
    /// The clustering profile the pattern id belongs to: `default` or `k8s-triage`.
    #[arg(long, default_value = "default")]
    pub profile: String,
    /// Commits listed per window in text output (JSON lists them all).
    #[arg(long, default_value_t = 10)]
    pub top: usize,
}

/// Runs `citriage suspects`.
pub fn exec(ctx: &Context, a: &SuspectsArgs) -> Result<(), Failure> {
    let opts = SuspectsOptions {
        target: a.target.clone().unwrap_or_default(),
        profile: cluster::parse_profile(&a.profile)?,
        checkouts: a.checkouts.clone(),
    };
    let mut store = ctx.open_existing_store()?;
    if a.all {
        return exec_all(ctx, &mut store, &opts);
    }
    let pb = ctx.spinner("reading builds");
    let answer = suspects::suspects(&mut store, &opts, &pb)?;
    pb.clear();
    if ctx.json() {
        print_json(&serde_json::to_value(&answer).unwrap_or_default());
    } else {
        print_text(&answer, a.top);
    }
    Ok(answer.outcome()?)
}

/// `suspects --all`: every pattern's answer.
fn exec_all(ctx: &Context, store: &mut citriage_store::Store, opts: &SuspectsOptions) -> Result<(), Failure> {
    let pb = ctx.spinner("reading builds");
    let all = suspects::suspects_all(store, opts, &pb)?;
    pb.clear();
    if ctx.json() {
        print_json(&serde_json::json!({ "profile": opts.profile.name(), "patterns": all }));
    } else {
        outln!("{} patterns of profile {}, the largest first", all.len(), opts.profile.name());
        for s in &all {
            outln!();
            outln!("{} ({} jobs): {}", one_line(&s.target), s.jobs.len(), one_line(&s.verdict));
            for w in &s.windows {
                outln!("  {}", one_line(&suspects::window_line(w)));
            }
        }
    }
    // Problems of the input are the same for every pattern (the checkouts): said once.
    let problems: std::collections::BTreeSet<&String> = all.iter().flat_map(|s| &s.problems).collect();
    for p in &problems {
        outln!("problem: {}", one_line(p));
    }
    match problems.len() {
        0 => Ok(()),
        n => Err(citriage_app::Error::input(format!("{n} problem(s) with the input")).into()),
    }
}

fn print_text(s: &Suspects, top: usize) {
    outln!("{} {}: {}", s.kind, one_line(&s.target), one_line(&s.verdict));
    if !s.tests.is_empty() {
        outln!("failing tests: {}", s.tests.iter().map(|t| one_line(t)).collect::<Vec<_>>().join(", "));
    }
    outln!();
    outln!("jobs ({}):", s.jobs.len());
    for j in &s.jobs {
        print_job(j);
    }
    for w in &s.windows {
        outln!();
        print_window(w, top);
    }
    if !s.versions_moved.is_empty() {
        outln!();
        outln!("what the jobs ran with moved between their windows' ends:");
        for m in &s.versions_moved {
            outln!(
                "  {} ({} {}){}",
                one_line(&m.describe()),
                one_line(&m.file),
                one_line(&m.key),
                if m.every_job { ", in every job's window" } else { "" }
            );
            for l in m.evidence() {
                outln!("    {}", one_line(&l));
            }
        }
    }
    for p in &s.problems {
        outln!("problem: {}", one_line(p));
    }
}

fn end(e: &End) -> String {
    let commits: Vec<String> = e
        .tested
        .repos
        .iter()
        .filter_map(|(repo, r)| {
            let base = r.base.as_deref()?;
            let pulls: String = r.pulls.iter().map(|(n, h)| format!(" +#{n}@{}", short(h))).collect();
            Some(format!("{}{}{pulls}", if repo.is_empty() { String::new() } else { format!("{repo}@") }, short(base)))
        })
        .collect();
    let commits = if commits.is_empty() { "no tested commit".to_string() } else { commits.join(" ") };
    format!("#{} ({})", one_line(&e.build_id), one_line(&commits))
}

fn print_job(j: &JobWindow) {
    let pass = j.last_pass.as_ref().map(end).unwrap_or_else(|| "none stored".into());
    outln!(
        "  {}: last pass {pass} → first failure {}; {} build(s), {} between",
        one_line(&j.job),
        end(&j.first_fail),
        j.builds_between,
        j.seconds_between.map(citriage_model::time::age).unwrap_or_else(|| "?".into())
    );
    if j.flaky_before() {
        outln!(
            "    failed {} time(s) before the last pass: {}",
            j.hits_before,
            citriage_analysis::windows::FLAKY_BEFORE
        );
    }
    for n in &j.notes {
        outln!("    note: {}", one_line(n));
    }
}

fn bound(b: &Bound) -> String {
    let sha = b.sha.as_deref().map(short).unwrap_or("(ends disagree)");
    let by: Vec<String> = b.by.iter().map(|(j, id, _)| format!("{} #{}", one_line(j), one_line(id))).collect();
    format!("{sha} (bounded by {})", by.join(", "))
}

fn print_window(w: &WindowSuspects, top: usize) {
    let win = &w.window;
    let repo =
        if win.repo.is_empty() { "(repository not named by the builds)".to_string() } else { one_line(&win.repo) };
    let branch = win.branch.as_deref().map(|b| format!(" {}", one_line(b))).unwrap_or_default();
    outln!("window {repo}{branch} over {}:", win.jobs.iter().map(|j| one_line(j)).collect::<Vec<_>>().join(", "));
    outln!("  good: {}", win.good.as_ref().map(bound).unwrap_or_else(|| "none (open window)".into()));
    outln!("  bad:  {}", bound(&win.bad));
    if let Some(s) = win.seconds_between {
        outln!("  {} between the ends", citriage_model::time::age(s));
    }
    if let Some(u) = &win.compare_url {
        outln!("  {}", one_line(u));
    }
    for (n, h) in &win.pulls {
        outln!("  the failing end tested PR #{n} at {} on top of the base", short(h));
    }
    for t in &w.test_sources {
        outln!("  failing test defined at {}", one_line(&t.at.cite()));
    }
    for n in win.notes.iter().chain(&w.notes) {
        outln!("  note: {}", one_line(n));
    }
    let Some(commits) = &w.commits else { return };
    outln!(
        "  {} commit(s) in the window{}",
        commits.len(),
        w.checkout.as_deref().map(|c| format!(" ({})", one_line(c))).unwrap_or_default()
    );
    for c in commits.iter().take(top) {
        outln!(
            "  {}{} {} {}  [{}, {} points] {} · {}",
            c.rank,
            if c.tied { "=" } else { "." },
            short(&c.sha),
            one_line(&c.subject),
            c.band.as_str(),
            c.score,
            one_line(&c.author),
            one_line(&c.date)
        );
        for l in &c.links {
            outln!("      {:?}{}: {}", l.kind, if l.specific { "" } else { " (not specific)" }, one_line(&l.evidence));
        }
    }
    if commits.len() > top {
        outln!("  … {} more (--top, or --format json)", commits.len() - top);
    }
}
