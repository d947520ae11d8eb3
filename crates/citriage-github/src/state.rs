//! Typed GitHub state: repositories and `owner/repo#N` references, pull-request and
//! issue states as the runbook distinguishes them (MERGED vs CLOSED-unmerged, draft,
//! blocking labels, mergeability), timeline cross-references, search hits and commits,
//! plus the [`RefResolver`] trait every consumer of PR/issue state goes through.
//! Decoding from the REST API's JSON lives here too; it never panics on odd bodies.

use citriage_model::time::{date_of, utc};
use citriage_model::{Evidence, EvidenceKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// The evidence kind of a GitHub answer whose object kind is unknown (a 404); pull
/// requests and issues use their own kinds. The locator is `github:` + the API path.
pub const GITHUB_EVIDENCE_KIND: EvidenceKind = EvidenceKind::PullRequestState;

/// `owner/name` of a repository.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RepoRef {
    pub owner: String,
    pub name: String,
}

impl RepoRef {
    /// Builds a repository reference.
    pub fn new(owner: impl Into<String>, name: impl Into<String>) -> RepoRef {
        RepoRef { owner: owner.into(), name: name.into() }
    }

    /// Parses `owner/name`; `None` unless both parts are non-empty and well formed.
    pub fn parse(s: &str) -> Option<RepoRef> {
        let (o, n) = s.trim().split_once('/')?;
        if valid_part(o) && valid_part(n) {
            Some(RepoRef::new(o, n))
        } else {
            None
        }
    }
}

pub(crate) fn valid_part(s: &str) -> bool {
    !s.is_empty() && s.len() <= 100 && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

impl fmt::Display for RepoRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// `owner/repo#N`: a pull request or an issue (GitHub numbers them in one sequence).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct IssueRef {
    pub repo: RepoRef,
    pub number: u64,
}

impl IssueRef {
    /// Builds a reference.
    pub fn new(repo: RepoRef, number: u64) -> IssueRef {
        IssueRef { repo, number }
    }

    /// Parses `owner/repo#N` or a `https://github.com/owner/repo/(pull|issues)/N` URL.
    pub fn parse(s: &str) -> Option<IssueRef> {
        let s = s.trim();
        if let Some(rest) = s.strip_prefix("https://github.com/").or_else(|| s.strip_prefix("http://github.com/")) {
            let parts: Vec<&str> = rest.split('/').collect();
            if parts.len() >= 4 && (parts[2] == "pull" || parts[2] == "issues") {
                let repo = RepoRef::parse(&format!("{}/{}", parts[0], parts[1]))?;
                let number = parse_number(parts[3].split(['#', '?']).next().unwrap_or(""))?;
                return Some(IssueRef::new(repo, number));
            }
            return None;
        }
        let (repo, n) = s.split_once('#')?;
        Some(IssueRef::new(RepoRef::parse(repo)?, parse_number(n)?))
    }

    /// The `https://github.com/...` page of the reference (GitHub redirects `issues/N`
    /// to `pull/N` for pull requests).
    pub fn html_url(&self) -> String {
        format!("https://github.com/{}/{}/issues/{}", self.repo.owner, self.repo.name, self.number)
    }
}

pub(crate) fn parse_number(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 9 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().filter(|n| *n > 0)
}

impl fmt::Display for IssueRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.repo, self.number)
    }
}

/// How an answer was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answered {
    /// Downloaded now (HTTP 200 or 404).
    Live,
    /// Revalidated now: the server answered 304 to the cached ETag.
    Revalidated,
    /// Served from the cache without contacting GitHub (offline mode).
    Cache,
    /// Not answered (offline and not cached, or an error).
    None,
}

/// When and how a state was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadInfo {
    /// Unix seconds of the response the answer rests on (`None` when not read).
    pub read_at: Option<i64>,
    pub answered: Answered,
    /// The API URL read.
    pub api_url: String,
    /// SHA-256 of the response body the answer was decoded from (empty when not read).
    pub body_sha256: String,
}

impl ReadInfo {
    /// A read that did not happen.
    pub fn none(api_url: impl Into<String>) -> ReadInfo {
        ReadInfo { read_at: None, answered: Answered::None, api_url: api_url.into(), body_sha256: String::new() }
    }

