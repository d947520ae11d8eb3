//! Regression windows: for each job a failure pattern hits (or each job that went
//! from passing to failing), the last build that passed before the onset and the
//! first that failed, with the commits each tested per repository; and, across the
//! jobs that test the same repository and branch, the intersection of their
//! windows (the culprit lies in every one of them), with the job that bounded each
//! end. Pure: callers hand it the builds.
//!
//! - **Onset**: the first build of the job's last run of hits (no passing build
//!   between it and the last hit). The **last pass** is the newest passing build
//!   before it. Hits before that pass mean the failure came and went before the
//!   onset: *flaky before the onset: no single introducing change*.
//! - **Tested commits**: periodics and postsubmits name theirs in `started.json`'s
//!   `repos` (`org/repo → branch:sha`), else only `repo-commit`; presubmits test the
//!   base SHA with the PR's head merged in: the base bounds the window, the head is
//!   listed apart.
//! - **Intersection**: builds are ordered by their start time, so the newest
//!   passing end and the oldest failing end bound the narrowed window. Ends that tie
//!   in time name every job that bounded them; when tied ends tested different
//!   commits, the end is not narrowed to one of them (nothing says which is newer).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// A build as windows see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub job: String,
    pub build_id: String,
    /// Start, Unix seconds; runs without one cannot be placed and are left out.
    pub started: Option<i64>,
    /// `SUCCESS`, `FAILURE`, `ERROR`, `ABORTED`, or `None` while running.
    pub result: Option<String>,
    /// The build shows the failure the window is for (the pattern, or for a job
    /// window any failure).
    pub hit: bool,
    pub tested: Tested,
}

impl Run {
    fn passed(&self) -> bool {
        self.result.as_deref() == Some("SUCCESS")
    }
}

/// What a build tested, per repository.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Tested {
    /// Repository (`org/repo`, empty when the build does not name it) → its refs.
    pub repos: BTreeMap<String, RepoRefs>,
}

/// The refs of one repository a build tested.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RepoRefs {
    /// The branch, when named.
    pub branch: Option<String>,
    /// The commit of the branch tested (a presubmit's base).
    pub base: Option<String>,
    /// Pull requests merged onto the base for the test: (number, head SHA).
    pub pulls: Vec<(u64, String)>,
}

/// The commits a build tested, from its `repos` text (`{"org/repo": "branch:sha,123:head"}`)
/// and its `repo-commit`: the repos text when it names any, else the `repo-commit`
/// under an unnamed repository. Refs that are not commit ids are left out.
pub fn tested_commits(repos_json: Option<&str>, repo_commit: Option<&str>) -> Tested {
    let mut out = Tested::default();
    let parsed: Option<serde_json::Value> = repos_json.and_then(|t| serde_json::from_str(t).ok());
    if let Some(serde_json::Value::Object(m)) = parsed {
        for (repo, refs) in m {
            let Some(refs) = refs.as_str() else { continue };
            out.repos.insert(repo.trim_start_matches("github.com/").to_string(), parse_refs(refs));
        }
    }
    let Some(sha) = repo_commit.map(str::trim).filter(|s| is_sha(s)) else { return out };
    // Periodics often name the branch only (`{"org/repo": "master"}`) and the commit
    // in `repo-commit`: it is the commit of the one repository without one.
    let bare: Vec<&String> = out.repos.iter().filter(|(_, r)| r.base.is_none()).map(|(k, _)| k).collect();
    match bare.as_slice() {
        [one] => {
            let one = (*one).clone();
            if let Some(r) = out.repos.get_mut(&one) {
                r.base = Some(sha.to_string());
            }
        }
        _ if out.repos.is_empty() => {
            out.repos.insert(String::new(), RepoRefs { branch: None, base: Some(sha.to_string()), pulls: Vec::new() });
        }
        // Several repositories without a commit: `repo-commit` is one of theirs (the
        // job's main repository, which the text does not say).
        names => {
            let key = format!("{ONE_OF}{}", names.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(", "));
            out.repos.insert(key, RepoRefs { branch: None, base: Some(sha.to_string()), pulls: Vec::new() });
        }
    }
    out
}

/// How a repository key starts when `repo-commit` is of one of several repositories.
pub const ONE_OF: &str = "one of ";

