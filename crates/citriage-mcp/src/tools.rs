//! The tools: their names, descriptions, JSON schemas (generated from the argument
//! types of [`crate::args`], so the schema and the parser cannot disagree) and the
//! dispatch.
//! Unknown arguments are refused. Every answer is `{"result": …, "evidence": […]}`:
//! the figures, and the evidence items they rest on (id, kind, locator, excerpt), all
//! recorded in the store's ledger before the answer leaves.

use crate::answers;
use crate::args::*;
use crate::state::{Inner, ToolError};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

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
        tool::<ListRecords>(
            "list_records",
            "List triage records",
            "The triage records (a pattern, job or payload root cause with the issues and pull requests linked to \
             it), loudest state first (failed after fix, fix merged, new, triaged, fix confirmed), each with its \
             links, its timeline (every transition's time, reason and evidence ids), its fix and how many more \
             clean runs would confirm it. Compact by default (state, since, the reason's first line, counts), a \
             page at a time with a cursor; `detail` gives the links, timeline and fix.",
            true,
        ),
        tool::<ListFailingJobs>(
            "list_failing_jobs",
            "List failing jobs",
            "The failing (or flaky) jobs with their category, severity and figure, the owners of their failure \
             patterns and their stored builds' pass rate; filters by category, owner and a window of recent failed \
             builds. `source` says what the answer rests on: the newest dashboard snapshot, or, without one, the \
             stored builds. Compact pages: `next_cursor`/`remaining`/`more` say how to get the rest; `detail` for \
             every figure. Each job cites its snapshot entry or newest failed build.",
            true,
        ),
        tool::<JobHistory>(
            "job_history",
            "Job history",
            "One job's stored builds (newest first, a page at a time with `cursor`), corrected figures, the last \
             week's pass rates and the top failing and flaky tests, as the dashboard's job page shows them; `detail` \
             for every day and test. Each listed build cites its result.",
            true,
        ),
        tool::<TestHistory>(
            "test_history",
            "Test history",
            "One test across every job within the window (a page of jobs at a time with `cursor`): runs, pass and \
             flip rates, flake signals, each job's newest failed runs (`detail`: its recent runs) and the failure \
             patterns holding its failures. Failed runs cite their builds.",
            true,
        ),
        tool::<SearchFailures>(
            "search_failures",
            "Search failures",
            "Regex search over stored failure texts and build-log excerpts (the dashboard's bounded search: linear-time \
             regex, size and time budgets): where each match is and its matched line, a page at a time with \
             `cursor`; `detail` adds the excerpts with context. Each match cites the line it matched.",
            true,
        ),
        tool::<ListPatterns>(
            "list_patterns",
            "List failure patterns",
            "The failure patterns (clusters) of the latest clustering run: id, first line of text, owner, known \
             signatures, totals, jobs and tests counted, drift (the last 7 days against the 7 before); a page at a \
             time with `cursor`; `detail` (or get_pattern) for failures per day and sub-patterns. Each pattern cites \
             its newest failure.",
            true,
        ),
        tool::<GetPattern>(
            "get_pattern",
            "Get a failure pattern",
            "One failure pattern: failures per day, its top jobs and tests, its largest sub-patterns (all of them \
             counted), drift and the newest failures' first lines; `detail` for up to 100 jobs and tests, every \
             sub-pattern and the failures' texts. Each latest failure is cited.",
            true,
        ),
        tool::<ExtractFailure>(
            "extract_failure",
            "Extract a build's failure lines",
            "The lines that explain one stored build's failure: its build-log excerpts (with their line numbers in the \
             log; the first excerpts and the first lines of each unless `detail`, given with the first page) and its \
             failed tests' failure lines (line numbers within the failure text), the failed tests a page at a time \
             with `cursor`. Each is cited.",
            true,
        ),
        tool::<AnalyzePayload>(
            "analyze_payload",
            "Analyze a payload",
            "An OpenShift release payload's stored analysis (as `citriage payload` recorded it): verdict, failed \
             blocking jobs, root causes, scored suspects with their bands and actions, and the draft each suspect \
             supports (compact: the top suspects; `detail` for every one with its scored items and the draft rows). \
             Cites the failing lines, onsets, matched diff lines and changelog entries.",
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
        tool::<FindSuspects>(
            "find_suspects",
            "Find the regression window",
            "For a failure pattern (or a job): each job's last passing build before the onset and first failing \
             build with the commits each tested, the windows intersected per repository and branch (the job that \
             bounded each end), the builds and time between, the GitHub compare URL, and whether the failure came \
             and went before its onset (then no single introducing change). Commits are ranked by `citriage \
             suspects --checkout` on a machine with the checkout; this tool reads no checkout. Each end build is cited. The jobs' windows come a page at a time with a \
             cursor; long lists are cut to their first items with the total given (`detail` gives them all).",
            true,
        ),
        tool::<PrRiskArgs>(
            "pr_risk",
            "Did my PR break this?",
            "A pull request's latest presubmit runs and each failed test or build step classified: known flake (its \
             flake signals fired without this PR), failing elsewhere (the same pattern on the base branch or other \
             PRs), infrastructure (a setup step, an infra signature) or new with this PR (seen nowhere else; strong \
             when the failure names a file the PR changes). The verdict says `safe to /retest` only when nothing is \
             new. Needs the PR's runs in the store (`citriage fetch --pr`). Each failure cites its evidence.",
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
        "find_suspects" => args(a).and_then(|x| answers::find_suspects(inner, &x)),
        "lookup_evidence" => args(a).and_then(|x| answers::lookup_evidence(inner, &x)),
        "pr_risk" => args(a).and_then(|x| crate::pr_risk::pr_risk(inner, &x)),
        "list_records" => args(a).and_then(|x| answers::list_records(inner, &x)),
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