    /// Age in seconds at `now`, when read.
    pub fn age(&self, now: i64) -> Option<i64> {
        self.read_at.map(|t| (now - t).max(0))
    }

    /// `2026-05-10 18:09:46 UTC (live)` / `(cached, 3h 5m old)`.
    pub fn describe(&self, now: i64) -> String {
        match self.read_at {
            None => "not read".to_string(),
            Some(t) => {
                let how = match self.answered {
                    Answered::Live => "live".to_string(),
                    Answered::Revalidated => "revalidated, not modified".to_string(),
                    Answered::Cache => format!("cached, {} old", citriage_model::time::age(now - t)),
                    Answered::None => "not read".to_string(),
                };
                format!("{} ({how})", utc(t))
            }
        }
    }
}

/// A pull request's state as the runbook's Phase 5 distinguishes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum PrStatus {
    /// Merged, with the merge time as GitHub writes it (`2026-05-10T18:09:46Z`).
    Merged { at: String },
    /// Open. `mergeable` is `None` while GitHub has not computed it (or it was not read).
    Open { draft: bool, mergeable: Option<bool>, blocking_labels: Vec<String> },
    /// Closed without merging: a fix attempt that did not land.
    ClosedUnmerged { closed_at: Option<String> },
    /// GitHub answered 404.
    NotFound,
    /// Not checked; `why` says why (offline and not cached, an error, ...).
    Unknown { why: String },
}

/// A pull request as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrState {
    pub reference: IssueRef,
    pub status: PrStatus,
    pub title: String,
    /// Label names, sorted.
    pub labels: Vec<String>,
    pub url: String,
    pub head_sha: Option<String>,
    pub merge_commit_sha: Option<String>,
    /// The branch it targets (`base.ref`; only the pulls endpoint says).
    #[serde(default)]
    pub base_ref: Option<String>,
    /// When the pull request was opened and last updated, as GitHub writes them.
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
    pub read: ReadInfo,
}

impl PrState {
    /// A PR whose state is unknown.
    pub fn unknown(reference: IssueRef, why: impl Into<String>, api_url: impl Into<String>) -> PrState {
        PrState {
            url: reference.html_url(),
            reference,
            status: PrStatus::Unknown { why: why.into() },
            title: String::new(),
            labels: Vec::new(),
            head_sha: None,
            merge_commit_sha: None,
            base_ref: None,
            created_at: None,
            updated_at: None,
            read: ReadInfo::none(api_url),
        }
    }

    /// Short state text: `MERGED 2026-05-10T18:09:46Z`, `OPEN (draft)`, `CLOSED unmerged`.
    pub fn state_text(&self) -> String {
        match &self.status {
            PrStatus::Merged { at } => format!("MERGED {at}"),
            PrStatus::Open { draft: true, .. } => "OPEN (draft)".into(),
            PrStatus::Open { .. } => "OPEN".into(),
            PrStatus::ClosedUnmerged { .. } => "CLOSED unmerged".into(),
            PrStatus::NotFound => "not found".into(),
            PrStatus::Unknown { why } => format!("not checked: {why}"),
        }
    }

    /// The evidence item behind this state (`None` when nothing was read).
    pub fn evidence(&self) -> Option<Evidence> {
        let t = self.read.read_at?;
        let excerpt =
            format!("{} {}: {} labels=[{}]", self.reference, self.state_text(), self.title, self.labels.join(","));
        Some(Evidence::new(
            EvidenceKind::PullRequestState,
            github_locator(&self.read.api_url),
            excerpt,
            &self.read.body_sha256,
            date_of(t),
        ))
    }
}

/// An issue's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum IssueStatus {
    Open,
    /// Closed; `reason` is GitHub's `state_reason` (`completed`, `not_planned`, ...).
    Closed {
        reason: Option<String>,
        at: Option<String>,
    },
    NotFound,
    Unknown {
        why: String,
    },
}

/// An issue (or a pull request read through the issues endpoint) as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueState {
    pub reference: IssueRef,
    /// True when the number is a pull request (`pull_request` key present).
    pub is_pr: bool,
    pub status: IssueStatus,
    pub title: String,
    pub labels: Vec<String>,
    pub url: String,
    /// For pull requests: `pull_request.merged_at` when the API returned it
    /// (`Some(None)` = present and null, i.e. not merged).
    pub pr_merged_at: Option<Option<String>>,
    /// For pull requests: the `draft` flag when present.
    pub pr_draft: Option<bool>,
    /// When the issue was opened and last updated, as GitHub writes them.
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
    pub read: ReadInfo,
}