/// The repositories a key may name: itself, or each of a [`ONE_OF`] key's.
pub fn candidates(repo: &str) -> Vec<&str> {
    match repo.strip_prefix(ONE_OF) {
        Some(list) => list.split(", ").collect(),
        None if repo.is_empty() => Vec::new(),
        None => vec![repo],
    }
}

/// `branch:sha,123:head,456:head2` (Prow's refs spelling).
fn parse_refs(text: &str) -> RepoRefs {
    let mut r = RepoRefs::default();
    for (i, part) in text.split(',').map(str::trim).enumerate() {
        let (name, sha) = part.split_once(':').unwrap_or((part, ""));
        let sha = Some(sha.trim()).filter(|s| is_sha(s)).map(str::to_string);
        if i == 0 {
            r.branch = Some(name.trim().to_string()).filter(|b| !b.is_empty());
            r.base = sha;
        } else if let (Ok(n), Some(sha)) = (name.trim().parse::<u64>(), sha) {
            r.pulls.push((n, sha));
        }
    }
    r
}

/// 7 to 40 hexadecimal digits.
pub fn is_sha(s: &str) -> bool {
    (7..=40).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// One end of a window: a build and what it tested.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct End {
    pub job: String,
    pub build_id: String,
    pub started: i64,
    pub tested: Tested,
}

impl End {
    fn of(r: &Run) -> End {
        End {
            job: r.job.clone(),
            build_id: r.build_id.clone(),
            started: r.started.unwrap_or(0),
            tested: r.tested.clone(),
        }
    }
}

/// One job's regression window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobWindow {
    pub job: String,
    /// The newest passing build before the onset; `None` when the stored history
    /// has none.
    pub last_pass: Option<End>,
    /// The onset: the first failing build of the job's last run of hits.
    pub first_fail: End,
    /// Builds between the two ends (neither passing nor showing the failure).
    pub builds_between: u32,
    /// Seconds between the two ends' starts.
    pub seconds_between: Option<i64>,
    /// Builds showing the failure before the last pass: it came and went before the onset.
    pub hits_before: u32,
    /// Builds showing the failure from the onset on.
    pub hits_since: u32,
    /// Passing builds after the last hit (the failure stopped).
    pub passes_after: u32,
    /// What the window cannot say (ends without commits, no pass before the onset).
    pub notes: Vec<String>,
}

impl JobWindow {
    /// The failure came and went before its onset: no single change introduced it.
    pub fn flaky_before(&self) -> bool {
        self.hits_before > 0
    }
}

/// The message for a failure that came and went before its onset.
pub const FLAKY_BEFORE: &str = "flaky before the onset: no single introducing change";

/// The window of one job's runs (any order; runs of other jobs are ignored by the
/// caller): `None` when no placed run shows the failure.
pub fn job_window(runs: &[Run]) -> Option<JobWindow> {
    let mut placed: Vec<&Run> = runs.iter().filter(|r| r.started.is_some() && r.result.is_some()).collect();
    placed.sort_by(|a, b| (a.started, &a.build_id).cmp(&(b.started, &b.build_id)));
    let last_hit = placed.iter().rposition(|r| r.hit)?;
    let mut onset = last_hit;
    let mut pass = None;
    for k in (0..last_hit).rev() {
        if placed[k].passed() {
            pass = Some(k);
            break;
        }
        if placed[k].hit {
            onset = k;
        }
    }
    let first = placed[onset];
    let job = first.job.clone();
    let first_fail = End::of(first);
    let last_pass = pass.map(|k| End::of(placed[k]));
    let mut notes = Vec::new();
    match &last_pass {
        None => notes.push(format!(
            "{job}: no passing build before the onset (build {}) in the stored history: the window is open",
            first.build_id
        )),
        Some(p) if !has_commits(&p.tested) => {
            notes.push(format!("{job}: the last passing build {} names no tested commit", p.build_id))
        }
        _ => {}
    }
    if !has_commits(&first_fail.tested) {
        notes.push(format!("{job}: the first failing build {} names no tested commit", first.build_id));
    }
    let unplaced = runs.iter().filter(|r| r.started.is_none()).count();
    if unplaced > 0 {
        notes.push(format!("{job}: {unplaced} build(s) without a start time could not be placed"));
    }
    Some(JobWindow {
        job,
        builds_between: pass.map_or(0, |k| (onset - k - 1) as u32),
        seconds_between: last_pass.as_ref().map(|p| first_fail.started - p.started),
        hits_before: pass.map_or(0, |k| placed[..k].iter().filter(|r| r.hit).count() as u32),
        hits_since: placed[onset..].iter().filter(|r| r.hit).count() as u32,
        passes_after: placed[last_hit..].iter().filter(|r| r.passed()).count() as u32,
        last_pass,
        first_fail,
        notes,
    })
}

