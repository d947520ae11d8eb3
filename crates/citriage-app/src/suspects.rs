//! `suspects`: which change started a failure pattern (or a job's failures). From the
//! store: each job's regression window (the last build that passed before the onset
//! and the first that failed, with the commits each tested) and the windows
//! intersected per repository and branch (`citriage_analysis::windows`). With local
//! checkouts (`--checkout ORG/REPO=PATH`): the commits of each window, read with one
//! `git log` per window, each scored by `citriage_suspects`' links against the
//! failure's text and banded: *window only*, *suspect*, *likely introducing change*
//! (never on a pattern that came and went before its onset, or that matches a known
//! signature). Problems of the input (a checkout that is no repository, a commit it
//! lacks) are said in the result, the rest still analysed; [`Suspects::outcome`] makes
//! them bad input once the result is shown.

use std::collections::{BTreeMap, BTreeSet};

use citriage_analysis::windows::{self, JobWindow, RepoWindow, Run, FLAKY_BEFORE};
use citriage_git::{Commit, Git, LogQuery};
use citriage_model::build::prow_url;
use citriage_patterns::normalize::Profile;
use citriage_store::{IndexedBuild, Store};
use citriage_suspects::band::JobBand;
use citriage_suspects::diff::{parse_unified, ParsedDiff};
use citriage_suspects::failure::Failure;
use citriage_suspects::lines::{Location, LogLine};
use citriage_suspects::links::{link, Change, LinkKind, Links, Weights};
use citriage_suspects::owners;
use citriage_suspects::rank::{tie_groups, Standing};
use citriage_suspects::window::{CandidateIndex, WindowIndex};
use serde::Serialize;

use crate::checkouts::parse_checkout;
use crate::error::{Error, Result};
use crate::exposing::{exposing_changes, ExposingChange};
use crate::progress::Progress;
use crate::version_moves::{version_moves, VersionMove};

/// At most this many lines of one failure text explain it.
const LINES_PER_TEXT: usize = 80;
/// At most this many failures of a pattern are read for its text.
const PATTERN_FAILURES: usize = 3;

/// What `suspects` is asked.
#[derive(Debug, Clone)]
pub struct SuspectsOptions {
    /// A pattern's stable id (latest clustering run of `profile`) or a job name.
    pub target: String,
    pub profile: Profile,
    /// `ORG/REPO=PATH` (the `--checkout` spelling of `verify` and `code`).
    pub checkouts: Vec<String>,
}

impl Default for SuspectsOptions {
    fn default() -> Self {
        SuspectsOptions { target: String::new(), profile: Profile::Default, checkouts: Vec::new() }
    }
}

/// The answer.
#[derive(Debug, Clone, Serialize)]
pub struct Suspects {
    pub target: String,
    /// `pattern` or `job`.
    pub kind: &'static str,
    /// The failure the commits are scored against: cited lines and failing tests.
    pub failure: Vec<LogLine>,
    pub tests: Vec<String>,
    /// Known signatures the pattern matches (then no commit is the likely introducing change).
    pub signatures: Vec<String>,
    /// Each job's window.
    pub jobs: Vec<JobWindow>,
    /// The windows intersected per repository and branch, with their commits.
    pub windows: Vec<WindowSuspects>,
    /// Changes of the jobs' own configuration between their last pass and first
    /// failure (job-configuration checkouts: those no window reads).
    pub exposing: Vec<ExposingChange>,
    /// Images and versions the jobs ran with that moved between their windows' ends
    /// (the builds' stored versions), best first.
    pub versions_moved: Vec<VersionMove>,
    /// The failure came and went before its onset in some job.
    pub flaky_before: bool,
    /// One sentence: the likely introducing change, the suspects, or why there is none.
    pub verdict: String,
    /// Problems of the input (checkouts, commits they lack), each naming it.
    pub problems: Vec<String>,
}