impl IssueState {
    /// Short state text: `OPEN`, `CLOSED (completed)`.
    pub fn state_text(&self) -> String {
        match &self.status {
            IssueStatus::Open => "OPEN".into(),
            IssueStatus::Closed { reason: Some(r), .. } => format!("CLOSED ({r})"),
            IssueStatus::Closed { reason: None, .. } => "CLOSED".into(),
            IssueStatus::NotFound => "not found".into(),
            IssueStatus::Unknown { why } => format!("not checked: {why}"),
        }
    }

    /// The evidence item behind this state (`None` when nothing was read).
    pub fn evidence(&self) -> Option<Evidence> {
        let t = self.read.read_at?;
        let excerpt = format!(
            "{} issue {}: {} labels=[{}]",
            self.reference,
            self.state_text(),
            self.title,
            self.labels.join(",")
        );
        Some(Evidence::new(
            EvidenceKind::IssueState,
            github_locator(&self.read.api_url),
            excerpt,
            &self.read.body_sha256,
            date_of(t),
        ))
    }
}

/// What a reference turned out to be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RefState {
    Pr(PrState),
    Issue(IssueState),
    /// Neither a pull request nor an issue exists with this number (HTTP 404).
    NotFound {
        reference: IssueRef,
        read: ReadInfo,
    },
    /// Not checked: offline and not cached, ambiguous, or an error; `why` says which.
    Unknown {
        reference: IssueRef,
        why: String,
    },
}

impl RefState {
    /// The reference this state answers.
    pub fn reference(&self) -> &IssueRef {
        match self {
            RefState::Pr(p) => &p.reference,
            RefState::Issue(i) => &i.reference,
            RefState::NotFound { reference, .. } | RefState::Unknown { reference, .. } => reference,
        }
    }

    /// False when the state could not be established.
    pub fn is_checked(&self) -> bool {
        match self {
            RefState::Pr(p) => !matches!(p.status, PrStatus::Unknown { .. }),
            RefState::Issue(i) => !matches!(i.status, IssueStatus::Unknown { .. }),
            RefState::NotFound { .. } => true,
            RefState::Unknown { .. } => false,
        }
    }

    /// Why the state is unknown, when it is.
    pub fn unknown_reason(&self) -> Option<&str> {
        match self {
            RefState::Pr(PrState { status: PrStatus::Unknown { why }, .. })
            | RefState::Issue(IssueState { status: IssueStatus::Unknown { why }, .. })
            | RefState::Unknown { why, .. } => Some(why),
            _ => None,
        }
    }

    /// Short state text (`PR MERGED 2026-...`, `issue OPEN`, `not found`).
    pub fn state_text(&self) -> String {
        match self {
            RefState::Pr(p) => format!("PR {}", p.state_text()),
            RefState::Issue(i) => format!("issue {}", i.state_text()),
            RefState::NotFound { .. } => "does not exist (404)".into(),
            RefState::Unknown { why, .. } => format!("not checked: {why}"),
        }
    }

    /// The evidence behind the state, when it was read.
    pub fn evidence(&self) -> Option<Evidence> {
        match self {
            RefState::Pr(p) => p.evidence(),
            RefState::Issue(i) => i.evidence(),
            RefState::NotFound { reference, read } => {
                let t = read.read_at?;
                Some(Evidence::new(
                    GITHUB_EVIDENCE_KIND,
                    github_locator(&read.api_url),
                    format!("{reference}: 404 Not Found"),
                    &read.body_sha256,
                    date_of(t),
                ))
            }
            RefState::Unknown { .. } => None,
        }
    }

    /// When the answer was read.
    pub fn read(&self) -> Option<&ReadInfo> {
        match self {
            RefState::Pr(p) => Some(&p.read),
            RefState::Issue(i) => Some(&i.read),
            RefState::NotFound { read, .. } => Some(read),
            RefState::Unknown { .. } => None,
        }
    }
}

