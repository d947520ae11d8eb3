//! GitHub's side of triage records: the issues and pull requests that name a failure
//! pattern (its stable id, a test it fails, its failure text, a job it breaks), found
//! through the search API, and what a linked reference is (issue or pull request,
//! open, merged with its merge time, commit and base branch, closed unmerged, 404).
//! Everything goes through [`GithubClient`], so answers are cached (the store is the
//! cache of the commands) and offline runs answer from the cache or say what they
//! could not read.

use crate::client::{GithubClient, GithubError};
use crate::state::{Answered, IssueRef, IssueStatus, PrStatus, RefState, RepoRef};
use citriage_model::time::parse_rfc3339;
use citriage_model::Evidence;
use serde::Serialize;
use std::collections::BTreeMap;

/// What a term names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TermKind {
    /// The pattern's stable id.
    StableId,
    /// A test the pattern fails.
    Test,
    /// The pattern's failure text (its most telling line).
    FailureText,
    /// A job the pattern breaks.
    Job,
}

impl TermKind {
    /// A mention through this term is strong enough to link without a person: a job
    /// name alone is not (an issue about a job may be about another failure of it).
    pub fn links(self) -> bool {
        self != TermKind::Job
    }
}

/// What to look for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Terms {
    pub stable_id: Option<String>,
    pub tests: Vec<String>,
    pub failure_text: Option<String>,
    pub jobs: Vec<String>,
}

/// The longest phrase searched for (GitHub refuses queries over 256 characters).
const MAX_PHRASE: usize = 120;
/// Tests and jobs searched for, at most.
const MAX_EACH: usize = 3;

/// A phrase as GitHub's search takes it quoted: no quotes or backslashes, spaces
/// collapsed, cut at a word boundary to [`MAX_PHRASE`]; `None` when too short to mean
/// anything.
pub fn phrase(text: &str) -> Option<String> {
    let cleaned: String = text.chars().map(|c| if c == '"' || c == '\\' || c.is_control() { ' ' } else { c }).collect();
    let mut out = String::new();
    for w in cleaned.split_whitespace() {
        if out.len() + w.len() + 1 > MAX_PHRASE {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    (out.chars().filter(|c| c.is_alphanumeric()).count() >= 6).then_some(out)
}

impl Terms {
    /// The searched phrases with what they name, without repeats, in a fixed order.
    pub fn phrases(&self) -> Vec<(TermKind, String)> {
        let mut out: Vec<(TermKind, String)> = Vec::new();
        let mut push = |k: TermKind, t: &str| {
            if let Some(p) = phrase(t) {
                if !out.iter().any(|(_, q)| *q == p) {
                    out.push((k, p));
                }
            }
        };
        if let Some(id) = &self.stable_id {
            push(TermKind::StableId, id);
        }
        for t in self.tests.iter().take(MAX_EACH) {
            push(TermKind::Test, t);
        }
        if let Some(t) = &self.failure_text {
            push(TermKind::FailureText, t);
        }
        for j in self.jobs.iter().take(MAX_EACH) {
            push(TermKind::Job, j);
        }
        out
    }
}

/// An issue or pull request that names the pattern.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mention {
    pub reference: IssueRef,
    pub is_pr: bool,
    /// `open` / `closed` as the search answered.
    pub state: String,
    pub title: String,
    pub url: String,
    /// The terms that found it, in [`Terms::phrases`] order.
    pub matched: Vec<(TermKind, String)>,
    /// The first query that found it through a term that links (else the first that
    /// found it), and when its answer was read (Unix seconds).
    pub query: String,
    pub read_at: Option<i64>,
}

impl Mention {
    /// Found through a term strong enough to link it ([`TermKind::links`]).
    pub fn links(&self) -> bool {
        self.matched.iter().any(|(k, _)| k.links())
    }
}

/// What a search for a pattern's mentions found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Mentions {
    /// By reference.
    pub found: Vec<Mention>,
    /// The queries that could not be answered (offline and not cached, an error), with
    /// why: what was not looked at.
    pub unanswered: Vec<(String, String)>,
    /// The queries answered, with when and how (downloaded, revalidated, from the cache).
    pub answered: Vec<AnsweredQuery>,
}