/// One intersected window and what its checkout says of it.
#[derive(Debug, Clone, Serialize)]
pub struct WindowSuspects {
    pub window: RepoWindow,
    /// The checkout read, when one was named for the repository.
    pub checkout: Option<String>,
    /// Where the failing tests are defined at the failing commit (linked like stack files).
    pub test_sources: Vec<LogLine>,
    /// The window's commits ranked (`None`: not read, see `notes`).
    pub commits: Option<Vec<SuspectCommit>>,
    pub notes: Vec<String>,
}

/// A commit of a window and its evidence.
#[derive(Debug, Clone, Serialize)]
pub struct SuspectCommit {
    /// 1-based rank, shared by commits of equal standing.
    pub rank: u32,
    pub tied: bool,
    pub sha: String,
    pub author: String,
    pub date: String,
    pub subject: String,
    pub pr: Option<u64>,
    pub files: Vec<String>,
    pub score: u32,
    pub band: JobBand,
    pub links: Vec<SuspectLink>,
}

/// One link of a commit to the failure, quoted.
#[derive(Debug, Clone, Serialize)]
pub struct SuspectLink {
    pub kind: LinkKind,
    pub points: u32,
    pub specific: bool,
    pub evidence: String,
}

impl Suspects {
    /// Bad input once the result has been shown: the problems, named.
    pub fn outcome(&self) -> Result<()> {
        match self.problems.len() {
            0 => Ok(()),
            n => Err(Error::input(format!("{n} problem(s) with the input: {}", self.problems.join("; ")))),
        }
    }

    /// The best-ranked commits of every window, best first.
    pub fn top(&self) -> Vec<&SuspectCommit> {
        let mut all: Vec<&SuspectCommit> = self.windows.iter().filter_map(|w| w.commits.as_ref()).flatten().collect();
        all.sort_by(|a, b| (b.band, b.score, &a.sha).cmp(&(a.band, a.score, &b.sha)));
        all
    }
}

impl Suspects {
    /// What started the pattern, for reports and briefs: the likely introducing change
    /// (alone at rank 1, with its links quoted), else the exposing change, else unknown
    /// with the verdict's reason; the windows' ends as evidence in every case.
    pub fn blame(&self) -> citriage_analysis::triage::PatternBlame {
        let mut evidence: Vec<String> = self.windows.iter().map(window_line).collect();
        let likely: Vec<&SuspectCommit> =
            self.top().into_iter().filter(|c| c.band == JobBand::LikelyIntroducing && c.rank == 1).collect();
        let kind = if let [one] = likely.as_slice() {
            evidence.extend(one.links.iter().filter(|l| l.specific).map(|l| l.evidence.clone()));
            "introduced"
        } else if let (Some(e), None) =
            (self.exposing.first(), self.top().into_iter().find(|c| c.band >= JobBand::Suspect))
        {
            evidence.extend(e.lines.iter().map(|l| format!("{}@{}: {l}", e.repo, windows::short(&e.sha))));
            "exposed"
        } else if let (Some(m), None) =
            (self.versions_moved.first(), self.top().into_iter().find(|c| c.band >= JobBand::Suspect))
        {
            evidence.extend(m.evidence());
            "exposed"
        } else {
            "unknown"
        };
        citriage_analysis::triage::PatternBlame {
            stable_id: self.target.clone(),
            kind: kind.to_string(),
            verdict: self.verdict.clone(),
            evidence,
        }
    }
}

/// A window in one line: repository, ends, the jobs that bounded them.
pub fn window_line(w: &WindowSuspects) -> String {
    let r = &w.window;
    let good = r
        .good
        .as_ref()
        .and_then(|g| g.sha.as_deref())
        .map_or("(no pass stored)".to_string(), |s| windows::short(s).to_string());
    let bad = r.bad.sha.as_deref().map_or("(no commit)".to_string(), |s| windows::short(s).to_string());
    let n = w.commits.as_ref().map(|c| format!(", {} commit(s)", c.len())).unwrap_or_default();
    format!("window of {}: {good}..{bad}{n}", windows::repo_name(&r.repo))
}

/// What the windows are computed for.
struct Target {
    kind: &'static str,
    /// Row ids of the builds showing the failure (pattern), or `None`: any failure (job).
    hits: Option<BTreeSet<i64>>,
    jobs: BTreeSet<String>,
    signatures: Vec<String>,
}