/// `github:` + the API path (no host, no query secrets: the token is never in a URL).
pub(crate) fn github_locator(api_url: &str) -> String {
    let path = api_url.find("/repos/").or_else(|| api_url.find("/search/")).map(|i| &api_url[i..]).unwrap_or(api_url);
    format!("github:{path}")
}

/// One event of an issue's or pull request's timeline, as far as state history goes:
/// `labeled` / `unlabeled` (with the label), `closed`, `reopened`, `merged` (with the
/// merge commit), `convert_to_draft`, `ready_for_review`, `cross-referenced` (with the
/// referencing issue or PR), `committed` (with the commit). Other events keep their
/// name and time only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineEvent {
    pub event: String,
    /// When it happened, as GitHub writes it (`2026-05-10T18:09:46Z`); for `committed`
    /// events the author date.
    pub at: Option<String>,
    pub label: Option<String>,
    /// `merged` / `closed` / `committed`: the commit.
    pub commit: Option<String>,
    pub cross_ref: Option<CrossRef>,
}

/// Labels, state and draft flag of an issue or pull request at one instant, replayed
/// from its timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayedState {
    pub labels: Vec<String>,
    /// `open`, `closed` or `merged`.
    pub state: String,
    pub draft: bool,
}

/// Replays a timeline up to `until` (Unix seconds, inclusive), starting from the
/// labels and draft flag the object was created with (`initial_*`, usually empty and
/// false: a label present from creation is reported by GitHub as a `labeled` event at
/// creation). Events without a time are skipped.
pub fn replay_timeline(events: &[TimelineEvent], until: i64, initial_draft: bool) -> ReplayedState {
    let mut labels: Vec<String> = Vec::new();
    let mut state = "open".to_string();
    let mut draft = initial_draft;
    let mut timed: Vec<(i64, usize, &TimelineEvent)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.at.as_deref().and_then(citriage_model::time::parse_rfc3339).map(|t| (t, i, e)))
        .collect();
    timed.sort_by_key(|(t, i, _)| (*t, *i));
    for (t, _, e) in timed {
        if t > until {
            break;
        }
        match e.event.as_str() {
            "labeled" => {
                if let Some(l) = &e.label {
                    if !labels.iter().any(|x| x.eq_ignore_ascii_case(l)) {
                        labels.push(l.clone());
                    }
                }
            }
            "unlabeled" => {
                if let Some(l) = &e.label {
                    labels.retain(|x| !x.eq_ignore_ascii_case(l));
                }
            }
            "closed" if state != "merged" => state = "closed".into(),
            "reopened" => state = "open".into(),
            "merged" => state = "merged".into(),
            "convert_to_draft" => draft = true,
            "ready_for_review" => draft = false,
            _ => {}
        }
    }
    labels.sort();
    ReplayedState { labels, state, draft }
}

/// What [`RefResolver::timeline_events`] answers: `None` when the resolver cannot read
/// timelines, `Some(Err(why))` when it tried and could not, else the events and the
/// evidence of the read.
pub type TimelineAnswer = Option<Result<(Vec<TimelineEvent>, Option<Evidence>), String>>;

/// Anything that can answer the state of a PR/issue reference: the live client, a
/// cache-only client, or a fixed table in tests.
pub trait RefResolver {
    /// The state of one reference. Never fails: problems become [`RefState::Unknown`].
    fn resolve(&self, r: &IssueRef) -> RefState;

    /// Pull requests cross-referenced from an issue's timeline, each with its state.
    /// `None` when the resolver cannot walk timelines.
    fn cross_referenced_prs(&self, _issue: &IssueRef) -> Option<Result<Vec<RefState>, String>> {
        None
    }

    /// The timeline of an issue or pull request (label, state and draft changes), with
    /// the evidence of the read. `None` when the resolver cannot read timelines;
    /// `Some(Err(why))` when it tried and could not (offline and not cached, ...).
    fn timeline_events(&self, _r: &IssueRef) -> TimelineAnswer {
        None
    }

    /// A commit of a repository: `Some(Ok(Some(..)))` found, `Some(Ok(None))` GitHub says
    /// there is no such commit, `Some(Err(why))` not checked, `None` when the resolver
    /// cannot look commits up.
    fn commit_info(&self, _repo: &RepoRef, _sha: &str) -> Option<Result<Option<CommitInfo>, String>> {
        None
    }
}

