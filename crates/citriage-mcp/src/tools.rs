//! The tools: their names, descriptions, JSON schemas (generated from the argument
//! types below, so the schema and the parser cannot disagree) and the dispatch.
//! Unknown arguments are refused. Every answer is `{"result": …, "evidence": […]}`:
//! the figures, and the evidence items they rest on (id, kind, locator, excerpt), all
//! recorded in the store's ledger before the answer leaves.

use crate::answers;
use crate::{Inner, ToolError};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;

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
    /// Most jobs returned (1-1000, default 100).
    pub limit: Option<usize>,
}

/// Arguments of `job_history`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobHistory {
    /// The job name (a dashboard's `pr:` prefix is accepted).
    pub job: String,
    /// Builds listed, newest first (1-200, default 20).
    pub builds: Option<usize>,
}

/// Arguments of `test_history`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestHistory {
    /// The test's name, as stored or as kettle names it.
    pub name: String,
    /// Runs listed per job, newest first (1-200, default 20).
    pub runs: Option<usize>,
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
    /// Most matches returned (1-1000, default 50).
    pub max: Option<usize>,
    /// Context lines either side of a match (0-20, default 2).
    pub context: Option<usize>,
    /// Search failed tests' texts, build-log excerpts, or both (default).
    pub within: Option<WithinArg>,
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
    /// Most patterns returned (1-100, default 20).
    pub limit: Option<usize>,
}

/// Arguments of `get_pattern`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetPattern {
    /// The pattern's stable id.
    pub id: String,
    /// The clustering profile (default: `default` when stored).
    pub profile: Option<String>,
}

/// Arguments of `extract_failure`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtractFailure {
    /// The job name (a dashboard's `pr:` prefix is accepted).
    pub job: String,
    /// The build id.
    pub build_id: String,
}

/// Arguments of `analyze_payload`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnalyzePayload {
    /// The payload tag; without it, the stored payloads are listed.
    pub tag: Option<String>,
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

/// The JSON schema of an argument type, as a tool's input schema.
fn schema<T: JsonSchema>() -> Arc<JsonObject> {
    let v = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    let mut o = match v {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    };
    o.remove("$schema");
    o.remove("title");
    o.entry("type".to_string()).or_insert(Value::String("object".into()));
    Arc::new(o)
}

fn tool<T: JsonSchema>(name: &'static str, title: &str, description: &'static str, read_only: bool) -> Tool {
    let ann = ToolAnnotations::with_title(title).read_only(read_only).destructive(false).open_world(!read_only);
    Tool::new(name, description, schema::<T>()).with_title(title).annotate(ann)
}