/// `suspects`: the windows of a pattern or a job, and with checkouts their commits ranked.
pub fn suspects(store: &mut Store, opts: &SuspectsOptions, progress: &dyn Progress) -> Result<Suspects> {
    // Checkout specs are parsed before anything is read: a malformed one is the
    // argument's fault and nothing would be analysed with it.
    opts.checkouts.iter().try_for_each(|s| parse_checkout(s).map(|_| ()))?;
    progress.doing("reading builds");
    let index = store.build_index()?;
    suspects_in(store, &index, opts, progress)
}

/// [`suspects`] over a build index already read (`Store::build_index`), for a caller
/// that answers many targets from one state of the store (the dashboard's pages).
pub fn suspects_in(
    store: &mut Store,
    index: &[IndexedBuild],
    opts: &SuspectsOptions,
    progress: &dyn Progress,
) -> Result<Suspects> {
    let specs = opts.checkouts.iter().map(|s| parse_checkout(s)).collect::<Result<Vec<_>>>()?;
    let target = resolve(store, opts, index)?;
    let jobs = job_windows(index, &target);
    let (failure_lines, tests) = failure_text(store, opts, &target, &jobs)?;
    let failure = Failure::new(failure_lines.clone(), tests.clone(), Vec::new());
    let flaky_before = jobs.iter().any(JobWindow::flaky_before);
    let mut problems = Vec::new();
    let gits = open_checkouts(&specs, &mut problems);
    let cap = !target.signatures.is_empty() || flaky_before;
    let mut out = Vec::new();
    for w in windows::intersect(&jobs) {
        progress.doing(&format!("reading the window of {}", windows::repo_name(&w.repo)));
        out.push(window_suspects(w, &gits, &failure, cap, &mut problems));
    }
    let mut exposing = Vec::new();
    let mut config_notes = Vec::new();
    let read: BTreeSet<&str> = out.iter().filter_map(|w| w.checkout.as_deref()).collect();
    for (repo, git) in gits.iter().filter(|(r, g)| !read.contains(checkout_name(r, g).as_str())) {
        progress.doing(&format!("reading the job configuration of {repo}"));
        for w in &jobs {
            exposing.extend(exposing_changes(repo, git, w, &mut config_notes));
        }
    }
    problems.extend(config_notes);
    progress.doing("comparing what the jobs ran with");
    let versions_moved = version_moves(store, index, &jobs)?;
    let mut answer = Suspects {
        target: opts.target.clone(),
        kind: target.kind,
        failure: failure_lines,
        tests,
        signatures: target.signatures,
        jobs,
        windows: out,
        exposing,
        versions_moved,
        flaky_before,
        verdict: String::new(),
        problems,
    };
    answer.verdict = verdict(&answer);
    Ok(answer)
}

/// Every pattern of the profile's latest clustering run, the largest first (ties by
/// stable id), each answered as [`suspects`] answers it, from one read of the build
/// index and one opening of each checkout's repository per pattern's window.
pub fn suspects_all(store: &mut Store, opts: &SuspectsOptions, progress: &dyn Progress) -> Result<Vec<Suspects>> {
    opts.checkouts.iter().try_for_each(|s| parse_checkout(s).map(|_| ()))?;
    let profile = opts.profile.name();
    let Some(run) = store.cluster_run(profile)? else {
        return Err(Error::input(format!(
            "no clustering run of profile {profile} is stored: run `citriage cluster --profile {profile}` first"
        )));
    };
    let mut patterns: Vec<(u64, String)> = store
        .clusters(profile)?
        .into_iter()
        .filter(|c| c.run_as_of == run.as_of)
        .map(|c| (c.size, c.stable_id))
        .collect();
    patterns.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    progress.doing("reading builds");
    let index = store.build_index()?;
    let mut out = Vec::with_capacity(patterns.len());
    for (i, (_, id)) in patterns.iter().enumerate() {
        progress.doing(&format!("pattern {} of {}: {id}", i + 1, patterns.len()));
        let one = SuspectsOptions { target: id.clone(), ..opts.clone() };
        out.push(suspects_in(store, &index, &one, &crate::progress::Silent)?);
    }
    Ok(out)
}