fn has_commits(t: &Tested) -> bool {
    t.repos.values().any(|r| r.base.is_some())
}

/// One bound of an intersected window: the commit, and every job whose end set it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bound {
    /// The commit, when the bounding ends agree on one.
    pub sha: Option<String>,
    pub started: i64,
    /// (job, build id, commit) of every end that set the bound (ties are all named).
    pub by: Vec<(String, String, String)>,
}

/// The window of one repository and branch, intersected over the jobs testing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepoWindow {
    /// `org/repo`, empty when the builds do not name it.
    pub repo: String,
    pub branch: Option<String>,
    /// The newest passing end (`None`: no job passed before its onset).
    pub good: Option<Bound>,
    /// The oldest failing end.
    pub bad: Bound,
    /// The jobs whose windows were intersected.
    pub jobs: Vec<String>,
    /// Seconds between the ends' builds.
    pub seconds_between: Option<i64>,
    /// `https://github.com/ORG/REPO/compare/A...B` when both ends are one commit.
    pub compare_url: Option<String>,
    /// Pull request heads the failing ends tested on top of the base (presubmits).
    pub pulls: Vec<(u64, String)>,
    /// The windows do not overlap, or both ends are the same commit: no single
    /// change of this repository explains every job.
    pub empty: bool,
    pub notes: Vec<String>,
}

/// Intersects job windows per repository and branch. Jobs whose ends name no
/// commit of a repository take no part in its window.
pub fn intersect(windows: &[JobWindow]) -> Vec<RepoWindow> {
    type Key = (String, Option<String>);
    let mut groups: BTreeMap<Key, Vec<&JobWindow>> = BTreeMap::new();
    for w in windows {
        for (repo, refs) in &w.first_fail.tested.repos {
            if refs.base.is_some() {
                groups.entry((repo.clone(), refs.branch.clone())).or_default().push(w);
            }
        }
    }
    groups.into_iter().map(|((repo, branch), ws)| repo_window(repo, branch, &ws)).collect()
}

fn base_of<'a>(e: &'a End, repo: &str) -> Option<&'a str> {
    e.tested.repos.get(repo).and_then(|r| r.base.as_deref())
}

