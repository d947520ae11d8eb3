//! `bench suspects-history`: the suspect engine measured on real history. In each
//! repository, every revert (`This reverts commit X`) whose message quotes the failure
//! it fixes (`revert_text`'s rule) is a case: the engine is given only that text and
//! the repository, and ranks the N first-parent commits before the change that
//! brought the revert in (read with one `git log -p` per case, as `suspects` reads a
//! window); the case's answer is where the change that brought X in ranks (its tie
//! group, as the engine shows ties). Reverts with no quotable text, re-applies,
//! reverts of commits the history does not hold (a squashed branch's own commits) and
//! reverts landing in the same change as what they revert are skipped and counted.
//!
//! The history is read once per repository (`git log` of HEAD, no patches): the first-
//! parent line from HEAD, and for every commit the first-parent commit that brought it
//! in (a merge's side branch belongs to the merge; a squash or direct commit to
//! itself).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use citriage_git::{Commit, Git, LogQuery};
use citriage_suspects::band::JobBand;
use citriage_suspects::failure::Failure;
use citriage_suspects::lines::{Location, LogLine};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::revert_text::{quoted_failure, reapplies, reverted_ids, Quoted};
use crate::suspects::{rank, with_test_sources, OwnersAt, SuspectCommit};

/// The default number of first-parent commits before a revert that are ranked.
pub const DEFAULT_WINDOW: usize = 50;

/// The repositories the default settings (the window, the text rule) were chosen on;
/// every other repository is held out.
pub const DEFAULT_HELD_IN: &[&str] = &["test-infra"];

/// What the evaluation is asked.
#[derive(Debug, Clone)]
pub struct HistoryOptions {
    /// `PATH` or `NAME=PATH` of each repository (a clone, bare or not); the name
    /// defaults to the folder's name without `.git`.
    pub repos: Vec<String>,
    /// First-parent commits before each revert ranked (the window).
    pub window: usize,
    /// Names of the repositories the settings were chosen on (the others are held out).
    pub held_in: Vec<String>,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            repos: Vec::new(),
            window: DEFAULT_WINDOW,
            held_in: DEFAULT_HELD_IN.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// The evaluation's answer.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryEval {
    pub window: usize,
    pub repos: Vec<RepoEval>,
}

/// One repository's cases and figures.
#[derive(Debug, Clone, Serialize)]
pub struct RepoEval {
    pub name: String,
    pub path: String,
    /// True when the settings were chosen on this repository.
    pub held_in: bool,
    /// Commits of HEAD's first-parent line.
    pub first_parent_commits: usize,
    /// Commits whose message names a reverted commit (`This reverts commit X`).
    pub reverts: usize,
    /// Reverts whose message quotes a failure (by `revert_text`'s rule), of those with
    /// an earlier culprit: the cases, and those whose window could not be read.
    pub quotable: usize,
    /// Reverts not evaluated, by reason.
    pub skipped: BTreeMap<String, usize>,
    /// The evaluated cases (a quotable failure text and an earlier culprit).
    pub cases: Vec<Case>,
    pub figures: Figures,
}

/// Where the culprits of a repository's cases rank.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Figures {
    /// Cases evaluated (quotable text, culprit an earlier change).
    pub cases: usize,
    /// Cases whose culprit lies beyond the window (counted as misses).
    pub outside_window: usize,
    /// The culprit alone at rank 1, with a link.
    pub at1: usize,
    /// The culprit's tie group within the first three places, with a link.
    pub top3: usize,
    /// The culprit at rank 1 but tied with others.
    pub at1_tied: usize,
    /// The median of the culprit's last place in its tie group (in-window cases).
    pub median_place: Option<f64>,
    /// What a ranking by chance would score on the same windows (expected counts).
    pub chance_at1: f64,
    pub chance_top3: f64,
}

/// One revert and where its culprit ranked.
#[derive(Debug, Clone, Serialize)]
pub struct Case {
    /// The revert commit and its subject.
    pub revert: String,
    pub subject: String,
    /// The reverted commit as the message names it.
    pub reverted: String,
    /// The first-parent commit that brought the reverted commit in (the culprit ranked).
    pub culprit: String,
    pub culprit_subject: String,
    /// The failure text given to the engine, and the test names in it.
    pub text: Quoted,
    /// Commits of the window read (at most the window).
    pub window: usize,
    /// Where the culprit ranked; `None`: beyond the window.
    pub ranked: Option<Ranked>,
    /// The window's best commit (rank 1, first by id of its tie group) and its score.
    pub best: Option<String>,
    pub best_score: u32,
}

/// A culprit's place.
#[derive(Debug, Clone, Serialize)]
pub struct Ranked {
    /// The rank shown (shared by a tie group) and the group's size.
    pub rank: u32,
    pub tied_with: usize,
    /// The last place of the tie group (rank + size - 1).
    pub last_place: u32,
    pub score: u32,
    pub band: JobBand,
    /// The culprit's links, quoted.
    pub links: Vec<String>,
}