/// A pattern of the profile's latest run, else a job of the store.
fn resolve(store: &Store, opts: &SuspectsOptions, index: &[IndexedBuild]) -> Result<Target> {
    let profile = opts.profile.name();
    if let Some(c) = store.cluster(profile, &opts.target)? {
        // Members of the latest run, and failures earlier runs first gave this id (a
        // failure older than the latest run's window still counts, so the onset and
        // "flaky before the onset" are not cut at that window's start).
        let rows = store.cluster_member_rows(profile, &c.stable_id)?;
        let mut hits: BTreeSet<i64> = rows.iter().map(|r| r.0).collect();
        let earlier: BTreeSet<(String, String)> = store
            .pattern_runs(profile, &c.stable_id, i64::MIN)?
            .into_iter()
            .filter(|r| r.hit)
            .map(|r| (r.bucket, r.path))
            .collect();
        let keys: BTreeSet<(&str, &str)> = earlier.iter().map(|(b, p)| (b.as_str(), p.as_str())).collect();
        hits.extend(
            index.iter().filter(|b| keys.contains(&(b.record.bucket.as_str(), b.record.path.as_str()))).map(|b| b.id),
        );
        let jobs = index.iter().filter(|b| hits.contains(&b.id)).map(|b| b.record.job.clone()).collect();
        return Ok(Target { kind: "pattern", hits: Some(hits), jobs, signatures: c.signatures });
    }
    if index.iter().any(|b| b.record.job == opts.target) {
        return Ok(Target {
            kind: "job",
            hits: None,
            jobs: BTreeSet::from([opts.target.clone()]),
            signatures: Vec::new(),
        });
    }
    Err(Error::remedy(
        format!(
            "{:?}: no pattern of that stable id in the latest {profile} clustering run and no job of that name among the stored builds (",
            opts.target
        ),
        "cluster",
        " gives patterns their ids)",
    ))
}

/// Each job's window, by job.
fn job_windows(index: &[IndexedBuild], target: &Target) -> Vec<JobWindow> {
    let mut runs: BTreeMap<&str, Vec<Run>> = BTreeMap::new();
    for b in index.iter().filter(|b| target.jobs.contains(&b.record.job)) {
        let r = &b.record;
        let hit = match &target.hits {
            Some(h) => h.contains(&b.id),
            None => matches!(r.result.as_deref(), Some("FAILURE" | "ERROR")),
        };
        runs.entry(r.job.as_str()).or_default().push(Run {
            job: r.job.clone(),
            build_id: r.build_id.clone(),
            started: r.started,
            result: r.result.clone(),
            hit,
            tested: windows::tested_commits(r.repos.as_deref(), r.repo_commit.as_deref()),
        });
    }
    runs.values().filter_map(|r| windows::job_window(r)).collect()
}

/// The lines that explain the failure, cited, and the failing tests: a pattern's
/// newest failures; a job's first failing build of its newest window (its failed
/// tests' texts and its log's failure lines).
fn failure_text(
    store: &mut Store,
    opts: &SuspectsOptions,
    target: &Target,
    jobs: &[JobWindow],
) -> Result<(Vec<LogLine>, Vec<String>)> {
    let mut lines = Vec::new();
    let mut tests = BTreeSet::new();
    if target.kind == "pattern" {
        for f in store.cluster_failures(opts.profile.name(), &opts.target, PATTERN_FAILURES)? {
            let at = format!("{} {}", f.path, f.test);
            cite(&mut lines, f.failure_text.as_deref().unwrap_or(""), &at, Some(prow_url(&f.bucket, &f.path)), 1);
            tests.insert(f.test);
        }
        return Ok((distinct(lines), tests.into_iter().collect()));
    }
    let Some(w) = jobs.iter().max_by_key(|w| w.first_fail.started) else { return Ok((lines, Vec::new())) };
    let since = Some(w.first_fail.started - 1);
    let builds = store.job_builds_with_tests(&w.job, since)?;
    if let Some(b) = builds.iter().find(|b| b.build_id == w.first_fail.build_id) {
        let url = Some(prow_url(&b.bucket, &b.path));
        for t in b.tests.iter().filter(|t| t.status == "failed" || t.status == "error") {
            let at = format!("{} {}", b.path, t.name);
            cite(&mut lines, t.failure_text.as_deref().unwrap_or(""), &at, url.clone(), 1);
            tests.insert(t.name.clone());
        }
        for e in &b.excerpts {
            cite(&mut lines, &e.text, &format!("{}/{}", b.path, e.source), url.clone(), e.line_start);
        }
    }
    Ok((distinct(lines), tests.into_iter().collect()))
}

