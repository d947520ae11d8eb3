//! The tools' arguments: one type per tool, parsed from the call's JSON (unknown
//! fields refused) and the source of the tool's JSON schema, so the schema and the
//! parser cannot disagree.

use schemars::JsonSchema;
use serde::Deserialize;

/// A dashboard dataset.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DatasetArg {
    Failures,
    Flakes,
}

/// Arguments of `list_failing_jobs`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFailingJobs {
    /// The dashboard: `failures` (jobs failing for days; default) or `flakes`.
    pub dataset: Option<DatasetArg>,
    /// Only this category (as the triage report names them, e.g. `infra/boskos`; case-insensitive).
    pub category: Option<String>,
    /// Only jobs whose failures belong to patterns this owner owns (a SIG: `node` or `sig-node`).
    pub owner: Option<String>,
    /// Only jobs with a failed or errored build started within the last N days of the
    /// stored builds (1-365; jobs without stored builds are then left out).
    pub window_days: Option<u32>,
    /// Jobs per answer (1-1000, default 25).
    pub limit: Option<usize>,
    /// Go on from a previous answer's `next_cursor` (same arguments otherwise).
    pub cursor: Option<String>,
    /// Give each item in full instead of the compact default (figures, ids, one-line texts).
    #[serde(default)]
    pub detail: bool,
}

/// Arguments of `job_history`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobHistory {
    /// The job name (a dashboard's `pr:` prefix is accepted).
    pub job: String,
    /// Builds per answer, newest first (1-200, default 20).
    pub builds: Option<usize>,
    /// Go on from a previous answer's `next_cursor` (same arguments otherwise).
    pub cursor: Option<String>,
    /// Give each item in full instead of the compact default (figures, ids, one-line texts).
    #[serde(default)]
    pub detail: bool,
}

/// Arguments of `test_history`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestHistory {
    /// The test's name, as stored or as kettle names it.
    pub name: String,
    /// Runs listed per job with `detail`, newest first (1-200, default 20).
    pub runs: Option<usize>,
    /// Jobs per answer, most failed runs first (1-200, default 20).
    pub jobs: Option<usize>,
    /// Go on from a previous answer's `next_cursor` (same arguments otherwise).
    pub cursor: Option<String>,
    /// Give each item in full instead of the compact default (figures, ids, one-line texts).
    #[serde(default)]
    pub detail: bool,
}

/// Where a search looks.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WithinArg {
    All,
    Tests,
    Logs,
}

/// Arguments of `search_failures`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchFailures {
    /// A regular expression (Rust syntax, at most 500 bytes) over failure texts and build-log excerpts.
    pub q: String,
    /// Only jobs matching this regex.
    pub job: Option<String>,
    /// Leave out jobs matching this regex.
    pub exclude_job: Option<String>,
    /// Only builds started within this many days of the newest build.
    pub max_age_days: Option<u32>,
    /// Matches per answer (1-1000, default 15).
    pub max: Option<usize>,
    /// Context lines either side of a match (0-20, default 2).
    pub context: Option<usize>,
    /// Search failed tests' texts, build-log excerpts, or both (default).
    pub within: Option<WithinArg>,
    /// Go on from a previous answer's `next_cursor` (same arguments otherwise).
    pub cursor: Option<String>,
    /// Give each item in full instead of the compact default (figures, ids, one-line texts).
    #[serde(default)]
    pub detail: bool,
}

/// How patterns are ordered.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortArg {
    Total,
    Today,
    Growth,
    LastSeen,
    FirstSeen,
}

/// Arguments of `list_patterns`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListPatterns {
    /// The clustering profile: `default` or `k8s-triage` (default: `default` when stored).
    pub profile: Option<String>,
    /// Only patterns whose text matches this regex.
    pub include: Option<String>,
    /// Leave out patterns whose text matches this regex.
    pub exclude: Option<String>,
    /// Count only failures of jobs matching this regex.
    pub job: Option<String>,
    /// Count only failures of tests matching this regex.
    pub test: Option<String>,
    /// Only patterns of this owner (a SIG: `node` or `sig-node`).
    pub owner: Option<String>,
    /// `known`, `unknown` or a known-signature id.
    pub signature: Option<String>,
    /// Order (default `total`).
    pub sort: Option<SortArg>,
    /// Patterns per answer (1-100, default 12).
    pub limit: Option<usize>,
    /// Go on from a previous answer's `next_cursor` (same arguments otherwise).
    pub cursor: Option<String>,
    /// Give each item in full instead of the compact default (figures, ids, one-line texts).
    #[serde(default)]
    pub detail: bool,
}