/// A fixed table of answers; anything missing is `Unknown` with the given reason.
#[derive(Debug, Clone, Default)]
pub struct StaticResolver {
    pub answers: std::collections::BTreeMap<IssueRef, RefState>,
    pub timelines: std::collections::BTreeMap<IssueRef, Vec<IssueRef>>,
    /// Timeline events by reference (answered by [`RefResolver::timeline_events`]).
    pub events: std::collections::BTreeMap<IssueRef, Vec<TimelineEvent>>,
    /// Commits by repository and full SHA; a SHA prefix of 7+ characters finds them.
    pub commits: std::collections::BTreeMap<RepoRef, Vec<CommitInfo>>,
    /// Repositories whose commits the table knows completely: an unknown SHA there is
    /// "no such commit"; elsewhere it is not checked.
    pub commit_repos: std::collections::BTreeSet<RepoRef>,
    /// Reason given for references not in the table.
    pub missing_reason: String,
}

impl StaticResolver {
    /// An empty table answering `Unknown { why: missing_reason }`.
    pub fn new(missing_reason: impl Into<String>) -> StaticResolver {
        StaticResolver { missing_reason: missing_reason.into(), ..Default::default() }
    }

    /// Adds an answer.
    pub fn with(mut self, state: RefState) -> StaticResolver {
        self.answers.insert(state.reference().clone(), state);
        self
    }
}

impl RefResolver for StaticResolver {
    fn resolve(&self, r: &IssueRef) -> RefState {
        self.answers
            .get(r)
            .cloned()
            .unwrap_or_else(|| RefState::Unknown { reference: r.clone(), why: self.missing_reason.clone() })
    }

    fn cross_referenced_prs(&self, issue: &IssueRef) -> Option<Result<Vec<RefState>, String>> {
        self.timelines.get(issue).map(|prs| Ok(prs.iter().map(|p| self.resolve(p)).collect()))
    }

    fn timeline_events(&self, r: &IssueRef) -> TimelineAnswer {
        Some(self.events.get(r).map(|e| (e.clone(), None)).ok_or_else(|| self.missing_reason.clone()))
    }

    fn commit_info(&self, repo: &RepoRef, sha: &str) -> Option<Result<Option<CommitInfo>, String>> {
        let sha = sha.to_ascii_lowercase();
        let hit = self.commits.get(repo).and_then(|cs| cs.iter().find(|c| c.sha.starts_with(&sha)).cloned());
        Some(match hit {
            Some(c) => Ok(Some(c)),
            None if self.commit_repos.contains(repo) => Ok(None),
            None => Err(self.missing_reason.clone()),
        })
    }
}

/// Which labels block a pull request from merging, and which labels it needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockingPolicy {
    /// Label prefixes that block (`do-not-merge/`).
    pub blocking_prefixes: Vec<String>,
    /// Exact labels that block.
    pub blocking_labels: Vec<String>,
    /// Labels a PR needs before it can merge (reported as `missing lgtm`).
    pub required_labels: Vec<String>,
}

impl Default for BlockingPolicy {
    /// Prow/Tide conventions of the Kubernetes organisations.
    fn default() -> Self {
        BlockingPolicy {
            blocking_prefixes: vec!["do-not-merge".into()],
            blocking_labels: vec![
                "needs-rebase".into(),
                "needs-ok-to-test".into(),
                "lifecycle/rotten".into(),
                "lifecycle/stale".into(),
                "lifecycle/frozen".into(),
                "cncf-cla: no".into(),
                "cherry-pick-not-approved".into(),
            ],
            required_labels: vec!["lgtm".into(), "approved".into()],
        }
    }
}

impl BlockingPolicy {
    /// A policy with no requirements (for repositories that do not use Prow labels).
    pub fn none() -> BlockingPolicy {
        BlockingPolicy { blocking_prefixes: Vec::new(), blocking_labels: Vec::new(), required_labels: Vec::new() }
    }