/// The lines without repeats of a text already cited (the same failure in several builds).
fn distinct(lines: Vec<LogLine>) -> Vec<LogLine> {
    let mut seen = BTreeSet::new();
    lines.into_iter().filter(|l| seen.insert(l.text.clone())).collect()
}

fn cite(out: &mut Vec<LogLine>, text: &str, file: &str, url: Option<String>, first: u32) {
    for (i, l) in text.lines().enumerate().take(LINES_PER_TEXT) {
        if !l.trim().is_empty() {
            let at = Location { file: file.to_string(), url: url.clone(), line: Some(first + i as u32) };
            out.push(LogLine { text: l.to_string(), at });
        }
    }
}

/// The checkouts by repository; those that cannot be opened are problems.
fn open_checkouts(specs: &[crate::checkouts::CheckoutSpec], problems: &mut Vec<String>) -> BTreeMap<String, Git> {
    let mut out = BTreeMap::new();
    for s in specs {
        match Git::open(&s.path) {
            Ok(g) => {
                out.insert(s.repo.clone(), g);
            }
            Err(e) => problems.push(format!("--checkout {}={}: {e}", s.name, s.path)),
        }
    }
    out
}

/// The window's checkout: the one named for its repository; for a repository the
/// builds do not name, the only checkout given.
fn checkout_for<'a>(repo: &str, gits: &'a BTreeMap<String, Git>) -> Option<(&'a String, &'a Git)> {
    if let Some(g) = gits.get_key_value(repo) {
        return Some(g);
    }
    if repo.is_empty() && gits.len() == 1 {
        return gits.iter().next();
    }
    // `repo-commit` of one of several repositories: the one of them with a checkout.
    let named: Vec<_> = windows::candidates(repo).into_iter().filter_map(|r| gits.get_key_value(r)).collect();
    match named.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// How a window names the checkout it read.
fn checkout_name(repo: &str, git: &Git) -> String {
    format!("{repo}={}", git.dir().display())
}

fn window_suspects(
    window: RepoWindow,
    gits: &BTreeMap<String, Git>,
    failure: &Failure,
    cap: bool,
    problems: &mut Vec<String>,
) -> WindowSuspects {
    let mut notes = Vec::new();
    let Some((name, git)) = checkout_for(&window.repo, gits) else {
        notes.push(format!(
            "no checkout of {}: give --checkout {}=PATH to list and rank its commits",
            windows::repo_name(&window.repo),
            if window.repo.is_empty() || window.repo.starts_with(windows::ONE_OF) { "ORG/REPO" } else { &window.repo }
        ));
        return WindowSuspects { window, checkout: None, test_sources: Vec::new(), commits: None, notes };
    };
    let checkout = Some(checkout_name(name, git));
    let (Some(good), Some(bad)) = (window.good.as_ref().and_then(|g| g.sha.clone()), window.bad.sha.clone()) else {
        notes.push("the window has no single commit at each end: its commits are not listed".into());
        return WindowSuspects { window, checkout, test_sources: Vec::new(), commits: None, notes };
    };
    if window.empty {
        notes.push("the windows do not overlap: no commit of this repository is in all of them".into());
        return WindowSuspects { window, checkout, test_sources: Vec::new(), commits: None, notes };
    }
    for sha in [&good, &bad] {
        if let Err(e) = git.rev_parse(sha) {
            problems.push(format!("commit {sha} of the window of {}: {e}", windows::repo_name(&window.repo)));
            notes.push(format!(
                "commit {sha} is not in the checkout {name}: its commits are not listed (never guessed)"
            ));
            return WindowSuspects { window, checkout, test_sources: Vec::new(), commits: None, notes };
        }
    }
    let (failure, test_sources) = with_test_sources(failure, git, &bad, &mut notes);
    match git.log(&LogQuery::range(&good, &bad).with_patches()) {
        Ok(commits) => {
            let owners = OwnersAt { git, rev: &bad, tests: &test_sources };
            let ranked = rank(&commits, &window.repo, &failure, cap, Some(owners), &mut notes);
            WindowSuspects { window, checkout, test_sources, commits: Some(ranked), notes }
        }
        Err(e) => {
            notes.push(format!("the window's commits could not be read: {e}"));
            WindowSuspects { window, checkout, test_sources, commits: None, notes }
        }
    }
}

/// The failure with a line naming each failing test's source file at the failing
/// commit (`path:line`), so a commit modifying the test is linked like a file the
/// stack names. A Go test is found by its function (`func TestX(`); a spec by the
/// longest tail of its name (three words and 15 characters at least, tags left out)
/// that one or two product files hold. Tests not found are no evidence.
pub(crate) fn with_test_sources(
    failure: &Failure,
    git: &Git,
    rev: &str,
    notes: &mut Vec<String>,
) -> (Failure, Vec<LogLine>) {
    let mut lines = failure.lines.clone();
    let mut found = Vec::new();
    for test in failure.tests.iter().take(MAX_TESTS) {
        match test_source(git, rev, test) {
            Ok(Some(hit)) => found.push(LogLine {
                text: format!("the failing test {test} is defined at {}:{}", hit.path, hit.line),
                at: Location { file: hit.path.clone(), url: None, line: Some(hit.line as u32) },
            }),
            Ok(None) => {}
            Err(e) => notes.push(format!("the source of test {test:?} could not be searched: {e}")),
        }
    }
    lines.extend(found.iter().cloned());
    (Failure::new(lines, failure.tests.clone(), failure.components.clone()), found)
}

/// At most this many failing tests are looked up in a checkout.
const MAX_TESTS: usize = 5;

fn test_source(git: &Git, rev: &str, test: &str) -> Result<Option<citriage_git::GrepHit>, citriage_git::GitError> {
    let name = test.split(['/', ' ', '.']).next().unwrap_or("");
    if name.len() > 4 && name.starts_with("Test") && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        let hits = git.grep(&format!("func {name}("), Some(rev), &[], 3)?;
        return Ok(hits.into_iter().find(|h| citriage_suspects::paths::is_product(&h.path)));
    }
    let untagged = untagged(test);
    let words: Vec<&str> = untagged.split_whitespace().collect();
    for k in (3..=words.len().min(12)).rev() {
        let needle = words[words.len() - k..].join(" ");
        if needle.len() < 15 {
            break;
        }
        let hits: Vec<_> = git
            .grep(&needle, Some(rev), &[], 20)?
            .into_iter()
            .filter(|h| citriage_suspects::paths::is_product(&h.path))
            .collect();
        let files: BTreeSet<&str> = hits.iter().map(|h| h.path.as_str()).collect();
        if (1..=2).contains(&files.len()) {
            return Ok(hits.into_iter().next());
        }
        if files.len() > 2 {
            break;
        }
    }
    Ok(None)
}