/// Runs the evaluation over every repository; every repository is opened (and its
/// history checked) before any is read, so bad input fails first, naming it.
pub fn suspects_history(opts: &HistoryOptions, progress: &dyn Progress) -> Result<HistoryEval> {
    if opts.repos.is_empty() {
        return Err(Error::input("no repository given: name one or more with --repo PATH"));
    }
    if opts.window == 0 {
        return Err(Error::input("--window 0: the window must hold at least one commit"));
    }
    let mut opened = Vec::new();
    for spec in &opts.repos {
        opened.push(open(spec)?);
    }
    let mut repos = Vec::new();
    for (name, path, git) in opened {
        progress.doing(&format!("reading the history of {name}"));
        let held_in = opts.held_in.iter().any(|h| h == &name);
        repos.push(evaluate(&name, &path, &git, opts.window, held_in, progress)?);
    }
    Ok(HistoryEval { window: opts.window, repos })
}

/// A `--repo` value opened: its name, its path and the checkout, which must have a HEAD.
fn open(spec: &str) -> Result<(String, String, Git)> {
    let (name, path) = match spec.split_once('=') {
        Some((n, p)) if !n.is_empty() && !p.is_empty() => (n.to_string(), p.to_string()),
        Some(_) => return Err(Error::input(format!("--repo {spec:?}: expected PATH or NAME=PATH"))),
        None => (default_name(spec), spec.to_string()),
    };
    let git = Git::open(PathBuf::from(&path)).map_err(|e| Error::input(format!("--repo {spec}: {e}")))?;
    git.rev_parse("HEAD")
        .map_err(|e| Error::input(format!("--repo {spec}: the repository has no history to evaluate ({e})")))?;
    Ok((name, path, git))
}

/// The folder's name without `.git` (a bare clone `kops.git` is `kops`); a folder
/// named `repo` or `.git` takes its parent's name.
fn default_name(path: &str) -> String {
    let p = std::path::Path::new(path.trim_end_matches('/'));
    let base = p.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let base = base.strip_suffix(".git").unwrap_or(&base).to_string();
    if base.is_empty() {
        let parent = p.parent().and_then(|q| q.file_name()).map(|s| s.to_string_lossy().into_owned());
        return parent.unwrap_or_else(|| path.to_string());
    }
    base
}

/// HEAD's history: the first-parent line (newest first) and, for every commit, the
/// index in that line of the first-parent commit that brought it in.
struct History {
    commits: Vec<Commit>,
    by_sha: HashMap<String, usize>,
    line: Vec<usize>,
    /// For each commit, its introducer's position in `line`.
    intro: Vec<Option<usize>>,
}

impl History {
    fn read(name: &str, git: &Git) -> Result<History> {
        let commits = git
            .log(&LogQuery::of("HEAD"))
            .map_err(|e| Error::input(format!("--repo {name}: its history cannot be read: {e}")))?;
        let by_sha: HashMap<String, usize> = commits.iter().enumerate().map(|(i, c)| (c.sha.clone(), i)).collect();
        let mut line = Vec::new();
        let mut at = commits.first().map(|c| c.sha.as_str());
        while let Some(i) = at.and_then(|s| by_sha.get(s)).copied() {
            line.push(i);
            at = commits[i].parents.first().map(String::as_str);
        }
        let mut intro = vec![None; commits.len()];
        for (pos, &m) in line.iter().enumerate().rev() {
            let mut stack = vec![m];
            while let Some(i) = stack.pop() {
                if intro[i].is_some() {
                    continue;
                }
                intro[i] = Some(pos);
                stack.extend(commits[i].parents.iter().filter_map(|p| by_sha.get(p)).copied());
            }
        }
        Ok(History { commits, by_sha, line, intro })
    }

    /// The commit an id names: the full id, or the one commit an abbreviation fits.
    fn find(&self, id: &str) -> Option<usize> {
        if let Some(&i) = self.by_sha.get(id) {
            return Some(i);
        }
        let mut hits = self.commits.iter().enumerate().filter(|(_, c)| c.sha.starts_with(id)).map(|(i, _)| i);
        let first = hits.next()?;
        hits.next().is_none().then_some(first)
    }
}