/// Arguments of `get_pattern`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetPattern {
    /// The pattern's stable id.
    pub id: String,
    /// The clustering profile (default: `default` when stored).
    pub profile: Option<String>,
    /// Give everything instead of the compact default (figures, ids, one-line texts).
    #[serde(default)]
    pub detail: bool,
}

/// Arguments of `extract_failure`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtractFailure {
    /// The job name (a dashboard's `pr:` prefix is accepted).
    pub job: String,
    /// The build id.
    pub build_id: String,
    /// Failed tests per answer (1-500, default 6); the log excerpts come with the first page.
    pub limit: Option<usize>,
    /// Go on from a previous answer's `next_cursor` (same arguments otherwise).
    pub cursor: Option<String>,
    /// Give everything instead of the compact default (figures, ids, one-line texts).
    #[serde(default)]
    pub detail: bool,
}

/// Arguments of `analyze_payload`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnalyzePayload {
    /// The payload tag; without it, the stored payloads are listed.
    pub tag: Option<String>,
    /// Give everything instead of the compact default (figures, ids, one-line texts).
    #[serde(default)]
    pub detail: bool,
}

/// Arguments of `pr_state`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrStateArgs {
    /// Pull requests or issues: `org/repo#123` or their GitHub URLs (at most 50).
    pub refs: Vec<String>,
}

/// Arguments of `verify_report`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyReport {
    /// The report's Markdown (at most 1 MiB).
    pub text: String,
    /// A name for the report in the findings (default `report.md`).
    pub name: Option<String>,
}

/// Arguments of `list_records`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRecords {
    /// Only records in this state: new, triaged, fix-merged, fix-confirmed,
    /// failed-after-fix.
    #[serde(default)]
    pub state: Option<String>,
    /// Only open records (leave out confirmed fixes).
    #[serde(default)]
    pub open: bool,
    /// Records per answer (1-200, default 25).
    pub limit: Option<usize>,
    /// Go on from a previous answer's `next_cursor` (same arguments otherwise).
    pub cursor: Option<String>,
    /// Give each record in full (links, timeline, fix) instead of the compact default.
    #[serde(default)]
    pub detail: bool,
}

/// Arguments of `lookup_evidence`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LookupEvidence {
    /// Evidence ids (`ev-` and 12 hex digits), at most 200.
    pub ids: Vec<String>,
}

/// The action to draft.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ActionArg {
    Revert,
    Bisect,
    Bug,
}

/// Arguments of `draft_action` and `apply_action`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DraftAction {
    /// `revert` (a suspect at the revert band), `bisect` (suspects in the bisect band)
    /// or `bug` (a payload root cause or a failure pattern).
    pub action: ActionArg,
    /// The payload tag (revert, bisect, and a root cause's bug).
    pub payload: Option<String>,
    /// The suspect: `org/repo#123` (revert; bisect of one suspect).
    pub suspect: Option<String>,
    /// The root cause id, e.g. `RC1` (bug of a payload).
    pub root_cause: Option<String>,
    /// A failure pattern's stable id (bug of a pattern).
    pub pattern: Option<String>,
    /// The pattern's clustering profile (default: `default` when stored).
    pub profile: Option<String>,
    /// The repository to file a bug in, overriding the routing (`owner/name`).
    pub repo: Option<String>,
}

/// Arguments of `find_suspects`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindSuspects {
    /// A failure pattern's stable id, or a job name.
    pub target: String,
    /// The clustering profile of the pattern id (default: `default`).
    pub profile: Option<String>,
    /// Job windows per answer (1-200, default 6).
    pub limit: Option<usize>,
    /// Go on from a previous answer's `next_cursor` (same arguments otherwise).
    pub cursor: Option<String>,
    /// Give each job window with its notes and the failure's cited lines in full.
    #[serde(default)]
    pub detail: bool,
}

/// Arguments of `pr_risk`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrRiskArgs {
    /// The pull request: `org/repo#N` or its GitHub URL.
    pub pr: String,
    /// Days searched for the same failures and flake signals (default 14, at most 90).
    pub window_days: Option<i64>,
    /// The window's end: a date or Unix seconds (default: the newest stored build's day).
    pub as_of: Option<String>,
    /// Each failure's facts (flake signals, matches elsewhere, infra reasons, changed files named).
    pub detail: Option<bool>,
}