    /// What blocks an open PR with these labels: blocking labels, `missing <label>`,
    /// `draft`, `merge conflict`. Sorted, deduplicated.
    pub fn blockers(&self, labels: &[String], draft: bool, mergeable: Option<bool>) -> Vec<String> {
        let mut out: Vec<String> = labels
            .iter()
            .filter(|l| {
                self.blocking_labels.iter().any(|b| b.eq_ignore_ascii_case(l))
                    || self
                        .blocking_prefixes
                        .iter()
                        .any(|p| l.to_ascii_lowercase().starts_with(&p.to_ascii_lowercase()))
            })
            .cloned()
            .collect();
        for r in &self.required_labels {
            if !labels.iter().any(|l| l.eq_ignore_ascii_case(r)) {
                out.push(format!("missing {r}"));
            }
        }
        if draft {
            out.push("draft".into());
        }
        if mergeable == Some(false) {
            out.push("merge conflict".into());
        }
        out.sort();
        out.dedup();
        out
    }
}

/// One cross-reference from an issue's timeline.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CrossRef {
    pub reference: IssueRef,
    pub is_pr: bool,
    /// `open` / `closed` as the timeline reports it (merge state needs a PR lookup).
    pub state: String,
    pub title: String,
    pub url: String,
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchItem {
    pub reference: IssueRef,
    pub is_pr: bool,
    pub state: String,
    pub title: String,
    pub labels: Vec<String>,
    pub url: String,
    pub updated_at: Option<String>,
}

/// A search answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchResult {
    pub query: String,
    pub total_count: u64,
    pub incomplete_results: bool,
    pub items: Vec<SearchItem>,
    pub read: ReadInfo,
}

/// A commit as the commits API returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitInfo {
    pub repo: RepoRef,
    pub sha: String,
    pub author: String,
    /// Author date as GitHub writes it.
    pub date: String,
    /// First line of the message.
    pub subject: String,
    pub url: String,
}

// ---- decoding -------------------------------------------------------------------------

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

fn label_names(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v
        .get("labels")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|l| l.get("name").and_then(Value::as_str).or_else(|| l.as_str()).map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out.dedup();
    out
}

/// Decodes `GET /repos/{o}/{r}/pulls/{n}`.
pub(crate) fn decode_pull(r: &IssueRef, v: &Value, read: ReadInfo, policy: &BlockingPolicy) -> PrState {
    let labels = label_names(v);
    let state = s(v, "state").unwrap_or_default();
    let merged_at = s(v, "merged_at");
    let merged = v.get("merged").and_then(Value::as_bool).unwrap_or(false) || merged_at.is_some();
    let draft = v.get("draft").and_then(Value::as_bool).unwrap_or(false);
    let status = if merged {
        PrStatus::Merged { at: merged_at.unwrap_or_else(|| "(merge time not given)".into()) }
    } else if state == "open" {
        let mergeable = v.get("mergeable").and_then(Value::as_bool);
        PrStatus::Open { draft, mergeable, blocking_labels: policy.blockers(&labels, draft, mergeable) }
    } else if state == "closed" {
        PrStatus::ClosedUnmerged { closed_at: s(v, "closed_at") }
    } else {
        PrStatus::Unknown { why: format!("unexpected state {state:?} in the API answer") }
    };
    PrState {
        reference: r.clone(),
        status,
        title: s(v, "title").unwrap_or_default(),
        labels,
        url: s(v, "html_url").unwrap_or_else(|| r.html_url()),
        head_sha: v.get("head").and_then(|h| s(h, "sha")),
        merge_commit_sha: s(v, "merge_commit_sha"),
        base_ref: v.get("base").and_then(|b| s(b, "ref")),
        created_at: s(v, "created_at"),
        updated_at: s(v, "updated_at"),
        read,
    }
}

/// Decodes `GET /repos/{o}/{r}/issues/{n}`.
pub(crate) fn decode_issue(r: &IssueRef, v: &Value, read: ReadInfo) -> IssueState {
    let pr = v.get("pull_request").filter(|p| !p.is_null());
    let state = s(v, "state").unwrap_or_default();
    let status = match state.as_str() {
        "open" => IssueStatus::Open,
        "closed" => IssueStatus::Closed { reason: s(v, "state_reason"), at: s(v, "closed_at") },
        other => IssueStatus::Unknown { why: format!("unexpected state {other:?} in the API answer") },
    };
    IssueState {
        reference: r.clone(),
        is_pr: pr.is_some(),
        status,
        title: s(v, "title").unwrap_or_default(),
        labels: label_names(v),
        url: s(v, "html_url").unwrap_or_else(|| r.html_url()),
        pr_merged_at: pr.and_then(|p| p.get("merged_at")).map(|m| m.as_str().map(str::to_string)),
        pr_draft: if pr.is_some() { v.get("draft").and_then(Value::as_bool) } else { None },
        created_at: s(v, "created_at"),
        updated_at: s(v, "updated_at"),
        read,
    }
}