fn evaluate(
    name: &str,
    path: &str,
    git: &Git,
    window: usize,
    held_in: bool,
    progress: &dyn Progress,
) -> Result<RepoEval> {
    let h = History::read(name, git)?;
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let mut skip = |why: &str| *skipped.entry(why.to_string()).or_default() += 1;
    let mut todo = Vec::new();
    let mut reverts = 0;
    for (i, c) in h.commits.iter().enumerate() {
        let ids = reverted_ids(&c.body);
        if ids.is_empty() {
            continue;
        }
        reverts += 1;
        if reapplies(&c.subject) {
            skip("re-applies a reverted change");
            continue;
        }
        let targets: Vec<Option<usize>> = ids.iter().map(|id| h.find(id)).collect();
        let (Some(r), [Some(x)]) = (h.intro[i], targets.as_slice()) else {
            skip(if ids.len() > 1 { "reverts several commits" } else { "reverted commit not in the history" });
            continue;
        };
        let Some(culprit) = h.intro[*x] else {
            skip("reverted commit not in the history");
            continue;
        };
        if culprit <= r {
            skip("reverted in the same change (or a later one)");
            continue;
        }
        let text = quoted_failure(&c.subject, &c.body, Some(&h.commits[*x].subject));
        if text.is_empty() {
            skip("no quotable failure text");
            continue;
        }
        todo.push((i, *x, r, culprit, text));
    }
    progress.found(todo.len() as u64);
    let quotable = todo.len();
    let mut cases = Vec::new();
    for (i, x, r, culprit, text) in todo {
        progress.doing(&format!("{name}: revert {}", short(&h.commits[i].sha)));
        match case(&h, git, name, window, (i, x, r, culprit), text) {
            Ok(c) => cases.push(c),
            Err(e) => {
                progress.warning(&format!("{name}: revert {}: {e}", short(&h.commits[i].sha)));
                skip("window could not be read");
            }
        }
        progress.advance(1);
    }
    let figures = figures(&cases);
    Ok(RepoEval {
        name: name.to_string(),
        path: path.to_string(),
        held_in,
        first_parent_commits: h.line.len(),
        reverts,
        quotable,
        skipped,
        cases,
        figures,
    })
}

/// One case: the window before the revert's change read and ranked against the text.
fn case(
    h: &History,
    git: &Git,
    name: &str,
    window: usize,
    (revert, reverted, r, culprit): (usize, usize, usize, usize),
    text: Quoted,
) -> Result<Case> {
    let c = &h.commits[revert];
    let culprit_commit = &h.commits[h.line[culprit]];
    let available = h.line.len() - r - 1;
    let mut out = Case {
        revert: c.sha.clone(),
        subject: c.subject.clone(),
        reverted: h.commits[reverted].sha.clone(),
        culprit: culprit_commit.sha.clone(),
        culprit_subject: culprit_commit.subject.clone(),
        text,
        window: window.min(available),
        ranked: None,
        best: None,
        best_score: 0,
    };
    if available == 0 || culprit - r > window {
        return Ok(out);
    }
    let top = &h.commits[h.line[r + 1]].sha;
    let q = LogQuery { first_parent: true, max_count: Some(window), ..LogQuery::of(top).with_patches() };
    let commits = git.log(&q).map_err(|e| Error::failed(e.to_string()))?;
    let at = Location { file: format!("revert {}", short(&c.sha)), url: None, line: None };
    let lines = out.text.lines.iter().map(|t| LogLine { text: t.clone(), at: at.clone() }).collect();
    let failure = Failure::new(lines, out.text.tests.clone(), Vec::new());
    let mut notes = Vec::new();
    let (failure, tests) = with_test_sources(&failure, git, top, &mut notes);
    let owners = OwnersAt { git, rev: top, tests: &tests };
    let ranked = rank(&commits, name, &failure, false, Some(owners), &mut notes);
    out.window = commits.len();
    if let Some(b) = ranked.iter().filter(|s| s.rank == 1).min_by(|a, b| a.sha.cmp(&b.sha)) {
        out.best = Some(b.sha.clone());
        out.best_score = b.score;
    }
    out.ranked = ranked.iter().find(|s| s.sha == culprit_commit.sha).map(|s| place(s, &ranked));
    Ok(out)
}

fn place(s: &SuspectCommit, all: &[SuspectCommit]) -> Ranked {
    let tied_with = all.iter().filter(|o| o.rank == s.rank).count();
    Ranked {
        rank: s.rank,
        tied_with,
        last_place: s.rank + tied_with as u32 - 1,
        score: s.score,
        band: s.band,
        links: s.links.iter().map(|l| format!("{:?} +{}: {}", l.kind, l.points, l.evidence)).collect(),
    }
}

fn figures(cases: &[Case]) -> Figures {
    let mut f = Figures { cases: cases.len(), ..Figures::default() };
    let mut places = Vec::new();
    for c in cases {
        let n = c.window.max(1) as f64;
        f.chance_at1 += 1.0 / n;
        f.chance_top3 += (3.0 / n).min(1.0);
        let Some(r) = &c.ranked else {
            f.outside_window += 1;
            continue;
        };
        places.push(r.last_place);
        let linked = r.score > 0;
        if linked && r.rank == 1 && r.tied_with == 1 {
            f.at1 += 1;
        }
        if linked && r.rank == 1 && r.tied_with > 1 {
            f.at1_tied += 1;
        }
        if linked && r.last_place <= 3 {
            f.top3 += 1;
        }
    }
    places.sort_unstable();
    f.median_place = match places.len() {
        0 => None,
        n if n % 2 == 1 => Some(f64::from(places[n / 2])),
        n => Some((f64::from(places[n / 2 - 1]) + f64::from(places[n / 2])) / 2.0),
    };
    f
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}