/// A search query that was answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnsweredQuery {
    pub query: String,
    /// When the answer was read (Unix seconds).
    pub read_at: Option<i64>,
    pub answered: Answered,
}

/// Searches the repositories for issues and pull requests that name the pattern: one
/// query per phrase (`"<phrase>" repo:o/r …`), at most `max` hits each.
pub fn search_mentions(client: &GithubClient, repos: &[RepoRef], terms: &Terms, max: usize) -> Mentions {
    search_many(client, repos, std::slice::from_ref(terms), max).pop().unwrap_or_default()
}

/// The query of a phrase over the repositories: `"<phrase>" repo:o/r …`.
fn query_of(phrase: &str, repos: &[RepoRef]) -> String {
    let scope: Vec<String> = repos.iter().map(|r| format!("repo:{r}")).collect();
    format!("\"{phrase}\" {}", scope.join(" ")).trim().to_string()
}

/// [`search_mentions`] for several patterns at once: a phrase several of them share (a
/// job they all break) is asked once. One answer per `terms`, in order.
pub fn search_many(client: &GithubClient, repos: &[RepoRef], terms: &[Terms], max: usize) -> Vec<Mentions> {
    let mut answers: BTreeMap<String, Result<crate::state::SearchResult, String>> = BTreeMap::new();
    let mut out = Vec::with_capacity(terms.len());
    for t in terms {
        let mut found: BTreeMap<IssueRef, Mention> = BTreeMap::new();
        let mut m = Mentions::default();
        for (kind, p) in t.phrases() {
            let query = query_of(&p, repos);
            let answer = answers.entry(query.clone()).or_insert_with(|| match client.search_issues(&query, max) {
                Ok(r) => Ok(r),
                Err(GithubError::NotCached { .. }) => Err("offline: no cached answer".into()),
                Err(e) => Err(e.to_string()),
            });
            let res = match answer {
                Ok(r) => r,
                Err(why) => {
                    m.unanswered.push((query, why.clone()));
                    continue;
                }
            };
            m.answered.push(AnsweredQuery {
                query: query.clone(),
                read_at: res.read.read_at,
                answered: res.read.answered,
            });
            for it in &res.items {
                if !repos.is_empty() && !repos.contains(&it.reference.repo) {
                    continue;
                }
                let e = found.entry(it.reference.clone()).or_insert_with(|| Mention {
                    reference: it.reference.clone(),
                    is_pr: it.is_pr,
                    state: it.state.clone(),
                    title: it.title.clone(),
                    url: it.url.clone(),
                    matched: Vec::new(),
                    query: query.clone(),
                    read_at: res.read.read_at,
                });
                if kind.links() && !e.links() {
                    e.query = query.clone();
                    e.read_at = res.read.read_at;
                }
                if !e.matched.iter().any(|(_, q)| *q == p) {
                    e.matched.push((kind, p.clone()));
                }
            }
        }
        m.found = found.into_values().collect();
        out.push(m);
    }
    out
}

/// What a linked reference is, as a triage record keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RefSummary {
    pub reference: IssueRef,
    /// `pr`, `issue`, `unknown`.
    pub kind: &'static str,
    /// `open`, `merged`, `closed-unmerged`, `closed`, `not-found`, `unknown`.
    pub state: &'static str,
    pub title: String,
    /// Unix seconds.
    pub merged_at: Option<i64>,
    pub merge_commit: Option<String>,
    pub base: Option<String>,
    /// When GitHub's answer was read.
    pub read_at: Option<i64>,
    /// Why the state is unknown, when it is.
    pub why: Option<String>,
    /// The answer as evidence (`None` when nothing was read).
    pub evidence: Option<Evidence>,
}