/// A pull request's state from the issues endpoint alone (no mergeability).
pub(crate) fn pr_from_issue(i: &IssueState, policy: &BlockingPolicy) -> Option<PrState> {
    let merged_at = i.pr_merged_at.clone()?;
    let draft = i.pr_draft.unwrap_or(false);
    let status = match (&i.status, merged_at) {
        (_, Some(at)) => PrStatus::Merged { at },
        (IssueStatus::Open, None) => {
            PrStatus::Open { draft, mergeable: None, blocking_labels: policy.blockers(&i.labels, draft, None) }
        }
        (IssueStatus::Closed { at, .. }, None) => PrStatus::ClosedUnmerged { closed_at: at.clone() },
        _ => return None,
    };
    Some(PrState {
        reference: i.reference.clone(),
        status,
        title: i.title.clone(),
        labels: i.labels.clone(),
        url: i.url.clone(),
        head_sha: None,
        merge_commit_sha: None,
        base_ref: None,
        created_at: i.created_at.clone(),
        updated_at: i.updated_at.clone(),
        read: i.read.clone(),
    })
}

/// The repository of an issue object (`repository_url` or `repository.full_name`).
fn repo_of(issue: &Value) -> Option<RepoRef> {
    if let Some(full) = issue.get("repository").and_then(|r| r.get("full_name")).and_then(Value::as_str) {
        return RepoRef::parse(full);
    }
    let url = issue.get("repository_url").and_then(Value::as_str)?;
    let mut parts = url.rsplit('/');
    let name = parts.next()?;
    let owner = parts.next()?;
    RepoRef::parse(&format!("{owner}/{name}"))
}

/// Cross-references in timeline events, deduplicated and sorted.
pub(crate) fn decode_timeline(events: &[Value]) -> Vec<CrossRef> {
    let mut out: Vec<CrossRef> = Vec::new();
    for ev in events {
        if ev.get("event").and_then(Value::as_str) != Some("cross-referenced") {
            continue;
        }
        let Some(src) = ev.get("source").and_then(|s| s.get("issue")) else { continue };
        let Some(repo) = repo_of(src) else { continue };
        let Some(number) = src.get("number").and_then(Value::as_u64) else { continue };
        out.push(CrossRef {
            reference: IssueRef::new(repo, number),
            is_pr: src.get("pull_request").is_some_and(|p| !p.is_null()),
            state: s(src, "state").unwrap_or_default(),
            title: s(src, "title").unwrap_or_default(),
            url: s(src, "html_url").unwrap_or_default(),
        });
    }
    out.sort();
    out.dedup_by(|a, b| a.reference == b.reference);
    out
}

/// Timeline events, in the order GitHub lists them.
pub(crate) fn decode_events(events: &[Value]) -> Vec<TimelineEvent> {
    events
        .iter()
        .filter_map(|ev| {
            let event = s(ev, "event")?;
            let at = s(ev, "created_at").or_else(|| ev.get("author").and_then(|a| s(a, "date")));
            let label = ev.get("label").and_then(|l| s(l, "name"));
            let commit = s(ev, "commit_id").or_else(|| s(ev, "sha"));
            let cross_ref = if event == "cross-referenced" {
                let src = ev.get("source").and_then(|s| s.get("issue"));
                src.and_then(|src| {
                    let repo = repo_of(src)?;
                    let number = src.get("number").and_then(Value::as_u64)?;
                    Some(CrossRef {
                        reference: IssueRef::new(repo, number),
                        is_pr: src.get("pull_request").is_some_and(|p| !p.is_null()),
                        state: s(src, "state").unwrap_or_default(),
                        title: s(src, "title").unwrap_or_default(),
                        url: s(src, "html_url").unwrap_or_default(),
                    })
                })
            } else {
                None
            };
            Some(TimelineEvent { event, at, label, commit, cross_ref })
        })
        .collect()
}

