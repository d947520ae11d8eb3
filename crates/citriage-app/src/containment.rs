//! Which builds contain a fix, from git: the builds' tested commits (their
//! `started.json` repos, else `repo-commit`) and the fix's merge commit, asked of a
//! local checkout of the fix's repository (`--checkout OWNER/REPO=PATH`) through
//! `citriage-git`, one batch per fix however many builds. What a checkout cannot say (no
//! checkout of that repository, a commit it does not have) is left to time, and the
//! record's reasons say which was used (`citriage_analysis::resolution`).

use crate::checkouts::parse_checkout;
use crate::error::{Error, Result};
use citriage_analysis::resolution::{Ancestry, Run};
use citriage_git::Git;
use citriage_store::PatternRun;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The checkouts given, by repository (`owner/repo`).
#[derive(Debug, Default)]
pub struct Checkouts {
    repos: BTreeMap<String, Git>,
    /// Answers so far: (repository, merge commit, tested commit) → contains.
    known: RefCell<BTreeMap<(String, String, String), Option<bool>>>,
    /// Fixes a checkout could not place (their commit missing from it...), with why.
    unanswered: RefCell<Vec<String>>,
}

/// A fix to place: its repository and merge commit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FixCommit {
    pub repo: String,
    pub commit: String,
}

impl Checkouts {
    /// Opens `NAME=PATH[=OWNER/REPO]` checkouts (the repository defaults to the name).
    pub fn open(specs: &[String]) -> Result<Checkouts> {
        let mut repos = BTreeMap::new();
        for spec in specs {
            let c = parse_checkout(spec)?;
            let git = Git::open(&c.path).map_err(|e| Error::input(format!("--checkout {spec:?}: {e}")))?;
            repos.insert(c.repo.to_ascii_lowercase(), git);
        }
        Ok(Checkouts { repos, ..Checkouts::default() })
    }

    /// What the checkouts could not answer so far (sorted), with why.
    pub fn unanswered(&self) -> Vec<String> {
        let mut u = self.unanswered.borrow().clone();
        u.sort();
        u
    }

    /// No checkout: time decides everywhere.
    pub fn is_empty(&self) -> bool {
        self.repos.is_empty()
    }

    /// The answers for the runs of one record: for each fix with a checkout of its
    /// repository, whether each run's tested commit contains the merge commit (one git
    /// batch per fix for the commits not asked before). A checkout's failure leaves
    /// that fix to time, with why.
    pub fn answers(&self, fixes: &[FixCommit], runs: &[PatternRun]) -> Answers {
        let mut out = Answers::default();
        for f in fixes {
            let repo = f.repo.to_ascii_lowercase();
            let Some(git) = self.repos.get(&repo) else { continue };
            let tested: Vec<(String, Option<String>)> =
                runs.iter().map(|r| (build_of(r), tested_commit(r, &f.repo))).collect();
            let mut ask: Vec<&str> = tested
                .iter()
                .filter_map(|(_, t)| t.as_deref())
                .filter(|t| !self.known.borrow().contains_key(&(repo.clone(), f.commit.clone(), t.to_string())))
                .collect();
            ask.sort_unstable();
            ask.dedup();
            if !ask.is_empty() {
                match git.contained_in(&f.commit, &ask) {
                    Ok(got) => {
                        let mut known = self.known.borrow_mut();
                        for (t, c) in ask.iter().zip(got) {
                            known.insert((repo.clone(), f.commit.clone(), t.to_string()), c);
                        }
                    }
                    Err(e) => {
                        let why = format!("the merge commit {} of {}: {e} (time decides)", f.commit, f.repo);
                        let mut u = self.unanswered.borrow_mut();
                        if !u.contains(&why) {
                            u.push(why);
                        }
                        continue;
                    }
                }
            }
            let known = self.known.borrow();
            for (build, t) in &tested {
                let Some(t) = t else { continue };
                if let Some(Some(c)) = known.get(&(repo.clone(), f.commit.clone(), t.clone())) {
                    out.contains.insert((f.commit.clone(), build.clone()), *c);
                }
            }
        }
        out
    }
}