impl RefSummary {
    /// In words: `pull request o/r#5, merged 2026-11-09 12:45:49 UTC into master`.
    pub fn describe(&self) -> String {
        let what = match self.kind {
            "pr" => "pull request",
            "issue" => "issue",
            _ => "reference",
        };
        let state = match (self.state, self.merged_at) {
            ("merged", Some(t)) => format!(
                "merged {}{}",
                citriage_model::time::utc(t),
                self.base.as_deref().map(|b| format!(" into {b}")).unwrap_or_default()
            ),
            ("closed-unmerged", _) => "closed without merging".into(),
            ("not-found", _) => "does not exist (GitHub answered 404)".into(),
            ("unknown", _) => format!("state not read: {}", self.why.as_deref().unwrap_or("unknown")),
            (s, _) => s.to_string(),
        };
        format!("{what} {}, {state}", self.reference)
    }
}

/// Looks a reference up: what it is, and for a merged pull request its merge time,
/// merge commit and base branch (from the pulls endpoint, which the issues endpoint
/// does not give). Never fails: what could not be read is `unknown` with why.
pub fn summarize(client: &GithubClient, r: &IssueRef) -> RefSummary {
    let state = client.lookup(r);
    let evidence = state.evidence();
    let read_at = state.read().and_then(|i| i.read_at);
    let mut out = RefSummary {
        reference: r.clone(),
        kind: "unknown",
        state: "unknown",
        title: String::new(),
        merged_at: None,
        merge_commit: None,
        base: None,
        read_at,
        why: state.unknown_reason().map(str::to_string),
        evidence,
    };
    match state {
        RefState::Pr(p) => {
            out.kind = "pr";
            out.title = p.title.clone();
            out.state = match &p.status {
                PrStatus::Merged { at } => {
                    out.merged_at = parse_rfc3339(at);
                    out.merge_commit = p.merge_commit_sha.clone();
                    out.base = p.base_ref.clone();
                    if out.merge_commit.is_none() || out.base.is_none() {
                        if let Ok(full) = client.pull(r) {
                            out.merge_commit = out.merge_commit.or(full.merge_commit_sha);
                            out.base = out.base.or(full.base_ref);
                        }
                    }
                    if out.merged_at.is_none() {
                        out.why = Some(format!("merged at an unreadable time {at:?}"));
                        "unknown"
                    } else {
                        "merged"
                    }
                }
                PrStatus::Open { .. } => "open",
                PrStatus::ClosedUnmerged { .. } => "closed-unmerged",
                PrStatus::NotFound => "not-found",
                PrStatus::Unknown { .. } => "unknown",
            };
        }
        RefState::Issue(i) => {
            out.kind = "issue";
            out.title = i.title.clone();
            out.state = match i.status {
                IssueStatus::Open => "open",
                IssueStatus::Closed { .. } => "closed",
                IssueStatus::NotFound => "not-found",
                IssueStatus::Unknown { .. } => "unknown",
            };
        }
        RefState::NotFound { .. } => out.state = "not-found",
        RefState::Unknown { .. } => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_are_quotable_bounded_and_unrepeated() {
        assert_eq!(phrase("say \"hi\" \\ there\nnow").as_deref(), Some("say hi there now"));
        assert_eq!(phrase("a b"), None, "too short to mean anything");
        let long = "word ".repeat(60);
        assert!(phrase(&long).unwrap().len() <= MAX_PHRASE);
        let t = Terms {
            stable_id: Some("c31e0a9b1d2f".into()),
            tests: vec!["[sig-apps] Deployment should roll over".into(); 5],
            failure_text: Some("timed out waiting for the condition".into()),
            jobs: vec!["ci-kubernetes-e2e-gce".into()],
        };
        let kinds: Vec<TermKind> = t.phrases().into_iter().map(|(k, _)| k).collect();
        assert_eq!(kinds, [TermKind::StableId, TermKind::Test, TermKind::FailureText, TermKind::Job]);
        assert!(!TermKind::Job.links() && TermKind::Test.links());
    }
}