/// Search items.
pub(crate) fn decode_search_items(items: &[Value]) -> Vec<SearchItem> {
    items
        .iter()
        .filter_map(|it| {
            let repo = repo_of(it)?;
            let number = it.get("number").and_then(Value::as_u64)?;
            Some(SearchItem {
                reference: IssueRef::new(repo, number),
                is_pr: it.get("pull_request").is_some_and(|p| !p.is_null()),
                state: s(it, "state").unwrap_or_default(),
                title: s(it, "title").unwrap_or_default(),
                labels: label_names(it),
                url: s(it, "html_url").unwrap_or_default(),
                updated_at: s(it, "updated_at"),
            })
        })
        .collect()
}

/// One commit object.
pub(crate) fn decode_commit(repo: &RepoRef, v: &Value) -> Option<CommitInfo> {
    let sha = s(v, "sha")?;
    let c = v.get("commit");
    let author = c.and_then(|c| c.get("author"));
    let message = c.and_then(|c| s(c, "message")).unwrap_or_default();
    Some(CommitInfo {
        repo: repo.clone(),
        url: s(v, "html_url").unwrap_or_else(|| format!("https://github.com/{repo}/commit/{sha}")),
        sha,
        author: author.and_then(|a| s(a, "name")).unwrap_or_default(),
        date: author.and_then(|a| s(a, "date")).unwrap_or_default(),
        subject: message.lines().next().unwrap_or("").to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_refs_and_urls() {
        let r = IssueRef::parse("kubernetes/kops#18238").unwrap();
        assert_eq!(r.to_string(), "kubernetes/kops#18238");
        assert_eq!(IssueRef::parse("https://github.com/etcd-io/etcd/pull/21508/files").unwrap().number, 21508);
        assert_eq!(IssueRef::parse("https://github.com/a/b/issues/7#issuecomment-1").unwrap().number, 7);
        assert!(IssueRef::parse("a/b#0").is_none());
        assert!(IssueRef::parse("a/b#x").is_none());
        assert!(IssueRef::parse("/b#1").is_none());
        assert!(IssueRef::parse("https://github.com/a/b/commit/abc").is_none());
    }

    #[test]
    fn blockers_follow_policy() {
        let p = BlockingPolicy::default();
        let labels = vec!["approved".to_string(), "do-not-merge/hold".to_string(), "lgtm".to_string()];
        assert_eq!(p.blockers(&labels, false, Some(true)), vec!["do-not-merge/hold"]);
        let labels = vec!["needs-rebase".to_string()];
        assert_eq!(
            p.blockers(&labels, true, Some(false)),
            vec!["draft", "merge conflict", "missing approved", "missing lgtm", "needs-rebase"]
        );
        assert!(BlockingPolicy::none().blockers(&[], false, None).is_empty());
    }

    #[test]
    fn decodes_pull_states() {
        let r = IssueRef::parse("o/r#1").unwrap();
        let read = ReadInfo::none("u");
        let p = BlockingPolicy::default();
        let merged = serde_json::json!({"state":"closed","merged":true,"merged_at":"2026-05-10T18:09:46Z","title":"t","labels":[]});
        assert_eq!(
            decode_pull(&r, &merged, read.clone(), &p).status,
            PrStatus::Merged { at: "2026-05-10T18:09:46Z".into() }
        );
        let closed =
            serde_json::json!({"state":"closed","merged":false,"merged_at":null,"closed_at":"2026-01-08T00:00:00Z"});
        assert!(matches!(decode_pull(&r, &closed, read.clone(), &p).status, PrStatus::ClosedUnmerged { .. }));
        let open = serde_json::json!({"state":"open","draft":true,"mergeable":null,"labels":[{"name":"lgtm"},{"name":"approved"}]});
        assert_eq!(
            decode_pull(&r, &open, read.clone(), &p).status,
            PrStatus::Open { draft: true, mergeable: None, blocking_labels: vec!["draft".into()] }
        );
        let odd = serde_json::json!([1, 2]);
        assert!(matches!(decode_pull(&r, &odd, read, &p).status, PrStatus::Unknown { .. }));
    }
}