/// What the checkouts said for one record's runs.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    /// (merge commit, build as the resolution names it) → contains.
    contains: BTreeMap<(String, String), bool>,
}

impl Ancestry for Answers {
    fn contains(&self, merge_commit: &str, run: &Run) -> Option<bool> {
        self.contains.get(&(merge_commit.to_string(), run.build.clone())).copied()
    }
}

/// A build as the resolution names it (`job/id`).
pub fn build_of(r: &PatternRun) -> String {
    format!("{}/{}", r.job, r.build_id)
}

/// The commit a build tested of `repo`: the base SHA of its `started.json` repos entry
/// for that repository (`{"org/repo": "branch:sha,PR:sha"}`; the entry of a Go import
/// path like `k8s.io/kubernetes` when it is the only one ending in the name), else its
/// `repo-commit` when it names no other repository.
pub fn tested_commit(r: &PatternRun, repo: &str) -> Option<String> {
    let name = repo.rsplit('/').next().unwrap_or(repo);
    let refs = r.repos.as_deref().and_then(|s| serde_json::from_str::<serde_json::Value>(s).ok());
    let map = refs.as_ref().and_then(|v| v.as_object());
    let hex = |s: &str| (s.len() >= 7 && s.bytes().all(|b| b.is_ascii_hexdigit())).then(|| s.to_string());
    match map {
        Some(m) if !m.is_empty() => {
            let entry = m.iter().find(|(k, _)| k.eq_ignore_ascii_case(repo)).or_else(|| {
                let by_name: Vec<_> = m.iter().filter(|(k, _)| k.rsplit('/').next() == Some(name)).collect();
                (by_name.len() == 1).then(|| by_name[0])
            })?;
            let first = entry.1.as_str()?.split(',').next()?;
            match first.split_once(':') {
                Some((_, sha)) => hex(sha.trim()),
                None if m.len() == 1 => r.repo_commit.as_deref().and_then(hex),
                None => None,
            }
        }
        _ => r.repo_commit.as_deref().and_then(hex),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(repos: Option<&str>, commit: Option<&str>) -> PatternRun {
        PatternRun {
            job: "j".into(),
            bucket: "b".into(),
            path: "p".into(),
            build_id: "1".into(),
            started: 0,
            result: None,
            complete: true,
            failed_tests: 0,
            repo_commit: commit.map(str::to_string),
            repos: repos.map(str::to_string),
            hit: false,
        }
    }

    #[test]
    fn the_tested_commit_of_a_repository() {
        let k = "kubernetes/kubernetes";
        let r = run(Some(r#"{"kubernetes/kubernetes": "master:abcdef12,123:99999999"}"#), Some("1111111"));
        assert_eq!(tested_commit(&r, k).as_deref(), Some("abcdef12"), "the base, not the PR head");
        let r = run(Some(r#"{"k8s.io/kubernetes": "release-1.35:abcdef34"}"#), None);
        assert_eq!(tested_commit(&r, k).as_deref(), Some("abcdef34"), "a Go import path");
        let r = run(Some(r#"{"kubernetes/test-infra": "master:abcdef56"}"#), Some("abcdef78"));
        assert_eq!(tested_commit(&r, k), None, "another repository's commit");
        assert_eq!(tested_commit(&run(None, Some("abcdef90")), k).as_deref(), Some("abcdef90"));
        assert_eq!(tested_commit(&run(None, Some("--all")), k), None, "not a commit id");
        let r = run(Some(r#"{"kubernetes/kubernetes": "master"}"#), Some("abcdef11"));
        assert_eq!(tested_commit(&r, k).as_deref(), Some("abcdef11"));
    }
}