/// A test name without its bracketed tags (`[sig-node]`, `[Serial]`).
fn untagged(test: &str) -> String {
    let mut out = String::new();
    let mut depth = 0u32;
    for c in test.chars() {
        match c {
            '[' => depth += 1,
            ']' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Where a window's `OWNERS` files are read: the checkout at the window's failing
/// commit, and the failing tests' source files found there.
pub(crate) struct OwnersAt<'a> {
    pub git: &'a Git,
    pub rev: &'a str,
    pub tests: &'a [LogLine],
}

/// At most this many `OWNERS` paths are looked up for one window.
const MAX_OWNERS_FILES: usize = 20_000;

/// The failure with the SIGs of its tests' files, and the SIGs owning the product
/// paths each diff touches: the nearest `OWNERS` file with SIG labels up the tree
/// of each path, all read in one git process at the failing commit. A read that
/// fails is said in the notes; the window is still ranked, without owners.
fn owners_of_window(
    at: &OwnersAt,
    diffs: &[ParsedDiff],
    failure: &Failure,
    notes: &mut Vec<String>,
) -> (Failure, Vec<BTreeMap<String, String>>) {
    let touched: Vec<Vec<&str>> =
        diffs.iter().map(|d| d.paths().filter(|p| citriage_suspects::paths::is_product(p)).collect()).collect();
    let tests: Vec<&str> = at.tests.iter().map(|t| t.at.file.as_str()).collect();
    let mut wanted = BTreeSet::new();
    for p in touched.iter().flatten().chain(&tests) {
        if wanted.len() >= MAX_OWNERS_FILES {
            notes.push(format!(
                "more than {MAX_OWNERS_FILES} OWNERS files to read: the rest of the paths have no owners"
            ));
            break;
        }
        wanted.extend(owners::owners_files_above(p));
    }
    let list: Vec<&str> = wanted.iter().map(String::as_str).collect();
    let texts: BTreeMap<String, String> = match at.git.read_files(at.rev, &list) {
        Ok(found) => list
            .iter()
            .zip(found)
            .filter_map(|(p, b)| Some((p.to_string(), String::from_utf8_lossy(&b?).into_owned())))
            .collect(),
        Err(e) => {
            notes.push(format!("the OWNERS files could not be read at {}: {e}", windows::short(at.rev)));
            return (failure.clone(), vec![BTreeMap::new(); diffs.len()]);
        }
    };
    let mut sigs = BTreeMap::new();
    for t in at.tests {
        let file = t.at.file.as_str();
        for sig in owners::sigs_of_path(file) {
            sigs.entry(sig).or_insert_with(|| t.text.clone());
        }
        for (sig, how) in owners::sigs_of(file, &texts) {
            sigs.entry(sig).or_insert_with(|| format!("{}: {how}", t.text));
        }
    }
    let per_diff = touched.iter().map(|ps| owners::sigs_of_paths(ps.iter().copied(), &texts)).collect();
    (failure.clone().with_sigs(sigs), per_diff)
}

/// The commits scored against the failure and ranked in tie groups; with `owners`,
/// the SIGs of the paths each touches (and of the failing tests' files) are read
/// from the checkout's `OWNERS` files.
pub(crate) fn rank(
    commits: &[Commit],
    repo: &str,
    failure: &Failure,
    cap: bool,
    owners: Option<OwnersAt>,
    notes: &mut Vec<String>,
) -> Vec<SuspectCommit> {
    let diffs: Vec<_> = commits.iter().map(|c| parse_unified(&c.patch)).collect();
    let (owned, sigs) = match &owners {
        Some(at) => owners_of_window(at, &diffs, failure, notes),
        None => (failure.clone(), vec![BTreeMap::new(); diffs.len()]),
    };
    let failure = &owned;
    let docs: BTreeMap<String, CandidateIndex> = commits
        .iter()
        .zip(&diffs)
        .zip(sigs)
        .map(|((c, d), sigs)| {
            let ix = CandidateIndex::new(Some(d).filter(|d| !d.files.is_empty()), &c.subject).with_owners(sigs);
            (c.sha.clone(), ix)
        })
        .collect();
    let texts: Vec<String> = failure.lines.iter().map(|l| l.text.clone()).collect();
    let window = WindowIndex::new(docs).with_failures(&[texts.join("\n")]);
    let weights = Weights::default();
    let scored: Vec<SuspectCommit> = commits
        .iter()
        .zip(&diffs)
        .map(|(c, d)| {
            let change = Change {
                id: &c.sha,
                title: &c.subject,
                body: Some(&c.body),
                author: Some(&c.author),
                label: format!("{repo}@{}", windows::short(&c.sha)),
                ships: repo.to_string(),
                owns: BTreeSet::new(),
            };
            let links = link(failure, &change, &window.docs[&c.sha], &window, &weights);
            commit_of(c, d.paths().map(str::to_string).collect(), links, cap)
        })
        .collect();
    let groups = tie_groups(
        scored,
        |s| Standing {
            score: s.score,
            strength: s.links.iter().filter(|l| l.specific).map(|l| l.points).max().unwrap_or(0).min(255) as u8,
        },
        |s| s.sha.clone(),
    );
    let mut out = Vec::new();
    for g in groups {
        let tied = g.tied();
        for mut m in g.members {
            m.rank = g.rank;
            m.tied = tied;
            out.push(m);
        }
    }
    out
}

fn commit_of(c: &Commit, mut files: Vec<String>, links: Links, cap: bool) -> SuspectCommit {
    if files.is_empty() {
        files = c.files.clone();
    }
    let mut band = JobBand::of(&links.links, false);
    if cap {
        band = band.min(JobBand::Suspect);
    }
    SuspectCommit {
        rank: 0,
        tied: false,
        sha: c.sha.clone(),
        author: c.author.clone(),
        date: c.author_date.clone(),
        subject: c.subject.clone(),
        pr: c.pr.map(|p| p.number),
        files,
        score: links.links.iter().map(|l| l.points).sum(),
        band,
        links: links
            .links
            .into_iter()
            .map(|l| SuspectLink { kind: l.kind, points: l.points, specific: l.specific, evidence: l.evidence })
            .collect(),
    }
}

/// One sentence for the whole answer.
fn verdict(s: &Suspects) -> String {
    if s.jobs.is_empty() {
        return format!("{}: no job shows the failure in a placed build: no window", s.target);
    }
    let likely: Vec<&SuspectCommit> =
        s.top().into_iter().filter(|c| c.band == JobBand::LikelyIntroducing && c.rank == 1).collect();
    let prefix = if s.flaky_before {
        format!("{FLAKY_BEFORE}. ")
    } else if !s.signatures.is_empty() {
        format!(
            "matches known signature(s) {}: no commit of the tested repository is the introducing change. ",
            s.signatures.join(", ")
        )
    } else {
        String::new()
    };
    let best = s.top().into_iter().find(|c| c.band >= JobBand::Suspect);
    if let (None, Some(e)) = (best, s.exposing.first()) {
        return format!(
            "{prefix}exposed by {}@{} {} ({}: {}); introducing change unknown",
            e.repo,
            windows::short(&e.sha),
            e.subject,
            e.job,
            e.lines.first().map(String::as_str).unwrap_or("")
        );
    }
    if let (None, Some(m)) = (best, s.versions_moved.first()) {
        let ends: Vec<String> =
            m.windows.iter().map(|w| format!("{} #{} → #{}", w.job, w.good_build, w.bad_build)).collect();
        return format!(
            "{prefix}exposed by {} ({} {}; {}{}); introducing change unknown",
            m.describe(),
            m.file,
            m.key,
            ends.join(", "),
            if m.every_job && m.windows.len() > 1 { "; in every job's window" } else { "" }
        );
    }
    match (likely.as_slice(), best) {
        ([one], _) => format!("{prefix}likely introducing change: {} {}", windows::short(&one.sha), one.subject),
        ([_, _, ..], _) => format!("{prefix}{} commits tie as the likely introducing change", likely.len()),
        ([], Some(b)) => format!("{prefix}top suspect: {} {} ({})", windows::short(&b.sha), b.subject, b.band.as_str()),
        ([], None) if s.windows.iter().any(|w| w.commits.is_some()) => {
            format!("{prefix}no commit of the window links to the failure: introducing change unknown")
        }
        ([], None) => format!("{prefix}window only: no checkout read, introducing change unknown"),
    }
}