/// Every tool the server offers (`apply_action` only when writes are allowed), by name.
pub fn catalogue(writes: bool) -> Vec<Tool> {
    let mut v = vec![
        tool::<ListFailingJobs>(
            "list_failing_jobs",
            "List failing jobs",
            "The jobs of the newest failures (or flakes) dashboard snapshot with their category, severity and \
             figure, the owners of their failure patterns and their stored builds' pass rate; filters by category, \
             owner and a window of recent failed builds. Each job cites its snapshot entry.",
            true,
        ),
        tool::<JobHistory>(
            "job_history",
            "Job history",
            "One job's stored builds (newest first), daily pass rate, corrected figures and the tests whose flake \
             signals fired, as the dashboard's job page shows them. Each listed build cites its result.",
            true,
        ),
        tool::<TestHistory>(
            "test_history",
            "Test history",
            "One test across every job within the window: runs, pass and flip rates, flake signals, its recent runs \
             and the failure patterns holding its failures. Failed runs cite their builds.",
            true,
        ),
        tool::<SearchFailures>(
            "search_failures",
            "Search failures",
            "Regex search over stored failure texts and build-log excerpts (the dashboard's bounded search: linear-time \
             regex, size and time budgets). Each match cites the line it matched.",
            true,
        ),
        tool::<ListPatterns>(
            "list_patterns",
            "List failure patterns",
            "The failure patterns (clusters) of the latest clustering run with failures per day, owners, known \
             signatures, their sub-patterns and their drift (the last 7 days against the 7 before). Each pattern \
             cites its newest failure.",
            true,
        ),
        tool::<GetPattern>(
            "get_pattern",
            "Get a failure pattern",
            "One failure pattern in full: failures per day, every job and test, sub-patterns, drift and the latest \
             failures. Each latest failure is cited.",
            true,
        ),
        tool::<ExtractFailure>(
            "extract_failure",
            "Extract a build's failure lines",
            "The lines that explain one stored build's failure: its build-log excerpts (with their line numbers in the \
             log) and its failed tests' failure lines (line numbers within the failure text). Each is cited.",
            true,
        ),
        tool::<AnalyzePayload>(
            "analyze_payload",
            "Analyze a payload",
            "An OpenShift release payload's stored analysis (as `citriage payload` recorded it): verdict, failed \
             blocking jobs, root causes, scored suspects with their bands and actions, and the draft each suspect \
             supports. Cites the failing lines, onsets, matched diff lines and changelog entries.",
            true,
        ),
        tool::<PrStateArgs>(
            "pr_state",
            "Pull-request state",
            "The state of pull requests and issues (open, merged, closed, draft, labels) from the store's GitHub \
             cache, with the age of each answer. Each state is cited.",
            true,
        ),
        tool::<VerifyReport>(
            "verify_report",
            "Verify a report",
            "Checks a Markdown triage report's claims (PR and issue states, build results, code references, the \
             runbook's rules) offline against the store and its GitHub cache; returns the findings and what could \
             not be checked. Nothing is recorded.",
            true,
        ),
        tool::<LookupEvidence>(
            "lookup_evidence",
            "Look up evidence",
            "What evidence ids cite: kind, locator, excerpt, source hash and when it was read, from the store's ledger.",
            true,
        ),
        tool::<DraftAction>(
            "draft_action",
            "Draft an action",
            "The exact next step for a verdict, drafted only when the evidence meets the action's band: a revert PR \
             for a suspect at the revert band, bisect experiments (draft revert PRs with /payload-job and \
             /payload-aggregate commands and the tracking file) for suspects in the bisect band, or a bug for a \
             payload root cause or a failure pattern, routed by owner. Says which evidence earned it and what would \
             change the verdict; a refusal says why. Sends nothing.",
            true,
        ),
    ];
    if writes {
        v.push(tool::<DraftAction>(
            "apply_action",
            "Apply an action",
            "Drafts the action exactly as draft_action does and, when the evidence meets its band and the caller may \
             write, sends the draft's GitHub requests (the server's GITHUB_TOKEN). Returns the requests sent.",
            false,
        ));
    }
    v
}

/// What a call came to.
pub(crate) enum Outcome {
    Answer(Value),
    /// The tool ran and could not answer: the message is for the caller.
    Failed(ToolError),
    Unknown(String),
}

fn args<T: DeserializeOwned>(a: JsonObject) -> Result<T, ToolError> {
    serde_json::from_value(Value::Object(a)).map_err(|e| ToolError::input(format!("arguments: {e}")))
}

/// Runs a tool (on a blocking thread): parses its arguments, answers, records the
/// evidence in the ledger, and returns `{"result", "evidence"}`.
pub(crate) fn call(inner: &Inner, name: &str, a: JsonObject, parts: Option<&http::request::Parts>) -> Outcome {
    let writes = inner.opts.writes.offers_writes();
    let r = match name {
        "list_failing_jobs" => args(a).and_then(|x| answers::list_failing_jobs(inner, &x)),
        "job_history" => args(a).and_then(|x| answers::job_history(inner, &x)),
        "test_history" => args(a).and_then(|x| answers::test_history(inner, &x)),
        "search_failures" => args(a).and_then(|x| answers::search_failures(inner, &x)),
        "list_patterns" => args(a).and_then(|x| answers::list_patterns(inner, &x)),
        "get_pattern" => args(a).and_then(|x| answers::get_pattern(inner, &x)),
        "extract_failure" => args(a).and_then(|x| answers::extract_failure(inner, &x)),
        "analyze_payload" => args(a).and_then(|x| answers::analyze_payload(inner, &x)),
        "pr_state" => args(a).and_then(|x| answers::pr_state(inner, &x)),
        "verify_report" => args(a).and_then(|x| answers::verify_report(inner, &x)),
        "lookup_evidence" => args(a).and_then(|x| answers::lookup_evidence(inner, &x)),
        "draft_action" => args(a).and_then(|x| answers::draft_action(inner, &x)),
        "apply_action" if writes => args(a).and_then(|x| answers::apply_action(inner, &x, parts)),
        other => return Outcome::Unknown(other.to_string()),
    };
    match r.and_then(|ans| {
        inner.record(&ans.evidence)?;
        Ok(ans.into_json())
    }) {
        Ok(v) => Outcome::Answer(v),
        Err(e) => Outcome::Failed(e),
    }
}