fn bound(ends: Vec<&End>, repo: &str) -> Bound {
    let by: Vec<(String, String, String)> = ends
        .iter()
        .map(|e| (e.job.clone(), e.build_id.clone(), base_of(e, repo).unwrap_or_default().to_string()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let shas: BTreeSet<&str> = by.iter().map(|b| b.2.as_str()).collect();
    Bound { sha: (shas.len() == 1).then(|| by[0].2.clone()), started: ends.first().map_or(0, |e| e.started), by }
}

fn repo_window(repo: String, branch: Option<String>, ws: &[&JobWindow]) -> RepoWindow {
    let jobs: Vec<String> = ws.iter().map(|w| w.job.clone()).collect::<BTreeSet<_>>().into_iter().collect();
    let mut notes = Vec::new();
    // The oldest failing end.
    let bad_started = ws.iter().map(|w| w.first_fail.started).min().unwrap_or(0);
    let bad = bound(ws.iter().map(|w| &w.first_fail).filter(|e| e.started == bad_started).collect(), &repo);
    // The newest passing end that names this repository's commit.
    let passes: Vec<&End> =
        ws.iter().filter_map(|w| w.last_pass.as_ref()).filter(|e| base_of(e, &repo).is_some()).collect();
    let good = passes
        .iter()
        .map(|e| e.started)
        .max()
        .map(|t| bound(passes.iter().copied().filter(|e| e.started == t).collect(), &repo));
    for w in ws {
        if w.last_pass.as_ref().is_some_and(|e| base_of(e, &repo).is_none()) {
            notes.push(format!("{}: the last passing build names no commit of {}", w.job, repo_name(&repo)));
        }
    }
    for (b, what) in [(Some(&bad), "failing"), (good.as_ref(), "passing")] {
        if let Some(b) = b.filter(|b| b.sha.is_none()) {
            notes.push(format!(
                "the {what} ends tie in time but tested different commits ({}): that end is not narrowed",
                b.by.iter().map(|(j, id, s)| format!("{j} #{id} at {}", short(s))).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    let mut empty = false;
    if let Some(g) = &good {
        if g.started > bad.started {
            empty = true;
            notes.push(
                "a job passed after another had failed: the windows do not overlap, no single change of this repository explains every job".to_string(),
            );
        } else if g.sha.is_some() && g.sha == bad.sha {
            empty = true;
            notes.push("the same commit passed and failed: the failure was not introduced in this repository".into());
        }
    } else {
        notes.push(format!(
            "no passing build before the onset names a commit of {}: the window is open",
            repo_name(&repo)
        ));
    }
    let compare_url = match (&good, &bad.sha) {
        (Some(Bound { sha: Some(a), .. }), Some(b)) if candidates(&repo) == [repo.as_str()] && !empty => {
            Some(format!("https://github.com/{repo}/compare/{a}...{b}"))
        }
        _ => None,
    };
    let pulls: Vec<(u64, String)> = ws
        .iter()
        .filter(|w| w.first_fail.started == bad_started)
        .filter_map(|w| w.first_fail.tested.repos.get(&repo))
        .flat_map(|r| r.pulls.iter().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    RepoWindow {
        seconds_between: good.as_ref().map(|g| bad.started - g.started),
        repo,
        branch,
        good,
        bad,
        jobs,
        compare_url,
        pulls,
        empty,
        notes,
    }
}

/// The repository's name in a sentence.
pub fn repo_name(repo: &str) -> &str {
    if repo.is_empty() {
        "the repository the builds do not name"
    } else {
        repo
    }
}

/// The first 12 characters of a commit id.
pub fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    const C: &str = "cccccccccccccccccccccccccccccccccccccccc";
    const D: &str = "dddddddddddddddddddddddddddddddddddddddd";

    fn run(job: &str, id: &str, t: i64, result: &str, hit: bool, sha: Option<&str>) -> Run {
        let repos = sha.map(|s| format!(r#"{{"org/repo": "main:{s}"}}"#));
        Run {
            job: job.into(),
            build_id: id.into(),
            started: Some(t),
            result: Some(result.into()),
            hit,
            tested: tested_commits(repos.as_deref(), None),
        }
    }

    #[test]
    fn refs_of_periodics_and_presubmits() {
        let t = tested_commits(Some(r#"{"kubernetes/kubernetes": "master:5feab0a1,93264:abcdef12"}"#), Some(C));
        let r = &t.repos["kubernetes/kubernetes"];
        assert_eq!(r.branch.as_deref(), Some("master"));
        assert_eq!(r.base.as_deref(), Some("5feab0a1"));
        assert_eq!(r.pulls, vec![(93264, "abcdef12".to_string())]);
        // Only repo-commit: an unnamed repository.
        let t = tested_commits(None, Some(C));
        assert_eq!(t.repos[""].base.as_deref(), Some(C));
        // A branch without its commit takes repo-commit's.
        let t = tested_commits(Some(r#"{"kubernetes/kubernetes": "master"}"#), Some(C));
        let r = &t.repos["kubernetes/kubernetes"];
        assert_eq!((r.branch.as_deref(), r.base.as_deref()), (Some("master"), Some(C)));
        // Several: one of them, not said which.
        let t = tested_commits(Some(r#"{"o/a": "main", "o/b": "main"}"#), Some(C));
        assert_eq!(t.repos["one of o/a, o/b"].base.as_deref(), Some(C));
        assert_eq!(candidates("one of o/a, o/b"), vec!["o/a", "o/b"]);
        // Refs that are not commit ids are no commits; garbage is nothing.
        assert!(tested_commits(Some(r#"{"o/r": "main"}"#), None).repos["o/r"].base.is_none());
        assert!(tested_commits(Some("not json"), Some("HEAD")).repos.is_empty());
    }

    #[test]
    fn onset_is_the_first_hit_of_the_last_run_and_the_pass_before_it() {
        let runs = vec![
            run("j", "5", 500, "FAILURE", true, Some(D)),
            run("j", "1", 100, "SUCCESS", false, Some(A)),
            run("j", "2", 200, "SUCCESS", false, Some(B)),
            run("j", "3", 300, "ABORTED", false, None),
            run("j", "4", 400, "FAILURE", true, Some(C)),
        ];
        let w = job_window(&runs).unwrap();
        assert_eq!(w.last_pass.as_ref().unwrap().build_id, "2");
        assert_eq!(w.first_fail.build_id, "4");
        assert_eq!((w.builds_between, w.seconds_between, w.hits_before, w.hits_since), (1, Some(200), 0, 2));
        assert!(!w.flaky_before() && w.notes.is_empty(), "{:?}", w.notes);
        let repo = &intersect(&[w])[0];
        assert_eq!(
            repo.compare_url.as_deref(),
            Some(format!("https://github.com/org/repo/compare/{B}...{C}").as_str())
        );
        assert!(!repo.empty);
    }

    #[test]
    fn hits_before_the_last_pass_are_flaky_before_the_onset() {
        let runs = vec![
            run("j", "1", 100, "FAILURE", true, Some(A)),
            run("j", "2", 200, "SUCCESS", false, Some(A)),
            run("j", "3", 300, "FAILURE", true, Some(B)),
        ];
        let w = job_window(&runs).unwrap();
        assert!(w.flaky_before() && w.hits_before == 1);
        // No hit at all: no window; no pass before: open, said.
        assert!(job_window(&runs[1..2]).is_none());
        let open = job_window(&runs[2..]).unwrap();
        assert!(open.last_pass.is_none() && open.notes[0].contains("no passing build before the onset"));
    }

    #[test]
    fn two_jobs_narrow_the_window_and_each_end_names_its_job() {
        let one =
            job_window(&[run("a", "1", 100, "SUCCESS", false, Some(A)), run("a", "2", 400, "FAILURE", true, Some(D))])
                .unwrap();
        let two =
            job_window(&[run("b", "7", 200, "SUCCESS", false, Some(B)), run("b", "8", 300, "FAILURE", true, Some(C))])
                .unwrap();
        for input in [vec![one.clone(), two.clone()], vec![two.clone(), one.clone()]] {
            let w = &intersect(&input)[0];
            let g = w.good.as_ref().unwrap();
            assert_eq!((g.sha.as_deref(), g.by[0].0.as_str()), (Some(B), "b"));
            assert_eq!((w.bad.sha.as_deref(), w.bad.by[0].0.as_str()), (Some(C), "b"));
            assert_eq!(w.jobs, vec!["a", "b"]);
            assert_eq!(w.seconds_between, Some(100));
        }
    }

    #[test]
    fn ties_are_named_and_disagreeing_ties_do_not_narrow() {
        let one =
            job_window(&[run("a", "1", 100, "SUCCESS", false, Some(A)), run("a", "2", 300, "FAILURE", true, Some(C))])
                .unwrap();
        let two =
            job_window(&[run("b", "1", 100, "SUCCESS", false, Some(B)), run("b", "2", 300, "FAILURE", true, Some(C))])
                .unwrap();
        let w = &intersect(&[one, two])[0];
        assert_eq!(w.bad.by.len(), 2);
        assert_eq!(w.bad.sha.as_deref(), Some(C));
        let g = w.good.as_ref().unwrap();
        assert!(g.sha.is_none() && g.by.len() == 2 && w.compare_url.is_none());
        assert!(w.notes.iter().any(|n| n.contains("tie in time")), "{:?}", w.notes);
    }

    #[test]
    fn windows_that_do_not_overlap_or_ends_without_commits_are_said() {
        let one =
            job_window(&[run("a", "1", 100, "SUCCESS", false, Some(A)), run("a", "2", 200, "FAILURE", true, Some(B))])
                .unwrap();
        let two =
            job_window(&[run("b", "1", 300, "SUCCESS", false, Some(C)), run("b", "2", 400, "FAILURE", true, Some(D))])
                .unwrap();
        let w = &intersect(&[one, two])[0];
        assert!(w.empty && w.compare_url.is_none());
        let bare = job_window(&[run("c", "1", 100, "SUCCESS", false, None), run("c", "2", 200, "FAILURE", true, None)])
            .unwrap();
        assert_eq!(bare.notes.len(), 2, "{:?}", bare.notes);
        assert!(bare.notes[0].contains("names no tested commit"));
        assert!(intersect(&[bare]).is_empty());
    }
}
